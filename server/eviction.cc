#include "server/eviction.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "engine/item_store.h"
#include "engine/shard.h"
#include "server/memory.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Redis's evictionTimeLimitUs: 50 us per step of tenacity up to 10, then 15% more per step,
// and no limit at 100.
int64_t TimeLimitUs(int tenacity) {
  if (tenacity <= 10) return 50ll * tenacity;
  if (tenacity < 100) return static_cast<int64_t>(500.0 * std::pow(1.15, tenacity - 10.0));
  return std::numeric_limits<int64_t>::max();
}

uint64_t NextRandom(uint64_t* state) {
  *state += 0x9E3779B97F4A7C15ull;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

thread_local uint64_t tls_random = 0x2545F4914F6CDD1Dull;

// Each event-loop thread keeps its own pool, across calls; a new policy starts it afresh.
struct ThreadPool {
  engine::EvictionPool pool;
  engine::EvictionPolicy policy = engine::EvictionPolicy::kNoEviction;
};
thread_local ThreadPool tls_pool;

engine::EvictionPool& PoolFor(engine::EvictionPolicy policy) {
  if (tls_pool.policy != policy) {
    tls_pool.pool.Clear();
    tls_pool.policy = policy;
  }
  return tls_pool.pool;
}

// The pool's score of a sampled key: the policy's, and under LFU with a read history, the
// history breaks the ties of the coarse LFU counter (most keys share a handful of values).
uint64_t PoolScore(engine::EvictionPolicy policy, engine::Shard& shard, const engine::Entry* e, std::string_view name,
                   int64_t now_ms) {
  engine::FrequencySketch& sketch = shard.frequency_sketch();
  if (!engine::TracksFrequency(policy) || !sketch.enabled()) return engine::VictimScore(policy, e, now_ms);
  return engine::VictimScoreWithHistory(policy, e, sketch.Estimate(engine::HashKey(name)), now_ms);
}

}  // namespace

void Evictor::Configure(const EvictionSettings& settings) {
  policy_.store(settings.policy, std::memory_order_relaxed);
  // Bounded: a round samples every database of two shards, under their locks.
  samples_.store(std::min(settings.samples, 1024), std::memory_order_relaxed);
  time_limit_us_.store(TimeLimitUs(settings.tenacity), std::memory_order_relaxed);
}

namespace {
// The read history's size per shard for a maxmemory: about 1/20 of the limit in all (about
// Caffeine's 8 bytes per key of capacity, at 100-byte values). Chosen by simulation
// (bench/sim/evict_sim.cc, bench/RESULTS.md 16.6): the sketch counts every key read, the tail
// included, and at 1/80 (16.5's 2-4 bytes a key) collisions hid the boundary keys; 2x and 4x
// that gained on both workloads after the keys they displace, 6x little more. A power of two
// at or below 1/20 per shard.
// The window, 4 increments a byte (8 reads a counter), ages it about every 8-10 reads per
// key held. A power of two, so that a small change of maxmemory keeps the counts (a resize
// forgets them) and does not free and allocate it all again.
constexpr int64_t kHistoryShareOfMaxmemory = 20;
constexpr uint64_t kHistoryWindowPerByte = 4;
constexpr size_t kMaxHistoryBytesPerShard = size_t{64} << 20;

size_t HistoryBytesPerShard(int64_t maxmemory, size_t shards) {
  auto bytes = static_cast<size_t>(maxmemory / kHistoryShareOfMaxmemory) / shards;
  return std::bit_floor(std::clamp(bytes, engine::FrequencySketch::kBlockBytes, kMaxHistoryBytesPerShard));
}
}  // namespace

void Evictor::SizeReadHistory(int64_t maxmemory) {
  bool wanted = policy() == engine::EvictionPolicy::kAllKeysLfu && maxmemory > 0;
  size_t bytes = wanted ? HistoryBytesPerShard(maxmemory, shards_.size()) : 0;
  if (history_bytes_per_shard_.exchange(bytes, std::memory_order_relaxed) == bytes) return;
  // One shard at a time: a resize forgets that shard's counts and its probation queue.
  shards_.RunOnAll([&](engine::Shard& shard) {
    shard.frequency_sketch().Resize(bytes, bytes * kHistoryWindowPerByte);
    shard.probation().Clear();
  });
  FlushThreadCache();  // the old counters, freed, would read as used until then
}

uint32_t Evictor::RandomShard() { return static_cast<uint32_t>(NextRandom(&tls_random) % shards_.size()); }

uint64_t Evictor::ForceReclaim(uint32_t shard_id, int64_t now_ms) {
  uint64_t items = 0, keys = 0;
  shards_.WithShard(shard_id, [&](engine::Shard& shard) {
    auto expired_keys = [&] {
      uint64_t n = 0;
      for (size_t i = 0; i < shard.database_count(); ++i) n += shard.db(i).expiry_stats().expired_keys;
      return n;
    };
    uint64_t before = expired_keys();
    constexpr size_t kRecords = 1024;
    while (shard.ReclaimSlice(now_ms, kRecords, [&](const engine::Item& item) {
      bill_forced_item_(item, now_ms);
      ++items;
      return true;
    })) {
    }
    keys = expired_keys() - before;
  });
  if (items + keys > 0) forced_reclaims_.fetch_add(items + keys, std::memory_order_relaxed);
  return items + keys;
}

bool Evictor::Sample(uint32_t shard_id, int64_t now_ms) {
  engine::EvictionPolicy policy = this->policy();
  engine::EvictionPool& pool = PoolFor(policy);
  bool volatile_only = engine::EvictsVolatileOnly(policy);
  auto samples = static_cast<size_t>(samples_.load(std::memory_order_relaxed));
  bool any = false;
  bool probation = policy == engine::EvictionPolicy::kAllKeysLfu;
  shards_.WithShard(shard_id, [&](engine::Shard& shard) {
    if (probation) OfferProbation(shard, shard_id, now_ms);
    for (uint32_t i = 0; i < shard.database_count(); ++i) {
      const engine::Db& db = shard.db(i);
      if (db.stored() != 0) {
        db.SampleLive(&tls_random, samples, volatile_only, now_ms, [&](const engine::Entry* e) {
          pool.Offer(PoolScore(policy, shard, e, e->key(), now_ms), shard_id, i, e->key());
          any = true;
        });
      }
      if (volatile_only) continue;  // items are never volatile keys
      shard.items().SampleEvictable(i, &tls_random, samples, now_ms,
                                    [&](const engine::Entry& stamp, const engine::ContainerPart& part, const engine::Item& item) {
                                      pool.Offer(PoolScore(policy, shard, &stamp, item.id, now_ms), shard_id, i, item.id,
                                                 part.info->name);
                                      any = true;
                                    });
    }
  });
  return any;
}

void Evictor::OfferProbation(engine::Shard& shard, uint32_t shard_id, int64_t now_ms) {
  engine::EvictionPool& pool = PoolFor(engine::EvictionPolicy::kAllKeysLfu);
  // Only the shards a round samples, under the lock it already holds: a round never locks
  // every shard. Four a shard: two shards a round take eight, more than the one or two keys
  // created per eviction, so the queues drain even when every new key is on probation (a
  // scan); a probationer waits for its shard's turn, about eight rounds.
  constexpr size_t kOffersPerShard = 4;
  shard.probation().Take(kOffersPerShard, [&](uint32_t db, std::string_view key) {
    if (const engine::Entry* e = shard.db(db).Find(key, now_ms)) {
      pool.Offer(PoolScore(engine::EvictionPolicy::kAllKeysLfu, shard, e, key, now_ms), shard_id, db, key);
    }
  });
}

size_t Evictor::EvictItem(engine::Shard& shard, uint32_t db, std::string_view container, std::string_view id,
                          int64_t now_ms) {
  size_t freed = shard.items().Evict(db, container, id, now_ms,
                                     [&](const engine::Item& item) { bill_forced_item_(item, now_ms); });
  if (freed > 0) evicted_items_.fetch_add(1, std::memory_order_relaxed);
  return freed;
}

size_t Evictor::EvictKey(engine::Db& db, std::string_view key, int64_t now_ms) {
  size_t freed = db.Evict(key, now_ms);
  if (freed > 0) evicted_keys_.fetch_add(1, std::memory_order_relaxed);
  return freed;
}

size_t Evictor::EvictRandom(int64_t now_ms) {
  bool volatile_only = engine::EvictsVolatileOnly(policy());
  auto try_shard = [&](uint32_t shard_id) -> size_t {
    return shards_.WithShard(shard_id, [&](engine::Shard& shard) -> size_t {
      for (uint32_t i = 0; i < shard.database_count(); ++i) {
        engine::Db& db = shard.db(i);
        std::optional<std::string> key, item_id, container;
        db.SampleLive(&tls_random, 1, volatile_only, now_ms, [&](const engine::Entry* e) { key.emplace(e->key()); });
        if (!volatile_only) {
          shard.items().SampleEvictable(i, &tls_random, 1, now_ms,
                                        [&](const engine::Entry&, const engine::ContainerPart& part, const engine::Item& item) {
                                          item_id.emplace(item.id);
                                          container.emplace(part.info->name);
                                        });
        }
        // A key or an item, each as likely when both are found.
        if (item_id && (!key || NextRandom(&tls_random) % 2 == 0)) return EvictItem(shard, i, *container, *item_id, now_ms);
        if (key) return EvictKey(db, *key, now_ms);
      }
      return 0;
    });
  };
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (size_t freed = try_shard(RandomShard())) return freed;
  }
  for (uint32_t id = 0; id < shards_.size(); ++id) {
    if (size_t freed = try_shard(id)) return freed;
  }
  return 0;
}

size_t Evictor::EvictOne(int64_t now_ms) {
  engine::EvictionPolicy policy = this->policy();
  if (engine::EvictsAtRandom(policy)) return EvictRandom(now_ms);
  engine::EvictionPool& pool = PoolFor(policy);
  bool volatile_only = engine::EvictsVolatileOnly(policy);
  auto evict_best = [&]() -> size_t {
    while (std::optional<engine::EvictionCandidate> c = pool.TakeBest()) {
      size_t freed = shards_.WithShard(c->shard, [&](engine::Shard& shard) -> size_t {
        if (c->is_item()) return EvictItem(shard, c->db, c->container, c->key, now_ms);
        engine::Db& db = shard.db(c->db);
        const engine::Entry* e = db.Find(c->key, now_ms);
        if (e == nullptr || (volatile_only && e->deadline() == engine::kNoDeadline)) return 0;
        return EvictKey(db, c->key, now_ms);
      });
      if (freed > 0) return freed;
    }
    return 0;
  };
  // Two random shards a round (Redis samples every database; lapse has many more shards),
  // every shard when the pool is empty (the first eviction, or a drained pool), so that the
  // pool starts from the best candidates of the whole keyspace.
  if (pool.empty()) {
    for (uint32_t id = 0; id < shards_.size(); ++id) Sample(id, now_ms);
  } else {
    Sample(RandomShard(), now_ms);
    Sample(RandomShard(), now_ms);
  }
  if (size_t freed = evict_best()) return freed;
  // Nothing found in the random shards: look at every shard before concluding there is
  // nothing to evict.
  for (uint32_t id = 0; id < shards_.size(); ++id) Sample(id, now_ms);
  return evict_best();
}

Evictor::Outcome Evictor::MakeRoom(MemoryGauge& gauge, uint64_t limit, int64_t now_ms) {
  uint64_t reclaimed = 0;
  for (uint32_t id = 0; id < shards_.size(); ++id) reclaimed += ForceReclaim(id, now_ms);
  // What the reclaim freed is only known to the allocator: ask it afresh then.
  uint64_t used = reclaimed > 0 ? gauge.UsedBytes(0) : gauge.UsedBytes();
  if (used <= limit) return Outcome::kEnough;
  if (policy() == engine::EvictionPolicy::kNoEviction) return Outcome::kNothingToEvict;
  int64_t start = SteadyMicros();
  int64_t time_limit = time_limit_us_.load(std::memory_order_relaxed);
  uint64_t excess = used - limit, freed = 0;
  Outcome outcome = Outcome::kEnough;
  for (uint64_t keys = 1; freed < excess; ++keys) {
    size_t bytes = EvictOne(now_ms);
    if (bytes == 0) {
      outcome = Outcome::kNothingToEvict;
      break;
    }
    freed += bytes;
    if (keys % 16 == 0 && freed < excess && SteadyMicros() - start > time_limit) {
      outcome = Outcome::kTimeUp;
      break;
    }
  }
  if (freed > 0) FlushThreadCache();
  gauge.NoteFreed(freed);
  return outcome;
}

void Evictor::NoteOverLimit(bool over) {
  int64_t since = exceeded_since_us_.load(std::memory_order_relaxed);
  if (over == (since != 0)) return;
  int64_t now = SteadyMicros();
  if (over) {
    exceeded_since_us_.compare_exchange_strong(since, now, std::memory_order_relaxed);
  } else if (exceeded_since_us_.compare_exchange_strong(since, 0, std::memory_order_relaxed)) {
    exceeded_total_us_.fetch_add(static_cast<uint64_t>(now - since), std::memory_order_relaxed);
  }
}

uint64_t Evictor::current_exceeded_ms() const {
  int64_t since = exceeded_since_us_.load(std::memory_order_relaxed);
  return since == 0 ? 0 : static_cast<uint64_t>(SteadyMicros() - since) / 1000;
}

uint64_t Evictor::total_exceeded_ms() const {
  return (exceeded_total_us_.load(std::memory_order_relaxed)) / 1000 + current_exceeded_ms();
}

void Evictor::ResetStats() {
  evicted_keys_.store(0, std::memory_order_relaxed);
  evicted_items_.store(0, std::memory_order_relaxed);
  exceeded_total_us_.store(0, std::memory_order_relaxed);
  forced_reclaims_.store(0, std::memory_order_relaxed);
}

}  // namespace lapse::server
