// File: engine/zset.h
//
// Sorted sets: members with a double score, ordered by (score, member bytes), as Redis's.
//
// Two layouts, recorded in the entry's CollectionEncoding as for hashes and sets:
//
//   kPacked  the elements in the entry's value bytes, in order. Each is its score then its
//            member: a score that is a small integer (|v| < 2^52) is one varint holding
//            zigzag(v) << 1, so "1".."63" cost one byte (-0 becomes 0 there, as in a
//            listpack, whose text it is); any other score is the varint 1 followed by the 8
//            raw bytes of the double. The member is front-coded against the one before it
//            (shared prefix length, then the rest as a packed element: engine/packed.h), so
//            "member:17" after "member:16" costs 4 bytes. Answered as "listpack", like Redis's.
//   kTable   8 bytes: a pointer to a ZTable (zset_table.h) — a member index (KvTable of
//            member -> score) plus an order-statistic tree of (score, member) for ranks and
//            ranges. Answered as "skiplist".
//
// The layout follows Redis 7.0's zset-max-listpack-entries / -value: a packed set converts
// once it has too many members or takes a member too long, and never converts back (only a
// set built whole, as ZUNIONSTORE's result, starts from what its contents need: Build()).
//
// Ranks are 0-based ascending. Functions that edit take the entry by reference (a packed
// edit may reallocate it); none deletes the key: callers erase it when Size() reaches 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/collection.h"
#include "engine/entry.h"

namespace lapse::engine {
class Db;
}

namespace lapse::engine::zset {

// The big layout's hooks; `e` owns its table (Entry::owns_table()).
void DestroyTable(const Entry* e);
size_t TableBytes(const Entry* e);
// A deep copy of the table, as the 8 pointer bytes an entry's value would hold.
std::string CopyTable(const Entry* e);
// What OBJECT ENCODING answers for a sorted set in any layout.
const char* EncodingName(const Entry* e);

// One element as a range reports it; `member` is valid only during the callback.
using ElementFn = std::function<void(std::string_view member, double score)>;

// A new, empty sorted set under `key`: the table layout at once when `table` (Redis
// creates a skiplist when zset-max-listpack-entries is 0 or the first member is too long).
Entry* Create(Db& db, std::string_view key, int64_t now_ms, bool table = false);
size_t Size(const Entry* e);
std::optional<double> Score(const Entry* e, std::string_view member);

// Inserts `member` with `score`, or moves it to `score`; returns true when it was new.
// Converts a packed set that would exceed `limits` first.
bool Set(Db& db, Entry*& e, std::string_view member, double score, const CollectionLimits& limits);
bool Remove(Db& db, Entry*& e, std::string_view member);

// The 0-based ascending rank of `member`, or nullopt when absent.
std::optional<size_t> Rank(const Entry* e, std::string_view member);

// The number of elements that come before the first element for which `before` is false;
// `before` must be true for a prefix of the order and false after it (a partition).
size_t PartitionPoint(const Entry* e, const std::function<bool(double score, std::string_view member)>& before);

// Calls fn for the elements of ranks [first, last) in ascending order, or descending from
// last - 1 down to first when `reverse`. Requires first <= last <= Size().
void ForRange(const Entry* e, size_t first, size_t last, bool reverse, const ElementFn& fn);
// Every element in ascending order.
inline void ForEach(const Entry* e, const ElementFn& fn) { ForRange(e, 0, Size(e), false, fn); }

// Calls fn for the elements from rank `from` on, ascending (or descending when `reverse`),
// until fn returns false or the set ends. Requires from < Size().
void Walk(const Entry* e, size_t from, bool reverse, const std::function<bool(std::string_view member, double score)>& fn);

// Removes the elements of ranks [first, last); returns how many.
size_t RemoveRange(Db& db, Entry*& e, size_t first, size_t last);

// A uniformly random element (the set must not be empty); its member is copied to *buffer.
std::pair<std::string_view, double> Random(const Entry* e, uint64_t random, std::string* buffer);

// One ZSCAN step: a packed set answers everything at once (cursor 0, as Redis does for a
// listpack); a table visits member-index buckets until about `count` elements.
uint64_t Scan(const Entry* e, uint64_t cursor, size_t count, const ElementFn& fn);

// Replaces whatever `key` held with a sorted set of `elements` (distinct members, any order),
// laid out as Redis lays out a set built whole: packed when it fits the limits.
// `elements` must not be empty.
Entry* Build(Db& db, std::string_view key, std::vector<std::pair<std::string, double>> elements,
             const CollectionLimits& limits, int64_t now_ms);

// Moves a packed sorted set to the table layout, as Redis's SORT does before reading one
// (OBJECT ENCODING then says skiplist). A table is returned as it is.
Entry* ToTable(Db& db, Entry* e);

// Whether a sorted set of `count` members, the longest `longest` bytes, is packed.
inline bool FitsPacked(size_t count, size_t longest, const CollectionLimits& limits) {
  return count <= limits.zset_max_listpack_entries && longest <= limits.zset_max_listpack_value;
}

}  // namespace lapse::engine::zset
