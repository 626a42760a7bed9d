// SORT and SORT_RO (Redis 7.0): the elements of a list, set or sorted set, sorted by their own
// value or by the value of other keys (BY), answered as themselves or as other keys' values
// (GET), optionally stored as a list (STORE, SORT only).
//
// How Redis 7.0 behaves, which this file follows step by step:
//  - Options are read left to right; the first bad one answers its error (a bad LIMIT number
//    "not an integer", anything else "syntax error") before the key is even looked at. Then
//    a key of another type answers WRONGTYPE; a missing key sorts as an empty list.
//  - A BY pattern without '*' means "do not sort" (BY nosort), and once seen it sticks even
//    if a later BY has a '*'. A list or sorted set is then answered in its own order
//    (reversed for DESC), a set in its layout's order, except that a set is sorted with
//    ALPHA after all when the result is stored or a script asks: Redis wants those results
//    deterministic.
//  - Numeric sorting parses every weight with strtod (a missing BY key weighs 0) and breaks
//    ties by comparing the elements' bytes; a weight that is not a number fails the whole
//    command once everything was looked up. ALPHA compares with strcoll (lapse, like Debian's
//    redis-server in the C.UTF-8 locale, compares bytes up to the first NUL) when replying
//    and with a full byte comparison when storing; a missing BY key sorts first. ALPHA ties
//    keep the loading order, as glibc's qsort (a merge sort) keeps it.
//  - LIMIT offset count is clamped to the elements; a negative count means "to the end".
//  - STORE replaces the destination whatever it held (its TTL too) with a list, deletes it
//    when the result is empty, and replies how many elements it stored; a missing GET value
//    is stored as "".
//
// BY and GET name keys only known once the source is read, possibly on any shard, so SORT is
// a ConnHandler: it holds every shard for one atomic step when a pattern will be looked up,
// else only the source's and destination's shards. Its table entry declares no key
// positions (first key 0), so that EXEC and scripts hold every shard for it too.
//
// Everything read is copied out of the shards before the next lookup: a lookup may delete an
// expired key, which may move other entries of its Db.
//
// Request units: a read of the source key and of every element loaded, a read of every key a
// pattern looks up (with the value it finds), and a write of what STORE stores (an insert, or
// a replace when the destination held something; a delete of the destination when the result
// is empty and it existed).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "engine/collection.h"
#include "engine/list.h"
#include "engine/zset.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::ValueType;
using protocol::AsCString;
using protocol::EqualsIgnoreCase;
namespace list = engine::list;
namespace set = engine::set;

namespace {

constexpr std::string_view kScoreError = "ERR One or more scores can't be converted into double";

// ---- Sorted sets ----

// The members of a sorted set, lowest score first (ties by member, as the set orders them).
// nullopt answers WRONGTYPE.
//
// A sorted set's members in score order. Redis 7.0's SORT converts a listpack sorted set to a
// skiplist before it reads it (even for SORT_RO, even when the command then fails on a
// score), so OBJECT ENCODING answers "skiplist" afterwards: lapse does the same. The
// conversion may reallocate the entry: `e` is updated for the caller.
std::optional<std::vector<std::string>> ZSetMembersInOrder(engine::Db& db, Entry*& e) {
  e = engine::zset::ToTable(db, e);
  std::vector<std::string> members;
  members.reserve(engine::zset::Size(e));
  engine::zset::ForEach(e, [&](std::string_view member, double) { members.emplace_back(member); });
  return members;
}

// ---- Options ----

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dont_sort = false;               // a BY pattern without '*' was given
  std::optional<std::string_view> by;   // the last BY pattern
  std::vector<std::string_view> gets;   // GET patterns, in order
  std::optional<std::string_view> store;
  int64_t offset = 0;
  int64_t count = -1;  // -1: to the end
};

// Redis compares option names and looks for '*' as C strings: nothing after a NUL byte counts.
bool HasStar(std::string_view pattern) { return AsCString(pattern).find('*') != std::string_view::npos; }

// Parses args[2...]; replies Redis's error and returns false on the first bad option.
bool ParseOptions(Args args, bool read_only, SortOptions* o, protocol::ReplyWriter& reply) {
  for (size_t j = 2; j < args.size(); ++j) {
    std::string_view opt = AsCString(args[j]);
    size_t left = args.size() - j - 1;
    if (EqualsIgnoreCase(opt, "ASC")) {
      o->desc = false;
    } else if (EqualsIgnoreCase(opt, "DESC")) {
      o->desc = true;
    } else if (EqualsIgnoreCase(opt, "ALPHA")) {
      o->alpha = true;
    } else if (EqualsIgnoreCase(opt, "LIMIT") && left >= 2) {
      if (!protocol::ParseInt64(args[j + 1], &o->offset) || !protocol::ParseInt64(args[j + 2], &o->count)) {
        reply.Error(errors::kNotInteger);
        return false;
      }
      j += 2;
    } else if (!read_only && EqualsIgnoreCase(opt, "STORE") && left >= 1) {
      o->store = args[++j];
    } else if (EqualsIgnoreCase(opt, "BY") && left >= 1) {
      o->by = args[++j];
      if (!HasStar(*o->by)) o->dont_sort = true;
    } else if (EqualsIgnoreCase(opt, "GET") && left >= 1) {
      o->gets.push_back(args[++j]);
    } else {
      reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// ---- Patterns ----

// A BY or GET pattern cut where Redis cuts it: "#" is the element itself; otherwise the first
// '*' is replaced by the element, and a "->field" after it (with a non-empty field) reads
// that field of a hash instead of a string. Without a '*' nothing is looked up. The marks are
// found as C strings find them, but the parts keep any bytes after a NUL.
struct Pattern {
  enum class Kind { kSelf, kNothing, kString, kHashField } kind = Kind::kNothing;
  std::string_view prefix, postfix, field;
};

Pattern ParsePattern(std::string_view text) {
  std::string_view c = AsCString(text);
  Pattern p;
  if (c == "#") {
    p.kind = Pattern::Kind::kSelf;
    return p;
  }
  size_t star = c.find('*');
  if (star == std::string_view::npos) return p;
  p.kind = Pattern::Kind::kString;
  p.prefix = text.substr(0, star);
  p.postfix = text.substr(star + 1);
  size_t arrow = c.find("->", star + 1);
  if (arrow != std::string_view::npos && arrow + 2 < c.size()) {
    p.kind = Pattern::Kind::kHashField;
    p.postfix = text.substr(star + 1, arrow - star - 1);
    p.field = text.substr(arrow + 2);
  }
  return p;
}

// Whether any pattern will look up keys: SORT then needs every shard.
bool LooksUpKeys(const SortOptions& o) {
  if (o.by && !o.dont_sort) return true;
  return std::any_of(o.gets.begin(), o.gets.end(), [](std::string_view get) {
    Pattern::Kind kind = ParsePattern(get).kind;
    return kind == Pattern::Kind::kString || kind == Pattern::Kind::kHashField;
  });
}

// Reads pattern-named keys of one database on the shards the step holds, as Redis's
// lookupKeyRead does (keyspace hits and misses, lazy expiry, access time), charging each.
class KeyReader {
 public:
  KeyReader(ShardSet& shards, int db, int64_t now, RequestCharge& charge)
      : shards_(shards), db_(db), now_(now), charge_(charge) {}

  // The value `p` names for `element`; nullopt when the key is missing or of another type,
  // or the field is missing.
  std::optional<std::string> Read(const Pattern& p, std::string_view element) {
    if (p.kind == Pattern::Kind::kSelf) return std::string(element);
    if (p.kind == Pattern::Kind::kNothing) return std::nullopt;
    std::string key;
    key.reserve(p.prefix.size() + element.size() + p.postfix.size());
    key.append(p.prefix).append(element).append(p.postfix);
    engine::Shard& shard = shards_.shard(shards_.ShardFor(key));
    Entry* e = FindKey(shard, shard.db(db_), key, now_, Lookup::kRead);
    std::optional<std::string> value;
    if (e != nullptr) {
      engine::NoteAccess(e, now_);
      if (p.kind == Pattern::Kind::kString && e->type() == ValueType::kString) {
        value.emplace(e->value());
      } else if (p.kind == Pattern::Kind::kHashField && e->type() == ValueType::kHash) {
        if (auto v = engine::hash::Get(e, p.field)) value.emplace(*v);
      }
    }
    charge_.Add(engine::RuOp::kRead, key.size() + p.field.size() + (value ? value->size() : 0));
    return value;
  }

 private:
  ShardSet& shards_;
  int db_;
  int64_t now_;
  RequestCharge& charge_;
};

// ---- Ranges ----

// LIMIT's range over `n` elements, inclusive, in Redis's arithmetic (clamped first so that
// huge values cannot overflow). end < start means nothing.
struct Range {
  int64_t start;
  int64_t end;
  size_t size() const { return end >= start ? static_cast<size_t>(end - start + 1) : 0; }
};

Range ClampLimit(int64_t offset, int64_t count, int64_t n) {
  int64_t start = std::min(std::max<int64_t>(offset, 0), n);
  count = std::min(std::max<int64_t>(count, -1), n);
  int64_t end = count < 0 ? n - 1 : start + count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  if (end >= n) end = n - 1;
  return {start, end};
}

// ---- Loading ----

// What SORT works on: the elements, in the order they were loaded, and the range of them to
// answer.
struct Loaded {
  std::vector<std::string> elements;
  Range range{0, -1};
};

size_t Bytes(const std::vector<std::string>& strings) {
  size_t bytes = 0;
  for (const std::string& s : strings) bytes += s.size();
  return bytes;
}

// An ordered type with nothing to sort loads only the range, in its own order read from the
// tail for DESC; the range is then all of what was loaded.
Loaded LoadOrderedRange(const Entry* list, std::vector<std::string>* zset_members, size_t n, Range range, bool desc) {
  Loaded out;
  if (range.size() == 0) return out;
  auto first = static_cast<size_t>(desc ? static_cast<int64_t>(n) - 1 - range.end : range.start);
  size_t last = first + range.size() - 1;
  if (list != nullptr) {
    list::ForRange(list, first, last, [&](std::string_view v) {
      out.elements.emplace_back(v);
      return true;
    });
  } else {
    out.elements.assign(std::make_move_iterator(zset_members->begin() + static_cast<ptrdiff_t>(first)),
                        std::make_move_iterator(zset_members->begin() + static_cast<ptrdiff_t>(last) + 1));
  }
  if (desc) std::reverse(out.elements.begin(), out.elements.end());
  out.range = {0, static_cast<int64_t>(out.elements.size()) - 1};
  return out;
}

// Loads the source `e` (nullptr: a missing key, an empty list). nullopt: a type SORT refuses.
std::optional<Loaded> Load(engine::Db& db, Entry* e, const SortOptions& o) {
  std::vector<std::string> members;
  size_t n = 0;
  const Entry* list = nullptr;
  // Lists and sorted sets have an order of their own; a set's is only its layout's.
  bool ordered = e == nullptr || e->type() != ValueType::kSet;
  if (e == nullptr) {
    n = 0;
  } else if (e->type() == ValueType::kList) {
    list = e;
    n = list::Size(e);
  } else if (e->type() == ValueType::kSet) {
    set::ForEach(e, [&](std::string_view m) { members.emplace_back(m); });
    n = members.size();
  } else if (e->type() == ValueType::kZSet) {
    auto in_order = ZSetMembersInOrder(db, e);
    if (!in_order) return std::nullopt;
    members = std::move(*in_order);
    n = members.size();
  } else {
    return std::nullopt;
  }
  Range range = ClampLimit(o.offset, o.count, static_cast<int64_t>(n));
  if (ordered && o.dont_sort) return LoadOrderedRange(list, &members, n, range, o.desc);
  if (list != nullptr) list::ForEach(list, [&](std::string_view v) { members.emplace_back(v); });
  return Loaded{std::move(members), range};
}

// ---- Sorting ----

// Redis's compareStringObjects: bytes, then length.
int CompareBytes(std::string_view a, std::string_view b) {
  size_t common = std::min(a.size(), b.size());
  int cmp = common == 0 ? 0 : std::memcmp(a.data(), b.data(), common);
  if (cmp != 0) return cmp;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

// strcoll as Debian's redis-server runs it (C.UTF-8, whose collation is strcmp): bytes up to
// the first NUL, unsigned.
int Collate(std::string_view a, std::string_view b) { return CompareBytes(AsCString(a), AsCString(b)); }

// A weight as Redis parses it: strtod over the whole value (as a C string), refusing what is
// left over, an overflow or underflow, and NaN. An empty value weighs 0. (Redis does not clear
// errno before strtod, so after one out-of-range weight it may refuse every later number until
// some failed system call changes errno; lapse judges each weight on its own.)
bool ParseWeight(std::string_view text, double* out) {
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(copy.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*out);
}

struct Sortable {
  std::string element;
  double score = 0;
  std::optional<std::string> by;  // ALPHA with BY: the weight's text; nullopt when missing
};

enum class Order { kNumeric, kAlphaBy, kAlpha };

// Sorts as Redis's sortCompare orders, stably (glibc's qsort is a merge sort). `binary`:
// ALPHA compares whole byte strings (STORE) instead of collating.
void SortItems(std::vector<Sortable>* items, Order order, bool desc, bool binary) {
  auto compare = [&](const Sortable& a, const Sortable& b) {
    switch (order) {
      case Order::kNumeric:
        if (a.score != b.score) return a.score > b.score ? 1 : -1;
        return CompareBytes(a.element, b.element);
      case Order::kAlphaBy:
        if (!a.by || !b.by) return a.by.has_value() == b.by.has_value() ? 0 : a.by ? 1 : -1;
        return binary ? CompareBytes(*a.by, *b.by) : Collate(*a.by, *b.by);
      case Order::kAlpha:
        break;
    }
    return binary ? CompareBytes(a.element, b.element) : Collate(a.element, b.element);
  };
  std::stable_sort(items->begin(), items->end(), [&](const Sortable& a, const Sortable& b) {
    int cmp = compare(a, b);
    return desc ? cmp > 0 : cmp < 0;
  });
}

// Weighs and sorts `elements`. False when a weight is not a number (every weight is still
// looked up first, as Redis does).
bool SortElements(std::vector<std::string>* elements, const SortOptions& o, KeyReader& reader) {
  std::optional<Pattern> by;
  if (o.by) by = ParsePattern(*o.by);
  Order order = !o.alpha ? Order::kNumeric : by ? Order::kAlphaBy : Order::kAlpha;
  std::vector<Sortable> items(elements->size());
  bool numbers = true;
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].element = std::move((*elements)[i]);
    if (order == Order::kAlpha) continue;
    if (!by) {
      numbers &= ParseWeight(items[i].element, &items[i].score);
      continue;
    }
    std::optional<std::string> weight = reader.Read(*by, items[i].element);
    if (!weight) continue;  // a missing key weighs 0, or sorts before any value with ALPHA
    if (order == Order::kAlphaBy) {
      items[i].by = std::move(weight);
    } else {
      numbers &= ParseWeight(*weight, &items[i].score);
    }
  }
  if (numbers) SortItems(&items, order, o.desc, o.store.has_value());
  for (size_t i = 0; i < items.size(); ++i) (*elements)[i] = std::move(items[i].element);
  return numbers;
}

// ---- Answering ----

// The answer for the elements of `range`: each element itself without GET, else one value per
// GET pattern (nullopt: missing).
std::vector<std::optional<std::string>> Answer(std::vector<std::string>& elements, Range range,
                                               const SortOptions& o, KeyReader& reader) {
  std::vector<Pattern> gets;
  for (std::string_view g : o.gets) gets.push_back(ParsePattern(g));
  std::vector<std::optional<std::string>> out;
  out.reserve(range.size() * std::max<size_t>(1, gets.size()));
  for (int64_t j = range.start; j <= range.end; ++j) {
    std::string& element = elements[static_cast<size_t>(j)];
    if (gets.empty()) out.emplace_back(std::move(element));
    for (const Pattern& p : gets) out.push_back(reader.Read(p, element));
  }
  return out;
}

// Replaces `key` with a list of `values` ("" for a missing one), or deletes it when there are
// none, as Redis's SORT ... STORE does whatever the key held, and reports `sortstore` (or
// `del`). True when the key held something. A key that existed is replaced in place (Put),
// so that `new` is reported only for a key that did not, as in Redis.
bool StoreList(ConnCommand& c, engine::Db& db, std::string_view key, const std::vector<std::optional<std::string>>& values,
               const engine::CollectionLimits& limits, int64_t now) {
  if (values.empty()) {
    bool existed = db.Erase(key, now);
    if (existed) NotifyKeyspace(c, kEventGeneric, "del", key);
    return existed;
  }
  bool existed = db.Find(key, now) != nullptr;
  Entry* e = list::Create(db, key, now);
  for (const std::optional<std::string>& v : values) {
    list::Push(db, e, list::End::kTail, v ? std::string_view(*v) : std::string_view(), limits);
  }
  db.Touch(key);
  NotifyKeyspace(c, kEventList, "sortstore", key);
  return existed;
}

// Whether the command comes from a script (EVAL, FCALL): Redis then sorts a set even with BY
// nosort. A script's commands run inside its atomic step while its thread's slot is running;
// a busy script that let the thread serve other clients has detached its step.
bool CalledFromScript(Server& server) {
  if (!ShardSet::InAtomicStep()) return false;
  int thread = ShardSet::CurrentThreadIndex();
  return server.running_scripts().SlotOf(thread >= 0 ? static_cast<size_t>(thread) : SIZE_MAX).running.load();
}

std::vector<uint32_t> ShardsNeeded(ConnCommand& c, const SortOptions& o) {
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  if (LooksUpKeys(o)) {
    ids.resize(shards.size());
    for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
    return ids;
  }
  ids.push_back(shards.ShardFor(c.args[1]));
  if (o.store) ids.push_back(shards.ShardFor(*o.store));
  return ids;
}

enum class Outcome { kAnswered, kWrongType, kNotNumbers };

void SortGeneric(ConnCommand& c, bool read_only) {
  SortOptions o;
  if (!ParseOptions(c.args, read_only, &o, c.reply)) return;
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  int db = c.session.db;
  bool from_script = CalledFromScript(c.server);
  engine::CollectionLimits limits = c.server.collection_limits();
  Outcome outcome = Outcome::kAnswered;
  std::vector<std::optional<std::string>> answer;
  bool replaced = false;  // STORE's destination held something
  shards.RunHolding(ShardsNeeded(c, o), [&] {
    engine::Shard& shard = shards.shard(shards.ShardFor(c.args[1]));
    engine::Db& source_db = shard.db(db);
    Entry* e = FindKey(shard, source_db, c.args[1], now, Lookup::kRead);
    if (e != nullptr) engine::NoteAccess(e, now);
    SortOptions opts = o;
    if (opts.dont_sort && e != nullptr && e->type() == ValueType::kSet && (opts.store || from_script)) {
      // A set's own order is not deterministic: Redis sorts it by its members after all.
      opts.dont_sort = false;
      opts.alpha = true;
      opts.by.reset();
    }
    std::optional<Loaded> loaded = Load(source_db, e, opts);
    if (!loaded) {
      outcome = Outcome::kWrongType;
      return;
    }
    c.charge.Add(engine::RuOp::kRead, c.args[1].size() + Bytes(loaded->elements));
    KeyReader reader(shards, db, now, c.charge);
    if (!opts.dont_sort && !SortElements(&loaded->elements, opts, reader)) {
      outcome = Outcome::kNotNumbers;
      return;
    }
    answer = Answer(loaded->elements, loaded->range, opts, reader);
    if (!opts.store) return;
    engine::Shard& dst = shards.shard(shards.ShardFor(*opts.store));
    replaced = StoreList(c, dst.db(db), *opts.store, answer, limits, now);
  });
  if (outcome == Outcome::kWrongType) return c.reply.Error(errors::kWrongType);
  if (outcome == Outcome::kNotNumbers) return c.reply.Error(kScoreError);
  if (o.store) {
    size_t bytes = o.store->size();
    for (const auto& v : answer) bytes += v ? v->size() : 0;
    // Redis counts each element stored, or one for the destination an empty answer deleted.
    c.changes = answer.empty() ? (replaced ? 1 : 0) : answer.size();
    if (!answer.empty()) {
      ChargeWrite(c.charge, replaced, bytes);
    } else if (replaced) {
      c.charge.Add(engine::RuOp::kDelete, o.store->size());
    }
    return c.reply.Integer(static_cast<int64_t>(answer.size()));
  }
  c.reply.ArrayHeader(answer.size());
  for (const auto& v : answer) v ? c.reply.Bulk(*v) : c.reply.Null();
}

void CmdSort(ConnCommand& c) { SortGeneric(c, false); }
void CmdSortRo(ConnCommand& c) { SortGeneric(c, true); }

}  // namespace

void RegisterSortCommands(CommandTable& table) {
  // No key positions: BY and GET may read any key, so EXEC and scripts hold every shard.
  table.Add({"sort", -2, kWrite | kDenyOom | kDangerous, 0, 0, 0, CmdSort, "generic",
             "Sorts the elements in a list, a set, or a sorted set, optionally storing the result."});
  table.Add({"sort_ro", -2, kReadOnly | kDangerous, 0, 0, 0, CmdSortRo, "generic",
             "Returns the sorted elements of a list, a set, or a sorted set."});
}

}  // namespace lapse::server
