// Sorted-set family: ZADD, ZINCRBY, ZREM, ZCARD, ZCOUNT, ZLEXCOUNT, ZSCORE, ZMSCORE, ZRANK,
// ZREVRANK, the ZRANGE family (with ZRANGESTORE), ZREMRANGEBY*, ZPOPMIN/ZPOPMAX/ZMPOP,
// ZRANDMEMBER, ZSCAN, and the algebra ZUNION/ZINTER/ZDIFF (with their STORE forms) and
// ZINTERCARD. The blocking pops live with the blocking machinery and share PopZSet
// (server/zset_pop.h).
//
// Single-key commands are ShardHandlers. ZRANGESTORE, ZMPOP and the algebra touch several
// keys: they hold every shard involved for one atomic step (as the set algebra does).
//
// Every range command reduces its range to ranks [first, last) with the engine's
// PartitionPoint: a score or lex bound is a partition of the (score, member) order. Parsing
// follows Redis 7.0's t_zset.c step by step, because the order of its checks decides which
// error a doubly bad command gets (options before the key's type, ranges before options in
// ZRANGE, ...), and bad input changes nothing.
//
// Request units as for hashes and sets: reads are charged the bytes they return (a whole
// set's serialized size for the algebra's sources), writes the member bytes they store at
// the insert or replace rate, removals at the delete rate.
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
#include "server/zset_pop.h"
#include "server/zset_store.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
namespace zset = engine::zset;

using Elements = std::vector<std::pair<std::string, double>>;

namespace {

constexpr std::string_view kNotFloatRange = "ERR min or max is not a float";
constexpr std::string_view kNotLexRange = "ERR min or max not valid string range item";
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

// Elements in reply form: flat member/score pairs in RESP2, [member, score] arrays in RESP3.
void ReplyElements(protocol::ReplyWriter& reply, const Elements& elements, bool with_scores) {
  bool nested = with_scores && Resp3(reply);
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

Elements Collect(const Entry* e, size_t first, size_t last, bool reverse) {
  Elements out;
  out.reserve(last - first);
  zset::ForRange(e, first, last, reverse, [&](std::string_view m, double s) { out.emplace_back(m, s); });
  return out;
}

// ---- Ranges ----

// A score bound as Redis's zslParseRange reads it: an optional '(' (exclusive), then what
// strtod accepts of the rest as a C string, which must be all of it and not NaN ("" is 0,
// leading spaces and "inf" pass, as in Redis).
bool ParseScoreBound(std::string_view arg, double* value, bool* exclusive) {
  std::string text(AsCString(arg));
  *exclusive = !text.empty() && text[0] == '(';
  const char* start = text.c_str() + (*exclusive ? 1 : 0);
  char* end = nullptr;
  *value = std::strtod(start, &end);
  return *end == '\0' && !std::isnan(*value);
}

struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
};

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* r) {
  return ParseScoreBound(min, &r->min, &r->minex) && ParseScoreBound(max, &r->max, &r->maxex);
}

// A lex bound: "-" and "+" are the ends of the order; "[x" includes x, "(x" excludes it.
struct LexBound {
  enum Kind { kMinusInf, kPlusInf, kValue } kind = kValue;
  std::string value;
  bool exclusive = false;
};

bool ParseLexBound(std::string_view arg, LexBound* b) {
  if (arg.empty()) return false;
  switch (arg[0]) {
    case '+':
    case '-':
      // Redis checks the next byte as a C string's: "+" followed by a NUL is still "+".
      if (arg.size() > 1 && arg[1] != '\0') return false;
      b->kind = arg[0] == '+' ? LexBound::kPlusInf : LexBound::kMinusInf;
      b->exclusive = true;
      return true;
    case '(':
    case '[':
      b->kind = LexBound::kValue;
      b->exclusive = arg[0] == '(';
      b->value = std::string(arg.substr(1));
      return true;
    default:
      return false;
  }
}

struct LexRange {
  LexBound min, max;
};

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* r) {
  return ParseLexBound(min, &r->min) && ParseLexBound(max, &r->max);
}

// Whether `m` is at or past the lower bound / at or before the upper bound.
bool LexGteMin(std::string_view m, const LexBound& b) {
  if (b.kind != LexBound::kValue) return b.kind == LexBound::kMinusInf;
  return b.exclusive ? m > b.value : m >= b.value;
}
bool LexLteMax(std::string_view m, const LexBound& b) {
  if (b.kind != LexBound::kValue) return b.kind == LexBound::kPlusInf;
  return b.exclusive ? m < b.value : m <= b.value;
}

// Ranks [first, last) of the elements inside a range (first == last when none).
struct RankSpan {
  size_t first = 0, last = 0;
};

RankSpan SpanOf(const Entry* e, const ScoreRange& r) {
  size_t first = zset::PartitionPoint(e, [&](double s, std::string_view) { return r.minex ? s <= r.min : s < r.min; });
  size_t last = zset::PartitionPoint(e, [&](double s, std::string_view) { return r.maxex ? s < r.max : s <= r.max; });
  return {first, std::max(first, last)};
}

// A lex range is a partition of the order only when every score is equal (Redis leaves any
// other case unspecified); what Redis then answers is what its walks find, so lapse walks
// the same way: Redis's listpack walks, exactly, for a packed set, and its skiplist's
// searches, as binary searches, for a table. First, Redis's quick rejections.
std::string MemberAt(const Entry* e, size_t rank) {
  std::string out;
  zset::ForRange(e, rank, rank + 1, false, [&](std::string_view m, double) { out = std::string(m); });
  return out;
}

bool LexRangeMayHold(const Entry* e, const LexRange& r) {
  auto order = [](const LexBound& b) { return b.kind == LexBound::kMinusInf ? 0 : b.kind == LexBound::kValue ? 1 : 2; };
  int cmp = order(r.min) != order(r.max) ? (order(r.min) < order(r.max) ? -1 : 1)
            : r.min.kind != LexBound::kValue ? 0
            : r.min.value.compare(r.max.value);
  if (cmp > 0 || (cmp == 0 && (r.min.exclusive || r.max.exclusive))) return false;
  size_t size = zset::Size(e);
  if (size == 0) return false;
  return LexGteMin(MemberAt(e, size - 1), r.min) && LexLteMax(MemberAt(e, 0), r.max);
}

// The rank of the first element in the range (zzlFirstInLexRange / zslFirstInLexRange).
std::optional<size_t> LexFirstInRange(const Entry* e, const LexRange& r) {
  if (!LexRangeMayHold(e, r)) return std::nullopt;
  size_t first = zset::PartitionPoint(e, [&](double, std::string_view m) { return !LexGteMin(m, r.min); });
  if (first >= zset::Size(e) || !LexLteMax(MemberAt(e, first), r.max)) return std::nullopt;
  return first;
}

// The rank of the last element in the range (zzlLastInLexRange / zslLastInLexRange).
std::optional<size_t> LexLastInRange(const Entry* e, const LexRange& r) {
  if (!LexRangeMayHold(e, r)) return std::nullopt;
  size_t size = zset::Size(e);
  std::optional<size_t> last;
  if (e->owns_table()) {
    size_t end = zset::PartitionPoint(e, [&](double, std::string_view m) { return LexLteMax(m, r.max); });
    if (end > 0) last = end - 1;
  } else {
    size_t rank = size;
    zset::Walk(e, size - 1, true, [&](std::string_view m, double) {
      --rank;
      if (!LexLteMax(m, r.max)) return true;
      last = rank;
      return false;
    });
  }
  if (!last || !LexGteMin(MemberAt(e, *last), r.min)) return std::nullopt;
  return last;
}

// How many elements from rank `from` on satisfy `in` without a break.
template <typename In>
size_t RunLength(const Entry* e, size_t from, bool reverse, In in) {
  size_t n = 0;
  zset::Walk(e, from, reverse, [&](std::string_view m, double) { return in(m) ? (++n, true) : false; });
  return n;
}

// The ranks a lex range covers, for ZLEXCOUNT and ZREMRANGEBYLEX: from the first element in
// range, as far as elements stay below the maximum (Redis's delete walk and listpack count);
// a table's count is the ranks' difference, as Redis's skiplist count is.
RankSpan LexSpan(const Entry* e, const LexRange& r, bool for_count) {
  std::optional<size_t> first = LexFirstInRange(e, r);
  if (!first) return {};
  if (for_count && e->owns_table()) {
    std::optional<size_t> last = LexLastInRange(e, r);
    return {*first, last && *last >= *first ? *last + 1 : *first};
  }
  return {*first, *first + RunLength(e, *first, false, [&](std::string_view m) { return LexLteMax(m, r.max); })};
}

// Redis's rank arguments: negative counts from the end; clamped; nullopt when empty.
std::optional<RankSpan> SpanOfRanks(int64_t start, int64_t end, size_t size) {
  auto len = static_cast<int64_t>(size);
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return std::nullopt;
  if (end >= len) end = len - 1;
  return RankSpan{static_cast<size_t>(start), static_cast<size_t>(end) + 1};
}

// The ZRANGE family's request (zrangeGenericCommand).
enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

struct RangeRequest {
  RangeType type = RangeType::kAuto;
  Direction direction = Direction::kAuto;
  bool with_scores = false;
  int64_t offset = 0, limit = -1;
  int64_t start = 0, end = 0;
  ScoreRange scores;
  LexRange lex;
};

// Parses args[key_index + 1 ...]; replies Redis's error and returns false on bad input.
bool ParseRangeRequest(Args args, size_t key_index, bool store, RangeRequest* r, protocol::ReplyWriter& reply) {
  size_t min_index = key_index + 1, max_index = key_index + 2;
  for (size_t j = key_index + 3; j < args.size(); ++j) {
    std::string_view opt = AsCString(args[j]);
    size_t left = args.size() - j - 1;
    if (!store && protocol::EqualsIgnoreCase(opt, "withscores")) {
      r->with_scores = true;
    } else if (protocol::EqualsIgnoreCase(opt, "limit") && left >= 2) {
      if (!protocol::ParseInt64(args[j + 1], &r->offset) || !protocol::ParseInt64(args[j + 2], &r->limit))
        return reply.Error(errors::kNotInteger), false;
      j += 2;
    } else if (r->direction == Direction::kAuto && protocol::EqualsIgnoreCase(opt, "rev")) {
      r->direction = Direction::kReverse;
    } else if (r->type == RangeType::kAuto && protocol::EqualsIgnoreCase(opt, "bylex")) {
      r->type = RangeType::kLex;
    } else if (r->type == RangeType::kAuto && protocol::EqualsIgnoreCase(opt, "byscore")) {
      r->type = RangeType::kScore;
    } else {
      return reply.Error(errors::kSyntax), false;
    }
  }
  if (r->direction == Direction::kAuto) r->direction = Direction::kForward;
  if (r->type == RangeType::kAuto) r->type = RangeType::kRank;
  if (r->limit != -1 && r->type == RangeType::kRank)
    return reply.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"), false;
  if (r->with_scores && r->type == RangeType::kLex)
    return reply.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX"), false;
  // A reversed score or lex range is given as max, min.
  if (r->direction == Direction::kReverse && r->type != RangeType::kRank) std::swap(min_index, max_index);
  switch (r->type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      if (!protocol::ParseInt64(args[min_index], &r->start) || !protocol::ParseInt64(args[max_index], &r->end))
        return reply.Error(errors::kNotInteger), false;
      break;
    case RangeType::kScore:
      if (!ParseScoreRange(args[min_index], args[max_index], &r->scores)) return reply.Error(kNotFloatRange), false;
      break;
    case RangeType::kLex:
      if (!ParseLexRange(args[min_index], args[max_index], &r->lex)) return reply.Error(kNotLexRange), false;
      break;
  }
  return true;
}

// Z[REV]RANGEBYLEX: from the first (or last) element in range, skip `offset` elements, then
// take elements while they stay inside the far bound, as Redis's walk does.
Elements RunLexRange(const Entry* e, const RangeRequest& r) {
  bool reverse = r.direction == Direction::kReverse;
  std::optional<size_t> start = reverse ? LexLastInRange(e, r.lex) : LexFirstInRange(e, r.lex);
  Elements out;
  if (!start) return out;
  auto offset = static_cast<size_t>(r.offset);
  if (reverse ? offset > *start : *start + offset >= zset::Size(e)) return out;
  size_t from = reverse ? *start - offset : *start + offset;
  zset::Walk(e, from, reverse, [&](std::string_view m, double s) {
    if (r.limit >= 0 && out.size() >= static_cast<size_t>(r.limit)) return false;
    if (reverse ? !LexGteMin(m, r.lex.min) : !LexLteMax(m, r.lex.max)) return false;
    out.emplace_back(m, s);
    return true;
  });
  return out;
}

// The ranks a rank or score request selects, answered from last - 1 down when `reverse`.
struct RangePlan {
  size_t first = 0, last = 0;
  bool reverse = false;
};

RangePlan PlanRange(const Entry* e, const RangeRequest& r) {
  bool reverse = r.direction == Direction::kReverse;
  size_t size = zset::Size(e);
  if (r.type == RangeType::kRank) {
    std::optional<RankSpan> span = SpanOfRanks(r.start, r.end, size);
    if (!span) return {};
    // Ranks count from the end in reverse.
    if (reverse) return {size - span->last, size - span->first, true};
    return {span->first, span->last, false};
  }
  // A negative offset skips everything, as Redis's skip loop runs off the end.
  if (r.offset < 0 || (r.offset > 0 && static_cast<uint64_t>(r.offset) >= size)) return {};
  RankSpan span = SpanOf(e, r.scores);
  size_t count = span.last - span.first;
  auto offset = static_cast<size_t>(r.offset);
  if (offset >= count) return {};
  count -= offset;
  if (r.limit >= 0) count = std::min(count, static_cast<size_t>(r.limit));
  if (reverse) return {span.last - offset - count, span.last - offset, true};
  return {span.first + offset, span.first + offset + count, false};
}

// The elements a parsed request selects from `e`, in reply order.
Elements RunRange(const Entry* e, const RangeRequest& r) {
  if (r.type == RangeType::kLex) {
    bool skip = r.offset < 0 || (r.offset > 0 && static_cast<uint64_t>(r.offset) >= zset::Size(e));
    return skip ? Elements{} : RunLexRange(e, r);
  }
  RangePlan plan = PlanRange(e, r);
  return Collect(e, plan.first, plan.last, plan.reverse);
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

// ---- Algebra ----

enum class ZOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

void AggregateInto(double* target, double value, Aggregate a) {
  switch (a) {
    case Aggregate::kSum:
      *target += value;
      // inf + -inf: Redis keeps the sum at 0 rather than NaN.
      if (std::isnan(*target)) *target = 0;
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

// A source of the algebra: a sorted set, a plain set (every member scores 1), or absent.
struct Source {
  const Entry* e = nullptr;
  double weight = 1;
  size_t size() const {
    if (!e) return 0;
    return e->type() == ValueType::kZSet ? zset::Size(e) : engine::set::Size(e);
  }
  void ForEach(const zset::ElementFn& fn) const {
    if (!e) return;
    if (e->type() == ValueType::kZSet) return zset::ForEach(e, fn);
    engine::set::ForEach(e, [&](std::string_view m) { fn(m, 1.0); });
  }
  std::optional<double> Find(std::string_view m) const {
    if (!e) return std::nullopt;
    if (e->type() == ValueType::kZSet) return zset::Score(e, m);
    return engine::set::Contains(e, m) ? std::optional<double>(1.0) : std::nullopt;
  }
};

struct AlgebraOptions {
  std::vector<double> weights;
  Aggregate aggregate = Aggregate::kSum;
  bool with_scores = false;
  int64_t limit = 0;
};

// Options after the keys (zunionInterDiffGenericCommand); returns Redis's error, empty when
// they are good.
std::string_view ParseAlgebraOptions(Args args, size_t j, size_t numkeys, ZOp op, bool store, bool card_only,
                                     AlgebraOptions* o) {
  o->weights.assign(numkeys, 1.0);
  while (j < args.size()) {
    size_t remaining = args.size() - j;
    std::string_view opt = AsCString(args[j]);
    if (op != ZOp::kDiff && !card_only && remaining >= numkeys + 1 && protocol::EqualsIgnoreCase(opt, "weights")) {
      ++j;
      for (size_t i = 0; i < numkeys; ++i, ++j) {
        if (!protocol::ParseDouble(args[j], &o->weights[i])) return "ERR weight value is not a float";
      }
    } else if (op != ZOp::kDiff && !card_only && remaining >= 2 && protocol::EqualsIgnoreCase(opt, "aggregate")) {
      std::string_view how = AsCString(args[j + 1]);
      if (protocol::EqualsIgnoreCase(how, "sum")) o->aggregate = Aggregate::kSum;
      else if (protocol::EqualsIgnoreCase(how, "min")) o->aggregate = Aggregate::kMin;
      else if (protocol::EqualsIgnoreCase(how, "max")) o->aggregate = Aggregate::kMax;
      else return errors::kSyntax;
      j += 2;
    } else if (!store && !card_only && protocol::EqualsIgnoreCase(opt, "withscores")) {
      o->with_scores = true;
      ++j;
    } else if (card_only && remaining >= 2 && protocol::EqualsIgnoreCase(opt, "limit")) {
      if (!protocol::ParseInt64(args[j + 1], &o->limit) || o->limit < 0) return "ERR LIMIT can't be negative";
      j += 2;
    } else {
      return errors::kSyntax;
    }
  }
  return {};
}

// The result of the operation, unordered (callers sort or Build). `limit` stops an
// intersection early (ZINTERCARD); 0 is none.
Elements Compute(ZOp op, std::vector<Source> sources, Aggregate aggregate, size_t limit = 0) {
  Elements out;
  if (op == ZOp::kDiff) {
    const Source& first = sources[0];
    first.ForEach([&](std::string_view m, double s) {
      for (size_t j = 1; j < sources.size(); ++j) {
        if (sources[j].e == first.e || sources[j].Find(m)) return;
      }
      out.emplace_back(m, s);
    });
    return out;
  }
  // Smallest first, as Redis orders them (it decides the order floating-point sums run in).
  std::stable_sort(sources.begin(), sources.end(), [](const Source& a, const Source& b) { return a.size() < b.size(); });
  if (op == ZOp::kInter) {
    if (sources[0].size() == 0) return out;
    sources[0].ForEach([&](std::string_view m, double s) {
      if (limit != 0 && out.size() >= limit) return;
      double score = sources[0].weight * s;
      if (std::isnan(score)) score = 0;
      for (size_t j = 1; j < sources.size(); ++j) {
        std::optional<double> other = sources[j].e == sources[0].e ? std::optional<double>(s) : sources[j].Find(m);
        if (!other) return;
        AggregateInto(&score, *other * sources[j].weight, aggregate);
      }
      out.emplace_back(m, score);
    });
    return out;
  }
  std::unordered_map<std::string, size_t> seen;
  for (const Source& src : sources) {
    src.ForEach([&](std::string_view m, double s) {
      double score = src.weight * s;
      if (std::isnan(score)) score = 0;
      auto [it, fresh] = seen.try_emplace(std::string(m), out.size());
      if (fresh) out.emplace_back(m, score);
      else AggregateInto(&out[it->second].second, score, aggregate);
    });
  }
  return out;
}

void SortElements(Elements* elements) {
  std::sort(elements->begin(), elements->end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second < b.second;
    return a.first < b.first;
  });
}

// ZUNION/ZINTER/ZDIFF numkeys key... [options] and their STORE forms (destination at
// args[1]); ZINTERCARD when `card_only`.
void AlgebraGeneric(ConnCommand& c, ZOp op, bool store, bool card_only = false) {
  size_t numkeys_index = store ? 2 : 1;
  int64_t numkeys = 0;
  if (!protocol::ParseInt64(c.args[numkeys_index], &numkeys)) return c.reply.Error(errors::kNotInteger);
  if (numkeys < 1) {
    // Redis names the command as it is declared, whatever name it was called by.
    const char* names[] = {"zunion", "zinter", "zdiff"};
    std::string name = card_only ? "zintercard" : std::string(names[static_cast<int>(op)]) + (store ? "store" : "");
    return c.reply.Error("ERR at least 1 input key is needed for '" + name + "' command");
  }
  if (static_cast<uint64_t>(numkeys) > c.args.size() - numkeys_index - 1) return c.reply.Error(errors::kSyntax);
  size_t first = numkeys_index + 1, end = first + static_cast<size_t>(numkeys);
  std::vector<size_t> keys;
  for (size_t i = first; i < end; ++i) keys.push_back(i);
  if (store) keys.push_back(1);
  int64_t now = c.server.clock().NowMs();
  engine::CollectionLimits limits = c.server.collection_limits();
  enum class Outcome { kOk, kWrongType, kBadOption } outcome = Outcome::kOk;
  AlgebraOptions options;
  // Redis checks the sources' types before it parses the options: a bad option is answered
  // only once every source is of a usable type.
  std::string_view option_error = ParseAlgebraOptions(c.args, end, keys.size() - store, op, store, card_only, &options);
  Elements result;
  size_t read_bytes = 0;
  c.server.shards().RunHolding(ShardsOf(c, keys), [&] {
    std::vector<Source> sources;
    for (size_t i = first; i < end; ++i) {
      Entry* e = FindIn(c, c.args[i], now, store ? Lookup::kWrite : Lookup::kRead);
      if (e && e->type() != ValueType::kZSet && e->type() != ValueType::kSet) {
        outcome = Outcome::kWrongType;
        return;
      }
      sources.push_back({e, 1.0});
    }
    if (!option_error.empty()) {
      outcome = Outcome::kBadOption;
      return;
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      sources[i].weight = options.weights[i];
      sources[i].ForEach([&](std::string_view m, double) { read_bytes += m.size() + sizeof(double); });
    }
    result = Compute(op, std::move(sources), options.aggregate, card_only ? static_cast<size_t>(options.limit) : 0);
    constexpr const char* kStoreEvents[] = {"zunionstore", "zinterstore", "zdiffstore"};
    if (store) StoreZSet(c, DbFor(c, c.args[1]), c.args[1], result, limits, now, kStoreEvents[static_cast<int>(op)]);
  });
  if (outcome == Outcome::kWrongType) return c.reply.Error(errors::kWrongType);
  if (outcome == Outcome::kBadOption) return c.reply.Error(option_error);
  c.charge.Add(engine::RuOp::kRead, read_bytes);
  if (card_only) return c.reply.Integer(static_cast<int64_t>(result.size()));
  if (store) {
    ChargeWrite(c.charge, false, c.args[1].size() + ElementBytes(result));
    return c.reply.Integer(static_cast<int64_t>(result.size()));
  }
  SortElements(&result);
  ReplyElements(c.reply, result, options.with_scores);
}

void CmdZUnion(ConnCommand& c) { AlgebraGeneric(c, ZOp::kUnion, false); }
void CmdZInter(ConnCommand& c) { AlgebraGeneric(c, ZOp::kInter, false); }
void CmdZDiff(ConnCommand& c) { AlgebraGeneric(c, ZOp::kDiff, false); }
void CmdZUnionStore(ConnCommand& c) { AlgebraGeneric(c, ZOp::kUnion, true); }
void CmdZInterStore(ConnCommand& c) { AlgebraGeneric(c, ZOp::kInter, true); }
void CmdZDiffStore(ConnCommand& c) { AlgebraGeneric(c, ZOp::kDiff, true); }
void CmdZInterCard(ConnCommand& c) { AlgebraGeneric(c, ZOp::kInter, false, true); }

}  // namespace

// ---- Shared with the geo commands (server/zset_store.h) ----

// Stores `elements` under `key` (a fresh sorted set, as Redis builds a stored result) and
// reports `event`, or deletes the key when there are none (`del`, if it existed).
void StoreZSet(ConnCommand& c, engine::Db& db, std::string_view key, std::vector<std::pair<std::string, double>> elements,
               const engine::CollectionLimits& limits, int64_t now, const char* event) {
  if (elements.empty()) {
    if (db.Erase(key, now)) {
      db.Touch(key);
      NotifyKeyspace(c, kEventGeneric, "del", key);
    }
    return;
  }
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
  table.Add({"zunion", -3, kR, 0, 0, 0, CmdZUnion, g, "Returns the union of multiple sorted sets."});
  table.Add({"zinter", -3, kR, 0, 0, 0, CmdZInter, g, "Returns the intersect of multiple sorted sets."});
  table.Add({"zdiff", -3, kR, 0, 0, 0, CmdZDiff, g, "Returns the difference between multiple sorted sets."});
  table.Add({"zunionstore", -4, kW | kM, 1, -1, 1, CmdZUnionStore, g, "Stores the union of multiple sorted sets in a key."});
  table.Add({"zinterstore", -4, kW | kM, 1, -1, 1, CmdZInterStore, g, "Stores the intersect of multiple sorted sets in a key."});
  table.Add({"zdiffstore", -4, kW | kM, 1, -1, 1, CmdZDiffStore, g, "Stores the difference of multiple input sorted sets in a key."});
  table.Add({"zintercard", -3, kR, 0, 0, 0, CmdZInterCard, g, "Returns the number of members of the intersect of multiple sorted sets."});
}

}  // namespace lapse::server
