// File: server/client_pause.h
//
// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as Redis 7.0 has them: while the server
// is paused, a client's command that the pause covers waits, unanswered, until the pause ends;
// it is never refused. ALL covers every command (CLIENT UNPAUSE from another client included,
// as in Redis); WRITE covers the commands that write or that Redis may replicate: EVAL,
// EVALSHA, FCALL, PUBLISH, SPUBLISH, PFCOUNT, and an EXEC whose queue holds one of them.
// Commands refused before they run (arity, NOAUTH, ...) are answered at once, as Redis checks
// the pause last. Background expiry stops meanwhile, since it deletes keys.
//
// The state is two atomics (mode and end), so the check on every command costs one load when
// nothing is paused. A waiting client sleeps on a timer of its own thread set for the pause's
// end; UNPAUSE wakes every waiter on its own thread (a timer is not thread-safe, so the
// cancel is posted). A later CLIENT PAUSE may extend the pause or make it stricter: waiters
// look again whenever they wake.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "server/asio.h"
#include "server/command_table.h"

namespace lapse::server {

struct Transaction;

class ClientPause {
 public:
  enum class Mode { kNone = 0, kWrite = 1, kAll = 2 };

  // Pauses for `ms` more milliseconds. Like Redis, an earlier pause is never shortened or
  // relaxed by a later one: the later end and the stricter mode win. Returns the pause's end.
  std::chrono::steady_clock::time_point Pause(int64_t ms, Mode mode);
  // Ends any pause now and wakes the clients that wait.
  void Unpause();
  // Whether `spec` (an EXEC: with the commands `multi` queued) must wait now.
  bool Holds(const CommandSpec& spec, const Transaction& multi) const;
  // Waits, on the calling coroutine's thread, until Holds is false.
  awaitable<void> WaitWhileHeld(const CommandSpec& spec, const Transaction& multi);

 private:
  using Clock = std::chrono::steady_clock;
  Mode ActiveMode() const;
  void WakeAll();

  std::atomic<int> mode_{0};
  std::atomic<int64_t> end_ns_{0};  // steady clock
  std::mutex mu_;  // guards waiters_ and keeps Pause and Unpause from interleaving
  std::vector<std::weak_ptr<asio::steady_timer>> waiters_;
};

}  // namespace lapse::server

namespace lapse::server {

// CLIENT PAUSE, UNPAUSE, REPLY and NO-EVICT (server/client_control_commands.cc): runs the
// subcommand and returns true, or returns false when args[1] is none of them.
bool RunClientControlSubcommand(ConnCommand& c);

}  // namespace lapse::server
