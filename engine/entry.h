// File: engine/entry.h
//
// One key and its value in a single allocation, chained into its bucket:
//
//   | next (8) | key_len (4) | value_len (4) | type (4 bits) flags (4 bits) | access (3) |
//   | deadline (8, only if kDeadlineSlot) | key bytes | value bytes |
//
// The 20-byte header is the whole per-key overhead besides the bucket pointer:
// no separate key object, value object or expiry dictionary as in Redis. A key with a TTL
// carries its deadline here (8 bytes) and one 8-byte record in the timing wheel, which is
// the entire cost of having a TTL. Entries are only ever referenced from their bucket chain
// (the wheel holds key hashes, not pointers), so an entry may be reallocated freely.
//
// For strings the value bytes are the string itself. A small collection (hash, set, list,
// sorted set) keeps its
// elements in the value bytes too, packed (engine/collection.h), so it costs no allocation
// beyond its entry; a large one keeps an 8-byte pointer to its own table there, which the
// entry owns (Destroy frees it).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace lapse::engine {

enum class ValueType : uint8_t { kString = 0, kHash = 1, kSet = 2, kList = 3, kZSet = 4, kStream = 5 };

// How a collection's elements lie in its entry's value bytes (engine/collection.h).
enum class CollectionEncoding : uint8_t {
  kPacked = 0,  // length-prefixed elements in insertion order (hash: field, value, ...)
  kIntSet = 1,  // sorted integers of one width (sets whose members are all integers)
  kTable = 2,   // an 8-byte pointer to the type's own big structure, which the entry owns
};

inline constexpr int64_t kNoDeadline = 0;

// How Redis would encode a string value, as reported by OBJECT ENCODING.
enum class StringEncoding : uint8_t {
  kByContent = 0,  // stored whole (SET and most writes): int, embstr or raw by the bytes
  kRaw = 1,        // grown or edited in place (APPEND, SETRANGE): raw whatever the bytes
  kNoInt = 2,      // a number's text (INCRBYFLOAT): embstr or raw by length, never int
};

class Entry {
 public:
  // Allocates an entry; a deadline slot is reserved when `deadline_ms` != kNoDeadline or
  // `reserve_deadline` is set. `value_capacity` >= value.size() leaves room for growth.
  static Entry* Create(std::string_view key, std::string_view value, ValueType type, int64_t deadline_ms,
                       bool reserve_deadline = false, size_t value_capacity = 0);
  // Frees the entry and the table it owns, if any.
  static void Destroy(Entry* e);
  // Frees the entry alone: its value bytes (a table pointer included) were copied into a
  // fresh entry that now owns them.
  static void DestroyMoved(Entry* e);

  Entry* next() const { return next_; }
  void set_next(Entry* n) { next_ = n; }
  Entry** next_link() { return &next_; }

  std::string_view key() const { return {KeyPtr(), key_len_}; }
  std::string_view value() const { return {ValuePtr(), value_len_}; }
  char* mutable_value() { return ValuePtr(); }
  ValueType type() const { return static_cast<ValueType>(type_); }

  bool has_deadline_slot() const { return flags_ & kDeadlineSlot; }
  // kNoDeadline when the key is persistent.
  int64_t deadline() const {
    if (!has_deadline_slot()) return kNoDeadline;
    int64_t d;
    std::memcpy(&d, Payload(), sizeof d);
    return d;
  }
  // Requires has_deadline_slot() (or `d` == kNoDeadline, which is then a no-op).
  void set_deadline(int64_t d) {
    if (!has_deadline_slot()) return;
    std::memcpy(Payload(), &d, sizeof d);
  }

  // What OBJECT ENCODING answers depends in Redis on how a string was built, not only on its
  // bytes, so the entry remembers it. A whole new value (Db::Put) resets it to kByContent;
  // a reallocation keeps it.
  StringEncoding string_encoding() const { return static_cast<StringEncoding>((flags_ & kEncodingMask) >> 1); }
  void set_string_encoding(StringEncoding enc) { set_encoding_bits(static_cast<uint8_t>(enc)); }

  // A collection's layout; shares the bits of string_encoding(), which strings use.
  CollectionEncoding collection_encoding() const { return static_cast<CollectionEncoding>((flags_ & kEncodingMask) >> 1); }
  void set_collection_encoding(CollectionEncoding enc) { set_encoding_bits(static_cast<uint8_t>(enc)); }
  // Either encoding as raw bits, for code that carries a value whatever its type (RENAME).
  uint8_t encoding_bits() const { return static_cast<uint8_t>((flags_ & kEncodingMask) >> 1); }
  void set_encoding_bits(uint8_t bits) { flags_ = static_cast<uint8_t>((flags_ & ~kEncodingMask) | (bits << 1)); }
  bool owns_table() const {
    return type() != ValueType::kString && collection_encoding() == CollectionEncoding::kTable;
  }

  // Bytes the value may grow to in place (from the allocator's real block size).
  size_t value_capacity() const;
  // Changes the value length in place; requires new_len <= value_capacity().
  void set_value_len(uint32_t new_len) { value_len_ = new_len; }

  // 24 bits of how recently or how often the key was used, as Redis's robj.lru: read and
  // written only through engine/access.h, which knows which of the two it holds.
  uint32_t access_stamp() const { return (static_cast<uint32_t>(access_high_) << 16) | access_low_; }
  void set_access_stamp(uint32_t stamp) {
    access_high_ = static_cast<uint8_t>(stamp >> 16);
    access_low_ = static_cast<uint16_t>(stamp);
  }

  size_t AllocatedBytes() const;

  // Which side of the last snapshot start the entry is on (engine/kv_table.h): a table
  // compares it with its own mark to tell an entry a running background save still has to
  // write from one it wrote already or that was created after the save began. It costs no
  // space: the last free flag bit.
  uint8_t snapshot_mark() const { return (flags_ & kSnapshotMark) ? 1 : 0; }
  void set_snapshot_mark(uint8_t mark) {
    flags_ = static_cast<uint8_t>(mark ? (flags_ | kSnapshotMark) : (flags_ & ~kSnapshotMark));
  }

 private:
  static constexpr uint8_t kDeadlineSlot = 1;
  static constexpr uint8_t kEncodingMask = 6;  // bits 1-2: a StringEncoding
  static constexpr uint8_t kSnapshotMark = 8;
  // type_ and flags_ share a byte so that the access stamp gets 24 bits, Redis's width,
  // without growing the header.

  Entry() = default;
  // The payload starts right after access_low_, inside what would be the struct's tail padding.
  static constexpr size_t kHeaderBytes = 20;
  char* Payload() { return reinterpret_cast<char*>(this) + kHeaderBytes; }
  const char* Payload() const { return reinterpret_cast<const char*>(this) + kHeaderBytes; }
  size_t DeadlineBytes() const { return has_deadline_slot() ? sizeof(int64_t) : 0; }
  char* KeyPtr() { return Payload() + DeadlineBytes(); }
  const char* KeyPtr() const { return Payload() + DeadlineBytes(); }
  char* ValuePtr() { return KeyPtr() + key_len_; }
  const char* ValuePtr() const { return KeyPtr() + key_len_; }

  Entry* next_;
  uint32_t key_len_;
  uint32_t value_len_;
  uint8_t type_ : 4;
  uint8_t flags_ : 4;
  uint8_t access_high_;
  uint16_t access_low_;
};

static_assert(sizeof(Entry) == 24, "entry header is 20 bytes plus tail padding the payload reuses");

}  // namespace lapse::engine
