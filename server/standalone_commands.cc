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
// Replication: lapse is always a master without replicas. REPLICAOF NO ONE (and SLAVEOF)
// asks for what already is, and Redis answers OK to it on a master; FAILOVER finds no
// replica, as on a Redis master without any. Following a master, and serving a replica
// (SYNC, PSYNC), are refused with an error that says lapse does not replicate, after the
// argument checks Redis makes, so that bad input gets Redis's error.
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/help_reply.h"

namespace lapse::server {

namespace {

using protocol::AsCString;
using protocol::EqualsIgnoreCase;

constexpr std::string_view kNoReplication = "ERR lapse does not support replication";

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

void CmdNoReplication(ConnCommand& c) { c.reply.Error(kNoReplication); }

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
  table.Add({"sync", 1, kAdmin | kNoScript | kDangerous | kNoMulti, 0, 0, 0, CmdNoReplication, "server",
             "Internal command used for replication."});
  table.Add({"psync", -3, kAdmin | kNoScript | kDangerous | kNoMulti, 0, 0, 0, CmdNoReplication, "server",
             "Internal command used for replication."});
}

}  // namespace lapse::server
