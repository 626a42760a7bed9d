#include "server/latency.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace lapse::server {

// ---- LatencyMonitor ----

void LatencyMonitor::AddSample(std::string_view event, int64_t ms) {
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  std::lock_guard lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  s.max_ms = std::max(s.max_ms, ms);
  Sample& previous = s.samples[(s.next + kSeriesLength - 1) % kSeriesLength];
  if (previous.time_s == now) {
    previous.ms = std::max(previous.ms, ms);
    return;
  }
  s.samples[s.next] = Sample{now, ms};
  s.next = (s.next + 1) % kSeriesLength;
}

std::vector<LatencyMonitor::Sample> LatencyMonitor::Series::Ordered() const {
  std::vector<Sample> out;
  for (size_t i = 0; i < kSeriesLength; ++i) {
    const Sample& s = samples[(next + i) % kSeriesLength];
    if (s.time_s != 0) out.push_back(s);
  }
  return out;
}

std::vector<LatencyMonitor::Latest> LatencyMonitor::LatestSamples() const {
  std::lock_guard lock(mu_);
  std::vector<Latest> out;
  for (const auto& [event, s] : events_) {
    const Sample& last = s.samples[(s.next + kSeriesLength - 1) % kSeriesLength];
    out.push_back(Latest{event, last.time_s, last.ms, s.max_ms});
  }
  return out;
}

std::vector<LatencyMonitor::Sample> LatencyMonitor::History(std::string_view event) const {
  std::lock_guard lock(mu_);
  auto it = events_.find(event);
  return it == events_.end() ? std::vector<Sample>{} : it->second.Ordered();
}

bool LatencyMonitor::HasSamples(std::string_view event) const {
  std::lock_guard lock(mu_);
  return events_.find(event) != events_.end();
}

size_t LatencyMonitor::Reset(std::span<const std::string_view> events) {
  std::lock_guard lock(mu_);
  if (events.empty()) return std::exchange(events_, {}).size();
  size_t reset = 0;
  for (std::string_view event : events) {
    auto it = events_.find(event);
    if (it == events_.end()) continue;
    events_.erase(it);
    ++reset;
  }
  return reset;
}

std::string LatencyMonitor::Doctor() const {
  std::lock_guard lock(mu_);
  if (events_.empty()) {
    if (threshold_ms() == 0) {
      return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "
             "\"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep "
             "space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n";
    }
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. "
           "I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n";
  }
  std::string report =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n";
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  int number = 0;
  bool slow_commands = false, scheduler = false, reclamation = false;
  for (const auto& [event, series] : events_) {
    std::vector<Sample> samples = series.Ordered();
    if (samples.empty()) continue;
    double sum = 0;
    for (const Sample& s : samples) sum += static_cast<double>(s.ms);
    double avg = sum / static_cast<double>(samples.size());
    double deviation = 0;
    for (const Sample& s : samples) deviation += std::fabs(static_cast<double>(s.ms) - avg);
    deviation /= static_cast<double>(samples.size());
    double period = static_cast<double>(now - samples.front().time_s) / static_cast<double>(samples.size());
    char line[512];
    std::snprintf(line, sizeof line,
                  "%d. %s: %zu latency spikes (average %lums, mean deviation %lums, period %.2f sec). Worst all time "
                  "event %lldms.\n",
                  ++number, event.c_str(), samples.size(), static_cast<unsigned long>(avg),
                  static_cast<unsigned long>(deviation), period, static_cast<long long>(series.max_ms));
    report += line;
    slow_commands |= event == "command";
    scheduler |= event == "fast-command";
    reclamation |= event == "expire-cycle" || event == "item-reclaim-cycle";
  }
  report += "\nI have a few advices for you:\n\n";
  if (slow_commands) {
    report +=
        "- Check your Slow Log to understand what are the commands you are running which are too slow to execute. "
        "Please check https://redis.io/commands/slowlog for more information.\n"
        "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If "
        "you have very large objects that are often deleted, expired, or evicted, try to fragment those objects "
        "into multiple smaller objects.\n";
  }
  if (scheduler) {
    report +=
        "- The system is slow to execute Redis code paths not containing system calls. This usually means the "
        "system does not provide Redis CPU time to run for long periods. You should try to lower the system load, "
        "or run lapse on a computer or VM of its own.\n";
  }
  if (reclamation) {
    report +=
        "- Background reclamation of expired keys or items took long slices: many keys or items expiring in the "
        "same second, or large ones, are deleted in the background; spread their deadlines if you can.\n";
  }
  if (!slow_commands && !scheduler && !reclamation) {
    report +=
        "- None in particular: the events above are not ones I know how to explain. The Slow Log and LATENCY "
        "HISTORY show when they happened.\n";
  }
  return report;
}

// ---- CommandLatencyHistogram: hdr_histogram's layout for 1 ns .. 1 s, 2 significant figures ----

namespace {
// 256 sub-buckets, so values below 256 are exact and above, a bucket of half as many
// sub-buckets per power of two.
struct HdrIndex {
  int bucket;
  int64_t sub;
};

HdrIndex IndexOf(int64_t value) {
  int pow2ceiling = 64 - std::countl_zero(static_cast<uint64_t>(value | 255));
  int bucket = pow2ceiling - 8;
  return {bucket, value >> bucket};
}

size_t CountsIndex(int64_t value) {
  HdrIndex i = IndexOf(value);
  return static_cast<size_t>(((i.bucket + 1) << 7) + (i.sub - 128));
}

int64_t ValueAtIndex(size_t index) {
  int bucket = static_cast<int>(index >> 7) - 1;
  int64_t sub = static_cast<int64_t>(index & 127) + 128;
  if (bucket < 0) {
    sub -= 128;
    bucket = 0;
  }
  return sub << bucket;
}

int64_t LowestEquivalent(int64_t value) {
  HdrIndex i = IndexOf(value);
  return i.sub << i.bucket;
}

int64_t HighestEquivalent(int64_t value) { return LowestEquivalent(value) + (int64_t{1} << IndexOf(value).bucket) - 1; }
}  // namespace

CommandLatencyHistogram::~CommandLatencyHistogram() {
  for (std::atomic<Chunk*>& chunk : chunks_) delete chunk.load();
}

void CommandLatencyHistogram::Record(int64_t ns) {
  size_t index = CountsIndex(std::clamp<int64_t>(ns, 1, kMaxNs));
  std::atomic<Chunk*>& slot = chunks_[index / kChunk];
  Chunk* chunk = slot.load(std::memory_order_acquire);
  if (chunk == nullptr) [[unlikely]] {
    chunk = new Chunk{};
    slot.store(chunk, std::memory_order_release);
  }
  std::atomic<uint64_t>& count = (*chunk)[index % kChunk];
  count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  total_.store(total_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void CommandLatencyHistogram::Clear() {
  for (std::atomic<Chunk*>& slot : chunks_) {
    if (Chunk* chunk = slot.load(std::memory_order_acquire)) {
      for (std::atomic<uint64_t>& c : *chunk) c.store(0, std::memory_order_relaxed);
    }
  }
  total_.store(0, std::memory_order_relaxed);
}

void CommandLatencyHistogram::AddTo(Totals& totals) const {
  if (totals.counts.empty()) totals.counts.resize(kCounts);
  for (size_t c = 0; c < chunks_.size(); ++c) {
    const Chunk* chunk = chunks_[c].load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    for (size_t i = 0; i < kChunk; ++i) totals.counts[c * kChunk + i] += (*chunk)[i].load(std::memory_order_relaxed);
  }
  totals.total += total_.load(std::memory_order_relaxed);
}

int64_t CommandLatencyHistogram::Totals::ValueAtPercentile(double percentile) const {
  double requested = std::min(percentile, 100.0);
  auto wanted = static_cast<int64_t>(requested / 100 * static_cast<double>(total) + 0.5);
  wanted = std::max<int64_t>(wanted, 1);
  int64_t seen = 0;
  int64_t value = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += static_cast<int64_t>(counts[i]);
    if (seen >= wanted) {
      value = ValueAtIndex(i);
      break;
    }
  }
  return percentile == 0.0 ? LowestEquivalent(value) : HighestEquivalent(value);
}

std::vector<std::pair<int64_t, uint64_t>> CommandLatencyHistogram::Totals::CumulativeBuckets() const {
  std::vector<std::pair<int64_t, uint64_t>> out;
  uint64_t cumulative = 0, previous = 0;
  size_t next_index = 0;
  for (int64_t level = 1024; cumulative < total && level <= 2 * kMaxNs; level *= 2) {
    size_t last = std::min(CountsIndex(std::min(level, kMaxNs)), counts.size() - 1);
    for (; next_index <= last; ++next_index) cumulative += counts[next_index];
    if (cumulative > previous) out.emplace_back(HighestEquivalent(std::min(level, kMaxNs)) / 1000, cumulative);
    previous = cumulative;
  }
  return out;
}

// ---- latency-tracking-info-percentiles ----

std::string FormatPercentile(double p) {
  char buf[64];
  int len = std::snprintf(buf, sizeof buf, "%f", p);
  std::string s(buf, static_cast<size_t>(len));
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

std::string ParsePercentiles(std::string_view text, std::vector<double>* out) {
  std::vector<double> parsed;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    std::string word(text.substr(i, end - i));
    char* stop = nullptr;
    double p = std::strtod(word.c_str(), &stop);
    if (stop == word.c_str() || *stop != '\0' || std::isnan(p)) return "Invalid latency-tracking-info-percentiles parameters";
    if (p < 0.0 || p > 100.0) return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
    parsed.push_back(p);
    i = end;
  }
  *out = std::move(parsed);
  return "";
}

}  // namespace lapse::server
