#include "server/shard_set.h"

#include <chrono>

#include <spdlog/spdlog.h>

namespace lapse::server {

namespace {
thread_local int tls_thread_index = -1;

// A reclaim slice stops after this long. It runs under the shard's lock, so this is also the
// longest a command from another thread waits for a shard that is being reclaimed.
constexpr auto kSliceBudget = std::chrono::microseconds(250);
// In a backlog (a mass expiry) each slice is followed by a rest this many times as long, so
// that background deletion takes at most a third of its thread and client requests keep the
// rest (Redis caps its active expiry at 25% of the CPU for the same reason).
constexpr int kRestPerSlice = 2;
// Wheel records handled between clock checks inside a slice.
constexpr size_t kRecordsPerCheck = 64;
// How often a thread looks for due keys in its shards when none had any last time.
constexpr auto kIdleInterval = std::chrono::milliseconds(5);
constexpr size_t kIdleRehashBuckets = 256;
}  // namespace

ShardSet::ShardSet(size_t threads, size_t databases, engine::Clock& clock, engine::ContainerCatalog& catalog,
                   size_t shard_count)
    : clock_(clock) {
  if (threads == 0) threads = 1;
  if (shard_count == 0) shard_count = threads * kShardsPerThread;
  for (size_t i = 0; i < threads; ++i) contexts_.push_back(std::make_unique<asio::io_context>(1));
  for (size_t i = 0; i < shard_count; ++i) {
    slots_.push_back(std::make_unique<Slot>(static_cast<uint32_t>(i), databases, clock.NowMs(), catalog));
    all_ids_.push_back(static_cast<uint32_t>(i));
  }
}

ShardSet::~ShardSet() { StopAndJoin(); }

int ShardSet::CurrentThreadIndex() { return tls_thread_index; }

void ShardSet::Start() {
  for (size_t i = 0; i < contexts_.size(); ++i) {
    asio::co_spawn(*contexts_[i], ReclaimLoop(i), asio::detached);
    threads_.emplace_back([this, i] {
      tls_thread_index = static_cast<int>(i);
      auto guard = asio::make_work_guard(*contexts_[i]);
      contexts_[i]->run();
    });
  }
}

void ShardSet::StopAndJoin() {
  stopping_.store(true);
  for (auto& ctx : contexts_) ctx->stop();
  for (auto& t : threads_) {
    if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  }
  threads_.clear();
}

ShardSet::LockSet::LockSet(ShardSet& set, std::span<const uint32_t> ids) : set_(set), ids_(ids.begin(), ids.end()) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
  set_.LockAll(ids_);
}

ShardSet::LockSet::~LockSet() {
  { ReleaseHookGuard hook; }
  for (auto it = ids_.rbegin(); it != ids_.rend(); ++it) set_.slots_[*it]->mu.unlock();
}

ShardSet::AtomicStep::AtomicStep(ShardSet& set, std::vector<uint32_t> ids, Kind kind)
    : set_(set), ids_(std::move(ids)), kind_(kind) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
  set_.LockAll(ids_);
  tls_step_ = this;
}

ShardSet::AtomicStep::~AtomicStep() {
  tls_step_ = nullptr;
  { ReleaseHookGuard hook; }
  for (auto it = ids_.rbegin(); it != ids_.rend(); ++it) set_.slots_[*it]->mu.unlock();
}

void ShardSet::AtomicStep::WatchDeclared(std::vector<uint32_t> declared) {
  std::sort(declared.begin(), declared.end());
  declared.erase(std::unique(declared.begin(), declared.end()), declared.end());
  declared_ = std::move(declared);
  watching_ = true;
}

void ShardSet::AtomicStep::Require(uint32_t id) {
  if (watching_ && !std::binary_search(declared_.begin(), declared_.end(), id)) grew_ = true;
  auto at = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (at != ids_.end() && *at == id) return;
  std::mutex& mu = set_.slots_[id]->mu;
  if (kind_ == Kind::kFixed) {
    spdlog::error("atomic step needed shard {} outside its footprint; locking it out of order", id);
    mu.lock();
  } else if (!mu.try_lock()) {
    throw ShardBusy{};
  }
  grew_ = true;
  ids_.insert(at, id);
}

void ShardSet::AtomicStep::RequireAll() {
  // Taking every shard is the step's choice, not its commands' keys straying from KEYS.
  bool grew = grew_;
  try {
    for (uint32_t id = 0; id < set_.size() && !HoldsAll(); ++id) Require(id);
  } catch (const ShardBusy&) {
    grew_ = grew;
    throw;
  }
  grew_ = grew;
}

void ShardSet::Wait(Slot& slot) {
  slot.waiters.fetch_add(1, std::memory_order_relaxed);
  struct Counted {
    std::atomic<uint32_t>& waiters;
    ~Counted() { waiters.fetch_sub(1, std::memory_order_relaxed); }
  } counted{slot.waiters};
  std::mutex& mu = slot.mu;
  for (int round = 0;; ++round) {
    if (mu.try_lock()) return;
    if (tls_busy_scripts_ != nullptr && tls_busy_scripts_->load(std::memory_order_relaxed) > 0) throw WaitAbandoned{};
    if (round < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void ShardSet::LockAll(std::span<const uint32_t> ids) {
  if (ids.empty()) return;
  size_t busy = 0;  // the shard to wait for, holding nothing
  while (true) {
    Slot& first = *slots_[ids[busy]];
    if (!first.mu.try_lock()) Wait(first);
    size_t i = 0;
    for (; i < ids.size(); ++i) {
      if (i == busy) continue;
      if (!slots_[ids[i]]->mu.try_lock()) break;
    }
    if (i == ids.size()) return;
    for (size_t j = 0; j < i; ++j) {
      if (j != busy) slots_[ids[j]]->mu.unlock();
    }
    slots_[ids[busy]]->mu.unlock();
    busy = i;
  }
}

bool ShardSet::ReclaimDueForOneSlice(engine::Db& db, int64_t now_ms) {
  auto slice_end = std::chrono::steady_clock::now() + kSliceBudget;
  bool more = false;
  do {
    more = db.Reclaim(now_ms, kRecordsPerCheck);
  } while (more && std::chrono::steady_clock::now() < slice_end);
  return !more;
}

bool ShardSet::ReclaimShardSlice(uint32_t id) {
  // Background work never waits for a shard: a busy one (a long script holds it) is left for
  // the next round.
  Slot& slot = *slots_[id];
  if (!slot.mu.try_lock()) return false;
  std::lock_guard lock(slot.mu, std::adopt_lock);
  return [this](engine::Shard& shard) {
    bool more = false;
    if (active_expire_.load(std::memory_order_relaxed) && !ReclaimPaused()) {
      using std::chrono::steady_clock;
      auto slice_end = steady_clock::now() + kSliceBudget;
      steady_clock::duration items_time{}, keys_time{};
      do {
        int64_t now = clock_.NowMs();
        auto start = steady_clock::now();
        bool items_more =
            shard.ReclaimItemsSlice(now, kRecordsPerCheck, [this, now](const engine::Item& item) { return admit_(item, now); });
        auto items_done = steady_clock::now();
        bool keys_more = shard.ReclaimKeysSlice(now, kRecordsPerCheck);
        items_time += items_done - start;
        keys_time += steady_clock::now() - items_done;
        more = items_more || keys_more;
      } while (more && steady_clock::now() < slice_end);
      expire_cycle_ns_.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(keys_time).count()),
                                 std::memory_order_relaxed);
      if (more) expire_time_cap_reached_.fetch_add(1, std::memory_order_relaxed);
      if (latency_ != nullptr) {
        auto ms = [](steady_clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
        latency_->AddSampleIfNeeded("expire-cycle", ms(keys_time));
        latency_->AddSampleIfNeeded("item-reclaim-cycle", ms(items_time));
      }
    }
    // Idle time also finishes resizes (a table shrinking after a mass expiry gives its memory
    // back without waiting for traffic); kIdleRehashBuckets costs well under a slice.
    if (!more) shard.RehashIdle(kIdleRehashBuckets);
    return more;
  }(slot.shard);
}

awaitable<void> ShardSet::ReclaimLoop(size_t thread) {
  asio::steady_timer timer(*contexts_[thread]);
  std::vector<uint32_t> owned;
  for (size_t id = thread; id < slots_.size(); id += contexts_.size()) owned.push_back(static_cast<uint32_t>(id));
  boost::system::error_code ec;
  while (!stopping_.load(std::memory_order_relaxed)) {
    bool any_due = false;
    for (uint32_t id : owned) {
      auto slice_start = std::chrono::steady_clock::now();
      bool due = ReclaimShardSlice(id);
      if (!engine::ReadyKeys().empty() && serve_ready_keys_) [[unlikely]] serve_ready_keys_();
      if (!due) continue;
      any_due = true;
      // The thread's clients get twice the slice before the next one.
      timer.expires_after((std::chrono::steady_clock::now() - slice_start) * kRestPerSlice);
      co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
      if (stopping_.load(std::memory_order_relaxed)) co_return;
    }
    if (any_due) continue;
    timer.expires_after(kIdleInterval);
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

}  // namespace lapse::server
