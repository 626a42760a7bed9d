// File: engine/frequency_sketch.h
//
// How often keys were read lately, including keys that are not held: TinyLFU's frequency
// history (Einziger et al., and Caffeine's FrequencySketch), which outlives the keys that
// eviction deletes. Under allkeys-lfu with a maxmemory, each shard keeps one, and:
//
//   * every read lookup (a hit or a miss) counts its key's hash;
//   * a key created with no history (its only count is the miss that came just before the
//     set-on-miss) is put on probation: its name is queued (ProbationQueue) and the evictor
//     offers it to its pool at once instead of waiting to sample it by chance. Its LFU counter
//     starts at Redis's 5 (OBJECT FREQ stays Redis's reply: the history is kept apart from the
//     counter), so it competes on the pool's score with the keys that were read since they
//     were created (6 and up) and loses to them unless it is read again: a one-time scan and
//     the far tail of a Zipf law go first. This is W-TinyLFU's admission in Redis's terms: a
//     write always succeeds, and the history decides which key is evicted next;
//   * among keys of the same LFU counter (most keys share a handful of values) the one with
//     the smaller estimate goes first (server/eviction.cc, PoolScore).
//
// Why this and not the alternatives (bench/RESULTS.md, issue 16, 16.5 and 16.6): sampling
// more keys did not close the gap to the static optimum; the loss came from admitting every
// missed key at the rank of the keys already held, and a key's own counter cannot tell a
// first visit from a return, since its history is deleted with it. A separate window and a
// segmented main region (W-TinyLFU proper) would need list links in every entry, which the
// per-key budget does not allow; a simulation of it over the same sampled pool gave the same
// hit ratios as this probation queue. What mattered was the sketch's size: it counts every
// key read, the tail included (about five times the keys held), and a sketch sized by the
// keys held collided so often that the tail looked as read as the keys at the boundary. It is
// sized by maxmemory instead (server/eviction.cc: 1/20 of it, about Caffeine's 8 bytes per
// key of capacity at 100-byte values), fixed while maxmemory stays, counted in used_memory.
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

// Whether a key about to be created, whose history estimate is `estimate` (the miss that
// led to its creation included), goes on probation: read at most once lately.
inline bool StartsOnProbation(uint8_t estimate) { return estimate <= 1; }

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
