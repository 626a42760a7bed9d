// File: engine/zset_table.h
//
// The big layout of a sorted set (engine/zset.h): a member index and an ordered sequence.
//
//   index  a KvTable whose entries are the members (key) with their 8-byte score (value):
//          one allocation per member, found by hash for ZSCORE, ZADD's existence check, ...
//   tree   the elements in (score, member) order as 16-byte items {score, entry*}, in leaves
//          of up to kLeafCapacity items (one 2 KiB block each), listed in a vector with a
//          parallel vector of leaf sizes. That is a B+tree of height two: a lookup is a
//          binary search over the leaves' first items and then within one leaf; a rank is
//          the sum of the sizes before a leaf, read from contiguous arrays: sums of 64 leaves
//          each, then the leaves of one chunk (a few hundred integers for a million members,
//          cheaper than the pointer chasing of a skiplist's spans). The member bytes live
//          once, in the index entry; the tree compares them only between equal scores.
//
// Per member this costs the index entry (24 + member + 8 bytes, rounded by the allocator),
// its bucket share and about 20 bytes of leaf, against Redis's skiplist node, member sds,
// dict entry and bucket. Appending at the end (ascending scores, the common load) leaves
// full leaves behind instead of half-full ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "engine/entry.h"
#include "engine/kv_table.h"

namespace lapse::engine::zset {

struct ZItem {
  double score;
  Entry* node;  // the index entry: key() is the member
  std::string_view member() const { return node->key(); }
};

// (score, member) order, member bytes compared as memcmp does.
inline bool ItemLess(double score_a, std::string_view member_a, double score_b, std::string_view member_b) {
  if (score_a != score_b) return score_a < score_b;
  return member_a < member_b;
}

class ScoreTree {
 public:
  static constexpr uint32_t kLeafCapacity = 127;  // 8 + 127 * 16 = 2040 bytes: a 2 KiB block

  struct Leaf {
    uint32_t n = 0;
    ZItem items[kLeafCapacity];
  };

  // A position: leaf index and offset inside it.
  struct Pos {
    size_t leaf = 0;
    size_t offset = 0;
  };

  ScoreTree() = default;
  ScoreTree(const ScoreTree&) = delete;
  ScoreTree& operator=(const ScoreTree&) = delete;
  ~ScoreTree();

  size_t size() const { return size_; }
  size_t leaf_count() const { return leaves_.size(); }
  size_t Bytes() const;

  // The first position whose item `before` rejects; before(item) must partition the order.
  template <typename Pred>
  Pos Locate(Pred before) const;
  template <typename Pred>
  size_t PartitionPoint(Pred before) const {
    return RankOf(Locate(before));
  }

  size_t RankOf(Pos p) const;
  // The position of `rank` (rank < size()).
  Pos PosOf(size_t rank) const;
  const ZItem& At(Pos p) const { return leaves_[p.leaf]->items[p.offset]; }

  // Steps a valid position; Next returns false past the end, Prev before the start.
  bool Next(Pos* p) const;
  bool Prev(Pos* p) const;

  void Insert(const ZItem& item);
  // Removes the item at `p`.
  void EraseAt(Pos p);
  // Removes ranks [first, last), calling fn(item) for each before it goes.
  template <typename Fn>
  void EraseRange(size_t first, size_t last, Fn fn);

 private:
  static constexpr size_t kChunk = 64;  // leaves per chunk of the rank index

  void InsertAt(Pos p, const ZItem& item);
  void DropLeaf(size_t leaf);
  void MaybeMerge(size_t leaf);
  // Every change of a leaf's size goes through SetCount; adding or removing a leaf at index
  // i calls LeavesMoved(i), which drops the chunk sums from i's chunk on.
  void SetCount(size_t leaf, uint32_t n) {
    if (leaf / kChunk < valid_chunks_) chunk_sums_[leaf / kChunk] += static_cast<int64_t>(n) - counts_[leaf];
    counts_[leaf] = n;
  }
  void LeavesMoved(size_t leaf) { valid_chunks_ = std::min(valid_chunks_, leaf / kChunk); }
  // Makes chunk_sums_[0, chunks) current.
  void EnsureChunks(size_t chunks) const;

  std::vector<Leaf*> leaves_;
  std::vector<uint32_t> counts_;  // counts_[i] == leaves_[i]->n, contiguous for rank sums
  // The rank index: chunk_sums_[c] is the sum of counts_ over leaves [c * kChunk, (c + 1) *
  // kChunk), valid below valid_chunks_. Splits and merges move leaves between chunks and
  // invalidate the sums after them, which the next rank query recomputes (a split comes once
  // per ~60 inserts); a rank then sums a few hundred integers instead of every leaf's size.
  mutable std::vector<int64_t> chunk_sums_;
  mutable size_t valid_chunks_ = 0;
  size_t size_ = 0;
};

template <typename Pred>
ScoreTree::Pos ScoreTree::Locate(Pred before) const {
  // The first leaf whose first item is rejected; the answer lies in the leaf before it.
  size_t lo = 0, hi = leaves_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (before(leaves_[mid]->items[0])) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return {0, 0};
  const Leaf* leaf = leaves_[lo - 1];
  size_t a = 1, b = leaf->n;  // items[0] is known to be accepted
  while (a < b) {
    size_t mid = (a + b) / 2;
    if (before(leaf->items[mid])) a = mid + 1;
    else b = mid;
  }
  if (a == leaf->n && lo < leaves_.size()) return {lo, 0};
  return {lo - 1, a};
}

template <typename Fn>
void ScoreTree::EraseRange(size_t first, size_t last, Fn fn) {
  if (first >= last) return;
  size_t remaining = last - first;
  Pos p = PosOf(first);
  while (remaining > 0) {
    Leaf* leaf = leaves_[p.leaf];
    size_t take = std::min<size_t>(remaining, leaf->n - p.offset);
    for (size_t i = 0; i < take; ++i) fn(leaf->items[p.offset + i]);
    std::memmove(leaf->items + p.offset, leaf->items + p.offset + take, (leaf->n - p.offset - take) * sizeof(ZItem));
    leaf->n -= static_cast<uint32_t>(take);
    SetCount(p.leaf, leaf->n);
    size_ -= take;
    remaining -= take;
    if (leaf->n == 0) {
      DropLeaf(p.leaf);  // the next leaf moves into this index
      p = {p.leaf, 0};
    } else {
      p = {p.leaf + 1, 0};
    }
  }
  // Only the leaves at the cut can have become small.
  if (size_ > 0) MaybeMerge(PosOf(first < size_ ? first : size_ - 1).leaf);
}

// The table an entry of the big layout points to.
struct ZTable {
  KvTable index;  // member -> 8-byte score
  ScoreTree tree;
};

inline double IndexScore(const Entry* node) {
  double s;
  std::memcpy(&s, node->value().data(), sizeof s);
  return s;
}

}  // namespace lapse::engine::zset
