#include "server/pubsub.h"

#include <algorithm>

#include "engine/glob.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"

namespace lapse::server {

namespace {
// Redis's stringmatchlen never matches an empty string with a non-empty pattern, not even
// "*": the empty channel is reached by its name alone.
bool ChannelMatches(std::string_view pattern, std::string_view channel) {
  return channel.empty() ? pattern.empty() : engine::GlobMatch(pattern, channel);
}

// A message as one subscriber reads it, in one protocol version: message / smessage for a
// channel, pmessage with the pattern that matched.
std::string EncodeMessage(protocol::RespVersion version, std::string_view kind, const std::string* pattern,
                          std::string_view channel, std::string_view message) {
  std::string out;
  out.reserve(32 + channel.size() + message.size() + (pattern ? pattern->size() : 0));
  protocol::ReplyWriter w(&out, version);
  w.PushHeader(pattern ? 4 : 3);
  w.Bulk(kind);
  if (pattern) w.Bulk(*pattern);
  w.Bulk(channel);
  w.Bulk(message);
  return out;
}

std::atomic<uint64_t>& CountOf(ClientInfo& client, SubscriptionKind kind) {
  return kind == SubscriptionKind::kChannel ? client.subscribed_channels
         : kind == SubscriptionKind::kPattern ? client.subscribed_patterns
                                              : client.subscribed_shard_channels;
}
}  // namespace

// ---- PushOutbox ----

void PushOutbox::Append(std::string_view bytes, const OutputBufferLimit& limit, uint64_t unsent_elsewhere,
                        int64_t now_ms, const std::function<void()>& kill, bool after_reply) {
  std::lock_guard lock(mu_);
  if (dropped_) return;
  uint64_t unsent = CountedOutputBytes(unsent_elsewhere + bytes_.size() + after_reply_.size() + bytes.size());
  bool over_hard = limit.hard > 0 && unsent > static_cast<uint64_t>(limit.hard);
  bool over_soft = limit.soft > 0 && unsent > static_cast<uint64_t>(limit.soft);
  if (!over_soft) {
    over_soft_since_ms_ = -1;
  } else if (over_soft_since_ms_ < 0) {
    over_soft_since_ms_ = now_ms;
  }
  bool soft_expired = over_soft && now_ms - over_soft_since_ms_ > limit.soft_ms();
  if (over_hard || soft_expired) {
    // Like Redis, the client is closed without the rest: what it has not read is lost anyway.
    dropped_ = true;
    bytes_ = std::string();
    after_reply_ = std::string();
    size_.store(0, std::memory_order_release);
    if (kill) kill();
    return;
  }
  // A message wakes the client even behind invalidations: a blocked client writes messages
  // at once but keeps its invalidations for after its reply (server/blocking.h).
  bool wake = bytes_.empty() && (!after_reply || after_reply_.empty());
  (after_reply ? after_reply_ : bytes_).append(bytes);
  size_.store(bytes_.size() + after_reply_.size(), std::memory_order_release);
  if (wake && wake_) wake_();
}

std::string PushOutbox::Take() {
  std::lock_guard lock(mu_);
  std::string out = std::move(bytes_);
  out.append(after_reply_);
  bytes_ = std::string();
  after_reply_ = std::string();
  size_.store(0, std::memory_order_release);
  return out;
}

std::string PushOutbox::TakeMessages() {
  std::lock_guard lock(mu_);
  std::string out = std::move(bytes_);
  bytes_ = std::string();
  size_.store(after_reply_.size(), std::memory_order_release);
  return out;
}

void PushOutbox::SetWaker(std::function<void()> wake) {
  std::lock_guard lock(mu_);
  wake_ = std::move(wake);
}

// ---- PubSub ----

void PubSub::Subscribe(ClientInfo& client, SubscriptionKind kind, const std::string& name) {
  std::unique_lock lock(mu_);
  TableOf(kind)[name].push_back(&client);
  CountOf(client, kind).fetch_add(1, std::memory_order_relaxed);
}

void PubSub::Unsubscribe(ClientInfo& client, SubscriptionKind kind, const std::string& name) {
  std::unique_lock lock(mu_);
  Table& table = TableOf(kind);
  auto it = table.find(name);
  if (it == table.end()) return;
  Subscribers& subs = it->second;
  auto pos = std::find(subs.begin(), subs.end(), &client);
  if (pos == subs.end()) return;
  *pos = subs.back();
  subs.pop_back();
  // A channel nobody listens to any more costs nothing: PUBSUB CHANNELS no longer lists it.
  if (subs.empty()) table.erase(it);
  CountOf(client, kind).fetch_sub(1, std::memory_order_relaxed);
}


size_t PubSub::Publish(std::string_view channel, std::string_view message, bool sharded) {
  std::shared_lock lock(mu_);
  size_t receivers = 0;
  OutputBufferLimit limit{};
  int64_t now_ms = 0;
  bool limits_read = false;
  // Encoded at most once per protocol version, and only if someone listens.
  std::string encoded[2];
  auto deliver_all = [&](const Subscribers& subs, std::string_view kind, const std::string* pattern) {
    for (std::string& e : encoded) e.clear();
    for (ClientInfo* client : subs) {
      bool resp3 = client->resp.load(std::memory_order_relaxed) == 3;
      std::string& bytes = encoded[resp3];
      if (bytes.empty()) {
        bytes = EncodeMessage(resp3 ? protocol::RespVersion::kResp3 : protocol::RespVersion::kResp2, kind, pattern,
                              channel, message);
      }
      if (!limits_read) limit = limit_(), now_ms = now_(), limits_read = true;
      client->push.Append(bytes, limit, client->output_bytes.load(std::memory_order_relaxed), now_ms, client->kill);
      ++receivers;
    }
  };
  const Table& table = sharded ? shard_channels_ : channels_;
  if (auto it = table.find(std::string(channel)); it != table.end()) {
    deliver_all(it->second, sharded ? "smessage" : "message", nullptr);
  }
  if (!sharded) {
    for (const auto& [pattern, subs] : patterns_) {
      if (ChannelMatches(pattern, channel)) deliver_all(subs, "pmessage", &pattern);
    }
  }
  return receivers;
}

std::vector<std::string> PubSub::Channels(bool sharded, const std::string* pattern) const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, subs] : sharded ? shard_channels_ : channels_) {
    if (pattern == nullptr || ChannelMatches(*pattern, name)) out.push_back(name);
  }
  return out;
}

size_t PubSub::SubscriberCount(bool sharded, std::string_view channel) const {
  std::shared_lock lock(mu_);
  const Table& table = sharded ? shard_channels_ : channels_;
  auto it = table.find(std::string(channel));
  return it == table.end() ? 0 : it->second.size();
}

size_t PubSub::PatternCount() const {
  std::shared_lock lock(mu_);
  return patterns_.size();
}

bool PubSub::AllSubscriptionsAllowed(const ClientInfo& client,
                                     const std::function<bool(std::string_view, bool)>& allowed) const {
  std::shared_lock lock(mu_);
  for (const Table* table : {&channels_, &patterns_, &shard_channels_}) {
    for (const auto& [name, subs] : *table) {
      if (std::find(subs.begin(), subs.end(), &client) != subs.end() && !allowed(name, table == &patterns_)) return false;
    }
  }
  return true;
}

size_t PubSub::ChannelCount(bool sharded) const {
  std::shared_lock lock(mu_);
  return (sharded ? shard_channels_ : channels_).size();
}

}  // namespace lapse::server
