#include "server/shard_set.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>

namespace lapse::server {

namespace {
thread_local int tls_thread_index = -1;

// A reclaim slice stops after this long so that clients on the same thread never wait
// longer than that behind background deletion.
constexpr auto kSliceBudget = std::chrono::microseconds(1000);
// In a backlog (a mass expiry) each slice is followed by a rest this many times as long, so
// that background deletion takes at most a third of its thread and client requests keep the
// rest (Redis caps its active expiry at 25% of the CPU for the same reason).
constexpr int kRestPerSlice = 2;
// Wheel records handled between clock checks inside a slice.
constexpr size_t kRecordsPerCheck = 256;
// How often an idle shard looks for due keys.
constexpr auto kIdleInterval = std::chrono::milliseconds(5);
constexpr size_t kIdleRehashBuckets = 1024;
// How often a parked thread checks whether the server is stopping (a hold posted to a
// context that stops never arrives).
constexpr auto kHoldStopPoll = std::chrono::milliseconds(10);
}  // namespace

// One atomic step across shards. Each participant's thread parks in ArriveAtHold; the last to
// arrive runs `step` and then lets the others go.
struct ShardSet::Hold {
  std::mutex mu;
  std::condition_variable released;
  size_t participants = 0;
  size_t arrived = 0;
  bool running = false;    // the step has started: no participant may leave before it ends
  bool done = false;
  bool abandoned = false;  // the server stopped before the step started: it never runs
  std::function<void()> step;
  std::function<void()> on_done;  // runs after the step, on the thread that ran it
};

ShardSet::ShardSet(size_t threads, size_t databases, engine::Clock& clock, engine::ContainerCatalog& catalog)
    : clock_(clock) {
  if (threads == 0) threads = 1;
  for (size_t i = 0; i < threads; ++i) {
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    shards_.push_back(std::make_unique<engine::Shard>(static_cast<uint32_t>(i), databases, clock.NowMs(), catalog));
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

awaitable<void> ShardSet::RunOn(size_t home, std::span<const uint32_t> ids, const std::function<void(engine::Shard&)>& fn,
                                asio::steady_timer& waker) {
  std::atomic<size_t> remaining{ids.size()};
  bool run_local = false;
  asio::io_context& home_ctx = *contexts_[home];
  for (uint32_t id : ids) {
    if (id == home) {
      run_local = true;
      continue;
    }
    asio::post(*contexts_[id], [this, id, &fn, &remaining, &home_ctx, &waker] {
      fn(*shards_[id]);
      // The last shard to finish wakes the caller; it is necessarily still waiting, because
      // the caller only stops waiting when woken.
      if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        asio::post(home_ctx, [&waker] { waker.cancel(); });
      }
    });
  }
  bool last = false;
  if (run_local) {
    fn(*shards_[home]);
    last = remaining.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  if (!last && !ids.empty() && !(run_local && ids.size() == 1)) {
    boost::system::error_code ec;
    waker.expires_at(asio::steady_timer::time_point::max());
    co_await waker.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

awaitable<void> ShardSet::RunOnAll(size_t home, const std::function<void(engine::Shard&)>& fn, asio::steady_timer& waker) {
  co_await RunOn(home, all_ids_, fn, waker);
}

awaitable<void> ShardSet::RunHolding(size_t home, std::span<const uint32_t> ids, const std::function<void()>& step,
                                     asio::steady_timer& waker) {
  if (ids.size() <= 1) {
    co_await RunOn(home, ids, [&step](engine::Shard&) { step(); }, waker);
    co_return;
  }
  co_await AcquireHoldLock(home, waker);
  auto hold = std::make_shared<Hold>();
  hold->participants = ids.size();
  hold->step = step;
  bool home_takes_part = std::find(ids.begin(), ids.end(), home) != ids.end();
  asio::io_context& home_ctx = *contexts_[home];
  if (!home_takes_part) hold->on_done = [&home_ctx, &waker] { asio::post(home_ctx, [&waker] { waker.cancel(); }); };
  for (uint32_t id : ids) {
    if (id != home) asio::post(*contexts_[id], [this, hold] { ArriveAtHold(*hold); });
  }
  if (home_takes_part) {
    ArriveAtHold(*hold);
    co_return;
  }
  boost::system::error_code ec;
  waker.expires_at(asio::steady_timer::time_point::max());
  co_await waker.async_wait(asio::redirect_error(use_awaitable, ec));
}

awaitable<void> ShardSet::RunAtomic(size_t home, std::span<const uint32_t> ids,
                                    const std::function<void(engine::Shard&)>& fn, asio::steady_timer& waker) {
  co_await RunHolding(
      home, ids,
      [this, ids, &fn] {
        for (uint32_t id : ids) fn(*shards_[id]);
      },
      waker);
}

awaitable<void> ShardSet::RunAtomicOnAll(size_t home, const std::function<void(engine::Shard&)>& fn,
                                         asio::steady_timer& waker) {
  co_await RunAtomic(home, all_ids_, fn, waker);
}

void ShardSet::ArriveAtHold(Hold& hold) {
  std::unique_lock lock(hold.mu);
  if (++hold.arrived == hold.participants) {
    if (hold.abandoned) return;
    hold.running = true;
    lock.unlock();
    hold.step();
    ReleaseHoldLock();
    if (hold.on_done) hold.on_done();
    lock.lock();
    hold.done = true;
    hold.released.notify_all();
    return;
  }
  while (!hold.done) {
    if (!hold.running && stopping_.load()) {
      hold.abandoned = true;
      return;
    }
    hold.released.wait_for(lock, kHoldStopPoll);
  }
}

awaitable<void> ShardSet::AcquireHoldLock(size_t home, asio::steady_timer& waker) {
  {
    std::lock_guard lock(hold_lock_mu_);
    if (!hold_lock_taken_) {
      hold_lock_taken_ = true;
      co_return;
    }
    hold_lock_waiters_.push_back({contexts_[home].get(), &waker});
  }
  // ReleaseHoldLock hands the lock over by waking us through our own context, which cannot
  // happen before this wait has started.
  boost::system::error_code ec;
  waker.expires_at(asio::steady_timer::time_point::max());
  co_await waker.async_wait(asio::redirect_error(use_awaitable, ec));
}

void ShardSet::ReleaseHoldLock() {
  std::lock_guard lock(hold_lock_mu_);
  if (hold_lock_waiters_.empty()) {
    hold_lock_taken_ = false;
    return;
  }
  HoldWaiter next = hold_lock_waiters_.front();
  hold_lock_waiters_.pop_front();
  asio::post(*next.context, [waker = next.waker] { waker->cancel(); });
}

bool ShardSet::ReclaimDueForOneSlice(engine::Db& db, int64_t now_ms) {
  auto slice_end = std::chrono::steady_clock::now() + kSliceBudget;
  bool more = false;
  do {
    more = db.Reclaim(now_ms, kRecordsPerCheck);
  } while (more && std::chrono::steady_clock::now() < slice_end);
  return !more;
}

awaitable<void> ShardSet::ReclaimLoop(size_t index) {
  asio::steady_timer timer(*contexts_[index]);
  engine::Shard& shard = *shards_[index];
  while (!stopping_.load(std::memory_order_relaxed)) {
    bool more = false;
    auto slice_start = std::chrono::steady_clock::now();
    if (active_expire_.load(std::memory_order_relaxed)) {
      auto slice_end = slice_start + kSliceBudget;
      do {
        int64_t now = clock_.NowMs();
        more = shard.ReclaimSlice(now, kRecordsPerCheck, [this, now](const engine::Item& item) { return admit_(item, now); });
      } while (more && std::chrono::steady_clock::now() < slice_end);
    }
    // Idle time also finishes resizes (a table shrinking after a mass expiry gives its memory
    // back without waiting for traffic); kIdleRehashBuckets costs well under 1 ms.
    if (!more) shard.RehashIdle(kIdleRehashBuckets);
    boost::system::error_code ec;
    timer.expires_after(more ? (std::chrono::steady_clock::now() - slice_start) * kRestPerSlice : kIdleInterval);
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

}  // namespace lapse::server
