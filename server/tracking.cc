#include "server/tracking.h"

#include <map>
#include <random>

#include "protocol/arg_reader.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"

namespace lapse::server {

namespace {
constexpr std::string_view kInvalidateChannel = "__redis__:invalidate";

// The keys array of an invalidation message, the same bytes in RESP2 and RESP3.
std::string KeysPayload(const std::vector<std::string_view>& keys) {
  std::string out;
  protocol::ReplyWriter w(&out, protocol::RespVersion::kResp3);
  w.ArrayHeader(keys.size());
  for (std::string_view key : keys) w.Bulk(key);
  return out;
}

// Like Redis, a flush's null is written in the tracking client's protocol, even when the
// message goes to a redirect target that speaks the other one.
std::string_view NullPayload(const ClientInfo& tracker) {
  return tracker.resp.load(std::memory_order_relaxed) == 3 ? "_\r\n" : "$-1\r\n";
}

// BCAST changes a thread collected since its last flush: per prefix, per key (in byte
// order), the client that made the last change (0: none, such as expiry), for NOLOOP.
using BroadcastBatch = std::map<std::string, std::map<std::string, uint64_t>>;
BroadcastBatch& ThreadBatch() {
  thread_local BroadcastBatch batch;
  return batch;
}
}  // namespace

Tracking::CommandContext*& Tracking::Current() {
  thread_local CommandContext* current = nullptr;
  return current;
}

bool Tracking::CommandContext::IsProvisional(std::string_view key) const {
  for (const std::string& k : provisional) {
    if (k == key) return true;
  }
  return false;
}

uint64_t Tracking::ClientId(const ClientInfo& client) { return client.id; }

// ---- CLIENT TRACKING ----

std::optional<std::string> Tracking::CheckOptions(const ClientInfo& client, uint32_t options,
                                                  const std::vector<std::string>& prefixes) const {
  uint32_t current = client.tracking.load(std::memory_order_relaxed);
  bool bcast = options & kTrackingBcast;
  if (!bcast && !prefixes.empty()) return "ERR PREFIX option requires BCAST mode to be enabled";
  if ((current & kTrackingOn) && static_cast<bool>(current & kTrackingBcast) != bcast) {
    return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
           "re-enabling it with a different mode.";
  }
  if (bcast && (options & (kTrackingOptin | kTrackingOptout))) {
    return "ERR OPTIN and OPTOUT are not compatible with BCAST";
  }
  if ((options & kTrackingOptin) && (options & kTrackingOptout)) {
    return "ERR You can't specify both OPTIN mode and OPTOUT mode";
  }
  if (((options & kTrackingOptin) && (current & kTrackingOptout)) ||
      ((options & kTrackingOptout) && (current & kTrackingOptin))) {
    return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
           "re-enabling it with a different mode.";
  }
  if (bcast) {
    if (auto overlap = prefixes_.FindOverlap(client.id, prefixes)) {
      // Redis formats them with %s: a prefix ends at its first NUL there.
      return "ERR Prefix '" + std::string(protocol::AsCString(overlap->proposed)) + "' overlaps with " +
             (overlap->existing ? "an existing" : "another provided") + " prefix '" +
             std::string(protocol::AsCString(overlap->other)) +
             "'. Prefixes for a single client must not overlap.";
    }
  }
  return std::nullopt;
}

void Tracking::Enable(ClientInfo& client, uint64_t redirect, uint32_t options,
                      const std::vector<std::string>& prefixes) {
  std::unique_lock lock(mu_);
  uint32_t old = client.tracking.load(std::memory_order_relaxed);
  if (!(old & kTrackingOn)) {
    tracking_ids_.insert(client.id);
    tracking_clients_.fetch_add(1, std::memory_order_relaxed);
  }
  // Like Redis's enableTracking: the mode is set afresh, CLIENT CACHING's answer stays.
  uint32_t flags = kTrackingOn | (old & kTrackingCaching) |
                   (options & (kTrackingBcast | kTrackingOptin | kTrackingOptout | kTrackingNoloop));
  client.tracking_redirect.store(redirect, std::memory_order_relaxed);
  if (options & kTrackingBcast) {
    // Prefixes accumulate while tracking stays on; none at all means every key.
    if (prefixes.empty()) prefixes_.Add(client.id, "");
    for (const std::string& prefix : prefixes) prefixes_.Add(client.id, prefix);
  }
  client.tracking.store(flags, std::memory_order_relaxed);
}

void Tracking::Disable(ClientInfo& client) {
  std::unique_lock lock(mu_);
  uint32_t old = client.tracking.load(std::memory_order_relaxed);
  if (old & kTrackingBcast) prefixes_.RemoveClient(client.id);
  if (old & kTrackingOn) {
    tracking_ids_.erase(client.id);
    tracking_clients_.fetch_sub(1, std::memory_order_relaxed);
  }
  // The keys it read stay in the table until they change, as in Redis.
  client.tracking.store(0, std::memory_order_relaxed);
}

// ---- invalidation ----

void Tracking::InvalidateKey(std::string_view key, bool by_expiry) {
  CommandContext* context = Current();
  if (prefixes_.size() > 0) {
    // Who made the change, for BCAST's NOLOOP: nobody for expiry, nobody's own for a script.
    bool own = context != nullptr && !by_expiry && !context->in_script;
    RememberForBroadcast(key, own ? context->client->id : 0);
  }
  InvalidateReaders(key, context, context != nullptr ? context->client : nullptr);
}

void Tracking::InvalidateReaders(std::string_view key, CommandContext* context, const ClientInfo* current) {
  if (keys_.keys() == 0) return;
  for (uint64_t id : keys_.Take(key)) {
    std::shared_ptr<ClientInfo> reader = clients_.Find(id);
    if (!reader) continue;
    uint32_t flags = reader->tracking.load(std::memory_order_relaxed);
    // A client that switched to BCAST since it read the key hears of it by prefix only.
    if (!(flags & kTrackingOn) || (flags & kTrackingBcast)) continue;
    bool is_current = reader.get() == current;
    if (is_current && (flags & kTrackingNoloop)) continue;
    if (is_current && context != nullptr && context->IsProvisional(key)) continue;
    if (is_current && context != nullptr) {
      context->pending.emplace_back(std::string(key));
    } else {
      Send(*reader, KeysPayload({key}));
    }
  }
}

void Tracking::RememberForBroadcast(std::string_view key, uint64_t modifier) {
  std::vector<std::string> matching = prefixes_.Matching(key);
  if (matching.empty()) return;
  BroadcastBatch& batch = ThreadBatch();
  for (const std::string& prefix : matching) batch[prefix][std::string(key)] = modifier;
  // Outside a command (the reclaimer) nothing else will flush this thread's batch soon.
  if (Current() == nullptr) FlushBroadcasts();
}

void Tracking::FlushBroadcasts() {
  BroadcastBatch& batch = ThreadBatch();
  if (batch.empty()) return;
  BroadcastBatch taken = std::move(batch);
  batch.clear();
  for (const auto& [prefix, changes] : taken) {
    std::vector<std::string_view> all;
    for (const auto& [key, modifier] : changes) all.push_back(key);
    std::string all_payload = KeysPayload(all);
    for (uint64_t id : prefixes_.ClientsOf(prefix)) {
      std::shared_ptr<ClientInfo> client = clients_.Find(id);
      if (!client) continue;
      uint32_t flags = client->tracking.load(std::memory_order_relaxed);
      if (!(flags & kTrackingBcast)) continue;
      if (!(flags & kTrackingNoloop)) {
        Send(*client, all_payload);
        continue;
      }
      std::vector<std::string_view> others;
      for (const auto& [key, modifier] : changes) {
        if (modifier != id) others.push_back(key);
      }
      if (!others.empty()) Send(*client, KeysPayload(others));
    }
  }
}

void Tracking::Flushed() {
  CommandContext* context = Current();
  std::vector<uint64_t> ids;
  {
    std::shared_lock lock(mu_);
    ids.assign(tracking_ids_.begin(), tracking_ids_.end());
  }
  // Unlike a key's change, a flush reaches the client that made it even with NOLOOP.
  for (uint64_t id : ids) {
    std::shared_ptr<ClientInfo> client = clients_.Find(id);
    if (!client) continue;
    if (context != nullptr && client.get() == context->client) {
      context->pending.emplace_back(std::nullopt);
    } else {
      Send(*client, NullPayload(*client));
    }
  }
  keys_.Clear();
}

void Tracking::DeliverPending(CommandContext& context) {
  if (context.pending.empty()) return;
  std::vector<std::optional<std::string>> pending = std::move(context.pending);
  context.pending.clear();
  for (const std::optional<std::string>& key : pending) {
    if (key) {
      Send(*context.client, KeysPayload({*key}));
    } else {
      Send(*context.client, NullPayload(*context.client));
    }
  }
}

void Tracking::EnforceMaxKeys(const ClientInfo* current) {
  int64_t max = max_keys_.load(std::memory_order_relaxed);
  if (max <= 0 || keys_.keys() <= static_cast<size_t>(max)) {
    over_limit_runs_.store(0, std::memory_order_relaxed);
    return;
  }
  // Like Redis: the longer the table stays over the limit, the more is evicted per command.
  int effort = 100 * static_cast<int>(over_limit_runs_.load(std::memory_order_relaxed) + 1);
  thread_local std::mt19937_64 random{std::random_device{}()};
  for (; effort > 0; --effort) {
    std::optional<std::string> key = keys_.AnyKey(random());
    if (!key) break;
    InvalidateReaders(*key, nullptr, current);
    if (keys_.keys() <= static_cast<size_t>(max)) {
      over_limit_runs_.store(0, std::memory_order_relaxed);
      return;
    }
  }
  over_limit_runs_.fetch_add(1, std::memory_order_relaxed);
}

// ---- delivery ----

void Tracking::Send(ClientInfo& tracker, std::string_view payload) {
  ClientInfo* receiver = &tracker;
  std::shared_ptr<ClientInfo> redirect_target;
  uint64_t redirect = tracker.tracking_redirect.load(std::memory_order_relaxed);
  if (redirect != 0) {
    redirect_target = clients_.Find(redirect);
    if (!redirect_target) {
      // The client it redirects to is gone: a RESP3 tracker is told so instead.
      tracker.tracking.fetch_or(kTrackingBrokenRedirect, std::memory_order_relaxed);
      if (tracker.resp.load(std::memory_order_relaxed) == 3) {
        std::string out;
        protocol::ReplyWriter w(&out, protocol::RespVersion::kResp3);
        w.PushHeader(2);
        w.Bulk("tracking-redir-broken");
        w.Integer(static_cast<int64_t>(redirect));
        Push(tracker, out);
      }
      return;
    }
    receiver = redirect_target.get();
  }
  std::string out;
  if (receiver->resp.load(std::memory_order_relaxed) == 3) {
    protocol::ReplyWriter w(&out, protocol::RespVersion::kResp3);
    w.PushHeader(2);
    w.Bulk("invalidate");
  } else if (redirect != 0 && receiver->subscribed()) {
    // RESP2 has no pushes: a subscriber can take it as a Pub/Sub message.
    protocol::ReplyWriter w(&out, protocol::RespVersion::kResp2);
    w.PushHeader(3);
    w.Bulk("message");
    w.Bulk(kInvalidateChannel);
  } else {
    return;  // a RESP2 client without a subscriber to redirect to cannot be told
  }
  out.append(payload);
  Push(*receiver, out);
}

void Tracking::Push(ClientInfo& receiver, std::string_view bytes) {
  receiver.push.Append(bytes, limit_(receiver.subscribed()), receiver.output_bytes.load(std::memory_order_relaxed),
                       now_(), receiver.kill, /*after_reply=*/true);
}

}  // namespace lapse::server
