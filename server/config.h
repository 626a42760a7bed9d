// File: server/config.h
//
// Server settings from a redis.conf-style file and command-line flags (`lapse-server
// [file] [--name value ...]`; flags override the file). Names follow Redis's (`port`,
// `bind`, `maxclients`, `requirepass`, ...). CONFIG GET/SET read and change the live
// values through Get/Set, which validate exactly as the file parser does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lapse::server {

// client-output-buffer-limit for one class of client: disconnect when the pending output
// exceeds `hard` bytes, or stays above `soft` bytes for more than `soft_seconds`. 0: none.
// Redis's memtoull: decimal digits with an optional b/k/kb/m/mb/g/gb unit (case-insensitive),
// no sign; digits past 2^64 saturate and the unit's product wraps, as in Redis (so "" and "k"
// read as 0); nullopt when malformed.
std::optional<uint64_t> ParseMemory(std::string_view v);

struct OutputBufferLimit {
  int64_t hard = 0;
  int64_t soft = 0;
  int64_t soft_seconds = 0;
  // soft_seconds in ms, saturated (any count of seconds is accepted, as in Redis).
  int64_t soft_ms() const { return soft_seconds > INT64_MAX / 1000 ? INT64_MAX : soft_seconds * 1000; }
};

// What the limits count of `pending` unsent bytes (replies, pushes). Redis fills a client's
// fixed 16 KiB reply buffer (PROTO_REPLY_CHUNK_BYTES) first and counts only what spills into
// its reply list, so a limit never drops a client for output that fits that buffer. (Redis
// counts the spill by its allocated blocks, so near a limit the two can differ.)
inline uint64_t CountedOutputBytes(uint64_t pending) {
  constexpr uint64_t kUncountedBytes = 16 * 1024;
  return pending > kUncountedBytes ? pending - kUncountedBytes : 0;
}

struct Settings {
  int port = 6379;
  // Addresses to listen on, as given: separated by single spaces, "-" before one that may be
  // missing, "*" and "::*" for every IPv4 and IPv6 address (server/listeners.h).
  std::string bind = "127.0.0.1";
  int64_t tcp_backlog = 511;    // listen()'s queue for the TCP and unix sockets
  int64_t tcp_keepalive = 300;  // seconds before a silent TCP client is probed; 0: no probes
  std::string unixsocket;       // a unix-domain socket to listen on; empty: none
  int64_t unixsocketperm = 0;   // its file mode; 0: as the umask leaves it
  bool daemonize = false;       // detach from the terminal at start-up (server/process.h)
  std::string pidfile;          // where the process id is written; empty: nowhere unless daemonized
  std::string supervised = "no";  // upstart, systemd, auto or no: tell a supervisor when ready
  int threads = 0;  // 0: one per core
  int databases = 16;
  int64_t maxclients = 10000;
  int64_t timeout = 0;  // idle seconds before a client is closed; 0: never
  std::string requirepass;
  std::string loglevel = "notice";
  std::string logfile;  // empty: standard output
  // Who may run DEBUG: nobody, everybody, or clients connected over loopback (Redis's
  // enable-debug-command no|yes|local).
  enum class DebugAccess { kNo, kYes, kLocal };
  DebugAccess enable_debug_command = DebugAccess::kNo;
  bool protected_mode = true;
  int64_t proto_max_bulk_len = 512ll * 1024 * 1024;
  int64_t client_query_buffer_limit = 1024ll * 1024 * 1024;
  // Only `normal` applies to lapse's clients; the replica and pubsub classes are kept so that
  // configurations written for Redis load and read back unchanged.
  OutputBufferLimit output_limit_normal{};
  OutputBufferLimit output_limit_replica{256ll << 20, 64ll << 20, 60};
  OutputBufferLimit output_limit_pubsub{32ll << 20, 8ll << 20, 60};
  int64_t maxmemory = 0;
  std::string maxmemory_policy = "noeviction";
  int64_t maxmemory_samples = 5;
  int64_t maxmemory_eviction_tenacity = 10;
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;
  int64_t hz = 10;
  int64_t slowlog_log_slower_than = 10000;  // microseconds; negative: log nothing
  uint32_t notify_keyspace_events = 0;   // server/keyspace_events.h's EventClass mask
  int64_t busy_reply_threshold = 5000;      // ms a script runs before others get BUSY; 0: never
  int64_t slowlog_max_len = 128;
  int64_t acllog_max_len = 128;
  // LATENCY (server/latency.h): spikes of at least this many ms are recorded; 0: none.
  int64_t latency_monitor_threshold = 0;
  bool latency_tracking = true;  // per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats)
  std::vector<double> latency_tracking_info_percentiles{50.0, 99.0, 99.9};
  // Thresholds of the packed collection layouts (engine/collection.h), Redis's defaults.
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t list_max_listpack_size = -2;  // > 0: elements per list node; -1..-5: 4..64 KiB per node
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  int64_t hll_sparse_max_bytes = 3000;  // a sparse HyperLogLog longer than this turns dense
  int64_t tracking_table_max_keys = 1000000;  // keys client-side caching tracks at most; 0: no limit
  int64_t ru_per_second = 0;  // server-wide request-unit budget; 0: unlimited
  std::string billing = "provisioned";
  // Bytes of change documents each container's change feed keeps (ICHANGES); the newest
  // change is kept whatever its size.
  int64_t change_feed_retention = 16ll * 1024 * 1024;
  // Snapshots (server/persistence.h). `dir` is absolute; empty means the working directory.
  std::string dir;
  std::string dbfilename = "dump.rdb";
  bool rdbcompression = true;
  bool rdbchecksum = true;
  // Containers, items and hash-field TTLs in the snapshot (records Redis skips or refuses).
  bool rdb_lapse_data = true;
  // Redis's test knob: microseconds a background save waits per key written (negative: one
  // microsecond per that many keys), so that tests can make a save overlap their writes. lapse
  // waits between slices, never while holding a shard.
  int64_t rdb_key_save_delay = 0;
  // `save` rules: snapshot after `seconds` when at least `changes` writes happened. Redis's
  // defaults apply until a file or flag says otherwise; "" disables them.
  std::vector<std::pair<int64_t, int64_t>> save_rules{{3600, 1}, {300, 100}, {60, 10000}};
  std::vector<std::pair<std::string, std::string>> renamed_commands;
  // Access control (server/acl.h): the rules of each `user` line of the file (without the
  // keyword), the aclfile, and what channels a new user starts with.
  std::vector<std::string> users;
  std::string aclfile;
  std::string acl_pubsub_default = "resetchannels";
  // TLS (server/tls.h), Redis 7.0's names and defaults. tls_port 0: no TLS port.
  int tls_port = 0;
  std::string tls_cert_file, tls_key_file, tls_key_file_pass, tls_ca_cert_file, tls_ca_cert_dir;
  enum class TlsAuthClients { kNo, kYes, kOptional };
  TlsAuthClients tls_auth_clients = TlsAuthClients::kYes;
  std::string tls_protocols;  // empty: TLSv1.2 and TLSv1.3
  std::string tls_ciphers, tls_ciphersuites;  // empty: OpenSSL's defaults
  bool tls_prefer_server_ciphers = false;
  bool tls_session_caching = true;
  int64_t tls_session_cache_size = 20480;
  int64_t tls_session_cache_timeout = 300;
  // The append-only log (server/aof.h).
  bool appendonly = false;
  std::string appendfilename = "appendonly.aof";
  std::string appenddirname = "appendonlydir";
  std::string appendfsync = "everysec";  // always | everysec | no
  bool aof_load_truncated = true;
  bool aof_use_rdb_preamble = true;  // the AOF base as an RDB file (Redis's default)
  int64_t auto_aof_rewrite_percentage = 100;
  int64_t auto_aof_rewrite_min_size = 64ll * 1024 * 1024;
  bool no_appendfsync_on_rewrite = false;
};

// A configuration line's words as Redis's sdssplitargs reads them (protocol/split_args.h);
// nullopt when the quotes do not balance.
std::optional<std::vector<std::string>> SplitConfigLine(std::string_view line);

// bind's addresses: Redis splits its value on single spaces, so "a  b" has an empty one (which
// then fails to bind); "" has none.
std::vector<std::string> SplitBindAddresses(std::string_view bind);

// The directory snapshots go to: `dir`, or the working directory when it was never set.
std::string EffectiveDir(const Settings& s);

// A Redis 7.0 parameter lapse does not implement and answers with Redis's default, read-only
// (server/config_redis_defaults.cc).
struct RedisDefault {
  const char* name;
  const char* value;
};
const std::vector<RedisDefault>& RedisOnlyDefaults();
// Whether `value` is the Redis-only parameter's default as Redis reads it (case aside; memory
// parameters by their byte count).
bool IsRedisDefaultValue(std::string_view lower_name, std::string_view value, std::string_view redis_default);
// Whether Redis reads this Redis-only parameter (lower case) as a memory value.
bool IsRedisMemoryParameter(std::string_view lower_name);
// Whether Redis 7.0 refuses CONFIG SET of this parameter (lower case) as immutable.
bool IsRedisImmutable(std::string_view lower_name);

class Config {
 public:
  // Parses argv (argv[0] is the program). Returns an error message on failure; sets
  // *exit_now for --help / --version after printing what was asked.
  std::optional<std::string> LoadFromArgs(int argc, char** argv, bool* exit_now);
  // Parses redis.conf-style text: `name value...` per line, `#` comments, quoted values.
  std::optional<std::string> LoadFromText(std::string_view text);

  // Sets one setting by its Redis name; returns an error message ("ERR ...") on failure.
  std::optional<std::string> Set(std::string_view name, std::string_view value);
  // CONFIG SET with several pairs: all of them, or none when one fails (as Redis 7 does).
  std::optional<std::string> SetAll(const std::vector<std::pair<std::string_view, std::string_view>>& pairs);
  // Called by SetAll with the settings as they would become, once every value parsed; an
  // error ("ERR ...") refuses them all. For what only the server can check: whether the
  // TLS files still make a context. Set before any client connects.
  using Validator = std::function<std::optional<std::string>(const Settings& current, const Settings& candidate,
                                                             const std::vector<std::string_view>& names)>;
  void set_validator(Validator validator) { validator_ = std::move(validator); }
  // Every (name, value) whose name matches the glob `pattern`, for CONFIG GET: lapse's
  // settings, then Redis's parameters lapse answers with their defaults.
  std::vector<std::pair<std::string, std::string>> Get(std::string_view pattern) const;

  // A consistent copy of all settings.
  Settings Snapshot() const {
    std::lock_guard lock(mu_);
    return settings_;
  }
  // The fields read on hot paths are copied out by the server; this is for the rest.
  std::string requirepass() const {
    std::lock_guard lock(mu_);
    return settings_.requirepass;
  }

  static std::string Usage();
  // CONFIG REWRITE (server/config_rewrite.h): the config file rewritten with the live
  // settings and `acl_lines` (ACL LIST's) as its users; errno's message on failure.
  std::optional<std::string> Rewrite(const std::vector<std::string>& acl_lines) const;
  // The absolute path of the file given on the command line, or "" (INFO's config_file).
  const std::string& config_file() const { return config_file_; }

 private:
  std::optional<std::string> SetLocked(std::string_view name, std::string_view value, bool at_startup);
  // One configuration line, `name value...`; *saw_save tracks the file's `save` lines.
  std::optional<std::string> ApplyLineLocked(const std::vector<std::string>& words, bool* saw_save);

  mutable std::mutex mu_;
  Settings settings_;
  std::string config_file_;  // set once, before any thread starts
  Validator validator_;
};

}  // namespace lapse::server
