// Server family: introspection and administration (INFO, CONFIG, TIME, SHUTDOWN,
// DEBUG). INFO gathers its keyspace figures from every shard, holding each in turn.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include <sys/resource.h>
#include <sys/utsname.h>

#include <spdlog/spdlog.h>

#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/memory.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {


// ---- CONFIG ----

// The dispatcher has checked the subcommand and its arity against the table.
void CmdConfig(ConnCommand& c) {
  std::string_view sub = c.args[1];
  Config& config = c.server.config();
  if (EqualsIgnoreCase(sub, "GET")) {
    std::vector<std::pair<std::string, std::string>> found;
    for (size_t i = 2; i < c.args.size(); ++i) {
      // Like Redis 7.0, a name without glob characters is looked up as given and answered
      // with the spelling it was asked in; parameters are told apart regardless of case.
      std::string_view pattern = c.args[i];
      bool exact = pattern.find_first_of("[*?") == std::string_view::npos;
      for (auto& kv : config.Get(protocol::AsciiLower(pattern))) {
        if (exact) kv.first = std::string(pattern);
        bool dup = false;
        for (auto& f : found) dup |= EqualsIgnoreCase(f.first, kv.first);
        if (!dup) found.push_back(std::move(kv));
      }
    }
    c.reply.MapHeader(found.size());
    for (const auto& [name, value] : found) {
      c.reply.Bulk(name);
      c.reply.Bulk(value);
    }
    return;
  }
  if (EqualsIgnoreCase(sub, "SET")) {
    if (c.args.size() % 2 != 0) return c.reply.Error(errors::kSyntax);
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (size_t i = 2; i < c.args.size(); i += 2) pairs.emplace_back(c.args[i], c.args[i + 1]);
    bool was_appendonly = config.Snapshot().appendonly;
    if (auto err = config.SetAll(pairs)) return c.reply.Error(*err);
    c.server.ApplySettings();
    // Like Redis, appendonly takes effect at once: on writes a base of the data set first.
    bool appendonly = config.Snapshot().appendonly;
    if (appendonly != was_appendonly) {
      if (auto err = c.server.aof().SetEnabled(appendonly)) {
        config.Set("appendonly", was_appendonly ? "yes" : "no");
        return c.reply.Error(*err);
      }
    }
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "HELP")) {
    return ReplyHelp(c.reply, {"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                               "GET <pattern>",
                               "    Return parameters matching the glob-like <pattern> and their values.",
                               "SET <directive> <value>",
                               "    Set the configuration <directive> to <value>.",
                               "RESETSTAT",
                               "    Reset statistics reported by the INFO command.",
                               "REWRITE",
                               "    Rewrite the configuration file."});
  }
  c.reply.Error(errors::kNoConfigFile);  // REWRITE
}

// CONFIG RESETSTAT answers once every thread has zeroed its counters, so that what follows
// sees them zeroed, as on Redis; the other subcommands answer at once.
awaitable<void> CmdConfigOrResetStat(ConnCommand& c) {
  if (!EqualsIgnoreCase(c.args[1], "RESETSTAT")) co_return CmdConfig(c);
  co_await c.server.ResetStats(c.session.home);
  c.reply.Ok();
}

// ---- TIME, SHUTDOWN, DEBUG ----

void CmdTime(ConnCommand& c) {
  int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  us += (c.server.clock().NowMs() - us / 1000) * 1000;  // include any DEBUG ADVANCE offset
  c.reply.ArrayHeader(2);
  c.reply.Bulk(std::to_string(us / 1'000'000));
  c.reply.Bulk(std::to_string(us % 1'000'000));
}

// SHUTDOWN's snapshot: with SAVE, or when `save` rules exist and NOSAVE is not given, as in
// Redis. A background save under way is waited for first. False (and the error sent) when
// the save fails: the server then keeps running, as Redis does.
bool SaveBeforeShutdown(ConnCommand& c, bool save, bool nosave) {
  Persistence& p = c.server.persistence();
  if (nosave || (!save && !p.shutdown_save_needed())) {
    p.SetShutdownSave(false);
    return true;
  }
  while (p.background_save_running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (p.SaveForeground()) {
    c.reply.Error("ERR Errors trying to SHUTDOWN. Check logs.");
    return false;
  }
  p.SetShutdownSave(false);
  return true;
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] | ABORT. NOW and FORCE change nothing (lapse waits
// for no replica) but are checked as Redis checks them; with no shutdown ever pending (lapse
// stops at once), ABORT always finds none.
void CmdShutdown(ConnCommand& c) {
  bool save = false, nosave = false, other = false, abort = false;
  for (size_t i = 1; i < c.args.size(); ++i) {
    std::string_view a = protocol::AsCString(c.args[i]);
    if (EqualsIgnoreCase(a, "NOSAVE")) nosave = true;
    else if (EqualsIgnoreCase(a, "SAVE")) save = true;
    else if (EqualsIgnoreCase(a, "NOW") || EqualsIgnoreCase(a, "FORCE")) other = true;
    else if (EqualsIgnoreCase(a, "ABORT")) abort = true;
    else return c.reply.Error(errors::kSyntax);
  }
  if ((abort && (save || nosave || other)) || (save && nosave)) return c.reply.Error(errors::kSyntax);
  if (abort) return c.reply.Error(errors::kNoShutdownInProgress);
  if (!SaveBeforeShutdown(c, save, nosave)) return;
  if (c.server.running_scripts().busy_count() > 0) {
    // SHUTDOWN NOSAVE while a script is busy (the only SHUTDOWN admitted then): its thread
    // is inside Lua and would never be joined. There is nothing to save: exit now.
    spdlog::warn("SHUTDOWN NOSAVE while a script is busy: exiting at once");
    spdlog::default_logger()->flush();
    std::_Exit(0);
  }
  // Like Redis, a successful SHUTDOWN sends no reply: the connection just closes.
  c.session.close_after_reply = true;
  c.server.RequestShutdown();
}

void CmdDebug(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "ADVANCE") && c.args.size() == 3) {
    int64_t ms = 0;
    if (!protocol::ParseInt64(c.args[2], &ms) || ms < 0) return c.reply.Error(errors::kNotInteger);
    c.server.clock().Advance(ms);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "SET-ACTIVE-EXPIRE") && c.args.size() == 3) {
    int64_t on = 0;
    if (!protocol::ParseInt64(c.args[2], &on) || (on != 0 && on != 1)) return c.reply.Error(errors::kNotInteger);
    c.server.shards().set_active_expire(on == 1);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "FREEZE-CLOCK") && c.args.size() == 3) {
    int64_t on = 0;
    if (!protocol::ParseInt64(c.args[2], &on) || (on != 0 && on != 1)) return c.reply.Error(errors::kNotInteger);
    c.server.clock().SetFrozen(on == 1);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "SLEEP") && c.args.size() == 3) {
    // As Redis reads it (strtod of the leading number): text that is no number sleeps 0 s.
    std::string text(protocol::AsCString(c.args[2]));
    double seconds = std::strtod(text.c_str(), nullptr);
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "RELOAD") && c.args.size() == 2) {
    if (auto err = c.server.persistence().DebugReload()) return c.reply.Error(*err);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "HELP")) {
    ReplyHelp(c.reply, {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                                  "ADVANCE <milliseconds>", "    Move the server clock forward.",
                                  "FREEZE-CLOCK <0|1>", "    Stop the server clock (ADVANCE still moves it) or let it run again.",
                                  "SET-ACTIVE-EXPIRE <0|1>", "    Pause or resume background reclamation.",
                                  "SLEEP <seconds>", "    Stop the serving thread for <seconds>.",
                                  "RELOAD", "    Save the RDB on disk, empty the dataset and load it back."});
    return;
  }
  c.reply.Error(errors::UnknownSubcommandOrArity(protocol::AsCString(sub), "debug"));
}

// ---- INFO ----

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n < 1024) snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(n));
  else if (n < 1024 * 1024) snprintf(buf, sizeof buf, "%.2fK", n / 1024.0);
  else if (n < 1024ull * 1024 * 1024) snprintf(buf, sizeof buf, "%.2fM", n / 1048576.0);
  else snprintf(buf, sizeof buf, "%.2fG", n / 1073741824.0);
  return buf;
}

// What INFO server says of the process, fixed for its lifetime.
struct ProcessFacts {
  std::string run_id;      // 40 random hex digits, as Redis's: tells restarts apart
  std::string replid;      // the replication id INFO replication shows, random the same way
  std::string os;          // "Linux 6.1.0 x86_64", from uname
  std::string executable;  // absolute path of the binary
  std::string compiler;

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
    for (int i = 0; i < 40; ++i) f.replid.push_back(kHex[rd() % 16]);
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

  uint64_t expired = 0, volatile_keys = 0, lag_max = 0, hits = 0, misses = 0;
  long double stale = 0;
  for (auto& f : figures) {
    expired += f.stats.expired_keys;
    volatile_keys += f.stats.keys_volatile;
    for (const DbFigures& d : f.dbs) stale += d.stale_keys;
    lag_max = std::max(lag_max, f.stats.expired_lag_max_ms);
    hits += f.stats.keyspace_hits;
    misses += f.stats.keyspace_misses;
  }
  uint64_t commands = 0, in_bytes = 0, out_bytes = 0;
  for (size_t t = 0; t < c.server.thread_count(); ++t) {
    ThreadCounters& tc = c.server.counters(t);
    commands += tc.commands.load(std::memory_order_relaxed);
    in_bytes += tc.net_input_bytes.load(std::memory_order_relaxed);
    out_bytes += tc.net_output_bytes.load(std::memory_order_relaxed);
  }

  std::string out;
  auto section = [&](std::string_view title) {
    if (!out.empty()) out.append("\r\n");
    out.append("# ");
    out.append(title);
    out.append("\r\n");
  };
  int64_t uptime_ms = now - c.server.start_time_ms();
  if (want("server")) {
    section("Server");
    const ProcessFacts& facts = ProcessFacts::Get();
    Line(out, "redis_version", std::string("7.0.0"));
    Line(out, "redis_git_sha1", std::string("00000000"));
    Line(out, "redis_git_dirty", std::string("0"));
    Line(out, "lapse_version", std::string(LAPSE_VERSION));
    Line(out, "redis_mode", std::string("standalone"));
    Line(out, "os", facts.os);
    Line(out, "arch_bits", std::string("64"));
    Line(out, "monotonic_clock", std::string("POSIX clock_gettime"));
    Line(out, "multiplexing_api", std::string("epoll"));
    Line(out, "gcc_version", facts.compiler);
    Line(out, "process_id", static_cast<uint64_t>(getpid()));
    Line(out, "process_supervised", std::string("no"));
    Line(out, "run_id", facts.run_id);
    Line(out, "tcp_port", static_cast<uint64_t>(c.server.port()));
    Line(out, "server_time_usec", static_cast<uint64_t>(now) * 1000);
    Line(out, "uptime_in_seconds", static_cast<uint64_t>(uptime_ms / 1000));
    Line(out, "uptime_in_days", static_cast<uint64_t>(uptime_ms / 86'400'000));
    Line(out, "hz", static_cast<uint64_t>(c.server.settings().hz));
    Line(out, "configured_hz", static_cast<uint64_t>(c.server.settings().hz));
    Line(out, "executable", facts.executable);
    Line(out, "config_file", c.server.config().config_file());
    Line(out, "io_threads_active", std::string("0"));
    Line(out, "threads", static_cast<uint64_t>(c.server.thread_count()));
    Line(out, "shards", static_cast<uint64_t>(shards.size()));
  }
  if (want("clients")) {
    section("Clients");
    Line(out, "connected_clients", static_cast<uint64_t>(c.server.clients().size()));
    Line(out, "cluster_connections", uint64_t{0});
    Line(out, "maxclients", static_cast<uint64_t>(c.server.config().Snapshot().maxclients));
    Line(out, "blocked_clients", static_cast<uint64_t>(c.server.blocking().blocked_clients.load()));
    // No cluster yet, and blocked clients are not kept in a timeout table.
    Line(out, "tracking_clients", static_cast<uint64_t>(c.server.tracking().clients()));
    Line(out, "clients_in_timeout_table", uint64_t{0});
  }
  if (want("memory")) {
    section("Memory");
    MemoryFigures m = ReadMemory();
    Line(out, "used_memory", m.allocated);
    Line(out, "used_memory_human", HumanBytes(m.allocated));
    Line(out, "used_memory_rss", m.resident);
    Line(out, "used_memory_rss_human", HumanBytes(m.resident));
    Line(out, "allocator_allocated", m.allocated);
    Line(out, "allocator_active", m.active);
    Line(out, "allocator_resident", m.resident);
    char frag[32];
    snprintf(frag, sizeof frag, "%.2f", m.allocated ? static_cast<double>(m.resident) / m.allocated : 1.0);
    Line(out, "mem_fragmentation_ratio", std::string(frag));
    snprintf(frag, sizeof frag, "%.2f", m.allocated ? static_cast<double>(m.active) / m.allocated : 1.0);
    Line(out, "allocator_frag_ratio", std::string(frag));
    Settings s = c.server.config().Snapshot();
    Line(out, "maxmemory", static_cast<uint64_t>(s.maxmemory));
    Line(out, "maxmemory_human", HumanBytes(static_cast<uint64_t>(s.maxmemory)));
    Line(out, "maxmemory_policy", s.maxmemory_policy);
#ifdef LAPSE_WITH_JEMALLOC
    Line(out, "mem_allocator", std::string("jemalloc"));
#else
    Line(out, "mem_allocator", std::string("libc"));
#endif
  }
  if (want("persistence")) {
    section("Persistence");
    c.server.persistence().AppendInfo(out);
    out += c.server.aof().InfoFields();
  }
  if (want("stats")) {
    section("Stats");
    Line(out, "total_connections_received", c.server.connections_received().load());
    Line(out, "total_commands_processed", commands);
    Line(out, "instantaneous_ops_per_sec", uint64_t{0});
    Line(out, "total_net_input_bytes", in_bytes);
    Line(out, "total_net_output_bytes", out_bytes);
    Line(out, "rejected_connections", c.server.rejected_connections().load());
    Line(out, "expired_keys", expired);
    char perc[32];
    // Redis's figure: the share of volatile keys probably expired but not yet deleted.
    snprintf(perc, sizeof perc, "%.2f", volatile_keys ? static_cast<double>(100 * stale / volatile_keys) : 0.0);
    Line(out, "expired_stale_perc", std::string(perc));
    Line(out, "expired_time_cap_reached_count", uint64_t{0});
    Line(out, "expire_lag_max_ms", lag_max);
    const Evictor& evictor = c.server.evictor();
    Line(out, "evicted_keys", evictor.evicted_keys());
    Line(out, "evicted_clients", uint64_t{0});  // lapse never evicts clients for memory
    Line(out, "total_eviction_exceeded_time", evictor.total_exceeded_ms());
    Line(out, "current_eviction_exceeded_time", evictor.current_exceeded_ms());
    Line(out, "keyspace_hits", hits);
    Line(out, "keyspace_misses", misses);
    Line(out, "pubsub_channels", static_cast<uint64_t>(c.server.pubsub().ChannelCount(false)));
    Line(out, "pubsub_patterns", static_cast<uint64_t>(c.server.pubsub().PatternCount()));
    Line(out, "pubsubshard_channels", static_cast<uint64_t>(c.server.pubsub().ChannelCount(true)));
    Line(out, "tracking_total_keys", static_cast<uint64_t>(c.server.tracking().keys()));
    Line(out, "tracking_total_items", static_cast<uint64_t>(c.server.tracking().items()));
    Line(out, "tracking_total_prefixes", static_cast<uint64_t>(c.server.tracking().prefixes()));
    Line(out, "total_error_replies", c.server.error_stats().total());
    Line(out, "unexpected_error_replies", uint64_t{0});
  }
  if (want("replication")) {
    // No replicas yet: Redis's figures for a master that never had one.
    section("Replication");
    Line(out, "role", std::string("master"));
    Line(out, "connected_slaves", uint64_t{0});
    Line(out, "master_failover_state", std::string("no-failover"));
    Line(out, "master_replid", ProcessFacts::Get().replid);
    Line(out, "master_replid2", std::string(40, '0'));
    Line(out, "master_repl_offset", uint64_t{0});
    Line(out, "second_repl_offset", std::string("-1"));
    Line(out, "repl_backlog_active", uint64_t{0});
    Line(out, "repl_backlog_size", uint64_t{1048576});
    Line(out, "repl_backlog_first_byte_offset", uint64_t{0});
    Line(out, "repl_backlog_histlen", uint64_t{0});
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
    Line(out, "keys_reclaim_backlog", static_cast<uint64_t>(stale + 0.5L));
    Line(out, "keys_expire_lag_max_ms", lag_max);
  }
  c.reply.Verbatim(out);
}

// ---- SLOWLOG ----

// The dispatcher has checked the subcommand and its arity against the table.
void CmdSlowlog(ConnCommand& c) {
  std::string_view sub = c.args[1];
  Slowlog& log = c.server.slowlog();
  if (EqualsIgnoreCase(sub, "GET")) {
    int64_t count = 10;
    if (c.args.size() > 3) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "SLOWLOG"));
    if (c.args.size() == 3 && (!protocol::ParseInt64(c.args[2], &count) || count < -1))
      return c.reply.Error(errors::kSlowlogCount);
    std::vector<SlowlogEntry> entries = log.Newest(count);
    c.reply.ArrayHeader(entries.size());
    for (const SlowlogEntry& e : entries) {
      c.reply.ArrayHeader(6);
      c.reply.Integer(static_cast<int64_t>(e.id));
      c.reply.Integer(e.unix_seconds);
      c.reply.Integer(e.micros);
      c.reply.ArrayHeader(e.args.size());
      for (const std::string& a : e.args) c.reply.Bulk(a);
      c.reply.Bulk(e.client_addr);
      c.reply.Bulk(e.client_name);
    }
    return;
  }
  if (EqualsIgnoreCase(sub, "LEN")) return c.reply.Integer(static_cast<int64_t>(log.size()));
  if (EqualsIgnoreCase(sub, "RESET")) {
    log.Reset();
    return c.reply.Ok();
  }
  ReplyHelp(c.reply, {"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "GET [<count>]",
                      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                      "    Entries are made of:",
                      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                      "    client name",
                      "LEN",
                      "    Return the length of the slowlog.",
                      "RESET",
                      "    Reset the slowlog."});
}

// ---- Replication stand-ins: lapse is a master without replicas ----

void CmdRole(ConnCommand& c) {
  c.reply.ArrayHeader(3);
  c.reply.Bulk("master");
  c.reply.Integer(0);  // replication offset
  c.reply.ArrayHeader(0);
}

// No replica ever acknowledges: WAIT for none answers 0 at once; WAIT for some waits out its
// timeout (0: for ever) and answers 0, as a Redis master without replicas does. Inside
// MULTI it never blocks. (A client that disconnects while waiting for ever keeps its
// connection's memory until the server stops: no read is pending to notice it.)
awaitable<void> CmdWait(ConnCommand& c) {
  int64_t replicas = 0, timeout_ms = 0;
  if (!protocol::ParseInt64(c.args[1], &replicas)) co_return c.reply.Error(errors::kNotInteger);
  if (!protocol::ParseInt64(c.args[2], &timeout_ms)) co_return c.reply.Error(errors::kTimeoutNotInteger);
  if (timeout_ms < 0) co_return c.reply.Error(errors::kTimeoutNegative);
  if (replicas > 0 && !ShardSet::InAtomicStep()) {
    constexpr int64_t kForever = int64_t{100} * 365 * 24 * 3600 * 1000;
    asio::steady_timer timer(c.server.shards().context(c.session.home));
    timer.expires_after(std::chrono::milliseconds(timeout_ms == 0 ? kForever : std::min(timeout_ms, kForever)));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  c.reply.Integer(0);
}

// lapse's own art: an hourglass, since everything here runs out of time eventually.
void CmdLolwut(ConnCommand& c) {
  int64_t version = 0;
  if (c.args.size() >= 3 && EqualsIgnoreCase(c.args[1], "VERSION") && !protocol::ParseInt64(c.args[2], &version))
    return c.reply.Error(errors::kNotInteger);
  // Redis's versions 5 and 6 draw from numeric arguments after the version (columns, squares,
  // ...) and refuse others; lapse draws its own art whatever the version, but refuses the same.
  if (version == 5 || version == 6) {
    int64_t ignored = 0;
    for (size_t i = 3; i < c.args.size(); ++i) {
      if (!protocol::ParseInt64(c.args[i], &ignored)) return c.reply.Error(errors::kNotInteger);
    }
  }
  std::string art =
      " _________\n"
      " \\:::::::/\n"
      "  \\:::::/\n"
      "   \\:::/\n"
      "    ): (\n"
      "   / .  \\\n"
      "  /  :   \\\n"
      " /__:::___\\\n"
      "\nEvery key has its time.\n"
      "lapse ver. " LAPSE_VERSION " (Redis 7.0 compatible)\n";
  c.reply.Verbatim(art);
}

}  // namespace

void RegisterServerCommands(CommandTable& table) {
  table.Add({"config", -2, kAdmin | kNoScript, 0, 0, 0, CmdConfigOrResetStat, "server", "Gets or sets configuration parameters."},
            {{"get", -3}, {"help", 2}, {"resetstat", 2}, {"rewrite", 2}, {"set", -4}});
  table.Add({"time", 1, kFast, 0, 0, 0, CmdTime, "server", "Returns the server time."});
  table.Add({"shutdown", -1, kAdmin | kNoScript, 0, 0, 0, CmdShutdown, "server", "Stops the server."});
  table.Add({"debug", -2, kAdmin | kProtected | kNoScript, 0, 0, 0, CmdDebug, "server", "Debugging commands: ADVANCE, FREEZE-CLOCK, SET-ACTIVE-EXPIRE, SLEEP."});
  table.Add({"info", -1, kDangerous, 0, 0, 0, CmdInfo, "server", "Returns information and statistics about the server."});
  table.Add({"slowlog", -2, 0, 0, 0, 0, CmdSlowlog, "server", "A container for slow log commands"},
            {{"get", -2}, {"help", 2}, {"len", 2}, {"reset", 2}});
  table.Add({"role", 1, kFast | kDangerous | kNoScript, 0, 0, 0, CmdRole, "server",
             "Return the role of the instance in the context of replication"});
  table.Add({"wait", 3, kNoScript, 0, 0, 0, CmdWait, "generic",
             "Wait for the synchronous replication of all the write commands sent in the context of the current "
             "connection"});
  table.Add({"lolwut", -1, kReadOnly | kFast, 0, 0, 0, CmdLolwut, "server", "Display some computer art and the Redis version"});
}

}  // namespace lapse::server
