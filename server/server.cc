#include "server/server.h"

#include "engine/access.h"
#include "engine/eviction.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "protocol/errors.h"
#include "server/blocking.h"
#include "server/connection.h"
#include "server/log_level.h"
#include "server/migrate.h"
#include "server/process.h"
#include "server/script_undo.h"
#include "engine/item_store.h"

namespace lapse::server {

namespace {
// One core is left to the kernel's network stack and to clients on the same host: measured on
// 2 cores (issue 11), a second event-loop thread there costs every request a sleep and a wake in
// epoll_wait and makes each one dearer than a single thread's.
size_t ThreadCount(const Settings& s) {
  if (s.threads > 0) return static_cast<size_t>(s.threads);
  unsigned hw = std::thread::hardware_concurrency();
  return hw <= 2 ? 1 : hw - 1;
}

}  // namespace

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  // Redis writes an IPv6 peer in brackets: "[::1]:6379".
  std::string ip = endpoint.address().to_string();
  if (endpoint.address().is_v6()) ip = "[" + ip + "]";
  return ip + ":" + std::to_string(endpoint.port());
}

bool FromLoopback(const tcp::socket& socket) {
  boost::system::error_code ec;
  asio::ip::address peer = socket.remote_endpoint(ec).address();
  if (ec) return false;
  if (peer.is_v6() && peer.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, peer.to_v6()).is_loopback();
  }
  return peer.is_loopback();
}

Server::Server(Config& config, engine::Clock& clock)
    : config_(config),
      settings_(config.Snapshot()),
      clock_(clock),
      commands_(BuildCommandTable()),
      shards_(std::make_unique<ShardSet>(ThreadCount(settings_), static_cast<size_t>(settings_.databases), clock,
                                         containers_)),
      counters_(shards_->thread_count()),
      start_time_ms_(clock.NowMs()) {
  blocking_ = std::make_unique<BlockingRegistry>(shards_->size());
  persistence_ = std::make_unique<Persistence>(*this);
  aof_ = std::make_unique<AppendOnlyFile>(*this);
  replication_ = std::make_unique<Replication>(*this);
  keyspace_events_.SetServer(this);
  // Expired items reclaimed under memory pressure are billed as reclamation is, but never
  // held back by the budget.
  evictor_ = std::make_unique<Evictor>(*shards_, [this](const engine::Item& item, int64_t) {
    double ru = engine::RuCharge(engine::RuOp::kDelete, item.Bytes());
    ru_meter_.ChargeReclaimUnmetered(ru);
    if (serverless()) ru_billed_milli_.fetch_add(static_cast<uint64_t>(ru * 1000), std::memory_order_relaxed);
    item.part->info->ru_reclaim_total_milli.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
  });
  for (size_t i = 0; i < shards_->size(); ++i) {
    shards_->shard(i).SetKeyEventListener(&keyspace_events_);
    shards_->shard(i).items().SetChangeFeedRetention(&change_feed_retention_);
  }
  lua_.resize(shards_->thread_count() + 1);
  function_lua_.resize(shards_->thread_count() + 1);
  running_scripts_.Reserve(shards_->thread_count() + 1);
  for (ThreadCounters& tc : counters_) tc.per_command = std::make_unique<CommandCounters[]>(commands_.stat_count());
  ApplySettings();
  // Reclamation of items spends request units: on a provisioned budget only what users left
  // of the current second; serverless, it is never held back but billed at the delete rate.
  shards_->set_latency_monitor(&latency_);
  shards_->set_ready_keys_server([this] { ServeReadyKeys(*this); });
  shards_->set_item_admission([this](const engine::Item& item, int64_t now_ms) {
    double ru = engine::RuCharge(engine::RuOp::kDelete, item.Bytes());
    engine::ContainerInfo& info = *item.part->info;
    if (serverless()) {
      ru_meter_.ChargeReclaimUnmetered(ru);
      ru_billed_milli_.fetch_add(static_cast<uint64_t>(ru * 1000), std::memory_order_relaxed);
      info.ru_reclaim_total_milli.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
      return true;
    }
    engine::RuMeter& meter = info.meter.limit() > 0 ? info.meter : ru_meter_;
    if (!meter.TryChargeReclaim(ru, now_ms)) return false;
    if (&meter != &ru_meter_) ru_meter_.ChargeReclaimUnmetered(ru);
    info.ru_reclaim_total_milli.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
    return true;
  });
  for (const auto& [from, to] : settings_.renamed_commands) {
    if (auto err = commands_.Rename(from, to)) {
      if (!startup_error_) startup_error_ = "rename-command " + from + ": " + *err;
    }
  }
  if (auto err = LoadConfiguredUsers(); err && !startup_error_) startup_error_ = *err;
  config_.set_validator([this](const Settings& current, const Settings& candidate,
                               const std::vector<std::string_view>& names) {
    return ApplyListenerChanges(current, candidate, names);
  });
}

namespace {
std::string TlsSetFailed(std::string_view name, std::string_view reason) {
  return "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " + std::string(reason);
}
}  // namespace

// As Redis's applyTlsCfg, applyTLSPort and applyBind: while TLS is served, a change to what
// the context is made of builds a new one, which serves the connections accepted from then
// on; a new tls-port is bound before the old one is closed, so that a port that cannot be had
// changes nothing; a new bind moves both ports (ApplyBindChange). Runs under the
// configuration's lock, before the settings change; nothing has changed when it fails.
std::optional<std::string> Server::ApplyListenerChanges(const Settings& current, const Settings& candidate,
                                                        const std::vector<std::string_view>& names) {
  bool serving = candidate.tls_port != 0;
  bool port_changed = candidate.tls_port != current.tls_port;
  std::shared_ptr<asio::ssl::context> context;
  if (serving && (TlsContextSettingsDiffer(current, candidate) || tls_context_.Get() == nullptr)) {
    context = BuildTlsContext(candidate);
    if (context == nullptr) {
      return TlsSetFailed(FirstTlsContextSetting(names).value_or("tls-port"),
                          "Unable to update TLS configuration. Check server logs.");
    }
  }
  std::lock_guard lock(listeners_mu_);
  if (listeners_closed_) return std::nullopt;  // shutting down: nothing listens any more
  if (candidate.bind != current.bind) return ApplyBindChange(current, candidate, std::move(context));
  bool rebind = serving && port_changed;
  TcpListeners listeners;
  if (rebind) {
    if (auto err = ListenTcp(shards_->context(0), candidate.bind, static_cast<int>(candidate.tls_port),
                             static_cast<int>(candidate.tcp_backlog), &listeners)) {
      return TlsSetFailed("tls-port", "Unable to listen on this port. Check server logs.");
    }
  }
  if (context) tls_context_.Set(std::move(context));
  if (port_changed) {
    tls_bound_port_.store(static_cast<uint16_t>(BoundPort(listeners)), std::memory_order_relaxed);
    ReplaceListeners(&tls_listeners_, std::move(listeners), true);
  }
  return std::nullopt;
}

// As Redis's changeBindAddr: the plain and TLS ports move to the new addresses, or stay
// where they were when one cannot be bound (server/listeners.h). Runs under the
// configuration's lock and listeners_mu_, with tls-port as `candidate` has it.
std::optional<std::string> Server::ApplyBindChange(const Settings& current, const Settings& candidate,
                                                   std::shared_ptr<asio::ssl::context> context) {
  int backlog = static_cast<int>(current.tcp_backlog);
  bool plain = serves_plain_port_;
  int tls_port = static_cast<int>(candidate.tls_port);
  for (auto& l : live_plain_listeners_) Retire(*l);
  for (auto& l : live_tls_listeners_) Retire(*l);
  TcpListeners new_plain, new_tls;
  std::optional<std::string> err;
  if (plain) err = ListenTcp(shards_->context(0), candidate.bind, bound_port_, backlog, &new_plain);
  if (!err && tls_port != 0) err = ListenTcp(shards_->context(0), candidate.bind, tls_port, backlog, &new_tls);
  if (err) {
    spdlog::warn("Failed to bind, trying to restore old listening sockets.");
    boost::system::error_code ignored;
    for (auto& l : new_plain) l->acceptor.close(ignored);
    for (auto& l : new_tls) l->acceptor.close(ignored);
    new_plain.clear();
    new_tls.clear();
    std::optional<std::string> restore_err;
    if (plain) restore_err = ListenTcp(shards_->context(0), current.bind, bound_port_, backlog, &new_plain);
    if (!restore_err && current.tls_port != 0) {
      restore_err = ListenTcp(shards_->context(0), current.bind, static_cast<int>(current.tls_port), backlog, &new_tls);
    }
    if (restore_err) spdlog::warn("Failed applying restored failed CONFIG SET command: {}", *restore_err);
    tls_bound_port_.store(static_cast<uint16_t>(BoundPort(new_tls)), std::memory_order_relaxed);
    ReplaceListeners(&plain_listeners_, std::move(new_plain), false);
    ReplaceListeners(&tls_listeners_, std::move(new_tls), true);
    return "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.";
  }
  // Before the new TLS listeners start: their first client needs the new context.
  if (context) tls_context_.Set(std::move(context));
  tls_bound_port_.store(static_cast<uint16_t>(BoundPort(new_tls)), std::memory_order_relaxed);
  ReplaceListeners(&plain_listeners_, std::move(new_plain), false);
  ReplaceListeners(&tls_listeners_, std::move(new_tls), true);
  return std::nullopt;
}

// The accept loops run on thread 0, which alone touches the acceptors: the old ones are closed
// there and the new ones start there. live_*_listeners_ mirror them, under listeners_mu_, for
// ApplyBindChange, which retires them from the thread that runs CONFIG SET.
void Server::ReplaceListeners(TcpListeners* slot, TcpListeners fresh, bool tls) {
  (tls ? live_tls_listeners_ : live_plain_listeners_) = fresh;
  asio::post(shards_->context(0), [this, slot, fresh = std::move(fresh), tls] {
    boost::system::error_code ec;
    for (auto& l : *slot) l->acceptor.close(ec);
    *slot = fresh;
    for (auto& l : fresh) asio::co_spawn(shards_->context(0), AcceptTcp(l, tls), asio::detached);
  });
}

// `user` lines of the configuration file, or the aclfile; not both, as in Redis.
std::optional<std::string> Server::LoadConfiguredUsers() {
  if (!settings_.aclfile.empty() && !settings_.users.empty()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. "
           "This setup is very likely to lead to configuration errors and security holes, please define either an "
           "ACL file or declare users directly in your redis.conf, but not both.";
  }
  if (!settings_.aclfile.empty()) {
    std::string error = acl_.LoadFile(settings_.aclfile);
    return error.empty() ? std::nullopt : std::optional<std::string>("aclfile: " + error);
  }
  if (settings_.users.empty()) return std::nullopt;
  std::string lines;
  for (const std::string& user : settings_.users) lines += "user " + user + "\n";
  if (auto err = acl_.LoadUsers(lines, "user lines of the configuration")) return *err;
  return std::nullopt;
}

Server::~Server() {
  replication_->Stop();
  persistence_->Stop();
  shards_->StopAndJoin();
  aof_.reset();  // writes and fsyncs what is buffered
  blocking_->Clear();
}

void Server::ApplySettings() {
  Settings live = config_.Snapshot();
  if (live.requirepass != applied_requirepass_) {
    acl_.SetRequirePass(live.requirepass);
    applied_requirepass_ = live.requirepass;
  }
  acl_.set_pubsub_default_all(live.acl_pubsub_default == "allchannels");
  tls_auth_clients_.store(live.tls_auth_clients, std::memory_order_relaxed);
  ru_meter_.set_limit(static_cast<double>(live.ru_per_second));
  serverless_.store(live.billing == "serverless", std::memory_order_relaxed);
  idle_timeout_s_.store(live.timeout, std::memory_order_relaxed);
  query_buffer_limit_.store(live.client_query_buffer_limit, std::memory_order_relaxed);
  max_bulk_len_.store(live.proto_max_bulk_len, std::memory_order_relaxed);
  hash_max_listpack_entries_.store(static_cast<size_t>(live.hash_max_listpack_entries), std::memory_order_relaxed);
  hash_max_listpack_value_.store(static_cast<size_t>(live.hash_max_listpack_value), std::memory_order_relaxed);
  set_max_intset_entries_.store(static_cast<size_t>(live.set_max_intset_entries), std::memory_order_relaxed);
  list_max_listpack_size_.store(live.list_max_listpack_size, std::memory_order_relaxed);
  zset_max_listpack_entries_.store(static_cast<size_t>(live.zset_max_listpack_entries), std::memory_order_relaxed);
  zset_max_listpack_value_.store(static_cast<size_t>(live.zset_max_listpack_value), std::memory_order_relaxed);
  hll_sparse_max_bytes_.store(live.hll_sparse_max_bytes, std::memory_order_relaxed);
  persistence_->Apply(live);
  tracking_.set_max_keys(live.tracking_table_max_keys);
  change_feed_retention_.store(static_cast<uint64_t>(live.change_feed_retention), std::memory_order_relaxed);
  auto store_limit = [](std::atomic<int64_t>* to, const OutputBufferLimit& from) {
    to[0].store(from.hard, std::memory_order_relaxed);
    to[1].store(from.soft, std::memory_order_relaxed);
    to[2].store(from.soft_seconds, std::memory_order_relaxed);
  };
  store_limit(output_limit_normal_, live.output_limit_normal);
  store_limit(output_limit_pubsub_, live.output_limit_pubsub);
  maxmemory_.store(live.maxmemory, std::memory_order_relaxed);
  evictor_->Configure({*engine::ParseEvictionPolicy(live.maxmemory_policy), static_cast<int>(live.maxmemory_samples),
                       static_cast<int>(live.maxmemory_eviction_tenacity)});
  engine::Access().lfu.store(engine::TracksFrequency(evictor_->policy()), std::memory_order_relaxed);
  evictor_->SizeReadHistory(live.maxmemory);
  engine::Access().lfu_log_factor.store(static_cast<int>(live.lfu_log_factor), std::memory_order_relaxed);
  engine::Access().lfu_decay_minutes.store(static_cast<int>(live.lfu_decay_time), std::memory_order_relaxed);
  keyspace_events_.Configure(live.notify_keyspace_events);
  aof_->Configure(live);
  slowlog_.Configure(live.slowlog_log_slower_than, live.slowlog_max_len);
  acl_.SetLogMaxLen(static_cast<size_t>(live.acllog_max_len));
  latency_.set_threshold_ms(live.latency_monitor_threshold);
  latency_tracking_.store(live.latency_tracking, std::memory_order_relaxed);
  busy_reply_threshold_ms_.store(live.busy_reply_threshold, std::memory_order_relaxed);
  spdlog::set_level(SpdlogLevel(live.loglevel));
}

bool Server::OutOfMemory() {
  int64_t limit = maxmemory_.load(std::memory_order_relaxed);
  if (limit <= 0) return false;
  bool over = memory_.UsedBytes() > static_cast<uint64_t>(limit);
  if (over) over = evictor_->MakeRoom(memory_, static_cast<uint64_t>(limit), clock_.NowMs()) == Evictor::Outcome::kNothingToEvict;
  evictor_->NoteOverLimit(memory_.UsedBytes() > static_cast<uint64_t>(limit));
  return over;
}

awaitable<void> Server::ResetStats(size_t home) {
  connections_received_.store(0);
  rejected_connections_.store(0);
  error_stats_.Reset();
  instantaneous_metrics_.Reset();
  evictor_->ResetStats();
  shards_->RunOnAll([](engine::Shard& shard) { shard.ResetStats(); });
  shards_->ResetExpireStats();
  // A thread's counters are written by that thread alone: the others are zeroed on their
  // own threads, and the reply waits for them. Inside EXEC, which holds shards that those
  // threads may be waiting for, it cannot wait: the zeroing is then only posted.
  for (size_t t = 0; t < shards_->thread_count(); ++t) {
    auto reset = [this, t] {
      ThreadCounters& tc = counters_[t];
      tc.commands.store(0, std::memory_order_relaxed);
      tc.net_input_bytes.store(0, std::memory_order_relaxed);
      tc.net_output_bytes.store(0, std::memory_order_relaxed);
      tc.reads_processed.store(0, std::memory_order_relaxed);
      tc.writes_processed.store(0, std::memory_order_relaxed);
      tc.reply_buffer_shrinks.store(0, std::memory_order_relaxed);
      tc.reply_buffer_expands.store(0, std::memory_order_relaxed);
      for (size_t i = 0; i < commands_.stat_count(); ++i) {
        CommandCounters& cc = tc.per_command[i];
        cc.calls.store(0, std::memory_order_relaxed);
        cc.nsec.store(0, std::memory_order_relaxed);
        cc.rejected.store(0, std::memory_order_relaxed);
        cc.failed.store(0, std::memory_order_relaxed);
        if (CommandLatencyHistogram* h = cc.histogram.load(std::memory_order_acquire)) h->Clear();
      }
    };
    if (t == home) {
      reset();
    } else if (ShardSet::InAtomicStep()) {
      asio::post(shards_->context(t), reset);
    } else {
      co_await asio::co_spawn(
          shards_->context(t),
          [reset]() -> awaitable<void> {
            reset();
            co_return;
          },
          use_awaitable);
    }
  }
}

LuaEngine& Server::lua() {
  int t = ShardSet::CurrentThreadIndex();
  ThreadLua& mine = lua_[t >= 0 ? static_cast<size_t>(t) : lua_.size() - 1];
  uint64_t epoch = scripts_.epoch();
  if (mine.engine == nullptr || mine.epoch != epoch) {
    mine.engine = std::make_unique<LuaEngine>(LuaEngine::Mode::kScripts, mine.vm_bytes.get());
    mine.epoch = epoch;
  }
  return *mine.engine;
}

LuaEngine& Server::function_lua() {
  int t = ShardSet::CurrentThreadIndex();
  ThreadLua& mine = function_lua_[t >= 0 ? static_cast<size_t>(t) : function_lua_.size() - 1];
  std::shared_ptr<const FunctionRegistry::Snapshot> libraries = functions_.Current();
  if (mine.engine == nullptr || mine.epoch != libraries->epoch) {
    mine.engine = std::make_unique<LuaEngine>(LuaEngine::Mode::kFunctions, mine.vm_bytes.get());
    mine.epoch = libraries->epoch;
    std::vector<FunctionInfo> loaded;
    for (const auto& [name, library] : libraries->libraries) {
      // Accepted by FUNCTION LOAD already: it loads the same way here.
      if (auto error = mine.engine->LoadLibrary(LibraryBody(library.code), true, &loaded)) {
        spdlog::error("library '{}' failed to load on thread {}: {}", name, t, *error);
      }
    }
  }
  return *mine.engine;
}

Server::LuaVmMemory Server::lua_vm_memory() const {
  auto sum = [](const std::vector<ThreadLua>& states) {
    int64_t bytes = 0;
    for (const ThreadLua& state : states) bytes += state.vm_bytes->load(std::memory_order_relaxed);
    // Redis shows lua_gc's count of kilobytes, times 1024.
    return static_cast<uint64_t>(std::max<int64_t>(bytes, 0)) / 1024 * 1024;
  };
  return {sum(lua_), sum(function_lua_)};
}

double Server::SettleCharge(const RequestCharge& charge, bool rejected, int64_t now_ms) {
  if (charge.throttled) return 0;
  double ru = rejected ? engine::kRejectedRu : charge.ru;
  // A script that may still start over is charged once its run counts (server/script_undo.h).
  // A container's charge is never held: a command on items makes the step hold every shard
  // first, after which it cannot start over.
  if (ScriptUndo* undo = ActiveScriptUndo(); undo != nullptr && charge.container == nullptr) [[unlikely]] {
    undo->HoldCharge(ru);
    return ru;
  }
  engine::RuMeter* meter = &ru_meter_;
  if (charge.container != nullptr) {
    charge.container->ru_user_total_milli.fetch_add(static_cast<int64_t>(ru * 1000), std::memory_order_relaxed);
    if (charge.container->meter.limit() > 0) meter = &charge.container->meter;
  }
  meter->ChargeUser(ru, now_ms);
  int t = ShardSet::CurrentThreadIndex();
  if (t >= 0) {
    ThreadCounters& tc = counters_[static_cast<size_t>(t)];
    tc.Bump(tc.ru_user_milli, static_cast<uint64_t>(ru * 1000));
  }
  return ru;
}

void Server::Start() {
  shards_->Start();
  persistence_->Start();
  replication_->Start();
  asio::co_spawn(shards_->context(0), SampleInstantaneousMetrics(), asio::detached);
}

awaitable<void> Server::SampleInstantaneousMetrics() {
  asio::steady_timer timer(shards_->context(0));
  boost::system::error_code ec;
  while (!shutting_down()) {
    InstantaneousMetrics::Readings totals{};
    for (const ThreadCounters& tc : counters_) {
      totals[InstantaneousMetrics::kCommands] += tc.commands.load(std::memory_order_relaxed);
      totals[InstantaneousMetrics::kNetInput] += tc.net_input_bytes.load(std::memory_order_relaxed);
      totals[InstantaneousMetrics::kNetOutput] += tc.net_output_bytes.load(std::memory_order_relaxed);
    }
    auto now = std::chrono::steady_clock::now().time_since_epoch();
    instantaneous_metrics_.Sample(std::chrono::duration_cast<std::chrono::milliseconds>(now).count(), totals);
    // Also a step of Redis's cron (migrateCloseTimedoutSockets).
    CloseIdleMigrateSockets(clock_.NowMs());
    timer.expires_after(InstantaneousMetrics::kPeriod);
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

// Redis's rules: port 0 with a TLS port or a unix socket serves no plain TCP port; without
// either, port 0 binds a port the kernel picks, as lapse always did.
std::optional<std::string> Server::Listen() {
  if (startup_error_) return startup_error_;
  asio::io_context& ctx = shards_->context(0);
  int backlog = static_cast<int>(settings_.tcp_backlog);
  std::lock_guard lock(listeners_mu_);
  serves_plain_port_ = settings_.port != 0 || (settings_.tls_port == 0 && settings_.unixsocket.empty());
  if (serves_plain_port_) {
    if (auto err = ListenTcp(ctx, settings_.bind, static_cast<int>(settings_.port), backlog, &plain_listeners_)) {
      return "Failed listening on port " + std::to_string(settings_.port) + " (TCP), aborting. " + *err;
    }
    bound_port_ = static_cast<uint16_t>(BoundPort(plain_listeners_));
    if (bound_port_ == 0) bound_port_ = static_cast<uint16_t>(settings_.port);
  }
  if (settings_.tls_port != 0) {
    std::shared_ptr<asio::ssl::context> context = BuildTlsContext(settings_);
    if (context == nullptr) return "Failed to configure TLS. Check logs for more info.";
    tls_context_.Set(std::move(context));
    if (auto err = ListenTcp(ctx, settings_.bind, static_cast<int>(settings_.tls_port), backlog, &tls_listeners_)) {
      return "Failed listening on port " + std::to_string(settings_.tls_port) + " (TLS), aborting. " + *err;
    }
    tls_bound_port_.store(static_cast<uint16_t>(BoundPort(tls_listeners_)), std::memory_order_relaxed);
  }
  if (!settings_.unixsocket.empty()) {
    if (auto err = ListenUnix(ctx, UnixSocketPath(), static_cast<int>(settings_.unixsocketperm), backlog,
                              &unix_listener_)) {
      return err;
    }
  }
  if (plain_listeners_.empty() && tls_listeners_.empty() && unix_listener_ == nullptr) {
    return "Configured to not listen anywhere, exiting.";
  }
  live_plain_listeners_ = plain_listeners_;
  live_tls_listeners_ = tls_listeners_;
  for (auto& l : plain_listeners_) asio::co_spawn(ctx, AcceptTcp(l, false), asio::detached);
  for (auto& l : tls_listeners_) asio::co_spawn(ctx, AcceptTcp(l, true), asio::detached);
  if (unix_listener_) asio::co_spawn(ctx, AcceptUnix(unix_listener_), asio::detached);

  signals_ = std::make_unique<asio::signal_set>(ctx, SIGINT, SIGTERM);
  signals_->async_wait([this](const boost::system::error_code& error, int signal) {
    if (error) return;
    spdlog::warn("received signal {}, shutting down", signal);
    RequestShutdown();
  });
  return std::nullopt;
}

// Relative paths are taken from `dir`, as Redis, which changes into it, takes them.
std::string Server::UnixSocketPath() const {
  if (settings_.unixsocket.empty() || settings_.unixsocket[0] == '/') return settings_.unixsocket;
  return EffectiveDir(settings_) + "/" + settings_.unixsocket;
}

std::string Server::ListeningOn() const {
  std::string out;
  auto add = [&out](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  for (const std::string& address : SplitBindAddresses(settings_.bind)) {
    if (serves_plain_port_) add(address + ":" + std::to_string(port()));
    if (tls_port() != 0) add(address + ":" + std::to_string(tls_port()) + " (TLS)");
  }
  if (!settings_.unixsocket.empty()) add(UnixSocketPath());
  return out;
}

awaitable<void> Server::AcceptTcp(std::shared_ptr<TcpListener> listener, bool tls) {
  tcp::acceptor& acceptor = listener->acceptor;
  while (!shutting_down() && acceptor.is_open() && !listener->retired.load()) {
    size_t thread = next_thread_++ % shards_->thread_count();
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(shards_->context(thread), asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || listener->retired.load()) break;
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    ClientPeer peer;
    boost::system::error_code ec1, ec2;
    tcp::endpoint remote = socket.remote_endpoint(ec1), local = socket.local_endpoint(ec2);
    peer.addr = ec1 ? "?" : FormatEndpoint(remote);
    peer.laddr = ec2 ? "?" : FormatEndpoint(local);
    peer.local = FromLoopback(socket);
    Settings live = config_.Snapshot();
    ApplyTcpKeepAlive(socket, live.tcp_keepalive);
    Admit(ClientStream::Socket(std::move(socket)), std::move(peer), tls, thread, live);
  }
}

awaitable<void> Server::AcceptUnix(std::shared_ptr<local_stream::acceptor> listener) {
  while (!shutting_down() && listener->is_open()) {
    size_t thread = next_thread_++ % shards_->thread_count();
    boost::system::error_code ec;
    local_stream::socket socket =
        co_await listener->async_accept(shards_->context(thread), asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    // CLIENT LIST names both ends by the socket's path, as Redis does.
    ClientPeer peer{settings_.unixsocket + ":0", settings_.unixsocket + ":0", true, true};
    Admit(ClientStream::Socket(std::move(socket)), std::move(peer), false, thread, config_.Snapshot());
  }
}

// A client refused at once (maxclients, protected mode) gets Redis's error in clear text on
// the plain port and the unix socket; on the TLS port, where no handshake has happened yet,
// it is only closed, as Redis's write to a TLS connection not yet accepted goes nowhere.
void Server::Admit(ClientStream::Socket socket, ClientPeer peer, bool tls, size_t thread, const Settings& live) {
  connections_received_.fetch_add(1, std::memory_order_relaxed);
  std::string_view refusal;
  if (clients_.size() >= static_cast<size_t>(live.maxclients)) {
    rejected_connections_.fetch_add(1, std::memory_order_relaxed);
    refusal = protocol::errors::kMaxClients;
  } else if (live.protected_mode && !acl_.DefaultNeedsAuth() && !peer.local) {
    refusal = protocol::errors::kProtectedMode;
  }
  std::shared_ptr<asio::ssl::context> context = tls ? tls_context_.Get() : nullptr;
  if (!refusal.empty() || (tls && context == nullptr)) {
    boost::system::error_code ec;
    std::string msg = "-" + std::string(refusal) + "\r\n";
    if (!tls) asio::write(socket, asio::buffer(msg), ec);
    socket.close(ec);
    return;
  }
  auto conn = std::make_shared<Connection>(*this, std::move(socket), std::move(peer), std::move(context), thread);
  asio::co_spawn(shards_->context(thread), Connection::Serve(std::move(conn)), asio::detached);
}

void Server::RequestShutdown() {
  {
    std::lock_guard lock(shutdown_mu_);
    shutting_down_.store(true);
  }
  shutdown_cv_.notify_all();
}

void Server::WaitForShutdown() {
  {
    std::unique_lock lock(shutdown_mu_);
    shutdown_cv_.wait(lock, [this] { return shutting_down_.load(); });
  }
  spdlog::info("lapse is shutting down");
  NotifyStopping();
  {
    // A CONFIG SET bind from now on moves nothing: the listeners are going.
    std::lock_guard lock(listeners_mu_);
    listeners_closed_ = true;
    asio::post(shards_->context(0), [this] {
      boost::system::error_code ec;
      for (auto& l : plain_listeners_) l->acceptor.close(ec);
      for (auto& l : tls_listeners_) l->acceptor.close(ec);
      if (unix_listener_) unix_listener_->close(ec);
      if (signals_) signals_->cancel(ec);
    });
  }
  // Before the shard threads stop: a sync's walk may wait for a shard a script holds.
  replication_->Stop();
  shards_->StopAndJoin();
  // SIGTERM and SIGINT save as Redis does when `save` rules exist (SHUTDOWN saved already).
  persistence_->Stop();
  if (persistence_->shutdown_save_needed()) {
    if (auto err = persistence_->SaveForeground()) spdlog::warn("Error trying to save the DB: {}", *err);
  }
  if (unix_listener_) {
    spdlog::info("Removing the unix socket file.");
    if (::unlink(UnixSocketPath().c_str()) != 0) {
      spdlog::warn("Error removing the unix socket file: {}", std::strerror(errno));
    }
  }
  spdlog::info("bye");
}

}  // namespace lapse::server
