// File: server/aof_commands.cc
//
// BGREWRITEAOF: the append-only log's compaction (server/aof.h). It answers at once; the
// base file is written in the background, and INFO persistence tells when it is done. While a
// BGSAVE walks the data set it is scheduled instead, as Redis schedules it behind a child.
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/server.h"

namespace lapse::server {

namespace {

void CmdBgRewriteAof(ConnCommand& c) {
  bool scheduled = false;
  if (auto err = c.server.aof().StartRewrite(&scheduled)) return c.reply.Error(*err);
  c.reply.SimpleString(scheduled ? "Background append only file rewriting scheduled"
                                 : "Background append only file rewriting started");
}

}  // namespace

void RegisterAofCommands(CommandTable& table) {
  table.Add({"bgrewriteaof", 1, kAdmin | kNoScript, 0, 0, 0, CmdBgRewriteAof, "server",
             "Asynchronously rewrites the append-only file to disk."});
}

}  // namespace lapse::server
