// File: server/standalone_commands.cc
//
// The commands of a Redis 7.0 server that runs standalone and loads no modules, which is
// what lapse always is: CLUSTER (every subcommand, with Redis's arities) and ASKING answer
// that cluster support is disabled, and MODULE LIST that no module is loaded. MODULE LOAD,
// LOADEX and UNLOAD get Redis's refusal for enable-module-command no, the only value lapse
// accepts for it. Clients and tools probe with these (a cluster-aware client asks CLUSTER
// INFO or SLOTS; an admin tool lists modules to find RedisJSON or RediSearch), and Redis's
// own answers tell them what they need, where "unknown command" would not.
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/help_reply.h"

namespace lapse::server {

namespace {

void CmdClusterDisabled(ConnCommand& c) { c.reply.Error(protocol::errors::kClusterDisabled); }

void CmdModule(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (protocol::EqualsIgnoreCase(sub, "LIST")) return c.reply.ArrayHeader(0);
  if (protocol::EqualsIgnoreCase(sub, "HELP")) {
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
}

}  // namespace lapse::server
