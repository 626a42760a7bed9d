// File: tests/engine/eviction_test.cc
//
// What eviction ranks keys by (engine/access.h, engine/eviction.h) and the Db's part in it
// (SampleLive, Evict). Time is a plain int64 set by hand; the LFU counter's random increment
// is only asserted where its probability is 1 (a counter at or below its initial value).

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/access.h"
#include "engine/db.h"
#include "engine/eviction.h"
#include "engine/key_events.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;

// Restores the process-wide access settings after each test.
class EvictionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    Access().lfu = false;
    Access().lfu_log_factor = 10;
    Access().lfu_decay_minutes = 1;
  }
};

TEST_F(EvictionTest, PolicyNamesRoundTripInAnyCase) {
  for (std::string name : {"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
                           "volatile-lfu", "volatile-random", "volatile-ttl"}) {
    std::optional<EvictionPolicy> p = ParseEvictionPolicy(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(EvictionPolicyName(*p), name);
  }
  EXPECT_EQ(ParseEvictionPolicy("ALLKEYS-LRU"), EvictionPolicy::kAllKeysLru);
  EXPECT_FALSE(ParseEvictionPolicy("allkeys").has_value());
  EXPECT_FALSE(ParseEvictionPolicy("").has_value());
  EXPECT_TRUE(EvictsVolatileOnly(EvictionPolicy::kVolatileTtl));
  EXPECT_FALSE(EvictsVolatileOnly(EvictionPolicy::kAllKeysLfu));
  EXPECT_TRUE(TracksFrequency(EvictionPolicy::kVolatileLfu));
  EXPECT_TRUE(EvictsAtRandom(EvictionPolicy::kAllKeysRandom));
}

TEST_F(EvictionTest, LruIdleTimeCountsSecondsAndSurvivesTheOld16BitWrap) {
  Db db(kStart);
  Entry* e = db.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(IdleMs(e, kStart), 0u);
  EXPECT_EQ(IdleMs(e, kStart + 2'500), 2'000u);
  // 20 hours: past the 2^16 seconds a 16-bit stamp held.
  EXPECT_EQ(IdleMs(e, kStart + 72'000'000), 72'000'000u);
  NoteAccess(e, kStart + 72'000'000);
  EXPECT_EQ(IdleMs(e, kStart + 72'000'000), 0u);
}

TEST_F(EvictionTest, LfuCounterStartsAtFiveAndDecaysPerPeriod) {
  Access().lfu = true;
  Db db(kStart);
  Entry* e = db.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), kLfuInitialCount);
  NoteAccess(e, kStart);  // at the initial count the increment is certain
  EXPECT_EQ(DecayedFrequency(e, kStart), 6);
  EXPECT_EQ(DecayedFrequency(e, kStart + 3 * 60'000), 3);  // one per minute (lfu-decay-time 1)
  EXPECT_EQ(DecayedFrequency(e, kStart + 60 * 60'000), 0);
  Access().lfu_decay_minutes = 0;  // 0: never decays
  EXPECT_EQ(DecayedFrequency(e, kStart + 60 * 60'000), 6);
}

TEST_F(EvictionTest, LfuIncrementGetsRarerAsTheCounterGrows) {
  Access().lfu = true;
  Access().lfu_decay_minutes = 0;
  Db db(kStart);
  Entry* e = db.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  for (int i = 0; i < 1000; ++i) NoteAccess(e, kStart);
  uint8_t count = DecayedFrequency(e, kStart);
  // 1,000 hits with lfu-log-factor 10 reach about 18 in Redis's table; far from 255.
  EXPECT_GT(count, 10);
  EXPECT_LT(count, 40);
}

TEST_F(EvictionTest, OverwriteKeepsFrequencyUnderLfuAndRestampsUnderLru) {
  Access().lfu = true;
  Db db(kStart);
  Entry* e = db.Put("k", "v", ValueType::kString, kNoDeadline, kStart);
  NoteAccess(e, kStart);
  e = db.Put("k", std::string(100, 'x'), ValueType::kString, kNoDeadline, kStart);
  EXPECT_EQ(DecayedFrequency(e, kStart), 6);
  Access().lfu = false;
  e = db.Put("k", "w", ValueType::kString, kNoDeadline, kStart + 9'000);
  EXPECT_EQ(IdleMs(e, kStart + 9'000), 0u);
}

TEST_F(EvictionTest, ScoresRankTheBetterVictimHigher) {
  Db db(kStart);
  Entry* old_key = db.Put("old", "v", ValueType::kString, kStart + 5'000, kStart);
  Entry* new_key = db.Put("new", "v", ValueType::kString, kStart + 9'000, kStart + 4'000);
  int64_t now = kStart + 4'000;
  EXPECT_GT(VictimScore(EvictionPolicy::kAllKeysLru, old_key, now), VictimScore(EvictionPolicy::kAllKeysLru, new_key, now));
  // volatile-ttl: the nearer deadline is the better victim.
  EXPECT_GT(VictimScore(EvictionPolicy::kVolatileTtl, old_key, now), VictimScore(EvictionPolicy::kVolatileTtl, new_key, now));
  Access().lfu = true;
  NoteAccess(new_key, now);
  EXPECT_GT(VictimScore(EvictionPolicy::kAllKeysLfu, old_key, now), VictimScore(EvictionPolicy::kAllKeysLfu, new_key, now));
}

TEST_F(EvictionTest, PoolKeepsTheBestAndUpdatesAKeyInPlace) {
  EvictionPool pool;
  for (uint64_t i = 0; i < 40; ++i) pool.Offer(i, 0, 0, "k" + std::to_string(i));
  EXPECT_EQ(pool.size(), EvictionPool::kSize);
  pool.Offer(1, 0, 0, "low");  // worse than every kept one
  pool.Offer(100, 0, 0, "k30");  // already there: its score is brought up to date
  EXPECT_EQ(pool.size(), EvictionPool::kSize);
  std::optional<EvictionCandidate> best = pool.TakeBest();
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->key, "k30");
  EXPECT_EQ(pool.TakeBest()->key, "k39");
  // The same name in another database is another key.
  pool.Offer(1000, 0, 3, "k38");
  EXPECT_EQ(pool.TakeBest()->db, 3u);
  EXPECT_EQ(pool.TakeBest()->key, "k38");
  pool.Clear();
  EXPECT_TRUE(pool.empty());
  EXPECT_FALSE(pool.TakeBest().has_value());
}

TEST_F(EvictionTest, SampleLiveSkipsExpiredAndPersistentWhenVolatileOnly) {
  Db db(kStart);
  for (int i = 0; i < 200; ++i) db.Put("p" + std::to_string(i), "v", ValueType::kString, kNoDeadline, kStart);
  db.Put("gone", "v", ValueType::kString, kStart + 10, kStart);
  db.Put("vol", "v", ValueType::kString, kStart + 100'000, kStart);
  uint64_t seed = 7;
  std::set<std::string> seen;
  for (int round = 0; round < 20; ++round) {
    db.SampleLive(&seed, 5, true, kStart + 1'000, [&](const Entry* e) { seen.insert(std::string(e->key())); });
  }
  EXPECT_EQ(seen, std::set<std::string>{"vol"});
  size_t all = 0;
  db.SampleLive(&seed, 5, false, kStart + 1'000, [&](const Entry* e) {
    EXPECT_NE(e->key(), "gone");
    ++all;
  });
  EXPECT_GT(all, 0u);
  EXPECT_LE(all, 5u);
}

struct EvictionListener : KeyEventListener {
  std::vector<std::string> evicted;
  void KeyExpired(uint32_t, std::string_view) override {}
  void FieldsExpired(uint32_t, std::string_view) override {}
  void KeyEvicted(uint32_t, std::string_view key) override { evicted.emplace_back(key); }
  void KeyCreated(uint32_t, std::string_view) override {}
  void KeyMissed(uint32_t, std::string_view) override {}
  void ItemExpired(uint32_t, std::string_view, std::string_view) override {}
  void ItemEvicted(uint32_t, std::string_view, std::string_view) override {}
};

TEST_F(EvictionTest, EvictDeletesALiveKeyReportsItAndCountsItsBytes) {
  Db db(kStart);
  EvictionListener listener;
  db.SetKeyEventListener(&listener);
  db.Put("big", std::string(1000, 'x'), ValueType::kString, kNoDeadline, kStart);
  db.Put("soon", "v", ValueType::kString, kStart + 10, kStart);
  size_t freed = db.Evict("big", kStart);
  EXPECT_GE(freed, 1000u);
  EXPECT_EQ(db.Find("big", kStart), nullptr);
  EXPECT_EQ(db.Evict("big", kStart), 0u);   // absent
  EXPECT_EQ(db.Evict("soon", kStart + 10), 0u);  // expired: not an eviction
  EXPECT_EQ(listener.evicted, std::vector<std::string>{"big"});
}

}  // namespace
}  // namespace lapse::engine
