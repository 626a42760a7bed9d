// File: server/latency.h
//
// Redis 7.0's two latency tools.
//
// LatencyMonitor (LATENCY LATEST/HISTORY/RESET/DOCTOR): when something takes at least
// `latency-monitor-threshold` milliseconds (0: the monitor is off), a sample (unix second,
// milliseconds) goes into its event's series: `command` and `fast-command` for commands,
// `expire-cycle` for a background slice of key expiry, `item-reclaim-cycle` for one of
// container item reclamation. Like Redis, a series keeps the last 160 samples, one per
// second (a later spike in the same second raises that second's sample), and the worst ever.
// Samples are rare by construction (only spikes), so one mutex guards everything.
//
// CommandLatencyHistogram (LATENCY HISTOGRAM, INFO latencystats): every call of every
// command, when `latency-tracking` is on, as Redis's hdr_histogram keeps it: values in
// nanoseconds (the call's whole microseconds times 1000, as Redis records them), 2
// significant figures, 1 ns to 1 s. Replies are computed as hdr's iterators compute them, so
// bucket labels and percentiles read as Redis's (`p50=1.003`). Each event-loop thread has its
// own histogram per command, made on the command's first call there and written by that thread
// alone; readers sum them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lapse::server {

class LatencyMonitor {
 public:
  struct Sample {
    int64_t time_s = 0;
    int64_t ms = 0;
  };
  struct Latest {
    std::string event;
    int64_t time_s, last_ms, max_ms;
  };

  void set_threshold_ms(int64_t ms) { threshold_ms_.store(ms, std::memory_order_relaxed); }
  int64_t threshold_ms() const { return threshold_ms_.load(std::memory_order_relaxed); }
  // Records `ms` under `event` if the monitor is on and `ms` reaches the threshold.
  void AddSampleIfNeeded(std::string_view event, int64_t ms) {
    int64_t threshold = threshold_ms();
    if (threshold > 0 && ms >= threshold) [[unlikely]] AddSample(event, ms);
  }
  void AddSample(std::string_view event, int64_t ms);

  std::vector<Latest> LatestSamples() const;
  // Oldest first; empty for an event never seen.
  std::vector<Sample> History(std::string_view event) const;
  // Forgets the named events (every event when `events` is empty); returns how many existed.
  size_t Reset(std::span<const std::string_view> events);
  // LATENCY DOCTOR's report, in Redis's words.
  std::string Doctor() const;
  bool HasSamples(std::string_view event) const;

 private:
  static constexpr size_t kSeriesLength = 160;  // Redis's LATENCY_TS_LEN
  struct Series {
    std::array<Sample, kSeriesLength> samples{};
    size_t next = 0;
    int64_t max_ms = 0;
    std::vector<Sample> Ordered() const;
  };

  std::atomic<int64_t> threshold_ms_{0};
  mutable std::mutex mu_;
  std::map<std::string, Series, std::less<>> events_;
};

class CommandLatencyHistogram {
 public:
  static constexpr int64_t kMaxNs = 1'000'000'000;  // Redis's LATENCY_HISTOGRAM_MAX_VALUE

  CommandLatencyHistogram() = default;
  ~CommandLatencyHistogram();
  CommandLatencyHistogram(const CommandLatencyHistogram&) = delete;
  CommandLatencyHistogram& operator=(const CommandLatencyHistogram&) = delete;

  // Called by the owning thread only.
  void Record(int64_t ns);
  void Clear();

  // A histogram's figures, summed over threads.
  struct Totals {
    std::vector<uint64_t> counts;
    uint64_t total = 0;
    // hdr_value_at_percentile, in nanoseconds.
    int64_t ValueAtPercentile(double percentile) const;
    // LATENCY HISTOGRAM's (microseconds, calls at or below) pairs, as hdr's log iterator from
    // 1024 ns by powers of 2 gives them: only where the cumulative count grows.
    std::vector<std::pair<int64_t, uint64_t>> CumulativeBuckets() const;
  };
  void AddTo(Totals& totals) const;

  static constexpr size_t kCounts = 256 + 22 * 128;  // hdr's counts_len for 1..1e9 at 2 figures

 private:
  // hdr's counts, in chunks of 128 made when first written: a command's calls fall in a few
  // powers of two, so it costs about a kilobyte per power of two its latencies reach, not
  // the 24 KB of the whole range (memory that maxmemory counts).
  static constexpr size_t kChunk = 128;
  using Chunk = std::array<std::atomic<uint64_t>, kChunk>;
  std::array<std::atomic<Chunk*>, kCounts / kChunk> chunks_{};
  std::atomic<uint64_t> total_{0};
};

// "50 99 99.9" <-> percentiles, for latency-tracking-info-percentiles; nullopt-like empty
// error string on success.
std::string ParsePercentiles(std::string_view text, std::vector<double>* out);
std::string FormatPercentile(double p);  // "%f" with trailing zeros trimmed, as Redis writes it

}  // namespace lapse::server
