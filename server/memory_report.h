// File: server/memory_report.h
//
// MEMORY STATS and MEMORY DOCTOR: Redis 7.0's account of where memory goes
// (getMemoryOverheadData) and its doctor's report (getMemoryDoctorReport), with lapse's own
// figures wherever lapse has the concept:
//   - the allocator figures are jemalloc's (stats.allocated / active / resident) and the
//     process's resident set is read from /proc, so every ratio is real;
//   - peak.allocated is the highest allocation any memory read has seen (INFO, MEMORY,
//     the maxmemory checks): sampled, where Redis samples it in its cron;
//   - a database's overhead is its hash-table bucket slots (main) and its timing-wheel
//     records (expires), summed over the shards; lapse has no cluster slot index;
//   - clients.normal is what every client's connection holds (CLIENT LIST's tot-mem);
//     lua.caches is the script cache; what lapse has no concept of (replication backlog,
//     replicas, cluster links, AOF buffer) is 0, as in a Redis without them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lapse::server {

class Server;

struct MemoryOverhead {
  uint64_t peak_allocated = 0, total_allocated = 0, startup_allocated = 0;
  uint64_t clients_normal = 0, lua_caches = 0, functions_caches = 0;
  size_t clients = 0, scripts = 0;
  struct Db {
    int id = 0;
    uint64_t main = 0, expires = 0;
  };
  std::vector<Db> dbs;  // only the databases that hold keys, as Redis lists them
  uint64_t overhead_total = 0, keys = 0, bytes_per_key = 0, dataset = 0;
  float dataset_percentage = 0, peak_percentage = 0;
  uint64_t allocator_allocated = 0, allocator_active = 0, allocator_resident = 0, process_rss = 0;
};

// Gathers the figures now: every shard is visited in turn (each held only while it is read).
MemoryOverhead GatherMemoryOverhead(Server& server);

// MEMORY DOCTOR's text, Redis 7.0's words, from the same figures and Redis's thresholds.
std::string MemoryDoctorReport(const MemoryOverhead& m);

}  // namespace lapse::server
