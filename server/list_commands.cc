// List family: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX, LSET, LRANGE, LTRIM,
// LREM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP, and the blocking BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH and BLMPOP (server/blocking.h).
//
// Single-key commands are ShardHandlers. LMOVE and LMPOP touch several keys and hold their
// shards for one atomic step, as SMOVE does. A blocking command serves itself through one
// function whether it is served on arrival or later, when a push makes its key ready: the
// same code pops, deletes an emptied key and writes the reply in both cases.
//
// Request units, as for hashes and sets: a push or pop costs its elements' bytes (insert or
// delete), LLEN the key, LINDEX/LRANGE/LPOS the bytes they return or compare, LSET a replace
// of the new element, LTRIM and LREM a delete of what they remove plus, for LREM, a read of
// the list it walks. A blocked client costs nothing while it waits; its pop is charged when
// it is served.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "engine/list.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/blocking.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/mpop_args.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
using protocol::EqualsIgnoreCase;
namespace list = engine::list;
using End = list::End;

namespace {

constexpr std::string_view kMustBePositive = "ERR value is out of range, must be positive";

Entry* FindList(ShardCommand& c, bool* wrong, Lookup kind) { return FindTyped(c, c.args[1], ValueType::kList, wrong, kind); }

// Redis's getPositiveLongFromObjectOrReply: an integer >= 0, else `message`.
bool ParseNonNegative(std::string_view text, int64_t* out, std::string_view message, protocol::ReplyWriter& reply) {
  if (!protocol::ParseInt64(text, out) || *out < 0) return reply.Error(message), false;
  return true;
}

// LEFT or RIGHT, case-insensitively; Redis's syntax error otherwise.
bool ParseEnd(std::string_view text, End* end, protocol::ReplyWriter& reply) {
  text = protocol::AsCString(text);
  if (EqualsIgnoreCase(text, "LEFT")) return *end = End::kHead, true;
  if (EqualsIgnoreCase(text, "RIGHT")) return *end = End::kTail, true;
  reply.Error(errors::kSyntax);
  return false;
}

// Redis's list index: negative from the tail. nullopt when outside the list.
std::optional<size_t> ResolveIndex(int64_t index, size_t size) {
  auto n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<size_t>(index);
}

// A keyspace event on `key` of `db`. The list helpers below run for commands and for
// served blocked clients alike, so they name the database rather than a command.
void Report(const Server& server, const engine::Db& db, uint32_t event_class, std::string_view event,
            std::string_view key) {
  server.keyspace_events().Notify(event_class, event, key, db.index());
}

const char* PopEvent(End end) { return end == End::kHead ? "lpop" : "rpop"; }
const char* PushEvent(End end) { return end == End::kHead ? "lpush" : "rpush"; }

// Touches a list that changed, or deletes it when it was left empty (`del`, after the
// caller's own event on the change).
void Settle(const Server& server, engine::Db& db, Entry* e, std::string_view key, int64_t now) {
  if (list::Size(e) == 0) {
    db.Erase(key, now);
    Report(server, db, kEventGeneric, "del", key);
  } else {
    db.Touch(key);
  }
}

// Pops up to `count` elements at `end`, in pop order, deleting the key when emptied.
std::vector<std::string> PopElements(const Server& server, engine::Db& db, Entry* e, std::string_view key, End end,
                                     size_t count, int64_t now, RequestCharge& charge) {
  count = std::min(count, list::Size(e));
  std::vector<std::string> out;
  out.reserve(count);
  size_t bytes = key.size();
  for (size_t i = 0; i < count; ++i) {
    out.push_back(list::Pop(db, e, end));
    bytes += out.back().size();
  }
  charge.Add(engine::RuOp::kDelete, bytes);
  Report(server, db, kEventList, PopEvent(end), key);
  Settle(server, db, e, key, now);
  return out;
}

// Moves one element from the list `src` (under `src_key`, not empty) to the list under
// `dst_key` (created if absent; the caller checked its type), as LMOVE does. Redis reports
// the push on the destination before the pop on the source (and its deletion).
std::string MoveElement(const Server& server, engine::Db& from, Entry* src, std::string_view src_key, engine::Db& to,
                        std::string_view dst_key, End from_end, End to_end, int64_t now, RequestCharge& charge) {
  engine::CollectionLimits limits = server.collection_limits();
  std::string value = list::Pop(from, src, from_end);
  charge.Add(engine::RuOp::kDelete, src_key.size() + value.size());
  ChargeWrite(charge, false, dst_key.size() + value.size());
  if (&from == &to && src_key == dst_key) {
    // A rotation: the list is never empty in between, so it keeps its key.
    list::Push(from, src, to_end, value, limits);
    from.Touch(src_key);
    Report(server, from, kEventList, PushEvent(to_end), src_key);
    Report(server, from, kEventList, PopEvent(from_end), src_key);
    return value;
  }
  Entry* dst = to.Find(dst_key, now);
  if (dst == nullptr) dst = list::Create(to, dst_key, now);
  list::Push(to, dst, to_end, value, limits);
  to.Touch(dst_key);
  Report(server, to, kEventList, PushEvent(to_end), dst_key);
  Report(server, from, kEventList, PopEvent(from_end), src_key);
  Settle(server, from, src, src_key, now);
  return value;
}

// ---- Pushes and pops ----

void Push(ShardCommand& c, End end, bool only_existing) {
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) {
    if (only_existing) return c.reply.Integer(0);
    e = list::Create(c.db, c.args[1], c.now_ms);
  }
  engine::CollectionLimits limits = c.server.collection_limits();
  size_t bytes = c.args[1].size();
  for (size_t i = 2; i < c.args.size(); ++i) {
    list::Push(c.db, e, end, c.args[i], limits);
    bytes += c.args[i].size();
  }
  ChargeWrite(c.charge, false, bytes);
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventList, PushEvent(end), c.args[1]);
  c.reply.Integer(static_cast<int64_t>(list::Size(e)));
}

void CmdLPush(ShardCommand& c) { Push(c, End::kHead, false); }
void CmdRPush(ShardCommand& c) { Push(c, End::kTail, false); }
void CmdLPushX(ShardCommand& c) { Push(c, End::kHead, true); }
void CmdRPushX(ShardCommand& c) { Push(c, End::kTail, true); }

void Pop(ShardCommand& c, End end) {
  if (c.args.size() > 3) return c.reply.Error(errors::WrongArity(end == End::kHead ? "lpop" : "rpop"));
  bool with_count = c.args.size() == 3;
  int64_t count = 1;
  if (with_count && !ParseNonNegative(c.args[2], &count, kMustBePositive, c.reply)) return;
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  if (e == nullptr) return with_count ? c.reply.NullArray() : c.reply.Null();
  if (with_count && count == 0) return c.reply.ArrayHeader(0);
  std::vector<std::string> popped = PopElements(c.server, c.db, e, c.args[1], end, static_cast<size_t>(count), c.now_ms, c.charge);
  if (!with_count) return c.reply.Bulk(popped[0]);
  c.reply.ArrayHeader(popped.size());
  for (const std::string& v : popped) c.reply.Bulk(v);
}

void CmdLPop(ShardCommand& c) { Pop(c, End::kHead); }
void CmdRPop(ShardCommand& c) { Pop(c, End::kTail); }

// ---- Reads and edits by position ----

void CmdLLen(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(e ? static_cast<int64_t>(list::Size(e)) : 0);
}

void CmdLIndex(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (e == nullptr) return c.reply.Null();
  int64_t index = 0;
  if (!protocol::ParseInt64(c.args[2], &index)) return c.reply.Error(errors::kNotInteger);
  std::optional<size_t> at = ResolveIndex(index, list::Size(e));
  if (!at) return c.reply.Null();
  std::string_view value = list::At(e, *at);
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + value.size());
  c.reply.Bulk(value);
}

void CmdLSet(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Error(errors::kNoSuchKey);
  int64_t index = 0;
  if (!protocol::ParseInt64(c.args[2], &index)) return c.reply.Error(errors::kNotInteger);
  std::optional<size_t> at = ResolveIndex(index, list::Size(e));
  if (!at) return c.reply.Error("ERR index out of range");
  list::Set(c.db, e, *at, c.args[3]);
  ChargeWrite(c.charge, true, c.args[1].size() + c.args[3].size());
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventList, "lset", c.args[1]);
  c.reply.Ok();
}

// Redis's range rules for LRANGE and LTRIM: negative indices from the tail, clamped to the
// list. False when the range is empty; else [*first, *last] lies inside the list.
bool ResolveRange(int64_t start, int64_t stop, size_t size, size_t* first, size_t* last) {
  auto n = static_cast<int64_t>(size);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  *first = static_cast<size_t>(start);
  *last = static_cast<size_t>(stop);
  return true;
}

void CmdLRange(ShardCommand& c) {
  int64_t start = 0, stop = 0;
  if (!protocol::ParseInt64(c.args[2], &start) || !protocol::ParseInt64(c.args[3], &stop)) {
    return c.reply.Error(errors::kNotInteger);
  }
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t first = 0, last = 0;
  size_t bytes = c.args[1].size();
  if (e == nullptr || !ResolveRange(start, stop, list::Size(e), &first, &last)) {
    c.charge.Add(engine::RuOp::kRead, bytes);
    return c.reply.ArrayHeader(0);
  }
  c.reply.ArrayHeader(last - first + 1);
  list::ForRange(e, first, last, [&](std::string_view v) {
    bytes += v.size();
    c.reply.Bulk(v);
    return true;
  });
  c.charge.Add(engine::RuOp::kRead, bytes);
}

size_t RangeBytes(const Entry* e, size_t first, size_t count) {
  size_t bytes = 0;
  if (count > 0) {
    list::ForRange(e, first, first + count - 1, [&](std::string_view v) {
      bytes += v.size();
      return true;
    });
  }
  return bytes;
}

void CmdLTrim(ShardCommand& c) {
  int64_t start = 0, stop = 0;
  if (!protocol::ParseInt64(c.args[2], &start) || !protocol::ParseInt64(c.args[3], &stop)) {
    return c.reply.Error(errors::kNotInteger);
  }
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.changes = 0, c.reply.Ok();
  size_t size = list::Size(e), first = 0, last = 0;
  size_t drop_head = size, drop_tail = 0;
  if (ResolveRange(start, stop, size, &first, &last)) {
    drop_head = first;
    drop_tail = size - last - 1;
  }
  size_t bytes = c.args[1].size() + RangeBytes(e, 0, drop_head) + RangeBytes(e, size - drop_tail, drop_tail);
  c.charge.Add(engine::RuOp::kDelete, bytes);
  list::Drop(c.db, e, End::kHead, drop_head);
  list::Drop(c.db, e, End::kTail, drop_tail);
  c.changes = drop_head + drop_tail;  // Redis counts the elements removed
  // Redis reports `ltrim` even when nothing was trimmed.
  NotifyKeyspace(c, kEventList, "ltrim", c.args[1]);
  Settle(c.server, c.db, e, c.args[1], c.now_ms);
  c.reply.Ok();
}

// The indices of the elements equal to `value`, head to tail; with `limit` > 0 only the
// first `limit` from the head, with `limit` < 0 the last -`limit`.
std::vector<size_t> Matches(const Entry* e, std::string_view value, int64_t limit, size_t* bytes) {
  std::vector<size_t> found;
  size_t i = 0;
  list::ForEach(e, [&](std::string_view v) {
    *bytes += v.size();
    if (v == value && (limit <= 0 || found.size() < static_cast<size_t>(limit))) found.push_back(i);
    ++i;
  });
  if (limit < 0 && found.size() > static_cast<size_t>(-limit)) {
    found.erase(found.begin(), found.end() - static_cast<std::ptrdiff_t>(-limit));
  }
  return found;
}

void CmdLRem(ShardCommand& c) {
  int64_t count = 0;
  if (!protocol::ParseInt64(c.args[2], &count)) return c.reply.Error(errors::kNotInteger);
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Integer(0);
  size_t walked = 0;
  // The limit counts matches; INT64_MIN's magnitude does not fit, but no list is that long.
  int64_t limit = count == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::min() + 1 : count;
  std::vector<size_t> gone = Matches(e, c.args[3], limit, &walked);
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + walked);
  if (!gone.empty()) {
    c.charge.Add(engine::RuOp::kDelete, gone.size() * c.args[3].size());
    list::RemoveAt(c.db, e, gone);
    NotifyKeyspace(c, kEventList, "lrem", c.args[1]);
    Settle(c.server, c.db, e, c.args[1], c.now_ms);
  }
  c.reply.Integer(static_cast<int64_t>(gone.size()));
}

void CmdLInsert(ShardCommand& c) {
  std::string_view where = protocol::AsCString(c.args[2]);
  bool after = EqualsIgnoreCase(where, "AFTER");
  if (!after && !EqualsIgnoreCase(where, "BEFORE")) return c.reply.Error(errors::kSyntax);
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Integer(0);
  size_t walked = 0;
  std::vector<size_t> pivot = Matches(e, c.args[3], 1, &walked);
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + walked);
  if (pivot.empty()) return c.reply.Integer(-1);
  list::Insert(c.db, e, pivot[0] + (after ? 1 : 0), c.args[4], c.server.collection_limits());
  ChargeWrite(c.charge, false, c.args[4].size());
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventList, "linsert", c.args[1]);
  c.reply.Integer(static_cast<int64_t>(list::Size(e)));
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void CmdLPos(ShardCommand& c) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < c.args.size(); ++i) {
    std::string_view opt = protocol::AsCString(c.args[i]);
    bool more = i + 1 < c.args.size();
    if (EqualsIgnoreCase(opt, "RANK") && more) {
      if (!protocol::ParseInt64(c.args[++i], &rank)) return c.reply.Error(errors::kNotInteger);
      if (rank == 0) {
        return c.reply.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to "
            "start from the end of the list");
      }
    } else if (EqualsIgnoreCase(opt, "COUNT") && more) {
      if (!ParseNonNegative(c.args[++i], &count, "ERR COUNT can't be negative", c.reply)) return;
    } else if (EqualsIgnoreCase(opt, "MAXLEN") && more) {
      if (!ParseNonNegative(c.args[++i], &maxlen, "ERR MAXLEN can't be negative", c.reply)) return;
    } else {
      return c.reply.Error(errors::kSyntax);
    }
  }
  bool wrong = false;
  Entry* e = FindList(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (e == nullptr) return count != -1 ? c.reply.ArrayHeader(0) : c.reply.Null();
  // A negative rank searches from the tail. Redis negates it without a check, so that
  // INT64_MIN stays negative and then matches from the first hit on, with its count test
  // wrapping around: the same arithmetic, done in unsigned, gives the same answers.
  bool from_tail = rank < 0;
  if (from_tail) rank = static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(rank));
  size_t size = list::Size(e);
  std::vector<size_t> positions;
  int64_t matches = 0;
  size_t compared = 0, index = 0;
  auto visit = [&](std::string_view v, size_t pos) {
    if (maxlen != 0 && index >= static_cast<size_t>(maxlen)) return false;
    ++index;
    compared += v.size();
    if (v != c.args[2]) return true;
    ++matches;
    if (matches < rank) return true;
    positions.push_back(pos);
    if (count == -1) return false;
    auto served = static_cast<int64_t>(static_cast<uint64_t>(matches) - static_cast<uint64_t>(rank) + 1);
    return !(count != 0 && served >= count);
  };
  if (!from_tail) {
    size_t pos = 0;
    list::ForRange(e, 0, size - 1, [&](std::string_view v) { return visit(v, pos++); });
  } else {
    size_t pos = size;
    list::ForEachReverse(e, [&](std::string_view v) { return visit(v, --pos); });
  }
  c.charge.Add(engine::RuOp::kQuery, compared, index);
  if (count != -1) {
    c.reply.ArrayHeader(positions.size());
    for (size_t p : positions) c.reply.Integer(static_cast<int64_t>(p));
    return;
  }
  positions.empty() ? c.reply.Null() : c.reply.Integer(static_cast<int64_t>(positions[0]));
}

// ---- Several keys ----

// LMOVE's work, holding both keys' shards; replies itself.
void Move(ConnCommand& c, std::string_view src, std::string_view dst, End from, End to) {
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  int db = c.session.db;
  ShardPair held(shards.ShardFor(src), shards.ShardFor(dst));
  shards.RunHolding(held.span(), [&] {
    engine::Shard& from_shard = shards.shard(held.ids[0]);
    engine::Shard& to_shard = shards.shard(shards.ShardFor(dst));
    engine::Db& from_db = from_shard.db(db);
    Entry* s = FindKey(from_shard, from_db, src, now, Lookup::kWrite);
    if (s == nullptr) return c.reply.Null();
    if (s->type() != ValueType::kList) return c.reply.Error(errors::kWrongType);
    Entry* d = FindKey(to_shard, to_shard.db(db), dst, now, Lookup::kWrite);
    if (d != nullptr && d->type() != ValueType::kList) return c.reply.Error(errors::kWrongType);
    c.reply.Bulk(MoveElement(c.server, from_db, s, src, to_shard.db(db), dst, from, to, now, c.charge));
  });
}

void CmdLMove(ConnCommand& c) {
  End from, to;
  if (!ParseEnd(c.args[3], &from, c.reply) || !ParseEnd(c.args[4], &to, c.reply)) return;
  Move(c, c.args[1], c.args[2], from, to);
}

void CmdRPopLPush(ConnCommand& c) { Move(c, c.args[1], c.args[2], End::kTail, End::kHead); }

// LMPOP/BLMPOP's arguments from args[first] (server/mpop_args.h).
bool ParseListMPop(Args args, size_t first, MPopArgs* out, protocol::ReplyWriter& reply) {
  return ParseMPopArgs(args, first, "LEFT", "RIGHT", out, reply);
}

End EndOf(const MPopArgs& parsed) { return parsed.second_end ? End::kTail : End::kHead; }

void ReplyKeyAndElements(protocol::ReplyWriter& reply, std::string_view key, const std::vector<std::string>& elements) {
  reply.ArrayHeader(2);
  reply.Bulk(key);
  reply.ArrayHeader(elements.size());
  for (const std::string& v : elements) reply.Bulk(v);
}

// The serve functions of the blocking commands (server/blocking.h). Each finds its list,
// claims the client, pops and writes the reply.

ServeFn ServePop(End end) {
  return [end](ServeAttempt& a) {
    Entry* e = a.db.Find(a.key, a.now_ms);
    if (e == nullptr) return ServeResult::kNotReady;
    if (e->type() != ValueType::kList) return ServeResult::kWrongType;
    if (!a.Claim()) return ServeResult::kClaimLost;
    std::vector<std::string> popped = PopElements(a.server, a.db, e, a.key, end, 1, a.now_ms, a.charge);
    protocol::ReplyWriter reply = a.Reply();
    reply.ArrayHeader(2);
    reply.Bulk(a.key);
    reply.Bulk(popped[0]);
    return ServeResult::kServed;
  };
}

ServeFn ServeMPop(End end, size_t count) {
  return [end, count](ServeAttempt& a) {
    Entry* e = a.db.Find(a.key, a.now_ms);
    if (e == nullptr) return ServeResult::kNotReady;
    if (e->type() != ValueType::kList) return ServeResult::kWrongType;
    if (!a.Claim()) return ServeResult::kClaimLost;
    protocol::ReplyWriter reply = a.Reply();
    ReplyKeyAndElements(reply, a.key, PopElements(a.server, a.db, e, a.key, end, count, a.now_ms, a.charge));
    return ServeResult::kServed;
  };
}

// BLMOVE's: a destination of another type answers WRONGTYPE and leaves the source alone.
ServeFn ServeMove(std::string_view destination, End from, End to) {
  return [dst = std::string(destination), from, to](ServeAttempt& a) {
    Entry* s = a.db.Find(a.key, a.now_ms);
    if (s == nullptr) return ServeResult::kNotReady;
    if (s->type() != ValueType::kList) return ServeResult::kWrongType;
    engine::Db& to_db = a.shards.shard(a.shards.ShardFor(dst)).db(a.client.db);
    Entry* d = to_db.Find(dst, a.now_ms);
    if (!a.Claim()) return ServeResult::kClaimLost;
    protocol::ReplyWriter reply = a.Reply();
    if (d != nullptr && d->type() != ValueType::kList) {
      reply.Error(errors::kWrongType);
      return ServeResult::kServed;
    }
    reply.Bulk(MoveElement(a.server, a.db, s, a.key, to_db, dst, from, to, a.now_ms, a.charge));
    return ServeResult::kServed;
  };
}

// LMPOP numkeys key... LEFT|RIGHT [COUNT count]
void CmdLMPop(ConnCommand& c) {
  MPopArgs parsed;
  if (!ParseListMPop(c.args, 1, &parsed, c.reply)) return;
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  for (std::string_view key : parsed.keys) ids.push_back(shards.ShardFor(key));
  int64_t now = c.server.clock().NowMs();
  shards.RunHolding(ids, [&] {
    for (std::string_view key : parsed.keys) {
      engine::Shard& shard = shards.shard(shards.ShardFor(key));
      engine::Db& db = shard.db(c.session.db);
      Entry* e = FindKey(shard, db, key, now, Lookup::kWrite);
      if (e == nullptr) continue;
      if (e->type() != ValueType::kList) return c.reply.Error(errors::kWrongType);
      return ReplyKeyAndElements(c.reply, key,
                                 PopElements(c.server, db, e, key, EndOf(parsed), static_cast<size_t>(parsed.count), now, c.charge));
    }
    c.reply.NullArray();
  });
}

// ---- Blocking ----

// The blocking commands answer bad input at once, else hand over to BlockOn. None is a
// coroutine itself: a pop that finds its element costs one coroutine frame, BlockOn's.

// BLPOP/BRPOP key... timeout
awaitable<void> BlockingPop(ConnCommand& c, End end) {
  int64_t timeout = 0;
  if (!ParseBlockTimeout(c.args.back(), &timeout, c.reply)) return Answered();
  BlockRequest request;
  request.keys.assign(c.args.begin() + 1, c.args.end() - 1);
  request.timeout_ms = timeout;
  request.serve = ServePop(end);
  request.woken_pop_uncounted = true;
  return BlockOn(c, std::move(request));
}

awaitable<void> CmdBLPop(ConnCommand& c) { return BlockingPop(c, End::kHead); }
awaitable<void> CmdBRPop(ConnCommand& c) { return BlockingPop(c, End::kTail); }

awaitable<void> BlockingMove(ConnCommand& c, End from, End to, std::string_view timeout_arg) {
  int64_t timeout = 0;
  if (!ParseBlockTimeout(timeout_arg, &timeout, c.reply)) return Answered();
  BlockRequest request;
  request.keys = {c.args[1]};
  request.destination = c.args[2];
  request.timeout_ms = timeout;
  request.serve = ServeMove(c.args[2], from, to);
  request.null_bulk_at_once = true;
  request.woken_pop_uncounted = true;
  return BlockOn(c, std::move(request));
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
awaitable<void> CmdBLMove(ConnCommand& c) {
  End from, to;
  if (!ParseEnd(c.args[3], &from, c.reply) || !ParseEnd(c.args[4], &to, c.reply)) return Answered();
  return BlockingMove(c, from, to, c.args[5]);
}

// BRPOPLPUSH source destination timeout
awaitable<void> CmdBRPopLPush(ConnCommand& c) { return BlockingMove(c, End::kTail, End::kHead, c.args[3]); }

// BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT count]
awaitable<void> CmdBLMPop(ConnCommand& c) {
  // Redis checks the rest before the timeout.
  MPopArgs parsed;
  if (!ParseListMPop(c.args, 2, &parsed, c.reply)) return Answered();
  int64_t timeout = 0;
  if (!ParseBlockTimeout(c.args[1], &timeout, c.reply)) return Answered();
  BlockRequest request;
  request.keys = parsed.keys;
  request.timeout_ms = timeout;
  request.serve = ServeMPop(EndOf(parsed), static_cast<size_t>(parsed.count));
  return BlockOn(c, std::move(request));
}

}  // namespace

void RegisterListCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast, kM = kDenyOom, kB = kBlocking, kNS = kNoScript;
  table.Add({"lpush", -3, kW | kM | kF, 1, 1, 1, CmdLPush, "list", "Prepends one or more elements to a list. Creates the key if it doesn't exist."});
  table.Add({"rpush", -3, kW | kM | kF, 1, 1, 1, CmdRPush, "list", "Appends one or more elements to a list. Creates the key if it doesn't exist."});
  table.Add({"lpushx", -3, kW | kM | kF, 1, 1, 1, CmdLPushX, "list", "Prepends one or more elements to a list only when the list exists."});
  table.Add({"rpushx", -3, kW | kM | kF, 1, 1, 1, CmdRPushX, "list", "Appends an element to a list only when the list exists."});
  table.Add({"lpop", -2, kW | kF, 1, 1, 1, CmdLPop, "list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped."});
  table.Add({"rpop", -2, kW | kF, 1, 1, 1, CmdRPop, "list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped."});
  table.Add({"llen", 2, kR | kF, 1, 1, 1, CmdLLen, "list", "Returns the length of a list."});
  table.Add({"lindex", 3, kR, 1, 1, 1, CmdLIndex, "list", "Returns an element from a list by its index."});
  table.Add({"lset", 4, kW | kM, 1, 1, 1, CmdLSet, "list", "Sets the value of an element in a list by its index."});
  table.Add({"lrange", 4, kR, 1, 1, 1, CmdLRange, "list", "Returns a range of elements from a list."});
  table.Add({"ltrim", 4, kW, 1, 1, 1, CmdLTrim, "list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed."});
  table.Add({"lrem", 4, kW, 1, 1, 1, CmdLRem, "list", "Removes elements from a list. Deletes the list if the last element was removed."});
  table.Add({"linsert", 5, kW | kM, 1, 1, 1, CmdLInsert, "list", "Inserts an element before or after another element in a list."});
  table.Add({"lpos", -3, kR, 1, 1, 1, CmdLPos, "list", "Returns the index of matching elements in a list."});
  table.Add({"lmove", 5, kW | kM, 1, 2, 1, CmdLMove, "list", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved."});
  table.Add({"rpoplpush", 3, kW | kM, 1, 2, 1, CmdRPopLPush, "list", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped."});
  table.Add({"lmpop", -4, kW, 0, 0, 0, CmdLMPop, "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped."});
  table.Add({"blpop", -3, kW | kNS | kB, 1, -2, 1, CmdBLPop, "list", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."});
  table.Add({"brpop", -3, kW | kNS | kB, 1, -2, 1, CmdBRPop, "list", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."});
  table.Add({"blmove", 6, kW | kM | kNS | kB, 1, 2, 1, CmdBLMove, "list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved."});
  table.Add({"brpoplpush", 4, kW | kM | kNS | kB, 1, 2, 1, CmdBRPopLPush, "list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped."});
  table.Add({"blmpop", -5, kW | kB, 0, 0, 0, CmdBLMPop, "list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped."});
}

}  // namespace lapse::server
