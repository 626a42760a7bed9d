// File: server/key_util.h
//
// Small pieces shared by the string and key families: typed lookup that answers WRONGTYPE
// itself, deadline arithmetic with Redis's overflow rules, and TTL replies.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>

#include "engine/access.h"
#include "engine/db.h"
#include "engine/entry.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"

namespace lapse::server {

// The shards a two-key command holds (RENAME, COPY, LMOVE): one, or both in a fixed order.
struct ShardPair {
  uint32_t ids[2];
  size_t count;
  ShardPair(uint32_t a, uint32_t b) : ids{a, b}, count(a == b ? 1 : 2) {}
  std::span<const uint32_t> span() const { return {ids, count}; }
};

// Whether a lookup serves a read, counted in INFO keyspace_hits / keyspace_misses as Redis's
// lookupKeyRead counts (and a miss reported as `keymiss`), or a write, not counted
// (lookupKeyWrite). kReadQuiet counts but reports no miss (Redis's LOOKUP_NONOTIFY: OBJECT).
enum class Lookup { kRead, kWrite, kReadQuiet };

// The live entry for `key` in `db` of `shard`, nullptr if absent.
inline engine::Entry* FindKey(engine::Shard& shard, engine::Db& db, std::string_view key, int64_t now_ms, Lookup kind) {
  uint64_t hash = engine::HashKey(key);
  engine::Entry* e = db.Find(key, hash, now_ms);
  if (kind != Lookup::kWrite) {
    shard.CountReadLookup(e != nullptr);
    db.CountRead(hash);
    // Redis's lookupKeyRead sends `keymiss` where it counts a miss.
    if (e == nullptr && kind == Lookup::kRead) db.ReportMiss(key);
  }
  return e;
}
inline engine::Entry* FindKey(ShardCommand& c, std::string_view key, Lookup kind) {
  return FindKey(c.shard, c.db, key, c.now_ms, kind);
}

// The live entry for `key` if it holds `type`, nullptr if absent. Sets *wrong_type (and
// replies WRONGTYPE) when the key holds another type.
inline engine::Entry* FindTyped(ShardCommand& c, std::string_view key, engine::ValueType type, bool* wrong_type,
                                Lookup kind) {
  engine::Entry* e = FindKey(c, key, kind);
  *wrong_type = false;
  if (e != nullptr && e->type() != type) {
    *wrong_type = true;
    c.reply.Error(protocol::errors::kWrongType);
    return nullptr;
  }
  if (e != nullptr) engine::NoteAccess(e, c.now_ms);
  return e;
}

inline engine::Entry* FindString(ShardCommand& c, std::string_view key, bool* wrong_type, Lookup kind) {
  return FindTyped(c, key, engine::ValueType::kString, wrong_type, kind);
}

// A fast per-thread pseudo-random sequence (SPOP, HRANDFIELD, ...), seeded once per thread.
// Redis's LRU clock (INFO lru_clock, DEBUG OBJECT's lru): seconds, kept to 24 bits.
inline constexpr uint64_t kLruClockMax = (uint64_t{1} << 24) - 1;
inline uint64_t LruClock(int64_t now_ms) { return static_cast<uint64_t>(now_ms / 1000) & kLruClockMax; }

// TYPE's name for a value type (SCAN TYPE takes the same names).
const char* TypeName(engine::ValueType t);
// OBJECT ENCODING's name for the value (DEBUG OBJECT shows it too).
const char* ObjectEncodingName(const engine::Entry& e);
// OBJECT REFCOUNT's reply (DEBUG OBJECT shows it too): 1, or Redis's INT_MAX for a value it
// would share.
int64_t ObjectRefcount(const Server& server, const engine::Entry& e);

inline uint64_t NextRandom() {
  thread_local uint64_t state = std::random_device{}() * 0x9E3779B97F4A7C15ull + 1;
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Redis's ld2string in human mode: %.17Lf with trailing zeros (and a bare '.') removed.
std::string FormatLongDouble(long double v);

using protocol::AsCString;

// Charges a point read of a key: 1 RU per started KiB of key and value, at least 1.
inline void ChargeRead(RequestCharge& charge, std::string_view key, const engine::Entry* e) {
  charge.Add(engine::RuOp::kRead, key.size() + (e ? e->value().size() : 0));
}
// Charges a write: an insert, or a replace when a live value was overwritten.
inline void ChargeWrite(RequestCharge& charge, bool replaced, size_t bytes) {
  charge.Add(replaced ? engine::RuOp::kReplace : engine::RuOp::kInsert, bytes);
}

enum class TimeUnit { kSeconds, kMilliseconds };

// Converts a relative (or, with `absolute`, Unix) time argument into an absolute deadline in
// ms, as Redis does: the amount must be > 0 for relative SET/GETEX-style options when
// `require_positive`, and neither the unit conversion nor adding `now` may overflow.
// Returns nullopt on overflow or a non-positive amount where one is required.
inline std::optional<int64_t> ToDeadline(int64_t amount, TimeUnit unit, bool absolute, int64_t now_ms,
                                         bool require_positive) {
  if (require_positive && amount <= 0) return std::nullopt;
  int64_t ms = amount;
  if (unit == TimeUnit::kSeconds) {
    if (amount > std::numeric_limits<int64_t>::max() / 1000 || amount < std::numeric_limits<int64_t>::min() / 1000)
      return std::nullopt;
    ms = amount * 1000;
  }
  if (absolute) return ms;
  if (ms > 0 && now_ms > std::numeric_limits<int64_t>::max() - ms) return std::nullopt;
  if (ms < 0 && now_ms < std::numeric_limits<int64_t>::min() - ms) return std::nullopt;
  return now_ms + ms;
}

}  // namespace lapse::server

namespace lapse::server {

// Reads a database index argument as SELECT, MOVE and COPY ... DB read it in Redis: an
// integer, then one that fits a C int, then one below `databases`. Returns the error to reply
// with, or nullopt with *index set.
inline std::optional<std::string_view> ParseDbIndex(std::string_view arg, int databases, int* index) {
  int64_t n = 0;
  if (!protocol::ParseInt64(arg, &n)) return protocol::errors::kNotInteger;
  if (n < INT32_MIN || n > INT32_MAX) return protocol::errors::kIntOutOfRange;
  if (n < 0 || n >= databases) return protocol::errors::kDbIndexOutOfRange;
  *index = static_cast<int>(n);
  return std::nullopt;
}

// Parses a cursor: decimal digits that fit 64 bits (ISCAN).
inline bool ParseCursor(std::string_view text, uint64_t* cursor) {
  if (text.empty()) return false;
  unsigned __int128 v = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<unsigned>(ch - '0');
    if (v > UINT64_MAX) return false;
  }
  *cursor = static_cast<uint64_t>(v);
  return true;
}

// Parses SCAN's cursor as Redis does, with strtoul: an optional sign before the digits, a
// minus wrapping around ("-1" is 2^64-1), and an empty text read as 0.
inline bool ParseScanCursor(std::string_view text, uint64_t* cursor) {
  if (text.empty()) return *cursor = 0, true;
  bool negative = text[0] == '-';
  if (text[0] == '+' || text[0] == '-') text.remove_prefix(1);
  uint64_t v = 0;
  if (!ParseCursor(text, &v)) return false;
  *cursor = negative ? uint64_t{0} - v : v;
  return true;
}

}  // namespace lapse::server

namespace lapse::server {

// SCAN and ISCAN cursors walk the shards in turn: the shard index sits in the low bits and
// that shard's table cursor above it. Encode gives 0 once the last shard is done.
struct ShardCursor {
  uint32_t shard = 0;
  uint64_t table = 0;

  static uint32_t Bits(size_t shards) {
    uint32_t bits = 0;
    while ((size_t{1} << bits) < shards) ++bits;
    return bits;
  }
  static ShardCursor Decode(uint64_t cursor, size_t shards) {
    uint32_t bits = Bits(shards);
    return {static_cast<uint32_t>(cursor & ((uint64_t{1} << bits) - 1)), cursor >> bits};
  }
  uint64_t Encode(size_t shards) const { return shard < shards ? (table << Bits(shards)) | shard : 0; }
};

// Buckets one SCAN step may visit: ten per requested entry, as Redis bounds it, saturated so
// that a huge COUNT cannot overflow.
inline int64_t ScanRoundLimit(int64_t count) { return count > INT64_MAX / 10 ? INT64_MAX : count * 10; }

}  // namespace lapse::server

namespace lapse::server {

// HSCAN/SSCAN's [MATCH pattern] [COUNT count] from args[first] on; replies Redis's error and
// returns false on bad input.
struct CollectionScanOptions {
  std::optional<std::string_view> pattern;
  int64_t count = 10;
};
inline bool ParseCollectionScanOptions(Args args, size_t first, CollectionScanOptions* out, protocol::ReplyWriter& reply) {
  for (size_t i = first; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return reply.Error(protocol::errors::kSyntax), false;
    std::string_view opt = AsCString(args[i]);
    if (protocol::EqualsIgnoreCase(opt, "MATCH")) {
      out->pattern = args[i + 1];
    } else if (protocol::EqualsIgnoreCase(opt, "COUNT")) {
      if (!protocol::ParseInt64(args[i + 1], &out->count)) return reply.Error(protocol::errors::kNotInteger), false;
      if (out->count < 1) return reply.Error(protocol::errors::kSyntax), false;
    } else {
      return reply.Error(protocol::errors::kSyntax), false;
    }
  }
  return true;
}

}  // namespace lapse::server
