// File: engine/request_units.h
//
// Request units (RU), in the spirit of Cosmos DB: every command is charged by what it does
// and how many bytes it touches, and a per-second budget decides how much background
// reclamation may spend.
//
// RuCharge is the one table of rates (the README documents it per command):
//   read of a key or item      1 RU per started KiB, at least 1
//   insert                     5 RU per started KiB
//   replace (overwrite a live) 10 RU per started KiB
//   delete                     5 RU per started KiB
//   query (SCAN, KEYS, ISCAN, ICOUNT, DBSIZE)  max(1 RU per started KiB returned,
//                              1 RU per started 100 entries visited), at least 1
//   rejected request           1 RU
//
// RuMeter is a budget of RU per second (0: unlimited). Each second starts with a full
// budget and nothing carries over, so an idle minute does not buy a burst. Users are
// charged first; reclamation may take only what users left in the current second
// (provisioned billing). Meters are shared across shard threads; a small mutex keeps the
// window and its spend consistent, and is only taken when a limit is set.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace lapse::engine {

enum class RuOp : uint8_t { kNone, kRead, kInsert, kReplace, kDelete, kQuery };

inline constexpr double kRejectedRu = 1.0;

// The charge for one operation on `bytes` bytes (for kQuery: bytes returned and entries
// visited).
double RuCharge(RuOp op, size_t bytes, size_t visited = 0);

class RuMeter {
 public:
  // 0 means unlimited.
  void set_limit(double ru_per_second) { limit_.store(ru_per_second, std::memory_order_relaxed); }
  double limit() const { return limit_.load(std::memory_order_relaxed); }

  // Records a user request's charge in the current second.
  void ChargeUser(double ru, int64_t now_ms);
  // With a limit set: true when users already spent the whole current second, and
  // *retry_after_ms says when the next second starts.
  bool Exhausted(int64_t now_ms, int64_t* retry_after_ms);
  // Takes `ru` from what users left of the current second; false (nothing taken) when the
  // leftover is smaller. Always true without a limit.
  bool TryChargeReclaim(double ru, int64_t now_ms);
  // Reclamation charged without a budget check (serverless billing).
  void ChargeReclaimUnmetered(double ru);
  void CountThrottled() { throttled_.fetch_add(1, std::memory_order_relaxed); }

  double user_total() const { return user_total_milli_.load(std::memory_order_relaxed) / 1000.0; }
  double reclaim_total() const { return reclaim_total_milli_.load(std::memory_order_relaxed) / 1000.0; }
  uint64_t throttled() const { return throttled_.load(std::memory_order_relaxed); }

 private:
  void RollLocked(int64_t second);

  std::atomic<double> limit_{0};
  std::mutex mu_;
  int64_t second_ = -1;
  double spent_ = 0;  // by users and reclamation in second_
  std::atomic<int64_t> user_total_milli_{0};
  std::atomic<int64_t> reclaim_total_milli_{0};
  std::atomic<uint64_t> throttled_{0};
};

// Lag from deadline to physical deletion, in log-spaced buckets (4 per power of two), so
// p50/p99 are known within about 19% at any scale. Thread-safe.
class LagHistogram {
 public:
  void Record(uint64_t ms);
  // The upper bound of the bucket holding the q-quantile (0 < q <= 1); 0 when empty.
  uint64_t Quantile(double q) const;
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  uint64_t count() const;

 private:
  static constexpr int kBuckets = 4 * 40;
  static int BucketOf(uint64_t ms);
  static uint64_t UpperBound(int bucket);
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> max_{0};
};

}  // namespace lapse::engine
