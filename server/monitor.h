// File: server/monitor.h
//
// MONITOR: every command any client runs, as one line per command, sent to the clients that
// asked for it, in Redis 7.0's format:
//
//   +1700000000.123456 [0 127.0.0.1:5555] "SET" "k" "v"\r\n
//
// (the wall-clock time, the database, the client's address or "lua" for a script's
// redis.call, then every argument as the client sent it, quoted as Redis's sdscatrepr does).
//
// The monitors may live on any event-loop thread, so a line reaches them the way a Pub/Sub
// message does (server/pubsub.h): appended to each monitor's PushOutbox, which wakes its
// connection. The line is formatted once, on the thread of the client that ran the command,
// and only when someone monitors (an atomic count keeps the common case to one load). Lines
// of one client reach a monitor in the order that client's commands ran.
//
// What Redis hides lapse hides too: its admin commands (CONFIG, DEBUG, SLOWLOG, CLIENT KILL,
// ...) and those flagged skip_monitor, as Redis 7.0's command table lists them. AUTH's
// arguments and HELLO's AUTH pair show as "(redacted)".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_table.h"
#include "server/config.h"

namespace lapse::server {

struct ClientInfo;

class Monitors {
 public:
  using LimitSource = std::function<OutputBufferLimit()>;
  using NowSource = std::function<int64_t()>;
  Monitors(LimitSource limit, NowSource now) : limit_(std::move(limit)), now_(std::move(now)) {}

  // MONITOR: false when the client already monitors (Redis then answers nothing).
  bool Add(ClientInfo& client);
  // RESET and a closing connection; nothing when the client does not monitor.
  void Remove(ClientInfo& client);
  bool any() const { return count_.load(std::memory_order_relaxed) > 0; }

  // Sends the line for `args`, run in database `db` by the client at `origin` ("ip:port", or
  // "lua" for a script's command), to every monitor.
  void Feed(int db, std::string_view origin, const std::vector<std::string_view>& args);

 private:
  LimitSource limit_;
  NowSource now_;
  std::mutex mu_;
  std::vector<ClientInfo*> monitors_;  // guarded by mu_; each removes itself before it goes
  std::atomic<size_t> count_{0};
};

// Redis's sdscatrepr: `arg` in double quotes, printable ASCII as is, the usual escapes, any
// other byte as \xNN (MONITOR lines, CONFIG REWRITE's string values).
void AppendQuoted(std::string& out, std::string_view arg);

// True for the commands Redis 7.0 never shows to monitors, by full name ("config|get").
bool HiddenFromMonitor(std::string_view full_name);

// The arguments as logs show them (MONITOR, SLOWLOG): AUTH's and HELLO's AUTH pair's
// passwords (and user names) replaced by "(redacted)".
std::vector<std::string_view> RedactedArgs(const CommandSpec& spec, const std::vector<std::string_view>& args);

// One MONITOR line, CRLF included; exposed for unit tests.
std::string FormatMonitorLine(int64_t seconds, int64_t micros, int db, std::string_view origin,
                              const std::vector<std::string_view>& args);

}  // namespace lapse::server
