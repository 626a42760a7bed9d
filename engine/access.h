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
//        it is not the first one evicted; under allkeys-lfu with a maxmemory, a new key
//        whose read history shows no earlier read starts at 4 (engine/frequency_sketch.h).
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
// A new key with no read history (engine/frequency_sketch.h) starts on probation here: the
// next eviction prefers it to any fresh key, and one read makes it one.
inline constexpr uint8_t kLfuProbationCount = 4;
// `history` for a key whose reads are not counted (no sketch).
inline constexpr int kNoHistory = -1;

// Stamps a key just created (or replaced whole). Under LFU, `history` (the frequency sketch's
// estimate of its reads, the miss that led to its creation included) decides its counter:
// probation for 1 read or fewer, Redis's initial count otherwise or without a sketch.
void NoteCreated(Entry* e, int64_t now_ms, int history = kNoHistory);
// Whether a new key with this read history starts on probation.
bool OnProbation(int history);
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
