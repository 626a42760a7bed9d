// File: bench/latency_histogram.h
//
// A log-linear latency histogram in the manner of HdrHistogram: values (nanoseconds) below
// 2^kSubBits get a bucket each; above, every power of two is cut into 2^kSubBits equal
// buckets, so a bucket is never wider than 1/128 of its values (< 0.8% error) and a value of
// an hour still lands in one of a few thousand buckets. Recording is an index computation and
// an increment. Quantiles report the bucket's highest value (never under-report); the exact
// maximum, minimum and sum are kept beside the buckets.
//
// Buckets grow on demand up to the largest value seen, so a histogram of fast requests stays
// small: one per command type per second per thread is affordable (the timeline).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lapse::bench {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;

  void Record(uint64_t value_ns) {
    size_t index = BucketOf(value_ns);
    if (index >= counts_.size()) counts_.resize(index + 1, 0);
    ++counts_[index];
    ++count_;
    sum_ += value_ns;
    if (value_ns > max_) max_ = value_ns;
    if (value_ns < min_) min_ = value_ns;
  }

  void Merge(const LatencyHistogram& other);

  // The smallest recorded-bucket upper bound at or below which a `q` share of the values lie
  // (0 < q <= 1); 0 when empty. Quantile(1.0) is the exact maximum.
  uint64_t Quantile(double q) const;

  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }

  static size_t BucketOf(uint64_t value);
  static uint64_t BucketHighest(size_t index);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = UINT64_MAX;
};

}  // namespace lapse::bench
