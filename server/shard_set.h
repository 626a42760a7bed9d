// File: server/shard_set.h
//
// Lock-striped shards. The keyspace is cut into many more shards than there are event-loop
// threads (kShardsPerThread each), every shard behind its own mutex. Any thread runs a
// command directly on the key's shard under that shard's lock: there is no hand-off to
// another thread, no wake-up and no reply merging on the hot path. With this many shards
// two threads rarely want the same one, so the lock is almost always free (one atomic
// exchange to take it, one to give it back).
//
// Why not thread-per-core: posting a request to the thread that owns its shard and waking
// the caller back was measured at about 4 us per request at pipeline 1 on 2 threads, more
// than Redis spends on the whole request (bench/RESULTS.md, "Issue 11", has the figures).
//
// Atomic steps (MSET, RENAME, FLUSHALL, MULTI/EXEC, scripts) lock every shard they touch
// in ascending index order, run, and unlock, and a step that locks a shard excludes every
// other command on it, as Redis's single thread does. A step on one shard is just that
// shard's lock.
//
// Lock order. A step takes its first shard by waiting for it and the others with try_lock;
// when one is busy it lets go of all it holds, waits for that one holding nothing, and
// starts again. So no thread waits for a shard while it holds another, and no thread holds
// a lock across a suspension: no cycle of waits can form. A growable step (a script that
// holds only its declared keys' shards) takes more with try_lock only, and starts over
// holding every shard when one is busy (AtomicStep).
//
// A step made of whole commands (EXEC, and later scripts) holds its shards through an
// AtomicStep: the commands it runs find their shards already held by their thread and take no
// lock. Such a step never suspends (YieldThread does nothing inside it), so no other client
// of the thread runs while it holds them.
//
// Background reclamation: thread t reclaims the shards t, t+T, t+2T, ... in slices of at
// most kSliceBudget under each shard's lock, resting between slices, so that a mass expiry
// neither holds a lock long enough to stall another thread nor takes the thread from its
// clients.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "engine/clock.h"
#include "engine/hash.h"
#include "engine/shard.h"
#include "server/asio.h"
#include "server/latency.h"

namespace lapse::server {

class ScriptUndo;

class ShardSet {
 public:
  // Shards per event-loop thread: enough that two threads rarely contend for one shard.
  static constexpr size_t kShardsPerThread = 16;

  // `shard_count` 0 means kShardsPerThread per thread.
  ShardSet(size_t threads, size_t databases, engine::Clock& clock, engine::ContainerCatalog& catalog,
           size_t shard_count = 0);
  ~ShardSet();

  size_t size() const { return slots_.size(); }
  size_t thread_count() const { return contexts_.size(); }
  asio::io_context& context(size_t thread) { return *contexts_[thread]; }
  // The shard itself: only while holding it (WithShard, RunOn, RunHolding, ...).
  engine::Shard& shard(size_t i) { return slots_[i]->shard; }
  uint32_t ShardFor(std::string_view key) const {
    return engine::ShardOf(engine::HashKey(key), static_cast<uint32_t>(slots_.size()));
  }
  // Items are spread by (container, id).
  uint32_t ShardForItem(std::string_view container, std::string_view id) const {
    return engine::ShardOf(engine::HashKey(id, engine::HashKey(container)), static_cast<uint32_t>(slots_.size()));
  }
  // The index of the calling event-loop thread, or -1 on any other thread.
  static int CurrentThreadIndex();

  // Starts threads 0..T-1 running their contexts and their reclaim loops.
  void Start();
  // Stops every context and joins the threads (from any thread but the pool's).
  void StopAndJoin();

  // Runs fn(shard) holding shard `id`, and returns what fn returns.
  template <typename Fn>
  decltype(auto) WithShard(uint32_t id, Fn&& fn) {
    Slot& slot = *slots_[id];
    if (tls_step_ != nullptr) [[unlikely]] {
      tls_step_->Require(id);
      return fn(slot.shard);
    }
    if (!slot.mu.try_lock()) [[unlikely]] Wait(slot);
    std::lock_guard lock(slot.mu, std::adopt_lock);
    ReleaseHookGuard hook;  // destroyed first: runs while the shard is still held
    return fn(slot.shard);
  }

  // For background walks that hold a shard for a slice at a time (BGSAVE, the AOF rewrite):
  // runs fn(shard, waiters) holding shard `id`, where `waiters` counts the threads waiting
  // for it meanwhile. fn should end its slice soon after it is above 0, so that a client's
  // command waits for a few entries of the walk rather than a whole slice.
  template <typename Fn>
  decltype(auto) WithShardUntilWanted(uint32_t id, Fn&& fn) {
    // Only the persistence and rewrite threads walk this way; an atomic step already holds
    // its shards, and locking one again would deadlock: stop at once instead.
    if (tls_step_ != nullptr) [[unlikely]] std::abort();
    Slot& slot = *slots_[id];
    if (!slot.mu.try_lock()) Wait(slot);
    std::lock_guard lock(slot.mu, std::adopt_lock);
    return fn(slot.shard, static_cast<const std::atomic<uint32_t>&>(slot.waiters));
  }

  // The append-only log (server/aof.h) must keep writes in the order the shards saw them. A
  // command that is logged once it has run arms this hook; it runs once, as the calling
  // thread next lets go of shards it locked (WithShard, RunHolding, an AtomicStep), while it
  // still holds them.
  using ReleaseHook = void (*)();
  static void ArmReleaseHook(ReleaseHook hook) { tls_release_hook_ = hook; }
  static void DisarmReleaseHook() { tls_release_hook_ = nullptr; }
  struct ReleaseHookGuard {
    ~ReleaseHookGuard() {
      if (tls_release_hook_ != nullptr) [[unlikely]] std::exchange(tls_release_hook_, nullptr)();
    }
  };

  // Thrown instead of waiting on for a shard that a busy script holds (see Wait). Nothing has
  // been changed when it is thrown.
  struct WaitAbandoned {};
  // While alive on a thread, the thread's waits for a shard give up (WaitAbandoned) as soon
  // as `*busy_scripts` is above 0: a client's command then answers BUSY instead of stalling
  // its thread behind a script that runs too long. Background work never gives up.
  class GiveUpWaitsWhenBusy {
   public:
    explicit GiveUpWaitsWhenBusy(const std::atomic<int>* busy_scripts) : previous_(tls_busy_scripts_) {
      tls_busy_scripts_ = busy_scripts;
    }
    ~GiveUpWaitsWhenBusy() { tls_busy_scripts_ = previous_; }
    GiveUpWaitsWhenBusy(const GiveUpWaitsWhenBusy&) = delete;
    GiveUpWaitsWhenBusy& operator=(const GiveUpWaitsWhenBusy&) = delete;

   private:
    const std::atomic<int>* previous_;
  };

  // Runs fn(shard) on every shard in `ids`, in that order, each holding only its own shard:
  // for work whose parts need not be seen together (KEYS, INFO, SCAN's next shard).
  template <typename Fn>
  void RunOn(std::span<const uint32_t> ids, Fn&& fn) {
    for (uint32_t id : ids) WithShard(id, fn);
  }
  template <typename Fn>
  void RunOnAll(Fn&& fn) {
    for (uint32_t id = 0; id < slots_.size(); ++id) WithShard(id, fn);
  }

  // Runs step() as one atomic step holding every shard in `ids` (in any order, repeats
  // allowed): no other command touches any of them meanwhile, and step may use shard(id).
  template <typename Step>
  void RunHolding(std::span<const uint32_t> ids, Step&& step) {
    if (tls_step_ != nullptr) [[unlikely]] {
      for (uint32_t id : ids) tls_step_->Require(id);
      step();
      return;
    }
    if (ids.size() == 1) {
      WithShard(ids[0], [&](engine::Shard&) { step(); });
      return;
    }
    LockSet held(*this, ids);
    step();
  }
  // RunHolding over every shard: for a step that changes what every shard caches (SWAPDB and
  // CMOVE re-key containers) together with state outside the shards.
  template <typename Step>
  void RunHoldingAll(Step&& step) {
    RunHolding(all_ids_, step);
  }
  // Runs fn(shard) for every shard in `ids`, in the order given, as one atomic step.
  template <typename Fn>
  void RunAtomic(std::span<const uint32_t> ids, Fn&& fn) {
    RunHolding(ids, [&] {
      for (uint32_t id : ids) fn(slots_[id]->shard);
    });
  }
  template <typename Fn>
  void RunAtomicOnAll(Fn&& fn) {
    RunAtomic(all_ids_, fn);
  }

  // Thrown by a growable step that cannot take a shard it was not given without waiting for
  // it while holding others (see AtomicStep). Nothing has been changed when it is thrown.
  struct ShardBusy {};

  // Holds the shards in `ids` (any order, repeats allowed) for its lifetime, as one atomic
  // step of the calling thread: every command the thread runs meanwhile uses them without
  // locking. Steps do not nest, and the thread must not suspend while one is alive.
  //
  // A fixed step (EXEC) knows its footprint; it can also watch whether its commands stay
  // within a declared part of it (a script's KEYS). A growable step (a script that has so
  // far kept to its KEYS) takes more shards as its commands need them, but only with
  // try_lock: when one is busy it throws ShardBusy, so that its caller can start over
  // holding every shard, first taking back what it wrote with the step's undo log
  // (server/script_undo.h).
  class AtomicStep {
   public:
    enum class Kind { kFixed, kGrowable };
    AtomicStep(ShardSet& set, std::vector<uint32_t> ids, Kind kind = Kind::kFixed);
    ~AtomicStep();
    AtomicStep(const AtomicStep&) = delete;
    AtomicStep& operator=(const AtomicStep&) = delete;
    // A command inside the step needs shard `id`. A fixed step should already hold it; if
    // not (a command whose keys the table does not describe), it is locked now, out of order,
    // and logged as the bug it is. A growable step takes it with try_lock or throws ShardBusy.
    void Require(uint32_t id);
    // A growable step takes every shard it lacks, as Require takes one (ShardBusy); that
    // does not count as growing (grew()).
    void RequireAll();
    bool HoldsAll() const { return ids_.size() == set_.size(); }
    // The undo log of a growable step (nullptr: none, or no longer needed).
    ScriptUndo* undo() const { return undo_; }
    void set_undo(ScriptUndo* undo) { undo_ = undo; }
    // Notes, from now on, whether a command needs a shard outside `declared`.
    void WatchDeclared(std::vector<uint32_t> declared);
    // Whether a command needed a shard outside the declared ones (or, unwatched, outside
    // those the step was given).
    bool grew() const { return grew_; }
    // Whether Require can do anything but find the shard held: a fixed step over every shard
    // that watches nothing (EXEC, a script known to stray) need not be told a footprint.
    bool NeedsFootprint() const { return kind_ == Kind::kGrowable || watching_; }

   private:
    ShardSet& set_;
    std::vector<uint32_t> ids_;       // sorted, unique
    std::vector<uint32_t> declared_;  // sorted, unique; used when watching_
    Kind kind_;
    bool watching_ = false;
    bool grew_ = false;
    ScriptUndo* undo_ = nullptr;
  };
  // The background expiry's figures (INFO stats), and CONFIG RESETSTAT's zeroing of them.
  uint64_t expire_cycle_ms() const { return expire_cycle_ns_.load(std::memory_order_relaxed) / 1'000'000; }
  uint64_t expire_time_cap_reached() const { return expire_time_cap_reached_.load(std::memory_order_relaxed); }
  void ResetExpireStats() {
    expire_cycle_ns_.store(0, std::memory_order_relaxed);
    expire_time_cap_reached_.store(0, std::memory_order_relaxed);
  }
  // True inside an AtomicStep of the calling thread.
  static bool InAtomicStep() { return tls_step_ != nullptr; }
  // The calling thread's step, or nullptr.
  static AtomicStep* CurrentStep() { return tls_step_; }
  // A suspended script keeps its step's shards but lets go of the thread: the thread's other
  // clients must not take themselves for part of the step meanwhile.
  static AtomicStep* DetachStep() { return std::exchange(tls_step_, nullptr); }
  static void AttachStep(AtomicStep* step) { tls_step_ = step; }

  // Decides, per expired item, whether background reclamation may delete it now (the
  // request-unit budget). Set before Start().
  using ItemAdmission = std::function<bool(const engine::Item&, int64_t now_ms)>;
  void set_item_admission(ItemAdmission admit) { admit_ = std::move(admit); }
  // Where background reclamation reports its slow slices (LATENCY); set before Start.
  void set_latency_monitor(LatencyMonitor* latency) { latency_ = latency; }
  // Serves the clients blocked on keys a reclaim slice deleted (engine::ReadyKeys), on the
  // slice's thread once it has let go of the shard: a group reader whose stream expired is
  // told at once, as Redis's active expiry tells it. Set before Start.
  void set_ready_keys_server(std::function<void()> serve) { serve_ready_keys_ = std::move(serve); }

  // Holding the db's shard: deletes keys of `db` due at or before now_ms for at most one
  // reclaim slice. True when none is left. Commands that need an exact count (DBSIZE) loop
  // on it, letting go of the shard between slices.
  static bool ReclaimDueForOneSlice(engine::Db& db, int64_t now_ms);

  // Pauses or resumes background reclamation on every shard (DEBUG SET-ACTIVE-EXPIRE).
  void set_active_expire(bool on) { active_expire_.store(on); }
  bool active_expire() const { return active_expire_.load(); }
  // CLIENT PAUSE WRITE|ALL: no background reclamation before `until`, since it deletes keys
  // (Redis pauses its expiry too). A time in the past lets it go on.
  void PauseReclaimUntil(std::chrono::steady_clock::time_point until) {
    reclaim_paused_until_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count());
  }

 private:
  // A shard and its lock, on cache lines of their own so that threads working on
  // neighbouring shards do not share a line.
  struct alignas(64) Slot {
    Slot(uint32_t id, size_t databases, int64_t now_ms, engine::ContainerCatalog& catalog)
        : shard(id, databases, now_ms, catalog) {}
    std::mutex mu;
    std::atomic<uint32_t> waiters{0};  // threads in Wait for mu (WithShardUntilWanted)
    engine::Shard shard;
  };

  // Locks every shard in `ids` (sorted, unique) without waiting for one while holding
  // another (see "Lock order").
  void LockAll(std::span<const uint32_t> ids);

  // Holds a set of shards for its lifetime, taken as LockAll takes them.
  class LockSet {
   public:
    LockSet(ShardSet& set, std::span<const uint32_t> ids);
    ~LockSet();
    LockSet(const LockSet&) = delete;
    LockSet& operator=(const LockSet&) = delete;

   private:
    ShardSet& set_;
    std::vector<uint32_t> ids_;
  };

  static inline constinit thread_local AtomicStep* tls_step_ = nullptr;
  static inline constinit thread_local ReleaseHook tls_release_hook_ = nullptr;
  static inline constinit thread_local const std::atomic<int>* tls_busy_scripts_ = nullptr;

  // Locks the slot, which was busy: spins a little, then polls, giving up when a busy script
  // makes this thread's command answer BUSY (GiveUpWaitsWhenBusy). Counted in its waiters
  // meanwhile.
  static void Wait(Slot& slot);

  awaitable<void> ReclaimLoop(size_t thread);
  // One reclaim slice on shard `id` under its lock; true while more is due.
  bool ReclaimShardSlice(uint32_t id);
  bool ReclaimPaused() const {
    int64_t until = reclaim_paused_until_ns_.load(std::memory_order_relaxed);
    return until != 0 && std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch()).count() < until;
  }

  engine::Clock& clock_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> threads_;
  std::vector<uint32_t> all_ids_;
  std::atomic<bool> active_expire_{true};
  // INFO's expire_cycle_cpu_milliseconds and expired_time_cap_reached_count: the time the
  // background slices spent deleting due keys, and how many slices ended on their time
  // budget with keys still due.
  std::atomic<uint64_t> expire_cycle_ns_{0};
  std::atomic<uint64_t> expire_time_cap_reached_{0};
  std::atomic<int64_t> reclaim_paused_until_ns_{0};  // steady clock
  std::atomic<bool> stopping_{false};
  ItemAdmission admit_ = [](const engine::Item&, int64_t) { return true; };
  LatencyMonitor* latency_ = nullptr;
  std::function<void()> serve_ready_keys_;
};

}  // namespace lapse::server
