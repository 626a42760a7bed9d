#include "server/client_pause.h"

#include <algorithm>

#include "server/client_session.h"

namespace lapse::server {

namespace {

// Commands Redis 7.0 flags may_replicate: they do not write here, but a replica would be sent
// something, so a WRITE pause holds them too.
bool MayReplicate(const CommandSpec& spec) {
  for (std::string_view name : {"eval", "evalsha", "fcall", "publish", "spublish", "pfcount"}) {
    if (spec.name == name) return true;
  }
  return false;
}

bool WritesOrReplicates(const CommandSpec& spec) { return (spec.flags & kWrite) || MayReplicate(spec); }

}  // namespace

namespace {
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::chrono::steady_clock::time_point FromNs(int64_t ns) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::nanoseconds(ns)));
}
}  // namespace

std::chrono::steady_clock::time_point ClientPause::Pause(int64_t ms, Mode mode) {
  std::lock_guard lock(mu_);
  int64_t now = NowNs();
  // A pause that ended by itself no longer counts toward the stricter mode.
  if (end_ns_.load() <= now) mode_.store(0);
  int64_t end = ms > (INT64_MAX - now) / 1000000 ? INT64_MAX : now + ms * 1000000;
  mode_.store(std::max(mode_.load(), static_cast<int>(mode)));
  end_ns_.store(std::max(end_ns_.load(), end));
  return FromNs(end_ns_.load());
}

void ClientPause::Unpause() {
  std::lock_guard lock(mu_);
  mode_.store(0);
  end_ns_.store(0);
  WakeAll();
}

ClientPause::Mode ClientPause::ActiveMode() const {
  int mode = mode_.load(std::memory_order_acquire);
  if (mode == 0) [[likely]] return Mode::kNone;
  if (end_ns_.load(std::memory_order_acquire) <= NowNs()) return Mode::kNone;
  return static_cast<Mode>(mode);
}

bool ClientPause::Holds(const CommandSpec& spec, const Transaction& multi) const {
  Mode mode = ActiveMode();
  if (mode == Mode::kNone) [[likely]] return false;
  if (mode == Mode::kAll) return true;
  if (WritesOrReplicates(spec)) return true;
  return spec.name == "exec" && std::any_of(multi.queued.begin(), multi.queued.end(), [](const Transaction::Queued& q) {
           return WritesOrReplicates(*q.spec);
         });
}

void ClientPause::WakeAll() {
  for (const std::weak_ptr<asio::steady_timer>& weak : waiters_) {
    std::shared_ptr<asio::steady_timer> timer = weak.lock();
    if (!timer) continue;
    asio::post(timer->get_executor(), [timer] { timer->cancel(); });
  }
  waiters_.clear();
}

awaitable<void> ClientPause::WaitWhileHeld(const CommandSpec& spec, const Transaction& multi) {
  auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
  while (Holds(spec, multi)) {
    {
      std::lock_guard lock(mu_);
      // Registered under the lock Unpause takes: an UNPAUSE either sees this waiter or has
      // already cleared the mode, which the loop then sees.
      if (mode_.load() == 0) break;
      timer->expires_at(FromNs(end_ns_.load()));
      waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                    [](const std::weak_ptr<asio::steady_timer>& w) { return w.expired(); }),
                     waiters_.end());
      waiters_.push_back(timer);
    }
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

}  // namespace lapse::server
