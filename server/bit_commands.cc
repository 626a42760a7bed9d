// Bitmap family (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO) and LCS, with
// Redis 7.0's replies and errors. The bit algorithms live in engine/bitops.h and the LCS
// table in engine/lcs.h; this file parses arguments in Redis's order (so that the same bad
// input gets the same error), finds the strings and replies.
//
// Single-key commands are ShardHandlers. SETBIT and BITFIELD edit the value in place (O(1)
// for a bit that is already there; a value grows geometrically through Db::ReserveValue), and
// leave it raw-encoded, as Redis's unshared string is. BITOP and LCS read keys that may live on
// several shards: BITOP holds every shard involved for one atomic step (sources read and
// destination written together, as MSET does); LCS only copies its two values in one step and
// runs its O(n*m) table after letting the shards go.
//
// Request units: reads of a whole value (BITCOUNT, BITPOS, BITOP's sources, LCS) are charged
// its size; GETBIT, SETBIT and BITFIELD are charged the key and the bytes they touch (plus
// the zero bytes they add when a value grows).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "engine/bitops.h"
#include "engine/lcs.h"
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
namespace bitops = engine::bitops;
using engine::Entry;
using engine::kNoDeadline;
using engine::ValueType;
using protocol::EqualsIgnoreCase;

namespace {

// Redis's getBitOffsetFromArgument: a non-negative integer whose byte lies below
// proto-max-bulk-len; with `bits` (BITFIELD), "#n" means n * bits (wrapping, as Redis's
// multiplication does, before the range check).
bool ParseBitOffset(std::string_view arg, unsigned bits, int64_t max_bulk_len, uint64_t* out) {
  bool by_field = bits != 0 && !arg.empty() && arg[0] == '#';
  int64_t v = 0;
  if (!protocol::ParseInt64(arg.substr(by_field ? 1 : 0), &v)) return false;
  if (by_field) v = static_cast<int64_t>(static_cast<uint64_t>(v) * bits);
  if (v < 0 || (v >> 3) >= max_bulk_len) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

// An entry stores at most UINT32_MAX value bytes; Redis's own offset limit (proto-max-bulk-len,
// 512 MB by default) keeps bitmaps below that unless the limit is raised past 4 GB.
bool CheckBitmapLength(ShardCommand& c, uint64_t bytes) {
  if (bytes > UINT32_MAX) return c.reply.Error(errors::kStringTooLong), false;
  return true;
}

// Redis's lookupStringForBitCommand: the string at `key` grown (zero-filled) to `bytes`, or a
// new one of that many zero bytes. Sets *grown when it was created or lengthened (and has
// then touched the key's watchers).
Entry* StringForBitWrite(ShardCommand& c, std::string_view key, Entry* e, uint64_t bytes, bool* grown) {
  *grown = false;
  if (!e) {
    *grown = true;
    e = c.db.Put(key, std::string(bytes, '\0'), ValueType::kString, kNoDeadline, c.now_ms);
    engine::NoteAccess(e, c.now_ms);
  } else if (size_t len = e->value().size(); bytes > len) {
    *grown = true;
    e = c.db.ReserveValue(e, bytes);
    std::memset(e->mutable_value() + len, 0, bytes - len);
    e->set_value_len(static_cast<uint32_t>(bytes));
    c.db.Touch(key);
  }
  e->set_string_encoding(engine::StringEncoding::kRaw);
  return e;
}

uint8_t* Bytes(Entry* e) { return reinterpret_cast<uint8_t*>(e->mutable_value()); }

// BYTE or BIT at the end of BITCOUNT/BITPOS; false on anything else.
bool ParseRangeUnit(std::string_view arg, bool* bit_unit) {
  std::string_view a = protocol::AsCString(arg);
  if (EqualsIgnoreCase(a, "BIT")) return *bit_unit = true, true;
  if (EqualsIgnoreCase(a, "BYTE")) return *bit_unit = false, true;
  return false;
}

// ---- SETBIT / GETBIT ----

void CmdSetBit(ShardCommand& c) {
  uint64_t offset = 0;
  if (!ParseBitOffset(c.args[2], 0, c.server.max_bulk_len(), &offset)) return c.reply.Error(errors::kBitOffset);
  int64_t on = 0;
  if (!protocol::ParseInt64(c.args[3], &on) || (on & ~int64_t{1})) return c.reply.Error(errors::kBitValue);
  std::string_view key = c.args[1];
  bool wrong = false;
  Entry* e = FindString(c, key, &wrong, Lookup::kWrite);
  if (wrong) return;
  uint64_t needed = (offset >> 3) + 1;
  if (!CheckBitmapLength(c, needed)) return;
  size_t old_len = e ? e->value().size() : 0;
  ChargeWrite(c.charge, e != nullptr, key.size() + std::max<uint64_t>(1, needed > old_len ? needed - old_len : 0));
  bool grown = false;
  e = StringForBitWrite(c, key, e, needed, &grown);
  int old = bitops::SetBit(Bytes(e), offset, static_cast<int>(on));
  if (!grown && old != on) c.db.Touch(key);
  // As in Redis, a bit set to the value it had in a string that did not grow is no change.
  c.changes = grown || old != on ? 1 : 0;
  if (grown || old != on) NotifyKeyspace(c, kEventString, "setbit", key);
  c.reply.Integer(old);
}

void CmdGetBit(ShardCommand& c) {
  uint64_t offset = 0;
  if (!ParseBitOffset(c.args[2], 0, c.server.max_bulk_len(), &offset)) return c.reply.Error(errors::kBitOffset);
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + 1);
  c.reply.Integer(e ? bitops::GetBit(e->value(), offset) : 0);
}

// ---- BITCOUNT / BITPOS ----

// Redis 7.0 looks the key up before it reads the range: a missing key answers 0 whatever
// follows it.
void CmdBitCount(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  ChargeRead(c.charge, c.args[1], e);
  if (!e) return c.reply.Integer(0);
  size_t argc = c.args.size();
  if (argc == 2) return c.reply.Integer(static_cast<int64_t>(bitops::CountRange(e->value(), 0, -1, false)));
  if (argc != 4 && argc != 5) return c.reply.Error(errors::kSyntax);
  int64_t start = 0, end = 0;
  if (!protocol::ParseInt64(c.args[2], &start) || !protocol::ParseInt64(c.args[3], &end))
    return c.reply.Error(errors::kNotInteger);
  if (start < 0 && end < 0 && start > end) return c.reply.Integer(0);  // before the unit is read
  bool bit_unit = false;
  if (argc == 5 && !ParseRangeUnit(c.args[4], &bit_unit)) return c.reply.Error(errors::kSyntax);
  c.reply.Integer(static_cast<int64_t>(bitops::CountRange(e->value(), start, end, bit_unit)));
}

void CmdBitPos(ShardCommand& c) {
  int64_t bit = 0;
  if (!protocol::ParseInt64(c.args[2], &bit)) return c.reply.Error(errors::kNotInteger);
  if (bit != 0 && bit != 1) return c.reply.Error(errors::kBitArgument);
  bool wrong = false;
  Entry* e = FindString(c, c.args[1], &wrong, Lookup::kRead);
  if (wrong) return;
  ChargeRead(c.charge, c.args[1], e);
  // A missing key is an endless run of zeros.
  if (!e) return c.reply.Integer(bit ? -1 : 0);
  size_t argc = c.args.size();
  if (argc > 6) return c.reply.Error(errors::kSyntax);
  int64_t start = 0, end = -1;
  bool bit_unit = false;
  if (argc >= 4 && !protocol::ParseInt64(c.args[3], &start)) return c.reply.Error(errors::kNotInteger);
  if (argc == 6 && !ParseRangeUnit(c.args[5], &bit_unit)) return c.reply.Error(errors::kSyntax);
  if (argc >= 5 && !protocol::ParseInt64(c.args[4], &end)) return c.reply.Error(errors::kNotInteger);
  c.reply.Integer(bitops::FindBit(e->value(), static_cast<int>(bit), start, end, argc >= 5, bit_unit));
}

// ---- BITFIELD / BITFIELD_RO ----

struct FieldOp {
  enum Kind { kGet, kSet, kIncrBy } kind;
  bool is_signed;
  unsigned bits;
  uint64_t offset;
  int64_t value;  // SET's value or INCRBY's increment
  bitops::Overflow overflow;
};

// i1..i64 or u1..u63; Redis 7.0 takes the letter in lower case only.
bool ParseFieldType(std::string_view arg, bool* is_signed, unsigned* bits) {
  std::string_view t = protocol::AsCString(arg);
  if (t.empty()) return false;
  if (t[0] == 'i') {
    *is_signed = true;
  } else if (t[0] == 'u') {
    *is_signed = false;
  } else {
    return false;
  }
  int64_t n = 0;
  if (!protocol::ParseInt64(t.substr(1), &n) || n < 1 || n > (*is_signed ? 64 : 63)) return false;
  *bits = static_cast<unsigned>(n);
  return true;
}

// Runs one SET or INCRBY on `p` and replies its result (nil when OVERFLOW FAIL refuses it).
// Returns whether the field changed: as in Redis 7.0, a write of the value already there is
// no change for WATCH. Sets *applied unless OVERFLOW FAIL refused the write.
bool RunFieldWrite(protocol::ReplyWriter& reply, uint8_t* p, const FieldOp& op, bool* applied) {
  bool incr = op.kind == FieldOp::kIncrBy;
  if (op.is_signed) {
    int64_t old = bitops::GetSignedField(p, op.offset, op.bits), wrapped = 0, next = 0;
    int overflow = 0;
    if (incr) {
      overflow = bitops::CheckSignedOverflow(old, op.value, op.bits, op.overflow, &wrapped);
      next = overflow ? wrapped : static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(op.value));
    } else {
      overflow = bitops::CheckSignedOverflow(op.value, 0, op.bits, op.overflow, &wrapped);
      next = overflow ? wrapped : op.value;
    }
    if (overflow && op.overflow == bitops::Overflow::kFail) return reply.Null(), false;
    *applied = true;
    reply.Integer(incr ? next : old);
    bitops::SetField(p, op.offset, op.bits, static_cast<uint64_t>(next));
    return bitops::GetSignedField(p, op.offset, op.bits) != old;
  }
  uint64_t old = bitops::GetUnsignedField(p, op.offset, op.bits), wrapped = 0, next = 0;
  int overflow = 0;
  if (incr) {
    overflow = bitops::CheckUnsignedOverflow(old, op.value, op.bits, op.overflow, &wrapped);
    next = overflow ? wrapped : old + static_cast<uint64_t>(op.value);
  } else {
    overflow = bitops::CheckUnsignedOverflow(static_cast<uint64_t>(op.value), 0, op.bits, op.overflow, &wrapped);
    next = overflow ? wrapped : static_cast<uint64_t>(op.value);
  }
  if (overflow && op.overflow == bitops::Overflow::kFail) return reply.Null(), false;
  *applied = true;
  reply.Integer(static_cast<int64_t>(incr ? next : old));
  bitops::SetField(p, op.offset, op.bits, next);
  return bitops::GetUnsignedField(p, op.offset, op.bits) != old;
}

// Every operation is parsed (and every error found) before the key is looked up; the
// operations then run in order, each seeing the ones before it.
void BitfieldGeneric(ShardCommand& c, bool read_only_command) {
  std::vector<FieldOp> ops;
  bitops::Overflow overflow = bitops::Overflow::kWrap;
  bool writes = false;
  uint64_t highest_bit = 0;  // the last bit a SET or INCRBY reaches
  const size_t argc = c.args.size();
  for (size_t j = 2; j < argc; ++j) {
    size_t rest = argc - j - 1;
    std::string_view sub = protocol::AsCString(c.args[j]);
    FieldOp op{};
    if (EqualsIgnoreCase(sub, "GET") && rest >= 2) {
      op.kind = FieldOp::kGet;
    } else if (EqualsIgnoreCase(sub, "SET") && rest >= 3) {
      op.kind = FieldOp::kSet;
    } else if (EqualsIgnoreCase(sub, "INCRBY") && rest >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (EqualsIgnoreCase(sub, "OVERFLOW") && rest >= 1) {
      std::string_view how = protocol::AsCString(c.args[++j]);
      if (EqualsIgnoreCase(how, "WRAP")) {
        overflow = bitops::Overflow::kWrap;
      } else if (EqualsIgnoreCase(how, "SAT")) {
        overflow = bitops::Overflow::kSat;
      } else if (EqualsIgnoreCase(how, "FAIL")) {
        overflow = bitops::Overflow::kFail;
      } else {
        return c.reply.Error(errors::kBitfieldOverflow);
      }
      continue;
    } else {
      return c.reply.Error(errors::kSyntax);
    }
    if (!ParseFieldType(c.args[j + 1], &op.is_signed, &op.bits)) return c.reply.Error(errors::kBitfieldType);
    if (!ParseBitOffset(c.args[j + 2], op.bits, c.server.max_bulk_len(), &op.offset))
      return c.reply.Error(errors::kBitOffset);
    if (op.kind != FieldOp::kGet) {
      writes = true;
      highest_bit = std::max(highest_bit, op.offset + op.bits - 1);
      if (!protocol::ParseInt64(c.args[j + 3], &op.value)) return c.reply.Error(errors::kNotInteger);
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == FieldOp::kGet ? 2 : 3;
  }

  std::string_view key = c.args[1];
  bool wrong = false;
  Entry* e = nullptr;
  bool grown = false;
  if (!writes) {
    e = FindString(c, key, &wrong, Lookup::kRead);
    if (wrong) return;
    c.charge.Add(engine::RuOp::kRead, key.size() + ops.size() * 9);
  } else {
    if (read_only_command) return c.reply.Error(errors::kBitfieldReadOnly);
    e = FindString(c, key, &wrong, Lookup::kWrite);
    if (wrong) return;
    uint64_t needed = (highest_bit >> 3) + 1;
    if (!CheckBitmapLength(c, needed)) return;
    size_t old_len = e ? e->value().size() : 0;
    ChargeWrite(c.charge, e != nullptr, key.size() + ops.size() * 9 + (needed > old_len ? needed - old_len : 0));
    e = StringForBitWrite(c, key, e, needed, &grown);
  }

  bool written = false, applied = false;
  uint64_t changes = 0;
  c.reply.ArrayHeader(ops.size());
  for (const FieldOp& op : ops) {
    if (op.kind != FieldOp::kGet) {
      bool op_applied = false;
      bool changed = RunFieldWrite(c.reply, Bytes(e), op, &op_applied);
      written |= changed;
      applied |= op_applied;
      if (changed || (grown && op_applied)) ++changes;
      continue;
    }
    std::string_view value = e ? e->value() : std::string_view();
    c.reply.Integer(op.is_signed ? bitops::GetSignedField(value, op.offset, op.bits)
                                 : static_cast<int64_t>(bitops::GetUnsignedField(value, op.offset, op.bits)));
  }
  if (written && !grown) c.db.Touch(key);
  // Redis counts a write that changed the field, or any write into a string it created or
  // grew, and reports `setbit` once when there was one.
  c.changes = changes;
  if (written || (grown && applied)) NotifyKeyspace(c, kEventString, "setbit", key);
}

void CmdBitfield(ShardCommand& c) { BitfieldGeneric(c, false); }
void CmdBitfieldRo(ShardCommand& c) { BitfieldGeneric(c, true); }

// ---- BITOP ----

void CmdBitop(ConnCommand& c) {
  std::string_view name = protocol::AsCString(c.args[1]);
  bitops::BitOp op;
  if (EqualsIgnoreCase(name, "AND")) {
    op = bitops::BitOp::kAnd;
  } else if (EqualsIgnoreCase(name, "OR")) {
    op = bitops::BitOp::kOr;
  } else if (EqualsIgnoreCase(name, "XOR")) {
    op = bitops::BitOp::kXor;
  } else if (EqualsIgnoreCase(name, "NOT")) {
    op = bitops::BitOp::kNot;
  } else {
    return c.reply.Error(errors::kSyntax);
  }
  if (op == bitops::BitOp::kNot && c.args.size() != 4) return c.reply.Error(errors::kBitopNot);

  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args, 2, 1);
  std::string_view dest = c.args[2];
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  bool wrong_type = false;
  size_t result_len = 0;
  double ru = 0;
  // Sources and destination in one step: no client sees the destination written from a
  // half-updated set of sources.
  shards.RunHolding(groups.shards, [&] {
    // Views straight into the sources: finding another key never moves an entry already
    // found, and the result is built before the destination is written.
    std::vector<std::string_view> views;
    views.reserve(c.args.size() - 3);
    for (size_t i = 3; i < c.args.size(); ++i) {
      engine::Shard& shard = shards.shard(shards.ShardFor(c.args[i]));
      Entry* e = FindKey(shard, shard.db(db), c.args[i], now, Lookup::kRead);
      if (e && e->type() != ValueType::kString) {
        wrong_type = true;
        return;
      }
      if (e) engine::NoteAccess(e, now);
      ru += engine::RuCharge(engine::RuOp::kRead, c.args[i].size() + (e ? e->value().size() : 0));
      views.emplace_back(e ? e->value() : std::string_view());
    }
    std::string result = bitops::Combine(op, views);
    result_len = result.size();
    engine::Db& to = shards.shard(shards.ShardFor(dest)).db(db);
    // Redis counts one change for the value stored, or for the destination an empty result deleted.
    c.changes = 0;
    if (result.empty()) {
      if (to.Erase(dest, now)) {
        ru += engine::RuCharge(engine::RuOp::kDelete, dest.size());
        NotifyKeyspace(c, kEventGeneric, "del", dest);
        c.changes = 1;
      }
      return;
    }
    c.changes = 1;
    bool replaced = to.Find(dest, now) != nullptr;
    ru += engine::RuCharge(replaced ? engine::RuOp::kReplace : engine::RuOp::kInsert, dest.size() + result.size());
    Entry* e = to.Put(dest, result, ValueType::kString, kNoDeadline, now);
    e->set_string_encoding(engine::StringEncoding::kRaw);  // Redis stores the buffer it built
    engine::NoteAccess(e, now);
    NotifyKeyspace(c, kEventString, "set", dest);
  });
  c.charge.ru += ru;
  if (wrong_type) return c.reply.Error(errors::kWrongType);
  c.reply.Integer(static_cast<int64_t>(result_len));
}

// ---- LCS ----

void CmdLcs(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args.subspan(0, 3), 1, 1);
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  std::string a, b;
  bool wrong_type = false;
  shards.RunHolding(groups.shards, [&] {
    auto read = [&](std::string_view key, std::string* out) {
      engine::Shard& shard = shards.shard(shards.ShardFor(key));
      Entry* e = FindKey(shard, shard.db(db), key, now, Lookup::kRead);
      if (e && e->type() != ValueType::kString) wrong_type = true;
      c.charge.Add(engine::RuOp::kRead, key.size() + (e ? e->value().size() : 0));
      if (e && !wrong_type) {
        engine::NoteAccess(e, now);
        out->assign(e->value());
      }
    };
    read(c.args[1], &a);
    read(c.args[2], &b);
  });
  if (wrong_type) return c.reply.Error(errors::kLcsNotStrings);

  bool want_len = false, want_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t j = 3; j < c.args.size(); ++j) {
    std::string_view opt = protocol::AsCString(c.args[j]);
    bool more = j + 1 < c.args.size();
    if (EqualsIgnoreCase(opt, "IDX")) {
      want_idx = true;
    } else if (EqualsIgnoreCase(opt, "LEN")) {
      want_len = true;
    } else if (EqualsIgnoreCase(opt, "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (EqualsIgnoreCase(opt, "MINMATCHLEN") && more) {
      if (!protocol::ParseInt64(c.args[++j], &min_match_len)) return c.reply.Error(errors::kNotInteger);
      min_match_len = std::max<int64_t>(min_match_len, 0);
    } else {
      return c.reply.Error(errors::kSyntax);
    }
  }
  if (want_idx && want_len) return c.reply.Error(errors::kLcsIdxAndLen);
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) return c.reply.Error(errors::kLcsTooLong);
  if (engine::LcsTableBytes(a.size(), b.size()) > static_cast<uint64_t>(c.server.max_bulk_len()))
    return c.reply.Error(errors::kLcsTableTooBig);
  auto lcs = engine::ComputeLcs(a, b, !want_len && !want_idx, want_idx, static_cast<uint64_t>(min_match_len));
  if (!lcs) return c.reply.Error(errors::kLcsNoMemory);
  if (!want_idx) return want_len ? c.reply.Integer(lcs->length) : c.reply.Bulk(lcs->text);
  c.reply.MapHeader(2);
  c.reply.Bulk("matches");
  c.reply.ArrayHeader(lcs->matches.size());
  for (const engine::LcsMatch& m : lcs->matches) {
    c.reply.ArrayHeader(with_match_len ? 3 : 2);
    c.reply.ArrayHeader(2);
    c.reply.Integer(m.a_start);
    c.reply.Integer(m.a_end);
    c.reply.ArrayHeader(2);
    c.reply.Integer(m.b_start);
    c.reply.Integer(m.b_end);
    if (with_match_len) c.reply.Integer(m.len);
  }
  c.reply.Bulk("len");
  c.reply.Integer(lcs->length);
}

}  // namespace

void RegisterBitCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast;
  table.Add({"setbit", 4, kW | kDenyOom, 1, 1, 1, CmdSetBit, "bitmap", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist."});
  table.Add({"getbit", 3, kR | kF, 1, 1, 1, CmdGetBit, "bitmap", "Returns a bit value by offset."});
  table.Add({"bitcount", -2, kR, 1, 1, 1, CmdBitCount, "bitmap", "Counts the number of set bits (population counting) in a string."});
  table.Add({"bitpos", -3, kR, 1, 1, 1, CmdBitPos, "bitmap", "Finds the first set (1) or clear (0) bit in a string."});
  table.Add({"bitop", -4, kW | kDenyOom, 2, -1, 1, CmdBitop, "bitmap", "Performs bitwise operations on multiple strings, and stores the result."});
  table.Add({"bitfield", -2, kW | kDenyOom, 1, 1, 1, CmdBitfield, "bitmap", "Performs arbitrary bitfield integer operations on strings."});
  table.Add({"bitfield_ro", -2, kR | kF, 1, 1, 1, CmdBitfieldRo, "bitmap", "Performs arbitrary read-only bitfield integer operations on strings."});
  table.Add({"lcs", -3, kR, 1, 2, 1, CmdLcs, "string", "Finds the longest common substring."});
}

}  // namespace lapse::server
