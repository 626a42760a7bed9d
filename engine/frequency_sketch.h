// File: engine/frequency_sketch.h
//
// How often keys were read lately, including keys that are not held: TinyLFU's frequency
// history (Einziger et al., and Caffeine's FrequencySketch), which outlives the keys that
// eviction deletes. Under allkeys-lfu with a maxmemory, each shard keeps one, and:
//
//   * every read lookup (a hit or a miss) counts its key's hash;
//   * a key created with no history (its only count is the miss that came just before the
//     set-on-miss) starts on probation: its LFU counter starts at 4, one below Redis's
//     initial 5 (engine/access.h), and its name is queued (ProbationQueue) so that the
//     evictor offers it to its pool at once instead of waiting to sample it by chance. Unless
//     it is read again it goes before the keys that were: a one-time scan and the far tail
//     of a Zipf law go first. A read brings it to 5, the rank of a fresh key;
//   * a key created with a history starts at 5 as in Redis: a popular key that was evicted
//     comes back as good as a fresh one, not as a probationer;
//   * the evictor ranks keys by their LFU counter first and, among keys of the same counter
//     (most keys share a handful of values), the one with the smaller estimate goes first
//     (server/eviction.cc, PoolScore).
//
// Why this and not the alternatives (measured with bench/compare scenario 16, see
// bench/RESULTS.md): sampling more keys per eviction did not close the gap to the static
// optimum, because the loss came from admitting every missed key at the same rank as the
// keys already held; a key's own counter cannot tell a first visit from a return, since its
// history is deleted with it. The sketch can, for a few bits per held key. Ranking by the
// estimate first and the counter second did worse than the counter first (the estimate is
// 4 bits and halves; the counter holds a key's whole life), as did a probation count of 1
// instead of 4 (a probationer read a few times stayed below the keys never read).
//
// Layout: a count-min sketch of 4-bit counters, depth 4, with all four counters of a key in
// one 64-byte block (one cache line per increment), increments conservative (only the
// smallest counters grow, so an estimate is never below the true count and seldom far
// above), and aging by halving every counter once `window` increments have been made, so
// that old popularity fades. Not thread-safe: it belongs to a shard and is used under the
// shard's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace lapse::engine {

class FrequencySketch {
 public:
  static constexpr uint8_t kMaxCount = 15;
  static constexpr size_t kBlockBytes = 64;

  // Keeps `bytes` of counters (rounded down to whole blocks; 0 turns counting off) and halves
  // them all every `window` increments. Forgets every count.
  void Resize(size_t bytes, uint64_t window);
  bool enabled() const { return blocks_ != 0; }
  size_t bytes() const { return blocks_ * kBlockBytes; }
  uint64_t window() const { return window_; }

  // Counts one more access to the key of this hash (HashKey).
  void Increment(uint64_t hash);
  // At least the number of accesses counted for this hash since it was last halved (each
  // halving divides what was counted before it by two), at most kMaxCount.
  uint8_t Estimate(uint64_t hash) const;
  // Forgets every count (FLUSHALL, a new policy).
  void Clear();

 private:
  struct Slots {
    size_t word[4];
    unsigned shift[4];
  };
  Slots Locate(uint64_t hash) const;
  void Halve();

  std::unique_ptr<uint64_t[]> words_;
  size_t blocks_ = 0;
  uint64_t window_ = 0;
  uint64_t increments_ = 0;
};

// The keys created on probation, oldest first, which the evictor offers to its pool before
// any sampled key: sampling alone finds a new key only by chance, and a scan's keys would
// hold memory until then. Bounded: when full, the oldest is forgotten (it stays, ranked by
// its counter like any key). A name may outlive its key; the evictor looks each one up.
class ProbationQueue {
 public:
  static constexpr size_t kCapacity = 256;

  void Push(uint32_t db, std::string_view key) {
    if (keys_.size() == kCapacity) keys_.pop_front();
    keys_.emplace_back(db, std::string(key));
  }
  // Calls fn(db, key) for up to `n` of the oldest, and forgets them.
  template <typename Fn>
  void Take(size_t n, Fn&& fn) {
    for (; n > 0 && !keys_.empty(); --n) {
      std::pair<uint32_t, std::string> oldest = std::move(keys_.front());
      keys_.pop_front();
      fn(oldest.first, std::string_view(oldest.second));
    }
  }
  void Clear() { keys_.clear(); }
  size_t size() const { return keys_.size(); }

 private:
  std::deque<std::pair<uint32_t, std::string>> keys_;
};

}  // namespace lapse::engine
