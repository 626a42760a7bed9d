// File: server/memory.h
//
// How much memory the process uses, for INFO memory and for maxmemory. The allocator's
// own statistics (jemalloc's stats.allocated) are the figure Redis users know as
// used_memory; without them (the sanitizer build) the resident set stands in.
//
// Refreshing jemalloc's statistics merges every arena's counters, which is too slow to do
// for each write, so the maxmemory check reads a MemoryGauge that refreshes at most once
// a millisecond: a burst of writes may overshoot the limit by what one millisecond of
// traffic allocates, as Redis's own check (made before each command) can overshoot by
// one command.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace lapse::server {

struct MemoryFigures {
  uint64_t allocated = 0, active = 0, resident = 0;
};

// Reads the figures now.
MemoryFigures ReadMemory();

// The allocator's own report (MEMORY MALLOC-STATS): jemalloc's statistics, or Redis's words
// for an allocator without them (the sanitizer build).
std::string AllocatorStats();
// Gives the allocator's dirty pages back to the system (MEMORY PURGE): jemalloc's purge of
// every arena, or glibc's malloc_trim. False if the allocator refused.
bool PurgeAllocator();

class MemoryGauge {
 public:
  // Allocated bytes as of at most `max_age_us` ago. Safe from any thread.
  uint64_t UsedBytes(int64_t max_age_us = 1000);
  // Takes bytes just freed off the cached figure until the next refresh, so that eviction
  // does not free the same excess twice within one refresh interval.
  void NoteFreed(uint64_t bytes);

 private:
  std::atomic<uint64_t> used_{0};
  std::atomic<int64_t> read_at_us_{INT64_MIN / 2};
};

}  // namespace lapse::server
