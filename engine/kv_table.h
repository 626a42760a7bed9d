// File: engine/kv_table.h
//
// Chained hash table of Entry nodes with incremental rehashing, in the manner of Redis's
// dict.c: while the table grows or shrinks, two bucket arrays coexist and every operation
// moves a bounded number of buckets (at most one non-empty bucket, visiting at most ten
// empty ones), so no single request pays for a whole resize. Lookups see both arrays.
//
// Buckets are bare Entry pointers (8 bytes each, load factor kept between 1/8 and 1), and
// entries are chained through their own `next` field, so the table adds nothing per key
// beyond its bucket share. Scan() uses Redis's reverse-binary cursor, which guarantees that
// every key present for the whole scan is returned at least once across resizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/entry.h"

namespace lapse::engine {

class KvTable {
 public:
  KvTable() = default;
  ~KvTable();
  KvTable(const KvTable&) = delete;
  KvTable& operator=(const KvTable&) = delete;
  KvTable(KvTable&& other) noexcept;
  KvTable& operator=(KvTable&& other) noexcept;

  // The link (bucket slot or predecessor's next) that points at the entry with `key`, or
  // nullptr. Valid only until the next mutating call on this table.
  Entry** FindLink(std::string_view key, uint64_t hash);
  Entry* Find(std::string_view key, uint64_t hash) {
    Entry** link = FindLink(key, hash);
    return link ? *link : nullptr;
  }

  // Find without the rehash step: safe while iterating the table (ForEachInBucketOf).
  const Entry* Peek(std::string_view key, uint64_t hash) const;

  // Adds an entry whose key is not present.
  void Insert(Entry* e, uint64_t hash);
  // Puts `fresh` in the place of the entry `*link` points at and returns the old entry,
  // which the caller destroys.
  Entry* ReplaceAt(Entry** link, Entry* fresh);
  // Unlinks the entry `*link` points at and returns it; the caller destroys it.
  Entry* UnlinkAt(Entry** link);

  // Calls fn(link) for every entry whose bucket is the one `hash` maps to, in both arrays;
  // fn returns true if it unlinked the entry at *link (iteration then re-reads *link).
  void ForEachInBucketOf(uint64_t hash, const std::function<bool(Entry** link)>& fn);

  size_t size() const { return size_; }
  // While paused, the table may grow but never shrink (a snapshot walks it with Scan).
  void set_shrink_paused(bool paused) { shrink_paused_ = paused; }
  // Completes a rehash under way at once.
  void FinishRehash() {
    while (RehashStep(1024)) {
    }
  }
  size_t bucket_count() const { return tables_[0].size() + tables_[1].size(); }
  bool rehashing() const { return !tables_[1].empty(); }

  // Visits the buckets for `cursor` and returns the next cursor (0 when done).
  // fn may not mutate the table.
  uint64_t Scan(uint64_t cursor, const std::function<void(const Entry*)>& fn) const;
  // A uniformly chosen bucket's random entry (biased by chain length, as Redis's), or null.
  Entry* RandomEntry(uint64_t random) const;

  // Destroys every entry.
  void Clear();
  // Removes and destroys up to `max` entries, handing each to `fn` first; tears a large
  // table down in slices. The table must not be used otherwise until it is empty.
  size_t DrainSome(size_t max, const std::function<void(Entry*)>& fn);
  // Moves up to `buckets` buckets of an ongoing rehash; returns true if rehashing remains.
  bool RehashStep(size_t buckets);
  // Table memory excluding entries.
  size_t BucketBytes() const { return bucket_count() * sizeof(Entry*); }

 private:
  using Buckets = std::vector<Entry*>;

  void MaybeResize();
  void StartRehash(size_t new_size);
  size_t BucketIndex(const Buckets& t, uint64_t hash) const { return hash & (t.size() - 1); }

  Buckets tables_[2];
  size_t rehash_index_ = 0;  // buckets of tables_[0] below this are already moved
  size_t drain_index_ = 0;   // DrainSome's position over tables_[0] then tables_[1]
  size_t size_ = 0;
  bool shrink_paused_ = false;
};

}  // namespace lapse::engine
