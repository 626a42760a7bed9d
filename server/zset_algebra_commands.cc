// File: server/zset_algebra_commands.cc
//
// Sorted-set algebra: ZUNION, ZINTER and ZDIFF, their STORE forms, and ZINTERCARD. Sources
// may be sorted sets or plain sets (whose members score 1), as in Redis. Each command holds
// every shard its keys live on for one atomic step (as the set algebra does), so no client
// sees a STORE half done.
//
// The order of checks follows Redis 7.0's zunionInterDiffGenericCommand, because it decides
// which error a doubly bad command gets: numkeys first, then the sources' types, then the
// options. Sources are combined smallest first, as Redis orders them, since that decides the
// order in which floating-point sums run. Reads are charged every source's members and
// scores (a whole-collection read); a STORE is charged its result at the insert rate.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/collection.h"
#include "engine/shard.h"
#include "engine/zset.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/server.h"
#include "server/zset_common.h"
#include "server/zset_store.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
namespace zset = engine::zset;
using zset_family::DbFor;
using zset_family::ElementBytes;
using zset_family::Elements;
using zset_family::FindIn;
using zset_family::ReplyElements;
using zset_family::ShardsOf;

namespace {

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

void RegisterZSetAlgebraCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kM = kDenyOom;
  const std::string g = "sorted-set";
  table.Add({"zunion", -3, kR, 0, 0, 0, CmdZUnion, g, "Returns the union of multiple sorted sets."});
  table.Add({"zinter", -3, kR, 0, 0, 0, CmdZInter, g, "Returns the intersect of multiple sorted sets."});
  table.Add({"zdiff", -3, kR, 0, 0, 0, CmdZDiff, g, "Returns the difference between multiple sorted sets."});
  table.Add({"zunionstore", -4, kW | kM, 1, -1, 1, CmdZUnionStore, g, "Stores the union of multiple sorted sets in a key."});
  table.Add({"zinterstore", -4, kW | kM, 1, -1, 1, CmdZInterStore, g, "Stores the intersect of multiple sorted sets in a key."});
  table.Add({"zdiffstore", -4, kW | kM, 1, -1, 1, CmdZDiffStore, g, "Stores the difference of multiple input sorted sets in a key."});
  table.Add({"zintercard", -3, kR, 0, 0, 0, CmdZInterCard, g, "Returns the number of members of the intersect of multiple sorted sets."});
}

}  // namespace lapse::server
