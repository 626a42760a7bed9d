// File: engine/collection_set.cc
//
// Sets: an intset while every member is an integer and there are at most
// set-max-intset-entries of them, else a table (Redis 7.0 has no listpack sets).
#include "engine/collection.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/collection_table.h"
#include "engine/db.h"
#include "engine/hash.h"
#include "engine/packed.h"

namespace lapse::engine {

using namespace collection_detail;

namespace {

// ---- Intsets ----
//
// Redis's intset stores sorted members at a fixed width of 2, 4 or 8 bytes. lapse stores
// them as offsets from the smallest member, each in just the bits the largest offset needs
// (frame of reference): [bits: u8][count: u32][base: i64][count x bits, LSB first]. A set of
// 100 ids within a range of a thousand takes 10 bits a member instead of 16. The order and
// every reply are Redis's; only the bytes differ. Edits decode and re-encode the whole
// intset: O(n), as Redis's memmove is, for at most set-max-intset-entries members.

constexpr size_t kIntSetHeader = 1 + 4 + 8;

struct IntSetView {
  unsigned bits;
  size_t count;
  int64_t base;
  const uint8_t* data;
  const uint8_t* end;

  explicit IntSetView(std::string_view v) {
    bits = static_cast<uint8_t>(v[0]);
    uint32_t n;
    std::memcpy(&n, v.data() + 1, 4);
    count = n;
    std::memcpy(&base, v.data() + 5, 8);
    data = reinterpret_cast<const uint8_t*>(v.data()) + kIntSetHeader;
    end = reinterpret_cast<const uint8_t*>(v.data()) + v.size();
  }
  int64_t At(size_t i) const {
    if (bits == 0) return base;
    size_t bit = i * bits;
    const uint8_t* p = data + bit / 8;
    unsigned __int128 window = 0;
    size_t need = (bit % 8 + bits + 7) / 8;
    for (size_t k = 0; k < need && p + k < end; ++k) window |= static_cast<unsigned __int128>(p[k]) << (8 * k);
    uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    uint64_t offset = static_cast<uint64_t>(window >> (bit % 8)) & mask;
    return static_cast<int64_t>(static_cast<uint64_t>(base) + offset);
  }
  // The index of `v`, or where it would be inserted (found = false).
  size_t Search(int64_t v, bool* found) const {
    size_t lo = 0, hi = count;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      int64_t m = At(mid);
      if (m == v) return *found = true, mid;
      if (m < v) lo = mid + 1;
      else hi = mid;
    }
    *found = false;
    return lo;
  }
  std::vector<int64_t> Decode() const {
    std::vector<int64_t> out(count);
    for (size_t i = 0; i < count; ++i) out[i] = At(i);
    return out;
  }
};

// Encodes sorted, distinct members.
std::string EncodeIntSet(const std::vector<int64_t>& sorted) {
  int64_t base = sorted.empty() ? 0 : sorted.front();
  uint64_t range = sorted.empty() ? 0 : static_cast<uint64_t>(sorted.back()) - static_cast<uint64_t>(base);
  unsigned bits = range == 0 ? 0 : 64 - static_cast<unsigned>(__builtin_clzll(range));
  std::string out(kIntSetHeader + (sorted.size() * bits + 7) / 8, '\0');
  out[0] = static_cast<char>(bits);
  auto n = static_cast<uint32_t>(sorted.size());
  std::memcpy(out.data() + 1, &n, 4);
  std::memcpy(out.data() + 5, &base, 8);
  unsigned __int128 acc = 0;
  unsigned filled = 0;
  size_t pos = kIntSetHeader;
  for (int64_t v : sorted) {
    acc |= static_cast<unsigned __int128>(static_cast<uint64_t>(v) - static_cast<uint64_t>(base)) << filled;
    filled += bits;
    while (filled >= 8) {
      out[pos++] = static_cast<char>(static_cast<uint8_t>(acc));
      acc >>= 8;
      filled -= 8;
    }
  }
  if (filled > 0) out[pos] = static_cast<char>(static_cast<uint8_t>(acc));
  return out;
}

std::string_view FormatInt(int64_t v, char (&buf)[24]) {
  char* end = buf + sizeof buf;
  char* p = end;
  uint64_t u = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  return {p, static_cast<size_t>(end - p)};
}

}  // namespace

namespace set {

namespace {

bool FindPacked(const Entry* e, std::string_view member, size_t* begin, size_t* end) {
  PackedReader r(e->value());
  std::string_view m;
  for (;;) {
    size_t b = r.offset();
    if (!r.Next(&m)) return false;
    if (m == member) {
      *begin = b;
      *end = r.offset();
      return true;
    }
  }
}

Entry* ConvertToTable(Db& db, Entry* e) {
  auto* t = new CollectionTable;
  ForEach(e, [&](std::string_view m) { TableSet(*t, m, {}); });
  return InstallTable(db, e, t);
}

// An intset that must take a member that is not an integer: packed strings while small.
Entry* ConvertIntSetForString(Db& db, Entry* e, std::string_view member) {
  if (Size(e) + 1 > kPackedSetMaxEntries || member.size() > kPackedSetMaxMember) return ConvertToTable(db, e);
  std::string packed;
  ForEach(e, [&](std::string_view m) { AppendPacked(&packed, m); });
  return Rewrite(db, e, packed, CollectionEncoding::kPacked);
}

bool AddToIntSet(Db& db, Entry*& e, int64_t v) {
  IntSetView view(e->value());
  bool found;
  size_t pos = view.Search(v, &found);
  if (found) return false;
  std::vector<int64_t> members = view.Decode();
  members.insert(members.begin() + static_cast<std::ptrdiff_t>(pos), v);
  e = Rewrite(db, e, EncodeIntSet(members), CollectionEncoding::kIntSet);
  return true;
}

}  // namespace

Entry* Create(Db& db, std::string_view key, std::string_view first_member, int64_t now_ms) {
  int64_t v;
  bool ints = ParseCanonicalInt(first_member, &v);
  Entry* e = db.Put(key, ints ? EncodeIntSet({}) : std::string(), ValueType::kSet, kNoDeadline, now_ms);
  e->set_collection_encoding(ints ? CollectionEncoding::kIntSet : CollectionEncoding::kPacked);
  return e;
}

size_t Size(const Entry* e) {
  switch (e->collection_encoding()) {
    case CollectionEncoding::kTable:
      return TableOf(e).table.size();
    case CollectionEncoding::kIntSet:
      return IntSetView(e->value()).count;
    case CollectionEncoding::kPacked:
      break;
  }
  PackedReader r(e->value());
  std::string_view x;
  size_t n = 0;
  while (r.Next(&x)) ++n;
  return n;
}

bool Contains(const Entry* e, std::string_view member) {
  switch (e->collection_encoding()) {
    case CollectionEncoding::kTable:
      return TableOf(e).table.Peek(member, HashKey(member)) != nullptr;
    case CollectionEncoding::kIntSet: {
      int64_t v;
      if (!ParseCanonicalInt(member, &v)) return false;
      bool found;
      IntSetView(e->value()).Search(v, &found);
      return found;
    }
    case CollectionEncoding::kPacked:
      break;
  }
  size_t b, end;
  return FindPacked(e, member, &b, &end);
}

bool Add(Db& db, Entry*& e, std::string_view member, const CollectionLimits& limits) {
  if (e->collection_encoding() == CollectionEncoding::kIntSet) {
    int64_t v;
    if (ParseCanonicalInt(member, &v)) {
      if (!AddToIntSet(db, e, v)) return false;
      if (Size(e) > limits.set_max_intset_entries) e = ConvertToTable(db, e);
      return true;
    }
    e = ConvertIntSetForString(db, e, member);
  }
  if (e->owns_table()) return TableSet(TableOf(e), member, {});
  size_t b, end;
  if (FindPacked(e, member, &b, &end)) return false;
  if (member.size() > kPackedSetMaxMember || Size(e) + 1 > kPackedSetMaxEntries) {
    e = ConvertToTable(db, e);
    return TableSet(TableOf(e), member, {});
  }
  std::string encoded;
  AppendPacked(&encoded, member);
  e = SpliceValue(db, e, e->value().size(), 0, encoded);
  return true;
}

bool Remove(Db& db, Entry*& e, std::string_view member) {
  switch (e->collection_encoding()) {
    case CollectionEncoding::kTable:
      return TableDelete(TableOf(e), member);
    case CollectionEncoding::kIntSet: {
      int64_t v;
      if (!ParseCanonicalInt(member, &v)) return false;
      IntSetView view(e->value());
      bool found;
      size_t pos = view.Search(v, &found);
      if (!found) return false;
      std::vector<int64_t> members = view.Decode();
      members.erase(members.begin() + static_cast<std::ptrdiff_t>(pos));
      e = Rewrite(db, e, EncodeIntSet(members), CollectionEncoding::kIntSet);
      return true;
    }
    case CollectionEncoding::kPacked:
      break;
  }
  size_t b, end;
  if (!FindPacked(e, member, &b, &end)) return false;
  e = SpliceValue(db, e, b, end - b, {});
  return true;
}

void ForEach(const Entry* e, const std::function<void(std::string_view)>& fn) {
  switch (e->collection_encoding()) {
    case CollectionEncoding::kTable:
      TableForEach(TableOf(e).table, [&](const Entry* elem) { fn(elem->key()); });
      return;
    case CollectionEncoding::kIntSet: {
      IntSetView view(e->value());
      char buf[24];
      for (size_t i = 0; i < view.count; ++i) fn(FormatInt(view.At(i), buf));
      return;
    }
    case CollectionEncoding::kPacked:
      break;
  }
  PackedReader r(e->value());
  std::string_view m;
  while (r.Next(&m)) fn(m);
}

std::string_view Random(const Entry* e, uint64_t random, std::string* buffer) {
  switch (e->collection_encoding()) {
    case CollectionEncoding::kTable:
      return TableOf(e).table.RandomEntry(random)->key();
    case CollectionEncoding::kIntSet: {
      IntSetView view(e->value());
      char buf[24];
      *buffer = std::string(FormatInt(view.At(random % view.count), buf));
      return *buffer;
    }
    case CollectionEncoding::kPacked:
      break;
  }
  size_t index = random % Size(e);
  PackedReader r(e->value());
  std::string_view m;
  for (size_t i = 0; i <= index; ++i) r.Next(&m);
  return m;
}

}  // namespace set


}  // namespace lapse::engine
