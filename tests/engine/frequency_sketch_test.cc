// File: tests/engine/frequency_sketch_test.cc
//
// The read history that outlives keys (engine/frequency_sketch.h): its counts, its aging,
// that an estimate is never below the truth however crowded the sketch, and what it changes
// in the choice of a victim: a key created with no history starts on probation and is queued
// for the evictor; a key that was read before it was created starts as Redis's keys do. Time
// is a plain int64 set by hand.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/access.h"
#include "engine/db.h"
#include "engine/eviction.h"
#include "engine/frequency_sketch.h"
#include "engine/hash.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr size_t kRoomy = 1 << 20;          // bytes: a few keys never share all their counters
constexpr uint64_t kNoAging = 1ull << 62;   // a window never reached

uint64_t H(const std::string& key) { return HashKey(key); }

TEST(FrequencySketchTest, CountsEachKeyApartUpToFifteen) {
  FrequencySketch sketch;
  sketch.Resize(kRoomy, kNoAging);
  ASSERT_TRUE(sketch.enabled());
  EXPECT_EQ(sketch.bytes(), kRoomy);
  for (int i = 0; i < 3; ++i) sketch.Increment(H("a"));
  for (int i = 0; i < 7; ++i) sketch.Increment(H("b"));
  EXPECT_EQ(sketch.Estimate(H("a")), 3);
  EXPECT_EQ(sketch.Estimate(H("b")), 7);
  EXPECT_EQ(sketch.Estimate(H("never")), 0);
  for (int i = 0; i < 40; ++i) sketch.Increment(H("a"));
  EXPECT_EQ(sketch.Estimate(H("a")), FrequencySketch::kMaxCount);
  sketch.Clear();
  EXPECT_EQ(sketch.Estimate(H("a")), 0);
}

TEST(FrequencySketchTest, EstimateNeverBelowTheTruthWhenCrowded) {
  // One block of 128 counters for 500 keys: most counters are shared, and conservative
  // increments must still leave every key's smallest counter at or above its own count.
  FrequencySketch sketch;
  sketch.Resize(FrequencySketch::kBlockBytes, kNoAging);
  std::map<std::string, int> truth;
  uint64_t state = 12345;
  for (int i = 0; i < 4000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::string key = "k" + std::to_string((state >> 33) % 500);
    sketch.Increment(H(key));
    ++truth[key];
  }
  for (const auto& [key, n] : truth) {
    EXPECT_GE(sketch.Estimate(H(key)), std::min(n, int{FrequencySketch::kMaxCount})) << key;
  }
}

TEST(FrequencySketchTest, HalvesEveryCountOnceTheWindowIsFull) {
  FrequencySketch sketch;
  sketch.Resize(kRoomy, 20);
  for (int i = 0; i < 8; ++i) sketch.Increment(H("a"));
  for (int i = 0; i < 11; ++i) sketch.Increment(H("b"));
  EXPECT_EQ(sketch.Estimate(H("a")), 8);  // 19 increments: not yet
  sketch.Increment(H("b"));               // the 20th
  EXPECT_EQ(sketch.Estimate(H("a")), 4);
  EXPECT_EQ(sketch.Estimate(H("b")), 6);
  // What was halved counts as half towards the next window: 10 more increments halve again.
  for (int i = 0; i < 10; ++i) sketch.Increment(H("c" + std::to_string(i)));
  EXPECT_EQ(sketch.Estimate(H("a")), 2);
  EXPECT_EQ(sketch.Estimate(H("b")), 3);
}

TEST(FrequencySketchTest, OffUntilSized) {
  FrequencySketch sketch;
  EXPECT_FALSE(sketch.enabled());
  sketch.Increment(H("a"));
  EXPECT_EQ(sketch.Estimate(H("a")), 0);
  sketch.Resize(kRoomy, kNoAging);
  sketch.Resize(0, kNoAging);
  EXPECT_FALSE(sketch.enabled());
  EXPECT_EQ(sketch.bytes(), 0u);
}

TEST(ProbationQueueTest, GivesTheOldestFirstAndForgetsBeyondCapacity) {
  ProbationQueue queue;
  for (size_t i = 0; i < ProbationQueue::kCapacity + 2; ++i) queue.Push(static_cast<uint32_t>(i % 3), "k" + std::to_string(i));
  EXPECT_EQ(queue.size(), ProbationQueue::kCapacity);
  std::vector<std::string> taken;
  std::vector<uint32_t> dbs;
  queue.Take(2, [&](uint32_t db, std::string_view key) {
    taken.emplace_back(key);
    dbs.push_back(db);
  });
  EXPECT_EQ(taken, (std::vector<std::string>{"k2", "k3"}));  // k0 and k1 were forgotten
  EXPECT_EQ(dbs, (std::vector<uint32_t>{2, 0}));
  EXPECT_EQ(queue.size(), ProbationQueue::kCapacity - 2);
}

// A Db as a shard wires it under allkeys-lfu with a maxmemory: a sketch and a queue.
class ProbationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Access().lfu = true;
    sketch_.Resize(kRoomy, kNoAging);
    db_.SetFrequencySketch(&sketch_, &queue_);
  }
  void TearDown() override { Access().lfu = false; }
  std::vector<std::string> Queued() {
    std::vector<std::string> keys;
    queue_.Take(ProbationQueue::kCapacity, [&](uint32_t, std::string_view key) { keys.emplace_back(key); });
    return keys;
  }

  FrequencySketch sketch_;
  ProbationQueue queue_;
  Db db_{kStart};
};

TEST_F(ProbationTest, ANewKeyWithoutHistoryStartsOnProbationAndIsQueued) {
  db_.CountRead(H("scan"));  // the GET that missed, then the set-on-miss
  Entry* e = db_.Put("scan", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuProbationCount);
  EXPECT_EQ(Queued(), std::vector<std::string>{"scan"});
}

TEST_F(ProbationTest, AReturningKeyStartsAtTheInitialCountAndIsNotQueued) {
  for (int i = 0; i < 2; ++i) db_.CountRead(H("warm"));  // read before (then evicted), and now
  Entry* e = db_.Put("warm", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuInitialCount);
  EXPECT_TRUE(Queued().empty());
}

TEST_F(ProbationTest, AProbationerReadAgainClimbsAsAnyKey) {
  db_.CountRead(H("k"));
  Entry* e = db_.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  NoteAccess(e, kStart);  // below the initial count every read counts
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuProbationCount + 1);
}

TEST_F(ProbationTest, TheProbationerIsTheVictimAgainstAnEqualReturningKey) {
  int64_t now = kStart + 30'000;  // the injected clock: both keys created within one decay period
  for (int i = 0; i < 3; ++i) db_.CountRead(H("returning"));
  Entry* returning = db_.Put("returning", "v", ValueType::kString, kNoDeadline, kStart);
  db_.CountRead(H("newcomer"));
  Entry* newcomer = db_.Put("newcomer", "v", ValueType::kString, kNoDeadline, kStart + 1'000);
  EvictionPool pool;
  pool.Offer(VictimScore(EvictionPolicy::kAllKeysLfu, returning, now), 0, 0, "returning");
  pool.Offer(VictimScore(EvictionPolicy::kAllKeysLfu, newcomer, now), 0, 0, "newcomer");
  EXPECT_EQ(pool.TakeBest()->key, "newcomer");
  // Two decay periods later the returning key, never read, has decayed below the
  // probationer that was read since: the history decides only how a key starts.
  for (int i = 0; i < 5; ++i) NoteAccess(newcomer, now);  // 1 -> 6: certain below 6
  EXPECT_EQ(DecayedFrequency(newcomer, now), 6);
  now = kStart + 3 * 60'000;
  EXPECT_GT(VictimScore(EvictionPolicy::kAllKeysLfu, returning, now), VictimScore(EvictionPolicy::kAllKeysLfu, newcomer, now));
}

TEST_F(ProbationTest, WithoutASketchKeysStartAsInRedis) {
  Db plain(kStart);
  Entry* e = plain.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuInitialCount);
}

}  // namespace
}  // namespace lapse::engine
