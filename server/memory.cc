#include "server/memory.h"

#include <malloc.h>
#include <unistd.h>

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
  return mallctl("arena." JEMALLOC_ARENAS_ALL_STRING ".purge", nullptr, nullptr, nullptr, 0) == 0;
#else
  malloc_trim(0);
  return true;
#endif
}

MemoryFigures ReadMemory() {
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

uint64_t MemoryGauge::UsedBytes(int64_t max_age_us) {
  int64_t now = SteadyMicros();
  int64_t read_at = read_at_us_.load(std::memory_order_relaxed);
  // One thread refreshes; the others use the figure they find meanwhile.
  if (now - read_at > max_age_us && read_at_us_.compare_exchange_strong(read_at, now, std::memory_order_relaxed)) {
    used_.store(ReadMemory().allocated, std::memory_order_relaxed);
  }
  return used_.load(std::memory_order_relaxed);
}

void MemoryGauge::NoteFreed(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  while (!used_.compare_exchange_weak(used, used > bytes ? used - bytes : 0, std::memory_order_relaxed)) {
  }
}

}  // namespace lapse::server
