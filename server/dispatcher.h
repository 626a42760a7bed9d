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
// Inside MULTI the same checks decide between QUEUED and a refusal that dooms the
// transaction (server/transaction_commands.cc); EXEC then runs the queue through
// RunTransaction as one atomic step.
//
// A batch may stop early, once its replies reach `flush_at` bytes, so that the connection
// can write what it has before going on: a client pipelining many large reads never makes
// the server hold all their replies at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl.h"
#include "server/asio.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/lua_engine.h"
#include "server/shard_set.h"
#include "server/tracking.h"

namespace lapse::server {

class Server;
class AppendOnlyFile;
class ScriptUndo;

class Dispatcher {
 public:
  Dispatcher(Server& server, ClientSession& session);

  // Runs commands of `batch` in order and returns how many ran: all of them, unless `out`
  // reached `flush_at` bytes (or the session is closing) first. `batch` holds argument
  // vectors whose views stay valid until the returned awaitable ends.
  awaitable<size_t> Execute(std::span<const std::vector<std::string_view>> batch, std::string* out,
                            size_t flush_at = SIZE_MAX);

  // EXEC: runs the queued commands as one atomic step over every shard they and the watched
  // keys live on, replying with the array of their replies (or EXECABORT, or a null array
  // when a watched key changed). The charge is the sum of the commands' charges.
  awaitable<void> RunTransaction(protocol::ReplyWriter& reply);

  // A script's redis.call: runs `args` for this client, inside the script's atomic step,
  // with its reply in `resp` appended to *out, unless a script may not run it.
  // Writes the replies already in `out` (the earlier commands' of the batch) to the client
  // now: a blocking command calls it before it waits, as Redis writes them meanwhile.
  awaitable<void> FlushReplies(std::string* out);

  // Before replies leave: the batch's writes are in the log, and on disk under appendfsync
  // always (server/aof.h).
  awaitable<void> MakeLogDurable();
  // The common case of MakeLogDurable, without a coroutine frame on every reply: false when
  // appendfsync always wants the thread's other clients to run first (then co_await it).
  bool MakeLogDurableAtOnce();

  // redis.acl_check_cmd: whether this client's user may run `args`, whatever their number;
  // nullopt for an unknown command or subcommand.
  std::optional<bool> AclAllowsForScript(const std::vector<std::string_view>& args);
  // `logged`: whether the command's writes go to the AOF (redis.set_repl).
  ScriptHost::Refusal RunForScript(const std::vector<std::string_view>& args, bool read_only, bool allow_oom,
                                   protocol::RespVersion resp, bool logged, std::string* out);

  // A growable script step's undo log (server/script_undo.h), in dispatcher_script.cc.
  // What the running EXEC's or script's commands cost so far: where a rollback goes back to.
  double charge_sum() const { return charge_sum_; }
  // The run counts (or can no longer start over): emits what `undo` held back, in order.
  void CommitScriptUndo(ScriptUndo& undo);
  // The run starts over: takes back its writes, counters and charges, drops its log block
  // and what it held back, and emits the expiry and eviction events that happened anyway.
  void RollBackScriptUndo(ScriptUndo& undo);

 private:
  // The verdict on a command: `spec` when the name is known (even if refused), and the
  // error it gets, empty when it may run.
  struct Admission {
    const CommandSpec* spec = nullptr;
    uint32_t stat_id = 0;  // the command's or its subcommand's (INFO commandstats)
    std::string error;
    bool ok() const { return error.empty(); }
  };
  Admission Admit(const std::vector<std::string_view>& args);
  // ACL: the one branch the common case (a user who may run everything) pays; otherwise
  // whether the session's user may run the command, with the NOPERM error and a log entry.
  bool RefusedByAcl(const CommandSpec& spec, uint32_t stat_id, const std::vector<std::string_view>& args,
                    std::string* error) {
    if (!session_.info->acl_restricted.load(std::memory_order_relaxed)) [[likely]] return false;
    return CheckAcl(spec, stat_id, args, error);
  }
  bool CheckAcl(const CommandSpec& spec, uint32_t stat_id, const std::vector<std::string_view>& args,
                std::string* error);
  std::optional<AclDenial> AclDenies(const CommandSpec& spec, uint32_t stat_id, const std::vector<std::string_view>& args);
  // Replies to a refused command; inside MULTI a refusal dooms the transaction, and a
  // refused EXEC ends it at once (its error then says EXECABORT, as Redis's does).
  void Refuse(const Admission& admission, protocol::ReplyWriter& reply);
  // A replica (server/replication.h) that got a reply: the reply goes and the client closes.
  void CloseRepliedReplica(const CommandSpec* spec, std::string* out, size_t before);
  void NoteWriteOffset(const CommandSpec& spec);
  // A connection or fan-out write that runs uncaptured (no log, no replica yet), counted
  // while it runs (UncapturedWritesInFlight, server/replication.h).
  class UncapturedWrite {
   public:
    UncapturedWrite(Dispatcher& d, const CommandSpec& spec);
    ~UncapturedWrite();
    UncapturedWrite(const UncapturedWrite&) = delete;
    UncapturedWrite& operator=(const UncapturedWrite&) = delete;

   private:
    size_t thread_;
    bool active_ = false;
  };
  // Whether maxmemory refuses this command now (inside MULTI nearly every command is refused,
  // since queuing takes memory too: Redis 7.0's rule).
  bool RefusedForMemory(const CommandSpec& spec);
  static bool AllowedWhileSubscribed(const CommandSpec& spec);
  static bool AllowedWhileBusy(const CommandSpec& spec, const std::vector<std::string_view>& args);
  std::string_view BusyError() const;
  void Queue(const Admission& admission, const std::vector<std::string_view>& args, protocol::ReplyWriter& reply);
  // Counts a command that ran (INFO commandstats): its call, its time since `start`, and
  // whether its reply, from out[before] on, is an error; logs it if it was slow (SLOWLOG).
  // Returns the clock reading that ended its time, which the next command of a batch may
  // take as its start.
  std::chrono::steady_clock::time_point CountCall(const CommandSpec& spec, uint32_t stat_id, std::chrono::steady_clock::time_point start,
                 const std::vector<std::string_view>& args, const std::string& out, size_t before);
  // CountCall's work once the call's figures are known (now, or when a script's run counts).
  void RecordCall(const CommandSpec& spec, uint32_t stat_id, std::chrono::nanoseconds elapsed, bool failed,
                  uint64_t changes, const std::vector<std::string_view>& args, int db);
  // INFO errorstats: the error reply at out[at], if there is one (held back like CountCall).
  void CountErrorReply(const std::string& out, size_t at);
  // Counts one error reply line ("-CODE ...\r\n"), held back while a script step may roll back.
  void CountErrorLine(std::string_view line);
  // Counts a command a script's redis.call could not run, as Redis does; returns `refusal`.
  ScriptHost::Refusal CountScriptRefusal(ScriptHost::Refusal refusal, const CommandSpec* spec, uint32_t stat_id);
  // Before a script's command runs in a step that may start over: keeps the pre-images of the
  // keys it may write, or takes every shard when they cannot be kept (ShardBusy).
  void PrepareUndo(ShardSet::AtomicStep& step, const CommandSpec& spec, const std::vector<std::string_view>& args,
                   std::span<const uint32_t> footprint);
  // CLIENT PAUSE: waits while the pause holds `spec`, after writing the replies so far; false
  // when the client was killed meanwhile.
  awaitable<bool> WaitOutPause(const CommandSpec& spec, std::string* out);
  // CLIENT REPLY OFF|SKIP: for one command of a batch, drops what it wrote to `out` (its
  // reply and the messages put before it) when the session's reply mode says so.
  class ReplyGate {
   public:
    ReplyGate(Dispatcher& d, std::string* out);
    ~ReplyGate();
    ReplyGate(const ReplyGate&) = delete;
    ReplyGate& operator=(const ReplyGate&) = delete;

   private:
    Dispatcher& dispatcher_;
    std::string* out_;
    size_t start_;
    size_t flushed_;
  };
  // MONITOR (server/monitor.h): the line for a command, to every monitor, at the moment
  // Redis would send it.
  static bool MonitoredBeforeRun(const CommandSpec& spec);
  void FeedMonitorsBeforeRun(const CommandSpec& spec, const std::vector<std::string_view>& args);
  void FeedMonitors(const CommandSpec& spec, uint32_t stat_id, const std::vector<std::string_view>& args, int db);
  void LogSlowCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, int64_t micros);
  // The shards EXEC must hold: those of the queued commands' keys and of the watched keys, or
  // all of them when a command's footprint is not known from its keys.
  std::vector<uint32_t> TransactionFootprint() const;
  // Adds the shards `args` touches to `ids`; false when that is every shard.
  bool AddFootprint(const CommandSpec& spec, const std::vector<std::string_view>& args,
                    std::vector<uint32_t>& ids) const;
  // The append-only log: a fan-out or connection write's entry, made before it runs and
  // logged as it lets go of its shards (server/aof.h); false when it is not logged.
  bool LogBeforeRun(const CommandSpec& spec, const std::vector<std::string_view>& args);
  // While alive, EXEC's or a script's writes are gathered into one block of the log.
  class AofBlock {
   public:
    AofBlock(Server& server, const CommandSpec& spec);
    ~AofBlock();
    AofBlock(const AofBlock&) = delete;
    AofBlock& operator=(const AofBlock&) = delete;

   private:
    AppendOnlyFile* aof_;
  };
  // Runs an admitted shard or connection command and returns true; false for a fan-out
  // command, which the caller then awaits with RunFanoutCommand.
  bool RunAtOnce(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out);
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
    charge_sum_ += charge;
  }
  // Client-side caching (server/tracking.h). Records the keys a read-only command reads, if
  // this client tracks them: before it runs (kBefore: provisionally, so that a write from
  // another thread between the read and the record is not missed) and after (kAfter).
  enum class ReadPhase { kBefore, kAfter };
  void TrackReads(const CommandSpec& spec, Args args, ReadPhase phase);
  // Records the keys of `spec` with `args` (a script's declared keys too), whatever the command.
  void RememberKeys(const CommandSpec& spec, Args args, ReadPhase phase);
  // After every command: CLIENT CACHING's answer lasts one command (or one MULTI ... EXEC),
  // and a CLIENT subcommand, as in Redis, does not count.
  void EndCachingAnswer(const CommandSpec* spec);
  // What CLIENT LIST shows as cmd=: a name that lives in the command table, or nullptr.
  void RecordLastCommand(const std::string* name) { session_.info->last_command.store(name, std::memory_order_relaxed); }

  Server& server_;
  ClientSession& session_;
  bool unlogged_ = false;  // a script's command after redis.set_repl without REPL_AOF
  double charge_sum_ = 0;  // what the commands of the running EXEC or script cost so far
  size_t flushed_ = 0;     // bytes FlushReplies took out of the output buffer, ever
  // The changes the last command's handler counted itself, for CountCall (ShardCommand::changes).
  std::optional<uint64_t> handler_changes_;
  // The errors the last command's reply holds, when its handler said (ConnCommand::reply_errors).
  std::optional<ReplyErrors> handler_reply_errors_;
  Tracking::CommandContext tracking_context_;
  // The command a script runs for (EVAL, FCALL, even inside EXEC): a read in the script
  // tracks that command's declared keys, as in Redis 7.0.
  const CommandSpec* outer_spec_ = nullptr;
  const std::vector<std::string_view>* outer_args_ = nullptr;
};

}  // namespace lapse::server
