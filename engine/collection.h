// File: engine/collection.h
//
// Hashes and sets: collections that live in a key's entry (engine/entry.h).
//
// A collection has one of three layouts, recorded in its entry's CollectionEncoding:
//
//   kPacked  the elements themselves in the entry's value bytes, each as a LEB128 length
//            and its bytes, in insertion order (a hash alternates field and value, its
//            field names front-coded against the previous field: collection.cc). Like
//            Redis's listpack, but without a separate object or allocation: a hash of ten
//            small fields is one malloc block holding key and fields together.
//   kIntSet  a set whose members are all integers, in ascending order as Redis's intset,
//            each stored as its offset from the smallest in just the bits the largest
//            offset needs (collection_set.cc).
//   kTable   8 bytes: a pointer to a CollectionTable, a KvTable whose entries are the
//            elements (field -> value; a set member has an empty value). One allocation
//            per element, where Redis's hashtable encoding needs three.
//
// Layouts follow Redis 7.0's thresholds, so OBJECT ENCODING answers what Redis would: a hash
// is packed ("listpack") until it has more than hash-max-listpack-entries fields or a field
// or value longer than hash-max-listpack-value; a set is an intset until a member is not an
// integer or it has more than set-max-intset-entries members. Redis 7.0 has no packed sets
// of strings; lapse packs small ones anyway (the memory matters more than the label) and
// reports them as "hashtable", which is what Redis would say. No layout ever converts back
// to a smaller one, as in Redis.
//
// Editing functions take the entry by reference: growing packed bytes may reallocate it
// (Db::ReserveValue). A collection is never left empty by the functions here except by
// Remove/Delete, whose callers delete the key when the size reaches 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/entry.h"
#include "engine/kv_table.h"

namespace lapse::engine {

class Db;

// The thresholds of the packed layouts, as Redis's CONFIG names them.
struct CollectionLimits {
  size_t hash_max_listpack_entries = 128;
  size_t hash_max_listpack_value = 64;
  size_t set_max_intset_entries = 512;
  // Redis's list-max-listpack-size: > 0 caps a list node's elements, -1..-5 its bytes
  // (4, 8, 16, 32 or 64 KiB).
  int64_t list_max_listpack_size = -2;
  size_t zset_max_listpack_entries = 128;
  size_t zset_max_listpack_value = 64;
};

// lapse's own limits for packed sets of strings (reported as "hashtable").
inline constexpr size_t kPackedSetMaxEntries = 128;
inline constexpr size_t kPackedSetMaxMember = 64;

// A field's TTL (HEXPIRE) lives in its element entry's deadline slot (8 bytes) and costs one
// 8-byte record in its Db's timing wheel per scheduled deadline: the wheel holds the key's
// hash, and when it fires the hash drops its due fields and files its next deadline. Only
// tables carry field TTLs (a packed hash converts on the first HEXPIRE).
struct CollectionTable {
  KvTable table;
  size_t volatile_fields = 0;               // elements with a deadline
  int64_t next_field_deadline = kNoDeadline;  // <= every field deadline (a lower bound)
  int64_t last_field_deadline = kNoDeadline;  // >= every field deadline (an upper bound)
};

// For Entry::Destroy: frees the big structure an entry of any collection type owns.
void DestroyTable(const Entry* e);
// A hash's or set's table.
CollectionTable& TableOf(const Entry* e);

// What OBJECT ENCODING answers for a collection.
const char* EncodingName(const Entry* e);
// Heap bytes the collection owns beyond its entry (MEMORY USAGE).
size_t TableBytes(const Entry* e);

// A collection's value as bytes that may be stored under another key (COPY, RENAME across
// shards): packed layouts are copied as they are; a table is duplicated, and the copy
// belongs to the holder until Release() (its destructor frees it otherwise).
class ValueCopy {
 public:
  ValueCopy() = default;
  explicit ValueCopy(const Entry& e);
  ValueCopy(ValueCopy&& other) noexcept { *this = std::move(other); }
  ValueCopy& operator=(ValueCopy&& other) noexcept;
  ~ValueCopy();
  std::string_view bytes() const { return bytes_; }
  ValueType type() const { return type_; }
  uint8_t encoding_bits() const { return encoding_bits_; }
  // Hands the duplicated table (if any) to the entry now holding bytes().
  void Release() { owns_table_ = false; }

 private:
  void DestroyCopy();

  std::string bytes_;
  ValueType type_ = ValueType::kString;
  uint8_t encoding_bits_ = 0;
  bool owns_table_ = false;
};

// Whether `s` is an integer in Redis's canonical form (string2ll): what an intset may hold.
bool ParseCanonicalInt(std::string_view s, int64_t* out);

// Walks packed elements.
class PackedReader {
 public:
  explicit PackedReader(std::string_view bytes) : p_(bytes.data()), begin_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool Next(std::string_view* element);
  bool NextVarint(size_t* n);
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }

 private:
  const char* p_;
  const char* begin_;
  const char* end_;
};

// ---- Hashes ----
namespace hash {

// A new, empty hash under `key` (the caller adds a field at once).
Entry* Create(Db& db, std::string_view key, int64_t now_ms);
size_t Size(const Entry* e);
std::optional<std::string_view> Get(const Entry* e, std::string_view field);
// Sets `field`; returns true when it is new. With `check_lengths`, a field or value longer
// than hash-max-listpack-value converts a packed hash first (Redis's hashTypeTryConversion).
// A field's TTL is cleared by a new value (HSET) unless `keep_ttl` (HINCRBY).
bool Set(Db& db, Entry*& e, std::string_view field, std::string_view value, const CollectionLimits& limits,
         bool check_lengths = true, bool keep_ttl = false);
// Converts a packed hash to a table when any of `strings` is longer than the limit.
void ConvertForLengths(Db& db, Entry*& e, std::initializer_list<std::string_view> strings, const CollectionLimits& limits);
bool Delete(Db& db, Entry*& e, std::string_view field);
// Every field and value, in the layout's order. The field's view is valid only during the call.
void ForEach(const Entry* e, const std::function<void(std::string_view field, std::string_view value)>& fn);
// A random field (and its value); the hash must not be empty. A packed hash's field is
// written to *field_buffer.
std::pair<std::string_view, std::string_view> Random(const Entry* e, uint64_t random, std::string* field_buffer);

// ---- Field TTLs (Redis 7.4's HEXPIRE family) ----
enum class TtlCondition { kAlways, kNx, kXx, kGt, kLt };
// HEXPIRE's per-field answer: -2 no such field, 0 condition not met, 1 set, 2 deleted
// (a deadline <= now). The caller deletes the key when the hash is left empty.
int SetFieldDeadline(Db& db, Entry*& e, std::string_view field, int64_t deadline_ms, TtlCondition cond,
                     int64_t now_ms, const CollectionLimits& limits);
// -2 no such field, -1 no deadline, else the field's deadline.
int64_t FieldDeadline(const Entry* e, std::string_view field);
// HPERSIST's answer: -2 no such field, -1 no deadline, 1 removed.
int PersistField(Entry* e, std::string_view field);
// When a field deadline is due: some field may be gone at now_ms.
bool HasDueFields(const Entry* e, int64_t now_ms);
// When every field is gone at now_ms (the hash then counts as expired).
bool AllFieldsExpired(const Entry* e, int64_t now_ms);
// Deletes the fields due at now_ms; returns how many.
size_t PurgeDueFields(Entry* e, int64_t now_ms);
// The earliest field deadline to file in the wheel, kNoDeadline when none.
int64_t NextFieldDeadline(const Entry* e);

}  // namespace hash

// ---- Sets ----
namespace set {

// A new, empty set under `key`: an intset when `first_member` is an integer.
Entry* Create(Db& db, std::string_view key, std::string_view first_member, int64_t now_ms);
size_t Size(const Entry* e);
bool Contains(const Entry* e, std::string_view member);
// Adds `member`; returns true when it was absent.
bool Add(Db& db, Entry*& e, std::string_view member, const CollectionLimits& limits);
bool Remove(Db& db, Entry*& e, std::string_view member);
// Every member, in the layout's order (an intset's ascending). The view passed to `fn` is
// valid only during the call.
void ForEach(const Entry* e, const std::function<void(std::string_view member)>& fn);
// A random member, written to *buffer for an intset; the set must not be empty.
std::string_view Random(const Entry* e, uint64_t random, std::string* buffer);

}  // namespace set

// One step of HSCAN/SSCAN: packed layouts answer everything at once (cursor 0, as Redis
// does for listpacks and intsets); a table visits buckets until about `count` elements.
// fn(element, value) — value is empty for sets.
uint64_t ScanCollection(const Entry* e, uint64_t cursor, size_t count,
                        const std::function<void(std::string_view, std::string_view)>& fn);

}  // namespace lapse::engine
