// Hash family: HSET, HGET, HGETALL, HINCRBY, HRANDFIELD, HSCAN, ...
//
// Every command touches one key and runs as a ShardHandler on its shard. The layouts and
// their conversions live in engine/collection.h; this file parses, checks types and replies
// as Redis 7.0 does. A hash whose last field is deleted is deleted with it.
//
// Request units: a read of the whole hash (HGETALL, HKEYS, HVALS) is charged for its whole
// serialized size; a field operation for the bytes of the fields it touches (and their
// values), reads at the read rate and writes at the insert or replace rate.
#include <cmath>
#include <string>
#include <vector>

#include "engine/collection.h"
#include "engine/glob.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
namespace hash = engine::hash;

namespace {

// A negative HRANDFIELD count repeats fields; past this many the reply could not be sent.
constexpr int64_t kMaxRepeatedPicks = 100'000'000;

Entry* FindHash(ShardCommand& c, bool* wrong, Lookup kind) { return FindTyped(c, c.args[1], ValueType::kHash, wrong, kind); }

// The hash at args[1] for a write, created empty when absent; nullptr after WRONGTYPE.
Entry* FindOrCreateHash(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kWrite);
  if (wrong) return nullptr;
  return e ? e : hash::Create(c.db, c.args[1], c.now_ms);
}

// After a write that may have removed the last field: Redis deletes the key (`del`, after
// the command's own event).
void DeleteIfEmpty(ShardCommand& c, Entry* e) {
  if (hash::Size(e) == 0) {
    c.db.Erase(c.args[1], c.now_ms);
    NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);
  }
}

size_t HashBytes(std::string_view key, const Entry* e) {
  size_t bytes = key.size();
  if (e) hash::ForEach(e, [&](std::string_view f, std::string_view v) { bytes += f.size() + v.size(); });
  return bytes;
}

// ---- Writes ----

void HSetGeneric(ShardCommand& c, const char* name, bool reply_ok) {
  if (c.args.size() % 2 != 0) return c.reply.Error(errors::WrongArity(name));
  Entry* e = FindOrCreateHash(c);
  if (!e) return;
  engine::CollectionLimits limits = c.server.collection_limits();
  // Redis converts before any field is set when any argument is too long for a listpack.
  for (size_t i = 2; i < c.args.size(); ++i) {
    if (c.args[i].size() > limits.hash_max_listpack_value) {
      hash::ConvertForLengths(c.db, e, {c.args[i]}, limits);
      break;
    }
  }
  int64_t created = 0;
  for (size_t i = 2; i < c.args.size(); i += 2) {
    bool added = hash::Set(c.db, e, c.args[i], c.args[i + 1], limits, false);
    created += added;
    ChargeWrite(c.charge, !added, c.args[i].size() + c.args[i + 1].size());
  }
  c.db.Touch(c.args[1]);
  // Reported even when every field already held its value.
  NotifyKeyspace(c, kEventHash, "hset", c.args[1]);
  reply_ok ? c.reply.Ok() : c.reply.Integer(created);
}

void CmdHSet(ShardCommand& c) { HSetGeneric(c, "hset", false); }
void CmdHMSet(ShardCommand& c) { HSetGeneric(c, "hmset", true); }

void CmdHSetNx(ShardCommand& c) {
  Entry* e = FindOrCreateHash(c);
  if (!e) return;
  engine::CollectionLimits limits = c.server.collection_limits();
  hash::ConvertForLengths(c.db, e, {c.args[2], c.args[3]}, limits);
  if (hash::Get(e, c.args[2])) {
    c.charge.Add(engine::RuOp::kRead, c.args[2].size());
    return c.reply.Integer(0);
  }
  hash::Set(c.db, e, c.args[2], c.args[3], limits, false);
  ChargeWrite(c.charge, false, c.args[2].size() + c.args[3].size());
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventHash, "hset", c.args[1]);
  c.reply.Integer(1);
}

void CmdHDel(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  int64_t deleted = 0;
  if (e) {
    for (size_t i = 2; i < c.args.size(); ++i) {
      if (!hash::Delete(c.db, e, c.args[i])) continue;
      ++deleted;
      c.charge.Add(engine::RuOp::kDelete, c.args[i].size());
      if (hash::Size(e) == 0) break;
    }
    if (deleted > 0) {
      c.db.Touch(c.args[1]);
      NotifyKeyspace(c, kEventHash, "hdel", c.args[1]);
      DeleteIfEmpty(c, e);
    }
  }
  if (deleted == 0) c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(deleted);
}

void CmdHIncrBy(ShardCommand& c) {
  int64_t incr = 0;
  if (!protocol::ParseInt64(c.args[3], &incr)) return c.reply.Error(errors::kNotInteger);
  Entry* e = FindOrCreateHash(c);
  if (!e) return;
  // A long field moves the hash to a table only if the increment succeeds (hash::Set), as
  // Redis's hashTypeSet: a refused HINCRBY changes nothing, its encoding included.
  engine::CollectionLimits limits = c.server.collection_limits();
  int64_t value = 0;
  auto old = hash::Get(e, c.args[2]);
  auto fail = [&](std::string_view error) {
    c.reply.Error(error);
    DeleteIfEmpty(c, e);  // a hash created for this command and left empty
  };
  if (old && !engine::ParseCanonicalInt(*old, &value)) return fail("ERR hash value is not an integer");
  if ((incr < 0 && value < 0 && incr < INT64_MIN - value) || (incr > 0 && value > 0 && incr > INT64_MAX - value))
    return fail(errors::kOverflow);
  value += incr;
  std::string text = std::to_string(value);
  ChargeWrite(c.charge, old.has_value(), c.args[2].size() + text.size());
  hash::Set(c.db, e, c.args[2], text, limits, true, /*keep_ttl=*/true);
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventHash, "hincrby", c.args[1]);
  c.reply.Integer(value);
}

void CmdHIncrByFloat(ShardCommand& c) {
  long double incr = 0;
  if (!protocol::ParseLongDouble(c.args[3], &incr)) return c.reply.Error(errors::kNotFloat);
  if (std::isnan(incr) || std::isinf(incr)) return c.reply.Error("ERR value is NaN or Infinity");
  Entry* e = FindOrCreateHash(c);
  if (!e) return;
  // A long field moves the hash to a table only if the increment succeeds (hash::Set), as
  // Redis's hashTypeSet: a refused HINCRBY changes nothing, its encoding included.
  engine::CollectionLimits limits = c.server.collection_limits();
  long double value = 0;
  auto old = hash::Get(e, c.args[2]);
  auto fail = [&](std::string_view error) {
    c.reply.Error(error);
    DeleteIfEmpty(c, e);
  };
  if (old && !protocol::ParseLongDouble(*old, &value)) return fail("ERR hash value is not a float");
  value += incr;
  if (std::isnan(value) || std::isinf(value)) return fail(errors::kNanOrInfinity);
  std::string text = FormatLongDouble(value);
  ChargeWrite(c.charge, old.has_value(), c.args[2].size() + text.size());
  hash::Set(c.db, e, c.args[2], text, limits, true, /*keep_ttl=*/true);
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventHash, "hincrbyfloat", c.args[1]);
  c.reply.Bulk(text);
}

// ---- Reads ----

void CmdHGet(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  auto v = e ? hash::Get(e, c.args[2]) : std::nullopt;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size() + (v ? v->size() : 0));
  v ? c.reply.Bulk(*v) : c.reply.Null();
}

void CmdHMGet(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t bytes = c.args[1].size();
  c.reply.ArrayHeader(c.args.size() - 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    auto v = e ? hash::Get(e, c.args[i]) : std::nullopt;
    bytes += c.args[i].size() + (v ? v->size() : 0);
    v ? c.reply.Bulk(*v) : c.reply.Null();
  }
  c.charge.Add(engine::RuOp::kRead, bytes);
}

void CmdHLen(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(e ? static_cast<int64_t>(hash::Size(e)) : 0);
}

void CmdHStrLen(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  auto v = e ? hash::Get(e, c.args[2]) : std::nullopt;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size());
  c.reply.Integer(v ? static_cast<int64_t>(v->size()) : 0);
}

void CmdHExists(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size());
  c.reply.Integer(e && hash::Get(e, c.args[2]) ? 1 : 0);
}

enum class Whole { kFieldsAndValues, kFields, kValues };

void ReplyWhole(ShardCommand& c, Whole what) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, HashBytes(c.args[1], e));
  size_t n = e ? hash::Size(e) : 0;
  what == Whole::kFieldsAndValues ? c.reply.MapHeader(n) : c.reply.ArrayHeader(n);
  if (!e) return;
  hash::ForEach(e, [&](std::string_view f, std::string_view v) {
    if (what != Whole::kValues) c.reply.Bulk(f);
    if (what != Whole::kFields) c.reply.Bulk(v);
  });
}

void CmdHGetAll(ShardCommand& c) { ReplyWhole(c, Whole::kFieldsAndValues); }
void CmdHKeys(ShardCommand& c) { ReplyWhole(c, Whole::kFields); }
void CmdHVals(ShardCommand& c) { ReplyWhole(c, Whole::kValues); }

// HRANDFIELD key [count [WITHVALUES]], with Redis's cases: a negative count may repeat
// fields; a count at least the size answers the whole hash in its order; a smaller one
// answers distinct random fields.
void CmdHRandField(ShardCommand& c) {
  int64_t count = 0;
  bool with_count = c.args.size() >= 3, with_values = false;
  if (with_count) {
    // Redis's order: the count's range, then the syntax, then WITHVALUES's tighter range.
    if (!protocol::ParseInt64(c.args[2], &count)) return c.reply.Error(errors::kNotInteger);
    if (count < -INT64_MAX)
      return c.reply.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    if (c.args.size() > 4 || (c.args.size() == 4 && !protocol::EqualsIgnoreCase(AsCString(c.args[3]), "WITHVALUES")))
      return c.reply.Error(errors::kSyntax);
    with_values = c.args.size() == 4;
    if (with_values && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) return c.reply.Error("ERR value is out of range");
    // Redis would start writing billions of repeated fields and lose the connection.
    if (count < -kMaxRepeatedPicks) return c.reply.Error("ERR count is too large for one reply");
  }
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (!with_count) {
    c.charge.Add(engine::RuOp::kRead, c.args[1].size());
    if (!e) return c.reply.Null();
    std::string buffer;
    auto [f, v] = hash::Random(e, NextRandom(), &buffer);
    return c.reply.Bulk(f);
  }
  if (!e || count == 0) return c.reply.ArrayHeader(0);
  size_t size = hash::Size(e);
  bool resp3 = c.reply.version() == protocol::RespVersion::kResp3;
  size_t bytes = c.args[1].size();
  auto reply_pair = [&](std::string_view f, std::string_view v) {
    if (with_values && resp3) c.reply.ArrayHeader(2);
    c.reply.Bulk(f);
    if (with_values) c.reply.Bulk(v);
    bytes += f.size() + (with_values ? v.size() : 0);
  };
  auto header = [&](size_t n) { c.reply.ArrayHeader(with_values && !resp3 ? 2 * n : n); };
  if (count < 0 && !e->owns_table()) {
    // A packed hash is walked once, not once a pick.
    std::vector<std::pair<std::string, std::string_view>> all;
    hash::ForEach(e, [&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
    auto n = static_cast<size_t>(-count);
    header(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& [f, v] = all[NextRandom() % all.size()];
      reply_pair(f, v);
    }
  } else if (count < 0) {
    auto n = static_cast<size_t>(-count);
    std::string buffer;
    header(n);
    for (size_t i = 0; i < n; ++i) {
      auto [f, v] = hash::Random(e, NextRandom(), &buffer);
      reply_pair(f, v);
    }
  } else if (static_cast<size_t>(count) >= size) {
    header(size);
    hash::ForEach(e, reply_pair);
  } else {
    // Distinct fields: a partial Fisher-Yates shuffle of the fields' positions.
    std::vector<std::pair<std::string, std::string_view>> all;
    all.reserve(size);
    hash::ForEach(e, [&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
    auto n = static_cast<size_t>(count);
    header(n);
    for (size_t i = 0; i < n; ++i) {
      std::swap(all[i], all[i + NextRandom() % (all.size() - i)]);
      reply_pair(all[i].first, all[i].second);
    }
  }
  c.charge.Add(engine::RuOp::kRead, bytes);
}

void CmdHScan(ShardCommand& c) {
  uint64_t cursor = 0;
  if (!ParseScanCursor(c.args[2], &cursor)) return c.reply.Error("ERR invalid cursor");
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  CollectionScanOptions options;
  if (!e) {
    c.charge.Add(engine::RuOp::kQuery, 0, 0);
    c.reply.ArrayHeader(2);
    c.reply.Bulk("0");
    return c.reply.ArrayHeader(0);
  }
  if (!ParseCollectionScanOptions(c.args, 3, &options, c.reply)) return;
  std::vector<std::pair<std::string, std::string_view>> found;
  size_t visited = 0, bytes = 0;
  uint64_t next = engine::ScanCollection(e, cursor, static_cast<size_t>(options.count),
                                         [&](std::string_view f, std::string_view v) {
                                           ++visited;
                                           if (options.pattern && !engine::GlobMatch(*options.pattern, f)) return;
                                           found.emplace_back(f, v);
                                           bytes += f.size() + v.size();
                                         });
  c.charge.Add(engine::RuOp::kQuery, bytes, visited);
  c.reply.ArrayHeader(2);
  c.reply.Bulk(std::to_string(next));
  c.reply.ArrayHeader(2 * found.size());
  for (auto& [f, v] : found) {
    c.reply.Bulk(f);
    c.reply.Bulk(v);
  }
}

// ---- Field TTLs: Redis 7.4's HEXPIRE family ----

// Redis 7.4 keeps field deadlines below 2^48 ms.
constexpr int64_t kMaxFieldDeadline = (int64_t{1} << 48) - 1;

// Parses `FIELDS n field...` from args[at]; false (and the reply sent) when malformed.
bool ParseFields(ShardCommand& c, size_t at, size_t* first_field) {
  if (at >= c.args.size() || !protocol::EqualsIgnoreCase(AsCString(c.args[at]), "FIELDS"))
    return c.reply.Error("ERR Mandatory argument FIELDS is missing or not at the right position"), false;
  int64_t n = 0;
  if (at + 1 >= c.args.size() || !protocol::ParseInt64(c.args[at + 1], &n) || n < 1)
    return c.reply.Error("ERR Parameter `numFields` should be greater than 0"), false;
  if (n != static_cast<int64_t>(c.args.size() - at - 2))
    return c.reply.Error("ERR The `numfields` parameter must match the number of arguments"), false;
  *first_field = at + 2;
  return true;
}

// HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT key time [NX|XX|GT|LT] FIELDS n field...
void HExpireGeneric(ShardCommand& c, const char* name, TimeUnit unit, bool absolute) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  int64_t amount = 0;
  if (!protocol::ParseInt64(c.args[2], &amount)) return c.reply.Error(errors::kNotInteger);
  if (amount < 0) return c.reply.Error("ERR invalid expire time, must be >= 0");
  std::string invalid = std::string("ERR invalid expire time in '") + name + "' command";
  if (unit == TimeUnit::kSeconds) {
    if (amount > kMaxFieldDeadline / 1000) return c.reply.Error(invalid);
    amount *= 1000;
  }
  int64_t base = absolute ? 0 : c.now_ms;
  if (amount > kMaxFieldDeadline - base) return c.reply.Error(invalid);
  int64_t deadline = base + amount;
  size_t at = 3;
  hash::TtlCondition cond = hash::TtlCondition::kAlways;
  if (at < c.args.size()) {
    std::string_view opt = AsCString(c.args[at]);
    constexpr std::pair<const char*, hash::TtlCondition> kConditions[] = {
        {"NX", hash::TtlCondition::kNx}, {"XX", hash::TtlCondition::kXx}, {"GT", hash::TtlCondition::kGt},
        {"LT", hash::TtlCondition::kLt}};
    for (auto& [word, value] : kConditions) {
      if (protocol::EqualsIgnoreCase(opt, word)) {
        cond = value;
        ++at;
        break;
      }
    }
  }
  size_t first = 0;
  if (!ParseFields(c, at, &first)) return;
  c.reply.ArrayHeader(c.args.size() - first);
  engine::CollectionLimits limits = c.server.collection_limits();
  bool deleted = false;
  uint64_t changed = 0;  // one change per field given a deadline or deleted, as Redis 7.4 counts
  for (size_t i = first; i < c.args.size(); ++i) {
    int result = e ? hash::SetFieldDeadline(c.db, e, c.args[i], deadline, cond, c.now_ms, limits) : -2;
    changed += result > 0 ? 1 : 0;
    deleted |= result == 2;
    c.charge.Add(result > 0 ? engine::RuOp::kReplace : engine::RuOp::kRead, c.args[i].size());
    c.reply.Integer(result);
  }
  c.changes = changed;
  if (changed > 0) {
    c.db.Touch(c.args[1]);
    // Redis 7.4 reports one event per command: `hdel` when a deadline already past deleted
    // fields (and `del` if that emptied the hash), else `hexpire`.
    NotifyKeyspace(c, kEventHash, deleted ? "hdel" : "hexpire", c.args[1]);
    DeleteIfEmpty(c, e);
  }
}

void CmdHExpire(ShardCommand& c) { HExpireGeneric(c, "hexpire", TimeUnit::kSeconds, false); }
void CmdHPExpire(ShardCommand& c) { HExpireGeneric(c, "hpexpire", TimeUnit::kMilliseconds, false); }
void CmdHExpireAt(ShardCommand& c) { HExpireGeneric(c, "hexpireat", TimeUnit::kSeconds, true); }
void CmdHPExpireAt(ShardCommand& c) { HExpireGeneric(c, "hpexpireat", TimeUnit::kMilliseconds, true); }

enum class TtlForm { kTtl, kPTtl, kExpireTime, kPExpireTime };

// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS n field...
void HTtlGeneric(ShardCommand& c, TtlForm form) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t first = 0;
  if (!ParseFields(c, 2, &first)) return;
  c.reply.ArrayHeader(c.args.size() - first);
  for (size_t i = first; i < c.args.size(); ++i) {
    int64_t d = e ? hash::FieldDeadline(e, c.args[i]) : -2;
    c.charge.Add(engine::RuOp::kRead, c.args[i].size());
    if (d < 0) {
      c.reply.Integer(d);
      continue;
    }
    switch (form) {
      case TtlForm::kTtl: c.reply.Integer((d - c.now_ms + 999) / 1000); break;
      case TtlForm::kPTtl: c.reply.Integer(d - c.now_ms); break;
      case TtlForm::kExpireTime: c.reply.Integer((d + 999) / 1000); break;  // rounded up, as Redis 7.4
      case TtlForm::kPExpireTime: c.reply.Integer(d); break;
    }
  }
}

void CmdHTtl(ShardCommand& c) { HTtlGeneric(c, TtlForm::kTtl); }
void CmdHPTtl(ShardCommand& c) { HTtlGeneric(c, TtlForm::kPTtl); }
void CmdHExpireTime(ShardCommand& c) { HTtlGeneric(c, TtlForm::kExpireTime); }
void CmdHPExpireTime(ShardCommand& c) { HTtlGeneric(c, TtlForm::kPExpireTime); }

void CmdHPersist(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindHash(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  size_t first = 0;
  if (!ParseFields(c, 2, &first)) return;
  c.reply.ArrayHeader(c.args.size() - first);
  uint64_t changed = 0;  // one change per field made persistent
  for (size_t i = first; i < c.args.size(); ++i) {
    int result = e ? hash::PersistField(e, c.args[i]) : -2;
    changed += result == 1 ? 1 : 0;
    c.charge.Add(result == 1 ? engine::RuOp::kReplace : engine::RuOp::kRead, c.args[i].size());
    c.reply.Integer(result);
  }
  c.changes = changed;
  if (changed > 0) {
    c.db.Touch(c.args[1]);
    NotifyKeyspace(c, kEventHash, "hpersist", c.args[1]);
  }
}

}  // namespace

void RegisterHashCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast, kM = kDenyOom;
  table.Add({"hset", -4, kW | kM | kF, 1, 1, 1, CmdHSet, "hash", "Creates or modifies the value of a field in a hash."});
  table.Add({"hmset", -4, kW | kM | kF, 1, 1, 1, CmdHMSet, "hash", "Sets the values of multiple fields."});
  table.Add({"hsetnx", 4, kW | kM | kF, 1, 1, 1, CmdHSetNx, "hash", "Sets the value of a field in a hash only when the field doesn't exist."});
  table.Add({"hget", 3, kR | kF, 1, 1, 1, CmdHGet, "hash", "Returns the value of a field in a hash."});
  table.Add({"hmget", -3, kR | kF, 1, 1, 1, CmdHMGet, "hash", "Returns the values of all fields in a hash."});
  table.Add({"hdel", -3, kW | kF, 1, 1, 1, CmdHDel, "hash", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain."});
  table.Add({"hlen", 2, kR | kF, 1, 1, 1, CmdHLen, "hash", "Returns the number of fields in a hash."});
  table.Add({"hstrlen", 3, kR | kF, 1, 1, 1, CmdHStrLen, "hash", "Returns the length of the value of a field."});
  table.Add({"hexists", 3, kR | kF, 1, 1, 1, CmdHExists, "hash", "Determines whether a field exists in a hash."});
  table.Add({"hgetall", 2, kR, 1, 1, 1, CmdHGetAll, "hash", "Returns all fields and values in a hash."});
  table.Add({"hkeys", 2, kR, 1, 1, 1, CmdHKeys, "hash", "Returns all fields in a hash."});
  table.Add({"hvals", 2, kR, 1, 1, 1, CmdHVals, "hash", "Returns all values in a hash."});
  table.Add({"hincrby", 4, kW | kM | kF, 1, 1, 1, CmdHIncrBy, "hash", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist."});
  table.Add({"hincrbyfloat", 4, kW | kM | kF, 1, 1, 1, CmdHIncrByFloat, "hash", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist."});
  table.Add({"hrandfield", -2, kR, 1, 1, 1, CmdHRandField, "hash", "Returns one or more random fields from a hash."});
  table.Add({"hexpire", -6, kW | kF, 1, 1, 1, CmdHExpire, "hash", "Set expiry for hash field using relative time to expire (seconds)"});
  table.Add({"hpexpire", -6, kW | kF, 1, 1, 1, CmdHPExpire, "hash", "Set expiry for hash field using relative time to expire (milliseconds)"});
  table.Add({"hexpireat", -6, kW | kF, 1, 1, 1, CmdHExpireAt, "hash", "Set expiry for hash field using an absolute Unix timestamp (seconds)"});
  table.Add({"hpexpireat", -6, kW | kF, 1, 1, 1, CmdHPExpireAt, "hash", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)"});
  table.Add({"httl", -5, kR | kF, 1, 1, 1, CmdHTtl, "hash", "Returns the TTL in seconds of a hash field."});
  table.Add({"hpttl", -5, kR | kF, 1, 1, 1, CmdHPTtl, "hash", "Returns the TTL in milliseconds of a hash field."});
  table.Add({"hexpiretime", -5, kR | kF, 1, 1, 1, CmdHExpireTime, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in seconds."});
  table.Add({"hpexpiretime", -5, kR | kF, 1, 1, 1, CmdHPExpireTime, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in msec."});
  table.Add({"hpersist", -5, kW | kF, 1, 1, 1, CmdHPersist, "hash", "Removes the expiration time for each specified field"});
  table.Add({"hscan", -3, kR, 1, 1, 1, CmdHScan, "hash", "Iterates over fields and values of a hash."});
}

}  // namespace lapse::server
