#include "server/monitor.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <cstdio>

#include "protocol/arg_reader.h"
#include "server/client_session.h"

namespace lapse::server {

namespace {

// Redis 7.0.15's commands flagged admin or skip_monitor (COMMAND, subcommands included).
// EVAL, EVALSHA, FCALL and their _RO forms are skip_monitor only because Redis shows them
// before they run rather than after: the dispatcher does that itself (Dispatcher::
// FeedMonitorsBeforeRun).
constexpr std::string_view kHidden[] = {
    "acl|deluser",       "acl|dryrun",        "acl|getuser",      "acl|list",          "acl|load",
    "acl|log",           "acl|save",          "acl|setuser",      "acl|users",         "bgrewriteaof",
    "bgsave",            "client|kill",       "client|list",      "client|no-evict",   "client|pause",
    "client|unblock",    "client|unpause",    "cluster|addslots", "cluster|addslotsrange",
    "cluster|bumpepoch", "cluster|count-failure-reports",         "cluster|delslots",  "cluster|delslotsrange",
    "cluster|failover",  "cluster|flushslots", "cluster|forget",  "cluster|meet",      "cluster|replicas",
    "cluster|replicate", "cluster|reset",     "cluster|saveconfig", "cluster|set-config-epoch",
    "cluster|setslot",   "cluster|slaves",    "config|get",       "config|resetstat",  "config|rewrite",
    "config|set",        "debug",             "eval",             "eval_ro",           "evalsha",
    "evalsha_ro",        "failover",          "fcall",            "fcall_ro",          "latency|doctor",
    "latency|graph",     "latency|histogram", "latency|history",  "latency|latest",    "latency|reset",
    "module|list",       "module|load",       "module|loadex",    "module|unload",     "monitor",
    "pfdebug",           "pfselftest",        "psync",            "replconf",          "replicaof",
    "save",              "shutdown",          "slaveof",          "slowlog|get",       "slowlog|len",
    "slowlog|reset",     "sync",
};

}  // namespace

// Redis's sdscatrepr: printable ASCII as is, the usual escapes, any other byte as \xNN.
void AppendQuoted(std::string& out, std::string_view arg) {
  out += '"';
  for (char ch : arg) {
    switch (ch) {
      case '\\':
      case '"':
        out += '\\';
        out += ch;
        break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      default:
        if (ch >= 0x20 && ch <= 0x7e) {
          out += ch;
        } else {
          char hex[5];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(ch));
          out += hex;
        }
    }
  }
  out += '"';
}

bool HiddenFromMonitor(std::string_view full_name) {
  return std::find(std::begin(kHidden), std::end(kHidden), full_name) != std::end(kHidden);
}

namespace {
// MIGRATE's AUTH password and AUTH2 user and password, as Redis's parse hides them: up to the
// first option it rejects, or KEYS.
void RedactMigrate(const std::vector<std::string_view>& args, std::vector<std::string_view>& shown) {
  for (size_t j = 6; j < args.size(); ++j) {
    std::string_view a = protocol::AsCString(args[j]);
    size_t more = args.size() - 1 - j;
    if (protocol::EqualsIgnoreCase(a, "COPY") || protocol::EqualsIgnoreCase(a, "REPLACE")) continue;
    if (protocol::EqualsIgnoreCase(a, "AUTH") && more >= 1) {
      shown[++j] = "(redacted)";
    } else if (protocol::EqualsIgnoreCase(a, "AUTH2") && more >= 2) {
      shown[++j] = "(redacted)";
      shown[++j] = "(redacted)";
    } else {
      return;
    }
  }
}
}  // namespace

std::vector<std::string_view> RedactedArgs(const CommandSpec& spec, const std::vector<std::string_view>& args) {
  std::vector<std::string_view> shown(args.begin(), args.end());
  if (spec.name == "migrate") {
    RedactMigrate(args, shown);
    return shown;
  }
  // ACL SETUSER: everything after the subcommand, the user's name included.
  bool setuser = spec.name == "acl" && args.size() > 1 && protocol::EqualsIgnoreCase(args[1], "SETUSER");
  for (size_t i = 1; i < shown.size(); ++i) {
    if (spec.name == "auth" || (setuser && i >= 2)) {
      shown[i] = "(redacted)";
    } else if (spec.name == "hello" && protocol::EqualsIgnoreCase(args[i], "AUTH")) {
      for (size_t j = i + 1; j <= i + 2 && j < shown.size(); ++j) shown[j] = "(redacted)";
      i += 2;
    }
  }
  return shown;
}

std::string FormatMonitorLine(int64_t seconds, int64_t micros, int db, std::string_view origin,
                              const std::vector<std::string_view>& args) {
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "+%lld.%06lld [%d ", static_cast<long long>(seconds),
                static_cast<long long>(micros), db);
  std::string line(stamp);
  line += origin;
  line += "] ";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) line += ' ';
    AppendQuoted(line, args[i]);
  }
  line += "\r\n";
  return line;
}

bool Monitors::Add(ClientInfo& client) {
  std::lock_guard lock(mu_);
  if (std::find(monitors_.begin(), monitors_.end(), &client) != monitors_.end()) return false;
  monitors_.push_back(&client);
  client.monitoring.store(true, std::memory_order_relaxed);
  count_.store(monitors_.size(), std::memory_order_relaxed);
  return true;
}

void Monitors::Remove(ClientInfo& client) {
  if (!client.monitoring.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mu_);
  // Kept in the order they came, as Redis's list: monitors see the same lines either way,
  // but the order they get them in stays stable.
  auto it = std::find(monitors_.begin(), monitors_.end(), &client);
  if (it != monitors_.end()) monitors_.erase(it);
  client.monitoring.store(false, std::memory_order_relaxed);
  count_.store(monitors_.size(), std::memory_order_relaxed);
}

void Monitors::Feed(int db, std::string_view origin, const std::vector<std::string_view>& args) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(now).count();
  std::string line = FormatMonitorLine(micros / 1000000, micros % 1000000, db, origin, args);
  // A monitor is a normal client to client-output-buffer-limit, as in Redis.
  OutputBufferLimit limit = limit_();
  int64_t now_ms = now_();
  std::lock_guard lock(mu_);
  for (ClientInfo* monitor : monitors_) {
    // After the reply of a command the monitor itself is running: Redis sends the line of a
    // command once it has run, so a monitor sees its own command's reply first.
    monitor->push.Append(line, limit, monitor->output_bytes.load(std::memory_order_relaxed), now_ms, monitor->kill,
                         /*after_reply=*/true);
  }
}

}  // namespace lapse::server
