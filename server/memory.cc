#include "server/memory.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#ifdef LAPSE_WITH_JEMALLOC
#include <jemalloc/jemalloc.h>
// MALLCTL_ARENAS_ALL (4096), as the text mallctl's names need.
#define JEMALLOC_ARENAS_ALL_STRING "4096"
#endif

namespace lapse::server {

namespace {

uint64_t ResidentBytes() {
  uint64_t bytes = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long pages = 0, rss = 0;
    if (std::fscanf(f, "%lu %lu", &pages, &rss) == 2) {
      bytes = static_cast<uint64_t>(rss) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    }
    std::fclose(f);
  }
  return bytes;
}

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string AllocatorStats() {
#ifdef LAPSE_WITH_JEMALLOC
  std::string out;
  malloc_stats_print([](void* sink, const char* text) { static_cast<std::string*>(sink)->append(text); }, &out,
                     nullptr);
  return out;
#else
  return "Stats not supported for the current allocator";
#endif
}

bool PurgeAllocator() {
#ifdef LAPSE_WITH_JEMALLOC
  FlushThreadCache();
  return mallctl("arena." JEMALLOC_ARENAS_ALL_STRING ".purge", nullptr, nullptr, nullptr, 0) == 0;
#else
  malloc_trim(0);
  return true;
#endif
}

void FlushThreadCache() {
#ifdef LAPSE_WITH_JEMALLOC
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
#endif
}

namespace {
std::atomic<uint64_t> peak_allocated{0};
std::atomic<uint64_t> startup_allocated{0};

// The allocator's figures, or the resident set where it has none.
MemoryFigures ReadAllocator() {
  MemoryFigures m;
#ifdef LAPSE_WITH_JEMALLOC
  uint64_t epoch = 1;
  size_t sz = sizeof epoch;
  mallctl("epoch", &epoch, &sz, &epoch, sz);
  size_t v = 0;
  sz = sizeof v;
  if (mallctl("stats.allocated", &v, &sz, nullptr, 0) == 0) m.allocated = v;
  if (mallctl("stats.active", &v, &sz, nullptr, 0) == 0) m.active = v;
  if (mallctl("stats.resident", &v, &sz, nullptr, 0) == 0) m.resident = v;
#else
  struct mallinfo2 mi = mallinfo2();
  m.allocated = mi.uordblks + mi.hblkhd;
  m.active = m.allocated;
  m.resident = mi.arena + mi.hblkhd;
#endif
  if (m.resident == 0 || m.allocated == 0) {
    uint64_t rss = ResidentBytes();
    if (m.resident == 0) m.resident = rss;
    if (m.allocated == 0) m.allocated = rss;
    if (m.active == 0) m.active = rss;
  }
  return m;
}
}  // namespace

uint64_t ProcessResidentBytes() { return ResidentBytes(); }

uint64_t PeakMemory() { return std::max(peak_allocated.load(std::memory_order_relaxed), ReadMemory().allocated); }

void NoteStartupMemory() { startup_allocated.store(ReadMemory().allocated, std::memory_order_relaxed); }

uint64_t StartupMemory() { return startup_allocated.load(std::memory_order_relaxed); }

MemoryFigures ReadMemory() {
  MemoryFigures m = ReadAllocator();
  uint64_t peak = peak_allocated.load(std::memory_order_relaxed);
  while (m.allocated > peak && !peak_allocated.compare_exchange_weak(peak, m.allocated, std::memory_order_relaxed)) {
  }
  return m;
}


bool MemoryGauge::RegisterThisThread() {
#ifdef LAPSE_WITH_JEMALLOC
  // Gauges are told apart by a serial, not an address a later gauge may reuse.
  thread_local uint64_t registered_with = 0;
  if (registered_with == serial_) return true;
  uint64_t* allocated = nullptr;
  uint64_t* deallocated = nullptr;
  size_t sz = sizeof allocated;
  if (mallctl("thread.allocatedp", &allocated, &sz, nullptr, 0) != 0) return false;
  if (mallctl("thread.deallocatedp", &deallocated, &sz, nullptr, 0) != 0) return false;
  size_t slot = thread_count_.load(std::memory_order_acquire);
  while (slot < kMaxThreads) {
    // Claims the slot first, then fills it: readers only look below thread_count_ once the
    // counters are set (they skip a slot whose pointers are still null).
    if (thread_count_.compare_exchange_weak(slot, slot + 1, std::memory_order_acq_rel)) {
      ThreadCounters& t = threads_[slot];
      t.net_at_refresh.store(static_cast<int64_t>(*allocated - *deallocated), std::memory_order_relaxed);
      __atomic_store_n(&t.deallocated, deallocated, __ATOMIC_RELEASE);
      __atomic_store_n(&t.allocated, allocated, __ATOMIC_RELEASE);
      registered_with = serial_;
      return true;
    }
  }
#endif
  return false;
}

int64_t MemoryGauge::Net(const ThreadCounters& t) {
  const uint64_t* a = __atomic_load_n(&t.allocated, __ATOMIC_ACQUIRE);
  const uint64_t* d = __atomic_load_n(&t.deallocated, __ATOMIC_ACQUIRE);
  if (a == nullptr || d == nullptr) return 0;
  // The owner thread writes these plainly; an aligned 8-byte load sees one value or the other.
  return static_cast<int64_t>(__atomic_load_n(a, __ATOMIC_RELAXED) - __atomic_load_n(d, __ATOMIC_RELAXED));
}

int64_t MemoryGauge::NetSinceRefresh() const {
  int64_t sum = 0;
  size_t n = thread_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    sum += Net(threads_[i]) - threads_[i].net_at_refresh.load(std::memory_order_relaxed);
  }
  return sum;
}

uint64_t MemoryGauge::UsedBytes(int64_t max_age_us) {
  RegisterThisThread();
  int64_t now = SteadyMicros();
  int64_t read_at = read_at_us_.load(std::memory_order_relaxed);
  // One thread refreshes; the others use the figure they find meanwhile.
  if (now - read_at > max_age_us && read_at_us_.compare_exchange_strong(read_at, now, std::memory_order_relaxed)) {
    size_t n = thread_count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) threads_[i].net_at_refresh.store(Net(threads_[i]), std::memory_order_relaxed);
    used_.store(ReadMemory().allocated, std::memory_order_relaxed);
  }
  int64_t used = static_cast<int64_t>(used_.load(std::memory_order_relaxed)) + NetSinceRefresh();
  return used > 0 ? static_cast<uint64_t>(used) : 0;
}

void MemoryGauge::NoteFreed(uint64_t bytes) {
  if (thread_count_.load(std::memory_order_relaxed) > 0) return;  // the counters saw it already
  uint64_t used = used_.load(std::memory_order_relaxed);
  while (!used_.compare_exchange_weak(used, used > bytes ? used - bytes : 0, std::memory_order_relaxed)) {
  }
}

}  // namespace lapse::server
