#include "server/blocking.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
#include <set>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "server/client_session.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

constexpr std::string_view kUnblockedError = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

// The keys in `keys` without repeats, in first-seen order.
std::vector<std::string> DistinctKeys(const std::vector<std::string_view>& keys) {
  std::vector<std::string> out;
  for (std::string_view k : keys) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.emplace_back(k);
  }
  return out;
}

// Ends the wait of a client whose connection is gone, once its socket reads end-of-file.
// Data from a client that pipelines behind its blocking command ends the watch instead: the
// connection reads it after the wait, as Redis does.
void WatchForDisconnect(tcp::socket* socket, const std::shared_ptr<BlockedClient>& client) {
  socket->async_wait(tcp::socket::wait_read, [socket, client](boost::system::error_code ec) {
    if (ec) return;
    char byte;
    ssize_t n = ::recv(socket->native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    bool gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    if (gone && client->Claim()) client->Finish(BlockedClient::Outcome::kCancelled);
  });
}

// Makes `info` show the client as blocked (CLIENT LIST, CLIENT UNBLOCK, kill) while alive.
class BlockedMark {
 public:
  BlockedMark(ClientInfo& info, BlockingRegistry& registry, std::shared_ptr<BlockedClient> client)
      : info_(info), registry_(registry) {
    std::lock_guard lock(info_.blocked_mu);
    info_.blocked = std::move(client);
    info_.is_blocked.store(true, std::memory_order_relaxed);
    registry_.blocked_clients.fetch_add(1, std::memory_order_relaxed);
  }
  ~BlockedMark() {
    std::lock_guard lock(info_.blocked_mu);
    info_.blocked.reset();
    info_.is_blocked.store(false, std::memory_order_relaxed);
    registry_.blocked_clients.fetch_sub(1, std::memory_order_relaxed);
  }
  BlockedMark(const BlockedMark&) = delete;
  BlockedMark& operator=(const BlockedMark&) = delete;

 private:
  ClientInfo& info_;
  BlockingRegistry& registry_;
};

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
      client->ru += attempt.charge.ru;
    });
    if (result == ServeResult::kServed) {
      client->Finish(BlockedClient::Outcome::kServed);
    } else if (result != ServeResult::kClaimLost) {
      return;  // the key cannot serve anyone now
    }
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
  std::vector<std::string> waited = DistinctKeys(request.keys);
  // Blocking commands inside MULTI or a script answer at once, as if they had timed out.
  bool may_block = !ShardSet::InAtomicStep();
  if (request.timeout_ms > 0) {
    client->timer.expires_after(std::chrono::milliseconds(request.timeout_ms));
  } else {
    client->timer.expires_at(asio::steady_timer::time_point::max());
  }
  ServeResult result = ServeResult::kNotReady;
  bool blocked = false;
  shards.RunHolding(ids, [&] {
    int64_t now = server.clock().NowMs();
    for (std::string_view key : request.keys) {
      engine::Shard& shard = shards.shard(shards.ShardFor(key));
      ServeAttempt attempt{shards, shard, shard.db(client->db), key, now, server, *client};
      result = client->serve(attempt);
      c.charge.ru += attempt.charge.ru;
      if (result == ServeResult::kServed || result == ServeResult::kWrongType) return;
    }
    if (!may_block) return;
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

  {
    BlockedMark mark(*c.session.info, registry, client);
    if (c.session.socket != nullptr) WatchForDisconnect(c.session.socket, client);
    for (;;) {
      boost::system::error_code ec;
      co_await client->timer.async_wait(asio::redirect_error(use_awaitable, ec));
      if (client->finished.load(std::memory_order_acquire)) break;
      if (!ec && client->Claim()) {
        client->outcome = BlockedClient::Outcome::kTimedOut;
        break;
      }
      // Another party claimed the client and its wake-up is on the way.
      client->timer.expires_at(asio::steady_timer::time_point::max());
    }
    if (c.session.socket != nullptr) {
      boost::system::error_code ignored;
      c.session.socket->cancel(ignored);
    }
  }
  // Leaving every queue must not give up for a busy script: a queue would keep the client.
  ShardSet::GiveUpWaitsWhenBusy never(nullptr);
  for (const std::string& key : waited) {
    uint32_t id = shards.ShardFor(key);
    shards.WithShard(id, [&](engine::Shard& shard) {
      registry.Remove(id, client->db, key, client.get());
      shard.db(client->db).RemoveBlocked(key);
    });
  }
  switch (client->outcome) {
    case BlockedClient::Outcome::kServed:
      c.charge.ru += client->ru;
      c.reply.buffer()->append(client->reply);
      break;
    case BlockedClient::Outcome::kUnblockedError:
      c.reply.Error(kUnblockedError);
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
  ShardSet::GiveUpWaitsWhenBusy never(nullptr);
  // Serving may make more keys ready (BLMOVE's destination): until none is left.
  while (!ready.empty()) {
    std::vector<engine::ReadyKey> batch;
    batch.swap(ready);
    std::set<std::tuple<uint32_t, uint32_t, std::string_view>> seen;
    for (const engine::ReadyKey& key : batch) {
      if (!seen.emplace(key.shard, key.db, key.key).second) continue;
      ServeKey(server, key);
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

}  // namespace lapse::server
