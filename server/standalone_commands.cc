// File: server/standalone_commands.cc
//
// The commands of a Redis 7.0 server that runs standalone, has no replicas and loads no
// modules, which is what lapse always is: CLUSTER (every subcommand, with Redis's arities)
// and ASKING answer that cluster support is disabled, and MODULE LIST that no module is
// loaded. MODULE LOAD, LOADEX and UNLOAD get Redis's refusal for enable-module-command no,
// the only value lapse accepts for it. Clients and tools probe with these (a cluster-aware
// client asks CLUSTER INFO or SLOTS; an admin tool lists modules to find RedisJSON or
// RediSearch), and Redis's own answers tell them what they need, where "unknown command"
// would not.
//
// Replication: lapse is always a master. It serves replicas (SYNC, PSYNC, REPLCONF; see
// server/replication.h) but follows no master: REPLICAOF NO ONE (and SLAVEOF) asks for what
// already is, and Redis answers OK to it on a master; REPLICAOF host port is refused with an
// error that says lapse does not follow a master, after the argument checks Redis makes, so
// that bad input gets Redis's error. FAILOVER needs a replica to hand over to, which lapse
// cannot be, and answers as Redis does without connected replicas.
#include <spdlog/spdlog.h>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "protocol/split_args.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/server.h"
#include "server/help_reply.h"

namespace lapse::server {

namespace {

namespace errors = protocol::errors;
using protocol::AsCString;
using protocol::EqualsIgnoreCase;

constexpr std::string_view kNoReplication = "ERR lapse does not replicate from a master";

using protocol::ParseInt64;

void CmdClusterDisabled(ConnCommand& c) { c.reply.Error(protocol::errors::kClusterDisabled); }

// REPLICAOF and SLAVEOF.
void CmdReplicaOf(ConnCommand& c) {
  if (EqualsIgnoreCase(AsCString(c.args[1]), "NO") && EqualsIgnoreCase(AsCString(c.args[2]), "ONE")) {
    return c.reply.Ok();
  }
  int64_t port = 0;
  if (!protocol::ParseInt64(c.args[2], &port) || port < 0 || port > 65535) {
    return c.reply.Error("ERR Invalid master port");
  }
  c.reply.Error(kNoReplication);
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], read as Redis's failoverCommand reads it.
void CmdFailover(ConnCommand& c) {
  if (c.args.size() == 2 && EqualsIgnoreCase(AsCString(c.args[1]), "ABORT")) {
    return c.reply.Error("ERR No failover in progress.");
  }
  int64_t timeout_ms = 0;
  bool force = false;
  bool has_host = false;
  for (size_t j = 1; j < c.args.size(); ++j) {
    std::string_view a = AsCString(c.args[j]);
    if (EqualsIgnoreCase(a, "TIMEOUT") && j + 1 < c.args.size() && timeout_ms <= 0) {
      if (!protocol::ParseInt64(c.args[++j], &timeout_ms)) return c.reply.Error(protocol::errors::kNotInteger);
      if (timeout_ms <= 0) return c.reply.Error("ERR FAILOVER timeout must be greater than 0");
    } else if (EqualsIgnoreCase(a, "TO") && j + 2 < c.args.size() && !has_host) {
      int64_t port = 0;
      if (!protocol::ParseInt64(c.args[j + 2], &port)) return c.reply.Error(protocol::errors::kNotInteger);
      has_host = true;
      j += 2;
    } else if (EqualsIgnoreCase(a, "FORCE") && !force) {
      force = true;
    } else {
      return c.reply.Error(protocol::errors::kSyntax);
    }
  }
  c.reply.Error("ERR FAILOVER requires connected replicas.");
}

// REPLCONF <option> <value> ..., read as Redis 7.0's replconfCommand reads it: options in
// order, each applied as it is read, the first bad one answered with its error. ACK and
// GETACK answer nothing.
void CmdReplconf(ConnCommand& c) {
  if (c.args.size() % 2 == 0) return c.reply.Error(errors::kSyntax);
  ReplicaHandshake& h = c.session.replica_handshake;
  for (size_t j = 1; j < c.args.size(); j += 2) {
    std::string_view option = AsCString(c.args[j]);
    std::string_view value = c.args[j + 1];
    if (EqualsIgnoreCase(option, "listening-port")) {
      int64_t port = 0;
      if (!ParseInt64(value, &port)) return c.reply.Error(errors::kNotInteger);
      h.listening_port = port;
    } else if (EqualsIgnoreCase(option, "ip-address")) {
      if (value.size() >= 256) {
        return c.reply.Error("ERR REPLCONF ip-address provided by replica instance is too long: " +
                             std::to_string(value.size()) + " bytes");
      }
      h.ip_address = std::string(value);
    } else if (EqualsIgnoreCase(option, "capa")) {
      // Capabilities lapse does not know are ignored, as Redis ignores them.
      if (EqualsIgnoreCase(AsCString(value), "eof")) h.capa_eof = true;
      if (EqualsIgnoreCase(AsCString(value), "psync2")) h.capa_psync2 = true;
    } else if (EqualsIgnoreCase(option, "ack")) {
      int64_t offset = 0;
      if (!c.session.info->replica.load(std::memory_order_relaxed) || !ParseInt64(value, &offset)) return;
      c.server.replication().Acknowledge(c.session.info->id, offset);
      return;
    } else if (EqualsIgnoreCase(option, "getack")) {
      return;  // a master is never asked
    } else if (EqualsIgnoreCase(option, "rdb-only")) {
      int64_t only = 0;
      if (!ParseInt64(value, &only)) return c.reply.Error(errors::kNotInteger);
      if (only < 0 || only > 1) return c.reply.Error("ERR value is out of range, value must between 0 and 1");
      h.rdb_only = only == 1;
    } else if (EqualsIgnoreCase(option, "rdb-filter-only")) {
      std::string unescaped;
      std::vector<std::string_view> filters;
      if (!protocol::SplitArgs(AsCString(value), &unescaped, &filters)) {
        return c.reply.Error("ERR Missing rdb-filter-only values");
      }
      bool functions = false;
      for (std::string_view f : filters) {
        if (!EqualsIgnoreCase(f, "functions")) {
          return c.reply.Error("ERR Unsupported rdb-filter-only option: " + std::string(f));
        }
        functions = true;
      }
      h.rdb_filter = true;
      h.filter_functions = functions;
    } else {
      return c.reply.Error("ERR Unrecognized REPLCONF option: " + std::string(option));
    }
  }
  c.reply.Ok();
}

// SYNC and PSYNC <replid> <offset>: the client becomes a replica (server/replication.h), which
// is sent its replies through its outbox, as the stream is.
void CmdSync(ConnCommand& c) {
  ClientInfo& client = *c.session.info;
  // Already a replica, or a monitor (a replica to Redis too): ignored, as Redis does.
  if (client.replica.load(std::memory_order_relaxed) || client.monitoring.load(std::memory_order_relaxed)) return;
  bool psync = EqualsIgnoreCase(c.args[0], "PSYNC");
  Replication& replication = c.server.replication();
  // A failover hands the master role to a replica: lapse never is one.
  if (psync && c.args.size() > 3 && EqualsIgnoreCase(AsCString(c.args[3]), "FAILOVER")) {
    return c.reply.Error("ERR PSYNC FAILOVER can't be sent to a master.");
  }
  const ReplicaHandshake& h = c.session.replica_handshake;
  if (h.rdb_filter && !h.capa_eof) return c.reply.Error("ERR Filtered replica requires EOF capability");
  int64_t offset = -1;
  if (psync && !ParseInt64(c.args[2], &offset)) {
    spdlog::warn("Replica {} asks for synchronization but with a wrong offset", client.addr);
    return c.reply.Error(errors::kNotInteger);
  }
  replication.Attach(c.session.info, h, psync, psync ? AsCString(c.args[1]) : std::string_view(), offset);
}

void CmdModule(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "LIST")) return c.reply.ArrayHeader(0);
  if (EqualsIgnoreCase(sub, "HELP")) {
    return ReplyHelp(c.reply,
                     {"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "LIST",
                      "    Return a list of loaded modules.", "LOAD <path> [<arg> ...]",
                      "    Load a module library from <path>, passing to it any optional arguments.",
                      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
                      "    Load a module library from <path>, while passing it module configurations and optional "
                      "arguments.",
                      "UNLOAD <name>", "    Unload a module."});
  }
  c.reply.Error(
      "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from "
      "a local connection, otherwise you need to set this option in the configuration file, and then restart the "
      "server.");
}

}  // namespace

void RegisterStandaloneCommands(CommandTable& table) {
  table.Add({"cluster", -2, 0, 0, 0, 0, CmdClusterDisabled, "cluster", "A container for Redis Cluster commands."},
            {{"addslots", -3},      {"addslotsrange", -4}, {"bumpepoch", 2},     {"count-failure-reports", 3},
             {"countkeysinslot", 3}, {"delslots", -3},      {"delslotsrange", -4}, {"failover", -2},
             {"flushslots", 2},      {"forget", 3},         {"getkeysinslot", 4},  {"help", 2},
             {"info", 2},            {"keyslot", 3},        {"links", 2},          {"meet", -4},
             {"myid", 2},            {"nodes", 2},          {"replicas", 3},       {"replicate", 3},
             {"reset", -2},          {"saveconfig", 2},     {"set-config-epoch", 3}, {"setslot", -4},
             {"shards", 2},          {"slaves", 3},         {"slots", 2}});
  table.Add({"asking", 1, kFast | kConnection, 0, 0, 0, CmdClusterDisabled, "cluster",
             "Signals that a cluster client is following an -ASK redirect."});
  table.Add({"module", -2, kNoScript, 0, 0, 0, CmdModule, "server", "A container for module commands."},
            {{"help", 2}, {"list", 2}, {"load", -3}, {"loadex", -3}, {"unload", 3}});
  for (const char* name : {"replicaof", "slaveof"}) {
    table.Add({name, 3, kAdmin | kNoScript | kDangerous, 0, 0, 0, CmdReplicaOf, "server",
               "Make the server a replica of another instance, or promote it as master."});
  }
  table.Add({"failover", -1, kAdmin | kNoScript | kDangerous, 0, 0, 0, CmdFailover, "server",
             "Start a coordinated failover between this server and one of its replicas."});
  table.Add({"sync", 1, kAdmin | kNoScript | kDangerous | kNoMulti, 0, 0, 0, CmdSync, "server",
             "Internal command used for replication."});
  table.Add({"psync", -3, kAdmin | kNoScript | kDangerous | kNoMulti, 0, 0, 0, CmdSync, "server",
             "Internal command used for replication."});
  table.Add({"replconf", -1, kAdmin | kNoScript | kDangerous | kAllowBusy, 0, 0, 0, CmdReplconf, "server",
             "An internal command for configuring the replication stream."});
}

}  // namespace lapse::server
