// File: server/shard_set.h
//
// Thread-per-core: N threads, each running its own io_context and owning one engine Shard.
// A key belongs to shard ShardOf(hash(key)); only that shard's thread touches it. Work for a
// shard is posted to its io_context as a closure, and the caller's coroutine is resumed on
// its own thread once every addressed shard has run its closure.
//
// Lifetimes: RunOn keeps `fn` and everything it references alive by suspending the calling
// coroutine until the last shard is done, so closures may capture the caller's locals by
// reference. Each shard writes only its own result slot, and the hand-back through the
// io_context orders those writes before the caller reads them.
//
// Atomic steps across shards (MSET, MSETNX, RENAME, MGET ... whose keys live on several
// shards) use RunAtomic: a hold is posted to every shard involved, each thread parks on
// arrival, and the last to arrive runs the whole step with the others parked, so no other
// command sees any of those shards half-way, as with Redis's single thread. Holds are taken
// one step at a time server-wide (an asynchronous FIFO lock that waits without blocking a
// thread), so two steps can never park each other's threads in a cycle. A step on a single
// shard needs no hold: that shard's thread already runs one closure at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "engine/clock.h"
#include "engine/hash.h"
#include "engine/shard.h"
#include "server/asio.h"

namespace lapse::server {

class ShardSet {
 public:
  ShardSet(size_t threads, size_t databases, engine::Clock& clock, engine::ContainerCatalog& catalog);
  ~ShardSet();

  size_t size() const { return shards_.size(); }
  asio::io_context& context(size_t i) { return *contexts_[i]; }
  // Only the owning thread may use the shard, or a RunAtomic step holding it.
  engine::Shard& shard(size_t i) { return *shards_[i]; }
  uint32_t ShardFor(std::string_view key) const {
    return engine::ShardOf(engine::HashKey(key), static_cast<uint32_t>(shards_.size()));
  }
  // Items are spread by (container, id).
  uint32_t ShardForItem(std::string_view container, std::string_view id) const {
    return engine::ShardOf(engine::HashKey(id, engine::HashKey(container)), static_cast<uint32_t>(shards_.size()));
  }
  // The index of the calling thread's shard, or -1 on a foreign thread.
  static int CurrentThreadIndex();

  // Starts threads 0..N-1 running their contexts.
  void Start();
  // Stops every context and joins the threads (from any thread but the pool's).
  void StopAndJoin();

  // Runs fn(shard) on every shard listed in `ids` (on its own thread; the caller's own shard
  // inline) and resumes the caller on `home` when all are done. `waker` is a timer of the
  // caller's context reused across calls.
  awaitable<void> RunOn(size_t home, std::span<const uint32_t> ids, const std::function<void(engine::Shard&)>& fn,
                        asio::steady_timer& waker);
  // The same for every shard.
  awaitable<void> RunOnAll(size_t home, const std::function<void(engine::Shard&)>& fn, asio::steady_timer& waker);

  // Runs step() as one atomic step over the shards in `ids`: while it runs, no other command
  // touches any of them, and step may use shard(id) for each. It runs on one of the threads
  // involved (or the caller's).
  awaitable<void> RunHolding(size_t home, std::span<const uint32_t> ids, const std::function<void()>& step,
                             asio::steady_timer& waker);
  // Runs fn(shard) for every shard in `ids`, one after another, as one atomic step.
  awaitable<void> RunAtomic(size_t home, std::span<const uint32_t> ids, const std::function<void(engine::Shard&)>& fn,
                            asio::steady_timer& waker);
  awaitable<void> RunAtomicOnAll(size_t home, const std::function<void(engine::Shard&)>& fn, asio::steady_timer& waker);

  // Decides, per expired item, whether background reclamation may delete it now (the
  // request-unit budget). Set before Start().
  using ItemAdmission = std::function<bool(const engine::Item&, int64_t now_ms)>;
  void set_item_admission(ItemAdmission admit) { admit_ = std::move(admit); }

  // On the shard's thread: deletes keys of `db` due at or before now_ms for at most one
  // reclaim slice. True when none is left. Commands that need an exact count (DBSIZE) loop on
  // it, letting other clients of the shard in between slices.
  static bool ReclaimDueForOneSlice(engine::Db& db, int64_t now_ms);

  // Pauses or resumes background reclamation on every shard (DEBUG SET-ACTIVE-EXPIRE).
  void set_active_expire(bool on) { active_expire_.store(on); }
  bool active_expire() const { return active_expire_.load(); }

 private:
  struct Hold;
  awaitable<void> ReclaimLoop(size_t index);
  // The server-wide FIFO lock that lets one atomic step at a time post holds.
  awaitable<void> AcquireHoldLock(size_t home, asio::steady_timer& waker);
  void ReleaseHoldLock();
  // A participant of `hold` has reached it on its own thread: parks until the step is done,
  // or runs the step when it is the last to arrive.
  void ArriveAtHold(Hold& hold);

  engine::Clock& clock_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<std::unique_ptr<engine::Shard>> shards_;
  std::vector<std::thread> threads_;
  std::vector<uint32_t> all_ids_;
  std::atomic<bool> active_expire_{true};
  std::atomic<bool> stopping_{false};
  ItemAdmission admit_ = [](const engine::Item&, int64_t) { return true; };

  struct HoldWaiter {
    asio::io_context* context;
    asio::steady_timer* waker;
  };
  std::mutex hold_lock_mu_;
  bool hold_lock_taken_ = false;
  std::deque<HoldWaiter> hold_lock_waiters_;
};

}  // namespace lapse::server
