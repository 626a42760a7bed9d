// File: server/info_command.cc
//
// INFO: Redis 7.0's sections and fields, in Redis's order, so that tools that read them
// (redis-py's test fixtures, exporters) find every one. A field lapse has the concept of
// carries lapse's real figure; one it has no concept of (replication, forks, defrag, I/O
// threads, lazy free) carries Redis's neutral value, what a Redis that never used the
// feature shows. lapse's own fields (lapse_version, threads, shards, expire_lag_max_ms) sit
// beside their Redis neighbours, and its own sections (RU, Reclaim) come last.
// Keyspace figures are gathered from every shard, holding each in turn; memory figures are
// MEMORY STATS's (server/memory_report.h), so the two never disagree.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/memory.h"
#include "server/memory_report.h"
#include "server/migrate.h"
#include "server/process.h"
#include "server/server.h"

namespace lapse::server {

namespace {

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n < 1024) snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(n));
  else if (n < 1024 * 1024) snprintf(buf, sizeof buf, "%.2fK", n / 1024.0);
  else if (n < 1024ull * 1024 * 1024) snprintf(buf, sizeof buf, "%.2fM", n / 1048576.0);
  else if (n < (1ull << 40)) snprintf(buf, sizeof buf, "%.2fG", n / 1073741824.0);
  else if (n < (1ull << 50)) snprintf(buf, sizeof buf, "%.2fT", static_cast<double>(n) / static_cast<double>(1ull << 40));
  else if (n < (1ull << 60)) snprintf(buf, sizeof buf, "%.2fP", static_cast<double>(n) / static_cast<double>(1ull << 50));
  else snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(n));  // as Redis's bytesToHuman
  return buf;
}

// What INFO server says of the process, fixed for its lifetime.
struct ProcessFacts {
  std::string run_id;      // 40 random hex digits, as Redis's: tells restarts apart
  std::string os;          // "Linux 6.1.0 x86_64", from uname
  std::string executable;  // absolute path of the binary
  std::string compiler;
  std::string build_id;    // 16 hex digits that tell lapse builds apart, as Redis's does its own

  static const ProcessFacts& Get() {
    static const ProcessFacts facts = Make();
    return facts;
  }

 private:
  static ProcessFacts Make() {
    ProcessFacts f;
    std::random_device rd;
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 40; ++i) f.run_id.push_back(kHex[rd() % 16]);
    struct utsname u {};
    f.os = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.machine : "Linux";
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    f.executable = ec ? "" : exe.string();
#if defined(__clang__)
    f.compiler = "0.0.0";  // Redis reports the GCC version only
#else
    f.compiler = std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." + std::to_string(__GNUC_PATCHLEVEL__);
#endif
    char id[24];
    snprintf(id, sizeof id, "%016zx", std::hash<std::string>{}(std::string(LAPSE_VERSION " ") + f.compiler));
    f.build_id = id;
    return f;
  }
};

struct DbFigures {
  uint64_t keys = 0, expires = 0;
  // Sampled figures, weighted by each part's volatile keys when shards are added up.
  long double weighted_ttl_ms = 0;
  uint64_t ttl_weight = 0;
  long double stale_keys = 0;
};

struct ShardFigures {
  engine::ShardStats stats;
  uint64_t item_backlog = 0;
  uint64_t items_stored = 0;
  std::vector<DbFigures> dbs;
};

void Line(std::string& out, std::string_view name, const std::string& value) {
  out.append(name);
  out.push_back(':');
  out.append(value);
  out.append("\r\n");
}
void Line(std::string& out, std::string_view name, uint64_t value) { Line(out, name, std::to_string(value)); }

// getrusage's system or user time, as Redis formats it ("%ld.%06ld").
std::string CpuSeconds(int who, bool user) {
  struct rusage usage {};
  getrusage(who, &usage);
  const timeval& t = user ? usage.ru_utime : usage.ru_stime;
  char buf[48];
  snprintf(buf, sizeof buf, "%ld.%06ld", static_cast<long>(t.tv_sec), static_cast<long>(t.tv_usec));
  return buf;
}

std::string Percent(double part, double whole) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? part * 100 / whole : 0.0);
  return buf;
}

std::string Ratio2(double a, double b) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", b > 0 ? a / b : 0.0);
  return buf;
}

// The difference a - b as Redis prints it (a signed figure: fragmentation can be negative).
std::string SignedDiff(uint64_t a, uint64_t b) { return std::to_string(static_cast<int64_t>(a) - static_cast<int64_t>(b)); }

// The machine's memory, as Redis reads it (sysconf pages times page size).
uint64_t TotalSystemMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
}

void AppendServer(ConnCommand& c, int64_t now, std::string& out) {
  const ProcessFacts& facts = ProcessFacts::Get();
  int64_t uptime_ms = now - c.server.start_time_ms();
  Line(out, "redis_version", std::string("7.0.0"));
  Line(out, "redis_git_sha1", std::string("00000000"));
  Line(out, "redis_git_dirty", std::string("0"));
  Line(out, "redis_build_id", facts.build_id);
  Line(out, "lapse_version", std::string(LAPSE_VERSION));
  Line(out, "redis_mode", std::string("standalone"));
  Line(out, "os", facts.os);
  Line(out, "arch_bits", std::string("64"));
  Line(out, "monotonic_clock", std::string("POSIX clock_gettime"));
  Line(out, "multiplexing_api", std::string("epoll"));
  Line(out, "atomicvar_api", std::string("c11-builtin"));  // std::atomic: C11's model
  Line(out, "gcc_version", facts.compiler);
  Line(out, "process_id", static_cast<uint64_t>(getpid()));
  Line(out, "process_supervised", std::string(SupervisorName(CurrentSupervisor())));
  Line(out, "run_id", facts.run_id);
  Line(out, "tcp_port", static_cast<uint64_t>(c.server.port()));
  Line(out, "server_time_usec", static_cast<uint64_t>(now) * 1000);
  Line(out, "uptime_in_seconds", static_cast<uint64_t>(uptime_ms / 1000));
  Line(out, "uptime_in_days", static_cast<uint64_t>(uptime_ms / 86'400'000));
  Line(out, "hz", static_cast<uint64_t>(c.server.settings().hz));
  Line(out, "configured_hz", static_cast<uint64_t>(c.server.settings().hz));
  Line(out, "lru_clock", LruClock(now));
  Line(out, "executable", facts.executable);
  Line(out, "config_file", c.server.config().config_file());
  Line(out, "io_threads_active", std::string("0"));
  Line(out, "threads", static_cast<uint64_t>(c.server.thread_count()));
  Line(out, "shards", static_cast<uint64_t>(c.server.shards().size()));
}

void AppendClients(ConnCommand& c, std::string& out) {
  // As Redis counts them: replicas are connected_slaves, not clients.
  size_t clients = c.server.clients().size(), replicas = c.server.replication().replica_count();
  Line(out, "connected_clients", static_cast<uint64_t>(clients > replicas ? clients - replicas : 0));
  Line(out, "cluster_connections", uint64_t{0});
  Line(out, "maxclients", static_cast<uint64_t>(c.server.config().Snapshot().maxclients));
  // Each thread's record of the last seconds (server/client_buffer_peaks.h).
  ClientBufferPeaks::Peaks peaks;
  for (size_t t = 0; t < c.server.thread_count(); ++t) {
    ClientBufferPeaks::Peaks thread = c.server.counters(t).client_buffers.Recent();
    peaks.input = std::max(peaks.input, thread.input);
    peaks.output = std::max(peaks.output, thread.output);
  }
  Line(out, "client_recent_max_input_buffer", peaks.input);
  Line(out, "client_recent_max_output_buffer", peaks.output);
  Line(out, "blocked_clients", static_cast<uint64_t>(c.server.blocking().blocked_clients.load()));
  Line(out, "tracking_clients", static_cast<uint64_t>(c.server.tracking().clients()));
  Line(out, "clients_in_timeout_table", static_cast<uint64_t>(c.server.blocking().clients_in_timeout_table.load()));
}

// The VM figures are what the threads' Lua states hold (a state is made on a thread's first
// script, so 0 until then); the script and function caches are MEMORY STATS's lua.caches and
// functions.caches.
void AppendScriptMemory(ConnCommand& c, const MemoryOverhead& m, std::string& out) {
  size_t functions = 0, libraries = 0;
  for (const auto& [name, library] : c.server.functions().Current()->libraries) {
    ++libraries;
    functions += library.functions.size();
  }
  Server::LuaVmMemory vm = c.server.lua_vm_memory();
  Line(out, "used_memory_lua", vm.eval);
  Line(out, "used_memory_vm_eval", vm.eval);
  Line(out, "used_memory_lua_human", HumanBytes(vm.eval));
  Line(out, "used_memory_scripts_eval", m.lua_caches);
  Line(out, "number_of_cached_scripts", static_cast<uint64_t>(m.scripts));
  Line(out, "number_of_functions", static_cast<uint64_t>(functions));
  Line(out, "number_of_libraries", static_cast<uint64_t>(libraries));
  Line(out, "used_memory_vm_functions", vm.functions);
  Line(out, "used_memory_vm_total", vm.eval + vm.functions);
  Line(out, "used_memory_vm_total_human", HumanBytes(vm.eval + vm.functions));
  Line(out, "used_memory_functions", m.functions_caches);
  Line(out, "used_memory_scripts", m.lua_caches + m.functions_caches);
  Line(out, "used_memory_scripts_human", HumanBytes(m.lua_caches + m.functions_caches));
}

// Redis's three fragmentation figures: allocator (active / allocated), allocator RSS
// (resident / active), RSS overhead (process RSS / allocator resident), then the total.
void AppendFragmentation(const MemoryOverhead& m, std::string& out) {
  Line(out, "allocator_frag_ratio", Ratio2(m.allocator_active, m.allocator_allocated));
  Line(out, "allocator_frag_bytes", SignedDiff(m.allocator_active, m.allocator_allocated));
  Line(out, "allocator_rss_ratio", Ratio2(m.allocator_resident, m.allocator_active));
  Line(out, "allocator_rss_bytes", SignedDiff(m.allocator_resident, m.allocator_active));
  Line(out, "rss_overhead_ratio", Ratio2(m.process_rss, m.allocator_resident));
  Line(out, "rss_overhead_bytes", SignedDiff(m.process_rss, m.allocator_resident));
  Line(out, "mem_fragmentation_ratio", Ratio2(m.process_rss, m.total_allocated));
  Line(out, "mem_fragmentation_bytes", SignedDiff(m.process_rss, m.total_allocated));
}

void AppendMemory(ConnCommand& c, std::string& out) {
  MemoryOverhead m = GatherMemoryOverhead(c.server);
  Line(out, "used_memory", m.total_allocated);
  Line(out, "used_memory_human", HumanBytes(m.total_allocated));
  Line(out, "used_memory_rss", m.process_rss);
  Line(out, "used_memory_rss_human", HumanBytes(m.process_rss));
  Line(out, "used_memory_peak", m.peak_allocated);
  Line(out, "used_memory_peak_human", HumanBytes(m.peak_allocated));
  Line(out, "used_memory_peak_perc", Percent(m.total_allocated, m.peak_allocated));
  Line(out, "used_memory_overhead", m.overhead_total);
  Line(out, "used_memory_startup", m.startup_allocated);
  Line(out, "used_memory_dataset", m.dataset);
  uint64_t net_usage = m.total_allocated > m.startup_allocated ? m.total_allocated - m.startup_allocated : 1;
  Line(out, "used_memory_dataset_perc", Percent(m.dataset, net_usage));
  Line(out, "allocator_allocated", m.allocator_allocated);
  Line(out, "allocator_active", m.allocator_active);
  Line(out, "allocator_resident", m.allocator_resident);
  uint64_t system_memory = TotalSystemMemory();
  Line(out, "total_system_memory", system_memory);
  Line(out, "total_system_memory_human", HumanBytes(system_memory));
  AppendScriptMemory(c, m, out);
  Settings s = c.server.config().Snapshot();
  Line(out, "maxmemory", std::to_string(s.maxmemory));  // signed, as Redis prints it (CONFIG GET: unsigned)
  Line(out, "maxmemory_human", HumanBytes(static_cast<uint64_t>(s.maxmemory)));
  Line(out, "maxmemory_policy", s.maxmemory_policy);
  AppendFragmentation(m, out);
  // lapse counts every byte towards maxmemory (the AOF buffer too), and has no replicas and
  // no cluster links.
  for (auto name : {"mem_not_counted_for_evict", "mem_replication_backlog", "mem_total_replication_buffers",
                    "mem_clients_slaves"}) {
    Line(out, name, uint64_t{0});
  }
  Line(out, "mem_clients_normal", m.clients_normal);
  Line(out, "mem_cluster_links", uint64_t{0});
  Line(out, "mem_aof_buffer", static_cast<uint64_t>(c.server.aof().BufferBytes()));
#ifdef LAPSE_WITH_JEMALLOC
  Line(out, "mem_allocator", std::string("jemalloc"));
#else
  Line(out, "mem_allocator", std::string("libc"));
#endif
  // No active defrag; deletions free at once, so nothing is ever pending a lazy free.
  Line(out, "active_defrag_running", uint64_t{0});
  Line(out, "lazyfree_pending_objects", uint64_t{0});
  Line(out, "lazyfreed_objects", uint64_t{0});
}

// Bytes per second as Redis shows them: kilobytes with two decimals.
std::string Kbps(uint64_t bytes_per_second) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", static_cast<float>(bytes_per_second) / 1024);
  return buf;
}

void Zeros(std::string& out, std::initializer_list<const char*> names) {
  for (const char* name : names) Line(out, name, uint64_t{0});
}

struct StatsTotals {
  uint64_t commands = 0, in_bytes = 0, out_bytes = 0;
  uint64_t reads = 0, writes = 0, reply_buffer_shrinks = 0, reply_buffer_expands = 0;
  uint64_t expired = 0, volatile_keys = 0, lag_max = 0, hits = 0, misses = 0;
  long double stale = 0;
};

void AppendStats(ConnCommand& c, const StatsTotals& t, std::string& out) {
  Line(out, "total_connections_received", c.server.connections_received().load());
  Line(out, "total_commands_processed", t.commands);
  const InstantaneousMetrics& instantaneous = c.server.instantaneous_metrics();
  Line(out, "instantaneous_ops_per_sec", instantaneous.PerSecond(InstantaneousMetrics::kCommands));
  Line(out, "total_net_input_bytes", t.in_bytes);
  Line(out, "total_net_output_bytes", t.out_bytes);
  // No replication: its traffic is always 0.
  Zeros(out, {"total_net_repl_input_bytes", "total_net_repl_output_bytes"});
  Line(out, "instantaneous_input_kbps", Kbps(instantaneous.PerSecond(InstantaneousMetrics::kNetInput)));
  Line(out, "instantaneous_output_kbps", Kbps(instantaneous.PerSecond(InstantaneousMetrics::kNetOutput)));
  for (auto name : {"instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps"}) {
    Line(out, name, std::string("0.00"));
  }
  Line(out, "rejected_connections", c.server.rejected_connections().load());
  const Replication& replication = c.server.replication();
  Line(out, "sync_full", replication.sync_full());
  Line(out, "sync_partial_ok", replication.sync_partial_ok());
  Line(out, "sync_partial_err", replication.sync_partial_err());
  Line(out, "expired_keys", t.expired);
  char perc[32];
  // Redis's figure: the share of volatile keys probably expired but not yet deleted.
  snprintf(perc, sizeof perc, "%.2f", t.volatile_keys ? static_cast<double>(100 * t.stale / t.volatile_keys) : 0.0);
  Line(out, "expired_stale_perc", std::string(perc));
  Line(out, "expired_time_cap_reached_count", c.server.shards().expire_time_cap_reached());
  Line(out, "expire_cycle_cpu_milliseconds", c.server.shards().expire_cycle_ms());
  Line(out, "expire_lag_max_ms", t.lag_max);
  const Evictor& evictor = c.server.evictor();
  Line(out, "evicted_keys", evictor.evicted_keys());
  Line(out, "evicted_clients", uint64_t{0});  // lapse never evicts clients for memory
  Line(out, "total_eviction_exceeded_time", evictor.total_exceeded_ms());
  Line(out, "current_eviction_exceeded_time", evictor.current_exceeded_ms());
  Line(out, "keyspace_hits", t.hits);
  Line(out, "keyspace_misses", t.misses);
  Line(out, "pubsub_channels", static_cast<uint64_t>(c.server.pubsub().ChannelCount(false)));
  Line(out, "pubsub_patterns", static_cast<uint64_t>(c.server.pubsub().PatternCount()));
  Line(out, "pubsubshard_channels", static_cast<uint64_t>(c.server.pubsub().ChannelCount(true)));
  // lapse never forks (its saves are fork-less), has no replicas and no active defrag.
  Zeros(out, {"latest_fork_usec", "total_forks"});
  Line(out, "migrate_cached_sockets", static_cast<uint64_t>(MigrateCachedSockets()));
  Zeros(out, {"slave_expires_tracked_keys",
              "active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits", "active_defrag_key_misses",
              "total_active_defrag_time", "current_active_defrag_time"});
  Line(out, "tracking_total_keys", static_cast<uint64_t>(c.server.tracking().keys()));
  Line(out, "tracking_total_items", static_cast<uint64_t>(c.server.tracking().items()));
  Line(out, "tracking_total_prefixes", static_cast<uint64_t>(c.server.tracking().prefixes()));
  Line(out, "unexpected_error_replies", uint64_t{0});
  Line(out, "total_error_replies", c.server.error_stats().total());
  // Redis counts the deep checks of RESTORE payloads that sanitize-dump-payload asks for;
  // lapse reads its payloads whole in one way only and has no such separate check to count.
  Line(out, "dump_payload_sanitizations", uint64_t{0});
  Line(out, "total_reads_processed", t.reads);
  Line(out, "total_writes_processed", t.writes);
  // Every thread reads and writes its own clients: none is an I/O thread's.
  Zeros(out, {"io_threaded_reads_processed", "io_threaded_writes_processed"});
  Line(out, "reply_buffer_shrinks", t.reply_buffer_shrinks);
  Line(out, "reply_buffer_expands", t.reply_buffer_expands);
}

void CmdInfo(ConnCommand& c) {
  std::vector<std::string> wanted;
  for (size_t i = 1; i < c.args.size(); ++i) wanted.push_back(protocol::AsciiLower(c.args[i]));
  bool all = false;
  for (auto& w : wanted) all |= w == "all" || w == "everything";
  auto want = [&](std::string_view section) {
    if (wanted.empty() || all) return true;
    for (auto& w : wanted) {
      if (w == section || (w == "default")) return true;
    }
    return false;
  };
  // Sections INFO gives only when named, or for all and everything (not by default).
  auto want_explicitly = [&](std::string_view section) {
    if (all) return true;
    for (auto& w : wanted) {
      if (w == section) return true;
    }
    return false;
  };

  ShardSet& shards = c.server.shards();
  std::vector<ShardFigures> figures(shards.size());
  int64_t now = c.server.clock().NowMs();
  shards.RunOnAll([&](engine::Shard& shard) {
    ShardFigures& f = figures[shard.id()];
    f.stats = shard.Stats();
    f.item_backlog = shard.items().Backlog(now);
    f.items_stored = shard.items().items_stored();
    f.dbs.resize(shard.database_count());
    for (size_t d = 0; d < shard.database_count(); ++d) {
      engine::Db& db = shard.db(d);
      f.dbs[d].keys = db.stored();
      f.dbs[d].expires = db.volatile_count();
      if (db.volatile_count() > 0) {
        engine::Db::TtlSample sample = db.SampleTtls(now);
        auto volatile_keys = static_cast<long double>(db.volatile_count());
        f.dbs[d].stale_keys = sample.stale_fraction * volatile_keys;
        if (sample.average_ttl_ms > 0) {
          f.dbs[d].weighted_ttl_ms = sample.average_ttl_ms * volatile_keys;
          f.dbs[d].ttl_weight = db.volatile_count();
        }
      }
    }
  });

  StatsTotals totals;
  for (auto& f : figures) {
    totals.expired += f.stats.expired_keys;
    totals.volatile_keys += f.stats.keys_volatile;
    for (const DbFigures& d : f.dbs) totals.stale += d.stale_keys;
    totals.lag_max = std::max(totals.lag_max, f.stats.expired_lag_max_ms);
    totals.hits += f.stats.keyspace_hits;
    totals.misses += f.stats.keyspace_misses;
  }
  for (size_t t = 0; t < c.server.thread_count(); ++t) {
    ThreadCounters& tc = c.server.counters(t);
    totals.commands += tc.commands.load(std::memory_order_relaxed);
    totals.in_bytes += tc.net_input_bytes.load(std::memory_order_relaxed);
    totals.out_bytes += tc.net_output_bytes.load(std::memory_order_relaxed);
    totals.reads += tc.reads_processed.load(std::memory_order_relaxed);
    totals.writes += tc.writes_processed.load(std::memory_order_relaxed);
    totals.reply_buffer_shrinks += tc.reply_buffer_shrinks.load(std::memory_order_relaxed);
    totals.reply_buffer_expands += tc.reply_buffer_expands.load(std::memory_order_relaxed);
  }

  std::string out;
  auto section = [&](std::string_view title) {
    if (!out.empty()) out.append("\r\n");
    out.append("# ");
    out.append(title);
    out.append("\r\n");
  };
  if (want("server")) {
    section("Server");
    AppendServer(c, now, out);
  }
  if (want("clients")) {
    section("Clients");
    AppendClients(c, out);
  }
  if (want("memory")) {
    section("Memory");
    AppendMemory(c, out);
  }
  if (want("persistence")) {
    section("Persistence");
    c.server.persistence().AppendInfo(out);
    out += c.server.aof().InfoFields();
  }
  if (want("stats")) {
    section("Stats");
    AppendStats(c, totals, out);
  }
  if (want("replication")) {
    section("Replication");
    Line(out, "role", std::string("master"));
    out += c.server.replication().InfoFields();
  }
  if (want("cpu")) {
    section("CPU");
    // lapse has no main thread: the _main_thread figures are those of the event-loop thread
    // that answers this INFO.
    Line(out, "used_cpu_sys", CpuSeconds(RUSAGE_SELF, false));
    Line(out, "used_cpu_user", CpuSeconds(RUSAGE_SELF, true));
    Line(out, "used_cpu_sys_children", CpuSeconds(RUSAGE_CHILDREN, false));
    Line(out, "used_cpu_user_children", CpuSeconds(RUSAGE_CHILDREN, true));
    Line(out, "used_cpu_sys_main_thread", CpuSeconds(RUSAGE_THREAD, false));
    Line(out, "used_cpu_user_main_thread", CpuSeconds(RUSAGE_THREAD, true));
  }
  if (want("modules")) section("Modules");
  if (want_explicitly("commandstats")) {
    section("Commandstats");
    const CommandTable& table = c.server.commands();
    for (uint32_t id = 0; id < table.stat_count(); ++id) {
      uint64_t calls = 0, nsec = 0, rejected = 0, failed = 0;
      for (size_t t = 0; t < c.server.thread_count(); ++t) {
        const CommandCounters& cc = c.server.counters(t).per_command[id];
        calls += cc.calls.load(std::memory_order_relaxed);
        nsec += cc.nsec.load(std::memory_order_relaxed);
        rejected += cc.rejected.load(std::memory_order_relaxed);
        failed += cc.failed.load(std::memory_order_relaxed);
      }
      if (calls == 0 && rejected == 0 && failed == 0) continue;
      uint64_t usec = nsec / 1000;
      char per_call[32];
      snprintf(per_call, sizeof per_call, "%.2f", calls ? static_cast<double>(usec) / static_cast<double>(calls) : 0.0);
      Line(out, "cmdstat_" + table.stat_name(id),
           "calls=" + std::to_string(calls) + ",usec=" + std::to_string(usec) + ",usec_per_call=" + per_call +
               ",rejected_calls=" + std::to_string(rejected) + ",failed_calls=" + std::to_string(failed));
    }
  }
  if (want("errorstats")) {
    section("Errorstats");
    for (const auto& [code, count] : c.server.error_stats().ByCode()) {
      Line(out, "errorstat_" + code, "count=" + std::to_string(count));
    }
  }
  if (want_explicitly("latencystats")) {
    section("Latencystats");
    // With latency-tracking off, Redis gives the section's header alone.
    bool tracking = c.server.latency_tracking();
    std::vector<double> percentiles = c.server.config().Snapshot().latency_tracking_info_percentiles;
    const CommandTable& table = c.server.commands();
    for (uint32_t id = 0; tracking && id < table.stat_count(); ++id) {
      CommandLatencyHistogram::Totals totals = c.server.LatencyTotals(id);
      if (totals.total == 0) continue;
      std::string value;
      for (double p : percentiles) {
        char figure[64];
        snprintf(figure, sizeof figure, "=%.3f", static_cast<double>(totals.ValueAtPercentile(p)) / 1000.0);
        value += (value.empty() ? "p" : ",p") + FormatPercentile(p) + figure;
      }
      Line(out, "latency_percentiles_usec_" + table.stat_name(id), value);
    }
  }
  if (want("cluster")) {
    section("Cluster");
    Line(out, "cluster_enabled", uint64_t{0});
  }
  if (want("keyspace")) {
    section("Keyspace");
    size_t ndb = static_cast<size_t>(c.server.settings().databases);
    for (size_t d = 0; d < ndb; ++d) {
      DbFigures total;
      for (auto& f : figures) {
        total.keys += f.dbs[d].keys;
        total.expires += f.dbs[d].expires;
        total.weighted_ttl_ms += f.dbs[d].weighted_ttl_ms;
        total.ttl_weight += f.dbs[d].ttl_weight;
      }
      if (total.keys == 0) continue;
      auto avg = total.ttl_weight ? static_cast<int64_t>(total.weighted_ttl_ms / total.ttl_weight) : 0;
      Line(out, "db" + std::to_string(d),
           "keys=" + std::to_string(total.keys) + ",expires=" + std::to_string(total.expires) + ",avg_ttl=" + std::to_string(avg));
    }
  }
  if (want("ru")) {
    section("RU");
    Settings s = c.server.config().Snapshot();
    Line(out, "ru_per_second", static_cast<uint64_t>(s.ru_per_second));
    Line(out, "billing", s.billing);
    uint64_t user_milli = 0;
    for (size_t t = 0; t < c.server.thread_count(); ++t) user_milli += c.server.counters(t).ru_user_milli.load(std::memory_order_relaxed);
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", user_milli / 1000.0);
    Line(out, "ru_user_total", std::string(buf));
    snprintf(buf, sizeof buf, "%.3f", c.server.ru_meter().reclaim_total());
    Line(out, "ru_reclaim_total", std::string(buf));
    snprintf(buf, sizeof buf, "%.3f", c.server.ru_billed_milli().load() / 1000.0);
    Line(out, "ru_billed_reclaim_total", std::string(buf));
    Line(out, "ru_throttled_requests", c.server.containers().stats().throttled.load());
  }
  if (want("reclaim")) {
    section("Reclaim");
    engine::ItemReclaimStats& rs = c.server.containers().stats();
    uint64_t item_backlog = 0, items_stored = 0;
    for (auto& f : figures) {
      item_backlog += f.item_backlog;
      items_stored += f.items_stored;
    }
    // Containers are not keys (INFO keyspace counts keys only, as Redis does): their count is
    // here, over all databases and then per database that has some.
    Line(out, "containers", static_cast<uint64_t>(c.server.containers().Count()));
    for (const auto& [db, count] : c.server.containers().CountsByDb()) {
      Line(out, "containers_db" + std::to_string(db), static_cast<uint64_t>(count));
    }
    Line(out, "items_stored", items_stored);
    Line(out, "reclaim_backlog", item_backlog);
    Line(out, "reclaimed_background_total", rs.reclaimed_background.load());
    Line(out, "reclaimed_lazy_total", rs.reclaimed_lazy.load());
    Line(out, "reclaimed_forced_total", c.server.evictor().forced_reclaims());
    Line(out, "evicted_items_total", c.server.evictor().evicted_items());
    Line(out, "reclaim_lag_p50_ms", rs.lag.Quantile(0.5));
    Line(out, "reclaim_lag_p99_ms", rs.lag.Quantile(0.99));
    Line(out, "reclaim_lag_max_ms", rs.lag.max());
    Line(out, "keys_reclaim_backlog", static_cast<uint64_t>(totals.stale + 0.5L));
    Line(out, "keys_expire_lag_max_ms", totals.lag_max);
  }
  c.reply.Verbatim(out);
}

}  // namespace

void RegisterInfoCommand(CommandTable& table) {
  table.Add({"info", -1, kDangerous, 0, 0, 0, CmdInfo, "server", "Returns information and statistics about the server."});
}

}  // namespace lapse::server
