// Redis 7.0.15's configuration parameters that lapse does not implement (persistence,
// replication, cluster, TLS, ACL files, defragmentation, process management, ...), with the
// value a redis-server started without a configuration file reports for each. CONFIG GET
// answers them so that tools that read every parameter (CONFIG GET *) find Redis's full set;
// they are read-only: CONFIG SET refuses them, and a configuration file may only give their
// default (server/config.cc). Taken from `redis-server` 7.0.15's `CONFIG GET *`; `dir`, whose
// default is the working directory, is answered live by Config::Get.
#include "server/config.h"

#include <algorithm>
#include <string>

#include "protocol/arg_reader.h"

namespace lapse::server {

const std::vector<RedisDefault>& RedisOnlyDefaults() {
  static const std::vector<RedisDefault> kDefaults = {
    {"acl-pubsub-default", "resetchannels"},
    {"aclfile", ""},
    {"active-defrag-cycle-max", "25"},
    {"active-defrag-cycle-min", "1"},
    {"active-defrag-ignore-bytes", "104857600"},
    {"active-defrag-max-scan-fields", "1000"},
    {"active-defrag-threshold-lower", "10"},
    {"active-defrag-threshold-upper", "100"},
    {"active-expire-effort", "1"},
    {"activedefrag", "no"},
    {"activerehashing", "yes"},
    {"always-show-logo", "no"},
    {"aof-disable-auto-gc", "no"},
    {"aof-load-truncated", "yes"},
    {"aof-rewrite-incremental-fsync", "yes"},
    {"aof-timestamp-enabled", "no"},
    {"aof-use-rdb-preamble", "yes"},
    {"aof_rewrite_cpulist", ""},
    {"appenddirname", "appendonlydir"},
    {"appendfilename", "appendonly.aof"},
    {"appendfsync", "everysec"},
    {"auto-aof-rewrite-min-size", "67108864"},
    {"auto-aof-rewrite-percentage", "100"},
    {"bgsave_cpulist", ""},
    {"bind-source-addr", ""},
    {"bio_cpulist", ""},
    {"cluster-allow-pubsubshard-when-down", "yes"},
    {"cluster-allow-reads-when-down", "no"},
    {"cluster-allow-replica-migration", "yes"},
    {"cluster-announce-bus-port", "0"},
    {"cluster-announce-hostname", ""},
    {"cluster-announce-ip", ""},
    {"cluster-announce-port", "0"},
    {"cluster-announce-tls-port", "0"},
    {"cluster-config-file", "nodes.conf"},
    {"cluster-enabled", "no"},
    {"cluster-link-sendbuf-limit", "0"},
    {"cluster-migration-barrier", "1"},
    {"cluster-node-timeout", "15000"},
    {"cluster-port", "0"},
    {"cluster-preferred-endpoint-type", "ip"},
    {"cluster-replica-no-failover", "no"},
    {"cluster-replica-validity-factor", "10"},
    {"cluster-require-full-coverage", "yes"},
    {"cluster-slave-no-failover", "no"},
    {"cluster-slave-validity-factor", "10"},
    {"crash-log-enabled", "yes"},
    {"crash-memcheck-enabled", "yes"},
    {"disable-thp", "yes"},
    {"dynamic-hz", "yes"},
    {"enable-module-command", "no"},
    {"enable-protected-configs", "no"},
    {"ignore-warnings", ""},
    {"io-threads", "1"},
    {"io-threads-do-reads", "no"},
    {"jemalloc-bg-thread", "yes"},
    {"lazyfree-lazy-eviction", "no"},
    {"lazyfree-lazy-expire", "no"},
    {"lazyfree-lazy-server-del", "no"},
    {"lazyfree-lazy-user-del", "no"},
    {"lazyfree-lazy-user-flush", "no"},
    {"list-compress-depth", "0"},
    {"masterauth", ""},
    {"masteruser", ""},
    {"maxmemory-clients", "0"},
    {"min-replicas-max-lag", "10"},
    {"min-replicas-to-write", "0"},
    {"min-slaves-max-lag", "10"},
    {"min-slaves-to-write", "0"},
    {"no-appendfsync-on-rewrite", "no"},
    {"oom-score-adj", "no"},
    {"oom-score-adj-values", "0 200 800"},
    {"proc-title-template", "{title} {listen-addr} {server-mode}"},
    {"propagation-error-behavior", "ignore"},
    {"rdb-del-sync-files", "no"},
    {"rdb-save-incremental-fsync", "yes"},
    {"repl-backlog-size", "1048576"},
    {"repl-backlog-ttl", "3600"},
    {"repl-disable-tcp-nodelay", "no"},
    {"repl-diskless-load", "disabled"},
    {"repl-diskless-sync", "yes"},
    {"repl-diskless-sync-delay", "5"},
    {"repl-diskless-sync-max-replicas", "0"},
    {"repl-ping-replica-period", "10"},
    {"repl-ping-slave-period", "10"},
    {"repl-timeout", "60"},
    {"replica-announce-ip", ""},
    {"replica-announce-port", "0"},
    {"replica-announced", "yes"},
    {"replica-ignore-disk-write-errors", "no"},
    {"replica-ignore-maxmemory", "yes"},
    {"replica-lazy-flush", "no"},
    {"replica-priority", "100"},
    {"replica-read-only", "yes"},
    {"replica-serve-stale-data", "yes"},
    {"replicaof", ""},
    {"sanitize-dump-payload", "no"},
    {"server_cpulist", ""},
    {"set-proc-title", "yes"},
    {"shutdown-on-sigint", "default"},
    {"shutdown-on-sigterm", "default"},
    {"shutdown-timeout", "10"},
    {"slave-announce-ip", ""},
    {"slave-announce-port", "0"},
    {"slave-ignore-maxmemory", "yes"},
    {"slave-lazy-flush", "no"},
    {"slave-priority", "100"},
    {"slave-read-only", "yes"},
    {"slave-serve-stale-data", "yes"},
    {"slaveof", ""},
    {"socket-mark-id", "0"},
    {"stop-writes-on-bgsave-error", "yes"},
    {"stream-node-max-bytes", "4096"},
    {"stream-node-max-entries", "100"},
    {"syslog-enabled", "no"},
    {"syslog-facility", "local0"},
    {"syslog-ident", "redis"},
    {"tls-client-cert-file", ""},
    {"tls-client-key-file", ""},
    {"tls-client-key-file-pass", ""},
    {"tls-cluster", "no"},
    {"tls-dh-params-file", ""},
    {"tls-replication", "no"},
  };
  return kDefaults;
}

namespace {
// Redis reads these as memory values, so "1mb" is repl-backlog-size's default too.
constexpr std::string_view kMemoryParameters[] = {"active-defrag-ignore-bytes", "cluster-link-sendbuf-limit",
                                                  "maxmemory-clients", "repl-backlog-size", "stream-node-max-bytes"};
}  // namespace

bool IsRedisMemoryParameter(std::string_view lower_name) {
  return std::find(std::begin(kMemoryParameters), std::end(kMemoryParameters), lower_name) != std::end(kMemoryParameters);
}

bool IsRedisDefaultValue(std::string_view lower_name, std::string_view value, std::string_view redis_default) {
  if (protocol::AsciiLower(value) == protocol::AsciiLower(redis_default)) return true;
  // maxmemory-clients also takes a percentage of maxmemory, which Redis keeps negated: only
  // 0% is its default, 0.
  if (lower_name == "maxmemory-clients" && value.size() > 1 && value.back() == '%') {
    int64_t percent = 0;
    return protocol::ParseInt64(value.substr(0, value.size() - 1), &percent) && percent == 0 && redis_default == "0";
  }
  for (std::string_view name : kMemoryParameters) {
    if (name == lower_name) {
      std::optional<uint64_t> bytes = ParseMemory(value);
      return bytes && std::to_string(*bytes) == redis_default;
    }
  }
  return false;
}

bool IsRedisImmutable(std::string_view lower_name) {
  // Those of the parameters above that Redis 7.0.15 sets only at start-up (CONFIG SET answers
  // "can't set immutable config" whatever the value).
  static constexpr std::string_view kImmutable[] = {
      "always-show-logo", "aof_rewrite_cpulist", "bgsave_cpulist", "bio_cpulist", "cluster-config-file",
      "cluster-enabled", "cluster-port", "disable-thp", "enable-module-command",
      "enable-protected-configs", "io-threads", "io-threads-do-reads", "server_cpulist", "set-proc-title",
      "socket-mark-id", "syslog-facility", "syslog-ident", "logfile", "syslog-enabled", "databases", "replicaof", "slaveof"};
  for (std::string_view name : kImmutable) {
    if (name == lower_name) return true;
  }
  return false;
}

}  // namespace lapse::server
