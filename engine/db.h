// File: engine/db.h
//
// One numbered database (SELECT n) of one shard: the key table, the timing wheel that files
// the keys' deadlines, and counters. Single-threaded by contract: only the thread that owns
// the shard touches it.
//
// Expiry has two halves. Reads filter inline: an entry whose deadline <= now is treated as
// absent and deleted on the spot (lazy), so correctness never waits for the background.
// The background half is Reclaim(), which advances the wheel and deletes due keys, oldest
// deadline first, a bounded number of records per call. The wheel holds key hashes rather
// than pointers, so deleting or re-timing a key never has to touch the wheel: a record whose
// key is gone or whose deadline moved is recognised as stale and dropped when it comes up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/collection.h"
#include "engine/entry.h"
#include "engine/frequency_sketch.h"
#include "engine/hash.h"
#include "engine/key_events.h"
#include "engine/kv_table.h"
#include "engine/timing_wheel.h"
#include "engine/watch.h"

namespace lapse::engine {

struct ExpiryStats {
  uint64_t expired_keys = 0;       // keys deleted because their deadline passed
  uint64_t expired_lazily = 0;     // of those, deleted by a read that met them
  uint64_t expired_lag_sum_ms = 0; // sum over background deletions of (now - deadline)
  uint64_t expired_lag_max_ms = 0;
};

// A key some client blocks on (BLPOP, ...) that a write touched: the thread that made the
// write serves its waiters once the command is over (server/blocking.h). Where the key lives
// is given by shard and database index, which outlive any pointer into the Db.
struct ReadyKey {
  uint32_t shard;
  uint32_t db;
  std::string key;
};
// The calling thread's ready keys, in the order the writes happened.
std::vector<ReadyKey>& ReadyKeys();

class Db {
 public:
  explicit Db(int64_t now_ms = 0) : wheel_(now_ms) {}
  Db(Db&&) = default;
  Db& operator=(Db&&) = default;

  // The live entry for `key`, or nullptr. An expired entry is deleted here (lazy expiry).
  // The pointer stays valid until the next mutating call on this Db.
  Entry* Find(std::string_view key, int64_t now_ms) { return Find(key, HashKey(key), now_ms); }
  Entry* Find(std::string_view key, uint64_t hash, int64_t now_ms);

  // Creates or replaces `key` with a string value and `deadline_ms` (kNoDeadline: none).
  // Returns the stored entry.
  Entry* Put(std::string_view key, std::string_view value, ValueType type, int64_t deadline_ms, int64_t now_ms);

  // Gives a live entry a new deadline (kNoDeadline removes it). May reallocate: returns the
  // entry to use from now on. A deadline <= now deletes the key and returns nullptr.
  Entry* SetDeadline(Entry* entry, int64_t deadline_ms, int64_t now_ms);

  // Makes room for a value of `capacity` bytes in a live entry, keeping its contents; may
  // reallocate (growing geometrically so that repeated APPENDs stay amortised O(1)).
  // With `exact`, grows to just `capacity`: for values edited in place whose allocator size
  // classes already space reallocations geometrically (packed lists).
  Entry* ReserveValue(Entry* entry, size_t capacity, bool exact = false);
  // Gives back what a value no longer uses: reallocates a live entry whose value shrank far
  // below its allocation (a list that moved to its own nodes) to fit it.
  Entry* FitValue(Entry* entry);

  // Deletes a live key; returns false if there was none (an expired one counts as none).
  bool Erase(std::string_view key, int64_t now_ms);
  // Unlinks a live key and hands ownership of its entry to the caller (RENAME, MOVE).
  Entry* Extract(std::string_view key, int64_t now_ms);
  // Links an entry taken from Extract() (its key must be absent); files its deadline.
  void Adopt(Entry* entry, int64_t now_ms);

  // Files a field deadline of the hash under `key` (engine/collection.h): when it comes up,
  // Reclaim deletes the hash's due fields.
  void ScheduleFieldExpiry(std::string_view key, int64_t deadline_ms) {
    wheel_.Schedule(HashKey(key) | kFieldRecord, deadline_ms);
  }
  // Files the next field deadline of a hash entry that arrived whole (COPY, RENAME).
  void TrackFields(const Entry* e) {
    int64_t d = engine::hash::NextFieldDeadline(e);
    if (d != kNoDeadline) ScheduleFieldExpiry(e->key(), d);
  }

  // Background expiry: deletes due keys, oldest deadline first, handling at most
  // `max_records` wheel records. Returns true while more are due at or before now_ms.
  bool Reclaim(int64_t now_ms, size_t max_records);

  // Entries stored, including expired ones not yet reclaimed.
  size_t stored() const { return table_.size(); }
  // Stored entries that carry a deadline (INFO keyspace `expires`).
  size_t volatile_count() const { return volatile_count_; }
  // Live keys exactly: reclaims everything already due first (work proportional to it).
  size_t CountLive(int64_t now_ms);

  // One SCAN step over stored entries; expired entries are skipped.
  uint64_t Scan(uint64_t cursor, int64_t now_ms, const std::function<void(const Entry*)>& fn) const;
  // A background save's point-in-time view of this Db (engine/snapshot.h): from here on,
  // every entry is written as it is now before anything changes or removes it.
  void BeginSnapshot(PreWriteObserver* observer) { table_.BeginSnapshot(observer); }
  // A random live key, or nullptr when there is none (after a bounded number of expired
  // picks it reclaims everything due, work proportional to that).
  Entry* RandomLive(uint64_t seed, int64_t now_ms);
  // The bounded part of RandomLive: nullptr may also mean that every pick was expired (each
  // is deleted); a caller that cannot wait for a full reclaim reclaims a slice and asks again.
  Entry* TryRandomLive(uint64_t* seed, int64_t now_ms);

  // ---- Eviction (engine/eviction.h) ----
  // Calls fn with up to `count` random live entries (only those with a deadline when
  // `volatile_only`): random picks first, then, when volatile keys are too rare for them to
  // find, a short walk of the table from a random bucket.
  void SampleLive(uint64_t* seed, size_t count, bool volatile_only, int64_t now_ms,
                  const std::function<void(const Entry*)>& fn) const;
  // Deletes live `key` to free memory (maxmemory-policy): touches it and reports `evicted`.
  // Returns the bytes it held (entry, table, bucket slot), 0 when it is absent or expired.
  size_t Evict(std::string_view key, int64_t now_ms);

  // What INFO reports of volatile keys, estimated like Redis from a sample (the first buckets
  // of the table) rather than a walk of every key.
  struct TtlSample {
    int64_t average_ttl_ms = 0;  // mean remaining time of the live volatile keys sampled
    double stale_fraction = 0;   // share of the volatile keys sampled already expired, not yet reclaimed
  };
  TtlSample SampleTtls(int64_t now_ms) const;

  // FLUSHDB: deletes every key (touching the watched ones that existed).
  void Clear();
  // Leaves this Db empty and returns its former table so that the caller may destroy it
  // elsewhere (FLUSHALL ASYNC).
  KvTable TakeTable();

  // ---- WATCH (engine/watch.h) ----
  // Files `watcher` as a watcher of `key`; the caller watches each key once.
  void Watch(std::string_view key, Watcher* watcher, int64_t now_ms);
  void Unwatch(std::string_view key, const Watcher* watcher);
  // True when `watcher` watched `key` while it was not expired and it has expired since, not
  // yet deleted: EXEC then fails, as in Redis.
  bool WatchedKeyExpired(std::string_view key, const Watcher* watcher, int64_t now_ms) const;
  // Marks the watchers of `key` dirty; called after every change to it. The mutators below
  // call it themselves; a command that edits a value in place calls it too.
  void Touch(std::string_view key) {
    if (!watched_.empty()) [[unlikely]] TouchWatchers(key);
    if (!blocked_.empty()) [[unlikely]] SignalReady(key);
  }
  // Wakes the clients blocked on `key` without touching its watchers: Redis signals a stream
  // ready, not modified, when XGROUP DESTROY takes away the group a reader waits on.
  void WakeBlocked(std::string_view key) {
    if (!blocked_.empty()) [[unlikely]] SignalReady(key);
  }
  // Before this database's contents are replaced by `replacement`'s (SWAPDB) or dropped
  // (nullptr: FLUSHDB, FLUSHALL): touches the watched keys whose value that changes.
  void TouchAllWatched(const Db* replacement, int64_t now_ms);
  // SWAPDB swaps contents, not watches: a client keeps watching the database it selected.
  void SwapWatches(Db& other) { std::swap(watched_, other.watched_); }
  size_t watched_keys() const { return watched_.size(); }

  // ---- Blocked clients (server/blocking.h) ----
  // Where this Db sits (its shard and index), for the ReadyKeys it reports.
  void SetLocation(uint32_t shard, uint32_t index) { shard_ = shard, index_ = index; }
  uint32_t index() const { return index_; }
  // The shard's read history (engine/frequency_sketch.h), shared by its databases; nullptr
  // in a Db of its own.
  void SetFrequencySketch(FrequencySketch* sketch, ProbationQueue* probation) {
    sketch_ = sketch;
    probation_ = probation;
  }
  // A read lookup of the key of this hash, found or not: counted in the read history.
  void CountRead(uint64_t hash) {
    if (sketch_ != nullptr && sketch_->enabled()) sketch_->Increment(hash);
  }
  // Who hears of keys deleted by expiry (keyspace notifications); nullptr: nobody.
  void SetKeyEventListener(KeyEventListener* listener) { listener_ = listener; }
  // A read lookup of `key` found nothing (keyspace `keymiss`); the caller counts the miss.
  void ReportMiss(std::string_view key) {
    if (listener_ != nullptr) [[unlikely]] listener_->KeyMissed(index_, key);
  }
  // Counts one more (or one fewer) client blocked on `key`; while any is, every change to
  // the key adds it to ReadyKeys().
  void AddBlocked(std::string_view key);
  void RemoveBlocked(std::string_view key);
  // SWAPDB: blocked clients stay with their database index, as watches do; every key they
  // wait on may now hold something else, so each is reported ready.
  void SwapBlocked(Db& other);
  size_t blocked_keys() const { return blocked_.size(); }

  // A key is expired at its own deadline, and a hash also once every field has expired.
  static bool IsExpired(const Entry* e, int64_t now_ms) {
    int64_t d = e->deadline();
    return (d != kNoDeadline && d <= now_ms) || engine::hash::AllFieldsExpired(e, now_ms);
  }

  const ExpiryStats& expiry_stats() const { return expiry_stats_; }
  void ResetExpiryStats() { expiry_stats_ = {}; }
  size_t wheel_records() const { return wheel_.size(); }
  size_t MemoryEstimate() const;
  void RehashStep(size_t buckets) { table_.RehashStep(buckets); }

 private:
  // A wheel record's payload is the key's hash with its top bit telling which deadline it
  // stands for: clear for the key's own, set for a hash's next field deadline. Buckets use
  // the low bits, so both find the key; each record answers only for its own deadline, so
  // neither can be re-filed in place of the other.
  static constexpr uint64_t kFieldRecord = uint64_t{1} << 63;

  // Deletes a live hash's due fields and files its next field deadline.
  void PurgeDueFields(Entry* e, uint64_t hash, int64_t now_ms);
  // Stored (perhaps expired, not yet deleted): Redis's dictFind, which WATCH's rules use.
  bool Stored(std::string_view key) const { return table_.Peek(key, HashKey(key)) != nullptr; }
  bool StoredButExpired(std::string_view key, int64_t now_ms) const;
  void DestroyUnlinked(Entry* e);
  // For an entry just unlinked that was due: touches its key (deletion by expiry is a change
  // to watchers), then destroys it.
  void DestroyExpired(Entry* e);
  void TouchWatchers(std::string_view key);
  void SignalReady(std::string_view key);
  // Before a flush: the blocked keys it deletes are ready (a group reader learns its stream
  // is gone).
  void SignalStoredBlocked();
  void Track(const Entry* e, uint64_t hash);
  void Untrack(const Entry* e);
  // Whether a key of this hash being created has no read history but the miss that led to
  // it (engine/frequency_sketch.h): it is then queued on probation. False without a sketch.
  bool NewToHistory(uint64_t hash) const;

  KvTable table_;
  TimingWheel wheel_;
  size_t volatile_count_ = 0;
  ExpiryStats expiry_stats_;

  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return HashKey(k); }
  };
  std::unordered_map<std::string, std::vector<KeyWatch>, KeyHash, std::equal_to<>> watched_;
  std::unordered_map<std::string, uint32_t, KeyHash, std::equal_to<>> blocked_;  // key -> clients
  uint32_t shard_ = 0;
  uint32_t index_ = 0;
  KeyEventListener* listener_ = nullptr;
  FrequencySketch* sketch_ = nullptr;
  ProbationQueue* probation_ = nullptr;
};

}  // namespace lapse::engine
