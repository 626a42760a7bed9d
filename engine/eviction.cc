#include "engine/eviction.h"

#include <algorithm>
#include <limits>

#include "engine/access.h"
#include "engine/frequency_sketch.h"

namespace lapse::engine {

namespace {
struct PolicyName {
  EvictionPolicy policy;
  std::string_view name;
};
constexpr PolicyName kPolicyNames[] = {
    {EvictionPolicy::kVolatileLru, "volatile-lru"},   {EvictionPolicy::kVolatileLfu, "volatile-lfu"},
    {EvictionPolicy::kVolatileRandom, "volatile-random"}, {EvictionPolicy::kVolatileTtl, "volatile-ttl"},
    {EvictionPolicy::kAllKeysLru, "allkeys-lru"},     {EvictionPolicy::kAllKeysLfu, "allkeys-lfu"},
    {EvictionPolicy::kAllKeysRandom, "allkeys-random"}, {EvictionPolicy::kNoEviction, "noeviction"},
};

bool EqualsLower(std::string_view a, std::string_view lower) {
  return a.size() == lower.size() &&
         std::equal(a.begin(), a.end(), lower.begin(), [](char x, char y) { return (x >= 'A' && x <= 'Z' ? x + 32 : x) == y; });
}
}  // namespace

const char* const kEvictionPolicyNames =
    "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction";

std::optional<EvictionPolicy> ParseEvictionPolicy(std::string_view name) {
  for (const PolicyName& p : kPolicyNames) {
    if (EqualsLower(name, p.name)) return p.policy;
  }
  return std::nullopt;
}

std::string_view EvictionPolicyName(EvictionPolicy policy) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.policy == policy) return p.name;
  }
  return "noeviction";
}

uint64_t VictimScore(EvictionPolicy policy, const Entry* e, int64_t now_ms) {
  switch (policy) {
    case EvictionPolicy::kVolatileTtl:
      // The nearest deadline first.
      return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(e->deadline());
    case EvictionPolicy::kAllKeysLfu:
    case EvictionPolicy::kVolatileLfu:
      return 255 - DecayedFrequency(e, now_ms);
    default:
      return IdleMs(e, now_ms);
  }
}

uint64_t VictimScoreWithHistory(EvictionPolicy policy, const Entry* e, uint8_t estimate, int64_t now_ms) {
  constexpr uint64_t kEstimates = FrequencySketch::kMaxCount + 1;
  uint8_t unread = FrequencySketch::kMaxCount - std::min<uint8_t>(estimate, FrequencySketch::kMaxCount);
  return VictimScore(policy, e, now_ms) * kEstimates + unread;
}

void EvictionPool::Offer(uint64_t score, uint32_t shard, uint32_t db, std::string_view key,
                         std::string_view container) {
  for (auto it = ascending_.begin(); it != ascending_.end(); ++it) {
    if (it->shard == shard && it->db == db && it->key == key && it->container == container) {
      ascending_.erase(it);
      break;
    }
  }
  if (ascending_.size() == kSize) {
    if (score <= ascending_.front().score) return;
    ascending_.erase(ascending_.begin());
  }
  auto at = std::upper_bound(ascending_.begin(), ascending_.end(), score,
                             [](uint64_t s, const EvictionCandidate& c) { return s < c.score; });
  ascending_.insert(at, EvictionCandidate{score, shard, db, std::string(key), std::string(container)});
}

std::optional<EvictionCandidate> EvictionPool::TakeBest() {
  if (ascending_.empty()) return std::nullopt;
  EvictionCandidate best = std::move(ascending_.back());
  ascending_.pop_back();
  return best;
}

}  // namespace lapse::engine
