// File: server/transaction_commands.cc
//
// MULTI, EXEC, DISCARD, WATCH and UNWATCH, with Redis 7.0's semantics and replies.
//
// Queuing happens in the dispatcher: between MULTI and EXEC every admitted command that is
// not flagged kNotQueued is stored with copies of its arguments and answered QUEUED; a
// command refused while queuing (unknown, wrong arity, over maxmemory) dooms the transaction
// and EXEC answers EXECABORT. EXEC itself (Dispatcher::RunTransaction) runs the queue as one
// atomic step over the shards its commands and watched keys live on.
//
// WATCH files the client under each key in the key's database on the key's shard
// (engine/watch.h). Any change to such a key, from any thread, marks the client dirty, and
// the EXEC that follows answers a null array. The client's list of watched keys lets it
// withdraw from those databases again (EXEC, DISCARD, UNWATCH, disconnect).
#include "server/transaction.h"

#include <algorithm>

#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/dispatcher.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;

void UnwatchAll(Server& server, ClientSession& session) {
  ShardSet& shards = server.shards();
  engine::Watcher* watcher = &session.info->watcher;
  for (const WatchedKey& w : session.watched) {
    shards.WithShard(shards.ShardFor(w.key),
                     [&](engine::Shard& shard) { shard.db(static_cast<size_t>(w.db)).Unwatch(w.key, watcher); });
  }
  session.watched.clear();
  watcher->Reset();
}

void EndTransaction(Server& server, ClientSession& session) {
  session.multi = Transaction{};
  session.info->multi_queued.store(-1, std::memory_order_relaxed);
  UnwatchAll(server, session);
}

bool WatchedKeyExpired(Server& server, ClientSession& session, int64_t now_ms) {
  ShardSet& shards = server.shards();
  const engine::Watcher* watcher = &session.info->watcher;
  for (const WatchedKey& w : session.watched) {
    bool expired = shards.WithShard(shards.ShardFor(w.key), [&](engine::Shard& shard) {
      return shard.db(static_cast<size_t>(w.db)).WatchedKeyExpired(w.key, watcher, now_ms);
    });
    if (expired) return true;
  }
  return false;
}

namespace {

void CmdMulti(ConnCommand& c) {
  if (c.session.multi.active) return c.reply.Error(errors::kMultiNested);
  c.session.multi.active = true;
  c.session.info->multi_queued.store(0, std::memory_order_relaxed);
  c.reply.Ok();
}

void CmdDiscard(ConnCommand& c) {
  if (!c.session.multi.active) return c.reply.Error(errors::kDiscardWithoutMulti);
  EndTransaction(c.server, c.session);
  c.reply.Ok();
}

awaitable<void> CmdExec(ConnCommand& c) { co_await c.dispatcher->RunTransaction(c.reply); }

void CmdWatch(ConnCommand& c) {
  if (c.session.multi.active) return c.reply.Error(errors::kWatchInsideMulti);
  engine::Watcher* watcher = &c.session.info->watcher;
  // Like Redis: once a watched key changed, the next EXEC fails whatever else is watched.
  if (watcher->IsDirty()) return c.reply.Ok();
  ShardSet& shards = c.server.shards();
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  for (std::string_view key : c.args.subspan(1)) {
    auto& watched = c.session.watched;
    if (std::any_of(watched.begin(), watched.end(), [&](const WatchedKey& w) { return w.db == db && w.key == key; }))
      continue;
    shards.WithShard(shards.ShardFor(key),
                     [&](engine::Shard& shard) { shard.db(static_cast<size_t>(db)).Watch(key, watcher, now); });
    watched.push_back(WatchedKey{db, std::string(key)});
  }
  c.reply.Ok();
}

void CmdUnwatch(ConnCommand& c) {
  UnwatchAll(c.server, c.session);
  c.reply.Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable& table) {
  constexpr uint32_t kF = kFast, kQ = kNotQueued | kNoScript;
  table.Add({"multi", 1, kAllowBusy | kF | kQ, 0, 0, 0, CmdMulti, "transactions", "Starts a transaction."});
  table.Add({"exec", 1, kQ | kNoCharge | kSkipSlowlog, 0, 0, 0, CmdExec, "transactions", "Executes all commands in a transaction."});
  table.Add({"discard", 1, kAllowBusy | kF | kQ, 0, 0, 0, CmdDiscard, "transactions", "Discards a transaction."});
  table.Add({"watch", -2, kAllowBusy | kF | kQ, 1, -1, 1, CmdWatch, "transactions",
             "Monitors changes to keys to determine the execution of a transaction."});
  table.Add({"unwatch", 1, kAllowBusy | kF | kNoScript, 0, 0, 0, CmdUnwatch, "transactions", "Forgets about watched keys of a transaction."});
}

}  // namespace lapse::server
