// File: server/command_table.h
//
// The one table that declares every command once: name, arity (Redis convention: positive
// = exact argument count including the name, negative = at least that many), flags, key
// positions and handler. Dispatch consults it before any handler runs, so handlers never
// check existence or arity themselves.
//
// A handler is one of three kinds, chosen by what its work touches:
//  - ShardHandler: touches one key; runs on the connection's thread holding that key's shard.
//  - ConnHandler: touches only the connection or server-wide state; runs on the
//    connection's thread, synchronously.
//  - FanoutHandler: touches several shards (MGET, DBSIZE, FLUSHALL, ...); a coroutine on the
//    connection's thread that holds the shards it needs (ShardSet) and may let the thread
//    serve other clients between rounds of a long job (DBSIZE after a mass expiry).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "engine/request_units.h"
#include "server/asio.h"
#include "server/reply_errors.h"

namespace lapse::engine {
class Shard;
class Db;
struct ContainerInfo;
}  // namespace lapse::engine

namespace lapse::protocol {
class ReplyWriter;
}

namespace lapse::server {

struct ClientSession;
class Dispatcher;
class Server;

using Args = std::span<const std::string_view>;

// What a request costs, filled in by its handler; the dispatcher settles it (a rejected
// request costs engine::kRejectedRu, a throttled one nothing) and charges the budget of
// `container` if it has its own, else the server's.
struct RequestCharge {
  double ru = 0;
  engine::ContainerInfo* container = nullptr;
  // A handler that does not hold the container's shard when the charge is settled holds the
  // container itself: another client may drop it meanwhile. (A ShardHandler is settled
  // holding the shard, whose container part keeps it.)
  std::shared_ptr<engine::ContainerInfo> held;
  bool throttled = false;
  void Add(engine::RuOp op, size_t bytes, size_t visited = 0) { ru += engine::RuCharge(op, bytes, visited); }
  void Hold(std::shared_ptr<engine::ContainerInfo> info) {
    container = info.get();
    held = std::move(info);
  }
};

// What a ShardHandler sees. It runs holding the shard and must not touch the connection.
struct ShardCommand {
  engine::Shard& shard;
  engine::Db& db;
  Args args;
  protocol::ReplyWriter& reply;
  int64_t now_ms;
  const Server& server;
  RequestCharge charge{};
  // Set by a handler whose reply does not show how many changes Redis counts for it
  // (server/dirty_count.h).
  std::optional<uint64_t> changes{};
};

// What ConnHandlers and FanoutHandlers see; they run on the connection's thread.
struct ConnCommand {
  ClientSession& session;
  Server& server;
  Args args;
  protocol::ReplyWriter& reply;
  RequestCharge charge{};
  Dispatcher* dispatcher = nullptr;  // the connection's, for EXEC, which runs other commands
  std::optional<uint64_t> changes{};  // as ShardCommand's
  // Set by a handler whose reply's errors count otherwise than by its first byte (a script's
  // result, server/reply_errors.h).
  std::optional<ReplyErrors> reply_errors{};
};

using ShardHandler = void (*)(ShardCommand&);
using ConnHandler = void (*)(ConnCommand&);
// A FanoutHandler may suspend only through YieldThread (keyspace_commands.cc), which does not
// suspend inside an atomic step (EXEC): a step holds shards, and no other client of the
// thread may run meanwhile.
using FanoutHandler = awaitable<void> (*)(ConnCommand&);
// For a command whose keys move with its options (GEORADIUS ... STORE key): appends the
// argument indexes of its keys to `out`, replacing the first/last/step rule. It must name
// every key the handler may touch, since a transaction holds only the shards they name.
using KeyFinder = void (*)(Args args, std::vector<size_t>* out);

enum CommandFlags : uint32_t {
  kWrite = 1 << 0,       // modifies the keyspace
  kReadOnly = 1 << 1,
  kNoAuth = 1 << 2,      // allowed before AUTH (AUTH, HELLO, QUIT)
  kAdmin = 1 << 3,
  kFast = 1 << 4,
  kConnection = 1 << 5,  // concerns the connection (Redis's @connection ACL category)
  kItemKey = 1 << 6,     // args[1] is a container and args[2] an item id: route by both
  kNoCharge = 1 << 7,    // leaves the connection's last charge alone (LASTCHARGE itself)
  kDenyOom = 1 << 8,     // may grow memory: refused while used memory is over maxmemory
  kContainerArg = 1 << 9,  // args[1] names a container: its name is checked before the handler runs
  kProtected = 1 << 10,    // DEBUG: refused, even before AUTH, unless enable-debug-command allows it
  kDangerous = 1 << 11,    // Redis's @dangerous ACL category (every kAdmin command is also in it)
  kNotQueued = 1 << 12,    // runs at once inside MULTI instead of being queued (EXEC, DISCARD, ...)
  kSkipSlowlog = 1 << 13,  // never in SLOWLOG (EXEC: its commands are logged one by one)
  kNoScript = 1 << 14,     // refused from redis.call (Redis's noscript: MULTI, EVAL, AUTH, ...)
  kSumsCharges = 1 << 15,  // charged what the commands it runs cost (EVAL: its redis.calls)
  kAllowBusy = 1 << 16,    // served while a script is busy (Redis's allow_busy)
  kBlocking = 1 << 17,     // may block the client (BLPOP, BZPOPMIN, ...): Redis's @blocking
  kPubSub = 1 << 18,       // Pub/Sub (Redis's pubsub flag and @pubsub): touches no shard
  kNotListed = 1 << 19,    // not a command clients send (POST, HOST:): COMMAND knows nothing of it, as Redis's
  kNoMulti = 1 << 20,      // refused inside MULTI (Redis's no_multi: SAVE, SHUTDOWN, SYNC, PSYNC)
};

// A subcommand of a container command (CLIENT, CONFIG, COMMAND, OBJECT). Redis 7.0 knows
// each by its full name ("client|list"), which its arity errors and CLIENT LIST's cmd= show,
// and checks its arity before the container's handler runs.
struct SubcommandSpec {
  std::string name;  // full, lower case: "<command>|<subcommand>"
  int arity;         // counts the container's name too, as Redis's does
  uint32_t stat_id = 0;  // its slot in the per-command statistics (INFO commandstats)
  std::string_view Short() const { return std::string_view(name).substr(name.find('|') + 1); }
};

struct CommandSpec {
  std::string name;  // lower case
  int arity;
  uint32_t flags;
  int first_key;  // 0 when the command has no key
  int last_key;   // -1: the last argument
  int key_step;
  std::variant<ShardHandler, ConnHandler, FanoutHandler> handler;
  std::string group;    // Redis's command group, which decides some ACL categories (server/acl.h)
  std::string summary;  // one line; COMMAND DOCS answers from server/command_metadata.h
  std::vector<SubcommandSpec> subcommands = {};  // empty unless a container command
  uint32_t stat_id = 0;  // its slot in the per-command statistics; a container's subcommands have their own
  KeyFinder find_keys = nullptr;  // set for Redis's "movablekeys" commands that lapse locates itself

  // Case-insensitive; nullptr when `sub` is none of the subcommands.
  const SubcommandSpec* FindSubcommand(std::string_view sub) const;
};

class CommandTable {
 public:
  // `subcommands` are given by their short names ({"list", -2}); a container's handler may
  // then assume that args[1] is one of them and that the arity fits.
  void Add(CommandSpec spec, std::vector<SubcommandSpec> subcommands = {});
  // Case-insensitive lookup; nullptr when unknown.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<const CommandSpec*>& All() const { return ordered_; }
  // Statistics slots: one per command and one per subcommand, named as INFO commandstats
  // names them ("get", "client|list").
  size_t stat_count() const { return stat_names_.size(); }
  const std::string& stat_name(uint32_t id) const { return *stat_names_[id]; }
  // `rename-command old new`: new == "" disables the command. As in Redis the command is then
  // found by its new name but keeps its own in replies (arity errors, COMMAND). Returns Redis's
  // start-up error for an unknown command or a name already taken.
  std::optional<std::string> Rename(std::string_view old_name, std::string_view new_name);

 private:
  std::unordered_map<std::string, CommandSpec> by_name_;
  std::vector<const CommandSpec*> ordered_;
  std::vector<const std::string*> stat_names_;  // point into by_name_'s nodes, which stay put
};

// Calls fn(i) for every argument index i that names a key: those the spec's finder names,
// or else those its key positions (first, last, step, Redis's convention: a negative last
// counts from the end) name among the arguments.
template <typename Fn>
void ForEachKeyIndex(const CommandSpec& spec, Args args, Fn&& fn) {
  if (spec.find_keys != nullptr) {
    std::vector<size_t> found;
    spec.find_keys(args, &found);
    for (size_t i : found) fn(i);
    return;
  }
  if (spec.first_key <= 0) return;
  size_t argc = args.size();
  int64_t last = spec.last_key < 0 ? static_cast<int64_t>(argc) + spec.last_key : spec.last_key;
  for (int64_t i = spec.first_key; i <= last && i < static_cast<int64_t>(argc); i += std::max(1, spec.key_step)) {
    fn(static_cast<size_t>(i));
  }
}

// Commands that name their keys by count (Redis's movablekeys), which the table does not
// locate: where the count is; the keys follow it.
inline std::optional<size_t> KeyCountIndex(const CommandSpec& spec) {
  for (std::string_view name : {"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}) {
    if (spec.name == name) return 2;  // EVAL script numkeys key ...
  }
  for (std::string_view name : {"sintercard", "zunion", "zinter", "zdiff", "zintercard"}) {
    if (spec.name == name) return 1;  // ZUNION numkeys key ...
  }
  return std::nullopt;
}

// True when argc satisfies an arity.
inline bool ArityOk(int arity, size_t argc) {
  return arity >= 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}
inline bool ArityOk(const CommandSpec& spec, size_t argc) { return ArityOk(spec.arity, argc); }

// Keyspace notifications (server/keyspace_events.h): `event` of class `event_class` on `key`
// of the command's database, once the change is made.
void NotifyKeyspace(const ShardCommand& c, uint32_t event_class, std::string_view event, std::string_view key);
void NotifyKeyspace(const ConnCommand& c, uint32_t event_class, std::string_view event, std::string_view key);

// The command families; each adds its commands to the table.
void RegisterConnectionCommands(CommandTable& table);
void RegisterCommandCommand(CommandTable& table);  // COMMAND (command_command.cc)
void RegisterServerCommands(CommandTable& table);
void RegisterInfoCommand(CommandTable& table);   // INFO (info_command.cc)
void RegisterDebugCommand(CommandTable& table);  // DEBUG (debug_command.cc)
void RegisterStringCommands(CommandTable& table);
void RegisterBitCommands(CommandTable& table);
void RegisterKeyCommands(CommandTable& table);
void RegisterKeyspaceCommands(CommandTable& table);
void RegisterDumpCommands(CommandTable& table);
void RegisterPersistenceCommands(CommandTable& table);
void RegisterContainerCommands(CommandTable& table);
void RegisterChangeFeedCommands(CommandTable& table);
void RegisterTransactionCommands(CommandTable& table);
void RegisterScriptCommands(CommandTable& table);
void RegisterFunctionCommands(CommandTable& table);
void RegisterMemoryCommands(CommandTable& table);
void RegisterHashCommands(CommandTable& table);
void RegisterSetCommands(CommandTable& table);
void RegisterHllCommands(CommandTable& table);
void RegisterListCommands(CommandTable& table);
void RegisterZSetCommands(CommandTable& table);
void RegisterZSetBlockingCommands(CommandTable& table);
void RegisterSortCommands(CommandTable& table);
void RegisterPubSubCommands(CommandTable& table);
void RegisterGeoCommands(CommandTable& table);
void RegisterOperationsCommands(CommandTable& table);
void RegisterStreamCommands(CommandTable& table);
void RegisterAclCommands(CommandTable& table);
void RegisterAofCommands(CommandTable& table);
void RegisterStandaloneCommands(CommandTable& table);

// Builds the full table.
CommandTable BuildCommandTable();

}  // namespace lapse::server
