// ShardSet's atomic steps: many coroutines on every thread take holds over random sets of
// shards, in random orders, while each shard's own thread keeps running single-shard work.
// No two pieces of work may ever be inside the same shard at once, and every step must end
// (a lock-order cycle would hang the test).
#include "server/shard_set.h"

#include <gtest/gtest.h>

#include <array>
#include <future>
#include <random>
#include <thread>

#include "engine/clock.h"
#include "engine/container.h"

namespace lapse::server {
namespace {

constexpr size_t kThreads = 4;

class ShardSetTest : public ::testing::Test {
 protected:
  ShardSetTest() : shards_(kThreads, 1, clock_, catalog_) { shards_.Start(); }
  ~ShardSetTest() override { shards_.StopAndJoin(); }

  // Marks every shard in `ids` occupied for the duration of `work`, and counts an overlap
  // when one of them already was.
  void Occupy(std::span<const uint32_t> ids) {
    for (uint32_t id : ids) {
      if (occupied_[id].exchange(true)) overlaps_.fetch_add(1);
    }
    // Gives any thread running alongside (which would be a bug) time to be caught.
    std::this_thread::yield();
    for (uint32_t id : ids) occupied_[id].store(false);
  }

  // On thread `home`: `steps` rounds, each an atomic step over a random set of shards
  // followed by a step on one shard only.
  awaitable<void> Worker(size_t home, int steps, uint32_t seed) {
    asio::steady_timer waker(shards_.context(home));
    std::mt19937 rng(seed);
    for (int i = 0; i < steps; ++i) {
      std::vector<uint32_t> ids;
      for (uint32_t id = 0; id < kThreads; ++id) {
        if (rng() % 2) ids.push_back(id);
      }
      if (ids.empty()) ids.push_back(static_cast<uint32_t>(rng() % kThreads));
      std::shuffle(ids.begin(), ids.end(), rng);
      co_await shards_.RunHolding(home, ids, [&] { Occupy(ids); }, waker);
      atomic_steps_.fetch_add(1);
      uint32_t one[] = {static_cast<uint32_t>(rng() % kThreads)};
      co_await shards_.RunOn(home, one, [&](engine::Shard& shard) {
        uint32_t id = shard.id();
        Occupy(std::span(&id, 1));
      }, waker);
    }
  }

  engine::ManualClock clock_;
  engine::ContainerCatalog catalog_;
  ShardSet shards_;
  std::array<std::atomic<bool>, kThreads> occupied_{};
  std::atomic<int> overlaps_{0};
  std::atomic<int> atomic_steps_{0};
};

TEST_F(ShardSetTest, AtomicStepsExcludeAllOtherWorkOnTheirShardsAndAlwaysFinish) {
  constexpr int kWorkersPerThread = 3;
  constexpr int kSteps = 300;
  std::vector<std::future<void>> done;
  for (size_t home = 0; home < kThreads; ++home) {
    for (int w = 0; w < kWorkersPerThread; ++w) {
      done.push_back(asio::co_spawn(shards_.context(home), Worker(home, kSteps, static_cast<uint32_t>(home * 10 + w)),
                                    asio::use_future));
    }
  }
  for (auto& d : done) d.get();
  EXPECT_EQ(overlaps_.load(), 0);
  EXPECT_EQ(atomic_steps_.load(), static_cast<int>(kThreads) * kWorkersPerThread * kSteps);
}

TEST_F(ShardSetTest, RunAtomicCallsEachShardOnceInTheOrderGiven) {
  std::vector<uint32_t> seen;
  uint32_t ids[] = {2, 0, 3};
  auto done = asio::co_spawn(
      shards_.context(1),
      [&]() -> awaitable<void> {
        asio::steady_timer waker(shards_.context(1));
        co_await shards_.RunAtomic(1, ids, [&](engine::Shard& shard) { seen.push_back(shard.id()); }, waker);
      },
      asio::use_future);
  done.get();
  EXPECT_EQ(seen, (std::vector<uint32_t>{2, 0, 3}));
}

}  // namespace
}  // namespace lapse::server
