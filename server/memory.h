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

// Reads the figures now; also keeps the highest `allocated` seen (PeakMemory).
MemoryFigures ReadMemory();
// The process's resident set size, from /proc (Redis's used_memory_rss).
uint64_t ProcessResidentBytes();
// The most `allocated` any ReadMemory call has seen: INFO, MEMORY and the maxmemory checks
// read it, so the peak is sampled, not exact, between those reads.
uint64_t PeakMemory();
// Notes what the server holds once started and before any client (MEMORY STATS's
// startup.allocated), and reads it back.
void NoteStartupMemory();
uint64_t StartupMemory();

// The allocator's own report (MEMORY MALLOC-STATS): jemalloc's statistics, or Redis's words
// for an allocator without them (the sanitizer build).
std::string AllocatorStats();
// Gives the allocator's dirty pages back to the system (MEMORY PURGE): jemalloc's purge of
// every arena (after emptying this thread's cache into them), or glibc's malloc_trim. False if
// the allocator refused.
bool PurgeAllocator();
// Returns the objects this thread's allocator cache holds to their arenas. jemalloc counts
// them as allocated until then (stats.allocated), so memory just freed by eviction would
// still read as used and more would be evicted than needed.
void FlushThreadCache();

// Between two reads of the allocator's statistics, the gauge follows the change in allocated
// bytes from jemalloc's per-thread counters (thread.allocatedp / deallocatedp: a load each),
// summed over the threads that asked for the figure: so the writes of the last millisecond are
// counted and maxmemory is not overshot by them. Without jemalloc, the figure between reads
// only loses what NoteFreed reports.
class MemoryGauge {
 public:
  // Allocated bytes, as of the last statistics read (at most `max_age_us` ago) plus what the
  // event-loop threads allocated and freed since. Safe from any thread.
  uint64_t UsedBytes(int64_t max_age_us = 1000);
  // Takes bytes just freed off the figure until the next refresh, where no per-thread
  // counters follow the change (without jemalloc).
  void NoteFreed(uint64_t bytes);

 private:
  struct ThreadCounters {
    const uint64_t* allocated = nullptr;
    const uint64_t* deallocated = nullptr;
    std::atomic<int64_t> net_at_refresh{0};
  };
  static constexpr size_t kMaxThreads = 1024;
  static int64_t Net(const ThreadCounters& t);
  // Registers the calling thread's counters once; false when it cannot (no jemalloc, full).
  bool RegisterThisThread();
  int64_t NetSinceRefresh() const;

  static uint64_t NextSerial() {
    static std::atomic<uint64_t> serial{0};
    return ++serial;
  }

  const uint64_t serial_ = NextSerial();
  std::atomic<uint64_t> used_{0};
  std::atomic<int64_t> read_at_us_{INT64_MIN / 2};
  ThreadCounters threads_[kMaxThreads];
  std::atomic<size_t> thread_count_{0};
};

}  // namespace lapse::server
