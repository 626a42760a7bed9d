// ShardSet's locking: every event-loop thread runs many coroutines that take atomic steps
// over random sets of shards, in random orders, mixed with single-shard work and fan-outs,
// while the threads' reclaim loops run too. No two pieces of work may ever be inside the
// same shard at once, and every step must end (a lock-order cycle would hang the test).
#include "server/shard_set.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include "engine/clock.h"
#include "engine/container.h"

namespace lapse::server {
namespace {

constexpr size_t kThreads = 4;
constexpr size_t kShards = 8;

class ShardSetTest : public ::testing::Test {
 protected:
  ShardSetTest() : shards_(kThreads, 1, clock_, catalog_, kShards) { shards_.Start(); }
  ~ShardSetTest() override { shards_.StopAndJoin(); }

  // Marks every shard in `ids` occupied for the duration of the call, and counts an overlap
  // when one of them already was.
  void Occupy(std::span<const uint32_t> ids) {
    for (uint32_t id : ids) {
      if (occupied_[id].exchange(true)) overlaps_.fetch_add(1);
    }
    // Gives any thread running alongside (which would be a bug) time to be caught.
    std::this_thread::yield();
    for (uint32_t id : ids) occupied_[id].store(false);
  }
  void OccupyOne(engine::Shard& shard) {
    uint32_t id = shard.id();
    Occupy(std::span(&id, 1));
  }

  // `steps` rounds, each an atomic step over a random set of shards (repeats included),
  // then a step on one shard, then a fan-out over a few; the coroutine lets its thread go
  // between rounds, as a connection does between batches.
  awaitable<void> Worker(size_t thread, int steps, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int i = 0; i < steps; ++i) {
      std::vector<uint32_t> ids;
      for (uint32_t id = 0; id < kShards; ++id) {
        if (rng() % 3 == 0) ids.push_back(id);
      }
      if (ids.empty() || rng() % 4 == 0) ids.push_back(static_cast<uint32_t>(rng() % kShards));
      std::shuffle(ids.begin(), ids.end(), rng);
      shards_.RunHolding(ids, [&] {
        std::vector<uint32_t> distinct = ids;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        Occupy(distinct);
      });
      atomic_steps_.fetch_add(1);
      shards_.WithShard(static_cast<uint32_t>(rng() % kShards), [&](engine::Shard& shard) { OccupyOne(shard); });
      uint32_t few[] = {static_cast<uint32_t>(rng() % kShards), static_cast<uint32_t>(rng() % kShards)};
      shards_.RunOn(few, [&](engine::Shard& shard) { OccupyOne(shard); });
      co_await asio::post(shards_.context(thread), use_awaitable);
    }
  }

  engine::ManualClock clock_;
  engine::ContainerCatalog catalog_;
  ShardSet shards_;
  std::array<std::atomic<bool>, kShards> occupied_{};
  std::atomic<int> overlaps_{0};
  std::atomic<int> atomic_steps_{0};
};

TEST_F(ShardSetTest, AtomicStepsExcludeAllOtherWorkOnTheirShardsAndAlwaysFinish) {
  constexpr int kWorkersPerThread = 3;
  constexpr int kSteps = 400;
  std::vector<std::future<void>> done;
  for (size_t thread = 0; thread < kThreads; ++thread) {
    for (int w = 0; w < kWorkersPerThread; ++w) {
      done.push_back(asio::co_spawn(shards_.context(thread),
                                    Worker(thread, kSteps, static_cast<uint32_t>(thread * 10 + w)), asio::use_future));
    }
  }
  for (auto& d : done) d.get();
  EXPECT_EQ(overlaps_.load(), 0);
  EXPECT_EQ(atomic_steps_.load(), static_cast<int>(kThreads) * kWorkersPerThread * kSteps);
}

TEST_F(ShardSetTest, RunAtomicCallsEachShardOnceInTheOrderGiven) {
  std::vector<uint32_t> seen;
  uint32_t ids[] = {2, 0, 3};
  shards_.RunAtomic(ids, [&](engine::Shard& shard) { seen.push_back(shard.id()); });
  EXPECT_EQ(seen, (std::vector<uint32_t>{2, 0, 3}));
}

TEST_F(ShardSetTest, WithShardReturnsWhatItsFunctionReturns) {
  EXPECT_EQ(shards_.WithShard(5, [](engine::Shard& shard) { return shard.id() * 10; }), 50u);
}

// A background walk holding a shard sees a client thread that waits for it, so it can let go
// after one step rather than a whole slice; the count drops back once the client got in.
TEST_F(ShardSetTest, ABackgroundHolderSeesThatAClientWaitsForItsShard) {
  std::atomic<bool> holding{false};
  uint32_t waiters_seen = 0;
  std::thread walker([&] {
    shards_.WithShardUntilWanted(3, [&](engine::Shard&, const std::atomic<uint32_t>& waiters) {
      holding.store(true);
      // A liveness bound only: the client below is already on its way to the shard.
      auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (waiters.load() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
      waiters_seen = waiters.load();
    });
  });
  while (!holding.load()) std::this_thread::yield();
  uint32_t id_seen = shards_.WithShard(3, [](engine::Shard& shard) { return shard.id(); });
  walker.join();
  EXPECT_EQ(id_seen, 3u);
  EXPECT_EQ(waiters_seen, 1u);
  uint32_t waiters_after = shards_.WithShardUntilWanted(
      3, [](engine::Shard&, const std::atomic<uint32_t>& waiters) { return waiters.load(); });
  EXPECT_EQ(waiters_after, 0u);
}

// A growable step (a script) takes free shards beyond its own and refuses a busy one with
// ShardBusy, never waiting for it while it holds others, written or not (its undo log takes
// writes back, server/script_undo.h). RequireAll takes the rest the same way, without
// counting as growth.
TEST_F(ShardSetTest, GrowableStepTakesFreeShardsAndRefusesBusyOnes) {
  std::promise<void> holding, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread other([&] {
    shards_.WithShard(1, [&](engine::Shard&) {
      holding.set_value();
      released.wait();
    });
  });
  holding.get_future().wait();
  {
    ShardSet::AtomicStep step(shards_, {4}, ShardSet::AtomicStep::Kind::kGrowable);
    step.WatchDeclared({4});
    step.Require(4);
    EXPECT_FALSE(step.grew());
    EXPECT_THROW(step.RequireAll(), ShardSet::ShardBusy);  // takes 0, then meets 1
    EXPECT_FALSE(step.grew());
    EXPECT_FALSE(step.HoldsAll());
    step.Require(6);  // free, above: taken
    EXPECT_TRUE(step.grew());
    EXPECT_THROW(step.Require(1), ShardSet::ShardBusy);
    EXPECT_THROW(step.Require(1), ShardSet::ShardBusy);  // as often as it is asked
    release.set_value();
    other.join();
    step.RequireAll();
    EXPECT_TRUE(step.HoldsAll());
  }
  // Everything the step took was given back.
  for (uint32_t id = 0; id < kShards; ++id) {
    std::atomic<bool> ran{false};
    std::thread([&] { shards_.WithShard(id, [&](engine::Shard&) { ran = true; }); }).join();
    EXPECT_TRUE(ran) << id;
  }
}

// A fixed step watching its declared shards notes a command outside them.
TEST_F(ShardSetTest, FixedStepNotesShardsOutsideTheDeclaredOnes) {
  ShardSet::AtomicStep step(shards_, {0, 1, 2, 3, 4, 5, 6, 7});
  step.WatchDeclared({2, 5});
  step.Require(5);
  EXPECT_FALSE(step.grew());
  step.Require(3);
  EXPECT_TRUE(step.grew());
}

TEST(ShardSetShape, DefaultsToSixteenShardsPerThreadAndSpreadsKeysOverAll) {
  engine::ManualClock clock;
  engine::ContainerCatalog catalog;
  ShardSet shards(3, 1, clock, catalog);
  EXPECT_EQ(shards.thread_count(), 3u);
  ASSERT_EQ(shards.size(), 3 * ShardSet::kShardsPerThread);
  std::vector<int> hits(shards.size(), 0);
  for (int i = 0; i < 20000; ++i) ++hits[shards.ShardFor("key:" + std::to_string(i))];
  for (int h : hits) EXPECT_GT(h, 0);
}

}  // namespace
}  // namespace lapse::server
