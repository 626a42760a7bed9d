// File: engine/eviction.h
//
// Which keys maxmemory-policy gives up first, as Redis 7.0's evict.c chooses them, and the
// pool of candidates that makes its sampling approximate the ideal order.
//
// Each round samples a few keys of a few shards (maxmemory-samples per database that has
// keys) and offers them to an EvictionPool, which keeps the kSize best victims seen so far,
// across rounds: the best of many samples is evicted, not merely the best of the last few,
// which is what brings sampled LRU/LFU close to exact LRU/LFU (Redis's pool is the same idea,
// 16 entries). A candidate is only a name: before it is evicted the caller looks it up again
// under its shard's lock, since the key may have gone or changed since it was sampled.
//
// Scores: higher is a better victim. LRU ranks by idle time, LFU by 255 minus the decayed
// counter, volatile-ttl by how soon the deadline comes. The random policies need no pool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/entry.h"

namespace lapse::engine {

enum class EvictionPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
};

std::optional<EvictionPolicy> ParseEvictionPolicy(std::string_view name);
std::string_view EvictionPolicyName(EvictionPolicy policy);
// Redis's list of the valid names, in its order, for CONFIG SET's error.
extern const char* const kEvictionPolicyNames;

inline bool EvictsVolatileOnly(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLru || p == EvictionPolicy::kVolatileLfu ||
         p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kVolatileTtl;
}
inline bool EvictsAtRandom(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysRandom || p == EvictionPolicy::kVolatileRandom;
}
inline bool TracksFrequency(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLfu || p == EvictionPolicy::kVolatileLfu;
}

// How good a victim `e` is under `policy` (not a random one); higher is better.
uint64_t VictimScore(EvictionPolicy policy, const Entry* e, int64_t now_ms);
// The same with the key's read-history estimate (engine/frequency_sketch.h, 0 to 15) breaking
// the ties of the policy's score: among keys of one LFU counter the less read goes first.
uint64_t VictimScoreWithHistory(EvictionPolicy policy, const Entry* e, uint8_t estimate, int64_t now_ms);

struct EvictionCandidate {
  uint64_t score = 0;
  uint32_t shard = 0;
  uint32_t db = 0;
  std::string key;        // a key, or the id of an item when `container` is set
  std::string container;  // empty for a key
  bool is_item() const { return !container.empty(); }
};

class EvictionPool {
 public:
  static constexpr size_t kSize = 16;

  // Keeps the candidate if it is among the kSize best seen; a key already in the pool only
  // has its score brought up to date. An item of an evictable container is offered with its
  // container's name and competes with keys on the same score.
  void Offer(uint64_t score, uint32_t shard, uint32_t db, std::string_view key, std::string_view container = {});
  // Removes and returns the best candidate, if any.
  std::optional<EvictionCandidate> TakeBest();
  bool empty() const { return ascending_.empty(); }
  size_t size() const { return ascending_.size(); }
  // Forgets every candidate (the policy changed, or the keyspace was flushed).
  void Clear() { ascending_.clear(); }

 private:
  std::vector<EvictionCandidate> ascending_;  // by score, the best last
};

}  // namespace lapse::engine
