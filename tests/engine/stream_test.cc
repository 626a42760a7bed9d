// Streams (engine/stream.h): id parsing as Redis's string2ull reads it, the packed encoding's
// round trip (integers, strings, master fields and other fields), deletion and trimming as
// Redis 7.0's streamTrim does them, and a randomized comparison against a std::map model
// large enough to span many nodes.
#include "engine/stream.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace lapse::engine {
namespace {

using Fields = std::vector<std::string>;
using Model = std::map<StreamId, Fields>;

void Add(Stream& s, StreamId id, const Fields& fv) {
  std::vector<std::string_view> views(fv.begin(), fv.end());
  s.Append(id, views);
}

Model Contents(const Stream& s, bool reverse = false, StreamId start = StreamId::Min(), StreamId end = StreamId::Max()) {
  Model out;
  std::vector<StreamId> order;
  s.Range(start, end, reverse, [&](StreamId id, std::span<const std::string_view> fv) {
    out[id] = Fields(fv.begin(), fv.end());
    order.push_back(id);
    return true;
  });
  for (size_t i = 1; i < order.size(); ++i) EXPECT_EQ(order[i - 1] < order[i], !reverse);
  return out;
}

TEST(StreamIdTest, ParsesAsRedis) {
  StreamId id;
  ASSERT_TRUE(ParseStreamId("5-3", 0, &id));
  EXPECT_EQ(id, (StreamId{5, 3}));
  ASSERT_TRUE(ParseStreamId("7", 9, &id));
  EXPECT_EQ(id, (StreamId{7, 9}));
  ASSERT_TRUE(ParseStreamId("18446744073709551615-18446744073709551615", 0, &id));
  EXPECT_EQ(id, StreamId::Max());
  ASSERT_TRUE(ParseStreamId("007-+1", 0, &id));  // strtoull's leniency, as string2ull
  EXPECT_EQ(id, (StreamId{7, 1}));
  EXPECT_FALSE(ParseStreamId("-1", 0, &id));
  EXPECT_FALSE(ParseStreamId("1-", 0, &id));
  EXPECT_FALSE(ParseStreamId("a-1", 0, &id));
  EXPECT_FALSE(ParseStreamId("18446744073709551616", 0, &id));
  EXPECT_FALSE(ParseStreamId("", 0, &id));
}

TEST(StreamIdTest, IncrementAndDecrementCarry) {
  StreamId id{1, UINT64_MAX};
  ASSERT_TRUE(id.Increment());
  EXPECT_EQ(id, (StreamId{2, 0}));
  ASSERT_TRUE(id.Decrement());
  EXPECT_EQ(id, (StreamId{1, UINT64_MAX}));
  StreamId max = StreamId::Max();
  EXPECT_FALSE(max.Increment());
  StreamId min = StreamId::Min();
  EXPECT_FALSE(min.Decrement());
  EXPECT_EQ((StreamId{12, 4}).ToString(), "12-4");
}

TEST(StreamTest, RoundTripsIntegersStringsAndOtherFields) {
  Stream s;
  Add(s, {1, 0}, {"name", "ann", "age", "42"});
  Add(s, {1, 1}, {"name", "bob", "age", "-9223372036854775808"});
  Add(s, {5, 0}, {"other", "", "age", "007"});
  Add(s, {1000000, 7}, {"name", "9223372036854775807", "age", "x"});
  Model expected = {{{1, 0}, {"name", "ann", "age", "42"}},
                    {{1, 1}, {"name", "bob", "age", "-9223372036854775808"}},
                    {{5, 0}, {"other", "", "age", "007"}},
                    {{1000000, 7}, {"name", "9223372036854775807", "age", "x"}}};
  EXPECT_EQ(Contents(s), expected);
  EXPECT_EQ(Contents(s, true), expected);
  EXPECT_EQ(s.length(), 4u);
  EXPECT_EQ(s.entries_added(), 4u);
  EXPECT_EQ(s.last_id(), (StreamId{1000000, 7}));
  EXPECT_EQ(s.first_id(), (StreamId{1, 0}));
  EXPECT_EQ(Contents(s, false, {1, 1}, {5, 0}).size(), 2u);
}

// Ids may jump anywhere in 64 bits inside one node: deltas of 2^62 and more take the header's
// escape, and deleting such an entry flags the right header.
TEST(StreamTest, RoundTripsMsJumpsPast62Bits) {
  Stream s;
  const uint64_t big = uint64_t{1} << 62;
  Add(s, {1, 1}, {"a", "1"});
  Add(s, {big - 1, 5}, {"a", "2"});
  Add(s, {big, 0}, {"b", "3"});
  Add(s, {UINT64_MAX, 0}, {"b", "4"});
  Add(s, {UINT64_MAX, 7}, {"a", "5"});
  EXPECT_EQ(s.node_count(), 1u);
  EXPECT_TRUE(s.Delete({big, 0}));
  Model expected = {{{1, 1}, {"a", "1"}},
                    {{big - 1, 5}, {"a", "2"}},
                    {{UINT64_MAX, 0}, {"b", "4"}},
                    {{UINT64_MAX, 7}, {"a", "5"}}};
  EXPECT_EQ(Contents(s), expected);
  EXPECT_EQ(Contents(s, true), expected);
  EXPECT_EQ(Contents(s, false, {big, 0}, StreamId::Max()).size(), 2u);
}

// XSETID may set the last id back below a deleted entry: what is appended then lies after it,
// out of order, and reads, deletes and MINID trims look past the tombstone as Redis does.
TEST(StreamTest, EntriesAppendedBelowATombstoneStayReachable) {
  Stream s;
  Add(s, {5, 1}, {"f", "1"});
  Add(s, {9, 9}, {"f", "2"});
  ASSERT_TRUE(s.Delete({9, 9}));
  s.SetLastId({6, 0});
  Add(s, {6, 1}, {"f", "3"});
  Add(s, {8, 0}, {"f", "4"});
  Model expected = {{{5, 1}, {"f", "1"}}, {{6, 1}, {"f", "3"}}, {{8, 0}, {"f", "4"}}};
  EXPECT_EQ(Contents(s), expected);
  EXPECT_EQ(Contents(s, true), expected);
  EXPECT_EQ(Contents(s, false, {6, 0}, {9, 0}).size(), 2u);
  EXPECT_EQ(s.LastLiveId(), (StreamId{8, 0}));
  // Redis's streamTrim stops at the tombstone 9-9 (>= 7-0), so 6-1 stays.
  EXPECT_EQ(s.Trim({StreamTrim::Strategy::kMinId, false, 0, 0, {7, 0}}), 1u);
  EXPECT_TRUE(s.Delete({8, 0}));
  EXPECT_EQ(Contents(s), (Model{{{6, 1}, {"f", "3"}}}));
}

TEST(StreamTest, DeleteMarksAndDropsEmptyNodes) {
  Stream s;
  for (uint64_t i = 1; i <= 150; ++i) Add(s, {i, 0}, {"f", std::to_string(i)});
  EXPECT_EQ(s.node_count(), 2u);
  EXPECT_TRUE(s.Delete({1, 0}));
  EXPECT_FALSE(s.Delete({1, 0}));
  EXPECT_FALSE(s.Delete({1, 1}));
  EXPECT_FALSE(s.Delete({999, 0}));
  EXPECT_EQ(s.first_id(), (StreamId{2, 0}));
  EXPECT_EQ(s.max_deleted_id(), (StreamId{1, 0}));
  for (uint64_t i = 2; i <= 100; ++i) EXPECT_TRUE(s.Delete({i, 0}));
  EXPECT_EQ(s.node_count(), 1u);
  EXPECT_EQ(s.length(), 50u);
  EXPECT_EQ(s.first_id(), (StreamId{101, 0}));
  EXPECT_EQ(s.entries_added(), 150u);
}

TEST(StreamTest, TrimsAsRedisStreamTrim) {
  auto filled = [] {
    Stream s;
    for (uint64_t i = 1; i <= 250; ++i) Add(s, {i, 0}, {"f", "v"});
    return s;
  };
  Stream exact = filled();
  EXPECT_EQ(exact.Trim({StreamTrim::Strategy::kMaxLen, false, 0, 120, {}}), 130u);
  EXPECT_EQ(exact.length(), 120u);
  EXPECT_EQ(exact.first_id(), (StreamId{131, 0}));

  // `~` drops whole nodes only: the first node of 100 goes, the second would overshoot.
  Stream approx = filled();
  EXPECT_EQ(approx.Trim({StreamTrim::Strategy::kMaxLen, true, 0, 120, {}}), 100u);
  EXPECT_EQ(approx.length(), 150u);

  Stream limited = filled();
  EXPECT_EQ(limited.Trim({StreamTrim::Strategy::kMaxLen, true, 50, 0, {}}), 0u);

  Stream minid = filled();
  EXPECT_EQ(minid.Trim({StreamTrim::Strategy::kMinId, false, 0, 0, {42, 0}}), 41u);
  EXPECT_EQ(minid.first_id(), (StreamId{42, 0}));
  EXPECT_EQ(minid.Trim({StreamTrim::Strategy::kMinId, true, 0, 0, {250, 0}}), 159u);  // nodes 1 and 2; node 3 ends at 250
  EXPECT_EQ(minid.length(), 50u);
}

TEST(StreamTest, MatchesAModelUnderRandomEdits) {
  std::mt19937_64 rng(19);
  Stream s;
  Model model;
  StreamId next{1, 0};
  for (int step = 0; step < 20000; ++step) {
    uint64_t r = rng() % 10;
    if (r < 7) {
      next.ms += rng() % 3;
      next.seq = next.ms == s.last_id().ms && !model.empty() ? s.last_id().seq + 1 + rng() % 2 : rng() % 4;
      if (next <= s.last_id() && s.entries_added() > 0) continue;
      Fields fv = {"a", std::to_string(rng() % 1000), rng() % 4 ? "b" : "c", std::string(rng() % 30, 'x')};
      Add(s, next, fv);
      model[next] = fv;
    } else if (r < 9 && !model.empty()) {
      auto it = std::next(model.begin(), static_cast<long>(rng() % model.size()));
      EXPECT_TRUE(s.Delete(it->first));
      model.erase(it);
    } else if (!model.empty()) {
      uint64_t maxlen = model.size() - rng() % std::min<uint64_t>(model.size(), 20);
      s.Trim({StreamTrim::Strategy::kMaxLen, false, 0, maxlen, {}});
      while (model.size() > maxlen) model.erase(model.begin());
    }
    ASSERT_EQ(s.length(), model.size());
  }
  EXPECT_EQ(Contents(s), model);
  EXPECT_EQ(Contents(s, true), model);
}

TEST(StreamGroupTest, DeliverMovesOwnershipAndAcknowledgeDropsIt) {
  StreamGroup g;
  g.AddConsumer("alice", 10);
  EXPECT_FALSE(g.AddConsumer("alice", 20));
  EXPECT_EQ(g.consumers.at("alice").seen_time_ms, 10);
  g.AddConsumer("bob", 10);
  g.Deliver({1, 0}, "alice", 100);
  g.Deliver({2, 0}, "alice", 100);
  g.pel.at({1, 0}).delivery_count = 5;
  g.Deliver({1, 0}, "bob", 200);  // XGROUP SETID let it be read again
  EXPECT_EQ(g.pel.at({1, 0}).consumer, "bob");
  EXPECT_EQ(g.pel.at({1, 0}).delivery_count, 1u);
  EXPECT_EQ(g.pel.at({1, 0}).delivery_time_ms, 200);
  EXPECT_EQ(g.consumers.at("alice").pending.size(), 1u);
  EXPECT_EQ(g.consumers.at("bob").pending.size(), 1u);
  EXPECT_TRUE(g.Acknowledge({1, 0}));
  EXPECT_FALSE(g.Acknowledge({1, 0}));
  EXPECT_TRUE(g.consumers.at("bob").pending.empty());
  EXPECT_EQ(g.pel.size(), 1u);
}

// entries-read and lag follow Redis 7.0's estimates: exact while no deletion lies ahead of
// the group, unknown (nullopt / kInvalidEntriesRead) once one does.
TEST(StreamGroupTest, ReadCounterAndLagAsRedis) {
  Stream s;
  for (uint64_t i = 1; i <= 10; ++i) Add(s, {i, 0}, {"f", "v"});
  StreamGroup g;  // created at 0 without ENTRIESREAD: nothing deleted, so all 10 are lag
  EXPECT_EQ(s.Lag(g), 10);
  EXPECT_EQ(s.EstimateDistance({0, 0}), 0);  // before the first entry, nothing deleted
  s.AdvanceGroup(g, {1, 0});
  EXPECT_EQ(g.entries_read, 1);
  s.AdvanceGroup(g, {2, 0});
  EXPECT_EQ(g.entries_read, 2);
  EXPECT_EQ(s.Lag(g), 8);
  EXPECT_TRUE(s.Delete({5, 0}));
  EXPECT_TRUE(s.RangeHasTombstones({3, 0}, StreamId::Max()));
  EXPECT_EQ(s.Lag(g), std::nullopt);
  s.AdvanceGroup(g, {3, 0});
  EXPECT_EQ(g.entries_read, StreamGroup::kInvalidEntriesRead);
  s.AdvanceGroup(g, {10, 0});  // the last id: exact again
  EXPECT_EQ(g.entries_read, 10);
  EXPECT_EQ(s.Lag(g), 0);
  EXPECT_EQ(s.EstimateDistance({11, 0}), StreamGroup::kInvalidEntriesRead);
  EXPECT_EQ(s.LastLiveId(), (StreamId{10, 0}));
}

}  // namespace
}  // namespace lapse::engine
