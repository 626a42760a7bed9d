// File: server/dispatcher.h
//
// Executes a pipelined batch of parsed commands for one client session and appends the
// replies, in order, to one output buffer (so the connection writes once per batch).
//
// Commands are checked once, before any handler runs: existence, arity, authentication.
// A single-key command then runs at once on the calling thread, holding its key's shard
// (ShardSet::WithShard), so its reply is simply appended: commands reach their shards in
// batch order and a client observes its own writes exactly as with a single-threaded server.
//
// A batch may stop early, once its replies reach `flush_at` bytes, so that the connection
// can write what it has before going on: a client pipelining many large reads never makes
// the server hold all their replies at once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/asio.h"
#include "server/client_session.h"
#include "server/command_table.h"

namespace lapse::server {

class Server;

class Dispatcher {
 public:
  Dispatcher(Server& server, ClientSession& session);

  // Runs commands of `batch` in order and returns how many ran: all of them, unless `out`
  // reached `flush_at` bytes (or the session is closing) first. `batch` holds argument
  // vectors whose views stay valid until the returned awaitable ends.
  awaitable<size_t> Execute(std::span<const std::vector<std::string_view>> batch, std::string* out,
                            size_t flush_at = SIZE_MAX);

 private:
  // Writes an error and returns nullptr unless the command may run now.
  const CommandSpec* Admit(const std::vector<std::string_view>& args, protocol::ReplyWriter& reply);
  // enable-debug-command's verdict for this client.
  bool DebugAllowed() const;
  // Charges a command Admit refused.
  void ChargeRefusal();
  uint32_t ShardOf(const CommandSpec& spec, const std::vector<std::string_view>& args) const;
  // Runs a single-key command holding its shard and settles its charge.
  void RunShardCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out);
  // Runs a connection command and settles its charge.
  void RunConnCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out);
  // Runs a fan-out command (which may let the thread serve others between its rounds).
  awaitable<void> RunFanoutCommand(const CommandSpec& spec, const std::vector<std::string_view>& args,
                                   std::string* out);
  void SettleConnCharge(const CommandSpec& spec, const ConnCommand& cmd, bool rejected);
  void RecordCharge(const CommandSpec& spec, double charge) {
    if (!(spec.flags & kNoCharge)) session_.last_charge = charge;
  }
  // What CLIENT LIST shows as cmd=: a name that lives in the command table, or nullptr.
  void RecordLastCommand(const std::string* name) { session_.info->last_command.store(name, std::memory_order_relaxed); }

  Server& server_;
  ClientSession& session_;
};

}  // namespace lapse::server
