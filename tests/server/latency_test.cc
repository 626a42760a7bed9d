// LatencyMonitor and CommandLatencyHistogram (server/latency.h): the figures Redis 7.0 would
// give for the same samples (its hdr_histogram with 2 significant figures, values in ns).
#include <gtest/gtest.h>

#include "server/latency.h"

namespace lapse::server {
namespace {

CommandLatencyHistogram::Totals TotalsOf(const CommandLatencyHistogram& h) {
  CommandLatencyHistogram::Totals t;
  h.AddTo(t);
  return t;
}

TEST(CommandLatencyHistogramTest, PercentilesAreHdrEquivalentValues) {
  CommandLatencyHistogram h;
  h.Record(1000);  // 1 us, as Redis records it: p = 1.003 us
  EXPECT_EQ(TotalsOf(h).ValueAtPercentile(50), 1003);
  EXPECT_EQ(TotalsOf(h).ValueAtPercentile(0), 1000);
  h.Clear();
  h.Record(4000);
  EXPECT_EQ(TotalsOf(h).ValueAtPercentile(99.9), 4015);
  h.Record(81920 + 100);  // in a bucket of 512 ns: lowest 81920, highest 82431
  EXPECT_EQ(TotalsOf(h).ValueAtPercentile(100), 82431);
  EXPECT_EQ(TotalsOf(h).ValueAtPercentile(50), 4015);
}

TEST(CommandLatencyHistogramTest, ValuesAreClampedToOneNanosecondAndOneSecond) {
  CommandLatencyHistogram h;
  h.Record(0);
  h.Record(5'000'000'000);
  CommandLatencyHistogram::Totals t = TotalsOf(h);
  EXPECT_EQ(t.total, 2u);
  EXPECT_EQ(t.ValueAtPercentile(0), 1);
  EXPECT_GE(t.ValueAtPercentile(100), CommandLatencyHistogram::kMaxNs);
}

TEST(CommandLatencyHistogramTest, CumulativeBucketsFollowHdrsLogIterator) {
  CommandLatencyHistogram h;
  for (int i = 0; i < 3; ++i) h.Record(1000);  // level 1024 ns: 1 us
  h.Record(4000);                              // level 4096 ns: 4 us
  h.Record(5023);                              // level 8192 ns: 8 us
  h.Record(40000);                             // level 65536 ns: 66 us
  using Buckets = std::vector<std::pair<int64_t, uint64_t>>;
  EXPECT_EQ(TotalsOf(h).CumulativeBuckets(), (Buckets{{1, 3}, {4, 4}, {8, 5}, {66, 6}}));
}

TEST(CommandLatencyHistogramTest, TotalsSumThreads) {
  CommandLatencyHistogram a, b;
  a.Record(1000);
  b.Record(1000);
  CommandLatencyHistogram::Totals t;
  a.AddTo(t);
  b.AddTo(t);
  EXPECT_EQ(t.total, 2u);
  EXPECT_EQ(t.CumulativeBuckets(), (std::vector<std::pair<int64_t, uint64_t>>{{1, 2}}));
}

TEST(LatencyMonitorTest, RecordsOnlyFromTheThreshold) {
  LatencyMonitor m;
  m.AddSampleIfNeeded("command", 500);  // off: threshold 0
  EXPECT_TRUE(m.LatestSamples().empty());
  m.set_threshold_ms(10);
  m.AddSampleIfNeeded("command", 9);
  EXPECT_TRUE(m.LatestSamples().empty());
  m.AddSampleIfNeeded("command", 10);
  ASSERT_EQ(m.LatestSamples().size(), 1u);
  EXPECT_EQ(m.LatestSamples()[0].last_ms, 10);
}

TEST(LatencyMonitorTest, OneSampleASecondKeepsTheWorst) {
  LatencyMonitor m;
  m.AddSample("expire-cycle", 12);
  m.AddSample("expire-cycle", 30);
  m.AddSample("expire-cycle", 20);
  std::vector<LatencyMonitor::Sample> history = m.History("expire-cycle");
  // Unless the second turned between the calls, the three share one sample.
  ASSERT_GE(history.size(), 1u);
  ASSERT_LE(history.size(), 3u);
  EXPECT_EQ(m.LatestSamples()[0].max_ms, 30);
}

TEST(LatencyMonitorTest, ResetCountsTheEventsItForgot) {
  LatencyMonitor m;
  m.AddSample("command", 1);
  m.AddSample("fast-command", 1);
  std::vector<std::string_view> some = {"command", "nosuch", "command"};
  EXPECT_EQ(m.Reset(some), 1u);
  EXPECT_EQ(m.Reset({}), 1u);
  EXPECT_TRUE(m.History("fast-command").empty());
}

TEST(LatencyPercentilesTest, ParseAndFormatAsRedis) {
  std::vector<double> p;
  EXPECT_EQ(ParsePercentiles("50 99  99.9", &p), "");
  EXPECT_EQ(p, (std::vector<double>{50, 99, 99.9}));
  EXPECT_EQ(FormatPercentile(99.9), "99.9");
  EXPECT_EQ(FormatPercentile(50), "50");
  EXPECT_EQ(ParsePercentiles("50 x", &p), "Invalid latency-tracking-info-percentiles parameters");
  EXPECT_EQ(ParsePercentiles("101", &p), "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
  EXPECT_EQ(p, (std::vector<double>{50, 99, 99.9}));  // unchanged by a refusal
  EXPECT_EQ(ParsePercentiles("", &p), "");
  EXPECT_TRUE(p.empty());
}

}  // namespace
}  // namespace lapse::server
