// File: engine/clock.h
//
// The engine never reads the system time itself: every operation takes `now_ms` from a
// Clock that the caller owns. Tests drive a ManualClock; the server runs a SystemClock whose
// offset DEBUG ADVANCE moves forward, so expiry is testable end to end without sleeping.
// DEBUG FREEZE-CLOCK stops a SystemClock so that a test can stand on one exact millisecond
// (a boundary check against a running clock is a race the test can only win by luck); when
// it is thawed it jumps to real time plus the offset, so it never runs backward.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace lapse::engine {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch. Safe to call from any thread.
  virtual int64_t NowMs() const = 0;
  // Moves this clock forward by `ms` (DEBUG ADVANCE). Never moves it backward.
  virtual void Advance(int64_t ms) = 0;
  // Stops (true) or restarts (false) the passing of real time. A ManualClock is always still.
  virtual void SetFrozen(bool) {}
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override {
    if (frozen_.load(std::memory_order_acquire)) return frozen_ms_.load(std::memory_order_relaxed);
    return RunningMs();
  }
  void Advance(int64_t ms) override {
    if (ms <= 0) return;
    offset_ms_.fetch_add(ms, std::memory_order_relaxed);
    frozen_ms_.fetch_add(ms, std::memory_order_relaxed);
  }
  void SetFrozen(bool frozen) override {
    if (frozen == frozen_.load(std::memory_order_relaxed)) return;
    if (frozen) frozen_ms_.store(RunningMs(), std::memory_order_relaxed);
    frozen_.store(frozen, std::memory_order_release);
  }

 private:
  int64_t RunningMs() const {
    auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() +
           offset_ms_.load(std::memory_order_relaxed);
  }

  std::atomic<int64_t> offset_ms_{0};
  std::atomic<bool> frozen_{false};
  std::atomic<int64_t> frozen_ms_{0};
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_.load(std::memory_order_relaxed); }
  void Advance(int64_t ms) override {
    if (ms > 0) now_ms_.fetch_add(ms, std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace lapse::engine
