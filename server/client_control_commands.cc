// CLIENT PAUSE, UNPAUSE, REPLY and NO-EVICT: the CLIENT subcommands that change how the server
// treats clients rather than what it knows of them. The pause itself lives in
// server/client_pause.h; CLIENT REPLY is carried out by the dispatcher, which drops the
// replies the session's reply mode says to drop.
#include <chrono>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_pause.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// CLIENT PAUSE timeout [WRITE|ALL], with Redis's timeout errors.
void ClientPauseCommand(ConnCommand& c) {
  if (c.args.size() > 4) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "client"));
  // Redis checks the mode before the timeout.
  ClientPause::Mode mode = ClientPause::Mode::kAll;
  if (c.args.size() == 4) {
    if (EqualsIgnoreCase(c.args[3], "WRITE")) {
      mode = ClientPause::Mode::kWrite;
    } else if (!EqualsIgnoreCase(c.args[3], "ALL")) {
      return c.reply.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  int64_t ms = 0;
  if (!protocol::ParseInt64(c.args[2], &ms)) return c.reply.Error("ERR timeout is not an integer or out of range");
  if (ms < 0) return c.reply.Error("ERR timeout is negative");
  // Redis 7.0 adds the timeout to its clock unchecked: an end past the largest time wraps into
  // the past, which pauses nothing, and the command still answers OK.
  if (ms > INT64_MAX - WallClockMs()) ms = 0;
  c.server.shards().PauseReclaimUntil(c.server.client_pause().Pause(ms, mode));
  c.reply.Ok();
}

void ClientUnpauseCommand(ConnCommand& c) {
  c.server.client_pause().Unpause();
  c.server.shards().PauseReclaimUntil({});
  c.reply.Ok();
}

// CLIENT REPLY ON|OFF|SKIP. OFF and SKIP are not answered: their own reply is the first one
// they drop.
void ClientReplyCommand(ConnCommand& c) {
  using Mode = ClientSession::ReplyMode;
  std::string_view mode = c.args[2];
  if (EqualsIgnoreCase(mode, "ON")) {
    c.session.reply_mode = Mode::kOn;
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(mode, "OFF")) {
    c.session.reply_mode = Mode::kOff;
  } else if (EqualsIgnoreCase(mode, "SKIP")) {
    // SKIP while replies are off changes nothing, as in Redis.
    if (c.session.reply_mode != Mode::kOff) c.session.reply_mode = Mode::kSkipNext;
  } else {
    return c.reply.Error(errors::kSyntax);
  }
}

// CLIENT NO-EVICT on|off: lapse never evicts clients (no maxmemory-clients), so the flag is
// only kept and shown (flag e in CLIENT LIST).
void ClientNoEvictCommand(ConnCommand& c) {
  std::string_view value = c.args[2];
  bool on = EqualsIgnoreCase(value, "ON");
  if (!on && !EqualsIgnoreCase(value, "OFF")) return c.reply.Error(errors::kSyntax);
  c.session.info->no_evict.store(on, std::memory_order_relaxed);
  c.reply.Ok();
}

}  // namespace

bool RunClientControlSubcommand(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "PAUSE")) return ClientPauseCommand(c), true;
  if (EqualsIgnoreCase(sub, "UNPAUSE")) return ClientUnpauseCommand(c), true;
  if (EqualsIgnoreCase(sub, "REPLY")) return ClientReplyCommand(c), true;
  if (EqualsIgnoreCase(sub, "NO-EVICT")) return ClientNoEvictCommand(c), true;
  return false;
}

}  // namespace lapse::server
