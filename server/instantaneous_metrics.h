// File: server/instantaneous_metrics.h
//
// INFO stats' instantaneous_ops_per_sec, instantaneous_input_kbps and
// instantaneous_output_kbps, as Redis's trackInstantaneousMetric makes them: every
// kPeriod a sampler reads each counter's running total (summed over the event-loop threads'
// own counters) and records the rate since its previous reading in a ring of kSamples; INFO
// shows the mean of the ring, so the figures cover about the last 1.6 seconds and fall back
// to 0 within that once traffic stops.
//
// One sampler thread writes and INFO threads read, ten times a second against a handful of
// INFO calls: one mutex is cheaper than anything clever. The rates are taken against the
// steady clock, never the engine's, which DEBUG FREEZE-CLOCK and ADVANCE move.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace lapse::server {

class InstantaneousMetrics {
 public:
  enum Metric { kCommands, kNetInput, kNetOutput, kMetricCount };
  using Readings = std::array<uint64_t, kMetricCount>;
  static constexpr size_t kSamples = 16;  // Redis's STATS_METRIC_SAMPLES
  static constexpr std::chrono::milliseconds kPeriod{100};

  // Records the rates since the previous call, given the counters' running totals now. A
  // total that went down (CONFIG RESETSTAT zeroed it meanwhile) counts as no traffic.
  void Sample(int64_t now_ms, const Readings& totals);
  // The mean of the ring, per second.
  uint64_t PerSecond(Metric metric) const;
  // CONFIG RESETSTAT: an empty ring, and the next sample only takes its readings as the new
  // starting point, since the threads' counters are zeroed one by one.
  void Reset();

 private:
  struct Track {
    std::array<uint64_t, kSamples> samples{};
    size_t next = 0;
    int64_t last_ms = 0;
    uint64_t last_total = 0;
  };
  mutable std::mutex mu_;
  std::array<Track, kMetricCount> tracks_{};
  bool started_ = false;  // false: the next Sample only takes its starting point
};

}  // namespace lapse::server
