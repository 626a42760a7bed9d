// Set family: SADD, SREM, SMEMBERS, SPOP, SRANDMEMBER, SSCAN, and the algebra SINTER,
// SUNION, SDIFF (with their STORE forms), SINTERCARD and SMOVE.
//
// Single-key commands are ShardHandlers. The algebra touches keys on any shard: it holds
// every shard involved for one atomic step (as MSET does), so a SUNIONSTORE reads its
// sources and writes its destination with no other client in between.
//
// Request units as for hashes (hash_commands.cc): whole-set reads cost the set's serialized
// size, member operations the members' bytes; the algebra is charged as a read of every
// source set and a write of what it stores.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/collection.h"
#include "engine/glob.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
namespace set = engine::set;

namespace {

constexpr std::string_view kOutOfRange = "ERR value is out of range, must be positive";
constexpr std::string_view kCountRange =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
// A negative SRANDMEMBER count repeats members; past this many the reply could not be sent.
constexpr int64_t kMaxRepeatedPicks = 100'000'000;

Entry* FindSet(ShardCommand& c, bool* wrong, Lookup kind) { return FindTyped(c, c.args[1], ValueType::kSet, wrong, kind); }

size_t SetBytes(const Entry* e) {
  size_t bytes = 0;
  if (e) set::ForEach(e, [&](std::string_view m) { bytes += m.size(); });
  return bytes;
}

std::vector<std::string> Members(const Entry* e) {
  std::vector<std::string> out;
  if (e) set::ForEach(e, [&](std::string_view m) { out.emplace_back(m); });
  return out;
}

// ---- Single key ----

// Deletes a set its command left empty (`del`, after the command's own event).
void EraseIfEmpty(ShardCommand& c, Entry* e) {
  if (set::Size(e) != 0) return;
  c.db.Erase(c.args[1], c.now_ms);
  NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);
}

void CmdSAdd(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (!e) e = set::Create(c.db, c.args[1], c.args[2], c.now_ms);
  engine::CollectionLimits limits = c.server.collection_limits();
  int64_t added = 0;
  for (size_t i = 2; i < c.args.size(); ++i) {
    bool fresh = set::Add(c.db, e, c.args[i], limits);
    added += fresh;
    ChargeWrite(c.charge, !fresh, c.args[i].size());
  }
  if (added > 0) {
    c.db.Touch(c.args[1]);
    NotifyKeyspace(c, kEventSet, "sadd", c.args[1]);
  }
  c.reply.Integer(added);
}

void CmdSRem(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  int64_t removed = 0;
  if (e) {
    for (size_t i = 2; i < c.args.size(); ++i) {
      if (!set::Remove(c.db, e, c.args[i])) continue;
      ++removed;
      c.charge.Add(engine::RuOp::kDelete, c.args[i].size());
      if (set::Size(e) == 0) break;
    }
    if (removed > 0) {
      c.db.Touch(c.args[1]);
      NotifyKeyspace(c, kEventSet, "srem", c.args[1]);
      EraseIfEmpty(c, e);
    }
  }
  if (removed == 0) c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(removed);
}

void CmdSMembers(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + SetBytes(e));
  c.reply.SetHeader(e ? set::Size(e) : 0);
  if (e) set::ForEach(e, [&](std::string_view m) { c.reply.Bulk(m); });
}

void CmdSIsMember(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size());
  c.reply.Integer(e && set::Contains(e, c.args[2]) ? 1 : 0);
}

void CmdSMIsMember(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t bytes = c.args[1].size();
  c.reply.ArrayHeader(c.args.size() - 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    bytes += c.args[i].size();
    c.reply.Integer(e && set::Contains(e, c.args[i]) ? 1 : 0);
  }
  c.charge.Add(engine::RuOp::kRead, bytes);
}

void CmdSCard(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(e ? static_cast<int64_t>(set::Size(e)) : 0);
}

// Redis builds a union or difference as a new set that starts as an intset: when every
// member is an integer and they are few enough, its reply lists them in ascending order.
void SortLikeIntSet(std::vector<std::string>* members, size_t intset_limit) {
  if (members->size() > intset_limit) return;
  std::vector<std::pair<int64_t, size_t>> ints;
  ints.reserve(members->size());
  for (size_t i = 0; i < members->size(); ++i) {
    int64_t v;
    if (!engine::ParseCanonicalInt((*members)[i], &v)) return;
    ints.emplace_back(v, i);
  }
  std::sort(ints.begin(), ints.end());
  std::vector<std::string> sorted;
  sorted.reserve(members->size());
  for (auto& [v, i] : ints) sorted.push_back(std::move((*members)[i]));
  *members = std::move(sorted);
}

// `n` distinct random members (n < size): a partial Fisher-Yates shuffle.
std::vector<std::string> DistinctRandom(const Entry* e, size_t n) {
  std::vector<std::string> all = Members(e);
  for (size_t i = 0; i < n; ++i) std::swap(all[i], all[i + NextRandom() % (all.size() - i)]);
  all.resize(n);
  return all;
}

void CmdSPop(ShardCommand& c) {
  int64_t count = 1;
  bool with_count = c.args.size() == 3;
  if (c.args.size() > 3) return c.reply.Error(errors::kSyntax);
  if (with_count && (!protocol::ParseInt64(c.args[2], &count) || count < 0)) return c.reply.Error(kOutOfRange);
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (!with_count) {
    c.charge.Add(engine::RuOp::kRead, c.args[1].size());
    if (!e) return c.reply.Null();
    std::string buffer;
    std::string member(set::Random(e, NextRandom(), &buffer));
    set::Remove(c.db, e, member);
    c.charge.Add(engine::RuOp::kDelete, member.size());
    c.db.Touch(c.args[1]);
    NotifyKeyspace(c, kEventSet, "spop", c.args[1]);
    EraseIfEmpty(c, e);
    return c.reply.Bulk(member);
  }
  if (!e || count == 0) {
    c.charge.Add(engine::RuOp::kRead, c.args[1].size());
    return c.reply.SetHeader(0);
  }
  size_t size = set::Size(e);
  std::vector<std::string> popped;
  if (static_cast<size_t>(count) >= size) {
    // Redis answers the whole set as SUNION would: an intset's order when it can be one.
    popped = Members(e);
    SortLikeIntSet(&popped, c.server.collection_limits().set_max_intset_entries);
  } else {
    popped = DistinctRandom(e, static_cast<size_t>(count));
  }
  c.reply.SetHeader(popped.size());
  size_t bytes = 0;
  for (const std::string& m : popped) {
    c.reply.Bulk(m);
    bytes += m.size();
  }
  c.charge.Add(engine::RuOp::kDelete, c.args[1].size() + bytes);
  NotifyKeyspace(c, kEventSet, "spop", c.args[1]);
  if (popped.size() == size) {
    c.db.Erase(c.args[1], c.now_ms);
    NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);
    return;
  }
  for (const std::string& m : popped) set::Remove(c.db, e, m);
  c.db.Touch(c.args[1]);
}

void CmdSRandMember(ShardCommand& c) {
  int64_t count = 0;
  bool with_count = c.args.size() == 3;
  if (c.args.size() > 3) return c.reply.Error(errors::kSyntax);
  if (with_count) {
    if (!protocol::ParseInt64(c.args[2], &count)) return c.reply.Error(errors::kNotInteger);
    if (count < -INT64_MAX) return c.reply.Error(kCountRange);
    if (count < -kMaxRepeatedPicks) return c.reply.Error("ERR count is too large for one reply");
  }
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  std::string buffer;
  if (!with_count) {
    c.charge.Add(engine::RuOp::kRead, c.args[1].size());
    if (!e) return c.reply.Null();
    return c.reply.Bulk(set::Random(e, NextRandom(), &buffer));
  }
  if (!e || count == 0) return c.reply.ArrayHeader(0);
  size_t size = set::Size(e), bytes = c.args[1].size();
  if (count < 0) {
    auto n = static_cast<size_t>(-count);
    // A packed set is walked once, not once a pick.
    std::vector<std::string> all;
    if (!e->owns_table()) all = Members(e);
    c.reply.ArrayHeader(n);
    for (size_t i = 0; i < n; ++i) {
      std::string_view m = all.empty() ? set::Random(e, NextRandom(), &buffer) : all[NextRandom() % all.size()];
      bytes += m.size();
      c.reply.Bulk(m);
    }
  } else if (static_cast<size_t>(count) >= size) {
    // The whole set, in its order.
    c.reply.ArrayHeader(size);
    set::ForEach(e, [&](std::string_view m) {
      bytes += m.size();
      c.reply.Bulk(m);
    });
  } else {
    std::vector<std::string> picked = DistinctRandom(e, static_cast<size_t>(count));
    c.reply.ArrayHeader(picked.size());
    for (const std::string& m : picked) {
      bytes += m.size();
      c.reply.Bulk(m);
    }
  }
  c.charge.Add(engine::RuOp::kRead, bytes);
}

void CmdSScan(ShardCommand& c) {
  uint64_t cursor = 0;
  if (!ParseScanCursor(c.args[2], &cursor)) return c.reply.Error("ERR invalid cursor");
  bool wrong = false;
  Entry* e = FindSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (!e) {
    c.charge.Add(engine::RuOp::kQuery, 0, 0);
    c.reply.ArrayHeader(2);
    c.reply.Bulk("0");
    return c.reply.ArrayHeader(0);
  }
  CollectionScanOptions options;
  if (!ParseCollectionScanOptions(c.args, 3, &options, c.reply)) return;
  std::vector<std::string> found;
  size_t visited = 0, bytes = 0;
  uint64_t next = engine::ScanCollection(e, cursor, static_cast<size_t>(options.count),
                                         [&](std::string_view m, std::string_view) {
                                           ++visited;
                                           if (options.pattern && !engine::GlobMatch(*options.pattern, m)) return;
                                           found.emplace_back(m);
                                           bytes += m.size();
                                         });
  c.charge.Add(engine::RuOp::kQuery, bytes, visited);
  c.reply.ArrayHeader(2);
  c.reply.Bulk(std::to_string(next));
  c.reply.ArrayHeader(found.size());
  for (const std::string& m : found) c.reply.Bulk(m);
}

// ---- Several keys ----

// The sets named by args[first, last), read holding their shards. Each is nullptr when the
// key is absent; `wrong_type` is set when any holds another type.
struct SourceSets {
  std::vector<Entry*> sets;
  bool wrong_type = false;
};

SourceSets ReadSources(ConnCommand& c, size_t first, size_t last, int64_t now, Lookup kind) {
  ShardSet& shards = c.server.shards();
  SourceSets out;
  for (size_t i = first; i < last; ++i) {
    engine::Shard& shard = shards.shard(shards.ShardFor(c.args[i]));
    Entry* e = FindKey(shard, shard.db(c.session.db), c.args[i], now, kind);
    if (e && e->type() != ValueType::kSet) out.wrong_type = true;
    out.sets.push_back(e);
  }
  return out;
}

std::vector<uint32_t> ShardsOf(ConnCommand& c, size_t first, size_t last, std::optional<size_t> also = std::nullopt) {
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  for (size_t i = first; i < last; ++i) ids.push_back(shards.ShardFor(c.args[i]));
  if (also) ids.push_back(shards.ShardFor(c.args[*also]));
  return ids;
}

enum class SetOp { kInter, kUnion, kDiff };

// The members of the operation over `sets` (none absent for kInter), in Redis's order: an
// intersection walks the smallest set; a union or difference is built as a set first.
std::vector<std::string> Compute(SetOp op, const std::vector<Entry*>& sets, size_t intset_limit, size_t limit = 0) {
  std::vector<std::string> out;
  if (op == SetOp::kInter) {
    std::vector<Entry*> order = sets;
    std::stable_sort(order.begin(), order.end(), [](Entry* a, Entry* b) { return set::Size(a) < set::Size(b); });
    set::ForEach(order[0], [&](std::string_view m) {
      if (limit != 0 && out.size() >= limit) return;
      for (size_t j = 1; j < order.size(); ++j) {
        if (order[j] != order[0] && !set::Contains(order[j], m)) return;
      }
      out.emplace_back(m);
    });
    return out;
  }
  // Collect in a scratch db-free set: a vector plus a membership index.
  std::vector<std::string> members;
  std::unordered_set<std::string> seen;
  auto add = [&](std::string_view m) {
    if (seen.emplace(m).second) members.emplace_back(m);
  };
  if (op == SetOp::kUnion) {
    for (Entry* s : sets) {
      if (s) set::ForEach(s, add);
    }
  } else if (sets[0]) {
    set::ForEach(sets[0], [&](std::string_view m) {
      for (size_t j = 1; j < sets.size(); ++j) {
        if (sets[j] == sets[0] || (sets[j] && set::Contains(sets[j], m))) return;
      }
      add(m);
    });
  }
  SortLikeIntSet(&members, intset_limit);
  return members;
}

// Replaces `key` with a set of `members` (deleting it when there are none), as
// SINTERSTORE/SUNIONSTORE/SDIFFSTORE do whatever it held before. Returns false when
// nothing was stored. A key that existed is replaced in place (Put), not deleted and added
// again, so that `new` is reported only for a key that did not exist, as in Redis.
bool StoreSet(engine::Db& db, std::string_view key, const std::vector<std::string>& members, const engine::CollectionLimits& limits,
              int64_t now) {
  if (members.empty()) return false;
  // Redis starts from an intset and converts as members require; an intset keeps its
  // members sorted, which the ascending insertion below makes cheap.
  bool all_ints = true;
  std::vector<int64_t> ints;
  for (const std::string& m : members) {
    int64_t v;
    if (!engine::ParseCanonicalInt(m, &v)) {
      all_ints = false;
      break;
    }
    ints.push_back(v);
  }
  Entry* e = set::Create(db, key, all_ints ? members[0] : std::string_view("-"), now);
  if (all_ints) {
    std::sort(ints.begin(), ints.end());
    for (int64_t v : ints) set::Add(db, e, std::to_string(v), limits);
  } else {
    for (const std::string& m : members) set::Add(db, e, m, limits);
  }
  return true;
}

const char* StoreEvent(SetOp op) {
  switch (op) {
    case SetOp::kInter:
      return "sinterstore";
    case SetOp::kUnion:
      return "sunionstore";
    case SetOp::kDiff:
      return "sdiffstore";
  }
  return "";
}

// SINTER/SUNION/SDIFF key... and their STORE forms (destination at args[1]).
void SetAlgebra(ConnCommand& c, SetOp op, bool store) {
  size_t first = store ? 2 : 1;
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  std::vector<uint32_t> ids = ShardsOf(c, first, c.args.size(), store ? std::optional<size_t>(1) : std::nullopt);
  engine::CollectionLimits limits = c.server.collection_limits();
  bool wrong_type = false;
  std::vector<std::string> result;
  size_t read_bytes = 0;
  shards.RunHolding(ids, [&] {
    SourceSets sources = ReadSources(c, first, c.args.size(), now, store ? Lookup::kWrite : Lookup::kRead);
    if (sources.wrong_type) {
      wrong_type = true;
      return;
    }
    for (Entry* s : sources.sets) read_bytes += SetBytes(s);
    bool any_missing = std::find(sources.sets.begin(), sources.sets.end(), nullptr) != sources.sets.end();
    if (!(op == SetOp::kInter && any_missing)) result = Compute(op, sources.sets, limits.set_max_intset_entries);
    if (store) {
      engine::Db& dst = shards.shard(shards.ShardFor(c.args[1])).db(c.session.db);
      // Redis counts one change for the set stored, or for the destination an empty result deleted.
      c.changes = 0;
      if (StoreSet(dst, c.args[1], result, limits, now)) {
        NotifyKeyspace(c, kEventSet, StoreEvent(op), c.args[1]);
        c.changes = 1;
      } else if (dst.Erase(c.args[1], now)) {
        NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);  // an empty result deletes the destination
        c.changes = 1;
      }
    }
  });
  if (wrong_type) return c.reply.Error(errors::kWrongType);
  c.charge.Add(engine::RuOp::kRead, read_bytes);
  if (store) {
    size_t bytes = c.args[1].size();
    for (const std::string& m : result) bytes += m.size();
    ChargeWrite(c.charge, false, bytes);
    return c.reply.Integer(static_cast<int64_t>(result.size()));
  }
  c.reply.SetHeader(result.size());
  for (const std::string& m : result) c.reply.Bulk(m);
}

void CmdSInter(ConnCommand& c) { SetAlgebra(c, SetOp::kInter, false); }
void CmdSInterStore(ConnCommand& c) { SetAlgebra(c, SetOp::kInter, true); }
void CmdSUnion(ConnCommand& c) { SetAlgebra(c, SetOp::kUnion, false); }
void CmdSUnionStore(ConnCommand& c) { SetAlgebra(c, SetOp::kUnion, true); }
void CmdSDiff(ConnCommand& c) { SetAlgebra(c, SetOp::kDiff, false); }
void CmdSDiffStore(ConnCommand& c) { SetAlgebra(c, SetOp::kDiff, true); }

// SINTERCARD numkeys key... [LIMIT limit]
void CmdSInterCard(ConnCommand& c) {
  int64_t numkeys = 0;
  if (!protocol::ParseInt64(c.args[1], &numkeys) || numkeys <= 0)
    return c.reply.Error("ERR numkeys should be greater than 0");
  if (numkeys > static_cast<int64_t>(c.args.size()) - 2)
    return c.reply.Error("ERR Number of keys can't be greater than number of args");
  size_t end = 2 + static_cast<size_t>(numkeys);
  int64_t limit = 0;
  for (size_t i = end; i < c.args.size(); ++i) {
    if (protocol::EqualsIgnoreCase(AsCString(c.args[i]), "LIMIT") && i + 1 < c.args.size()) {
      if (!protocol::ParseInt64(c.args[++i], &limit) || limit < 0) return c.reply.Error("ERR LIMIT can't be negative");
    } else {
      return c.reply.Error(errors::kSyntax);
    }
  }
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  bool wrong_type = false;
  size_t count = 0, read_bytes = 0;
  shards.RunHolding(ShardsOf(c, 2, end), [&] {
    SourceSets sources = ReadSources(c, 2, end, now, Lookup::kRead);
    if (sources.wrong_type) {
      wrong_type = true;
      return;
    }
    for (Entry* s : sources.sets) read_bytes += SetBytes(s);
    if (std::find(sources.sets.begin(), sources.sets.end(), nullptr) != sources.sets.end()) return;
    count = Compute(SetOp::kInter, sources.sets, 0, static_cast<size_t>(limit)).size();
  });
  if (wrong_type) return c.reply.Error(errors::kWrongType);
  c.charge.Add(engine::RuOp::kRead, read_bytes);
  c.reply.Integer(static_cast<int64_t>(count));
}

// SMOVE source destination member
void CmdSMove(ConnCommand& c) {
  std::string_view src = c.args[1], dst = c.args[2], member = c.args[3];
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  int db = c.session.db;
  engine::CollectionLimits limits = c.server.collection_limits();
  enum class Outcome { kNone, kWrongType, kMoved } outcome = Outcome::kNone;
  c.changes = 0;
  shards.RunHolding(ShardsOf(c, 1, 3), [&] {
    engine::Shard& from_shard = shards.shard(shards.ShardFor(src));
    engine::Shard& to_shard = shards.shard(shards.ShardFor(dst));
    engine::Db& from = from_shard.db(db);
    engine::Db& to = to_shard.db(db);
    Entry* s = FindKey(from_shard, from, src, now, Lookup::kWrite);
    Entry* d = FindKey(to_shard, to, dst, now, Lookup::kWrite);
    if (!s) return;
    if (s->type() != ValueType::kSet || (d && d->type() != ValueType::kSet)) {
      outcome = Outcome::kWrongType;
      return;
    }
    if (src == dst) {
      if (set::Contains(s, member)) outcome = Outcome::kMoved;
      return;
    }
    if (!set::Remove(from, s, member)) return;
    from.Touch(src);
    NotifyKeyspace(c, kEventSet, "srem", src);
    if (set::Size(s) == 0) {
      from.Erase(src, now);
      NotifyKeyspace(c, kEventGeneric, "del", src);
    }
    // The source's removal may have moved entries of the destination's db when both share a shard.
    d = to.Find(dst, now);
    if (!d) d = set::Create(to, dst, member, now);
    // Redis counts, touches and reports the destination only when it did not hold the
    // member already.
    c.changes = 1;
    if (set::Add(to, d, member, limits)) {
      to.Touch(dst);
      NotifyKeyspace(c, kEventSet, "sadd", dst);
      c.changes = 2;
    }
    outcome = Outcome::kMoved;
  });
  if (outcome == Outcome::kWrongType) return c.reply.Error(errors::kWrongType);
  c.charge.Add(engine::RuOp::kRead, src.size() + member.size());
  if (outcome == Outcome::kMoved && src != dst) ChargeWrite(c.charge, false, dst.size() + member.size());
  c.reply.Integer(outcome == Outcome::kMoved ? 1 : 0);
}

}  // namespace

void RegisterSetCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast, kM = kDenyOom;
  table.Add({"sadd", -3, kW | kM | kF, 1, 1, 1, CmdSAdd, "set", "Adds one or more members to a set. Creates the key if it doesn't exist."});
  table.Add({"srem", -3, kW | kF, 1, 1, 1, CmdSRem, "set", "Removes one or more members from a set. Deletes the set if the last member was removed."});
  table.Add({"smembers", 2, kR, 1, 1, 1, CmdSMembers, "set", "Returns all members of a set."});
  table.Add({"sismember", 3, kR | kF, 1, 1, 1, CmdSIsMember, "set", "Determines whether a member belongs to a set."});
  table.Add({"smismember", -3, kR | kF, 1, 1, 1, CmdSMIsMember, "set", "Determines whether multiple members belong to a set."});
  table.Add({"scard", 2, kR | kF, 1, 1, 1, CmdSCard, "set", "Returns the number of members in a set."});
  table.Add({"spop", -2, kW | kF, 1, 1, 1, CmdSPop, "set", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped."});
  table.Add({"srandmember", -2, kR, 1, 1, 1, CmdSRandMember, "set", "Get one or multiple random members from a set"});
  table.Add({"sscan", -3, kR, 1, 1, 1, CmdSScan, "set", "Iterates over members of a set."});
  table.Add({"smove", 4, kW | kF, 1, 2, 1, CmdSMove, "set", "Moves a member from one set to another."});
  table.Add({"sinter", -2, kR, 1, -1, 1, CmdSInter, "set", "Returns the intersect of multiple sets."});
  table.Add({"sintercard", -3, kR, 0, 0, 0, CmdSInterCard, "set", "Returns the number of members of the intersect of multiple sets."});
  table.Add({"sinterstore", -3, kW | kM, 1, -1, 1, CmdSInterStore, "set", "Stores the intersect of multiple sets in a key."});
  table.Add({"sunion", -2, kR, 1, -1, 1, CmdSUnion, "set", "Returns the union of multiple sets."});
  table.Add({"sunionstore", -3, kW | kM, 1, -1, 1, CmdSUnionStore, "set", "Stores the union of multiple sets in a key."});
  table.Add({"sdiff", -2, kR, 1, -1, 1, CmdSDiff, "set", "Returns the difference of multiple sets."});
  table.Add({"sdiffstore", -3, kW | kM, 1, -1, 1, CmdSDiffStore, "set", "Stores the difference of multiple sets in a key."});
}

}  // namespace lapse::server
