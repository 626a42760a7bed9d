// File: tests/engine/watch_test.cc
//
// WATCH's engine half (engine/watch.h): which changes to a Db mark a watcher dirty, with
// Redis 7.0's rules for keys that were already expired when watched. Time is a plain int64.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "engine/db.h"
#include "engine/shard.h"
#include "engine/watch.h"

namespace lapse::engine {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

class WatchTest : public ::testing::Test {
 protected:
  void Put(std::string_view key, int64_t deadline = kNoDeadline) {
    db_.Put(key, "v", ValueType::kString, deadline, kNow);
  }
  // A key stored with a deadline that `later` is past.
  void PutExpiring(std::string_view key) { Put(key, kNow + 10); }
  static constexpr int64_t later = kNow + 100;

  Db db_{kNow};
  Watcher watcher_;
};

TEST_F(WatchTest, UnwatchedWritesLeaveTheWatcherClean) {
  db_.Watch("k", &watcher_, kNow);
  Put("other");
  db_.Erase("other", kNow);
  EXPECT_FALSE(watcher_.IsDirty());
}

TEST_F(WatchTest, EveryMutatorTouches) {
  db_.Watch("k", &watcher_, kNow);
  Put("k");
  EXPECT_TRUE(watcher_.IsDirty());

  watcher_.Reset();
  db_.SetDeadline(db_.Find("k", kNow), kNow + 1000, kNow);
  EXPECT_TRUE(watcher_.IsDirty());

  watcher_.Reset();
  db_.Erase("k", kNow);
  EXPECT_TRUE(watcher_.IsDirty());

  watcher_.Reset();
  Put("j");
  db_.Adopt(db_.Extract("j", kNow), kNow);  // MOVE/RENAME of another key: no change to k
  EXPECT_FALSE(watcher_.IsDirty());
}

TEST_F(WatchTest, RemovingADeadlineTheKeyLacksIsNoChange) {
  Put("k");
  db_.Watch("k", &watcher_, kNow);
  db_.SetDeadline(db_.Find("k", kNow), kNoDeadline, kNow);
  EXPECT_FALSE(watcher_.IsDirty());
  // Setting the same deadline again is a change, as in Redis (EXPIRE always touches).
  db_.SetDeadline(db_.Find("k", kNow), kNow + 1000, kNow);
  watcher_.Reset();
  db_.SetDeadline(db_.Find("k", kNow), kNow + 1000, kNow);
  EXPECT_TRUE(watcher_.IsDirty());
}

TEST_F(WatchTest, ExpiryAfterWatchIsAChange) {
  PutExpiring("k");
  db_.Watch("k", &watcher_, kNow);
  EXPECT_FALSE(db_.WatchedKeyExpired("k", &watcher_, kNow));
  EXPECT_TRUE(db_.WatchedKeyExpired("k", &watcher_, later));  // stored, past its deadline
  EXPECT_EQ(db_.Find("k", later), nullptr);                    // lazy deletion
  EXPECT_TRUE(watcher_.IsDirty());
}

TEST_F(WatchTest, BackgroundReclaimIsAChange) {
  PutExpiring("k");
  db_.Watch("k", &watcher_, kNow);
  while (db_.Reclaim(later, 1000)) {
  }
  EXPECT_TRUE(watcher_.IsDirty());
}

TEST_F(WatchTest, DeletingAKeyExpiredAtWatchIsNoChange) {
  PutExpiring("k");
  db_.Watch("k", &watcher_, later);  // already expired when watched
  EXPECT_FALSE(db_.WatchedKeyExpired("k", &watcher_, later));
  EXPECT_EQ(db_.Find("k", later), nullptr);
  EXPECT_FALSE(watcher_.IsDirty());
  // Once gone, the key is simply absent: creating it is a change.
  Put("k");
  EXPECT_TRUE(watcher_.IsDirty());
}

TEST_F(WatchTest, OverwritingAKeyExpiredAtWatchIsAChange) {
  PutExpiring("k");
  db_.Watch("k", &watcher_, later);
  db_.Put("k", "w", ValueType::kString, kNoDeadline, later);
  EXPECT_TRUE(watcher_.IsDirty());
}

TEST_F(WatchTest, FlushTouchesOnlyStoredKeys) {
  Watcher other;
  Put("k");
  db_.Watch("k", &watcher_, kNow);
  db_.Watch("missing", &other, kNow);
  db_.Clear();
  EXPECT_TRUE(watcher_.IsDirty());
  EXPECT_FALSE(other.IsDirty());
}

TEST_F(WatchTest, FlushOfAKeyExpiredAtWatchIsNoChange) {
  PutExpiring("k");
  db_.Watch("k", &watcher_, later);
  db_.TakeTable();
  EXPECT_FALSE(watcher_.IsDirty());
}

TEST_F(WatchTest, UnwatchStopsTouches) {
  db_.Watch("k", &watcher_, kNow);
  db_.Unwatch("k", &watcher_);
  EXPECT_EQ(db_.watched_keys(), 0u);
  Put("k");
  EXPECT_FALSE(watcher_.IsDirty());
}

TEST(ShardSwapTest, WatchesStayWithTheirDatabaseIndex) {
  ContainerCatalog catalog;
  Shard shard(0, 2, kNow, catalog);
  Watcher in_zero, in_one, neither;
  shard.db(1).Put("k", "v", ValueType::kString, kNoDeadline, kNow);
  shard.db(0).Watch("k", &in_zero, kNow);      // absent in 0, comes in from 1: a change
  shard.db(1).Watch("k", &in_one, kNow);       // present in 1, goes away: a change
  shard.db(0).Watch("none", &neither, kNow);   // absent in both: no change
  shard.SwapDbs(0, 1, kNow);
  EXPECT_TRUE(in_zero.IsDirty());
  EXPECT_TRUE(in_one.IsDirty());
  EXPECT_FALSE(neither.IsDirty());
  EXPECT_EQ(shard.db(0).watched_keys(), 2u);
  EXPECT_EQ(shard.db(1).watched_keys(), 1u);
  // After the swap, a write to db 0 reaches the watcher of db 0.
  in_zero.Reset();
  shard.db(0).Put("k", "w", ValueType::kString, kNoDeadline, kNow);
  EXPECT_TRUE(in_zero.IsDirty());
}

TEST(ShardSwapTest, MissingKeySwappedWithAnExpiredOneIsNoChange) {
  ContainerCatalog catalog;
  Shard shard(0, 2, kNow, catalog);
  Watcher watcher;
  shard.db(1).Put("k", "v", ValueType::kString, kNow + 10, kNow);
  shard.db(0).Watch("k", &watcher, kNow + 100);
  shard.SwapDbs(0, 1, kNow + 100);
  EXPECT_FALSE(watcher.IsDirty());
  // The expired key that came in is deleted when read: still no change.
  EXPECT_EQ(shard.db(0).Find("k", kNow + 100), nullptr);
  EXPECT_FALSE(watcher.IsDirty());
}

}  // namespace
}  // namespace lapse::engine
