// Container family: Cosmos DB-style containers (CSETTTL, CGETTTL, CLIST, CDROP, CINFO, CMOVE)
// and their JSON items (IPUT, IGET, IDEL, ITTL, IPTTL, ICOUNT, ISCAN).
//
// Container settings live in the shared catalog (atomics), so setting them needs no shard.
// Item commands run on the shard that owns (container, id); counts, scans and CINFO fan out.
// Every check that can fail runs before anything is written, so a rejected request changes
// nothing — not even the creation of the container.
//
// A container belongs to a database (engine/container.h): every command finds its container
// in the database the connection has selected, so SELECT (in MULTI and scripts too) chooses
// which containers a client sees.
#include <algorithm>

#include "engine/container.h"
#include "engine/glob.h"
#include "engine/item_store.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/container_budget.h"
#include "server/command_table.h"
#include "server/fanout.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::ContainerFigures;
using engine::ContainerPart;
using engine::Item;
using engine::ItemJsonError;
using engine::kTtlOff;
using protocol::EqualsIgnoreCase;

namespace {

// The database whose containers a command sees: the one its connection (or script) selected.
uint32_t DbOf(const ShardCommand& c) { return c.db.index(); }
uint32_t DbOf(const ConnCommand& c) { return static_cast<uint32_t>(c.session.db); }

// ---- Budgets ----

// A container with its own provisioned budget answers requests beyond it with Cosmos DB's
// 429, here THROTTLED, and changes nothing. Containers on the server-wide budget are never
// throttled, and under serverless billing nothing is: a serverless account has no
// provisioned throughput to exceed (a budget set before a switch to serverless sleeps until
// billing is provisioned again). Replies and marks the request when it is refused.
bool ThrottledAt(RequestCharge& charge, protocol::ReplyWriter& reply, const Server& server,
                 engine::ContainerInfo& info, int64_t now_ms) {
  charge.container = &info;
  if (server.serverless()) return false;
  int64_t retry_after = 0;
  if (!info.meter.Exhausted(now_ms, &retry_after)) return false;
  info.meter.CountThrottled();
  info.server_stats->throttled.fetch_add(1, std::memory_order_relaxed);
  charge.throttled = true;
  reply.Error("THROTTLED Request rate is large. Retry after " + std::to_string(retry_after) + " ms");
  return true;
}

bool Throttled(ShardCommand& c, ContainerPart& part) {
  return ThrottledAt(c.charge, c.reply, c.server, *part.info, c.now_ms);
}

}  // namespace

bool ThrottledFanout(ConnCommand& c, const std::shared_ptr<engine::ContainerInfo>& info) {
  if (!info) return false;
  c.charge.Hold(info);
  return ThrottledAt(c.charge, c.reply, c.server, *info, c.server.clock().NowMs());
}

namespace {

void CmdCSetRu(ConnCommand& c) {
  // Like Cosmos DB, which refuses to set throughput on a container of a serverless account.
  if (c.server.serverless()) return c.reply.Error(errors::kThroughputOnServerless);
  std::string_view value = c.args[2];
  int64_t ru = 0;
  if (!EqualsIgnoreCase(value, "OFF") && (!protocol::ParseInt64(value, &ru) || ru < 1)) {
    return c.reply.Error("ERR invalid request units per second '" + std::string(value) +
                         "': give a positive integer, or OFF to use the server-wide budget");
  }
  auto info = c.server.containers().FindOrCreate(DbOf(c), c.args[1]);
  info->meter.set_limit(static_cast<double>(ru));
  info->ru_per_second.store(ru, std::memory_order_relaxed);
  c.reply.Ok();
}

void CmdCGetRu(ConnCommand& c) {
  auto info = c.server.containers().Find(DbOf(c), c.args[1]);
  int64_t limit = info ? info->ru_per_second.load(std::memory_order_relaxed) : 0;
  limit > 0 ? c.reply.Integer(limit) : c.reply.Null();
}

void CmdLastCharge(ConnCommand& c) { c.reply.Double(c.session.last_charge); }

// ---- Container settings ----

void CmdCSetTtl(ConnCommand& c) {
  std::string_view value = c.args[2];
  int64_t ttl = kTtlOff;
  if (!EqualsIgnoreCase(value, "OFF") && !EqualsIgnoreCase(value, "NULL") && !engine::ParseTtlSeconds(value, &ttl)) {
    return c.reply.Error(errors::InvalidTtl(value));
  }
  auto info = c.server.containers().FindOrCreate(DbOf(c), c.args[1]);
  // Release/acquire with the shards' loads: once this returns, no read uses the old value.
  info->default_ttl.store(ttl, std::memory_order_seq_cst);
  c.reply.Ok();
}

// CSETEVICT container ON|OFF: whether maxmemory's allkeys-* policies may evict the
// container's live items (server/eviction.h). Off by default: items are data.
void CmdCSetEvict(ConnCommand& c) {
  std::string_view value = c.args[2];
  bool on = EqualsIgnoreCase(value, "ON");
  if (!on && !EqualsIgnoreCase(value, "OFF")) {
    return c.reply.Error("ERR invalid eviction setting '" + std::string(value) + "': give ON or OFF");
  }
  auto info = c.server.containers().FindOrCreate(DbOf(c), c.args[1]);
  info->evictable.store(on, std::memory_order_relaxed);
  c.reply.Ok();
}

void CmdCGetTtl(ConnCommand& c) {
  auto info = c.server.containers().Find(DbOf(c), c.args[1]);
  int64_t ttl = info ? info->default_ttl.load() : kTtlOff;
  ttl == kTtlOff ? c.reply.Null() : c.reply.Integer(ttl);
}

void CmdCList(ConnCommand& c) {
  auto names = c.server.containers().Names(DbOf(c));
  c.reply.ArrayHeader(names.size());
  for (const auto& n : names) c.reply.Bulk(n);
}

void CmdCDrop(ConnCommand& c) { c.reply.Integer(c.server.containers().Drop(DbOf(c), c.args[1]) ? 1 : 0); }

// CMOVE container db: MOVE's counterpart for a container, with MOVE's errors and replies. The
// container keeps its items, settings, budget and figures; 0 when it does not exist here or
// `db` has a container of that name. The catalog and every shard's cache of it are re-keyed in
// one atomic step, so no command sees the container in both databases or in neither.
void CmdCMove(ConnCommand& c) {
  int target = 0;
  if (auto error = ParseDbIndex(c.args[2], c.server.settings().databases, &target)) return c.reply.Error(*error);
  uint32_t from = DbOf(c), to = static_cast<uint32_t>(target);
  if (from == to) return c.reply.Error(errors::kSameDb);
  std::string_view name = c.args[1];
  ShardSet& shards = c.server.shards();
  bool moved = false;
  shards.RunHoldingAll([&] {
    moved = c.server.containers().Move(name, from, to);
    if (!moved) return;
    for (uint32_t id = 0; id < shards.size(); ++id) shards.shard(id).items().MoveToDb(name, from, to);
  });
  c.reply.Integer(moved ? 1 : 0);
}

// Sums every shard's figures for one container; false if the container does not exist.
bool GatherFigures(ConnCommand& c, std::string_view container, ContainerFigures* total, uint64_t* lag_max) {
  const uint32_t db = DbOf(c);
  if (!c.server.containers().Find(db, container)) return false;
  ShardSet& shards = c.server.shards();
  std::vector<ContainerFigures> figures(shards.size());
  std::vector<uint64_t> lags(shards.size(), 0);
  int64_t now = c.server.clock().NowMs();
  shards.RunOnAll([&](engine::Shard& shard) {
    if (ContainerPart* part = shard.items().Find(db, container)) {
      figures[shard.id()] = shard.items().Figures(*part, now);
      lags[shard.id()] = part->counters.reclaim_lag_max_ms;
    }
  });
  *total = ContainerFigures{};
  *lag_max = 0;
  for (size_t i = 0; i < figures.size(); ++i) {
    const ContainerFigures& f = figures[i];
    total->live += f.live;
    total->stored += f.stored;
    total->expired_unreclaimed += f.expired_unreclaimed;
    total->reclaimed_background += f.reclaimed_background;
    total->reclaimed_lazy += f.reclaimed_lazy;
    if (f.oldest_expired_deadline_ms != 0 &&
        (total->oldest_expired_deadline_ms == 0 || f.oldest_expired_deadline_ms < total->oldest_expired_deadline_ms))
      total->oldest_expired_deadline_ms = f.oldest_expired_deadline_ms;
    *lag_max = std::max(*lag_max, lags[i]);
  }
  return true;
}

void CmdCInfo(ConnCommand& c) {
  ContainerFigures f;
  uint64_t lag_max = 0;
  std::string_view name = c.args[1];
  if (!GatherFigures(c, name, &f, &lag_max)) {
    c.reply.Null();
    return;
  }
  auto info = c.server.containers().Find(DbOf(c), name);
  int64_t ttl = info ? info->default_ttl.load() : kTtlOff;
  int64_t now = c.server.clock().NowMs();
  engine::ContainerInfo* ci = info.get();
  auto milli = [](const std::atomic<int64_t>& v) { return static_cast<double>(v.load()) / 1000.0; };
  c.reply.MapHeader(18);
  c.reply.Bulk("ru_per_second");
  int64_t own_budget = ci ? ci->ru_per_second.load(std::memory_order_relaxed) : 0;
  own_budget > 0 ? c.reply.Integer(own_budget) : c.reply.Null();
  c.reply.Bulk("ru_user_total");
  c.reply.Double(ci ? milli(ci->ru_user_total_milli) : 0);
  c.reply.Bulk("ru_reclaim_total");
  c.reply.Double(ci ? milli(ci->ru_reclaim_total_milli) : 0);
  c.reply.Bulk("ru_throttled_requests");
  c.reply.Integer(ci ? static_cast<int64_t>(ci->meter.throttled()) : 0);
  c.reply.Bulk("reclaim_backlog");
  c.reply.Integer(static_cast<int64_t>(f.expired_unreclaimed));
  c.reply.Bulk("reclaim_lag_p50_ms");
  c.reply.Integer(ci ? static_cast<int64_t>(ci->lag.Quantile(0.5)) : 0);
  c.reply.Bulk("reclaim_lag_p99_ms");
  c.reply.Integer(ci ? static_cast<int64_t>(ci->lag.Quantile(0.99)) : 0);
  c.reply.Bulk("reclaim_lag_max_ms");
  c.reply.Integer(ci ? static_cast<int64_t>(ci->lag.max()) : 0);
  c.reply.Bulk("default_ttl");
  ttl == kTtlOff ? c.reply.Null() : c.reply.Integer(ttl);
  c.reply.Bulk("live_items");
  c.reply.Integer(static_cast<int64_t>(f.live));
  c.reply.Bulk("stored_items");
  c.reply.Integer(static_cast<int64_t>(f.stored));
  c.reply.Bulk("expired_unreclaimed");
  c.reply.Integer(static_cast<int64_t>(f.expired_unreclaimed));
  c.reply.Bulk("reclaimed_total");
  c.reply.Integer(static_cast<int64_t>(f.reclaimed_background + f.reclaimed_lazy));
  c.reply.Bulk("reclaimed_background_total");
  c.reply.Integer(static_cast<int64_t>(f.reclaimed_background));
  c.reply.Bulk("reclaimed_lazy_total");
  c.reply.Integer(static_cast<int64_t>(f.reclaimed_lazy));
  c.reply.Bulk("oldest_unreclaimed_ms");
  c.reply.Integer(f.oldest_expired_deadline_ms == 0 ? 0 : std::max<int64_t>(0, now - f.oldest_expired_deadline_ms));
  c.reply.Bulk("evictable");
  c.reply.Integer(ci != nullptr && ci->evictable.load(std::memory_order_relaxed) ? 1 : 0);
  c.reply.Bulk("evicted_items_total");
  c.reply.Integer(ci ? static_cast<int64_t>(ci->evicted_items.load(std::memory_order_relaxed)) : 0);
}

// ---- Items ----

// An etag as lapse writes them: 16 lower-case hex digits.
bool ParseEtag(std::string_view etag, uint64_t* value) {
  bool ok = etag.size() == 16;
  *value = 0;
  for (char ch : etag) {
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    ok &= d >= 0;
    *value = *value * 16 + static_cast<uint64_t>(std::max(d, 0));
  }
  return ok;
}

void CmdIPut(ShardCommand& c) {
  std::string_view container = c.args[1], id = c.args[2], json = c.args[3];
  engine::PutCondition condition = engine::PutCondition::kAlways;
  std::optional<uint64_t> if_match;
  std::optional<engine::ItemStamp> replayed;
  for (size_t i = 4; i < c.args.size(); ++i) {
    std::string_view a = c.args[i];
    // The append-only log's form (server/aof_effects.cc): the original _ts and _etag, which
    // only a replay may set.
    if (EqualsIgnoreCase(a, "REPLAYED") && i + 2 < c.args.size() && c.server.aof().loading()) {
      engine::ItemStamp stamp;
      if (!protocol::ParseInt64(c.args[i + 1], &stamp.last_write_ms) || !ParseEtag(c.args[i + 2], &stamp.etag)) {
        return c.reply.Error(errors::kSyntax);
      }
      replayed = stamp;
      i += 2;
      continue;
    }
    // NX asks for no live item and IFMATCH for a live one: together they could never write.
    if (EqualsIgnoreCase(a, "NX") && condition == engine::PutCondition::kAlways && !if_match) {
      condition = engine::PutCondition::kIfAbsent;
    } else if (EqualsIgnoreCase(a, "XX") && condition == engine::PutCondition::kAlways) {
      condition = engine::PutCondition::kIfPresent;
    } else if (EqualsIgnoreCase(a, "IFMATCH") && i + 1 < c.args.size() && !if_match &&
               condition != engine::PutCondition::kIfAbsent) {
      uint64_t value = 0;
      // An etag that cannot be one of ours matches nothing, as in Cosmos DB's precondition.
      if_match = ParseEtag(c.args[++i], &value) ? value : 0;
    } else {
      return c.reply.Error(errors::kSyntax);
    }
  }
  engine::ItemStore& items = c.shard.items();
  engine::ParsedItem body;
  std::string detail;
  switch (items.json().Parse(id, json, &body, &detail)) {
    case ItemJsonError::kNone:
      break;
    case ItemJsonError::kInvalidId:
      return c.reply.Error(errors::kInvalidItemId);
    case ItemJsonError::kTooLarge:
      return c.reply.Error(errors::kItemTooLarge);
    case ItemJsonError::kInvalidJson:
      return c.reply.Error(errors::InvalidJson(detail));
    case ItemJsonError::kNotObject:
      return c.reply.Error(errors::kItemNotObject);
    case ItemJsonError::kIdMismatch:
      return c.reply.Error(errors::kItemIdMismatch);
    case ItemJsonError::kInvalidTtl:
      return c.reply.Error(errors::InvalidTtl(detail));
    case ItemJsonError::kDuplicateProperty:
      return c.reply.Error(errors::DuplicateProperty(detail));
  }
  ContainerPart* part = items.Find(DbOf(c), container);
  if (part && Throttled(c, *part)) return;
  if (!part) {
    // Nothing can be written under XX or IFMATCH into a container that does not exist.
    if (condition == engine::PutCondition::kIfPresent || if_match) return c.charge.Add(engine::RuOp::kRead, 0), c.reply.Null();
    part = items.FindOrCreate(DbOf(c), container);
    c.charge.container = part->info.get();
  }
  // Charged for the document as IGET will return it (Item::Bytes), like every item operation.
  size_t bytes = engine::RenderedItemBytes(id, body.members.size(), c.now_ms / 1000);
  engine::PutOutcome outcome =
      items.Put(*part, id, std::move(body), condition, if_match, c.now_ms, replayed ? &*replayed : nullptr);
  if (!outcome.written) return c.charge.Add(engine::RuOp::kRead, bytes), c.reply.Null();
  c.charge.Add(outcome.replaced ? engine::RuOp::kReplace : engine::RuOp::kInsert, bytes);
  c.server.keyspace_events().NotifyItem(kEventGeneric, "iput", container, id, DbOf(c));
  c.reply.Bulk(engine::EtagText(outcome.etag));
}

void CmdIGet(ShardCommand& c) {
  engine::ItemStore& items = c.shard.items();
  ContainerPart* part = items.Find(DbOf(c), c.args[1]);
  if (part && Throttled(c, *part)) return;
  const Item* item = part ? items.Get(*part, c.args[2], c.now_ms) : nullptr;
  if (!item) return c.charge.Add(engine::RuOp::kRead, 0), c.reply.Null();
  static thread_local std::string doc;
  engine::RenderItem(item->id, item->members, item->last_write_ms / 1000, item->etag, &doc);
  c.charge.Add(engine::RuOp::kRead, doc.size());
  c.reply.Bulk(doc);
}

void ItemTtl(ShardCommand& c, bool milliseconds) {
  engine::ItemStore& items = c.shard.items();
  ContainerPart* part = items.Find(DbOf(c), c.args[1]);
  if (part && Throttled(c, *part)) return;
  const Item* item = part ? items.Get(*part, c.args[2], c.now_ms) : nullptr;
  c.charge.Add(engine::RuOp::kRead, item ? item->Bytes() : 0);
  if (!item) return c.reply.Integer(-2);
  auto deadline = item->Deadline(part->default_ttl());
  if (!deadline) return c.reply.Integer(-1);
  int64_t left = *deadline - c.now_ms;
  c.reply.Integer(milliseconds ? left : (left + 500) / 1000);
}

void CmdITtl(ShardCommand& c) { ItemTtl(c, false); }
void CmdIPTtl(ShardCommand& c) { ItemTtl(c, true); }

void CmdIDel(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  std::string_view container = c.args[1];
  std::vector<uint32_t> involved;
  std::vector<std::vector<size_t>> positions(shards.size());
  for (size_t i = 2; i < c.args.size(); ++i) {
    uint32_t s = shards.ShardForItem(container, c.args[i]);
    if (positions[s].empty()) involved.push_back(s);
    positions[s].push_back(i);
  }
  std::vector<int64_t> deleted(shards.size(), 0);
  std::vector<double> charges(shards.size(), 0);
  int64_t now = c.server.clock().NowMs();
  const uint32_t db = DbOf(c);
  auto info = c.server.containers().Find(db, container);
  if (ThrottledFanout(c, info)) return;
  shards.RunOn(involved, [&](engine::Shard& shard) {
    ContainerPart* part = shard.items().Find(db, container);
    for (size_t pos : positions[shard.id()]) {
      const Item* item = part ? shard.items().Get(*part, c.args[pos], now) : nullptr;
      if (!item) {
        charges[shard.id()] += engine::RuCharge(engine::RuOp::kRead, 0);
        continue;
      }
      charges[shard.id()] += engine::RuCharge(engine::RuOp::kDelete, item->Bytes());
      if (shard.items().Delete(*part, c.args[pos], now)) {
        ++deleted[shard.id()];
        c.server.keyspace_events().NotifyItem(kEventGeneric, "idel", container, c.args[pos], db);
      }
    }
  });
  int64_t total = 0;
  for (int64_t n : deleted) total += n;
  for (double ru : charges) c.charge.ru += ru;
  c.reply.Integer(total);
}

void CmdICount(ConnCommand& c) {
  ContainerFigures f;
  uint64_t lag = 0;
  auto info = c.server.containers().Find(DbOf(c), c.args[1]);
  if (ThrottledFanout(c, info)) return;
  GatherFigures(c, c.args[1], &f, &lag);
  c.charge.Add(engine::RuOp::kQuery, 0, f.stored);
  c.reply.Integer(static_cast<int64_t>(f.live));
}

// ISCAN cursors carry the shard in their low bits, as SCAN's do.
void CmdIScan(ConnCommand& c) {
  uint64_t cursor = 0;
  if (!ParseCursor(c.args[2], &cursor)) {
    c.reply.Error("ERR invalid cursor");
    return;
  }
  int64_t count = 10;
  std::optional<std::string_view> pattern;
  for (size_t i = 3; i < c.args.size(); i += 2) {
    if (i + 1 >= c.args.size()) {
      c.reply.Error(errors::kSyntax);
      return;
    }
    if (EqualsIgnoreCase(c.args[i], "COUNT")) {
      if (!protocol::ParseInt64(c.args[i + 1], &count)) {
        c.reply.Error(errors::kNotInteger);
        return;
      }
      if (count < 1) {
        c.reply.Error(errors::kSyntax);
        return;
      }
    } else if (EqualsIgnoreCase(c.args[i], "MATCH")) {
      pattern = c.args[i + 1];
    } else {
      c.reply.Error(errors::kSyntax);
      return;
    }
  }
  const int64_t max_rounds = ScanRoundLimit(count);
  ShardSet& shards = c.server.shards();
  ShardCursor at = ShardCursor::Decode(cursor, shards.size());
  std::vector<std::string> docs;
  std::string_view container = c.args[1];
  int64_t now = c.server.clock().NowMs();
  const uint32_t db = DbOf(c);
  auto info = c.server.containers().Find(db, container);
  if (ThrottledFanout(c, info)) return;
  size_t visited = 0;
  // Fill up to COUNT items, moving on to the next shard when one is exhausted.
  while (at.shard < shards.size() && static_cast<int64_t>(docs.size()) < count) {
    uint32_t ids[] = {at.shard};
    shards.RunOn(
        ids, [&](engine::Shard& shard) {
          ContainerPart* part = shard.items().Find(db, container);
          if (!part) {
            at.table = 0;
            return;
          }
          int64_t rounds = 0;
          do {
            at.table = shard.items().Scan(*part, at.table, now, 1, [&](const Item& item) {
              ++visited;
              if (pattern && !engine::GlobMatch(*pattern, item.id)) return;
              docs.emplace_back();
              engine::RenderItem(item.id, item.members, item.last_write_ms / 1000, item.etag, &docs.back());
            });
          } while (at.table != 0 && ++rounds < max_rounds && static_cast<int64_t>(docs.size()) < count);
        });
    if (at.table != 0) break;
    ++at.shard;
  }
  size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  c.charge.Add(engine::RuOp::kQuery, bytes, visited);
  c.reply.ArrayHeader(2);
  c.reply.Bulk(std::to_string(at.Encode(shards.size())));
  c.reply.ArrayHeader(docs.size());
  for (const auto& d : docs) c.reply.Bulk(d);
}

}  // namespace

void RegisterContainerCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast, kI = kItemKey, kC = kContainerArg;
  table.Add({"csetru", 3, kW | kDenyOom | kF | kC, 0, 0, 0, CmdCSetRu, "container", "Sets a container's own request-unit budget per second, or OFF."});
  table.Add({"cgetru", 2, kR | kF | kC, 0, 0, 0, CmdCGetRu, "container", "Returns a container's own request-unit budget, nil when it shares the server's."});
  table.Add({"lastcharge", 1, kF | kNoCharge, 0, 0, 0, CmdLastCharge, "container", "Returns the request-unit charge of the previous command on this connection."});
  table.Add({"csetttl", 3, kW | kDenyOom | kF | kC, 0, 0, 0, CmdCSetTtl, "container", "Sets a container's DefaultTimeToLive: -1, 1..2147483647 seconds, or OFF."});
  table.Add({"csetevict", 3, kW | kF | kC, 0, 0, 0, CmdCSetEvict, "container", "Lets maxmemory's allkeys-* policies evict a container's items (ON), or not (OFF, the default)."});
  table.Add({"cgetttl", 2, kR | kF | kC, 0, 0, 0, CmdCGetTtl, "container", "Returns a container's DefaultTimeToLive, nil when off."});
  table.Add({"clist", 1, kR, 0, 0, 0, CmdCList, "container", "Lists the selected database's containers, sorted."});
  table.Add({"cdrop", 2, kW | kC, 0, 0, 0, CmdCDrop, "container", "Drops a container and all its items."});
  table.Add({"cmove", 3, kW | kF | kC, 0, 0, 0, CmdCMove, "container", "Moves a container, its items and settings to another database."});
  table.Add({"cinfo", 2, kR | kC, 0, 0, 0, CmdCInfo, "container", "Returns a container's settings, item counts and reclamation state."});
  table.Add({"iput", -4, kW | kDenyOom | kI | kC, 1, 1, 1, CmdIPut, "container", "Writes a JSON item: IPUT container id json [NX|XX] [IFMATCH etag]."});
  table.Add({"iget", 3, kR | kF | kI | kC, 1, 1, 1, CmdIGet, "container", "Returns a live item as JSON with id, _ts and _etag."});
  table.Add({"idel", -3, kW | kC, 0, 0, 0, CmdIDel, "container", "Deletes items; returns how many live items were deleted."});
  table.Add({"ittl", 3, kR | kF | kI | kC, 1, 1, 1, CmdITtl, "container", "Seconds until an item expires; -1 never, -2 absent or expired."});
  table.Add({"ipttl", 3, kR | kF | kI | kC, 1, 1, 1, CmdIPTtl, "container", "Milliseconds until an item expires; -1 never, -2 absent or expired."});
  table.Add({"icount", 2, kR | kC, 0, 0, 0, CmdICount, "container", "Counts a container's live items."});
  table.Add({"iscan", -3, kR | kC, 0, 0, 0, CmdIScan, "container", "Iterates a container's live items: ISCAN container cursor [COUNT n] [MATCH pattern]."});
}

}  // namespace lapse::server
