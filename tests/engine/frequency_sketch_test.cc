// File: tests/engine/frequency_sketch_test.cc
//
// The read history that outlives keys (engine/frequency_sketch.h): its counts, its aging,
// that an estimate is never below the truth however crowded the sketch, and what it changes
// in the choice of a victim: a key created with no history is queued on probation for the
// evictor, and among keys of one LFU counter the less read is the victim; every key's counter
// starts at Redis's 5 whatever its history. Time is a plain int64 set by hand.

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

TEST_F(ProbationTest, ANewKeyWithoutHistoryIsQueuedButStartsAtRedissCount) {
  db_.CountRead(H("scan"));  // the GET that missed, then the set-on-miss
  Entry* e = db_.Put("scan", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuInitialCount);  // OBJECT FREQ 5, as Redis
  EXPECT_EQ(Queued(), std::vector<std::string>{"scan"});
}

TEST_F(ProbationTest, AReturningKeyIsNotQueued) {
  for (int i = 0; i < 2; ++i) db_.CountRead(H("warm"));  // read before (then evicted), and now
  Entry* e = db_.Put("warm", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuInitialCount);
  EXPECT_TRUE(Queued().empty());
}

TEST_F(ProbationTest, AnOverwriteIsNoCreation) {
  db_.CountRead(H("k"));
  db_.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  Queued();
  db_.Put("k", "w", ValueType::kString, kNoDeadline, kStart);
  EXPECT_TRUE(Queued().empty());
}

// The admission decision of W-TinyLFU in Redis's terms: the write was made; which of the two
// goes first is the question.
TEST_F(ProbationTest, TheNewcomerIsTheVictimAgainstAReturningKeyOfTheSameCount) {
  int64_t now = kStart + 30'000;  // the injected clock: both keys created within one decay period
  for (int i = 0; i < 3; ++i) db_.CountRead(H("returning"));
  Entry* returning = db_.Put("returning", "v", ValueType::kString, kNoDeadline, kStart);
  db_.CountRead(H("newcomer"));
  Entry* newcomer = db_.Put("newcomer", "v", ValueType::kString, kNoDeadline, kStart + 1'000);
  EXPECT_EQ(DecayedFrequency(returning, now), DecayedFrequency(newcomer, now));
  EvictionPool pool;
  auto offer = [&](const char* key, const Entry* e) {
    pool.Offer(VictimScoreWithHistory(EvictionPolicy::kAllKeysLfu, e, sketch_.Estimate(H(key)), now), 0, 0, key);
  };
  offer("returning", returning);
  offer("newcomer", newcomer);
  EXPECT_EQ(pool.TakeBest()->key, "newcomer");
  EXPECT_EQ(pool.TakeBest()->key, "returning");
}

TEST_F(ProbationTest, TheCounterRanksFirstAndDecaysWithTheClock) {
  int64_t now = kStart + 30'000;
  db_.CountRead(H("newcomer"));
  Entry* newcomer = db_.Put("newcomer", "v", ValueType::kString, kNoDeadline, kStart);
  Entry* held = db_.Put("held", "v", ValueType::kString, kNoDeadline, kStart);
  NoteAccess(held, kStart);  // 5 -> 6: certain from the initial count
  auto score = [&](const char* key, const Entry* e, int64_t at) {
    return VictimScoreWithHistory(EvictionPolicy::kAllKeysLfu, e, sketch_.Estimate(H(key)), at);
  };
  // The held key has the smaller estimate (it was never counted) but the higher counter.
  EXPECT_LT(sketch_.Estimate(H("held")), sketch_.Estimate(H("newcomer")));
  EXPECT_GT(score("newcomer", newcomer, now), score("held", held, now));
  // Read a minute later (lfu-decay-time 1: a step a minute without access), the newcomer
  // climbs back to 6 and beyond while the held key, never read again, keeps decaying.
  int64_t read_at = kStart + 90'000;
  for (int i = 0; i < 5; ++i) NoteAccess(newcomer, read_at);  // 4 -> 5 -> 6, then maybe higher
  int64_t later = kStart + 180'000;
  EXPECT_GT(DecayedFrequency(newcomer, later), DecayedFrequency(held, later));
  EXPECT_GT(score("held", held, later), score("newcomer", newcomer, later));
}

TEST_F(ProbationTest, WithoutASketchKeysStartAsInRedis) {
  Db plain(kStart);
  Entry* e = plain.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuInitialCount);
}

}  // namespace
}  // namespace lapse::engine
