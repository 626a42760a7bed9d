// Operations family: commands an operator uses to watch a running server rather than its
// data (MONITOR). They run on the connection's thread and touch no shard; what they watch
// is server-wide and reaches them across threads (server/monitor.h).
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

// MONITOR: from now on the client gets a line for every command run. A client that already
// monitors gets no reply at all, as in Redis (which ignores the command).
void CmdMonitor(ConnCommand& c) {
  // Inside EXEC a reply per command is expected, and Redis refuses what would break that.
  if (ShardSet::InAtomicStep()) return c.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
  if (c.server.monitors().Add(*c.session.info)) c.reply.Ok();
}

}  // namespace

void RegisterOperationsCommands(CommandTable& table) {
  // name, arity, flags, first key, last key, step, handler, group, summary
  table.Add({"monitor", 1, kAdmin | kNoScript, 0, 0, 0, CmdMonitor, "server",
             "Listen for all requests received by the server in real time"});
}

}  // namespace lapse::server
