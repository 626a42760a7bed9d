// File: server/server.h
//
// The process: configuration, clock, command table, shards and their threads, the client
// registry, the listener and shutdown. There is one Server per process and it is passed
// explicitly to whatever needs it; nothing is global.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/clock.h"
#include "engine/collection.h"
#include "engine/container.h"
#include "server/acl.h"
#include "server/aof.h"
#include "server/blocking.h"
#include "server/client_buffer_peaks.h"
#include "server/client_pause.h"
#include "server/client_stream.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/error_stats.h"
#include "server/instantaneous_metrics.h"
#include "server/lua_engine.h"
#include "server/running_scripts.h"
#include "server/script_cache.h"
#include "server/slowlog.h"
#include "server/config.h"
#include "server/eviction.h"
#include "server/memory.h"
#include "server/monitor.h"
#include "server/persistence.h"
#include "server/keyspace_events.h"
#include "server/latency.h"
#include "server/listeners.h"
#include "server/pubsub.h"
#include "server/replication.h"
#include "server/shard_set.h"
#include "server/tls.h"
#include "server/tracking.h"

namespace lapse::server {

// One command's figures in INFO commandstats.
struct CommandCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> nsec{0};      // summed in nanoseconds; INFO shows microseconds
  std::atomic<uint64_t> rejected{0};  // refused before running (arity, NOAUTH, OOM, ...)
  std::atomic<uint64_t> failed{0};    // ran and answered an error
  // Its calls' latencies (LATENCY HISTOGRAM), made by the owning thread on the first call
  // it records; others only read it.
  std::atomic<CommandLatencyHistogram*> histogram{nullptr};
  ~CommandCounters() { delete histogram.load(); }
  CommandLatencyHistogram& Histogram() {
    CommandLatencyHistogram* h = histogram.load(std::memory_order_acquire);
    if (h == nullptr) [[unlikely]] {
      h = new CommandLatencyHistogram();
      histogram.store(h, std::memory_order_release);
    }
    return *h;
  }
};

// Counters written by one thread each and summed by INFO.
struct ThreadCounters {
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> ru_user_milli{0};
  // Redis's total_reads_processed and total_writes_processed: reads of a client's socket
  // (each wait for input that ended, with bytes, at its end or in error) and writes of
  // replies to it.
  std::atomic<uint64_t> reads_processed{0};
  std::atomic<uint64_t> writes_processed{0};
  // The connections' reply buffer let go of after a large write, and grown past what it
  // kept (server/connection.cc says when).
  std::atomic<uint64_t> reply_buffer_shrinks{0};
  std::atomic<uint64_t> reply_buffer_expands{0};
  ClientBufferPeaks client_buffers;
  std::unique_ptr<CommandCounters[]> per_command;  // by CommandSpec::stat_id
  static void Bump(std::atomic<uint64_t>& c, uint64_t by = 1) {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
};

// protected-mode's and enable-debug-command local's test, as Redis makes it: the peer is
// 127.0.0.0/8 or ::1 (an IPv4 peer on an IPv6 socket arrives as ::ffff:127.x.y.z).
bool FromLoopback(const tcp::socket& socket);
// An address as CLIENT LIST shows it: "ip:port", "[ipv6]:port".
std::string FormatEndpoint(const tcp::endpoint& endpoint);

class Server {
 public:
  Server(Config& config, engine::Clock& clock);
  ~Server();

  // Starts the shard threads. Listen() then accepts clients; tests may skip it.
  void Start();
  // Binds and starts accepting; returns an error message on failure.
  std::optional<std::string> Listen();
  // Blocks until shutdown was requested, then stops everything.
  void WaitForShutdown();
  // Asks the server to stop (SHUTDOWN, SIGINT, SIGTERM). Safe from any thread.
  void RequestShutdown();
  bool shutting_down() const { return shutting_down_.load(); }

  Config& config() { return config_; }
  const Settings& settings() const { return settings_; }
  engine::Clock& clock() const { return clock_; }
  const CommandTable& commands() const { return commands_; }
  ShardSet& shards() { return *shards_; }
  // The append-only log (server/aof.h).
  AppendOnlyFile& aof() { return *aof_; }
  const AppendOnlyFile& aof() const { return *aof_; }
  // The master side of replication (server/replication.h).
  Replication& replication() { return *replication_; }
  const Replication& replication() const { return *replication_; }
  engine::ContainerCatalog& containers() { return containers_; }
  ClientRegistry& clients() { return clients_; }
  Acl& acl() { return acl_; }
  BlockingRegistry& blocking() { return *blocking_; }
  ThreadCounters& counters(size_t thread) { return counters_[thread]; }
  size_t thread_count() const { return counters_.size(); }
  uint16_t port() const { return bound_port_; }
  // Where clients can connect, for the start-up log line.
  std::string ListeningOn() const;
  uint16_t tls_port() const { return tls_bound_port_.load(std::memory_order_relaxed); }
  // tls-auth-clients, read by each new TLS connection.
  Settings::TlsAuthClients tls_auth_clients() const { return tls_auth_clients_.load(std::memory_order_relaxed); }
  int64_t start_time_ms() const { return start_time_ms_; }
  std::atomic<uint64_t>& connections_received() { return connections_received_; }
  std::atomic<uint64_t>& rejected_connections() { return rejected_connections_; }
  ErrorStats& error_stats() { return error_stats_; }
  Slowlog& slowlog() { return slowlog_; }
  ScriptCache& scripts() { return scripts_; }
  // The calling thread's Lua state, made on first use and made afresh after SCRIPT FLUSH.
  LuaEngine& lua();
  FunctionRegistry& functions() { return functions_; }
  // The memory of the Lua states, summed over the threads' states (INFO's
  // used_memory_vm_eval and used_memory_vm_functions); from any thread.
  struct LuaVmMemory {
    uint64_t eval = 0, functions = 0;
  };
  LuaVmMemory lua_vm_memory() const;
  RunningScripts& running_scripts() { return running_scripts_; }
  int64_t busy_reply_threshold_ms() const { return busy_reply_threshold_ms_.load(std::memory_order_relaxed); }
  // The calling thread's Lua state for functions, made afresh, with every library loaded,
  // whenever the libraries have changed since it was made.
  LuaEngine& function_lua();

  // The server-wide request-unit budget, shared by every container without its own.
  engine::RuMeter& ru_meter() { return ru_meter_; }
  bool serverless() const { return serverless_.load(std::memory_order_relaxed); }
  std::atomic<uint64_t>& ru_billed_milli() { return ru_billed_milli_; }
  // The idle timeout in seconds (0: none), read by every connection's watchdog.
  int64_t idle_timeout_s() const { return idle_timeout_s_.load(std::memory_order_relaxed); }
  // Live limits every connection reads (CONFIG SET changes them for connected clients too).
  int64_t query_buffer_limit() const { return query_buffer_limit_.load(std::memory_order_relaxed); }
  int64_t max_bulk_len() const { return max_bulk_len_.load(std::memory_order_relaxed); }
  engine::CollectionLimits collection_limits() const {
    return {hash_max_listpack_entries_.load(std::memory_order_relaxed), hash_max_listpack_value_.load(std::memory_order_relaxed),
            set_max_intset_entries_.load(std::memory_order_relaxed), list_max_listpack_size_.load(std::memory_order_relaxed),
            zset_max_listpack_entries_.load(std::memory_order_relaxed), zset_max_listpack_value_.load(std::memory_order_relaxed)};
  }
  size_t hll_sparse_max_bytes() const { return static_cast<size_t>(hll_sparse_max_bytes_.load(std::memory_order_relaxed)); }
  // The client-output-buffer-limit of a normal client, or of a subscribed one (Redis's
  // pubsub class).
  OutputBufferLimit output_limit(bool subscriber = false) const {
    const auto& l = subscriber ? output_limit_pubsub_ : output_limit_normal_;
    return {l[0].load(std::memory_order_relaxed), l[1].load(std::memory_order_relaxed),
            l[2].load(std::memory_order_relaxed)};
  }
  PubSub& pubsub() { return pubsub_; }
  Monitors& monitors() { return monitors_; }
  LatencyMonitor& latency() { return latency_; }
  bool latency_tracking() const { return latency_tracking_.load(std::memory_order_relaxed); }
  // A command's (or subcommand's) latency histogram, summed over the threads; total 0 when
  // it has none.
  CommandLatencyHistogram::Totals LatencyTotals(uint32_t stat_id) {
    CommandLatencyHistogram::Totals totals;
    for (ThreadCounters& tc : counters_) {
      if (CommandLatencyHistogram* h = tc.per_command[stat_id].histogram.load(std::memory_order_acquire)) h->AddTo(totals);
    }
    return totals;
  }
  ClientPause& client_pause() { return client_pause_; }
  // INFO stats' instantaneous figures, sampled on thread 0 (server/instantaneous_metrics.h).
  const InstantaneousMetrics& instantaneous_metrics() const { return instantaneous_metrics_; }
  // Snapshots (SAVE, BGSAVE, save rules, loading); DUMP reads it through a const Server.
  Persistence& persistence() const { return *persistence_; }
  // Commands report their changes here (NotifyKeyspace); const, since a command that only
  // holds its shard sees a const Server.
  const KeyspaceEvents& keyspace_events() const { return keyspace_events_; }
  // Client-side caching: who tracks which keys (server/tracking.h).
  Tracking& tracking() { return tracking_; }
  // Before a command: when maxmemory is set and the process uses more, frees memory as
  // maxmemory-policy says (server/eviction.h). True when it could not get under the limit:
  // commands that may grow memory are then refused with the OOM error.
  bool OutOfMemory();
  Evictor& evictor() { return *evictor_; }
  const Evictor& evictor() const { return *evictor_; }
  // True when maxmemory is set and the process uses more (a script's writes are refused then;
  // scripts never evict, as in Redis).
  bool OverMaxmemory() {
    int64_t limit = maxmemory_.load(std::memory_order_relaxed);
    return limit > 0 && memory_.UsedBytes() > static_cast<uint64_t>(limit);
  }
  // Whether Redis would store a small integer value (0 to 9999) as its one shared object,
  // which OBJECT REFCOUNT shows: unless a maxmemory is set with an LRU or LFU policy, whose
  // access stamp must be per key. lapse shares nothing; this keeps the reply Redis's.
  bool SharesSmallIntegers() const {
    engine::EvictionPolicy p = evictor_->policy();
    bool stamped = p == engine::EvictionPolicy::kAllKeysLru || p == engine::EvictionPolicy::kVolatileLru ||
                   engine::TracksFrequency(p);
    return maxmemory_.load(std::memory_order_relaxed) == 0 || !stamped;
  }
  // Applies live settings that need more than a read (after CONFIG SET).
  void ApplySettings();
  // CONFIG RESETSTAT, from thread `home`: zeroes the counters of INFO stats, the shards' at
  // once and the other threads' before anything posted to them later, so a command sent
  // after the reply is counted afresh.
  awaitable<void> ResetStats(size_t home);
  // Settles a finished request's charge: rejected requests cost kRejectedRu, throttled ones
  // nothing; charges the right budget and the calling thread's totals. Returns the charge.
  double SettleCharge(const RequestCharge& charge, bool rejected, int64_t now_ms);


 private:
  // Accept clients until their listener is closed or retired; over TLS when `tls`.
  awaitable<void> AcceptTcp(std::shared_ptr<TcpListener> listener, bool tls);
  awaitable<void> AcceptUnix(std::shared_ptr<local_stream::acceptor> listener);
  // Refuses a new client (maxclients, protected mode) or starts serving it on `thread`;
  // `live` is the settings as the client arrived.
  void Admit(ClientStream::Socket socket, ClientPeer peer, bool tls, size_t thread, const Settings& live);
  // CONFIG SET of bind and the tls-* settings: builds the TLS context again when what it is
  // made of changed (server/tls.h), and moves the listeners when bind or tls-port changed.
  std::optional<std::string> ApplyListenerChanges(const Settings& current, const Settings& candidate,
                                                  const std::vector<std::string_view>& names);
  // Moves the listeners to candidate.bind and, once they are bound, installs `context` (the
  // new TLS context, if any). Called under listeners_mu_.
  std::optional<std::string> ApplyBindChange(const Settings& current, const Settings& candidate,
                                             std::shared_ptr<asio::ssl::context> context);
  std::string UnixSocketPath() const;
  // Puts `fresh` in `*slot` (plain_listeners_ or tls_listeners_) on thread 0 and closes what
  // was there. Called under listeners_mu_.
  void ReplaceListeners(TcpListeners* slot, TcpListeners fresh, bool tls);
  std::optional<std::string> LoadConfiguredUsers();
  // Redis's serverCron step that feeds the instantaneous figures, every
  // InstantaneousMetrics::kPeriod until shutdown.
  awaitable<void> SampleInstantaneousMetrics();

  Config& config_;
  // Settings as at start-up: only the immutable ones (databases, threads, debug) are read
  // from here; live ones come from config_.
  Settings settings_;
  engine::Clock& clock_;
  CommandTable commands_;
  engine::ContainerCatalog containers_;  // before shards_: the shards refer to it
  // Before shards_: a blocked client's coroutine, destroyed with its thread's context in
  // ~ShardSet, still counts itself out of it.
  std::unique_ptr<BlockingRegistry> blocking_;
  LatencyMonitor latency_;  // before shards_: their reclaim loops report to it
  std::unique_ptr<ShardSet> shards_;
  std::unique_ptr<Persistence> persistence_;
  std::vector<ThreadCounters> counters_;
  std::unique_ptr<AppendOnlyFile> aof_;  // after shards_: its rewrites hold them
  std::unique_ptr<Replication> replication_;  // after shards_ and persistence_: its syncs walk them
  ClientRegistry clients_;
  Acl acl_{commands_, clients_};
  std::string applied_requirepass_;  // the default user's password follows requirepass when it changes
  // The listeners, touched on thread 0 only once it runs (CONFIG SET bind and tls-port post
  // there): one per bind address for the plain port (none with port 0 and a TLS port or unix
  // socket) and for tls-port (none while it is 0), and the unix socket.
  TcpListeners plain_listeners_;
  TcpListeners tls_listeners_;
  std::shared_ptr<local_stream::acceptor> unix_listener_;
  // The same TCP listeners for CONFIG SET, which retires them from its own thread.
  std::mutex listeners_mu_;
  TcpListeners live_plain_listeners_;
  TcpListeners live_tls_listeners_;
  bool serves_plain_port_ = false;
  bool listeners_closed_ = false;  // set at shutdown, under listeners_mu_
  TlsContextHolder tls_context_;
  std::atomic<Settings::TlsAuthClients> tls_auth_clients_{Settings::TlsAuthClients::kYes};
  std::atomic<uint16_t> tls_bound_port_{0};
  std::unique_ptr<asio::signal_set> signals_;
  uint16_t bound_port_ = 0;
  int64_t start_time_ms_;
  size_t next_thread_ = 0;
  std::atomic<bool> shutting_down_{false};
  std::mutex shutdown_mu_;
  std::condition_variable shutdown_cv_;
  // A configuration the constructor could not apply (rename-command); Listen reports it.
  std::optional<std::string> startup_error_;
  std::atomic<uint64_t> connections_received_{0};
  std::atomic<uint64_t> rejected_connections_{0};
  ErrorStats error_stats_;
  InstantaneousMetrics instantaneous_metrics_;
  PubSub pubsub_{[this] { return output_limit(true); }, [this] { return clock_.NowMs(); }};
  Tracking tracking_{clients_, [this](bool subscriber) { return output_limit(subscriber); },
                     [this] { return clock_.NowMs(); }};
  KeyspaceEvents keyspace_events_{pubsub_, &tracking_};
  ClientPause client_pause_;
  std::atomic<bool> latency_tracking_{true};
  Monitors monitors_{[this] { return output_limit(false); }, [this] { return clock_.NowMs(); }};
  Slowlog slowlog_;
  ScriptCache scripts_;
  FunctionRegistry functions_;
  RunningScripts running_scripts_;
  std::atomic<int64_t> busy_reply_threshold_ms_{5000};
  struct ThreadLua {
    // What the thread's states hold, counted by their allocator; made once and never moved,
    // so INFO reads it from any thread while the engine is replaced. Declared before the
    // engine so that it outlives it: closing a Lua state frees through that allocator.
    std::unique_ptr<std::atomic<int64_t>> vm_bytes = std::make_unique<std::atomic<int64_t>>(0);
    std::unique_ptr<LuaEngine> engine;
    uint64_t epoch = 0;
  };
  std::vector<ThreadLua> lua_;  // one per event-loop thread, and a last one for any other thread
  std::vector<ThreadLua> function_lua_;  // the same, for functions
  engine::RuMeter ru_meter_;
  std::atomic<bool> serverless_{false};
  std::atomic<int64_t> idle_timeout_s_{0};
  std::atomic<int64_t> query_buffer_limit_{0};
  std::atomic<int64_t> max_bulk_len_{0};
  std::atomic<size_t> hash_max_listpack_entries_{512}, hash_max_listpack_value_{64}, set_max_intset_entries_{512};
  std::atomic<int64_t> list_max_listpack_size_{-2};
  std::atomic<size_t> zset_max_listpack_entries_{128}, zset_max_listpack_value_{64};
  std::atomic<int64_t> hll_sparse_max_bytes_{3000};
  std::atomic<uint64_t> change_feed_retention_{engine::ItemStore::kDefaultChangeFeedRetention};  // every shard's ItemStore reads it
  std::atomic<int64_t> output_limit_normal_[3]{}, output_limit_pubsub_[3]{};  // hard, soft, soft seconds
  std::atomic<int64_t> maxmemory_{0};
  MemoryGauge memory_;
  std::unique_ptr<Evictor> evictor_;
  std::atomic<uint64_t> ru_billed_milli_{0};
};

}  // namespace lapse::server
