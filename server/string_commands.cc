// String family: GET, SET and its variants, counters, ranges and the multi-key MGET/MSET.
//
// Single-key commands are ShardHandlers and run on the owning shard. MGET/MSET/MSETNX hold
// every shard their keys live on for one atomic step, so another client sees all of an MSET
// or none of it, and MSETNX's check and writes cannot be interleaved.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

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
using engine::kNoDeadline;
using engine::ValueType;
using protocol::EqualsIgnoreCase;

namespace {

// ---- Expiry options shared by SET and GETEX ----

struct TimeForm {
  const char* name;
  TimeUnit unit;
  bool absolute;
};
constexpr TimeForm kTimeForms[] = {{"EX", TimeUnit::kSeconds, false},
                                   {"PX", TimeUnit::kMilliseconds, false},
                                   {"EXAT", TimeUnit::kSeconds, true},
                                   {"PXAT", TimeUnit::kMilliseconds, true}};

struct ExpiryOption {
  enum Kind { kNone, kTime, kKeep, kPersist } kind = kNone;
  const TimeForm* form = nullptr;  // for kTime: which of EX/PX/EXAT/PXAT
  std::string_view amount;         // for kTime: its argument, not yet read
  int64_t deadline_ms = kNoDeadline;
};

enum class OptionMatch { kNo, kYes, kSyntaxError };

// Parses one EX/PX/EXAT/PXAT <amount> (and KEEPTTL or PERSIST where allowed) at args[*i],
// syntax only. Redis parses every option before it reads any amount, so a syntax error wins
// over a bad amount, and a repeated option replaces the earlier amount unread. Repeating an
// option is allowed; mixing two kinds is not.
OptionMatch ParseExpiryOption(Args args, size_t* i, ExpiryOption* opt, bool allow_keepttl, bool allow_persist) {
  std::string_view a = AsCString(args[*i]);
  auto take = [&](ExpiryOption::Kind kind, const TimeForm* form) {
    if (opt->kind != ExpiryOption::kNone && (opt->kind != kind || opt->form != form)) return OptionMatch::kSyntaxError;
    opt->kind = kind;
    opt->form = form;
    return OptionMatch::kYes;
  };
  if (allow_keepttl && EqualsIgnoreCase(a, "KEEPTTL")) return take(ExpiryOption::kKeep, nullptr);
  if (allow_persist && EqualsIgnoreCase(a, "PERSIST")) return take(ExpiryOption::kPersist, nullptr);
  for (const TimeForm& f : kTimeForms) {
    if (!EqualsIgnoreCase(a, f.name)) continue;
    if (*i + 1 >= args.size()) return OptionMatch::kSyntaxError;
    OptionMatch m = take(ExpiryOption::kTime, &f);
    if (m == OptionMatch::kYes) opt->amount = args[++*i];
    return m;
  }
  return OptionMatch::kNo;
}

// Reads the amount of a parsed EX/PX/EXAT/PXAT into opt->deadline_ms; false (and the reply
// sent) if it is not an integer, not positive, or overflows.
bool ReadExpiryAmount(ShardCommand& c, const char* command, ExpiryOption* opt) {
  if (opt->kind != ExpiryOption::kTime) return true;
  int64_t amount = 0;
  if (!protocol::ParseInt64(opt->amount, &amount)) return c.reply.Error(errors::kNotInteger), false;
  auto deadline = ToDeadline(amount, opt->form->unit, opt->form->absolute, c.now_ms, true);
  if (!deadline) return c.reply.Error(errors::InvalidExpireTime(command)), false;
  opt->deadline_ms = *deadline;
  return true;
}

// Stores a string value. A deadline already passed is left to the caller (SET ... PXAT
// <past>, see CmdSet): the value is stored without one.
Entry* StoreString(ShardCommand& c, std::string_view key, std::string_view value, int64_t deadline) {
  if (deadline != kNoDeadline && deadline <= c.now_ms) deadline = kNoDeadline;
  // Put stamps the access: a new value now for LRU, the key's own frequency kept for LFU.
  return c.db.Put(key, value, ValueType::kString, deadline, c.now_ms);
}

// Whether a string of `size` + `growth` bytes is allowed, as Redis checks before it grows
// one; replies the error if not. The limit is the live proto-max-bulk-len, capped at what an
// entry's 32-bit length holds. `size` may be a client's offset up to INT64_MAX: the sum is
// taken in 64 unsigned bits, where it cannot wrap.
bool CheckStringLength(ShardCommand& c, uint64_t size, uint64_t growth) {
  uint64_t limit = std::min<uint64_t>(static_cast<uint64_t>(c.server.max_bulk_len()), UINT32_MAX);
  if (size + growth > limit) return c.reply.Error(errors::kStringTooLong), false;
  return true;
}

// ---- GET / SET ----

void CmdGet(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  ChargeRead(c.charge, c.args[1], e);
  e ? c.reply.Bulk(e->value()) : c.reply.Null();
}

void CmdSet(ShardCommand& c) {
  enum { kAlways, kIfAbsent, kIfPresent } condition = kAlways;
  bool get = false;
  ExpiryOption expiry;
  for (size_t i = 3; i < c.args.size(); ++i) {
    std::string_view a = AsCString(c.args[i]);
    OptionMatch m = OptionMatch::kYes;
    if (EqualsIgnoreCase(a, "NX") && condition != kIfPresent) {
      condition = kIfAbsent;
    } else if (EqualsIgnoreCase(a, "XX") && condition != kIfAbsent) {
      condition = kIfPresent;
    } else if (EqualsIgnoreCase(a, "GET")) {
      get = true;
    } else {
      m = ParseExpiryOption(c.args, &i, &expiry, true, false);
    }
    if (m != OptionMatch::kYes) return c.reply.Error(errors::kSyntax);
  }
  if (!ReadExpiryAmount(c, "set", &expiry)) return;
  std::string_view key = c.args[1];
  // SET replaces a value of any type; only SET ... GET must read the old one as a string.
  bool wrong = false;
  Entry* old = get ? FindString(c, key, &wrong, Lookup::kRead) : FindKey(c, key, Lookup::kWrite);
  if (wrong) return;
  if (old != nullptr && !get) engine::NoteAccess(old, c.now_ms);  // Redis's lookupKeyWrite
  std::string old_value;
  if (get && old) old_value = old->value();
  bool exists = old != nullptr;
  int64_t old_deadline = exists ? old->deadline() : kNoDeadline;
  if ((condition == kIfAbsent && exists) || (condition == kIfPresent && !exists)) {
    ChargeRead(c.charge, key, old);
    if (get) return exists ? c.reply.Bulk(old_value) : c.reply.Null();
    return c.reply.Null();
  }
  int64_t deadline = expiry.kind == ExpiryOption::kKeep ? old_deadline : expiry.deadline_ms;
  ChargeWrite(c.charge, exists, key.size() + c.args[2].size());
  StoreString(c, key, c.args[2], deadline);
  NotifyKeyspace(c, kEventString, "set", key);
  if (expiry.kind == ExpiryOption::kTime) {
    NotifyKeyspace(c, kEventGeneric, "expire", key);
    // Redis 7.0 stores the key with its past deadline and expires it at the next look
    // (`expired`); lapse deletes it at once and reports that expiry now.
    if (deadline <= c.now_ms) {
      c.db.Erase(key, c.now_ms);
      NotifyKeyspace(c, kEventExpired, "expired", key);
    }
  }
  if (get) return exists ? c.reply.Bulk(old_value) : c.reply.Null();
  c.reply.Ok();
}

void CmdSetNx(ShardCommand& c) {
  Entry* e = FindKey(c, c.args[1], Lookup::kWrite);
  if (e != nullptr) engine::NoteAccess(e, c.now_ms);
  ChargeRead(c.charge, c.args[1], e);
  if (e) return c.reply.Integer(0);
  c.charge = {};
  ChargeWrite(c.charge, false, c.args[1].size() + c.args[2].size());
  StoreString(c, c.args[1], c.args[2], kNoDeadline);
  NotifyKeyspace(c, kEventString, "set", c.args[1]);
  c.reply.Integer(1);
}

void SetWithTimeout(ShardCommand& c, const char* command, TimeUnit unit) {
  int64_t amount = 0;
  if (!protocol::ParseInt64(c.args[2], &amount)) return c.reply.Error(errors::kNotInteger);
  auto deadline = ToDeadline(amount, unit, false, c.now_ms, true);
  if (!deadline) return c.reply.Error(errors::InvalidExpireTime(command));
  Entry* old = c.db.Find(c.args[1], c.now_ms);
  if (old != nullptr) engine::NoteAccess(old, c.now_ms);
  ChargeWrite(c.charge, old != nullptr, c.args[1].size() + c.args[3].size());
  StoreString(c, c.args[1], c.args[3], *deadline);
  NotifyKeyspace(c, kEventString, "set", c.args[1]);
  NotifyKeyspace(c, kEventGeneric, "expire", c.args[1]);
  c.reply.Ok();
}

void CmdSetEx(ShardCommand& c) { SetWithTimeout(c, "setex", TimeUnit::kSeconds); }
void CmdPSetEx(ShardCommand& c) { SetWithTimeout(c, "psetex", TimeUnit::kMilliseconds); }

void CmdGetSet(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  std::string old;
  bool existed = e != nullptr;
  if (existed) old = e->value();
  ChargeWrite(c.charge, existed, c.args[1].size() + c.args[2].size());
  StoreString(c, c.args[1], c.args[2], kNoDeadline);
  NotifyKeyspace(c, kEventString, "set", c.args[1]);
  existed ? c.reply.Bulk(old) : c.reply.Null();
}

void CmdGetDel(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  if (!e) return ChargeRead(c.charge, c.args[1], e), c.reply.Null();
  c.charge.Add(engine::RuOp::kDelete, c.args[1].size() + e->value().size());
  c.reply.Bulk(e->value());
  c.db.Erase(c.args[1], c.now_ms);
  NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);
}

// Redis looks the key up before it reads the amount: a missing key answers nil whatever the
// amount, and only an existing one can get the invalid-expire-time error.
void CmdGetEx(ShardCommand& c) {
  ExpiryOption expiry;
  for (size_t i = 2; i < c.args.size(); ++i) {
    if (ParseExpiryOption(c.args, &i, &expiry, false, true) != OptionMatch::kYes) return c.reply.Error(errors::kSyntax);
  }
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  if (!e) return ChargeRead(c.charge, c.args[1], e), c.reply.Null();
  if (!ReadExpiryAmount(c, "getex", &expiry)) return;
  if (expiry.kind == ExpiryOption::kNone) ChargeRead(c.charge, c.args[1], e);
  else ChargeWrite(c.charge, true, c.args[1].size() + e->value().size());
  c.reply.Bulk(e->value());
  c.changes = expiry.kind == ExpiryOption::kTime ? 1 : 0;
  if (expiry.kind == ExpiryOption::kPersist) {
    // Redis reports `persist`, and counts a change, only when there was a deadline to remove.
    if (e->deadline() != kNoDeadline) {
      c.changes = 1;
      c.db.SetDeadline(e, kNoDeadline, c.now_ms);
      NotifyKeyspace(c, kEventGeneric, "persist", c.args[1]);
    }
  } else if (expiry.kind == ExpiryOption::kTime) {
    // A deadline already past deletes the key (`del`), as EXPIRE does.
    bool deleted = c.db.SetDeadline(e, expiry.deadline_ms, c.now_ms) == nullptr;
    NotifyKeyspace(c, kEventGeneric, deleted ? "del" : "expire", c.args[1]);
  }
}

// ---- Lengths and ranges ----

void CmdStrlen(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  ChargeRead(c.charge, c.args[1], e);
  c.reply.Integer(e ? static_cast<int64_t>(e->value().size()) : 0);
}

void CmdAppend(ShardCommand& c) {
  bool wrong = false;
  std::string_view key = c.args[1], tail = c.args[2];
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (!e) {
    ChargeWrite(c.charge, false, key.size() + tail.size());
    StoreString(c, key, tail, kNoDeadline);
    NotifyKeyspace(c, kEventString, "append", key);
    return c.reply.Integer(static_cast<int64_t>(tail.size()));
  }
  size_t len = e->value().size();
  if (!CheckStringLength(c, len, tail.size())) return;
  ChargeWrite(c.charge, true, key.size() + len + tail.size());
  e = c.db.ReserveValue(e, len + tail.size());
  std::memcpy(e->mutable_value() + len, tail.data(), tail.size());
  e->set_value_len(static_cast<uint32_t>(len + tail.size()));
  e->set_string_encoding(engine::StringEncoding::kRaw);
  c.db.Touch(key);
  NotifyKeyspace(c, kEventString, "append", key);
  c.reply.Integer(static_cast<int64_t>(len + tail.size()));
}

void CmdGetRange(ShardCommand& c) {
  int64_t start = 0, end = 0;
  if (!protocol::ParseInt64(c.args[2], &start) || !protocol::ParseInt64(c.args[3], &end))
    return c.reply.Error(errors::kNotInteger);
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  ChargeRead(c.charge, c.args[1], e);
  if (!e) return c.reply.Bulk("");
  std::string_view v = e->value();
  int64_t len = static_cast<int64_t>(v.size());
  if (start < 0 && end < 0 && start > end) return c.reply.Bulk("");
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return c.reply.Bulk("");
  c.reply.Bulk(v.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

void CmdSetRange(ShardCommand& c) {
  int64_t offset = 0;
  if (!protocol::ParseInt64(c.args[2], &offset)) return c.reply.Error(errors::kNotInteger);
  if (offset < 0) return c.reply.Error(errors::kOffsetOutOfRange);
  std::string_view key = c.args[1], patch = c.args[3];
  bool wrong = false;
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (patch.empty()) return ChargeRead(c.charge, key, e), c.reply.Integer(e ? static_cast<int64_t>(e->value().size()) : 0);
  if (!CheckStringLength(c, static_cast<uint64_t>(offset), patch.size())) return;
  size_t needed = static_cast<size_t>(offset) + patch.size();
  ChargeWrite(c.charge, e != nullptr, key.size() + std::max(needed, e ? e->value().size() : 0));
  if (!e) {
    std::string value(needed, '\0');
    std::memcpy(value.data() + offset, patch.data(), patch.size());
    // Redis builds this value as a raw string, not through SET's encoding.
    StoreString(c, key, value, kNoDeadline)->set_string_encoding(engine::StringEncoding::kRaw);
    NotifyKeyspace(c, kEventString, "setrange", key);
    return c.reply.Integer(static_cast<int64_t>(needed));
  }
  size_t len = e->value().size();
  if (needed > len) {
    e = c.db.ReserveValue(e, needed);
    std::memset(e->mutable_value() + len, 0, needed - len);
    e->set_value_len(static_cast<uint32_t>(needed));
  }
  std::memcpy(e->mutable_value() + offset, patch.data(), patch.size());
  e->set_string_encoding(engine::StringEncoding::kRaw);
  c.db.Touch(key);
  NotifyKeyspace(c, kEventString, "setrange", key);
  c.reply.Integer(static_cast<int64_t>(e->value().size()));
}

// ---- Counters ----

void IncrBy(ShardCommand& c, int64_t delta) {
  std::string_view key = c.args[1];
  bool wrong = false;
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  int64_t current = 0;
  if (e && (e->value().size() > 20 || !protocol::ParseInt64(e->value(), &current))) return c.reply.Error(errors::kNotInteger);
  if ((delta < 0 && current < 0 && delta < INT64_MIN - current) || (delta > 0 && current > 0 && delta > INT64_MAX - current))
    return c.reply.Error(errors::kOverflow);
  int64_t result = current + delta;
  ChargeWrite(c.charge, e != nullptr, key.size() + 20);
  char buf[24];
  int n = snprintf(buf, sizeof buf, "%lld", static_cast<long long>(result));
  StoreString(c, key, std::string_view(buf, n), e ? e->deadline() : kNoDeadline);
  NotifyKeyspace(c, kEventString, "incrby", key);
  c.reply.Integer(result);
}

void CmdIncr(ShardCommand& c) { IncrBy(c, 1); }
void CmdDecr(ShardCommand& c) { IncrBy(c, -1); }
void CmdIncrBy(ShardCommand& c) {
  int64_t d = 0;
  if (!protocol::ParseInt64(c.args[2], &d)) return c.reply.Error(errors::kNotInteger);
  IncrBy(c, d);
}
void CmdDecrBy(ShardCommand& c) {
  int64_t d = 0;
  if (!protocol::ParseInt64(c.args[2], &d)) return c.reply.Error(errors::kNotInteger);
  if (d == INT64_MIN) return c.reply.Error("ERR decrement would overflow");
  IncrBy(c, -d);
}

void CmdIncrByFloat(ShardCommand& c) {
  // Redis checks the type, then the current value, then the increment.
  std::string_view key = c.args[1];
  bool wrong = false;
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  long double current = 0, delta = 0;
  if (e && !protocol::ParseLongDouble(e->value(), &current)) return c.reply.Error(errors::kNotFloat);
  if (!protocol::ParseLongDouble(c.args[2], &delta)) return c.reply.Error(errors::kNotFloat);
  long double result = current + delta;
  if (std::isnan(result) || std::isinf(result)) return c.reply.Error(errors::kNanOrInfinity);
  std::string text = FormatLongDouble(result);
  ChargeWrite(c.charge, e != nullptr, key.size() + text.size());
  // Redis stores the text as a plain string object, never int-encoded, even for "1000".
  StoreString(c, key, text, e ? e->deadline() : kNoDeadline)->set_string_encoding(engine::StringEncoding::kNoInt);
  NotifyKeyspace(c, kEventString, "incrbyfloat", key);
  c.reply.Bulk(text);
}

// ---- Multi-key ----

void CmdMGet(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args, 1, 1);
  std::vector<std::optional<std::string>> values(c.args.size());
  std::vector<double> charges(shards.size(), 0);
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  // In argument order, so that misses are reported (`keymiss`) in Redis's order.
  shards.RunHolding(groups.shards, [&] {
    for (size_t pos = 1; pos < c.args.size(); ++pos) {
      engine::Shard& shard = shards.shard(groups.shard_of[pos]);
      Entry* e = FindKey(shard, shard.db(db), c.args[pos], now, Lookup::kRead);
      if (e && e->type() == ValueType::kString) values[pos] = std::string(e->value());
      charges[shard.id()] += engine::RuCharge(engine::RuOp::kRead, c.args[pos].size() + (e ? e->value().size() : 0));
    }
  });
  for (double ru : charges) c.charge.ru += ru;
  c.reply.ArrayHeader(c.args.size() - 1);
  for (size_t i = 1; i < c.args.size(); ++i) values[i] ? c.reply.Bulk(*values[i]) : c.reply.Null();
}

void MSetGeneric(ConnCommand& c, bool only_if_none_exist) {
  if (c.args.size() % 2 == 0) {
    c.reply.Error(errors::WrongArity(only_if_none_exist ? "msetnx" : "mset"));
    return;
  }
  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args, 1, 2);
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  double ru = 0;
  bool refused = false;
  // One step over every shard involved: MSETNX's check and the writes are atomic together.
  shards.RunHolding(groups.shards, [&] {
    for (uint32_t id : groups.shards) {
      engine::Db& d = shards.shard(id).db(db);
      for (size_t pos : groups.positions[id]) {
        if (only_if_none_exist && d.Find(c.args[pos], now)) refused = true;
      }
    }
    if (refused) return;
    // In argument order: a key given twice ends with its last value, and the `set` events
    // come in Redis's order.
    for (size_t pos = 1; pos < c.args.size(); pos += 2) {
      engine::Db& d = shards.shard(groups.shard_of[pos]).db(db);
      {
        bool replaced = d.Find(c.args[pos], now) != nullptr;
        ru += engine::RuCharge(replaced ? engine::RuOp::kReplace : engine::RuOp::kInsert,
                               c.args[pos].size() + c.args[pos + 1].size());
        d.Put(c.args[pos], c.args[pos + 1], ValueType::kString, kNoDeadline, now);
        NotifyKeyspace(c, kEventString, "set", c.args[pos]);
      }
    }
  });
  c.charge.ru += ru;
  if (only_if_none_exist) {
    c.reply.Integer(refused ? 0 : 1);
  } else {
    c.reply.Ok();
  }
}

void CmdMSet(ConnCommand& c) { return MSetGeneric(c, false); }
void CmdMSetNx(ConnCommand& c) { return MSetGeneric(c, true); }

}  // namespace

std::string FormatLongDouble(long double v) {
  char buf[5600];
  int n = snprintf(buf, sizeof buf, "%.17Lf", v);
  if (n <= 0 || n >= static_cast<int>(sizeof buf)) return "0";
  if (std::strchr(buf, '.') != nullptr) {
    while (n > 0 && buf[n - 1] == '0') --n;
    if (n > 0 && buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, n);
}

void RegisterStringCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast;
  table.Add({"get", 2, kR | kF, 1, 1, 1, CmdGet, "string", "Returns the string value of a key."});
  table.Add({"set", -3, kW | kDenyOom, 1, 1, 1, CmdSet, "string", "Sets the string value of a key, ignoring its type."});
  table.Add({"setnx", 3, kW | kDenyOom | kF, 1, 1, 1, CmdSetNx, "string", "Set the string value of a key only when the key doesn't exist."});
  table.Add({"setex", 4, kW | kDenyOom, 1, 1, 1, CmdSetEx, "string", "Sets the string value and expiration time of a key."});
  table.Add({"psetex", 4, kW | kDenyOom, 1, 1, 1, CmdPSetEx, "string", "Sets both string value and expiration time in milliseconds of a key."});
  table.Add({"getset", 3, kW | kDenyOom | kF, 1, 1, 1, CmdGetSet, "string", "Returns the previous string value of a key after setting it to a new value."});
  table.Add({"getdel", 2, kW | kF, 1, 1, 1, CmdGetDel, "string", "Returns the string value of a key after deleting the key."});
  table.Add({"getex", -2, kW | kF, 1, 1, 1, CmdGetEx, "string", "Returns the string value of a key after setting its expiration time."});
  table.Add({"strlen", 2, kR | kF, 1, 1, 1, CmdStrlen, "string", "Returns the length of a string value."});
  table.Add({"append", 3, kW | kDenyOom | kF, 1, 1, 1, CmdAppend, "string", "Appends a string to the value of a key."});
  table.Add({"getrange", 4, kR, 1, 1, 1, CmdGetRange, "string", "Returns a substring of the string stored at a key."});
  table.Add({"substr", 4, kR, 1, 1, 1, CmdGetRange, "string", "Get a substring of the string stored at a key"});
  table.Add({"setrange", 4, kW | kDenyOom, 1, 1, 1, CmdSetRange, "string", "Overwrites a part of a string value with another by an offset."});
  table.Add({"incr", 2, kW | kDenyOom | kF, 1, 1, 1, CmdIncr, "string", "Increments the integer value of a key by one."});
  table.Add({"decr", 2, kW | kDenyOom | kF, 1, 1, 1, CmdDecr, "string", "Decrements the integer value of a key by one."});
  table.Add({"incrby", 3, kW | kDenyOom | kF, 1, 1, 1, CmdIncrBy, "string", "Increments the integer value of a key by a number."});
  table.Add({"decrby", 3, kW | kDenyOom | kF, 1, 1, 1, CmdDecrBy, "string", "Decrements a number from the integer value of a key."});
  table.Add({"incrbyfloat", 3, kW | kDenyOom | kF, 1, 1, 1, CmdIncrByFloat, "string", "Increment the floating point value of a key by a number."});
  table.Add({"mget", -2, kR | kF, 1, -1, 1, CmdMGet, "string", "Atomically returns the string values of one or more keys."});
  table.Add({"mset", -3, kW | kDenyOom, 1, -1, 2, CmdMSet, "string", "Atomically creates or modifies the string values of one or more keys."});
  table.Add({"msetnx", -3, kW | kDenyOom, 1, -1, 2, CmdMSetNx, "string", "Sets the string values of one or more keys only when none exist."});
}

}  // namespace lapse::server
