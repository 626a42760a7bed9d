// File: engine/access.h
//
// How recently, or how often, a key was used: the 24-bit access stamp of its entry, kept as
// Redis keeps robj.lru, because maxmemory-policy chooses which one eviction needs and OBJECT
// IDLETIME / OBJECT FREQ report it the way Redis users know.
//
//   LRU (every policy but the *-lfu ones): the last access in seconds, modulo 2^24 (194
//   days, Redis's LRU clock), so OBJECT IDLETIME no longer wraps after 18 hours.
//   LFU: | minutes of the last decrement, mod 2^16 (16) | logarithmic access counter (8) |.
//        The counter grows with probability 1 / ((counter - 5) * lfu-log-factor + 1) and
//        loses one per lfu-decay-time minutes without access; a new key starts at 5, so that
//        it is not the first one evicted.
//
// Switching policies at run time reinterprets the stamps, as in Redis: they adjust as keys
// are used again.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/entry.h"

namespace lapse::engine {

// The settings every thread reads on each access; set by CONFIG (server/config.cc).
struct AccessSettings {
  std::atomic<bool> lfu{false};
  std::atomic<int> lfu_log_factor{10};
  std::atomic<int> lfu_decay_minutes{1};
};
AccessSettings& Access();

inline constexpr uint32_t kLruClockMax = (1u << 24) - 1;
inline constexpr uint8_t kLfuInitialCount = 5;

// Stamps a key just created (or replaced whole).
void NoteCreated(Entry* e, int64_t now_ms);
// Stamps a key a command has just found: its LRU time, or its LFU counter decayed and
// incremented.
void NoteAccess(Entry* e, int64_t now_ms);

// RESTORE's IDLETIME and FREQ, as Redis's objectSetLRUOrLFU: under an LFU policy a
// `frequency` >= 0 becomes the counter; under LRU an `idle_seconds` >= 0 dates the last
// access back. A value for the other kind of policy is ignored, as in Redis.
void SetRestoredAccess(Entry* e, int64_t idle_seconds, int64_t frequency, int64_t now_ms);

// Milliseconds since the last access under LRU stamps (whole seconds).
uint64_t IdleMs(const Entry* e, int64_t now_ms);
// The LFU counter after the decay owed since its last access (OBJECT FREQ), not stored.
uint8_t DecayedFrequency(const Entry* e, int64_t now_ms);

}  // namespace lapse::engine
