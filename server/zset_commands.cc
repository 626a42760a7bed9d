// Sorted-set family: ZADD, ZINCRBY, ZREM, ZCARD, ZCOUNT, ZLEXCOUNT, ZSCORE, ZMSCORE, ZRANK,
// ZREVRANK, the ZRANGE family (with ZRANGESTORE), ZREMRANGEBY*, ZPOPMIN/ZPOPMAX/ZMPOP,
// ZRANDMEMBER and ZSCAN. The algebra (ZUNION/ZINTER/ZDIFF, their STORE forms, ZINTERCARD)
// is in zset_algebra_commands.cc; the blocking pops live with the blocking machinery and
// share PopZSet (server/zset_pop.h).
//
// Single-key commands are ShardHandlers. ZRANGESTORE and ZMPOP touch several keys: they
// hold every shard involved for one atomic step (as the set algebra does).
//
// Every range command reduces its range to ranks [first, last) (server/zset_range.h). Parsing
// follows Redis 7.0's t_zset.c step by step, because the order of its checks decides which
// error a doubly bad command gets (options before the key's type, ranges before options in
// ZRANGE, ...), and bad input changes nothing.
//
// Request units as for hashes and sets: reads are charged the bytes they return, writes
// the member bytes they store at the insert or replace rate, removals at the delete rate.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/collection.h"
#include "engine/glob.h"
#include "engine/shard.h"
#include "engine/zset.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/mpop_args.h"
#include "server/server.h"
#include "server/zset_common.h"
#include "server/zset_pop.h"
#include "server/zset_range.h"
#include "server/zset_store.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
namespace zset = engine::zset;

// The family's shared pieces: server/zset_common.h and server/zset_range.h.
using namespace zset_family;

namespace {

constexpr std::string_view kCountRange =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
// A negative ZRANDMEMBER count repeats members; past this many the reply could not be sent.
constexpr int64_t kMaxRepeatedPicks = 100'000'000;
// Up to this many ZRANDMEMBER picks from a table are made one by one; more copy the set once.
constexpr size_t kFewPicks = 256;

bool Resp3(const protocol::ReplyWriter& reply) { return reply.version() == protocol::RespVersion::kResp3; }

Entry* FindZSet(ShardCommand& c, bool* wrong, Lookup kind) { return FindTyped(c, c.args[1], ValueType::kZSet, wrong, kind); }

// After a removal that may have emptied the set: Redis deletes it (`del`, after the
// command's own event).
void DeleteIfEmpty(ShardCommand& c, Entry* e) {
  if (zset::Size(e) != 0) return;
  c.db.Erase(c.args[1], c.now_ms);
  NotifyKeyspace(c, kEventGeneric, "del", c.args[1]);
}

// A score as ZSCAN answers it (a bulk string in both protocols), as Redis's ld2string.
std::string FormatScore(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(buf, static_cast<size_t>(n));
}


// Z[REV]RANGE[BYSCORE|BYLEX] key ... on one shard. Rank and score ranges are answered
// straight from the set, without copying the elements.
void RangeGeneric(ShardCommand& c, RangeType type, Direction direction) {
  RangeRequest r;
  r.type = type;
  r.direction = direction;
  if (!ParseRangeRequest(c.args, 1, false, &r, c.reply)) return;
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t bytes = c.args[1].size();
  if (e && r.type != RangeType::kLex) {
    RangePlan plan = PlanRange(e, r);
    size_t n = plan.last - plan.first;
    bool nested = r.with_scores && Resp3(c.reply);
    c.reply.ArrayHeader(r.with_scores && !nested ? 2 * n : n);
    zset::ForRange(e, plan.first, plan.last, plan.reverse, [&](std::string_view m, double s) {
      if (nested) c.reply.ArrayHeader(2);
      c.reply.Bulk(m);
      if (r.with_scores) c.reply.Double(s);
      bytes += m.size() + sizeof(double);
    });
    c.charge.Add(engine::RuOp::kRead, bytes);
    return;
  }
  Elements out;
  if (e) out = RunRange(e, r);
  c.charge.Add(engine::RuOp::kRead, bytes + ElementBytes(out));
  ReplyElements(c.reply, out, r.with_scores);
}

void CmdZRange(ShardCommand& c) { RangeGeneric(c, RangeType::kAuto, Direction::kAuto); }
void CmdZRevRange(ShardCommand& c) { RangeGeneric(c, RangeType::kRank, Direction::kReverse); }
void CmdZRangeByScore(ShardCommand& c) { RangeGeneric(c, RangeType::kScore, Direction::kForward); }
void CmdZRevRangeByScore(ShardCommand& c) { RangeGeneric(c, RangeType::kScore, Direction::kReverse); }
void CmdZRangeByLex(ShardCommand& c) { RangeGeneric(c, RangeType::kLex, Direction::kForward); }
void CmdZRevRangeByLex(ShardCommand& c) { RangeGeneric(c, RangeType::kLex, Direction::kReverse); }


// Redis 7.0 builds ZRANGESTORE's result element by element, starting as a listpack unless a
// rank range is known to be too long for one; a listpack stores -0 as 0, and the elements
// added after a conversion keep their sign. The elements, in emission order, get the scores
// Redis's result would hold.
void ZeroSignsAsListpack(Elements* elements, bool rank_range, const engine::CollectionLimits& limits) {
  if (rank_range && elements->size() > limits.zset_max_listpack_entries) return;
  for (size_t i = 0; i < elements->size(); ++i) {
    auto& [m, s] = (*elements)[i];
    if (i + 1 > limits.zset_max_listpack_entries || m.size() > limits.zset_max_listpack_value) return;
    if (s == 0) s = 0.0;
  }
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
void CmdZRangeStore(ConnCommand& c) {
  RangeRequest r;
  if (!ParseRangeRequest(c.args, 2, true, &r, c.reply)) return;
  int64_t now = c.server.clock().NowMs();
  engine::CollectionLimits limits = c.server.collection_limits();
  bool wrong_type = false;
  Elements out;
  c.server.shards().RunHolding(ShardsOf(c, {1, 2}), [&] {
    Entry* src = FindIn(c, c.args[2], now, Lookup::kRead);
    if (src && src->type() != ValueType::kZSet) {
      wrong_type = true;
      return;
    }
    if (src) out = RunRange(src, r);
    Elements stored = out;
    ZeroSignsAsListpack(&stored, r.type == RangeType::kRank, limits);
    StoreZSet(c, DbFor(c, c.args[1]), c.args[1], std::move(stored), limits, now, "zrangestore");
  });
  if (wrong_type) return c.reply.Error(errors::kWrongType);
  c.charge.Add(engine::RuOp::kRead, c.args[2].size() + ElementBytes(out));
  ChargeWrite(c.charge, false, c.args[1].size() + ElementBytes(out));
  c.reply.Integer(static_cast<int64_t>(out.size()));
}

// ---- Writes ----

struct AddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

// ZADD and ZINCRBY (zaddGenericCommand): flags, then score/member pairs.
void AddGeneric(ShardCommand& c, AddFlags f) {
  size_t i = 2;
  for (; i < c.args.size(); ++i) {
    std::string_view opt = AsCString(c.args[i]);
    if (protocol::EqualsIgnoreCase(opt, "nx")) f.nx = true;
    else if (protocol::EqualsIgnoreCase(opt, "xx")) f.xx = true;
    else if (protocol::EqualsIgnoreCase(opt, "ch")) f.ch = true;
    else if (protocol::EqualsIgnoreCase(opt, "incr")) f.incr = true;
    else if (protocol::EqualsIgnoreCase(opt, "gt")) f.gt = true;
    else if (protocol::EqualsIgnoreCase(opt, "lt")) f.lt = true;
    else break;
  }
  size_t rest = c.args.size() - i;
  if (rest == 0 || rest % 2 != 0) return c.reply.Error(errors::kSyntax);
  if (f.nx && f.xx) return c.reply.Error("ERR XX and NX options at the same time are not compatible");
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt))
    return c.reply.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  size_t pairs = rest / 2;
  if (f.incr && pairs > 1) return c.reply.Error("ERR INCR option supports a single increment-element pair");
  std::vector<double> scores(pairs);
  for (size_t p = 0; p < pairs; ++p) {
    if (!protocol::ParseDouble(c.args[i + 2 * p], &scores[p])) return c.reply.Error(errors::kNotFloat);
  }
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  engine::CollectionLimits limits = c.server.collection_limits();
  int64_t added = 0, updated = 0, processed = 0;
  double last_score = 0;
  if (!e && !f.xx) {
    // Redis picks the layout from the first member alone when it creates the key.
    bool table = limits.zset_max_listpack_entries == 0 || c.args[i + 1].size() > limits.zset_max_listpack_value;
    e = zset::Create(c.db, c.args[1], c.now_ms, table);
  }
  for (size_t p = 0; e && p < pairs; ++p) {
    std::string_view member = c.args[i + 2 * p + 1];
    double score = scores[p];
    std::optional<double> current = zset::Score(e, member);
    if (current) {
      if (f.nx) continue;
      if (f.incr) {
        score += *current;
        if (std::isnan(score)) return c.reply.Error("ERR resulting score is not a number (NaN)");
      }
      if ((f.lt && score >= *current) || (f.gt && score <= *current)) continue;
      ++processed;
      last_score = score;
      if (score != *current) {
        zset::Set(c.db, e, member, score, limits);
        ++updated;
        ChargeWrite(c.charge, true, member.size() + sizeof(double));
      }
    } else if (!f.xx) {
      zset::Set(c.db, e, member, score, limits);
      ++added;
      ++processed;
      last_score = score;
      ChargeWrite(c.charge, false, member.size() + sizeof(double));
    }
  }
  if (added + updated > 0) {
    c.db.Touch(c.args[1]);
    NotifyKeyspace(c, kEventZset, f.incr ? "zincr" : "zadd", c.args[1]);
  }
  if (added + updated == 0) c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  // Redis counts updated scores as changes, CH or not, and INCR by 0 as none.
  c.changes = static_cast<uint64_t>(added + updated);
  if (f.incr) return processed > 0 ? c.reply.Double(last_score) : c.reply.Null();
  c.reply.Integer(f.ch ? added + updated : added);
}

void CmdZAdd(ShardCommand& c) { AddGeneric(c, {}); }
void CmdZIncrBy(ShardCommand& c) {
  AddFlags f;
  f.incr = true;
  AddGeneric(c, f);
}

void CmdZRem(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  int64_t removed = 0;
  if (e) {
    for (size_t i = 2; i < c.args.size(); ++i) {
      if (!zset::Remove(c.db, e, c.args[i])) continue;
      ++removed;
      c.charge.Add(engine::RuOp::kDelete, c.args[i].size());
      if (zset::Size(e) == 0) break;
    }
    if (removed > 0) {
      c.db.Touch(c.args[1]);
      NotifyKeyspace(c, kEventZset, "zrem", c.args[1]);
      DeleteIfEmpty(c, e);
    }
  }
  if (removed == 0) c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(removed);
}

// ZREMRANGEBYRANK / BYSCORE / BYLEX key a b
void RemRangeGeneric(ShardCommand& c, RangeType type) {
  int64_t start = 0, end = 0;
  ScoreRange scores;
  LexRange lex;
  if (type == RangeType::kRank) {
    if (!protocol::ParseInt64(c.args[2], &start) || !protocol::ParseInt64(c.args[3], &end))
      return c.reply.Error(errors::kNotInteger);
  } else if (type == RangeType::kScore) {
    if (!ParseScoreRange(c.args[2], c.args[3], &scores)) return c.reply.Error(kNotFloatRange);
  } else if (!ParseLexRange(c.args[2], c.args[3], &lex)) {
    return c.reply.Error(kNotLexRange);
  }
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  if (!e) return c.reply.Integer(0);
  RankSpan span;
  if (type == RangeType::kRank) {
    std::optional<RankSpan> ranks = SpanOfRanks(start, end, zset::Size(e));
    if (!ranks) return c.reply.Integer(0);
    span = *ranks;
  } else {
    span = type == RangeType::kScore ? SpanOf(e, scores) : LexSpan(e, lex, false);
  }
  size_t bytes = 0;
  zset::ForRange(e, span.first, span.last, false, [&](std::string_view m, double) { bytes += m.size(); });
  size_t removed = zset::RemoveRange(c.db, e, span.first, span.last);
  if (removed > 0) {
    c.charge.Add(engine::RuOp::kDelete, bytes);
    c.db.Touch(c.args[1]);
    constexpr const char* kEvents[] = {"zremrangebyrank", "zremrangebyscore", "zremrangebylex"};
    NotifyKeyspace(c, kEventZset, kEvents[type == RangeType::kRank ? 0 : type == RangeType::kScore ? 1 : 2], c.args[1]);
    DeleteIfEmpty(c, e);
  }
  c.reply.Integer(static_cast<int64_t>(removed));
}

void CmdZRemRangeByRank(ShardCommand& c) { RemRangeGeneric(c, RangeType::kRank); }
void CmdZRemRangeByScore(ShardCommand& c) { RemRangeGeneric(c, RangeType::kScore); }
void CmdZRemRangeByLex(ShardCommand& c) { RemRangeGeneric(c, RangeType::kLex); }

// ---- Reads ----

void CmdZCard(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  c.reply.Integer(e ? static_cast<int64_t>(zset::Size(e)) : 0);
}

void CountGeneric(ShardCommand& c, bool lex) {
  ScoreRange scores;
  LexRange range;
  if (lex ? !ParseLexRange(c.args[2], c.args[3], &range) : !ParseScoreRange(c.args[2], c.args[3], &scores))
    return c.reply.Error(lex ? kNotLexRange : kNotFloatRange);
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  if (!e) return c.reply.Integer(0);
  RankSpan span = lex ? LexSpan(e, range, true) : SpanOf(e, scores);
  c.reply.Integer(static_cast<int64_t>(span.last - span.first));
}

void CmdZCount(ShardCommand& c) { CountGeneric(c, false); }
void CmdZLexCount(ShardCommand& c) { CountGeneric(c, true); }

void CmdZScore(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size());
  std::optional<double> s = e ? zset::Score(e, c.args[2]) : std::nullopt;
  s ? c.reply.Double(*s) : c.reply.Null();
}

void CmdZMScore(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t bytes = c.args[1].size();
  c.reply.ArrayHeader(c.args.size() - 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    bytes += c.args[i].size();
    std::optional<double> s = e ? zset::Score(e, c.args[i]) : std::nullopt;
    s ? c.reply.Double(*s) : c.reply.Null();
  }
  c.charge.Add(engine::RuOp::kRead, bytes);
}

void RankGeneric(ShardCommand& c, bool reverse) {
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size());
  std::optional<size_t> rank = e ? zset::Rank(e, c.args[2]) : std::nullopt;
  if (!rank) return c.reply.Null();
  c.reply.Integer(static_cast<int64_t>(reverse ? zset::Size(e) - 1 - *rank : *rank));
}

void CmdZRank(ShardCommand& c) { RankGeneric(c, false); }
void CmdZRevRank(ShardCommand& c) { RankGeneric(c, true); }

// ZRANDMEMBER key [count [WITHSCORES]]
void CmdZRandMember(ShardCommand& c) {
  int64_t count = 0;
  bool with_count = c.args.size() >= 3, with_scores = false;
  if (with_count) {
    // Redis's order: the count's range, then the syntax, then WITHSCORES's tighter range.
    if (!protocol::ParseInt64(c.args[2], &count)) return c.reply.Error(errors::kNotInteger);
    if (count < -INT64_MAX) return c.reply.Error(kCountRange);
    if (c.args.size() > 4 || (c.args.size() == 4 && !protocol::EqualsIgnoreCase(AsCString(c.args[3]), "WITHSCORES")))
      return c.reply.Error(errors::kSyntax);
    with_scores = c.args.size() == 4;
    if (with_scores && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) return c.reply.Error("ERR value is out of range");
    // Redis would start writing billions of repeated members and lose the connection.
    if (count < -kMaxRepeatedPicks) return c.reply.Error("ERR count is too large for one reply");
  }
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (!with_count) {
    c.charge.Add(engine::RuOp::kRead, c.args[1].size());
    if (!e) return c.reply.Null();
    std::string buffer;
    return c.reply.Bulk(zset::Random(e, NextRandom(), &buffer).first);
  }
  if (!e || count == 0) return c.reply.ArrayHeader(0);
  size_t size = zset::Size(e);
  Elements picked;
  // A pick by rank costs a table a walk over its leaf sizes: many picks copy the set once.
  auto few = [&](size_t n) { return e->owns_table() && n <= kFewPicks; };
  if (count < 0) {
    auto n = static_cast<size_t>(-count);
    picked.reserve(n);
    if (few(n)) {
      std::string buffer;
      for (size_t i = 0; i < n; ++i) {
        auto [m, s] = zset::Random(e, NextRandom(), &buffer);
        picked.emplace_back(m, s);
      }
    } else {
      Elements all = Collect(e, 0, size, false);
      for (size_t i = 0; i < n; ++i) picked.push_back(all[NextRandom() % all.size()]);
    }
  } else if (static_cast<size_t>(count) >= size) {
    // The whole set, from the highest score down: Redis's set iterators walk from the tail.
    picked = Collect(e, 0, size, true);
  } else if (few(static_cast<size_t>(count)) && static_cast<size_t>(count) * 4 <= size) {
    // Distinct ranks drawn until there are enough (at most a quarter of the set).
    std::unordered_set<size_t> ranks;
    while (ranks.size() < static_cast<size_t>(count)) {
      size_t rank = NextRandom() % size;
      if (!ranks.insert(rank).second) continue;
      zset::ForRange(e, rank, rank + 1, false, [&](std::string_view m, double s) { picked.emplace_back(m, s); });
    }
  } else {
    // Distinct members: a partial Fisher-Yates shuffle.
    Elements all = Collect(e, 0, size, false);
    auto n = static_cast<size_t>(count);
    for (size_t i = 0; i < n; ++i) std::swap(all[i], all[i + NextRandom() % (all.size() - i)]);
    all.resize(n);
    picked = std::move(all);
  }
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + ElementBytes(picked));
  ReplyElements(c.reply, picked, with_scores);
}

void CmdZScan(ShardCommand& c) {
  uint64_t cursor = 0;
  if (!ParseScanCursor(c.args[2], &cursor)) return c.reply.Error("ERR invalid cursor");
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (!e) {
    c.charge.Add(engine::RuOp::kQuery, 0, 0);
    c.reply.ArrayHeader(2);
    c.reply.Bulk("0");
    return c.reply.ArrayHeader(0);
  }
  CollectionScanOptions options;
  if (!ParseCollectionScanOptions(c.args, 3, &options, c.reply)) return;
  Elements found;
  size_t visited = 0;
  uint64_t next = zset::Scan(e, cursor, static_cast<size_t>(options.count), [&](std::string_view m, double s) {
    ++visited;
    if (options.pattern && !engine::GlobMatch(*options.pattern, m)) return;
    found.emplace_back(m, s);
  });
  c.charge.Add(engine::RuOp::kQuery, ElementBytes(found), visited);
  c.reply.ArrayHeader(2);
  c.reply.Bulk(std::to_string(next));
  c.reply.ArrayHeader(2 * found.size());
  for (const auto& [m, s] : found) {
    c.reply.Bulk(m);
    c.reply.Bulk(FormatScore(s));
  }
}

// ---- Pops ----

void CmdZPopGeneric(ShardCommand& c, bool from_max) {
  if (c.args.size() > 3) return c.reply.Error(errors::kSyntax);
  int64_t count = -1;  // no count given: one element, always a flat reply
  if (c.args.size() == 3) {
    if (!protocol::ParseInt64(c.args[2], &count) || count < 0) return c.reply.Error(errors::kNotPositive);
  }
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  if (!e || count == 0) return c.reply.ArrayHeader(0);
  std::vector<ZPopped> popped = PopZSet(c.server, c.db, c.args[1], from_max, count < 0 ? 1 : static_cast<size_t>(count), c.now_ms);
  size_t bytes = 0;
  for (const ZPopped& p : popped) bytes += p.member.size();
  c.charge.Add(engine::RuOp::kDelete, bytes);
  bool nested = Resp3(c.reply) && count != -1;
  ReplyPopped(c.reply, nested ? PopReplyShape::kNested : PopReplyShape::kFlat, c.args[1], popped);
}

void CmdZPopMin(ShardCommand& c) { CmdZPopGeneric(c, false); }
void CmdZPopMax(ShardCommand& c) { CmdZPopGeneric(c, true); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
void CmdZMPop(ConnCommand& c) {
  MPopArgs parsed;
  if (!ParseMPopArgs(c.args, 1, "MIN", "MAX", &parsed, c.reply)) return;
  bool from_max = parsed.second_end;
  int64_t count = parsed.count;
  size_t where = 2 + parsed.keys.size();
  std::vector<size_t> keys;
  for (size_t i = 2; i < where; ++i) keys.push_back(i);
  int64_t now = c.server.clock().NowMs();
  bool wrong_type = false;
  std::string_view popped_key;
  std::vector<ZPopped> popped;
  c.server.shards().RunHolding(ShardsOf(c, keys), [&] {
    // The first key that exists decides: a sorted set is popped, anything else is WRONGTYPE.
    for (size_t i : keys) {
      Entry* e = FindIn(c, c.args[i], now, Lookup::kWrite);
      if (!e) continue;
      if (e->type() != ValueType::kZSet) {
        wrong_type = true;
        return;
      }
      popped_key = c.args[i];
      popped = PopZSet(c.server, DbFor(c, popped_key), popped_key, from_max, static_cast<size_t>(count), now);
      return;
    }
  });
  if (wrong_type) return c.reply.Error(errors::kWrongType);
  size_t bytes = 0;
  for (const ZPopped& p : popped) bytes += p.member.size();
  c.charge.Add(engine::RuOp::kDelete, bytes);
  if (popped.empty()) return c.reply.NullArray();
  ReplyPopped(c.reply, PopReplyShape::kKeyNested, popped_key, popped);
}


}  // namespace

// ---- Shared with the algebra (server/zset_common.h) ----

namespace zset_family {

// Elements in reply form: flat member/score pairs in RESP2, [member, score] arrays in RESP3.
void ReplyElements(protocol::ReplyWriter& reply, const Elements& elements, bool with_scores) {
  bool nested = with_scores && reply.version() == protocol::RespVersion::kResp3;
  reply.ArrayHeader(with_scores && !nested ? 2 * elements.size() : elements.size());
  for (const auto& [m, s] : elements) {
    if (nested) reply.ArrayHeader(2);
    reply.Bulk(m);
    if (with_scores) reply.Double(s);
  }
}

size_t ElementBytes(const Elements& elements) {
  size_t bytes = 0;
  for (const auto& [m, s] : elements) bytes += m.size() + sizeof(double);
  return bytes;
}

std::vector<uint32_t> ShardsOf(ConnCommand& c, const std::vector<size_t>& indexes) {
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  for (size_t i : indexes) ids.push_back(shards.ShardFor(c.args[i]));
  return ids;
}

engine::Db& DbFor(ConnCommand& c, std::string_view key) {
  ShardSet& shards = c.server.shards();
  return shards.shard(shards.ShardFor(key)).db(c.session.db);
}

Entry* FindIn(ConnCommand& c, std::string_view key, int64_t now, Lookup kind) {
  ShardSet& shards = c.server.shards();
  engine::Shard& shard = shards.shard(shards.ShardFor(key));
  return FindKey(shard, shard.db(c.session.db), key, now, kind);
}

}  // namespace zset_family

// ---- Shared with the geo commands (server/zset_store.h) ----

// Stores `elements` under `key` (a fresh sorted set, as Redis builds a stored result) and
// reports `event`, or deletes the key when there are none (`del`, if it existed).
void StoreZSet(ConnCommand& c, engine::Db& db, std::string_view key, std::vector<std::pair<std::string, double>> elements,
               const engine::CollectionLimits& limits, int64_t now, const char* event) {
  c.changes = 0;
  if (elements.empty()) {
    if (db.Erase(key, now)) {
      db.Touch(key);
      NotifyKeyspace(c, kEventGeneric, "del", key);
      c.changes = 1;
    }
    return;
  }
  c.changes = 1;
  zset::Build(db, key, std::move(elements), limits, now);
  db.Touch(key);
  NotifyKeyspace(c, kEventZset, event, key);
}

// ---- Shared with the blocking pops (server/zset_pop.h) ----

std::vector<ZPopped> PopZSet(const Server& server, engine::Db& db, std::string_view key, bool from_max, size_t count,
                             int64_t now_ms) {
  std::vector<ZPopped> out;
  Entry* e = db.Find(key, now_ms);
  if (!e || e->type() != ValueType::kZSet || count == 0) return out;
  size_t size = zset::Size(e);
  size_t n = std::min(count, size);
  size_t first = from_max ? size - n : 0;
  zset::ForRange(e, first, first + n, from_max, [&](std::string_view m, double s) { out.push_back({std::string(m), s}); });
  // The key is copied first: it may live in the entry that Erase frees.
  std::string k(key);
  if (n != size) zset::RemoveRange(db, e, first, first + n);
  server.keyspace_events().Notify(kEventZset, from_max ? "zpopmax" : "zpopmin", k, db.index());
  if (n == size) {
    db.Erase(k, now_ms);
    server.keyspace_events().Notify(kEventGeneric, "del", k, db.index());
  }
  db.Touch(k);
  return out;
}

void ReplyPopped(protocol::ReplyWriter& reply, PopReplyShape shape, std::string_view key, const std::vector<ZPopped>& popped) {
  bool nested = shape == PopReplyShape::kNested || shape == PopReplyShape::kKeyNested;
  switch (shape) {
    case PopReplyShape::kFlat:
      reply.ArrayHeader(2 * popped.size());
      break;
    case PopReplyShape::kNested:
      reply.ArrayHeader(popped.size());
      break;
    case PopReplyShape::kKeyFlat:
      reply.ArrayHeader(2 * popped.size() + 1);
      reply.Bulk(key);
      break;
    case PopReplyShape::kKeyNested:
      reply.ArrayHeader(2);
      reply.Bulk(key);
      reply.ArrayHeader(popped.size());
      break;
  }
  for (const ZPopped& p : popped) {
    if (nested) reply.ArrayHeader(2);
    reply.Bulk(p.member);
    reply.Double(p.score);
  }
}

void RegisterZSetCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast, kM = kDenyOom;
  const std::string g = "sorted-set";
  table.Add({"zadd", -4, kW | kM | kF, 1, 1, 1, CmdZAdd, g, "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist."});
  table.Add({"zincrby", 4, kW | kM | kF, 1, 1, 1, CmdZIncrBy, g, "Increments the score of a member in a sorted set."});
  table.Add({"zrem", -3, kW | kF, 1, 1, 1, CmdZRem, g, "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed."});
  table.Add({"zcard", 2, kR | kF, 1, 1, 1, CmdZCard, g, "Returns the number of members in a sorted set."});
  table.Add({"zcount", 4, kR | kF, 1, 1, 1, CmdZCount, g, "Returns the count of members in a sorted set that have scores within a range."});
  table.Add({"zlexcount", 4, kR | kF, 1, 1, 1, CmdZLexCount, g, "Returns the number of members in a sorted set within a lexicographical range."});
  table.Add({"zscore", 3, kR | kF, 1, 1, 1, CmdZScore, g, "Returns the score of a member in a sorted set."});
  table.Add({"zmscore", -3, kR | kF, 1, 1, 1, CmdZMScore, g, "Returns the score of one or more members in a sorted set."});
  table.Add({"zrank", 3, kR | kF, 1, 1, 1, CmdZRank, g, "Returns the index of a member in a sorted set ordered by ascending scores."});
  table.Add({"zrevrank", 3, kR | kF, 1, 1, 1, CmdZRevRank, g, "Returns the index of a member in a sorted set ordered by descending scores."});
  table.Add({"zrange", -4, kR, 1, 1, 1, CmdZRange, g, "Returns members in a sorted set within a range of indexes."});
  table.Add({"zrangestore", -5, kW | kM, 1, 2, 1, CmdZRangeStore, g, "Stores a range of members from sorted set in a key."});
  table.Add({"zrevrange", -4, kR, 1, 1, 1, CmdZRevRange, g, "Returns members in a sorted set within a range of indexes in reverse order."});
  table.Add({"zrangebyscore", -4, kR, 1, 1, 1, CmdZRangeByScore, g, "Returns members in a sorted set within a range of scores."});
  table.Add({"zrevrangebyscore", -4, kR, 1, 1, 1, CmdZRevRangeByScore, g, "Returns members in a sorted set within a range of scores in reverse order."});
  table.Add({"zrangebylex", -4, kR, 1, 1, 1, CmdZRangeByLex, g, "Returns members in a sorted set within a lexicographical range."});
  table.Add({"zrevrangebylex", -4, kR, 1, 1, 1, CmdZRevRangeByLex, g, "Returns members in a sorted set within a lexicographical range in reverse order."});
  table.Add({"zremrangebyrank", 4, kW, 1, 1, 1, CmdZRemRangeByRank, g, "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed."});
  table.Add({"zremrangebyscore", 4, kW, 1, 1, 1, CmdZRemRangeByScore, g, "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed."});
  table.Add({"zremrangebylex", 4, kW, 1, 1, 1, CmdZRemRangeByLex, g, "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed."});
  table.Add({"zpopmin", -2, kW | kF, 1, 1, 1, CmdZPopMin, g, "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."});
  table.Add({"zpopmax", -2, kW | kF, 1, 1, 1, CmdZPopMax, g, "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."});
  table.Add({"zmpop", -4, kW, 0, 0, 0, CmdZMPop, g, "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped."});
  table.Add({"zrandmember", -2, kR, 1, 1, 1, CmdZRandMember, g, "Returns one or more random members from a sorted set."});
  table.Add({"zscan", -3, kR, 1, 1, 1, CmdZScan, g, "Iterates over members and scores of a sorted set."});
  RegisterZSetAlgebraCommands(table);
}

}  // namespace lapse::server
