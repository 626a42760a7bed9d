// Key family: commands that work on keys whatever their type — deletion, existence, expiry,
// renaming, copying and OBJECT. The keyspace-wide ones (KEYS, SCAN, FLUSHALL, ...) are in
// keyspace_commands.cc.
//
// Commands that change or read several keys at once (DEL, EXISTS, RENAME, COPY, ...) hold
// every shard involved for one atomic step (ShardSet::RunHolding), so no other client sees
// them half done, as with Redis.
#include "engine/collection.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/fanout.h"
#include "server/help_reply.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::kNoDeadline;
using engine::ValueType;
using protocol::EqualsIgnoreCase;

namespace {

void Touch(Entry* e, int64_t now_ms) { engine::NoteAccess(e, now_ms); }

// ---- DEL, UNLINK, EXISTS, TOUCH: count over keys on any shard ----

enum class KeyCount { kDelete, kExists, kTouch };

void CountKeys(ConnCommand& c, KeyCount what) {
  ShardSet& shards = c.server.shards();
  KeyGroups groups = GroupKeys(shards, c.args, 1, 1);
  std::vector<int64_t> counts(shards.size(), 0);
  std::vector<double> charges(shards.size(), 0);
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  // Holding every shard involved, keys are taken in argument order, as Redis reports them.
  shards.RunHolding(groups.shards, [&] {
    for (size_t pos = 1; pos < c.args.size(); ++pos) {
      engine::Shard& shard = shards.shard(groups.shard_of[pos]);
      engine::Db& d = shard.db(db);
      std::string_view key = c.args[pos];
      Entry* e = FindKey(shard, d, key, now, what == KeyCount::kDelete ? Lookup::kWrite : Lookup::kRead);
      size_t bytes = key.size() + (e ? e->value().size() : 0);
      if (what == KeyCount::kDelete && e) {
        charges[shard.id()] += engine::RuCharge(engine::RuOp::kDelete, bytes);
        d.Erase(key, now);
        NotifyKeyspace(c, kEventGeneric, "del", key);
      } else {
        charges[shard.id()] += engine::RuCharge(engine::RuOp::kRead, bytes);
        if (e && what == KeyCount::kTouch) Touch(e, now);
      }
      if (e) ++counts[shard.id()];
    }
  });
  int64_t total = 0;
  for (int64_t n : counts) total += n;
  for (double ru : charges) c.charge.ru += ru;
  c.reply.Integer(total);
}

void CmdDel(ConnCommand& c) { return CountKeys(c, KeyCount::kDelete); }
void CmdExists(ConnCommand& c) { return CountKeys(c, KeyCount::kExists); }
void CmdTouch(ConnCommand& c) { return CountKeys(c, KeyCount::kTouch); }

void CmdType(ShardCommand& c) {
  Entry* e = FindKey(c, c.args[1], Lookup::kRead);
  ChargeRead(c.charge, c.args[1], e);
  c.reply.SimpleString(e ? TypeName(e->type()) : "none");
}

// ---- Expiry ----

enum ExpireCondition : int { kNoCondition = 0, kOnlyNx = 1, kOnlyXx = 2, kOnlyGt = 4, kOnlyLt = 8 };

// Reads the NX/XX/GT/LT options after the amount into *flags; false (and the reply sent) on
// an unknown option or an incompatible pair.
bool ParseExpireConditions(ShardCommand& c, int* flags) {
  *flags = kNoCondition;
  for (size_t i = 3; i < c.args.size(); ++i) {
    std::string_view a = AsCString(c.args[i]);
    if (EqualsIgnoreCase(a, "NX")) *flags |= kOnlyNx;
    else if (EqualsIgnoreCase(a, "XX")) *flags |= kOnlyXx;
    else if (EqualsIgnoreCase(a, "GT")) *flags |= kOnlyGt;
    else if (EqualsIgnoreCase(a, "LT")) *flags |= kOnlyLt;
    else return c.reply.Error("ERR Unsupported option " + std::string(a)), false;
  }
  if ((*flags & kOnlyNx) && (*flags & (kOnlyXx | kOnlyGt | kOnlyLt))) return c.reply.Error(errors::kNxXxGtLt), false;
  if ((*flags & kOnlyGt) && (*flags & kOnlyLt)) return c.reply.Error(errors::kGtLtNx), false;
  return true;
}

// As in Redis, the options are checked before the amount is read: an option error wins.
void ExpireGeneric(ShardCommand& c, const char* command, TimeUnit unit, bool absolute) {
  int flags = kNoCondition;
  if (!ParseExpireConditions(c, &flags)) return;
  int64_t amount = 0;
  if (!protocol::ParseInt64(c.args[2], &amount)) return c.reply.Error(errors::kNotInteger);
  auto deadline = ToDeadline(amount, unit, absolute, c.now_ms, false);
  if (!deadline) return c.reply.Error(errors::InvalidExpireTime(command));
  Entry* e = c.db.Find(c.args[1], c.now_ms);
  ChargeRead(c.charge, c.args[1], e);
  if (!e) return c.reply.Integer(0);
  int64_t current = e->deadline();
  if ((flags & kOnlyNx) && current != kNoDeadline) return c.reply.Integer(0);
  if ((flags & kOnlyXx) && current == kNoDeadline) return c.reply.Integer(0);
  // A key without a TTL counts as an infinite TTL for GT and LT.
  if ((flags & kOnlyGt) && (current == kNoDeadline || *deadline <= current)) return c.reply.Integer(0);
  if ((flags & kOnlyLt) && current != kNoDeadline && *deadline >= current) return c.reply.Integer(0);
  c.charge = {};
  ChargeWrite(c.charge, true, c.args[1].size() + e->value().size());
  // A deadline already past deletes the key, which Redis reports as `del`, not `expired`.
  if (*deadline <= c.now_ms) {
    c.db.Erase(c.args[1], c.now_ms);
    NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);
  } else {
    c.db.SetDeadline(e, *deadline, c.now_ms);
    NotifyKeyspace(c, kEventGeneric, "expire", c.args[1]);
  }
  c.reply.Integer(1);
}

void CmdExpire(ShardCommand& c) { ExpireGeneric(c, "expire", TimeUnit::kSeconds, false); }
void CmdPExpire(ShardCommand& c) { ExpireGeneric(c, "pexpire", TimeUnit::kMilliseconds, false); }
void CmdExpireAt(ShardCommand& c) { ExpireGeneric(c, "expireat", TimeUnit::kSeconds, true); }
void CmdPExpireAt(ShardCommand& c) { ExpireGeneric(c, "pexpireat", TimeUnit::kMilliseconds, true); }

enum class TtlForm { kTtl, kPTtl, kExpireTime, kPExpireTime };

// Milliseconds to the nearest second, halves up, as Redis's (ms + 500) / 1000, but without
// its overflow for a deadline near INT64_MAX (PEXPIREAT k 9223372036854775807).
int64_t RoundToSeconds(int64_t ms) { return ms / 1000 + (ms % 1000 >= 500 ? 1 : 0); }

void TtlGeneric(ShardCommand& c, TtlForm form) {
  Entry* e = FindKey(c, c.args[1], Lookup::kRead);
  ChargeRead(c.charge, c.args[1], e);
  if (!e) return c.reply.Integer(-2);
  int64_t d = e->deadline();
  if (d == kNoDeadline) return c.reply.Integer(-1);
  // A live key's deadline is after now, so neither value is negative.
  int64_t left = d - c.now_ms;
  switch (form) {
    case TtlForm::kTtl:
      return c.reply.Integer(RoundToSeconds(left));
    case TtlForm::kPTtl:
      return c.reply.Integer(left);
    case TtlForm::kExpireTime:
      return c.reply.Integer(RoundToSeconds(d));
    case TtlForm::kPExpireTime:
      return c.reply.Integer(d);
  }
}

void CmdTtl(ShardCommand& c) { TtlGeneric(c, TtlForm::kTtl); }
void CmdPTtl(ShardCommand& c) { TtlGeneric(c, TtlForm::kPTtl); }
void CmdExpireTime(ShardCommand& c) { TtlGeneric(c, TtlForm::kExpireTime); }
void CmdPExpireTime(ShardCommand& c) { TtlGeneric(c, TtlForm::kPExpireTime); }

void CmdPersist(ShardCommand& c) {
  Entry* e = c.db.Find(c.args[1], c.now_ms);
  if (!e || e->deadline() == kNoDeadline) return ChargeRead(c.charge, c.args[1], e), c.reply.Integer(0);
  ChargeWrite(c.charge, true, c.args[1].size() + e->value().size());
  c.db.SetDeadline(e, kNoDeadline, c.now_ms);
  NotifyKeyspace(c, kEventGeneric, "persist", c.args[1]);
  c.reply.Integer(1);
}

// ---- RENAME, RENAMENX, COPY, MOVE ----

// A detached copy of a key's value, carried from one shard to another. Its encoding goes
// along: Redis moves (RENAME) or duplicates (COPY) the object, so a raw string stays raw.
struct Carried {
  engine::ValueCopy value;
  int64_t deadline = kNoDeadline;

  static Carried Of(const Entry& e) { return {engine::ValueCopy(e), e.deadline()}; }
  size_t size() const { return value.bytes().size(); }
  void PutInto(engine::Db& d, std::string_view key, int64_t now) {
    Entry* e = d.Put(key, value.bytes(), value.type(), deadline, now);
    e->set_encoding_bits(value.encoding_bits());
    value.Release();
    d.TrackFields(e);
  }
};

void RenameGeneric(ConnCommand& c, bool only_if_absent) {
  ShardSet& shards = c.server.shards();
  std::string_view src = c.args[1], dst = c.args[2];
  int db = c.session.db;
  int64_t now = c.server.clock().NowMs();
  uint32_t src_shard = shards.ShardFor(src), dst_shard = shards.ShardFor(dst);
  enum class Outcome { kNoSource, kUnchanged, kRenamed } outcome = Outcome::kNoSource;
  size_t value_bytes = 0;
  ShardPair held(src_shard, dst_shard);
  shards.RunHolding(held.span(), [&] {
    engine::Db& from = shards.shard(src_shard).db(db);
    engine::Db& to = shards.shard(dst_shard).db(db);
    Entry* e = from.Find(src, now);
    if (!e) return;
    if (src == dst || (only_if_absent && to.Find(dst, now))) {
      outcome = Outcome::kUnchanged;
      return;
    }
    // The value moves as it is: a collection's table changes hands, it is not copied.
    Entry* moved = from.Extract(src, now);
    value_bytes = moved->value().size();
    // Redis deletes an existing destination and adds the key anew, so `new` is sent even
    // when RENAME overwrites.
    to.Erase(dst, now);
    Entry* renamed = to.Put(dst, moved->value(), moved->type(), moved->deadline(), now);
    renamed->set_encoding_bits(moved->encoding_bits());
    Entry::DestroyMoved(moved);
    to.TrackFields(renamed);
    NotifyKeyspace(c, kEventGeneric, "rename_from", src);
    NotifyKeyspace(c, kEventGeneric, "rename_to", dst);
    outcome = Outcome::kRenamed;
  });
  if (outcome == Outcome::kNoSource) {
    c.reply.Error(errors::kNoSuchKey);
    return;
  }
  c.charge.Add(engine::RuOp::kRead, src.size());
  if (outcome == Outcome::kRenamed) ChargeWrite(c.charge, false, dst.size() + value_bytes);
  only_if_absent ? c.reply.Integer(outcome == Outcome::kRenamed ? 1 : 0) : c.reply.Ok();
}

void CmdRename(ConnCommand& c) { return RenameGeneric(c, false); }
void CmdRenameNx(ConnCommand& c) { return RenameGeneric(c, true); }

void CmdCopy(ConnCommand& c) {
  std::string_view src = c.args[1], dst = c.args[2];
  int src_db = c.session.db, dst_db = c.session.db;
  bool replace = false;
  for (size_t i = 3; i < c.args.size(); ++i) {
    std::string_view opt = AsCString(c.args[i]);
    if (EqualsIgnoreCase(opt, "REPLACE")) {
      replace = true;
    } else if (EqualsIgnoreCase(opt, "DB") && i + 1 < c.args.size()) {
      if (auto error = ParseDbIndex(c.args[++i], c.server.settings().databases, &dst_db)) {
        c.reply.Error(*error);
        return;
      }
    } else {
      c.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (src == dst && src_db == dst_db) {
    c.reply.Error(errors::kSameDb);
    return;
  }
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  uint32_t src_shard = shards.ShardFor(src), dst_shard = shards.ShardFor(dst);
  std::optional<size_t> value_bytes;  // set when the source exists
  bool written = false;
  ShardPair held(src_shard, dst_shard);
  shards.RunHolding(held.span(), [&] {
    Entry* e = FindKey(shards.shard(src_shard), shards.shard(src_shard).db(src_db), src, now, Lookup::kRead);
    if (!e) return;
    value_bytes = e->value().size();
    engine::Db& to = shards.shard(dst_shard).db(dst_db);
    if (to.Find(dst, now)) {
      if (!replace) return;
      // As in Redis, REPLACE deletes the destination and adds the copy anew (`new`).
      to.Erase(dst, now);
    }
    Carried::Of(*e).PutInto(to, dst, now);
    c.server.keyspace_events().Notify(kEventGeneric, "copy_to", dst, static_cast<uint32_t>(dst_db));
    written = true;
  });
  if (!value_bytes) {
    c.reply.Integer(0);
    return;
  }
  c.charge.Add(engine::RuOp::kRead, src.size() + *value_bytes);
  if (written) ChargeWrite(c.charge, replace, dst.size() + *value_bytes);
  c.reply.Integer(written ? 1 : 0);
}

// A key and its copy in another database hash to the same shard, so MOVE stays on one shard.
void CmdMove(ShardCommand& c) {
  int target = 0;
  if (auto error = ParseDbIndex(c.args[2], static_cast<int>(c.shard.database_count()), &target)) {
    return c.reply.Error(*error);
  }
  engine::Db& to = c.shard.db(static_cast<size_t>(target));
  if (&to == &c.db) return c.reply.Error(errors::kSameDb);
  std::string_view key = c.args[1];
  Entry* e = c.db.Find(key, c.now_ms);
  ChargeRead(c.charge, key, e);
  if (!e || to.Find(key, c.now_ms)) return c.reply.Integer(0);
  ChargeWrite(c.charge, false, key.size() + e->value().size());
  to.Adopt(c.db.Extract(key, c.now_ms), c.now_ms);
  NotifyKeyspace(c, kEventGeneric, "move_from", key);
  c.server.keyspace_events().Notify(kEventGeneric, "move_to", key, static_cast<uint32_t>(target));
  c.reply.Integer(1);
}

// ---- OBJECT ----

bool LooksLikeInteger(std::string_view v) {
  int64_t n = 0;
  return v.size() <= 20 && protocol::ParseInt64(v, &n);
}

}  // namespace

const char* TypeName(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kHash:
      return "hash";
    case ValueType::kSet:
      return "set";
    case ValueType::kList:
      return "list";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kStream:
      return "stream";
  }
  return "none";
}

// Redis's encoding of a string: int when SET-style storage could read it as a 64-bit integer,
// else embstr up to 44 bytes (one allocation with the object header), else raw.
const char* ObjectEncodingName(const Entry& e) {
  if (e.type() != ValueType::kString) return engine::EncodingName(&e);
  std::string_view v = e.value();
  switch (e.string_encoding()) {
    case engine::StringEncoding::kRaw:
      return "raw";
    case engine::StringEncoding::kByContent:
      if (LooksLikeInteger(v)) return "int";
      break;
    case engine::StringEncoding::kNoInt:
      break;
  }
  return v.size() <= 44 ? "embstr" : "raw";
}

// Redis stores an integer value from 0 to 9999 as one shared object (OBJ_SHARED_INTEGERS) with
// the refcount INT_MAX when maxmemory allows it (Server::SharesSmallIntegers). Redis decides at
// the write, lapse when asked.
int64_t ObjectRefcount(const Server& server, const Entry& e) {
  constexpr int64_t kSharedIntegers = 10000, kSharedRefcount = INT32_MAX;
  int64_t n = -1;
  bool small_int = e.type() == ValueType::kString && std::string_view(ObjectEncodingName(e)) == "int" &&
                   protocol::ParseInt64(e.value(), &n) && n >= 0 && n < kSharedIntegers;
  return small_int && server.SharesSmallIntegers() ? kSharedRefcount : 1;
}

namespace {

const char* EncodingName(const Entry& e) { return ObjectEncodingName(e); }

void ObjectHelp(ShardCommand& c) {
  ReplyHelp(c.reply, {"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "ENCODING <key>",
                      "    Return the kind of internal representation used in order to store the value",
                      "    associated with a <key>.",
                      "FREQ <key>",
                      "    Return the access frequency index of the <key>. The returned integer is",
                      "    proportional to the logarithm of the recent access frequency of the key.",
                      "IDLETIME <key>",
                      "    Return the idle time of the <key>, that is the approximated number of",
                      "    seconds elapsed since the last access to the key.",
                      "REFCOUNT <key>",
                      "    Return the number of references of the value associated with the specified",
                      "    <key>."});
}

// The key subcommands; each runs only on a live key (OBJECT answers nil for a missing one).
void ObjectEncoding(ShardCommand& c, Entry& e) { c.reply.Bulk(EncodingName(e)); }
// IDLETIME under an LFU policy and FREQ under the others have nothing to report: the stamp
// holds the other figure (engine/access.h).
void ObjectIdleTime(ShardCommand& c, Entry& e) {
  if (engine::Access().lfu.load(std::memory_order_relaxed)) {
    return c.reply.Error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between "
        "policies at runtime LRU and LFU data will take some time to adjust.");
  }
  c.reply.Integer(static_cast<int64_t>(engine::IdleMs(&e, c.now_ms) / 1000));
}
void ObjectRefCount(ShardCommand& c, Entry& e) { c.reply.Integer(ObjectRefcount(c.server, e)); }
void ObjectFreq(ShardCommand& c, Entry& e) {
  if (!engine::Access().lfu.load(std::memory_order_relaxed)) {
    return c.reply.Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching "
        "between policies at runtime LRU and LFU data will take some time to adjust.");
  }
  c.reply.Integer(engine::DecayedFrequency(&e, c.now_ms));
}

struct ObjectSubcommand {
  const char* name;
  void (*run)(ShardCommand&, Entry&);
};
constexpr ObjectSubcommand kObjectSubcommands[] = {
    {"encoding", ObjectEncoding}, {"freq", ObjectFreq}, {"idletime", ObjectIdleTime}, {"refcount", ObjectRefCount}};

// The dispatcher has checked the subcommand and its arity against the table.
void CmdObject(ShardCommand& c) {
  // The key is args[2], so dispatch routes OBJECT to the key's shard; without a key (OBJECT
  // HELP) it runs on the caller's own shard.
  std::string_view sub = c.args[1];
  const ObjectSubcommand* found = nullptr;
  for (const ObjectSubcommand& s : kObjectSubcommands) {
    if (EqualsIgnoreCase(sub, s.name)) found = &s;
  }
  if (found == nullptr) return ObjectHelp(c);
  Entry* e = FindKey(c, c.args[2], Lookup::kReadQuiet);
  ChargeRead(c.charge, c.args[2], e);
  if (!e) return c.reply.Null();
  found->run(c, *e);
}

}  // namespace

void RegisterKeyCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast;
  table.Add({"del", -2, kW, 1, -1, 1, CmdDel, "generic", "Deletes one or more keys."});
  table.Add({"unlink", -2, kW | kF, 1, -1, 1, CmdDel, "generic", "Asynchronously deletes one or more keys."});
  table.Add({"exists", -2, kR | kF, 1, -1, 1, CmdExists, "generic", "Determines whether one or more keys exist."});
  table.Add({"touch", -2, kR | kF, 1, -1, 1, CmdTouch, "generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed."});
  table.Add({"type", 2, kR | kF, 1, 1, 1, CmdType, "generic", "Determines the type of value stored at a key."});
  table.Add({"expire", -3, kW | kF, 1, 1, 1, CmdExpire, "generic", "Sets the expiration time of a key in seconds."});
  table.Add({"pexpire", -3, kW | kF, 1, 1, 1, CmdPExpire, "generic", "Sets the expiration time of a key in milliseconds."});
  table.Add({"expireat", -3, kW | kF, 1, 1, 1, CmdExpireAt, "generic", "Sets the expiration time of a key to a Unix timestamp."});
  table.Add({"pexpireat", -3, kW | kF, 1, 1, 1, CmdPExpireAt, "generic", "Sets the expiration time of a key to a Unix milliseconds timestamp."});
  table.Add({"ttl", 2, kR | kF, 1, 1, 1, CmdTtl, "generic", "Returns the expiration time in seconds of a key."});
  table.Add({"pttl", 2, kR | kF, 1, 1, 1, CmdPTtl, "generic", "Returns the expiration time in milliseconds of a key."});
  table.Add({"expiretime", 2, kR | kF, 1, 1, 1, CmdExpireTime, "generic", "Returns the expiration time of a key as a Unix timestamp."});
  table.Add({"pexpiretime", 2, kR | kF, 1, 1, 1, CmdPExpireTime, "generic", "Returns the expiration time of a key as a Unix milliseconds timestamp."});
  table.Add({"persist", 2, kW | kF, 1, 1, 1, CmdPersist, "generic", "Removes the expiration time of a key."});
  table.Add({"rename", 3, kW, 1, 2, 1, CmdRename, "generic", "Renames a key and overwrites the destination."});
  table.Add({"renamenx", 3, kW | kF, 1, 2, 1, CmdRenameNx, "generic", "Renames a key only when the target key name doesn't exist."});
  table.Add({"copy", -3, kW | kDenyOom, 1, 2, 1, CmdCopy, "generic", "Copies the value of a key to a new key."});
  table.Add({"move", 3, kW | kF, 1, 1, 1, CmdMove, "generic", "Moves a key to another database."});
  table.Add({"object", -2, kR, 2, 2, 1, CmdObject, "generic", "A container for object introspection commands."},
            {{"encoding", 3}, {"freq", 3}, {"help", 2}, {"idletime", 3}, {"refcount", 3}});
}

}  // namespace lapse::server
