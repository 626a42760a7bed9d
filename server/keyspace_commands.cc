// Keyspace-wide commands: KEYS, SCAN, DBSIZE, RANDOMKEY, FLUSHDB, FLUSHALL and SWAPDB. They
// fan out to every shard; FLUSHALL and SWAPDB hold every shard for one atomic step
// (ShardSet::RunHolding), so no other client sees them half done, as with Redis.
#include <random>
#include <thread>

#include "engine/glob.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/fanout.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
using protocol::EqualsIgnoreCase;

namespace {

void CmdKeys(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  std::vector<std::vector<std::string>> found(shards.size());
  std::vector<size_t> visits(shards.size(), 0);
  std::string_view pattern = c.args[1];
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  shards.RunOnAll(
      [&](engine::Shard& shard) {
        auto& out = found[shard.id()];
        uint64_t cursor = 0;
        do {
          cursor = shard.db(db).Scan(cursor, now, [&](const Entry* e) {
            ++visits[shard.id()];
            if (engine::GlobMatch(pattern, e->key())) out.emplace_back(e->key());
          });
        } while (cursor != 0);
      });
  size_t n = 0, bytes = 0;
  for (auto& f : found) {
    n += f.size();
    for (auto& k : f) bytes += k.size();
  }
  size_t visited = 0;
  for (size_t v : visits) visited += v;
  c.charge.Add(engine::RuOp::kQuery, bytes, visited);
  c.reply.ArrayHeader(n);
  for (auto& f : found) {
    for (auto& k : f) c.reply.Bulk(k);
  }
}

// SCAN cursors carry the shard in their low bits and that shard's table cursor above them;
// a scan walks shard 0 to the end, then shard 1, and so on.
void CmdScan(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  uint64_t cursor = 0;
  if (!ParseScanCursor(c.args[1], &cursor)) {
    c.reply.Error("ERR invalid cursor");
    return;
  }
  std::optional<std::string_view> pattern, type;
  int64_t count = 10;
  for (size_t i = 2; i < c.args.size(); i += 2) {
    if (i + 1 >= c.args.size()) {
      c.reply.Error(errors::kSyntax);
      return;
    }
    std::string_view opt = AsCString(c.args[i]), value = c.args[i + 1];
    if (EqualsIgnoreCase(opt, "MATCH")) {
      pattern = value;
    } else if (EqualsIgnoreCase(opt, "COUNT")) {
      if (!protocol::ParseInt64(value, &count)) {
        c.reply.Error(errors::kNotInteger);
        return;
      }
      if (count < 1) {
        c.reply.Error(errors::kSyntax);
        return;
      }
    } else if (EqualsIgnoreCase(opt, "TYPE")) {
      type = AsCString(value);
    } else {
      c.reply.Error(errors::kSyntax);
      return;
    }
  }
  ShardCursor at = ShardCursor::Decode(cursor, shards.size());
  const int64_t max_rounds = ScanRoundLimit(count);
  std::vector<std::string> keys;
  size_t visited = 0;
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  // Fill up to COUNT keys, moving on to the next shard when one is exhausted, so that an
  // empty keyspace answers cursor 0 at once whatever the number of shards.
  while (at.shard < shards.size() && static_cast<int64_t>(keys.size()) < count) {
    uint32_t ids[] = {at.shard};
    shards.RunOn(
        ids, [&](engine::Shard& shard) {
          engine::Db& d = shard.db(db);
          int64_t rounds = 0;
          // Bounded like Redis: COUNT buckets, at most ten times that many empty ones.
          do {
            at.table = d.Scan(at.table, now, [&](const Entry* e) {
              ++visited;
              if (pattern && !engine::GlobMatch(*pattern, e->key())) return;
              if (type && !EqualsIgnoreCase(*type, TypeName(e->type()))) return;
              keys.emplace_back(e->key());
            });
          } while (at.table != 0 && ++rounds < max_rounds && static_cast<int64_t>(keys.size()) < count);
        });
    if (at.table != 0) break;
    ++at.shard;
  }
  size_t bytes = 0;
  for (auto& k : keys) bytes += k.size();
  c.charge.Add(engine::RuOp::kQuery, bytes, visited);
  c.reply.ArrayHeader(2);
  c.reply.Bulk(std::to_string(at.Encode(shards.size())));
  c.reply.ArrayHeader(keys.size());
  for (auto& k : keys) c.reply.Bulk(k);
}

// Lets the connection's thread serve others before the next round of a long command.
awaitable<void> YieldThread(ConnCommand& c) {
  // Inside EXEC the command holds its shards and finishes at once: nobody else may run.
  if (ShardSet::InAtomicStep()) co_return;
  // Others' commands run meanwhile, each the thread's tracking context in its turn.
  Tracking::CommandContext* context = Tracking::Current();
  co_await asio::post(c.server.shards().context(c.session.home), use_awaitable);
  Tracking::Current() = context;
}

// DBSIZE is exact, as every read surface is: keys already due are deleted first. After a mass
// expiry that is a lot of work, done a reclaim slice per round so that the shards serve other
// clients in between: only this reply waits.
awaitable<void> CmdDbSize(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  std::vector<size_t> counts(shards.size(), 0);
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  std::vector<uint32_t> pending;
  for (uint32_t id = 0; id < shards.size(); ++id) pending.push_back(id);
  std::vector<char> done(shards.size(), 0);
  while (true) {
    shards.RunOn(pending, [&](engine::Shard& shard) {
      engine::Db& d = shard.db(db);
      if (!ShardSet::ReclaimDueForOneSlice(d, now)) return;
      counts[shard.id()] = d.stored();
      done[shard.id()] = 1;
    });
    std::erase_if(pending, [&](uint32_t id) { return done[id] != 0; });
    if (pending.empty()) break;
    co_await YieldThread(c);
  }
  size_t total = 0;
  for (size_t n : counts) total += n;
  c.charge.Add(engine::RuOp::kQuery, 0, total);
  c.reply.Integer(static_cast<int64_t>(total));
}

awaitable<void> CmdRandomKey(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  std::random_device rd;
  uint64_t seed = (static_cast<uint64_t>(rd()) << 32) | rd();
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  std::optional<std::string> key;
  const uint64_t first_shard = seed % shards.size();  // seed itself moves on with each pick
  for (size_t k = 0; k < shards.size() && !key; ++k) {
    uint32_t ids[] = {static_cast<uint32_t>((first_shard + k) % shards.size())};
    // A shard full of expired keys is reclaimed a slice per round until a live key turns up
    // or none is left, as DBSIZE does.
    bool settled = false;
    while (!settled) {
      shards.RunOn(ids, [&](engine::Shard& shard) {
        engine::Db& d = shard.db(db);
        if (Entry* e = d.TryRandomLive(&seed, now)) {
          key = std::string(e->key());
          settled = true;
        } else {
          settled = d.stored() == 0 || (ShardSet::ReclaimDueForOneSlice(d, now) && d.stored() == 0);
        }
      });
      if (!settled) co_await YieldThread(c);
    }
  }
  c.charge.Add(engine::RuOp::kRead, key ? key->size() : 0);
  key ? c.reply.Bulk(*key) : c.reply.Null();
}

// Returns false (and replies) unless the optional argument is ASYNC or SYNC.
bool ParseFlushMode(ConnCommand& c, bool* async) {
  *async = false;
  if (c.args.size() == 1) return true;
  if (c.args.size() == 2 && EqualsIgnoreCase(AsCString(c.args[1]), "ASYNC")) return *async = true, true;
  if (c.args.size() == 2 && EqualsIgnoreCase(AsCString(c.args[1]), "SYNC")) return true;
  c.reply.Error(errors::kSyntax);
  return false;
}

void Flush(ConnCommand& c, bool all_dbs) {
  bool async = false;
  if (!ParseFlushMode(c, &async)) return;
  ShardSet& shards = c.server.shards();
  int db = c.session.db;
  // The database's containers go too (all of them for FLUSHALL); their items become
  // unreachable at once and are freed in the background.
  if (all_dbs) {
    c.server.containers().DropAll();
  } else {
    c.server.containers().DropDb(static_cast<uint32_t>(db));
  }
  auto garbage = std::make_shared<std::vector<engine::KvTable>>();
  Persistence& persistence = c.server.persistence();
  bool save_now = all_dbs && !c.server.config().Snapshot().save_rules.empty();
  // One atomic step over every shard, so `garbage` needs no lock.
  shards.RunHoldingAll([&] {
    // Redis's FLUSHALL stops a background save (it kills the child) and, under `save` rules,
    // saves the emptied data set at once: a restart must not bring the keys back. The save
    // is stopped first, so that it takes none of the keys (engine/snapshot.h).
    if (all_dbs) persistence.AbandonBackgroundSave();
    uint64_t removed = 0;
    for (uint32_t id = 0; id < shards.size(); ++id) {
      engine::Shard& shard = shards.shard(id);
      for (size_t d = 0; d < shard.database_count(); ++d) {
        if (!all_dbs && static_cast<int>(d) != db) continue;
        removed += shard.db(d).stored();
        if (async) {
          garbage->push_back(shard.db(d).TakeTable());
        } else {
          shard.db(d).Clear();
        }
      }
    }
    // Redis counts the keys a flush removed as changes (server/dirty_count.h counts none for
    // the command itself).
    persistence.CountChanges(removed);
    if (save_now) persistence.SaveHoldingAll();
  });
  // ASYNC frees the old entries on a helper thread, so the shards are free at once (while a
  // save walks, the tables it still has to write went to it instead, and these are empty).
  if (async && !garbage->empty()) std::thread([garbage] { garbage->clear(); }).detach();
  // Like Redis, either flush tells every tracking client to drop its whole cache.
  c.server.tracking().Flushed();
  c.reply.Ok();
}

void CmdFlushDb(ConnCommand& c) { return Flush(c, false); }
void CmdFlushAll(ConnCommand& c) { return Flush(c, true); }

void CmdSwapDb(ConnCommand& c) {
  int64_t a = 0, b = 0;
  // Redis reads both as C ints and gives its own message for one that does not fit either.
  if (!protocol::ParseInt64(c.args[1], &a) || a < INT32_MIN || a > INT32_MAX) {
    c.reply.Error(errors::kInvalidDbIndex);
    return;
  }
  if (!protocol::ParseInt64(c.args[2], &b) || b < INT32_MIN || b > INT32_MAX) {
    c.reply.Error(errors::kInvalidSecondDbIndex);
    return;
  }
  int64_t n = c.server.settings().databases;
  if (a < 0 || a >= n || b < 0 || b >= n) {
    c.reply.Error(errors::kDbIndexOutOfRange);
    return;
  }
  int64_t now = c.server.clock().NowMs();
  // Containers go with their database: the catalog and every shard swap in one atomic step.
  ShardSet& shards = c.server.shards();
  shards.RunHoldingAll([&] {
    c.server.containers().SwapDbs(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
    for (uint32_t id = 0; id < shards.size(); ++id) {
      shards.shard(id).SwapDbs(static_cast<size_t>(a), static_cast<size_t>(b), now);
    }
  });
  c.reply.Ok();
}

}  // namespace

void RegisterKeyspaceCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast;
  table.Add({"keys", 2, kR | kDangerous, 0, 0, 0, CmdKeys, "generic", "Returns all key names that match a pattern."});
  table.Add({"scan", -2, kR, 0, 0, 0, CmdScan, "generic", "Iterates over the key names in the database."});
  table.Add({"dbsize", 1, kR | kF, 0, 0, 0, CmdDbSize, "server", "Returns the number of keys in the database."});
  table.Add({"randomkey", 1, kR, 0, 0, 0, CmdRandomKey, "generic", "Returns a random key name from the database."});
  table.Add({"flushdb", -1, kW | kDangerous, 0, 0, 0, CmdFlushDb, "server", "Removes all keys (and containers) from the current database."});
  table.Add({"flushall", -1, kW | kDangerous, 0, 0, 0, CmdFlushAll, "server", "Removes all keys (and containers) from all databases."});
  table.Add({"swapdb", 3, kW | kF | kDangerous, 0, 0, 0, CmdSwapDb, "server", "Swaps two Redis databases."});
}

}  // namespace lapse::server
