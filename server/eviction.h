// File: server/eviction.h
//
// Keeping used memory under maxmemory by deleting keys, as Redis 7.0's performEvictions:
// before a command runs, while the allocator reports more than maxmemory, the Evictor frees
// at least the excess.
//
//   1. Expired data first: keys and items past their deadline but not yet reclaimed are
//      reclaimed on the spot, whatever the request-unit budget (memory pressure overrides
//      RU throttling); the items are billed as reclamation is, unmetered, and counted as
//      forced (INFO reclaim `reclaimed_forced_total`).
//   2. Then live keys chosen by maxmemory-policy: each round samples maxmemory-samples keys
//      of every database in two random shards (every shard while the pool is empty) into
//      this thread's EvictionPool (engine/eviction.h), and evicts the best candidate still
//      present. Items are data, not cache entries: they count towards maxmemory but are
//      never evicted, unless their container opted in (CSETEVICT container ON). Then, under
//      the allkeys-* policies only, its live items are sampled with the keys and compete on
//      the same score (their index entries carry the same access stamps); an evicted item
//      is billed to its container as reclamation is (a delete of its size, unmetered), and
//      its container's change feed records a delete marked "evicted".
//
//   3. Under allkeys-lfu with a maxmemory, every shard keeps a fixed-size read history that
//      outlives keys (engine/frequency_sketch.h; SizeReadHistory gives it 1/20 of maxmemory,
//      counted in used_memory): keys of the same LFU counter are told apart by it, and each
//      round also offers the pool the oldest keys the two sampled shards created on
//      probation (no history but their miss), under the lock the sampling holds. Redis's
//      counter and OBJECT FREQ are left as they are.
//
// The freed bytes are counted from what each key held (its entry, table and bucket slot),
// not by asking the allocator again, which would cost more than the deletion. A call stops
// after maxmemory-eviction-tenacity's time limit (Redis's formula: 500 us at the default 10)
// and lets the command run; the next command goes on evicting. It fails, and the command
// gets the OOM error, only when nothing evictable is left (noeviction, volatile-* with no
// volatile key, or only items of containers that did not opt in).
//
// Each shard is locked only while it is sampled or a key of it is evicted, one at a time, so
// eviction never holds two shards and never waits while holding one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>

#include "engine/eviction.h"
#include "engine/item_store.h"

namespace lapse::engine {
class Db;
class Shard;
}  // namespace lapse::engine

namespace lapse::server {

class MemoryGauge;
class ShardSet;

struct EvictionSettings {
  engine::EvictionPolicy policy = engine::EvictionPolicy::kNoEviction;
  int samples = 5;
  int tenacity = 10;
};

class Evictor {
 public:
  enum class Outcome { kEnough, kTimeUp, kNothingToEvict };
  // `bill_forced_item` bills an expired item reclaimed under memory pressure.
  Evictor(ShardSet& shards, std::function<void(const engine::Item&, int64_t)> bill_forced_item)
      : shards_(shards), bill_forced_item_(std::move(bill_forced_item)) {}

  void Configure(const EvictionSettings& settings);
  // Sizes every shard's read history (engine/frequency_sketch.h) for `maxmemory` under the
  // allkeys-lfu, and turns it off otherwise (volatile-lfu ranks as Redis does: the history
  // would take memory from the few keys it may evict). Counts are kept while the size stays.
  void SizeReadHistory(int64_t maxmemory);
  engine::EvictionPolicy policy() const { return policy_.load(std::memory_order_relaxed); }

  // Brings used memory (as `gauge` reports it) under `limit`: expired data first, then keys
  // by policy. From an event-loop thread that holds no shard.
  Outcome MakeRoom(MemoryGauge& gauge, uint64_t limit, int64_t now_ms);

  // Notes whether used memory is over the limit now, for INFO's exceeded times.
  void NoteOverLimit(bool over);

  uint64_t evicted_keys() const { return evicted_keys_.load(std::memory_order_relaxed); }
  // Live items of evictable containers (CSETEVICT) deleted to free memory.
  uint64_t evicted_items() const { return evicted_items_.load(std::memory_order_relaxed); }
  uint64_t forced_reclaims() const { return forced_reclaims_.load(std::memory_order_relaxed); }
  // Milliseconds spent over maxmemory in all, and in the current stretch (0 when under).
  uint64_t total_exceeded_ms() const;
  uint64_t current_exceeded_ms() const;
  void ResetStats();

 private:
  // Reclaims everything due in one shard, every item admitted whatever the budget. Returns
  // how many keys and items it deleted.
  uint64_t ForceReclaim(uint32_t shard_id, int64_t now_ms);
  // Samples shard `shard_id` into the pool. False when it holds nothing the policy may evict.
  bool Sample(uint32_t shard_id, int64_t now_ms);
  // Offers the oldest keys on probation (engine/frequency_sketch.h) of a shard being sampled
  // to the pool; the caller holds the shard.
  void OfferProbation(engine::Shard& shard, uint32_t shard_id, int64_t now_ms);
  // Evicts one key: the pool's best still present, or a random one. Returns its bytes, 0 if
  // none could be found this round.
  size_t EvictOne(int64_t now_ms);
  size_t EvictRandom(int64_t now_ms);
  // Evict one named key or item, holding its shard; count it. Return its bytes, 0 if gone.
  size_t EvictKey(engine::Db& db, std::string_view key, int64_t now_ms);
  size_t EvictItem(engine::Shard& shard, uint32_t db, std::string_view container, std::string_view id,
                   int64_t now_ms);
  uint32_t RandomShard();

  ShardSet& shards_;
  std::function<void(const engine::Item&, int64_t)> bill_forced_item_;
  std::atomic<engine::EvictionPolicy> policy_{engine::EvictionPolicy::kNoEviction};
  std::atomic<int> samples_{5};
  std::atomic<size_t> history_bytes_per_shard_{0};  // 0: no read history
  std::atomic<int64_t> time_limit_us_{500};
  std::atomic<uint64_t> evicted_keys_{0};
  std::atomic<uint64_t> evicted_items_{0};
  std::atomic<uint64_t> forced_reclaims_{0};
  std::atomic<int64_t> exceeded_since_us_{0};  // 0: under the limit
  std::atomic<uint64_t> exceeded_total_us_{0};
};

}  // namespace lapse::server
