// SAVE, BGSAVE [SCHEDULE] and LASTSAVE (server/persistence.h does the work), with Redis
// 7.0's replies and errors.
//
// BGSAVE SCHEDULE: Redis schedules a save only while another child (an AOF rewrite) runs,
// and otherwise starts one at once; lapse has no such child yet, so SCHEDULE starts at once
// too, with Redis's reply for that case ("Background saving started").
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/persistence.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;

namespace {

constexpr std::string_view kBgsaveRunning = "ERR Background save already in progress";

void CmdSave(ConnCommand& c) {
  if (auto err = c.server.persistence().SaveForeground()) return c.reply.Error(*err);
  c.reply.Ok();
}

void CmdBgsave(ConnCommand& c) {
  if (c.args.size() > 2 || (c.args.size() == 2 && !protocol::EqualsIgnoreCase(c.args[1], "SCHEDULE"))) {
    return c.reply.Error(errors::kSyntax);
  }
  if (!c.server.persistence().StartBackgroundSave()) return c.reply.Error(kBgsaveRunning);
  c.reply.SimpleString("Background saving started");
}

void CmdLastsave(ConnCommand& c) { c.reply.Integer(c.server.persistence().last_save_time_s()); }

}  // namespace

void RegisterPersistenceCommands(CommandTable& table) {
  table.Add({"save", 1, kAdmin | kNoScript, 0, 0, 0, CmdSave, "server", "Synchronously saves the database(s) to disk."});
  table.Add({"bgsave", -1, kAdmin | kNoScript, 0, 0, 0, CmdBgsave, "server",
             "Asynchronously saves the database(s) to disk."});
  table.Add({"lastsave", 1, kFast | kDangerous, 0, 0, 0, CmdLastsave, "server",
             "Returns the Unix timestamp of the last successful save to disk."});
}

}  // namespace lapse::server
