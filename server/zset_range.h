// File: server/zset_range.h
//
// Ranges over a sorted set, as the ZRANGE family, ZCOUNT, ZLEXCOUNT and ZREMRANGEBY* read
// them: score bounds ("(1", "-inf"), lex bounds ("[a", "-", "+") and ranks, each reduced to
// ranks [first, last) of the (score, member) order, plus ZRANGE's parsed request. Parsing
// follows Redis 7.0's t_zset.c step by step, because the order of its checks decides which
// error a doubly bad command gets. Defined in zset_range.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/entry.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/zset_common.h"

namespace lapse::server::zset_family {

inline constexpr std::string_view kNotFloatRange = "ERR min or max is not a float";
inline constexpr std::string_view kNotLexRange = "ERR min or max not valid string range item";

// A score range; bounds are exclusive when given with '('.
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
};

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* r);

// A lex bound: "-" and "+" are the ends of the order; "[x" includes x, "(x" excludes it.
struct LexBound {
  enum Kind { kMinusInf, kPlusInf, kValue } kind = kValue;
  std::string value;
  bool exclusive = false;
};

struct LexRange {
  LexBound min, max;
};

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* r);

// Ranks [first, last) of the elements inside a range (first == last when none).
struct RankSpan {
  size_t first = 0, last = 0;
};

RankSpan SpanOf(const engine::Entry* e, const ScoreRange& r);

// The ranks a lex range covers, for ZLEXCOUNT and ZREMRANGEBYLEX: from the first element in
// range, as far as elements stay below the maximum (Redis's delete walk and listpack count);
// a table's count is the ranks' difference, as Redis's skiplist count is.
RankSpan LexSpan(const engine::Entry* e, const LexRange& r, bool for_count);

// Redis's rank arguments: negative counts from the end; clamped; nullopt when empty.
std::optional<RankSpan> SpanOfRanks(int64_t start, int64_t end, size_t size);

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
bool ParseRangeRequest(Args args, size_t key_index, bool store, RangeRequest* r, protocol::ReplyWriter& reply);

// The ranks a rank or score request selects, answered from last - 1 down when `reverse`.
struct RangePlan {
  size_t first = 0, last = 0;
  bool reverse = false;
};

RangePlan PlanRange(const engine::Entry* e, const RangeRequest& r);

// The elements a parsed request selects from `e`, in reply order.
Elements RunRange(const engine::Entry* e, const RangeRequest& r);

// The elements of ranks [first, last), from last - 1 down when `reverse`.
Elements Collect(const engine::Entry* e, size_t first, size_t last, bool reverse);

}  // namespace lapse::server::zset_family
