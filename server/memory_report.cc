#include "server/memory_report.h"

#include <map>

#include "server/memory.h"
#include "server/server.h"

namespace lapse::server {

namespace {

// Redis's thresholds (getMemoryDoctorReport): below 5 MB the doctor says nothing useful; a
// ratio counts only past 10 MB of difference.
constexpr uint64_t kEmptyBelow = 5 * 1024 * 1024;
constexpr int64_t kSignificantBytes = 10 << 20;
constexpr uint64_t kBigClientAverage = 200 * 1024;
constexpr size_t kManyScripts = 1000;

float Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0 : static_cast<float>(a) / static_cast<float>(b); }

void AddDatabases(Server& server, MemoryOverhead* m) {
  std::map<int, MemoryOverhead::Db> dbs;
  server.shards().RunOnAll([&](engine::Shard& shard) {
    for (size_t d = 0; d < shard.database_count(); ++d) {
      engine::Db& db = shard.db(d);
      if (db.stored() == 0) continue;
      MemoryOverhead::Db& out = dbs[static_cast<int>(d)];
      out.id = static_cast<int>(d);
      uint64_t expires = db.wheel_records() * sizeof(uint64_t);
      out.expires += expires;
      out.main += db.MemoryEstimate() - expires;
      m->keys += db.stored();
    }
  });
  for (auto& [id, db] : dbs) m->dbs.push_back(db);
}

}  // namespace

MemoryOverhead GatherMemoryOverhead(Server& server) {
  MemoryOverhead m;
  MemoryFigures figures = ReadMemory();
  m.total_allocated = figures.allocated;
  m.peak_allocated = std::max(PeakMemory(), m.total_allocated);
  m.startup_allocated = StartupMemory();
  m.allocator_allocated = figures.allocated;
  m.allocator_active = figures.active;
  m.allocator_resident = figures.resident;
  m.process_rss = ProcessResidentBytes();
  server.clients().ForEach([&](ClientInfo& info) {
    m.clients_normal += info.memory_bytes.load(std::memory_order_relaxed);
    ++m.clients;
  });
  auto [scripts, script_bytes] = server.scripts().CountAndBytes();
  m.scripts = scripts;
  m.lua_caches = script_bytes;
  for (const auto& [name, library] : server.functions().Current()->libraries) {
    m.functions_caches += name.capacity() + library.code.capacity();
  }
  AddDatabases(server, &m);
  m.overhead_total = m.startup_allocated + m.clients_normal + m.lua_caches + m.functions_caches;
  for (const MemoryOverhead::Db& db : m.dbs) m.overhead_total += db.main + db.expires;
  m.dataset = m.total_allocated > m.overhead_total ? m.total_allocated - m.overhead_total : 0;
  uint64_t net_usage = m.total_allocated > m.startup_allocated ? m.total_allocated - m.startup_allocated : 1;
  m.dataset_percentage = static_cast<float>(m.dataset) * 100 / static_cast<float>(net_usage);
  m.peak_percentage = static_cast<float>(m.total_allocated) * 100 / static_cast<float>(m.peak_allocated);
  m.bytes_per_key = m.keys ? net_usage / m.keys : 0;
  return m;
}

std::string MemoryDoctorReport(const MemoryOverhead& m) {
  if (m.total_allocated < kEmptyBelow) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these "
           "conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be "
           "back to our programming as soon as I finished rebooting.\n";
  }
  auto high = [](float ratio, uint64_t a, uint64_t b, float limit) {
    return ratio > limit && static_cast<int64_t>(a) - static_cast<int64_t>(b) > kSignificantBytes;
  };
  bool big_peak = Ratio(m.peak_allocated, m.total_allocated) > 1.5;
  bool high_frag = high(Ratio(m.process_rss, m.total_allocated), m.process_rss, m.total_allocated, 1.4f);
  bool high_alloc_frag =
      high(Ratio(m.allocator_active, m.allocator_allocated), m.allocator_active, m.allocator_allocated, 1.1f);
  bool high_alloc_rss = high(Ratio(m.allocator_resident, m.allocator_active), m.allocator_resident, m.allocator_active, 1.1f);
  bool high_proc_rss = high(Ratio(m.process_rss, m.allocator_resident), m.process_rss, m.allocator_resident, 1.1f);
  bool big_client_buf = m.clients > 0 && m.clients_normal / m.clients > kBigClientAverage;
  bool many_scripts = m.scripts > kManyScripts;
  if (!big_peak && !high_frag && !high_alloc_frag && !high_alloc_rss && !high_proc_rss && !big_client_buf &&
      !many_scripts) {
    return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n";
  }
  std::string s = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
  if (big_peak) {
    s += " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The "
         "allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation "
         "ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance "
         "Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the "
         "Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, "
         "please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the "
         "instance.\n\n";
  }
  if (high_frag) {
    s += " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means "
         "that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis "
         "performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry "
         "above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If "
         "the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc "
         "allocator and not the default libc malloc. Note: The currently used allocator is \"";
#ifdef LAPSE_WITH_JEMALLOC
    s += "jemalloc";
#else
    s += "libc";
#endif
    s += "\".\n\n";
  }
  if (high_alloc_frag) {
    s += " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. "
         "This problem is usually due either to a large peak memory (check if there is a peak memory entry above in "
         "the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try "
         "enabling 'activedefrag' config option.\n\n";
  }
  if (high_alloc_rss) {
    s += " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means "
         "that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). "
         "This problem is usually due to a large peak memory (check if there is a peak memory entry above in the "
         "report), you can try the MEMORY PURGE command to reclaim it.\n\n";
  }
  if (high_proc_rss) {
    s += " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this "
         "means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This "
         "problem may be due to Lua scripts or Modules.\n\n";
  }
  if (big_client_buf) {
    s += " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on "
         "average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not "
         "receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending "
         "commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT "
         "LIST command in order to investigate the issue if it causes problems in your instance, or to understand "
         "better why certain clients are using a big amount of memory.\n\n";
  }
  if (many_scripts) {
    s += " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because "
         "scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and "
         "`EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of "
         "your memory.\n\n";
  }
  s += "I'm here to keep you safe, Sam. I want to help you.\n";
  return s;
}

}  // namespace lapse::server
