// File: server/zset_range.cc
//
// Sorted-set ranges (server/zset_range.h). A score range is a partition of the (score,
// member) order, so it becomes ranks with the engine's PartitionPoint. A lex range is one
// only when every score is equal, which Redis leaves unspecified otherwise; there lapse
// answers what Redis's own walks would find (see LexFirstInRange), so replies match Redis's
// even then.

#include "server/zset_range.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "engine/collection.h"
#include "engine/zset.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "server/key_util.h"

namespace lapse::server::zset_family {

namespace errors = protocol::errors;
using engine::Entry;
namespace zset = engine::zset;

namespace {

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

// Whether `m` is at or past the lower bound / at or before the upper bound.
bool LexGteMin(std::string_view m, const LexBound& b) {
  if (b.kind != LexBound::kValue) return b.kind == LexBound::kMinusInf;
  return b.exclusive ? m > b.value : m >= b.value;
}
bool LexLteMax(std::string_view m, const LexBound& b) {
  if (b.kind != LexBound::kValue) return b.kind == LexBound::kPlusInf;
  return b.exclusive ? m < b.value : m <= b.value;
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

}  // namespace

Elements Collect(const Entry* e, size_t first, size_t last, bool reverse) {
  Elements out;
  out.reserve(last - first);
  zset::ForRange(e, first, last, reverse, [&](std::string_view m, double s) { out.emplace_back(m, s); });
  return out;
}

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* r) {
  return ParseScoreBound(min, &r->min, &r->minex) && ParseScoreBound(max, &r->max, &r->maxex);
}

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* r) {
  return ParseLexBound(min, &r->min) && ParseLexBound(max, &r->max);
}

RankSpan SpanOf(const Entry* e, const ScoreRange& r) {
  size_t first = zset::PartitionPoint(e, [&](double s, std::string_view) { return r.minex ? s <= r.min : s < r.min; });
  size_t last = zset::PartitionPoint(e, [&](double s, std::string_view) { return r.maxex ? s < r.max : s <= r.max; });
  return {first, std::max(first, last)};
}

RankSpan LexSpan(const Entry* e, const LexRange& r, bool for_count) {
  std::optional<size_t> first = LexFirstInRange(e, r);
  if (!first) return {};
  if (for_count && e->owns_table()) {
    std::optional<size_t> last = LexLastInRange(e, r);
    return {*first, last && *last >= *first ? *last + 1 : *first};
  }
  return {*first, *first + RunLength(e, *first, false, [&](std::string_view m) { return LexLteMax(m, r.max); })};
}

std::optional<RankSpan> SpanOfRanks(int64_t start, int64_t end, size_t size) {
  auto len = static_cast<int64_t>(size);
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return std::nullopt;
  if (end >= len) end = len - 1;
  return RankSpan{static_cast<size_t>(start), static_cast<size_t>(end) + 1};
}

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

Elements RunRange(const Entry* e, const RangeRequest& r) {
  if (r.type == RangeType::kLex) {
    bool skip = r.offset < 0 || (r.offset > 0 && static_cast<uint64_t>(r.offset) >= zset::Size(e));
    return skip ? Elements{} : RunLexRange(e, r);
  }
  RangePlan plan = PlanRange(e, r);
  return Collect(e, plan.first, plan.last, plan.reverse);
}

}  // namespace lapse::server::zset_family
