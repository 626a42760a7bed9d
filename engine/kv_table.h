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
//
// Point-in-time snapshots (engine/snapshot.h). While a background save runs, the table has a
// PreWriteObserver and a mark bit that the save's start flipped; an entry whose own mark
// differs has not been written yet. Every path that can hand out an entry for change or
// removal goes through Protect first (FindLink, ForEachInBucketOf, Clear, TakeEntries; the
// Db above only reaches entries through them), and Protect writes such an entry as it still
// is, then gives it the table's mark. Entries linked in (Insert, ReplaceAt) get the mark at
// once: they did not exist when the save began. The save's own walk (SnapshotScan) protects
// what it visits, so every entry that existed at the start is written exactly once, whether
// the walk or a writer gets there first. Tracking is per entry, not per bucket, so resizes
// may go on during a save: Scan's cursor still meets every entry, and the mark stops a second
// write of one it meets twice. With no save, Protect is one predictable branch. FLUSHDB and
// FLUSHALL during a save do not write what the walk has not reached: the table hands its
// whole contents to the save (RetireToSnapshot), which writes and frees them before the rest
// of its walk, so the flush buffers nothing ahead of the walk, though its memory is freed at
// the walk's pace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/entry.h"

namespace lapse::engine {

class KvTable;

// A running snapshot's hold on one table.
class PreWriteObserver {
 public:
  virtual ~PreWriteObserver() = default;
  // `e` is about to change or go (or the walk reached it) and was not written yet.
  virtual void SaveBeforeChange(const Entry* e) = 0;
  // The observed table is being emptied (FLUSHDB): `entries` holds all it had, with their
  // marks; the save now walks them instead, writing those not written yet, and frees them.
  virtual void Retire(KvTable&& entries) = 0;
  // The table observed; KvTable's moves keep it current (SWAPDB moves a Db's table), and its
  // destructor resets it to nullptr (a dropped container's item index is freed mid-save).
  KvTable* table = nullptr;
};

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

  // ---- Snapshots (see the top of this file) ----
  // Starts a save's view: entries linked now are all "not yet written".
  void BeginSnapshot(PreWriteObserver* observer) {
    mark_ ^= 1;
    observer_ = observer;
    observer->table = this;
  }
  // Ends it; every entry must have been protected (the walk finished).
  void EndSnapshot() { observer_ = nullptr; }
  // Writes `e` to the running save if it has not been yet. Call before changing it.
  void Protect(Entry* e) {
    if (observer_ != nullptr) [[unlikely]] ProtectSlow(e);
  }
  // One step of the save's walk: protects the entries of the cursor's buckets, adds how
  // many it visited to *visited, and returns the next cursor (0 when done).
  uint64_t SnapshotScan(uint64_t cursor, size_t* visited);
  // Hands every entry over to a new table (FLUSHALL ASYNC frees it elsewhere); this one
  // stays empty, keeping its snapshot state. Protects them all first.
  KvTable TakeEntries();

  // While a save observes this table: moves every entry to the save (PreWriteObserver's
  // Retire) and leaves this table empty and unobserved; true then. False with no save.
  bool RetireToSnapshot();
  // Destroys every entry (protecting them first while a save runs).
  void Clear();
  // Removes and destroys up to `max` entries, handing each to `fn` first (and to a running
  // save before that); tears a large table down in slices. The table must not be used
  // otherwise until it is empty.
  size_t DrainSome(size_t max, const std::function<void(Entry*)>& fn);
  // Moves up to `buckets` buckets of an ongoing rehash; returns true if rehashing remains.
  bool RehashStep(size_t buckets);
  // Table memory excluding entries.
  size_t BucketBytes() const { return bucket_count() * sizeof(Entry*); }

 private:
  using Buckets = std::vector<Entry*>;

  void MaybeResize();
  void ProtectSlow(Entry* e);
  void ProtectAll();
  void StartRehash(size_t new_size);
  size_t BucketIndex(const Buckets& t, uint64_t hash) const { return hash & (t.size() - 1); }

  Buckets tables_[2];
  size_t rehash_index_ = 0;  // buckets of tables_[0] below this are already moved
  size_t drain_index_ = 0;   // DrainSome's position over tables_[0] then tables_[1]
  size_t size_ = 0;
  uint8_t mark_ = 0;  // an entry with another mark is one the running save has still to write
  PreWriteObserver* observer_ = nullptr;
};

}  // namespace lapse::engine
