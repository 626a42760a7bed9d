// Server family: administration (CONFIG, TIME, SHUTDOWN, SLOWLOG, ROLE, WAIT, LOLWUT).
// INFO and DEBUG have their own files, server/info_command.cc and server/debug_command.cc.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/help_reply.h"
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
  // REWRITE
  if (config.config_file().empty()) return c.reply.Error(errors::kNoConfigFile);
  // One rewrite at a time, so that the file always ends with the latest settings: one that
  // read them earlier cannot rename its file over a later one's.
  static std::mutex rewrite_mu;
  std::lock_guard rewrite_lock(rewrite_mu);
  if (auto err = config.Rewrite(c.server.acl().Describe())) {
    spdlog::warn("CONFIG REWRITE failed: {}", *err);
    return c.reply.Error("ERR Rewriting config file: " + *err);
  }
  spdlog::warn("CONFIG REWRITE executed with success.");
  c.reply.Ok();
}

// CONFIG RESETSTAT answers once every thread has zeroed its counters, so that what follows
// sees them zeroed, as on Redis; the other subcommands answer at once.
awaitable<void> CmdConfigOrResetStat(ConnCommand& c) {
  if (!EqualsIgnoreCase(c.args[1], "RESETSTAT")) co_return CmdConfig(c);
  co_await c.server.ResetStats(c.session.home);
  c.reply.Ok();
}

// ---- TIME, SHUTDOWN ----

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

// ---- Replication, as a master (server/replication.h) ----

// ROLE: master, the stream's offset, and each online replica as [ip, port, acknowledged offset].
void CmdRole(ConnCommand& c) {
  Replication& replication = c.server.replication();
  std::vector<Replication::ReplicaRow> rows = replication.Replicas(true);
  c.reply.ArrayHeader(3);
  c.reply.Bulk("master");
  c.reply.Integer(replication.offset());
  c.reply.ArrayHeader(rows.size());
  for (const Replication::ReplicaRow& row : rows) {
    c.reply.ArrayHeader(3);
    c.reply.Bulk(row.ip);
    c.reply.Bulk(std::to_string(row.port));
    c.reply.Bulk(std::to_string(row.ack_offset));
  }
}

// WAIT numreplicas timeout: how many replicas acknowledged the stream up to the client's last
// write. Enough already, or inside MULTI: at once. Otherwise the replicas are asked for an
// acknowledgement (REPLCONF GETACK *) and the count is read again at each acknowledgement
// until it is enough or the timeout (0: none) ends. Without replicas it waits out its timeout
// and answers 0, as Redis does. (A client that disconnects while waiting for ever keeps its connection's
// memory until the server stops: no read is pending to notice it.)
awaitable<void> CmdWait(ConnCommand& c) {
  int64_t replicas = 0, timeout_ms = 0;
  if (!protocol::ParseInt64(c.args[1], &replicas)) co_return c.reply.Error(errors::kNotInteger);
  if (!protocol::ParseInt64(c.args[2], &timeout_ms)) co_return c.reply.Error(errors::kTimeoutNotInteger);
  if (timeout_ms < 0) co_return c.reply.Error(errors::kTimeoutNegative);
  Replication& replication = c.server.replication();
  int64_t target = c.session.repl_woff;
  // Inside EXEC the transaction's writes so far count, as in Redis 7.0: no replica has them yet.
  if (ShardSet::InAtomicStep() && c.server.aof().HoldsUnloggedWrites()) target = replication.offset() + 1;
  int64_t acked = static_cast<int64_t>(replication.CountAcknowledged(target));
  if (acked >= replicas || ShardSet::InAtomicStep()) co_return c.reply.Integer(acked);
  constexpr int64_t kForever = int64_t{100} * 365 * 24 * 3600 * 1000;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms == 0 ? kForever : std::min(timeout_ms, kForever));
  auto timer = std::make_shared<asio::steady_timer>(c.server.shards().context(c.session.home));
  boost::system::error_code ec;
  if (replication.replica_count() == 0) {
    timer->expires_at(deadline);
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
    co_return c.reply.Integer(static_cast<int64_t>(replication.CountAcknowledged(target)));
  }
  replication.RequestAcknowledgements();
  while (std::chrono::steady_clock::now() < deadline) {
    replication.WakeOnAcknowledgement(timer);
    acked = static_cast<int64_t>(replication.CountAcknowledged(target));
    if (acked >= replicas) break;
    timer->expires_at(deadline);
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
  }
  c.reply.Integer(static_cast<int64_t>(replication.CountAcknowledged(target)));
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
  table.Add({"shutdown", -1, kAdmin | kNoScript | kNoMulti, 0, 0, 0, CmdShutdown, "server", "Stops the server."});
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
