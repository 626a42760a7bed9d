#include "engine/access.h"

namespace lapse::engine {

namespace {

uint32_t LruClock(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 1000) & kLruClockMax; }
uint16_t LfuMinutes(int64_t now_ms) { return static_cast<uint16_t>(now_ms / 60000); }

// Minutes since `then` on the 16-bit minute clock, counting one wrap at most, as Redis does.
uint32_t MinutesSince(uint16_t then, int64_t now_ms) {
  uint16_t now = LfuMinutes(now_ms);
  return now >= then ? now - then : 65535u - then + now;
}

// A per-thread uniform draw in [0, 1) for the counter's probabilistic increment.
double UniformDraw() {
  thread_local uint64_t state = 0x853C49E6748FEA9Bull ^ reinterpret_cast<uintptr_t>(&state);
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
}

uint8_t LogIncrement(uint8_t counter) {
  if (counter == 255) return counter;
  int base = counter > kLfuInitialCount ? counter - kLfuInitialCount : 0;
  double p = 1.0 / (static_cast<double>(base) * Access().lfu_log_factor.load(std::memory_order_relaxed) + 1);
  return UniformDraw() < p ? static_cast<uint8_t>(counter + 1) : counter;
}

uint32_t LfuStamp(int64_t now_ms, uint8_t counter) { return (static_cast<uint32_t>(LfuMinutes(now_ms)) << 8) | counter; }

}  // namespace

AccessSettings& Access() {
  static AccessSettings settings;
  return settings;
}

void NoteCreated(Entry* e, int64_t now_ms) {
  bool lfu = Access().lfu.load(std::memory_order_relaxed);
  e->set_access_stamp(lfu ? LfuStamp(now_ms, kLfuInitialCount) : LruClock(now_ms));
}

void NoteAccess(Entry* e, int64_t now_ms) {
  if (!Access().lfu.load(std::memory_order_relaxed)) {
    e->set_access_stamp(LruClock(now_ms));
    return;
  }
  e->set_access_stamp(LfuStamp(now_ms, LogIncrement(DecayedFrequency(e, now_ms))));
}

void SetRestoredAccess(Entry* e, int64_t idle_seconds, int64_t frequency, int64_t now_ms) {
  if (Access().lfu.load(std::memory_order_relaxed)) {
    if (frequency >= 0) e->set_access_stamp(LfuStamp(now_ms, static_cast<uint8_t>(frequency)));
    return;
  }
  if (idle_seconds < 0) return;
  int64_t stamp = static_cast<int64_t>(LruClock(now_ms)) - idle_seconds;
  if (stamp < 0) stamp += kLruClockMax;  // the LRU clock wraps; IdleMs unwraps it
  e->set_access_stamp(static_cast<uint32_t>(stamp) & kLruClockMax);
}

uint64_t IdleMs(const Entry* e, int64_t now_ms) {
  uint32_t now = LruClock(now_ms), stamp = e->access_stamp();
  uint64_t seconds = now >= stamp ? now - stamp : now + (kLruClockMax - stamp);
  return seconds * 1000;
}

uint8_t DecayedFrequency(const Entry* e, int64_t now_ms) {
  uint32_t stamp = e->access_stamp();
  auto counter = static_cast<uint8_t>(stamp & 0xFF);
  int decay = Access().lfu_decay_minutes.load(std::memory_order_relaxed);
  if (decay <= 0) return counter;
  uint32_t periods = MinutesSince(static_cast<uint16_t>(stamp >> 8), now_ms) / static_cast<uint32_t>(decay);
  return periods >= counter ? 0 : static_cast<uint8_t>(counter - periods);
}

}  // namespace lapse::engine
