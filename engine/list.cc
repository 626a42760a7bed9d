#include "engine/list.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "engine/db.h"
#include "engine/packed.h"

namespace lapse::engine::list {

namespace {

constexpr size_t kCountBytes = 4;
// An inline list grows by just what it needs: the allocator's size classes (a quarter apart)
// already keep reallocations rare, and doubling would waste up to half a node per list.
constexpr bool kExactGrowth = true;
// Redis's cap on a node limited by count rather than bytes (quicklist's SIZE_SAFETY_LIMIT).
constexpr size_t kSafetyBytes = 8192;

struct Node {
  std::string bytes;  // packed elements
  uint32_t count = 0;
};

struct ListTable {
  std::deque<Node> nodes;
  size_t count = 0;
};

bool IsTable(const Entry* e) { return e->collection_encoding() == CollectionEncoding::kTable; }

ListTable& ListOf(const Entry* e) {
  ListTable* t;
  std::memcpy(&t, e->value().data(), sizeof t);
  return *t;
}

uint32_t InlineCount(const Entry* e) {
  uint32_t n;
  std::memcpy(&n, e->value().data(), sizeof n);
  return n;
}
void SetInlineCount(Entry* e, uint32_t n) { std::memcpy(e->mutable_value(), &n, sizeof n); }
std::string_view InlineElements(const Entry* e) { return e->value().substr(kCountBytes); }

// Whether a node (or an inline list) of `count` elements in `bytes` respects
// list-max-listpack-size. A node always takes its first element, however large.
bool Fits(size_t count, size_t bytes, const CollectionLimits& limits) {
  if (count <= 1) return true;
  int64_t fill = limits.list_max_listpack_size;
  if (fill < 0) {
    int64_t level = std::min<int64_t>(-fill, 5);
    return bytes <= (size_t{2048} << level);
  }
  return count <= static_cast<uint64_t>(fill) && bytes <= kSafetyBytes;
}

// The byte offset of element `index` (<= the number of elements) in packed `bytes`.
size_t OffsetOf(std::string_view bytes, size_t index) {
  PackedReader r(bytes);
  std::string_view element;
  for (size_t i = 0; i < index; ++i) r.Next(&element);
  return r.offset();
}

// The element starting at byte `offset` of packed `bytes`; *end is where the next begins.
std::string_view ElementAt(std::string_view bytes, size_t offset, size_t* end) {
  PackedReader r(bytes.substr(offset));
  std::string_view element;
  r.Next(&element);
  *end = offset + r.offset();
  return element;
}

std::string Packed(std::string_view element) {
  std::string out;
  AppendPacked(&out, element);
  return out;
}

// The node holding element `index` of a table, and the element's index within it. Walks
// from whichever end is nearer.
std::pair<size_t, size_t> Locate(const ListTable& t, size_t index) {
  if (index < t.count / 2) {
    size_t pos = 0;
    for (size_t n = 0;; ++n) {
      if (index < pos + t.nodes[n].count) return {n, index - pos};
      pos += t.nodes[n].count;
    }
  }
  size_t pos = t.count;
  for (size_t n = t.nodes.size(); n-- > 0;) {
    pos -= t.nodes[n].count;
    if (index >= pos) return {n, index - pos};
  }
  return {0, 0};
}

void PushToTable(ListTable& t, End end, std::string_view packed, const CollectionLimits& limits) {
  bool head = end == End::kHead;
  Node* node = t.nodes.empty() ? nullptr : head ? &t.nodes.front() : &t.nodes.back();
  if (node == nullptr || !Fits(node->count + 1, node->bytes.size() + packed.size(), limits)) {
    node = head ? &t.nodes.emplace_front() : &t.nodes.emplace_back();
  }
  if (head) {
    node->bytes.insert(0, packed);
  } else {
    node->bytes.append(packed);
  }
  ++node->count;
  ++t.count;
}

// Moves an inline list into a table of nodes that respect the limit.
Entry* ConvertToTable(Db& db, Entry* e, const CollectionLimits& limits) {
  auto* t = new ListTable;
  PackedReader r(InlineElements(e));
  std::string_view element;
  while (r.Next(&element)) PushToTable(*t, End::kTail, Packed(element), limits);
  e = db.ReserveValue(e, sizeof t);
  std::memcpy(e->mutable_value(), &t, sizeof t);
  e->set_value_len(sizeof t);
  e->set_collection_encoding(CollectionEncoding::kTable);
  return db.FitValue(e);
}

// Splits a node that outgrew the limit in two halves, so that nodes stay bounded after
// inserts in the middle.
void SplitIfOver(ListTable& t, size_t n, const CollectionLimits& limits) {
  Node& node = t.nodes[n];
  if (Fits(node.count, node.bytes.size(), limits)) return;
  uint32_t keep = node.count / 2;
  size_t cut = OffsetOf(node.bytes, keep);
  Node tail{node.bytes.substr(cut), node.count - keep};
  node.bytes.resize(cut);
  node.count = keep;
  t.nodes.insert(t.nodes.begin() + static_cast<std::ptrdiff_t>(n) + 1, std::move(tail));
}

}  // namespace

Entry* Create(Db& db, std::string_view key, int64_t now_ms) {
  return db.Put(key, std::string(kCountBytes, '\0'), ValueType::kList, kNoDeadline, now_ms);
}

size_t Size(const Entry* e) { return IsTable(e) ? ListOf(e).count : InlineCount(e); }

void Push(Db& db, Entry*& e, End end, std::string_view element, const CollectionLimits& limits) {
  std::string packed = Packed(element);
  if (!IsTable(e)) {
    uint32_t n = InlineCount(e);
    if (Fits(n + 1, e->value().size() - kCountBytes + packed.size(), limits)) {
      size_t pos = end == End::kHead ? kCountBytes : e->value().size();
      e = SpliceValue(db, e, pos, 0, packed, kExactGrowth);
      SetInlineCount(e, n + 1);
      return;
    }
    e = ConvertToTable(db, e, limits);
  }
  PushToTable(ListOf(e), end, packed, limits);
}

std::string Pop(Db& db, Entry*& e, End end) {
  std::string out;
  size_t begin, stop;
  if (!IsTable(e)) {
    std::string_view elements = InlineElements(e);
    uint32_t n = InlineCount(e);
    begin = end == End::kHead ? 0 : OffsetOf(elements, n - 1);
    out.assign(ElementAt(elements, begin, &stop));
    e = SpliceValue(db, e, kCountBytes + begin, stop - begin, {});
    SetInlineCount(e, n - 1);
    return out;
  }
  ListTable& t = ListOf(e);
  Node& node = end == End::kHead ? t.nodes.front() : t.nodes.back();
  begin = end == End::kHead ? 0 : OffsetOf(node.bytes, node.count - 1);
  out.assign(ElementAt(node.bytes, begin, &stop));
  node.bytes.erase(begin, stop - begin);
  --t.count;
  if (--node.count == 0) end == End::kHead ? t.nodes.pop_front() : t.nodes.pop_back();
  return out;
}

void Drop(Db& db, Entry*& e, End end, size_t n) {
  if (n == 0) return;
  if (!IsTable(e)) {
    std::string_view elements = InlineElements(e);
    uint32_t count = InlineCount(e);
    if (end == End::kHead) {
      e = SpliceValue(db, e, kCountBytes, OffsetOf(elements, n), {});
    } else {
      size_t cut = OffsetOf(elements, count - n);
      e = SpliceValue(db, e, kCountBytes + cut, elements.size() - cut, {});
    }
    SetInlineCount(e, static_cast<uint32_t>(count - n));
    return;
  }
  ListTable& t = ListOf(e);
  t.count -= n;
  while (n > 0) {
    Node& node = end == End::kHead ? t.nodes.front() : t.nodes.back();
    if (n >= node.count) {
      n -= node.count;
      end == End::kHead ? t.nodes.pop_front() : t.nodes.pop_back();
      continue;
    }
    if (end == End::kHead) {
      node.bytes.erase(0, OffsetOf(node.bytes, n));
    } else {
      node.bytes.resize(OffsetOf(node.bytes, node.count - n));
    }
    node.count -= static_cast<uint32_t>(n);
    n = 0;
  }
}

std::string_view At(const Entry* e, size_t index) {
  size_t stop;
  if (!IsTable(e)) {
    std::string_view elements = InlineElements(e);
    return ElementAt(elements, OffsetOf(elements, index), &stop);
  }
  const ListTable& t = ListOf(e);
  auto [n, i] = Locate(t, index);
  const std::string& bytes = t.nodes[n].bytes;
  return ElementAt(bytes, OffsetOf(bytes, i), &stop);
}

void Set(Db& db, Entry*& e, size_t index, std::string_view element) {
  std::string packed = Packed(element);
  size_t stop;
  if (!IsTable(e)) {
    std::string_view elements = InlineElements(e);
    size_t begin = OffsetOf(elements, index);
    ElementAt(elements, begin, &stop);
    e = SpliceValue(db, e, kCountBytes + begin, stop - begin, packed, kExactGrowth);
    return;
  }
  ListTable& t = ListOf(e);
  auto [n, i] = Locate(t, index);
  std::string& bytes = t.nodes[n].bytes;
  size_t begin = OffsetOf(bytes, i);
  ElementAt(bytes, begin, &stop);
  bytes.replace(begin, stop - begin, packed);
}

void Insert(Db& db, Entry*& e, size_t index, std::string_view element, const CollectionLimits& limits) {
  if (index == 0 || index == Size(e)) return Push(db, e, index == 0 ? End::kHead : End::kTail, element, limits);
  std::string packed = Packed(element);
  if (!IsTable(e)) {
    uint32_t n = InlineCount(e);
    std::string_view elements = InlineElements(e);
    if (Fits(n + 1, elements.size() + packed.size(), limits)) {
      e = SpliceValue(db, e, kCountBytes + OffsetOf(elements, index), 0, packed, kExactGrowth);
      SetInlineCount(e, n + 1);
      return;
    }
    e = ConvertToTable(db, e, limits);
  }
  ListTable& t = ListOf(e);
  auto [n, i] = Locate(t, index);
  Node& node = t.nodes[n];
  node.bytes.insert(OffsetOf(node.bytes, i), packed);
  ++node.count;
  ++t.count;
  SplitIfOver(t, n, limits);
}

void RemoveAt(Db& db, Entry*& e, const std::vector<size_t>& indices) {
  if (indices.empty()) return;
  // Rebuilds each run of packed bytes without the removed elements; `pos` is the list index
  // of the run's first element and `next` the first index not yet removed.
  size_t next = 0;
  auto rebuild = [&](std::string_view bytes, size_t pos, uint32_t* kept) {
    std::string out;
    PackedReader r(bytes);
    std::string_view element;
    *kept = 0;
    for (size_t i = pos; r.Next(&element); ++i) {
      if (next < indices.size() && indices[next] == i) {
        ++next;
        continue;
      }
      AppendPacked(&out, element);
      ++*kept;
    }
    return out;
  };
  uint32_t kept = 0;
  if (!IsTable(e)) {
    std::string rebuilt = rebuild(InlineElements(e), 0, &kept);
    e = SpliceValue(db, e, kCountBytes, e->value().size() - kCountBytes, rebuilt);
    SetInlineCount(e, kept);
    return;
  }
  ListTable& t = ListOf(e);
  size_t pos = 0;
  for (size_t n = 0; n < t.nodes.size() && next < indices.size();) {
    Node& node = t.nodes[n];
    size_t node_end = pos + node.count;
    if (indices[next] >= node_end) {
      pos = node_end;
      ++n;
      continue;
    }
    node.bytes = rebuild(node.bytes, pos, &kept);
    t.count -= node.count - kept;
    node.count = kept;
    pos = node_end;
    if (kept == 0) {
      t.nodes.erase(t.nodes.begin() + static_cast<std::ptrdiff_t>(n));
    } else {
      ++n;
    }
  }
}

void ForRange(const Entry* e, size_t first, size_t last, const std::function<bool(std::string_view)>& fn) {
  size_t remaining = last - first + 1;
  auto walk = [&](std::string_view bytes, size_t skip) {
    PackedReader r(bytes);
    std::string_view element;
    for (size_t i = 0; i < skip; ++i) r.Next(&element);
    while (remaining > 0 && r.Next(&element)) {
      --remaining;
      if (!fn(element)) return false;
    }
    return remaining > 0;
  };
  if (!IsTable(e)) {
    walk(InlineElements(e), first);
    return;
  }
  const ListTable& t = ListOf(e);
  auto [n, i] = Locate(t, first);
  for (; n < t.nodes.size(); ++n, i = 0) {
    if (!walk(t.nodes[n].bytes, i)) return;
  }
}

void ForEachReverse(const Entry* e, const std::function<bool(std::string_view)>& fn) {
  // Packed elements only read forwards: each node's are collected, then visited backwards.
  auto walk = [&](std::string_view bytes) {
    std::vector<std::string_view> elements;
    PackedReader r(bytes);
    std::string_view element;
    while (r.Next(&element)) elements.push_back(element);
    for (size_t i = elements.size(); i-- > 0;) {
      if (!fn(elements[i])) return false;
    }
    return true;
  };
  if (!IsTable(e)) {
    walk(InlineElements(e));
    return;
  }
  const ListTable& t = ListOf(e);
  for (size_t n = t.nodes.size(); n-- > 0;) {
    if (!walk(t.nodes[n].bytes)) return;
  }
}

void ForEach(const Entry* e, const std::function<void(std::string_view)>& fn) {
  size_t n = Size(e);
  if (n == 0) return;
  ForRange(e, 0, n - 1, [&](std::string_view element) {
    fn(element);
    return true;
  });
}

size_t ElementBytes(const Entry* e) {
  size_t bytes = 0;
  ForEach(e, [&](std::string_view element) { bytes += element.size(); });
  return bytes;
}

NodeFigures Nodes(const Entry* e) {
  if (!IsTable(e)) return {1, InlineElements(e).size()};
  NodeFigures f;
  for (const Node& node : ListOf(e).nodes) {
    ++f.nodes;
    f.packed_bytes += node.bytes.size();
  }
  return f;
}

void DestroyTable(const Entry* e) { delete &ListOf(e); }

size_t TableBytes(const Entry* e) {
  const ListTable& t = ListOf(e);
  size_t bytes = sizeof(ListTable) + t.nodes.size() * sizeof(Node);
  for (const Node& node : t.nodes) {
    if (node.bytes.capacity() > 15) bytes += node.bytes.capacity() + 1;
  }
  return bytes;
}

std::string CopyTable(const Entry* e) {
  auto* copy = new ListTable(ListOf(e));
  return std::string(reinterpret_cast<const char*>(&copy), sizeof copy);
}

const char* EncodingName(const Entry*) { return "quicklist"; }

}  // namespace lapse::engine::list
