#include "server/blocking.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
#include <set>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "server/client_session.h"
#include "server/client_stream.h"
#include "server/dispatcher.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

constexpr int64_t kForeverMs = int64_t{1} << 52;

// The keys in `keys` without repeats, in first-seen order.
std::vector<std::string> DistinctKeys(const std::vector<std::string_view>& keys) {
  std::vector<std::string> out;
  for (std::string_view k : keys) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.emplace_back(k);
  }
  return out;
}

// Reads a blocked client's stream while it waits, as Redis keeps reading a blocked client:
// commands it pipelines behind the blocking one are kept for after the wait (`unread`),
// and end-of-file or an error ends the wait at once. Runs on the client's thread, whose
// connection is suspended in the blocking command and does not read meanwhile.
void WatchInput(ClientStream& stream, std::shared_ptr<BlockedClient> client, size_t limit) {
  stream.Watch(
      [client, limit](std::string_view bytes) {
        client->unread.append(bytes);
        // Past the query buffer limit the rest waits in the kernel, as TCP lets it.
        return client->unread.size() < limit;
      },
      [client] {
        if (client->Claim()) client->Finish(BlockedClient::Outcome::kCancelled);
      });
}

// Makes `info` show the client as blocked (CLIENT LIST, CLIENT UNBLOCK, kill) while alive.
class BlockedMark {
 public:
  BlockedMark(ClientInfo& info, BlockingRegistry& registry, std::shared_ptr<BlockedClient> client)
      : info_(info), registry_(registry), timed_(client->deadline != asio::steady_timer::time_point::max()) {
    std::lock_guard lock(info_.blocked_mu);
    info_.blocked = std::move(client);
    info_.is_blocked.store(true, std::memory_order_relaxed);
    registry_.blocked_clients.fetch_add(1, std::memory_order_relaxed);
    if (timed_) registry_.clients_in_timeout_table.fetch_add(1, std::memory_order_relaxed);
  }
  ~BlockedMark() {
    std::lock_guard lock(info_.blocked_mu);
    info_.blocked.reset();
    info_.is_blocked.store(false, std::memory_order_relaxed);
    registry_.blocked_clients.fetch_sub(1, std::memory_order_relaxed);
    if (timed_) registry_.clients_in_timeout_table.fetch_sub(1, std::memory_order_relaxed);
  }
  BlockedMark(const BlockedMark&) = delete;
  BlockedMark& operator=(const BlockedMark&) = delete;

 private:
  ClientInfo& info_;
  BlockingRegistry& registry_;
  bool timed_;  // blocked with a timeout: in Redis's timeout table
};

// Writes the pushes that reached a blocked client: Pub/Sub messages and invalidations of
// other clients' writes, which Redis writes at once too. An invalidation from serving this
// very command follows its reply in Redis; the server claims the wait before it writes, so
// once the wait is claimed the pushes wait for the reply (the dispatcher sends them then).
// A claim that comes between that check and the taking may still send such an invalidation
// first: harmless, since no blocking command's reply is cached (BLPOP and its kin write;
// ICHANGES reads items, which are not tracked), and better than putting the bytes back
// behind newer messages, out of order. False when the write failed.
awaitable<bool> WritePushesWhileBlocked(ConnCommand& c, BlockedClient& client) {
  client.push_pending = false;
  if (c.session.stream == nullptr || client.claimed.load(std::memory_order_acquire)) co_return true;
  ClientInfo& info = *c.session.info;
  std::string bytes = info.push.Take();
  if (bytes.empty()) co_return true;
  // Seen by the output buffer limits of the pushes that come during the write.
  info.output_bytes.store(bytes.size(), std::memory_order_relaxed);
  boost::system::error_code ec;
  co_await c.session.stream->Write(asio::buffer(bytes), ec);
  info.output_bytes.store(0, std::memory_order_relaxed);
  ThreadCounters& counters = c.server.counters(c.session.home);
  counters.Bump(counters.writes_processed);
  counters.Bump(counters.net_output_bytes, bytes.size());
  co_return !ec;
}

// Logs what serving a blocking pop did, holding its shards (server/aof.h).
void LogServedPop(Server& server, BlockedClient& client, Args args) {
  if (!server.aof().capturing()) [[likely]] return;
  if (client.command.empty()) client.command.assign(args.begin(), args.end());
  server.aof().Log(client.db, LoggedFormOfServedPop(client.command, client.reply));
}

// Serves the clients waiting on one ready key, oldest first, while the key can serve them.
void ServeKey(Server& server, const engine::ReadyKey& ready) {
  ShardSet& shards = server.shards();
  BlockingRegistry& registry = server.blocking();
  std::vector<std::shared_ptr<BlockedClient>> waiters;
  shards.WithShard(ready.shard, [&](engine::Shard&) {
    waiters = registry.Waiters(ready.shard, static_cast<int>(ready.db), ready.key);
  });
  for (const std::shared_ptr<BlockedClient>& client : waiters) {
    std::vector<uint32_t> ids{ready.shard};
    ids.insert(ids.end(), client->extra_shards.begin(), client->extra_shards.end());
    ServeResult result = ServeResult::kClaimLost;
    shards.RunHolding(ids, [&] {
      // A claimed client may already be leaving; its serve function must not run.
      if (client->claimed.load(std::memory_order_acquire)) return;
      engine::Shard& shard = shards.shard(ready.shard);
      ServeAttempt attempt{shards, shard, shard.db(ready.db), ready.key, server.clock().NowMs(), server, *client};
      result = client->serve(attempt);
      if (result == ServeResult::kServed) {
        client->ru += attempt.charge.ru;
        LogServedPop(server, *client, {});  // its command was kept when it began to wait
      }
    });
    if (result == ServeResult::kServed) {
      client->Finish(BlockedClient::Outcome::kServed);
    } else if (result != ServeResult::kClaimLost) {
      return;  // the key cannot serve anyone now
    }
  }
}

// Takes the client out of every queue it joined. A shard a busy script holds is waited for
// by retrying, never by spinning: the script resumes on this very thread.
awaitable<void> LeaveQueues(Server& server, BlockedClient& client, const std::vector<std::string>& keys) {
  ShardSet& shards = server.shards();
  size_t left = 0;
  while (left < keys.size()) {
    const std::string& key = keys[left];
    uint32_t id = shards.ShardFor(key);
    bool done = false;
    try {
      shards.WithShard(id, [&](engine::Shard& shard) {
        server.blocking().Remove(id, client.db, key, &client);
        shard.db(client.db).RemoveBlocked(key);
      });
      done = true;
    } catch (const ShardSet::WaitAbandoned&) {
    }
    if (done) {
      ++left;
      continue;
    }
    asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
    co_await pause.async_wait(use_awaitable);
  }
}

}  // namespace

void BlockedClient::Finish(Outcome how) {
  outcome = how;
  finished.store(true, std::memory_order_release);
  asio::post(executor, [self = shared_from_this()] { self->timer.cancel(); });
}

void BlockingRegistry::Add(uint32_t shard, int db, std::string_view key, std::shared_ptr<BlockedClient> client) {
  shards_[shard].queues[{db, std::string(key)}].push_back(std::move(client));
}

void BlockingRegistry::Remove(uint32_t shard, int db, std::string_view key, const BlockedClient* client) {
  auto& queues = shards_[shard].queues;
  auto it = queues.find(std::pair<int, std::string>(db, std::string(key)));
  if (it == queues.end()) return;
  Queue& q = it->second;
  q.erase(std::remove_if(q.begin(), q.end(), [&](const auto& c) { return c.get() == client; }), q.end());
  if (q.empty()) queues.erase(it);
}

std::vector<std::shared_ptr<BlockedClient>> BlockingRegistry::Waiters(uint32_t shard, int db, std::string_view key) const {
  const auto& queues = shards_[shard].queues;
  auto it = queues.find(std::pair<int, std::string>(db, std::string(key)));
  if (it == queues.end()) return {};
  return {it->second.begin(), it->second.end()};
}

awaitable<void> Answered() { co_return; }

bool ParseBlockTimeout(std::string_view text, int64_t* timeout_ms, protocol::ReplyWriter& reply) {
  long double seconds = 0;
  if (!protocol::ParseLongDouble(text, &seconds)) return reply.Error("ERR timeout is not a float or out of range"), false;
  long double ms = std::ceil(seconds * 1000.0L);
  // Redis converts to a 64-bit integer without a range check; on x86 anything too large
  // (inf included) becomes the most negative integer, hence its "negative" error.
  if (ms < 0 || ms >= static_cast<long double>(std::numeric_limits<int64_t>::max())) {
    return reply.Error("ERR timeout is negative"), false;
  }
  *timeout_ms = static_cast<int64_t>(ms);
  return true;
}

void ArmBlockTimeout(BlockedClient& client, int64_t timeout_ms) {
  // A timeout beyond the timer's range (about 292 years in nanoseconds) is forever.
  if (timeout_ms > 0 && timeout_ms < kForeverMs) {
    client.timer.expires_after(std::chrono::milliseconds(timeout_ms));
  } else {
    client.timer.expires_at(asio::steady_timer::time_point::max());
  }
  client.deadline = client.timer.expiry();
}

awaitable<void> SleepWhileBlocked(ConnCommand& c, std::shared_ptr<BlockedClient> client) {
  Server& server = c.server;
  BlockingRegistry& registry = server.blocking();
  // Replies of the commands before this one in the client's pipeline go out now, as Redis
  // writes them while the client is blocked.
  if (c.dispatcher != nullptr) co_await c.dispatcher->FlushReplies(c.reply.buffer());
  {
    BlockedMark mark(*c.session.info, registry, client);
    if (c.session.stream != nullptr) {
      WatchInput(*c.session.stream, client, static_cast<size_t>(std::max<int64_t>(server.query_buffer_limit(), 1)));
    }
    // Messages that came while the replies before were written.
    client->push_pending = !c.session.info->push.empty();
    bool gone = false;
    for (;;) {
      // Until none came during the write: a wake-up for them found no wait to cancel.
      while (client->push_pending && !gone) {
        gone = !co_await WritePushesWhileBlocked(c, *client) && client->Claim();
      }
      if (gone) {
        client->outcome = BlockedClient::Outcome::kCancelled;
        break;
      }
      // Checked after the writes, during which a party may have ended the wait: its timer
      // cancel found nothing waiting either.
      if (client->finished.load(std::memory_order_acquire)) break;
      boost::system::error_code ec;
      co_await client->timer.async_wait(asio::redirect_error(use_awaitable, ec));
      if (client->finished.load(std::memory_order_acquire)) break;
      if (client->push_pending) {
        // Woken for messages: the timeout still runs, unless another party claimed the wait.
        bool claimed = client->claimed.load(std::memory_order_acquire);
        client->timer.expires_at(claimed ? asio::steady_timer::time_point::max() : client->deadline);
        continue;
      }
      if (!ec && client->Claim()) {
        client->outcome = BlockedClient::Outcome::kTimedOut;
        break;
      }
      // Another party claimed the client and its wake-up is on the way.
      client->timer.expires_at(asio::steady_timer::time_point::max());
    }
    if (c.session.stream != nullptr) {
      co_await c.session.stream->StopWatching();
      c.session.unread_input.append(client->unread);
    }
  }
}

awaitable<void> BlockOn(ConnCommand& c, BlockRequest request) {
  Server& server = c.server;
  ShardSet& shards = server.shards();
  BlockingRegistry& registry = server.blocking();
  auto client = std::make_shared<BlockedClient>(co_await asio::this_coro::executor);
  client->db = c.session.db;
  client->resp = c.session.resp;
  client->serve = std::move(request.serve);
  std::vector<uint32_t> ids;
  for (std::string_view key : request.keys) ids.push_back(shards.ShardFor(key));
  if (request.destination) {
    client->extra_shards.push_back(shards.ShardFor(*request.destination));
    ids.push_back(client->extra_shards.back());
  }
  // What only a client that waits needs (the command for the log, its keys without repeats,
  // its timer) is made once it is known to wait: most pops find their element.
  std::vector<std::string> waited;
  // Blocking commands inside MULTI or a script answer at once, as if they had timed out.
  bool may_block = !ShardSet::InAtomicStep();
  ServeResult result = ServeResult::kNotReady;
  bool blocked = false;
  shards.RunHolding(ids, [&] {
    int64_t now = server.clock().NowMs();
    for (std::string_view key : request.keys) {
      engine::Shard& shard = shards.shard(shards.ShardFor(key));
      ServeAttempt attempt{shards, shard, shard.db(client->db), key, now, server, *client};
      result = client->serve(attempt);
      c.charge.ru += attempt.charge.ru;
      if (result == ServeResult::kServed) LogServedPop(server, *client, c.args);
      if (result == ServeResult::kServed || result == ServeResult::kWrongType) return;
    }
    if (!may_block) return;
    client->command.assign(c.args.begin(), c.args.end());
    waited = DistinctKeys(request.keys);
    ArmBlockTimeout(*client, request.timeout_ms);
    for (const std::string& key : waited) {
      uint32_t id = shards.ShardFor(key);
      registry.Add(id, client->db, key, client);
      shards.shard(id).db(client->db).AddBlocked(key);
    }
    blocked = true;
  });
  if (result == ServeResult::kServed) {
    c.reply.buffer()->append(client->reply);
    co_return;
  }
  if (result == ServeResult::kWrongType) {
    c.reply.Error(protocol::errors::kWrongType);
    co_return;
  }
  if (!blocked) {
    request.null_bulk_at_once ? c.reply.Null() : c.reply.NullArray();
    co_return;
  }

  co_await SleepWhileBlocked(c, client);
  co_await LeaveQueues(server, *client, waited);
  switch (client->outcome) {
    case BlockedClient::Outcome::kServed:
      c.charge.ru += client->ru;
      if (request.woken_pop_uncounted) c.changes = 0;
      // Its pop was logged by the thread that served it: durable before this reply leaves.
      server.aof().CoverEverythingLogged();
      c.reply.buffer()->append(client->reply);
      break;
    case BlockedClient::Outcome::kUnblockedError:
      c.reply.Error(protocol::errors::kUnblocked);
      break;
    case BlockedClient::Outcome::kCancelled:
      c.session.close_after_reply = true;
      break;
    default:
      c.reply.NullArray();
      break;
  }
}

void ServeReadyKeys(Server& server) {
  std::vector<engine::ReadyKey>& ready = engine::ReadyKeys();
  // Serving may make more keys ready (BLMOVE's destination): until none is left.
  while (!ready.empty()) {
    std::vector<engine::ReadyKey> batch;
    batch.swap(ready);
    std::set<std::tuple<uint32_t, uint32_t, std::string_view>> seen;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!seen.emplace(batch[i].shard, batch[i].db, batch[i].key).second) continue;
      try {
        ServeKey(server, batch[i]);
      } catch (const ShardSet::WaitAbandoned&) {
        // A busy script holds the key's shard: its waiters are served after a later command
        // (the script's own, at the latest).
        ready.insert(ready.end(), std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(i)),
                     std::make_move_iterator(batch.end()));
        return;
      }
    }
  }
}

bool UnblockClient(ClientInfo& info, bool with_error) {
  std::lock_guard lock(info.blocked_mu);
  if (!info.blocked || !info.blocked->Claim()) return false;
  info.blocked->Finish(with_error ? BlockedClient::Outcome::kUnblockedError : BlockedClient::Outcome::kTimedOut);
  return true;
}

void CancelBlock(ClientInfo& info) {
  std::lock_guard lock(info.blocked_mu);
  if (info.blocked && info.blocked->Claim()) info.blocked->Finish(BlockedClient::Outcome::kCancelled);
}

bool WakeBlockedForPush(ClientInfo& info) {
  std::lock_guard lock(info.blocked_mu);
  if (!info.blocked) return false;
  info.blocked->push_pending = true;
  info.blocked->timer.cancel();
  return true;
}

}  // namespace lapse::server
