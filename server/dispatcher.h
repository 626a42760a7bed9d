// File: server/dispatcher.h
//
// Executes a pipelined batch of parsed commands for one client session and appends the
// replies, in order, to one output buffer (so the connection writes once per batch).
//
// Commands are checked once, before any handler runs: existence, arity, authentication.
// Single-key commands for the session's own shard run inline. When a key lives on another
// shard, the command and every later single-key command of the batch are queued per shard,
// until a command that is not single-key (or the batch end) forces a flush: each shard runs
// its queue in order on its own thread, all shards at once, and the replies are merged back
// into batch order. Commands on one key always reach the same shard in batch order, so a
// client observes its own writes exactly as with a single-threaded server.
//
// A batch may stop early, once its replies reach `flush_at` bytes or kMaxQueued commands
// wait for other shards, so that the connection can write what it has before going on: a
// client pipelining many large reads never makes the server hold all their replies at once.
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

  // Commands queued for other shards before a flush is forced: bounds the replies held in
  // the shards' buffers, as `flush_at` bounds `out`.
  static constexpr size_t kMaxQueued = 64;

  // Runs commands of `batch` in order and returns how many ran: all of them, unless `out`
  // reached `flush_at` bytes (or the session is closing) first. `batch` holds argument
  // vectors whose views stay valid until the returned awaitable ends.
  awaitable<size_t> Execute(std::span<const std::vector<std::string_view>> batch, std::string* out,
                            size_t flush_at = SIZE_MAX);

 private:
  struct Queued {
    const CommandSpec* spec;
    const std::vector<std::string_view>* args;
    uint32_t shard;
    int db;
    protocol::RespVersion resp;
    double charge = 0;  // settled on the shard's thread, read back after the flush
  };

  // Writes an error and returns nullptr unless the command may run now.
  const CommandSpec* Admit(const std::vector<std::string_view>& args, protocol::ReplyWriter& reply);
  // enable-debug-command's verdict for this client.
  bool DebugAllowed() const;
  // Charges a command Admit refused, in batch order (after any queued before it).
  void ChargeRefusal();
  uint32_t ShardOf(const CommandSpec& spec, const std::vector<std::string_view>& args) const;
  void RunShardCommand(Queued& q, engine::Shard& shard, std::string* out);
  // Runs a connection or fan-out command and settles its charge.
  awaitable<void> RunConnCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out);
  void RecordCharge(const CommandSpec& spec, double charge) {
    if (!(spec.flags & kNoCharge)) session_.last_charge = charge;
  }
  awaitable<void> Flush(std::string* out);
  // What CLIENT LIST shows as cmd=: a name that lives in the command table, or nullptr.
  void RecordLastCommand(const std::string* name) { session_.info->last_command.store(name, std::memory_order_relaxed); }

  Server& server_;
  ClientSession& session_;
  std::vector<Queued> queue_;
  // Per shard: the queue positions it runs, its reply bytes, and where each reply ends.
  std::vector<std::vector<size_t>> shard_queue_;
  std::vector<std::string> shard_out_;
  std::vector<std::vector<size_t>> shard_ends_;
  std::vector<uint32_t> involved_;
};

}  // namespace lapse::server
