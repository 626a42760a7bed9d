#include "server/instantaneous_metrics.h"

#include <numeric>

namespace lapse::server {

void InstantaneousMetrics::Sample(int64_t now_ms, const Readings& totals) {
  std::lock_guard lock(mu_);
  for (size_t m = 0; m < kMetricCount; ++m) {
    Track& t = tracks_[m];
    if (started_) {
      int64_t elapsed_ms = now_ms - t.last_ms;
      uint64_t delta = totals[m] >= t.last_total ? totals[m] - t.last_total : 0;
      t.samples[t.next] = elapsed_ms > 0 ? delta * 1000 / static_cast<uint64_t>(elapsed_ms) : 0;
      t.next = (t.next + 1) % kSamples;
    }
    t.last_ms = now_ms;
    t.last_total = totals[m];
  }
  started_ = true;
}

uint64_t InstantaneousMetrics::PerSecond(Metric metric) const {
  std::lock_guard lock(mu_);
  const auto& samples = tracks_[metric].samples;
  return std::accumulate(samples.begin(), samples.end(), uint64_t{0}) / kSamples;
}

void InstantaneousMetrics::Reset() {
  std::lock_guard lock(mu_);
  tracks_ = {};
  started_ = false;
}

}  // namespace lapse::server
