#include "engine/request_units.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace lapse::engine {

namespace {
double StartedKiB(size_t bytes) { return static_cast<double>((bytes + 1023) / 1024); }
}  // namespace

double RuCharge(RuOp op, size_t bytes, size_t visited) {
  double kib = std::max(1.0, StartedKiB(bytes));
  switch (op) {
    case RuOp::kNone:
      return 0;
    case RuOp::kRead:
      return kib;
    case RuOp::kInsert:
      return 5 * kib;
    case RuOp::kReplace:
      return 10 * kib;
    case RuOp::kDelete:
      return 5 * kib;
    case RuOp::kQuery:
      return std::max({1.0, StartedKiB(bytes), static_cast<double>((visited + 99) / 100)});
  }
  return 0;
}

// Only forward: threads read the clock before they take the lock, so a charge may come with a
// time from the second before the newest one seen. It counts against the newest second;
// rolling back would hand that earlier second a fresh budget (a reclaim slice that read the
// time before a second boundary would then overspend).
void RuMeter::RollLocked(int64_t second) {
  if (second > second_) {
    second_ = second;
    spent_ = 0;
  }
}

void RuMeter::ChargeUser(double ru, int64_t now_ms) {
  user_total_milli_.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
  if (limit() <= 0) return;
  std::lock_guard lock(mu_);
  RollLocked(now_ms / 1000);
  spent_ += ru;
}

bool RuMeter::Exhausted(int64_t now_ms, int64_t* retry_after_ms) {
  double lim = limit();
  if (lim <= 0) return false;
  std::lock_guard lock(mu_);
  RollLocked(now_ms / 1000);
  if (spent_ < lim) return false;
  *retry_after_ms = (second_ + 1) * 1000 - now_ms;
  return true;
}

bool RuMeter::TryChargeReclaim(double ru, int64_t now_ms) {
  double lim = limit();
  if (lim > 0) {
    std::lock_guard lock(mu_);
    RollLocked(now_ms / 1000);
    if (spent_ + ru > lim) return false;
    spent_ += ru;
  }
  reclaim_total_milli_.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
  return true;
}

void RuMeter::ChargeReclaimUnmetered(double ru) {
  reclaim_total_milli_.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
}

int LagHistogram::BucketOf(uint64_t ms) {
  if (ms < 4) return static_cast<int>(ms);
  int log = 63 - std::countl_zero(ms);            // 2^log <= ms
  int sub = static_cast<int>((ms >> (log - 2)) & 3);  // quarter within the power of two
  int b = (log - 1) * 4 + sub;
  return std::min(b, kBuckets - 1);
}

uint64_t LagHistogram::UpperBound(int bucket) {
  if (bucket < 4) return static_cast<uint64_t>(bucket);
  int log = bucket / 4 + 1;
  int sub = bucket % 4;
  return (static_cast<uint64_t>(4 + sub + 1) << (log - 2)) - 1;
}

void LagHistogram::Record(uint64_t ms) {
  buckets_[BucketOf(ms)].fetch_add(1, std::memory_order_relaxed);
  uint64_t prev = max_.load(std::memory_order_relaxed);
  while (ms > prev && !max_.compare_exchange_weak(prev, ms, std::memory_order_relaxed)) {
  }
}

uint64_t LagHistogram::count() const {
  uint64_t n = 0;
  for (const auto& b : buckets_) n += b.load(std::memory_order_relaxed);
  return n;
}

uint64_t LagHistogram::Quantile(double q) const {
  uint64_t total = count();
  if (total == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b].load(std::memory_order_relaxed);
    if (seen >= rank) return std::min(UpperBound(b), max());
  }
  return max();
}

}  // namespace lapse::engine
