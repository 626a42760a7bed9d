// Bucket index = (magnitude class, linear sub-bucket). For v >= 2^kSubBits with highest set
// bit e, the class is e - kSubBits + 1 and the sub-bucket is the kSubBits bits below the top
// one: index = class * 2^kSubBits + (v >> (e - kSubBits)) - 2^kSubBits. Values below
// 2^kSubBits are class 0, one bucket per value.
#include "bench/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace lapse::bench {
namespace {
constexpr uint64_t kSubBuckets = uint64_t{1} << LatencyHistogram::kSubBits;
}  // namespace

size_t LatencyHistogram::BucketOf(uint64_t value) {
  if (value < kSubBuckets) return static_cast<size_t>(value);
  int top_bit = 63 - std::countl_zero(value);
  int shift = top_bit - kSubBits;
  uint64_t sub = (value >> shift) - kSubBuckets;
  return static_cast<size_t>((static_cast<uint64_t>(shift) + 1) * kSubBuckets + sub);
}

uint64_t LatencyHistogram::BucketHighest(size_t index) {
  if (index < kSubBuckets) return index;
  uint64_t shift = index / kSubBuckets - 1;
  uint64_t sub = index % kSubBuckets;
  uint64_t lowest = (kSubBuckets + sub) << shift;
  return lowest + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

uint64_t LatencyHistogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  if (q >= 1.0) return max_;
  auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(BucketHighest(i), max_);
  }
  return max_;
}

}  // namespace lapse::bench
