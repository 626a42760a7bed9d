// HyperLogLog family: PFADD, PFCOUNT and PFMERGE over Redis's byte format
// (engine/hyperloglog.h), with Redis 7.0's replies and errors.
//
// An HLL is a string value, so every other string command sees it, and GET/SET carry it
// between lapse and Redis unchanged. A string that is not an HLL answers "WRONGTYPE Key is
// not a valid HyperLogLog string value."; a sparse code that does not add up answers
// "INVALIDOBJ Corrupted HLL object detected" when a command walks it.
//
// PFADD touches one key and runs on its shard; a dense HLL (fixed size) is edited in
// place, a sparse one is rebuilt and stored whole. PFCOUNT and PFMERGE name several keys
// and hold every shard involved for one atomic step, as MSET does: a merge never sees half
// of another client's write. PFCOUNT of one key writes the recomputed estimate back into the
// HLL's cache, as Redis does, which touches the key for WATCH.
//
// PFDEBUG (GETREG, DECODE, ENCODING, TODENSE) shows an HLL's registers and encoding, and
// PFSELFTEST checks the register access and the estimate's error up to 10 million elements,
// as Redis's do (test suites use both).
//
// Request units: PFADD is a member operation, charged its key and elements' bytes at the
// insert (new key) or replace rate, or at the read rate when no register moved. PFCOUNT
// reads whole HLLs; PFMERGE reads whole sources and writes the whole destination.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/hyperloglog.h"
#include "engine/shard.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/fanout.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
namespace hll = engine::hll;
using engine::Entry;
using engine::kNoDeadline;
using engine::ValueType;

namespace {

// Stores an HLL as a whole new value of `key`, keeping the old entry's deadline. Redis keeps
// HLLs as raw strings whatever their length.
void StoreHll(engine::Db& db, std::string_view key, std::string_view value, int64_t deadline, int64_t now_ms) {
  Entry* e = db.Put(key, value, ValueType::kString, deadline, now_ms);
  e->set_string_encoding(engine::StringEncoding::kRaw);
  engine::NoteAccess(e, now_ms);
}

// Sizes the elements of a PFADD for its charge.
size_t ElementBytes(Args args) {
  size_t n = 0;
  for (size_t i = 2; i < args.size(); ++i) n += args[i].size();
  return n;
}

void CmdPfAdd(ShardCommand& c) {
  std::string_view key = c.args[1];
  bool wrong = false;
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e != nullptr && !hll::LooksLikeHll(e->value())) return c.reply.Error(errors::kNotHll);
  size_t bytes = key.size() + ElementBytes(c.args);

  if (e != nullptr && hll::IsDense(e->value())) {
    // Fixed size: registers are raised in place.
    auto* registers = reinterpret_cast<uint8_t*>(e->mutable_value()) + hll::kHeaderSize;
    uint64_t updated = 0;
    for (size_t i = 2; i < c.args.size(); ++i) {
      hll::Pattern p = hll::PatternOf(c.args[i]);
      updated += hll::DenseSet(registers, p.index, p.count) ? 1 : 0;
    }
    c.changes = updated;
    e->set_string_encoding(engine::StringEncoding::kRaw);
    if (updated == 0) return c.charge.Add(engine::RuOp::kRead, bytes), c.reply.Integer(0);
    hll::InvalidateCache(e->mutable_value());
    c.db.Touch(key);
    NotifyKeyspace(c, kEventString, "pfadd", key);
    ChargeWrite(c.charge, true, bytes);
    return c.reply.Integer(1);
  }

  size_t max_bytes = c.server.hll_sparse_max_bytes();
  std::string work = e != nullptr ? std::string(e->value()) : hll::NewSparse();
  int64_t deadline = e != nullptr ? e->deadline() : kNoDeadline;
  // Redis counts a new key and each element that raised a register as one change each.
  uint64_t updated = e == nullptr ? 1 : 0;
  for (size_t i = 2; i < c.args.size(); ++i) {
    hll::SetResult r = hll::Add(&work, c.args[i], max_bytes);
    if (r == hll::SetResult::kCorrupt) {
      // Redis edits the value in place, element by element: what the elements before the
      // corrupt spot changed stays changed.
      if (e == nullptr || work != e->value()) StoreHll(c.db, key, work, deadline, c.now_ms);
      else e->set_string_encoding(engine::StringEncoding::kRaw);
      return c.reply.Error(errors::kCorruptHll);
    }
    if (r == hll::SetResult::kChanged) ++updated;
  }
  c.changes = updated;
  if (updated == 0) {
    e->set_string_encoding(engine::StringEncoding::kRaw);
    c.charge.Add(engine::RuOp::kRead, bytes);
    return c.reply.Integer(0);
  }
  hll::InvalidateCache(work.data());
  ChargeWrite(c.charge, e != nullptr, bytes);
  StoreHll(c.db, key, work, deadline, c.now_ms);
  NotifyKeyspace(c, kEventString, "pfadd", key);
  c.reply.Integer(1);
}

// What one key of a PFCOUNT or PFMERGE holds, checked as Redis checks it.
enum class HllLookup { kMissing, kFound, kWrongType, kNotHll };

HllLookup LookupHll(engine::Shard& shard, engine::Db& db, std::string_view key, int64_t now_ms, Lookup kind,
                    Entry** out) {
  Entry* e = FindKey(shard, db, key, now_ms, kind);
  *out = e;
  if (e == nullptr) return HllLookup::kMissing;
  if (e->type() != ValueType::kString) return HllLookup::kWrongType;
  engine::NoteAccess(e, now_ms);
  return hll::LooksLikeHll(e->value()) ? HllLookup::kFound : HllLookup::kNotHll;
}

// The error of a failed lookup, empty when the key may be used.
std::string_view LookupError(HllLookup found) {
  switch (found) {
    case HllLookup::kWrongType: return errors::kWrongType;
    case HllLookup::kNotHll: return errors::kNotHll;
    default: return {};
  }
}

// PFCOUNT of one key: the cached estimate if valid, else a fresh one written back.
void CountOne(ConnCommand& c, int db, int64_t now) {
  ShardSet& shards = c.server.shards();
  std::string_view key = c.args[1];
  uint32_t id = shards.ShardFor(key);
  std::string_view error;
  uint64_t card = 0;
  shards.RunHolding(std::span<const uint32_t>(&id, 1), [&] {
    engine::Shard& shard = shards.shard(id);
    engine::Db& d = shard.db(db);
    Entry* e = nullptr;
    HllLookup found = LookupHll(shard, d, key, now, Lookup::kRead, &e);
    c.charge.Add(engine::RuOp::kRead, key.size() + (e ? e->value().size() : 0));
    if (found == HllLookup::kMissing) return;
    if (!(error = LookupError(found)).empty()) return;
    e->set_string_encoding(engine::StringEncoding::kRaw);
    if (hll::CacheValid(e->value())) {
      card = hll::CachedCardinality(e->value());
      return;
    }
    std::optional<uint64_t> estimate = hll::Estimate(e->value());
    if (!estimate) {
      error = errors::kCorruptHll;
      return;
    }
    card = *estimate;
    hll::StoreCachedCardinality(e->mutable_value(), card);
    c.changes = 1;  // Redis counts the cache it wrote back, though PFCOUNT is a read
    d.Touch(key);
    // Redis signals the change (no keyspace event): tracking clients drop the old bytes.
    c.server.tracking().KeyModified(key);
  });
  if (!error.empty()) return c.reply.Error(error);
  c.reply.Integer(static_cast<int64_t>(card));
}

void CmdPfCount(ConnCommand& c) {
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  if (c.args.size() == 2) return CountOne(c, db, now);

  // Several keys: the estimate of their union, from merged registers; nothing is written.
  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args, 1, 1);
  hll::RawRegisters max{};
  std::string_view error;
  shards.RunHolding(groups.shards, [&] {
    for (size_t i = 1; i < c.args.size(); ++i) {
      engine::Shard& shard = shards.shard(shards.ShardFor(c.args[i]));
      Entry* e = nullptr;
      HllLookup found = LookupHll(shard, shard.db(db), c.args[i], now, Lookup::kRead, &e);
      c.charge.Add(engine::RuOp::kRead, c.args[i].size() + (e ? e->value().size() : 0));
      if (found == HllLookup::kMissing) continue;
      if (!(error = LookupError(found)).empty()) return;
      if (!hll::MergeInto(e->value(), &max)) {
        error = errors::kCorruptHll;
        return;
      }
    }
  });
  if (!error.empty()) return c.reply.Error(error);
  c.reply.Integer(static_cast<int64_t>(hll::EstimateRaw(max)));
}

// PFMERGE dest src...: dest's registers become the maximum over dest and every source. The
// destination keeps its encoding unless a dense input makes it dense; registers are raised
// one by one in index order, so the bytes come out as Redis's.
void CmdPfMerge(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args, 1, 1);
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  size_t max_bytes = c.server.hll_sparse_max_bytes();
  std::string_view key = c.args[1];
  std::string_view error;
  shards.RunHolding(groups.shards, [&] {
    hll::RawRegisters max{};
    bool use_dense = false;
    for (size_t i = 1; i < c.args.size(); ++i) {
      engine::Shard& shard = shards.shard(shards.ShardFor(c.args[i]));
      Entry* e = nullptr;
      HllLookup found = LookupHll(shard, shard.db(db), c.args[i], now, Lookup::kRead, &e);
      c.charge.Add(engine::RuOp::kRead, c.args[i].size() + (e ? e->value().size() : 0));
      if (found == HllLookup::kMissing) continue;
      if (!(error = LookupError(found)).empty()) return;
      if (hll::IsDense(e->value())) use_dense = true;
      if (!hll::MergeInto(e->value(), &max)) {
        error = errors::kCorruptHll;
        return;
      }
    }
    engine::Shard& shard = shards.shard(shards.ShardFor(key));
    engine::Db& d = shard.db(db);
    Entry* dest = FindKey(shard, d, key, now, Lookup::kWrite);
    std::string work = dest != nullptr ? std::string(dest->value()) : hll::NewSparse();
    int64_t deadline = dest != nullptr ? dest->deadline() : kNoDeadline;
    if (use_dense && !hll::SparseToDense(&work)) {
      error = errors::kCorruptHll;  // unreachable: the destination was merged above
      return;
    }
    for (uint32_t r = 0; r < hll::kRegisters; ++r) {
      if (max[r] != 0) hll::SetRegister(&work, r, max[r], max_bytes);
    }
    hll::InvalidateCache(work.data());
    c.charge.Add(dest != nullptr ? engine::RuOp::kReplace : engine::RuOp::kInsert, key.size() + work.size());
    StoreHll(d, key, work, deadline, now);
    // Redis reports PFMERGE as `pfadd`, whether or not a register changed.
    NotifyKeyspace(c, kEventString, "pfadd", key);
  });
  if (!error.empty()) return c.reply.Error(error);
  c.reply.Ok();
}

// PFDEBUG DECODE's text of a sparse code: "z:<len>" (ZERO), "Z:<len>" (XZERO) and
// "v:<value>,<len>" (VAL), space separated. Like Redis's, it walks to the end of the string
// without checking the spans (an XZERO cut short reads its missing byte as 0).
std::string DecodeSparse(std::string_view hll) {
  std::string out;
  for (size_t at = hll::kHeaderSize; at < hll.size();) {
    auto b = static_cast<uint8_t>(hll[at]);
    if (!out.empty()) out += ' ';
    if ((b & 0xc0) == 0) {
      out += "z:" + std::to_string((b & 0x3f) + 1);
      at += 1;
    } else if ((b & 0xc0) == 0x40) {
      uint8_t low = at + 1 < hll.size() ? static_cast<uint8_t>(hll[at + 1]) : 0;
      out += "Z:" + std::to_string((((b & 0x3f) << 8) | low) + 1);
      at += 2;
    } else {
      out += "v:" + std::to_string(((b >> 2) & 0x1f) + 1) + "," + std::to_string((b & 3) + 1);
      at += 1;
    }
  }
  return out;
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. GETREG and TODENSE convert a sparse HLL to
// dense for good, which Redis counts as a change.
void CmdPfDebug(ShardCommand& c) {
  std::string_view sub = protocol::AsCString(c.args[1]);
  std::string_view key = c.args[2];
  c.changes = 0;  // only a conversion to dense counts
  bool wrong = false;
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Error("ERR The specified key does not exist");
  if (!hll::LooksLikeHll(e->value())) return c.reply.Error(errors::kNotHll);
  ChargeRead(c.charge, key, e);
  // Converts to dense; false (and the error sent) when the sparse code does not add up.
  auto make_dense = [&]() {
    std::string work(e->value());
    if (!hll::SparseToDense(&work)) return c.reply.Error(errors::kCorruptHll), false;
    StoreHll(c.db, key, work, e->deadline(), c.now_ms);
    c.changes = 1;
    return true;
  };
  if (protocol::EqualsIgnoreCase(sub, "GETREG")) {
    if (!hll::IsDense(e->value())) {
      if (!make_dense()) return;
      e = FindKey(c, key, Lookup::kWrite);
    }
    const auto* registers = reinterpret_cast<const uint8_t*>(e->value().data()) + hll::kHeaderSize;
    c.reply.ArrayHeader(hll::kRegisters);
    for (uint32_t i = 0; i < hll::kRegisters; ++i) c.reply.Integer(hll::DenseGet(registers, i));
  } else if (protocol::EqualsIgnoreCase(sub, "DECODE")) {
    if (hll::IsDense(e->value())) return c.reply.Error("ERR HLL encoding is not sparse");
    c.reply.Bulk(DecodeSparse(e->value()));
  } else if (protocol::EqualsIgnoreCase(sub, "ENCODING")) {
    c.reply.SimpleString(hll::IsDense(e->value()) ? "dense" : "sparse");
  } else if (protocol::EqualsIgnoreCase(sub, "TODENSE")) {
    bool converted = !hll::IsDense(e->value());
    if (converted && !make_dense()) return;
    c.reply.Integer(converted ? 1 : 0);
  } else {
    c.reply.Error("ERR Unknown PFDEBUG subcommand '" + std::string(sub) + "'");
  }
}

// PFSELFTEST, Redis's two checks: every register of a dense HLL keeps the value set in it
// without disturbing its neighbours (1000 rounds of random values), and the estimate of 1 to
// 10 million distinct elements stays within 6 standard errors at each power of ten, with a
// sparse HLL used while small and agreeing with a dense one.
void CmdPfSelfTest(ConnCommand& c) {
  std::string dense = hll::NewSparse();
  hll::SparseToDense(&dense);
  auto* registers = reinterpret_cast<uint8_t*>(dense.data()) + hll::kHeaderSize;
  std::vector<uint8_t> expected(hll::kRegisters);
  for (int round = 0; round < 1000; ++round) {
    std::memset(registers, 0, hll::kRegisterBytes);
    for (uint32_t i = 0; i < hll::kRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(NextRandom() & 63);
      hll::DenseSet(registers, i, expected[i]);
    }
    for (uint32_t i = 0; i < hll::kRegisters; ++i) {
      if (uint8_t got = hll::DenseGet(registers, i); got != expected[i]) {
        return c.reply.Error("TESTFAILED Register " + std::to_string(i) + " should be " +
                             std::to_string(expected[i]) + " but is " + std::to_string(got));
      }
    }
  }

  std::memset(registers, 0, hll::kRegisterBytes);
  std::string sparse = hll::NewSparse();
  size_t sparse_max = c.server.hll_sparse_max_bytes();
  double relative_error = 1.04 / std::sqrt(static_cast<double>(hll::kRegisters));
  uint64_t seed = NextRandom();
  int64_t checkpoint = 1;
  for (int64_t j = 1; j <= 10'000'000; ++j) {
    uint64_t element = static_cast<uint64_t>(j) ^ seed;
    std::string_view bytes(reinterpret_cast<const char*>(&element), sizeof element);
    hll::Add(&dense, bytes, sparse_max);
    hll::Add(&sparse, bytes, sparse_max);
    if (j != checkpoint) continue;
    if (static_cast<size_t>(j) < sparse_max / 2 && hll::IsDense(sparse)) {
      return c.reply.Error("TESTFAILED sparse encoding not used");
    }
    uint64_t estimate = hll::Estimate(dense).value_or(0);
    if (estimate != hll::Estimate(sparse).value_or(0)) return c.reply.Error("TESTFAILED dense/sparse disagree");
    int64_t error = std::llabs(checkpoint - static_cast<int64_t>(estimate));
    // At 10 a collision is likely now and then: Redis allows 1 there.
    auto allowed = j == 10 ? 1 : static_cast<int64_t>(std::ceil(relative_error * 6 * static_cast<double>(checkpoint)));
    if (error > allowed) {
      return c.reply.Error("TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
                           " abserr:" + std::to_string(error));
    }
    checkpoint *= 10;
  }
  c.reply.Ok();
}

}  // namespace

void RegisterHllCommands(CommandTable& table) {
  table.Add({"pfadd", -2, kWrite | kDenyOom | kFast, 1, 1, 1, CmdPfAdd, "hyperloglog",
             "Adds the specified elements to the specified HyperLogLog."});
  // Read-only as Redis 7.0 flags it, although one key's cached estimate may be written back.
  table.Add({"pfcount", -2, kReadOnly, 1, -1, 1, CmdPfCount, "hyperloglog",
             "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s)."});
  table.Add({"pfmerge", -2, kWrite | kDenyOom, 1, -1, 1, CmdPfMerge, "hyperloglog",
             "Merge N different HyperLogLogs into a single one."});
  table.Add({"pfdebug", 3, kWrite | kDenyOom | kAdmin, 2, 2, 1, CmdPfDebug, "hyperloglog",
             "Internal commands for debugging HyperLogLog values."});
  table.Add({"pfselftest", 1, kAdmin, 0, 0, 0, CmdPfSelfTest, "hyperloglog",
             "An internal command for testing HyperLogLog values."});
}

}  // namespace lapse::server
