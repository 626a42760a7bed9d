// Sorted sets: the packed layout's codec, the big layout's tree and index, and the
// operations over both (engine/zset.h, engine/zset_table.h).
//
// The packed layout is edited in place with SpliceValue (one memmove, as Redis's listpack
// insert is), walking the elements from the front: O(n) for at most
// zset-max-listpack-entries elements. The big layout keeps every operation logarithmic
// except rank sums, which are linear in the number of leaves (n / ~100) over one array.
#include "engine/zset.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/db.h"
#include "engine/hash.h"
#include "engine/packed.h"
#include "engine/zset_table.h"

namespace lapse::engine::zset {

// ---- ScoreTree ----

ScoreTree::~ScoreTree() {
  for (Leaf* leaf : leaves_) delete leaf;
}

size_t ScoreTree::Bytes() const {
  size_t bytes = leaves_.capacity() * sizeof(Leaf*) + counts_.capacity() * sizeof(uint32_t) +
                 chunk_sums_.capacity() * sizeof(int64_t);
  for (const Leaf* leaf : leaves_) bytes += malloc_usable_size(const_cast<Leaf*>(leaf));
  return bytes;
}

void ScoreTree::EnsureChunks(size_t chunks) const {
  if (chunk_sums_.size() < chunks) chunk_sums_.resize(chunks);
  for (; valid_chunks_ < chunks; ++valid_chunks_) {
    size_t from = valid_chunks_ * kChunk, to = std::min(counts_.size(), from + kChunk);
    int64_t sum = 0;
    for (size_t i = from; i < to; ++i) sum += counts_[i];
    chunk_sums_[valid_chunks_] = sum;
  }
}

size_t ScoreTree::RankOf(Pos p) const {
  size_t chunk = p.leaf / kChunk;
  EnsureChunks(chunk);
  size_t rank = p.offset;
  for (size_t c = 0; c < chunk; ++c) rank += static_cast<size_t>(chunk_sums_[c]);
  for (size_t i = chunk * kChunk; i < p.leaf; ++i) rank += counts_[i];
  return rank;
}

ScoreTree::Pos ScoreTree::PosOf(size_t rank) const {
  size_t chunks = (counts_.size() + kChunk - 1) / kChunk;
  EnsureChunks(chunks);
  size_t c = 0;
  while (c + 1 < chunks && rank >= static_cast<size_t>(chunk_sums_[c])) rank -= static_cast<size_t>(chunk_sums_[c++]);
  size_t i = c * kChunk;
  while (i + 1 < counts_.size() && rank >= counts_[i]) rank -= counts_[i++];
  return {i, rank};
}

bool ScoreTree::Next(Pos* p) const {
  if (++p->offset < counts_[p->leaf]) return true;
  if (p->leaf + 1 >= leaves_.size()) return false;
  *p = {p->leaf + 1, 0};
  return true;
}

bool ScoreTree::Prev(Pos* p) const {
  if (p->offset > 0) return --p->offset, true;
  if (p->leaf == 0) return false;
  p->leaf--;
  p->offset = counts_[p->leaf] - 1;
  return true;
}

void ScoreTree::Insert(const ZItem& item) {
  std::string_view m = item.member();
  InsertAt(Locate([&](const ZItem& x) { return ItemLess(x.score, x.member(), item.score, m); }), item);
}

void ScoreTree::InsertAt(Pos p, const ZItem& item) {
  if (leaves_.empty()) {
    leaves_.push_back(new Leaf);
    counts_.push_back(0);
    LeavesMoved(0);
  }
  Leaf* leaf = leaves_[p.leaf];
  if (leaf->n == kLeafCapacity) {
    size_t at = p.leaf;
    auto* fresh = new Leaf;
    if (p.offset == leaf->n && at + 1 == leaves_.size()) {
      // Appending past the last item: start a new leaf and leave this one full.
      p = {at + 1, 0};
    } else {
      uint32_t keep = kLeafCapacity / 2;
      fresh->n = leaf->n - keep;
      std::memcpy(fresh->items, leaf->items + keep, fresh->n * sizeof(ZItem));
      leaf->n = keep;
      SetCount(at, keep);
      if (p.offset > keep) p = {at + 1, p.offset - keep};
    }
    leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(at + 1), fresh);
    counts_.insert(counts_.begin() + static_cast<std::ptrdiff_t>(at + 1), fresh->n);
    LeavesMoved(at + 1);
    leaf = leaves_[p.leaf];
  }
  std::memmove(leaf->items + p.offset + 1, leaf->items + p.offset, (leaf->n - p.offset) * sizeof(ZItem));
  leaf->items[p.offset] = item;
  leaf->n++;
  SetCount(p.leaf, leaf->n);
  ++size_;
}

void ScoreTree::EraseAt(Pos p) {
  Leaf* leaf = leaves_[p.leaf];
  std::memmove(leaf->items + p.offset, leaf->items + p.offset + 1, (leaf->n - p.offset - 1) * sizeof(ZItem));
  leaf->n--;
  SetCount(p.leaf, leaf->n);
  --size_;
  if (leaf->n == 0) return DropLeaf(p.leaf);
  MaybeMerge(p.leaf);
}

void ScoreTree::DropLeaf(size_t i) {
  delete leaves_[i];
  leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(i));
  counts_.erase(counts_.begin() + static_cast<std::ptrdiff_t>(i));
  LeavesMoved(i);
}

// A leaf that fell below a quarter joins a neighbour when both fit in three quarters, so
// that deletions cannot leave a long tail of nearly empty 2 KiB blocks.
void ScoreTree::MaybeMerge(size_t i) {
  if (leaves_[i]->n >= kLeafCapacity / 4) return;
  for (size_t left : {i, i - 1}) {
    if (left >= leaves_.size() || left + 1 >= leaves_.size()) continue;
    Leaf* a = leaves_[left];
    Leaf* b = leaves_[left + 1];
    if (a->n + b->n > kLeafCapacity * 3 / 4) continue;
    std::memcpy(a->items + a->n, b->items, b->n * sizeof(ZItem));
    a->n += b->n;
    SetCount(left, a->n);
    DropLeaf(left + 1);
    return;
  }
}

namespace {

// ---- The big layout ----

ZTable& ZTableOf(const Entry* e) {
  ZTable* t;
  std::memcpy(&t, e->value().data(), sizeof t);
  return *t;
}

Entry* InstallTable(Db& db, Entry* e, ZTable* table) {
  e = db.ReserveValue(e, sizeof table);
  std::memcpy(e->mutable_value(), &table, sizeof table);
  e->set_value_len(sizeof table);
  e->set_collection_encoding(CollectionEncoding::kTable);
  return e;
}

std::string_view ScoreBytes(const double& score) { return {reinterpret_cast<const char*>(&score), sizeof score}; }

// The tree position of an index entry.
ScoreTree::Pos FindInTree(const ZTable& t, const Entry* node) {
  double s = IndexScore(node);
  std::string_view m = node->key();
  return t.tree.Locate([&](const ZItem& x) { return ItemLess(x.score, x.member(), s, m); });
}

bool TableSet(ZTable& t, std::string_view member, double score) {
  uint64_t h = HashKey(member);
  Entry* node = t.index.Find(member, h);
  if (node != nullptr) {
    if (IndexScore(node) == score) return false;  // -0 and 0 are the same score, as in Redis
    t.tree.EraseAt(FindInTree(t, node));
    std::memcpy(node->mutable_value(), &score, sizeof score);
    t.tree.Insert({score, node});
    return false;
  }
  node = Entry::Create(member, ScoreBytes(score), ValueType::kString, kNoDeadline);
  t.index.Insert(node, h);
  t.tree.Insert({score, node});
  return true;
}

bool TableRemove(ZTable& t, std::string_view member) {
  Entry** link = t.index.FindLink(member, HashKey(member));
  if (link == nullptr) return false;
  Entry* node = *link;
  t.tree.EraseAt(FindInTree(t, node));
  Entry::Destroy(t.index.UnlinkAt(link));
  return true;
}

// ---- The packed layout ----

void AppendScore(std::string* out, double score) {
  constexpr double kLimit = 4503599627370496.0;  // 2^52
  // -0 is stored as 0, as Redis's listpack stores it (its text is an integer's).
  if (score > -kLimit && score < kLimit && score == std::trunc(score)) {
    auto v = static_cast<int64_t>(score);
    uint64_t zigzag = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    AppendVarint(out, zigzag << 1);
    return;
  }
  AppendVarint(out, 1);
  out->append(ScoreBytes(score));
}

// An element: its score, then its member front-coded against the member before it (how
// many leading bytes they share, then the rest as a packed element). Sorted by score, members
// like "user:1041" and "user:77" still share most of their bytes.
void AppendElement(std::string* out, std::string_view previous, std::string_view member, double score) {
  AppendScore(out, score);
  AppendFrontCoded(out, previous, member);
}

// Walks packed elements in order, remembering where each begins and ends. The member is
// rebuilt in the cursor: its view is valid until the next call to Next().
class PackedCursor {
 public:
  explicit PackedCursor(std::string_view bytes) : p_(bytes.data()), begin_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool Next() {
    if (p_ >= end_) return false;
    start_ = p_;
    uint64_t h = ReadVarint();
    if (h & 1) {
      std::memcpy(&score_, p_, sizeof score_);
      p_ += sizeof score_;
    } else {
      uint64_t zigzag = h >> 1;
      score_ = static_cast<double>(static_cast<int64_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1)));
    }
    size_t shared = ReadVarint();
    size_t len = ReadVarint();
    member_.resize(shared);
    member_.append(p_, len);
    p_ += len;
    return true;
  }
  double score() const { return score_; }
  std::string_view member() const { return member_; }
  size_t begin() const { return static_cast<size_t>(start_ - begin_); }
  size_t end() const { return static_cast<size_t>(p_ - begin_); }

 private:
  uint64_t ReadVarint() {
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
      auto byte = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
      shift += 7;
    }
  }

  const char* p_;
  const char* begin_;
  const char* end_;
  const char* start_ = nullptr;
  double score_ = 0;
  std::string member_;
};

// The rank of `member` in a packed set, and its score; when it is absent, *size (if given)
// is the set's size, which the walk has counted anyway.
std::optional<size_t> FindPacked(const Entry* e, std::string_view member, double* score, size_t* size = nullptr) {
  PackedCursor c(e->value());
  size_t rank = 0;
  for (; c.Next(); ++rank) {
    if (c.member() == member) return *score = c.score(), rank;
  }
  if (size) *size = rank;
  return std::nullopt;
}

Entry* ConvertToTable(Db& db, Entry* e) {
  auto* t = new ZTable;
  PackedCursor c(e->value());
  while (c.Next()) TableSet(*t, c.member(), c.score());
  return InstallTable(db, e, t);
}

// Inserts an absent member. The element after it was coded against its old predecessor, so
// it is re-encoded against the new member in the same splice.
void PackedInsert(Db& db, Entry*& e, std::string_view member, double score) {
  PackedCursor c(e->value());
  std::string previous, encoded;
  while (c.Next()) {
    if (ItemLess(score, member, c.score(), c.member())) {
      AppendElement(&encoded, previous, member, score);
      AppendElement(&encoded, member, c.member(), c.score());
      e = SpliceValue(db, e, c.begin(), c.end() - c.begin(), encoded);
      return;
    }
    previous.assign(c.member());
  }
  AppendElement(&encoded, previous, member, score);
  e = SpliceValue(db, e, e->value().size(), 0, encoded);
}

// Removes ranks [first, last) (last <= size); the element after them is re-encoded against
// the one before them.
void PackedErase(Db& db, Entry*& e, size_t first, size_t last) {
  PackedCursor c(e->value());
  std::string previous, encoded;
  size_t from = 0, to = 0;
  for (size_t rank = 0; rank <= last && c.Next(); ++rank) {
    if (rank < first) {
      previous.assign(c.member());
      continue;
    }
    if (rank == first) from = c.begin();
    to = c.end();
    if (rank == last) AppendElement(&encoded, previous, c.member(), c.score());
  }
  e = SpliceValue(db, e, from, to - from, encoded);
}

}  // namespace

// ---- Hooks ----

void DestroyTable(const Entry* e) { delete &ZTableOf(e); }

size_t TableBytes(const Entry* e) {
  if (!e->owns_table()) return 0;
  const ZTable& t = ZTableOf(e);
  size_t bytes = sizeof(ZTable) + t.index.BucketBytes() + t.tree.Bytes();
  uint64_t cursor = 0;
  do {
    cursor = t.index.Scan(cursor, [&](const Entry* node) { bytes += node->AllocatedBytes(); });
  } while (cursor != 0);
  return bytes;
}

std::string CopyTable(const Entry* e) {
  auto* copy = new ZTable;
  ForEach(e, [&](std::string_view m, double s) { TableSet(*copy, m, s); });
  return std::string(reinterpret_cast<const char*>(&copy), sizeof copy);
}

const char* EncodingName(const Entry* e) { return e->owns_table() ? "skiplist" : "listpack"; }

// ---- Operations ----

Entry* Create(Db& db, std::string_view key, int64_t now_ms, bool table) {
  Entry* e = db.Put(key, {}, ValueType::kZSet, kNoDeadline, now_ms);
  e->set_collection_encoding(CollectionEncoding::kPacked);
  if (table) e = InstallTable(db, e, new ZTable);
  return e;
}

size_t Size(const Entry* e) {
  if (e->owns_table()) return ZTableOf(e).tree.size();
  PackedCursor c(e->value());
  size_t n = 0;
  while (c.Next()) ++n;
  return n;
}

std::optional<double> Score(const Entry* e, std::string_view member) {
  if (e->owns_table()) {
    const Entry* node = ZTableOf(e).index.Peek(member, HashKey(member));
    if (node == nullptr) return std::nullopt;
    return IndexScore(node);
  }
  double score;
  if (!FindPacked(e, member, &score)) return std::nullopt;
  return score;
}

bool Set(Db& db, Entry*& e, std::string_view member, double score, const CollectionLimits& limits) {
  if (!e->owns_table()) {
    double current;
    size_t size = 0;
    if (std::optional<size_t> rank = FindPacked(e, member, &current, &size)) {
      if (current == score) return false;
      PackedErase(db, e, *rank, *rank + 1);
      PackedInsert(db, e, member, score);
      return false;
    }
    if (FitsPacked(size + 1, member.size(), limits)) {
      PackedInsert(db, e, member, score);
      return true;
    }
    e = ConvertToTable(db, e);
  }
  return TableSet(ZTableOf(e), member, score);
}

bool Remove(Db& db, Entry*& e, std::string_view member) {
  if (e->owns_table()) return TableRemove(ZTableOf(e), member);
  double score;
  std::optional<size_t> rank = FindPacked(e, member, &score);
  if (!rank) return false;
  PackedErase(db, e, *rank, *rank + 1);
  return true;
}

std::optional<size_t> Rank(const Entry* e, std::string_view member) {
  if (e->owns_table()) {
    const ZTable& t = ZTableOf(e);
    const Entry* node = t.index.Peek(member, HashKey(member));
    if (node == nullptr) return std::nullopt;
    return t.tree.RankOf(FindInTree(t, node));
  }
  double score;
  return FindPacked(e, member, &score);
}

size_t PartitionPoint(const Entry* e, const std::function<bool(double, std::string_view)>& before) {
  if (e->owns_table()) return ZTableOf(e).tree.PartitionPoint([&](const ZItem& x) { return before(x.score, x.member()); });
  PackedCursor c(e->value());
  size_t n = 0;
  while (c.Next() && before(c.score(), c.member())) ++n;
  return n;
}

void ForRange(const Entry* e, size_t first, size_t last, bool reverse, const ElementFn& fn) {
  if (first >= last) return;
  if (e->owns_table()) {
    const ScoreTree& tree = ZTableOf(e).tree;
    ScoreTree::Pos p = tree.PosOf(reverse ? last - 1 : first);
    for (size_t i = first; i < last; ++i) {
      const ZItem& item = tree.At(p);
      fn(item.member(), item.score);
      if (i + 1 < last) reverse ? tree.Prev(&p) : tree.Next(&p);
    }
    return;
  }
  if (!reverse) {
    PackedCursor c(e->value());
    for (size_t i = 0; i < last && c.Next(); ++i) {
      if (i >= first) fn(c.member(), c.score());
    }
    return;
  }
  // A packed walk only goes forward: collect the range, then answer it backwards.
  std::vector<std::pair<std::string, double>> items;
  items.reserve(last - first);
  PackedCursor c(e->value());
  for (size_t i = 0; i < last && c.Next(); ++i) {
    if (i >= first) items.emplace_back(c.member(), c.score());
  }
  for (auto it = items.rbegin(); it != items.rend(); ++it) fn(it->first, it->second);
}

void Walk(const Entry* e, size_t from, bool reverse, const std::function<bool(std::string_view, double)>& fn) {
  if (e->owns_table()) {
    const ScoreTree& tree = ZTableOf(e).tree;
    ScoreTree::Pos p = tree.PosOf(from);
    do {
      const ZItem& item = tree.At(p);
      if (!fn(item.member(), item.score)) return;
    } while (reverse ? tree.Prev(&p) : tree.Next(&p));
    return;
  }
  if (!reverse) {
    PackedCursor c(e->value());
    for (size_t i = 0; c.Next(); ++i) {
      if (i >= from && !fn(c.member(), c.score())) return;
    }
    return;
  }
  std::vector<std::pair<std::string, double>> items;
  PackedCursor c(e->value());
  for (size_t i = 0; i <= from && c.Next(); ++i) items.emplace_back(c.member(), c.score());
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (!fn(it->first, it->second)) return;
  }
}

size_t RemoveRange(Db& db, Entry*& e, size_t first, size_t last) {
  if (first >= last) return 0;
  if (e->owns_table()) {
    ZTable& t = ZTableOf(e);
    t.tree.EraseRange(first, last, [&](const ZItem& item) {
      Entry** link = t.index.FindLink(item.member(), HashKey(item.member()));
      Entry::Destroy(t.index.UnlinkAt(link));
    });
    return last - first;
  }
  PackedErase(db, e, first, last);
  return last - first;
}

std::pair<std::string_view, double> Random(const Entry* e, uint64_t random, std::string* buffer) {
  size_t rank = random % Size(e);
  std::pair<std::string_view, double> out;
  ForRange(e, rank, rank + 1, false, [&](std::string_view m, double s) {
    *buffer = std::string(m);
    out = {*buffer, s};
  });
  return out;
}

uint64_t Scan(const Entry* e, uint64_t cursor, size_t count, const ElementFn& fn) {
  if (!e->owns_table()) {
    ForEach(e, fn);
    return 0;
  }
  const KvTable& index = ZTableOf(e).index;
  size_t emitted = 0;
  // Ten buckets per requested element at most, as Redis bounds one step.
  size_t budget = count > SIZE_MAX / 10 ? SIZE_MAX : count * 10;
  do {
    cursor = index.Scan(cursor, [&](const Entry* node) {
      fn(node->key(), IndexScore(node));
      ++emitted;
    });
  } while (cursor != 0 && emitted < count && --budget > 0);
  return cursor;
}

Entry* Build(Db& db, std::string_view key, std::vector<std::pair<std::string, double>> elements,
             const CollectionLimits& limits, int64_t now_ms) {
  std::sort(elements.begin(), elements.end(), [](const auto& a, const auto& b) {
    return ItemLess(a.second, a.first, b.second, b.first);
  });
  size_t longest = 0;
  for (const auto& [m, s] : elements) longest = std::max(longest, m.size());
  // Whatever `key` held is replaced by Put, not deleted first: an overwrite, as Redis's
  // setKey does it (no `new` keyspace event for a key that existed).
  if (FitsPacked(elements.size(), longest, limits)) {
    std::string bytes;
    std::string_view previous;
    for (const auto& [m, s] : elements) {
      AppendElement(&bytes, previous, m, s);
      previous = m;
    }
    Entry* e = db.Put(key, bytes, ValueType::kZSet, kNoDeadline, now_ms);
    e->set_collection_encoding(CollectionEncoding::kPacked);
    return e;
  }
  Entry* e = Create(db, key, now_ms, true);
  ZTable& t = ZTableOf(e);
  for (const auto& [m, s] : elements) TableSet(t, m, s);
  return e;
}

Entry* ToTable(Db& db, Entry* e) {
  return e->collection_encoding() == CollectionEncoding::kTable ? e : ConvertToTable(db, e);
}

}  // namespace lapse::engine::zset
