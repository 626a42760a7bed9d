// File: engine/collection.cc
//
// Hashes and sets kept in a key's own allocation while small (packed: front-coded fields for
// hashes, intsets for integer sets; engine/packed.h) and in a table of their own past
// Redis's size thresholds, with hash fields' deadlines. Sets live in collection_set.cc; what
// both use to keep a table is declared in collection_table.h.
#include "engine/collection.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/collection_table.h"
#include "engine/db.h"
#include "engine/hash.h"
#include "engine/list.h"
#include "engine/packed.h"
#include "engine/stream.h"
#include "engine/zset.h"

namespace lapse::engine {

Entry* SpliceValue(Db& db, Entry* e, size_t pos, size_t old_len, std::string_view with, bool exact) {
  size_t size = e->value().size();
  size_t new_size = size - old_len + with.size();
  if (new_size > size) e = db.ReserveValue(e, new_size, exact);
  char* v = e->mutable_value();
  std::memmove(v + pos + with.size(), v + pos + old_len, size - pos - old_len);
  if (!with.empty()) std::memcpy(v + pos, with.data(), with.size());
  e->set_value_len(static_cast<uint32_t>(new_size));
  return e;
}

namespace collection_detail {

Entry* InstallTable(Db& db, Entry* e, CollectionTable* table) {
  e = db.ReserveValue(e, sizeof table);
  std::memcpy(e->mutable_value(), &table, sizeof table);
  e->set_value_len(sizeof table);
  e->set_collection_encoding(CollectionEncoding::kTable);
  return e;
}

// ---- Tables ----

namespace {

// After a field lost its deadline: with none left, the bounds start afresh, so that the next
// HEXPIRE files a wheel record whatever deadline it sets.
void ForgetFieldDeadline(CollectionTable& ct) {
  if (--ct.volatile_fields == 0) ct.next_field_deadline = ct.last_field_deadline = kNoDeadline;
}

}  // namespace

bool TableSet(CollectionTable& ct, std::string_view name, std::string_view value, bool keep_ttl) {
  KvTable& t = ct.table;
  uint64_t h = HashKey(name);
  Entry** link = t.FindLink(name, h);
  if (link == nullptr) {
    t.Insert(Entry::Create(name, value, ValueType::kString, kNoDeadline), h);
    return true;
  }
  Entry* old = *link;
  int64_t deadline = keep_ttl ? old->deadline() : kNoDeadline;
  if (!keep_ttl && old->deadline() != kNoDeadline) ForgetFieldDeadline(ct);
  if (value.size() <= old->value_capacity() && old->value_capacity() <= 2 * value.size() + 32) {
    if (!value.empty()) std::memmove(old->mutable_value(), value.data(), value.size());
    old->set_value_len(static_cast<uint32_t>(value.size()));
    old->set_deadline(deadline);
  } else {
    Entry::Destroy(t.ReplaceAt(link, Entry::Create(name, value, ValueType::kString, deadline)));
  }
  return false;
}

bool TableDelete(CollectionTable& ct, std::string_view name) {
  Entry** link = ct.table.FindLink(name, HashKey(name));
  if (link == nullptr) return false;
  Entry* gone = ct.table.UnlinkAt(link);
  if (gone->deadline() != kNoDeadline) ForgetFieldDeadline(ct);
  Entry::Destroy(gone);
  return true;
}

void TableForEach(const KvTable& t, const std::function<void(const Entry*)>& fn) {
  uint64_t cursor = 0;
  do {
    cursor = t.Scan(cursor, fn);
  } while (cursor != 0);
}

Entry* Rewrite(Db& db, Entry* e, std::string_view bytes, CollectionEncoding enc) {
  e = db.ReserveValue(e, bytes.size());
  std::memcpy(e->mutable_value(), bytes.data(), bytes.size());
  e->set_value_len(static_cast<uint32_t>(bytes.size()));
  e->set_collection_encoding(enc);
  return e;
}

}  // namespace collection_detail

using namespace collection_detail;

bool PackedReader::NextVarint(size_t* n) {
  if (p_ >= end_) return false;
  size_t v = 0;
  int shift = 0;
  for (;;) {
    auto byte = static_cast<uint8_t>(*p_++);
    v |= static_cast<size_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
    shift += 7;
  }
  *n = v;
  return true;
}

bool PackedReader::Next(std::string_view* element) {
  if (p_ >= end_) return false;
  size_t len = 0;
  int shift = 0;
  for (;;) {
    auto byte = static_cast<uint8_t>(*p_++);
    len |= static_cast<size_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
    shift += 7;
  }
  *element = {p_, len};
  p_ += len;
  return true;
}

namespace {
void DestroyCollectionTable(std::string_view pointer_bytes) {
  CollectionTable* t;
  std::memcpy(&t, pointer_bytes.data(), sizeof t);
  delete t;
}
}  // namespace

void DestroyTable(const Entry* e) {
  switch (e->type()) {
    case ValueType::kList:
      return list::DestroyTable(e);
    case ValueType::kZSet:
      return zset::DestroyTable(e);
    case ValueType::kStream:
      return stream::DestroyTable(e);
    default:
      return DestroyCollectionTable(e->value());
  }
}

CollectionTable& TableOf(const Entry* e) {
  CollectionTable* t;
  std::memcpy(&t, e->value().data(), sizeof t);
  return *t;
}

const char* EncodingName(const Entry* e) {
  if (e->type() == ValueType::kList) return list::EncodingName(e);
  if (e->type() == ValueType::kZSet) return zset::EncodingName(e);
  if (e->type() == ValueType::kStream) return "stream";
  switch (e->collection_encoding()) {
    case CollectionEncoding::kPacked:
      return e->type() == ValueType::kHash ? "listpack" : "hashtable";
    case CollectionEncoding::kIntSet:
      return "intset";
    case CollectionEncoding::kTable:
      return "hashtable";
  }
  return "unknown";
}

size_t TableBytes(const Entry* e) {
  if (!e->owns_table()) return 0;
  if (e->type() == ValueType::kList) return list::TableBytes(e);
  if (e->type() == ValueType::kZSet) return zset::TableBytes(e);
  if (e->type() == ValueType::kStream) return stream::Of(e).Bytes();
  const KvTable& t = TableOf(e).table;
  size_t bytes = sizeof(CollectionTable) + t.BucketBytes();
  TableForEach(t, [&](const Entry* elem) { bytes += elem->AllocatedBytes(); });
  return bytes;
}

ValueCopy::ValueCopy(const Entry& e) : type_(e.type()), encoding_bits_(e.encoding_bits()) {
  if (!e.owns_table()) {
    bytes_ = std::string(e.value());
    return;
  }
  owns_table_ = true;
  if (e.type() == ValueType::kList || e.type() == ValueType::kZSet) {
    bytes_ = e.type() == ValueType::kList ? list::CopyTable(&e) : zset::CopyTable(&e);
    return;
  }
  if (e.type() == ValueType::kStream) {
    bytes_ = stream::CopyTable(&e);
    return;
  }
  const CollectionTable& from = TableOf(&e);
  auto* copy = new CollectionTable;
  copy->volatile_fields = from.volatile_fields;
  copy->next_field_deadline = from.next_field_deadline;
  copy->last_field_deadline = from.last_field_deadline;
  TableForEach(from.table, [&](const Entry* elem) {
    copy->table.Insert(Entry::Create(elem->key(), elem->value(), ValueType::kString, elem->deadline()), HashKey(elem->key()));
  });
  bytes_.assign(reinterpret_cast<const char*>(&copy), sizeof copy);
}

ValueCopy& ValueCopy::operator=(ValueCopy&& other) noexcept {
  if (this == &other) return *this;
  if (owns_table_) DestroyCopy();
  bytes_ = std::move(other.bytes_);
  type_ = other.type_;
  encoding_bits_ = other.encoding_bits_;
  owns_table_ = other.owns_table_;
  other.owns_table_ = false;
  return *this;
}

ValueCopy::~ValueCopy() {
  if (owns_table_) DestroyCopy();
}

void ValueCopy::DestroyCopy() {
  // The copy's bytes are a table pointer, as an entry's value would hold.
  Entry* holder = Entry::Create({}, bytes_, type_, kNoDeadline);
  holder->set_encoding_bits(encoding_bits_);
  Entry::Destroy(holder);
}

bool ParseCanonicalInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') return *out = 0, true;
  size_t i = 0;
  bool negative = s[0] == '-';
  if (negative) ++i;
  if (i >= s.size() || s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(uint64_t{0} - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

// ---- Hashes ----
namespace hash {

namespace {

// A packed hash alternates fields and values. Field names are front-coded: each stores how
// many leading bytes it shares with the field before it, then the rest, so structured names
// ("field001", "field002", "user:name", "user:mail") cost a few bytes each.
void AppendField(std::string* out, std::string_view previous, std::string_view field) {
  AppendFrontCoded(out, previous, field);
}

// Walks a packed hash's pairs; the field's view lives in the reader until the next pair.
class PairReader {
 public:
  explicit PairReader(std::string_view bytes) : r_(bytes) {}
  bool Next(std::string_view* field, std::string_view* value) {
    pair_begin_ = r_.offset();
    size_t shared;
    std::string_view suffix;
    if (!r_.NextVarint(&shared)) return false;
    r_.Next(&suffix);
    field_.resize(shared);
    field_.append(suffix);
    value_begin_ = r_.offset();
    r_.Next(value);
    *field = field_;
    return true;
  }
  size_t pair_begin() const { return pair_begin_; }
  size_t value_begin() const { return value_begin_; }
  size_t offset() const { return r_.offset(); }
  const std::string& field() const { return field_; }

 private:
  PackedReader r_;
  std::string field_;
  size_t pair_begin_ = 0, value_begin_ = 0;
};

std::string EncodePairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  std::string_view previous;
  for (const auto& [f, v] : pairs) {
    AppendField(&out, previous, f);
    AppendPacked(&out, v);
    previous = f;
  }
  return out;
}

Entry* ConvertToTable(Db& db, Entry* e) {
  auto* t = new CollectionTable;
  ForEach(e, [&](std::string_view f, std::string_view v) { TableSet(*t, f, v); });
  return InstallTable(db, e, t);
}

}  // namespace

Entry* Create(Db& db, std::string_view key, int64_t now_ms) {
  Entry* e = db.Put(key, {}, ValueType::kHash, kNoDeadline, now_ms);
  e->set_collection_encoding(CollectionEncoding::kPacked);
  return e;
}

size_t Size(const Entry* e) {
  if (e->owns_table()) return TableOf(e).table.size();
  PackedReader r(e->value());
  std::string_view x;
  size_t shared, n = 0;
  while (r.NextVarint(&shared)) {
    r.Next(&x);
    r.Next(&x);
    ++n;
  }
  return n;
}

std::optional<std::string_view> Get(const Entry* e, std::string_view field) {
  if (e->owns_table()) {
    const Entry* elem = TableOf(e).table.Peek(field, HashKey(field));
    if (elem == nullptr) return std::nullopt;
    return elem->value();
  }
  PairReader r(e->value());
  std::string_view f, v;
  while (r.Next(&f, &v)) {
    if (f == field) return v;
  }
  return std::nullopt;
}

void ConvertForLengths(Db& db, Entry*& e, std::initializer_list<std::string_view> strings, const CollectionLimits& limits) {
  if (e->owns_table()) return;
  for (std::string_view s : strings) {
    if (s.size() > limits.hash_max_listpack_value) {
      e = ConvertToTable(db, e);
      return;
    }
  }
}

bool Set(Db& db, Entry*& e, std::string_view field, std::string_view value, const CollectionLimits& limits,
         bool check_lengths, bool keep_ttl) {
  if (check_lengths) ConvertForLengths(db, e, {field, value}, limits);
  if (e->owns_table()) return TableSet(TableOf(e), field, value, keep_ttl);
  PairReader r(e->value());
  std::string_view f, v;
  std::string encoded;
  while (r.Next(&f, &v)) {
    if (f != field) continue;
    AppendPacked(&encoded, value);
    e = SpliceValue(db, e, r.value_begin(), r.offset() - r.value_begin(), encoded);
    return false;
  }
  AppendField(&encoded, r.field(), field);
  AppendPacked(&encoded, value);
  e = SpliceValue(db, e, e->value().size(), 0, encoded);
  if (Size(e) > limits.hash_max_listpack_entries) e = ConvertToTable(db, e);
  return true;
}

// The next field's coding refers to the deleted one, so the pairs are encoded anew: O(n),
// as a listpack's memmove is.
bool Delete(Db& db, Entry*& e, std::string_view field) {
  if (e->owns_table()) return TableDelete(TableOf(e), field);
  std::vector<std::pair<std::string, std::string>> pairs;
  bool found = false;
  ForEach(e, [&](std::string_view f, std::string_view v) {
    if (f == field) found = true;
    else pairs.emplace_back(f, v);
  });
  if (!found) return false;
  e = Rewrite(db, e, EncodePairs(pairs), CollectionEncoding::kPacked);
  return true;
}

void ForEach(const Entry* e, const std::function<void(std::string_view, std::string_view)>& fn) {
  if (e->owns_table()) {
    TableForEach(TableOf(e).table, [&](const Entry* elem) { fn(elem->key(), elem->value()); });
    return;
  }
  PairReader r(e->value());
  std::string_view f, v;
  while (r.Next(&f, &v)) fn(f, v);
}

std::pair<std::string_view, std::string_view> Random(const Entry* e, uint64_t random, std::string* field_buffer) {
  if (e->owns_table()) {
    const Entry* elem = TableOf(e).table.RandomEntry(random);
    return {elem->key(), elem->value()};
  }
  size_t index = random % Size(e);
  PairReader r(e->value());
  std::string_view f, v;
  for (size_t i = 0; i <= index; ++i) r.Next(&f, &v);
  *field_buffer = r.field();
  return {*field_buffer, v};
}

int SetFieldDeadline(Db& db, Entry*& e, std::string_view field, int64_t deadline_ms, TtlCondition cond,
                     int64_t now_ms, const CollectionLimits& limits) {
  if (!Get(e, field)) return -2;
  if (!e->owns_table()) e = ConvertToTable(db, e);
  CollectionTable& ct = TableOf(e);
  uint64_t h = HashKey(field);
  Entry** link = ct.table.FindLink(field, h);
  int64_t previous = (*link)->deadline();
  bool has = previous != kNoDeadline;
  if ((cond == TtlCondition::kNx && has) || (cond == TtlCondition::kXx && !has) ||
      (cond == TtlCondition::kGt && (!has || deadline_ms <= previous)) ||
      (cond == TtlCondition::kLt && has && deadline_ms >= previous))
    return 0;
  if (deadline_ms <= now_ms) {
    TableDelete(ct, field);
    return 2;
  }
  Entry* elem = *link;
  if (elem->has_deadline_slot()) {
    elem->set_deadline(deadline_ms);
  } else {
    Entry* fresh = Entry::Create(elem->key(), elem->value(), ValueType::kString, deadline_ms);
    Entry::Destroy(ct.table.ReplaceAt(link, fresh));
  }
  if (!has) ++ct.volatile_fields;
  if (ct.next_field_deadline == kNoDeadline || deadline_ms < ct.next_field_deadline) {
    ct.next_field_deadline = deadline_ms;
    db.ScheduleFieldExpiry(e->key(), deadline_ms);
  } else if (ct.next_field_deadline <= now_ms) {
    // A bound already passed may have no record left: file one for this deadline.
    db.ScheduleFieldExpiry(e->key(), deadline_ms);
  }
  ct.last_field_deadline = std::max(ct.last_field_deadline, deadline_ms);
  return 1;
}

int64_t FieldDeadline(const Entry* e, std::string_view field) {
  if (!e->owns_table()) return Get(e, field) ? -1 : -2;
  const Entry* elem = TableOf(e).table.Peek(field, HashKey(field));
  if (elem == nullptr) return -2;
  return elem->deadline() == kNoDeadline ? -1 : elem->deadline();
}

int PersistField(Entry* e, std::string_view field) {
  int64_t d = FieldDeadline(e, field);
  if (d < 0) return static_cast<int>(d);
  CollectionTable& ct = TableOf(e);
  Entry** link = ct.table.FindLink(field, HashKey(field));
  (*link)->set_deadline(kNoDeadline);
  ForgetFieldDeadline(ct);
  return 1;
}

bool HasDueFields(const Entry* e, int64_t now_ms) {
  if (e->type() != ValueType::kHash || !e->owns_table()) return false;
  const CollectionTable& ct = TableOf(e);
  return ct.volatile_fields > 0 && ct.next_field_deadline <= now_ms;
}

bool AllFieldsExpired(const Entry* e, int64_t now_ms) {
  if (e->type() != ValueType::kHash || !e->owns_table()) return false;
  const CollectionTable& ct = TableOf(e);
  if (ct.volatile_fields == 0 || ct.volatile_fields < ct.table.size() || ct.next_field_deadline > now_ms) return false;
  if (ct.last_field_deadline <= now_ms) return true;
  bool all = true;
  TableForEach(ct.table, [&](const Entry* elem) {
    if (elem->deadline() == kNoDeadline || elem->deadline() > now_ms) all = false;
  });
  return all;
}

size_t PurgeDueFields(Entry* e, int64_t now_ms) {
  CollectionTable& ct = TableOf(e);
  std::vector<std::string> due;
  int64_t next = kNoDeadline, last = kNoDeadline;
  TableForEach(ct.table, [&](const Entry* elem) {
    int64_t d = elem->deadline();
    if (d == kNoDeadline) return;
    if (d <= now_ms) {
      due.emplace_back(elem->key());
      return;
    }
    if (next == kNoDeadline || d < next) next = d;
    last = std::max(last, d);
  });
  for (const std::string& f : due) TableDelete(ct, f);
  ct.next_field_deadline = next;
  ct.last_field_deadline = last;
  return due.size();
}

int64_t NextFieldDeadline(const Entry* e) {
  if (e->type() != ValueType::kHash || !e->owns_table()) return kNoDeadline;
  const CollectionTable& ct = TableOf(e);
  return ct.volatile_fields > 0 ? ct.next_field_deadline : kNoDeadline;
}

}  // namespace hash

uint64_t ScanCollection(const Entry* e, uint64_t cursor, size_t count,
                        const std::function<void(std::string_view, std::string_view)>& fn) {
  if (!e->owns_table()) {
    if (e->type() == ValueType::kHash) {
      hash::ForEach(e, fn);
    } else {
      set::ForEach(e, [&](std::string_view m) { fn(m, {}); });
    }
    return 0;
  }
  const KvTable& t = TableOf(e).table;
  size_t emitted = 0;
  // Ten buckets per requested element at most, as Redis bounds one step.
  size_t budget = count > SIZE_MAX / 10 ? SIZE_MAX : count * 10;
  do {
    cursor = t.Scan(cursor, [&](const Entry* elem) {
      fn(elem->key(), elem->value());
      ++emitted;
    });
  } while (cursor != 0 && emitted < count && --budget > 0);
  return cursor;
}

}  // namespace lapse::engine
