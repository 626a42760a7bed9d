// SAVE, BGSAVE [SCHEDULE] and LASTSAVE (server/persistence.h does the work), with Redis
// 7.0's replies and errors.
//
// BGSAVE while an AOF rewrite walks the data set (Redis: while its child runs) is refused, or
// with SCHEDULE started when the rewrite's walk ends, as Redis does; otherwise SCHEDULE starts
// at once, with Redis's reply for that case ("Background saving started").
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
constexpr std::string_view kRewriteRunning =
    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule "
    "a BGSAVE whenever possible.";

void CmdSave(ConnCommand& c) {
  if (auto err = c.server.persistence().SaveForeground()) return c.reply.Error(*err);
  c.reply.Ok();
}

void CmdBgsave(ConnCommand& c) {
  if (c.args.size() > 2 || (c.args.size() == 2 && !protocol::EqualsIgnoreCase(c.args[1], "SCHEDULE"))) {
    return c.reply.Error(errors::kSyntax);
  }
  switch (c.server.persistence().StartBackgroundSave(c.args.size() == 2)) {
    case Persistence::BgsaveStart::kStarted:
      return c.reply.SimpleString("Background saving started");
    case Persistence::BgsaveStart::kScheduled:
      return c.reply.SimpleString("Background saving scheduled");
    case Persistence::BgsaveStart::kAlreadyRunning:
      return c.reply.Error(kBgsaveRunning);
    case Persistence::BgsaveStart::kRewriteRunning:
      return c.reply.Error(kRewriteRunning);
  }
}

void CmdLastsave(ConnCommand& c) { c.reply.Integer(c.server.persistence().last_save_time_s()); }

}  // namespace

void RegisterPersistenceCommands(CommandTable& table) {
  table.Add({"save", 1, kAdmin | kNoScript | kNoMulti, 0, 0, 0, CmdSave, "server", "Synchronously saves the database(s) to disk."});
  table.Add({"bgsave", -1, kAdmin | kNoScript, 0, 0, 0, CmdBgsave, "server",
             "Asynchronously saves the database(s) to disk."});
  table.Add({"lastsave", 1, kFast | kDangerous, 0, 0, 0, CmdLastsave, "server",
             "Returns the Unix timestamp of the last successful save to disk."});
}

}  // namespace lapse::server
