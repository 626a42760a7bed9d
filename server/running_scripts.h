// File: server/running_scripts.h
//
// Scripts and functions that run too long, as Redis 7.0 handles them. Each event-loop thread
// has a slot for the script it runs. A script that has run longer than busy-reply-threshold
// (lua-time-limit) is marked busy by its Lua hook: from then on every other client's command
// answers BUSY, except the few Redis allows (AUTH, HELLO, MULTI, SCRIPT KILL, FUNCTION KILL,
// SHUTDOWN NOSAVE, ...), and a client waiting for a shard the script holds stops waiting and
// answers BUSY too (ShardSet::GiveUpWaitsWhenBusy). SCRIPT KILL (or FUNCTION KILL) stops a
// busy script that has not written: its hook raises Redis's error inside it at once.
//
// The script's own thread serves its other clients too: a busy script yields from its hook
// every so often (LuaEngine::Hook), where Lua 5.1 allows it, and is resumed after the thread
// has run what was waiting (RunWatched); inside pcall and xpcall too (lua_protected_calls.cc).
// Where it cannot yield (inside a metamethod, an iterator or a callback such as
// table.sort's), that thread's clients wait.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace lapse::server {

class RunningScripts {
 public:
  struct Slot {
    std::atomic<bool> running{false};
    std::atomic<bool> busy{false};
    std::atomic<bool> kill{false};
    std::atomic<bool> wrote{false};
    std::atomic<bool> is_function{false};
    std::atomic<int64_t> started_ms{0};
  };

  // Before any script runs: one slot per event-loop thread and one for any other thread.
  void Reserve(size_t slots) {
    slots_.resize(slots);
    for (auto& s : slots_) s = std::make_unique<Slot>();
  }

  // The calling thread's slot (`thread` its index, the last slot for any other thread).
  Slot& SlotOf(size_t thread) { return *slots_[std::min(thread, slots_.size() - 1)]; }
  Slot& Begin(size_t thread, bool is_function, int64_t now_ms) {
    Slot& slot = SlotOf(thread);
    slot.is_function.store(is_function, std::memory_order_relaxed);
    slot.started_ms.store(now_ms, std::memory_order_relaxed);
    slot.wrote.store(false, std::memory_order_relaxed);
    slot.kill.store(false, std::memory_order_relaxed);
    slot.running.store(true, std::memory_order_release);
    return slot;
  }
  void End(Slot& slot) {
    slot.running.store(false, std::memory_order_release);
    if (slot.busy.exchange(false)) busy_count_.fetch_sub(1);
  }
  // Called by the script's hook once it has run past the threshold.
  void MarkBusy(Slot& slot) {
    if (!slot.busy.exchange(true)) busy_count_.fetch_add(1);
  }

  // How many scripts are busy: read before every command, so one relaxed load.
  int busy_count() const { return busy_count_.load(std::memory_order_relaxed); }
  const std::atomic<int>* busy_counter() const { return &busy_count_; }

  // Whether a busy script is a function (BUSY then names FUNCTION KILL).
  bool BusyIsFunction() const {
    for (const auto& s : slots_) {
      if (s->busy.load() && s->is_function.load()) return true;
    }
    return false;
  }

  enum class KillResult { kNotBusy, kUnkillable, kOtherKind, kKilled };
  // SCRIPT KILL (functions false) or FUNCTION KILL (true): stops every busy script of that
  // kind that has not written.
  KillResult Kill(bool functions) {
    KillResult result = KillResult::kNotBusy;
    for (auto& s : slots_) {
      if (!s->busy.load()) continue;
      if (s->is_function.load() != functions) {
        if (result == KillResult::kNotBusy) result = KillResult::kOtherKind;
      } else if (s->wrote.load()) {
        if (result != KillResult::kKilled) result = KillResult::kUnkillable;
      } else {
        s->kill.store(true);
        result = KillResult::kKilled;
      }
    }
    return result;
  }

 private:
  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<int> busy_count_{0};
};

}  // namespace lapse::server
