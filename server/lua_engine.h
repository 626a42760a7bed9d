// File: server/lua_engine.h
//
// Lua 5.1 scripting as Redis 7.0 has it: one Lua state per event-loop thread (a script runs
// on its client's thread, and threads run scripts at the same time on different shards'
// data), the `redis` library (call, pcall, error_reply, status_reply, sha1hex, log,
// setresp, set_repl, acl_check_cmd, and for EVAL replicate_commands, breakpoint and debug),
// KEYS and ARGV, cjson and bit from Debian's packages, cmsgpack and struct
// (server/lua_libraries.h), and Redis's sandbox: no os, io, loadfile, dofile, print,
// getfenv, setfenv or newproxy, globals read-only, library tables read-only (pairs and next
// still walk them), and Redis's error texts ("... script: <sha>, on @user_script:<line>.").
//
// Values cross between Lua and RESP by Redis's rules: a command's reply becomes a Lua value
// (integer: number, bulk: string, nil: false, status: {ok=...}, error: {err=...}, array:
// table; under redis.setresp(3) also maps, sets, doubles, booleans and nil), and the
// script's result becomes the client's reply (number: integer, truncated; true: 1; false
// and nil: nil; {ok=...}, {err=...}; a table: an array up to its first nil).
//
// Lua errors unwind with longjmp (Debian's liblua5.1 is built as C): every C function given
// to Lua does its C++ work in a scope that ends before it raises an error.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/function_registry.h"
#include "server/reply_errors.h"
#include "server/running_scripts.h"

struct lua_State;
struct lua_Debug;

namespace lapse::server {

// What a script's redis.call needs from the server: to run one command for the script's
// client.
class ScriptHost {
 public:
  enum class Refusal {
    kNone,             // it ran; its reply is in *out
    kUnknownCommand,
    kWrongArity,
    kNotAllowed,       // Redis's noscript commands (MULTI, EVAL, AUTH, ...)
    kWriteInReadOnly,  // a write from EVAL_RO / EVALSHA_RO
    kOom,              // a command that may grow memory, over maxmemory
    kRestart,          // the script must start over holding every shard (ShardSet::ShardBusy)
    kNoPermission,     // the client's ACL user may not: *out holds the error's text
  };
  virtual ~ScriptHost() = default;
  // `logged`: whether the command's writes go to the AOF (redis.set_repl's REPL_AOF bit).
  virtual Refusal Call(const std::vector<std::string_view>& args, protocol::RespVersion resp, bool logged,
                       std::string* out) = 0;
  // redis.acl_check_cmd: whether the script's user may run the command with these arguments
  // (its keys included), or nullopt when no such command (or subcommand) exists.
  virtual std::optional<bool> AclAllows(const std::vector<std::string_view>& args) = 0;
};

// What a script's "#!lua" line said, kept with its compiled code.
struct CompiledScript {
  uint32_t flags = 0;
  bool shebang = false;
};

class LuaEngine {
 public:
  // Scripts (EVAL) and functions (FCALL) run in separate Lua states, as in Redis.
  enum class Mode { kScripts, kFunctions };
  // `vm_bytes`, when given, follows what the state holds (INFO's used_memory_vm_eval and
  // _functions): the allocator adds and takes back every block, so it reads right from any
  // thread at any time, and drops back by all of it when the engine is destroyed. It must
  // outlive the engine.
  explicit LuaEngine(Mode mode = Mode::kScripts, std::atomic<int64_t>* vm_bytes = nullptr);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Compiles `body` as script `sha` unless it already is; on failure, Redis's error
  // ("ERR Error compiling script (new function): user_script:1: ...").
  std::optional<std::string> Compile(const std::string& sha, std::string_view body, CompiledScript info = {});
  // What Compile kept for `sha` in this state, or nullptr: EVALSHA of a script this thread
  // has run needs neither its body nor the shared cache.
  const CompiledScript* Compiled(const std::string& sha) const {
    auto it = compiled_.find(sha);
    return it == compiled_.end() ? nullptr : &it->second;
  }
  // Runs the compiled script `sha` with KEYS and ARGV and writes its result, or its error,
  // as the reply; or writes nothing and answers kRestart when a redis.call asked to start
  // over (what the script wrote is then taken back by its step's undo log).
  // kSuspended: the script is busy and let its thread serve others (see Hook); it goes on
  // with Resume, on the same thread, holding what it held.
  enum class Outcome { kDone, kRestart, kSuspended };
  // The next runs report to `slot` (nullptr: nobody): past `threshold_ms` (0: never) the
  // script is marked busy in `registry`, and a kill request stops it.
  void Watch(RunningScripts* registry, RunningScripts::Slot* slot, int64_t threshold_ms, bool is_function) {
    watch_ = {registry, slot, threshold_ms, is_function};
  }
  // Functions mode. Compiles a library's code and runs it where only redis.register_function,
  // redis.log and the constants exist; the functions it registers are described in
  // *functions (sorted by name) and, with `keep`, become callable by RunFunction. On failure,
  // Redis's error ("ERR Error compiling function: ...", "ERR Error registering functions:
  // ...", "ERR No functions registered").
  std::optional<std::string> LoadLibrary(std::string_view code, bool keep, std::vector<FunctionInfo>* functions);
  // Runs function `name` (loaded with keep) with its keys and args, as Run runs a script.
  Outcome RunFunction(const std::string& name, std::span<const std::string_view> keys,
                      std::span<const std::string_view> args, ScriptHost& host, protocol::ReplyWriter& reply);
  // Goes on with a script that answered kSuspended.
  Outcome Resume(protocol::ReplyWriter& reply);
  // Whether a busy script may suspend (its caller can wait for the event loop).
  void AllowSuspend(bool allow) { suspend_allowed_ = allow; }
  Outcome Run(const std::string& sha, std::span<const std::string_view> keys, std::span<const std::string_view> argv,
           ScriptHost& host, protocol::ReplyWriter& reply);
  // The errors the last finished run's reply holds (server/reply_errors.h).
  ReplyErrors TakeReplyErrors() { return std::exchange(reply_errors_, {}); }

 private:
  static void Hook(lua_State* L, lua_Debug* ar);
  static bool SafeToYield(lua_State* L, int first_level = 0);
  // pcall and xpcall for scripts (server/lua_protected_calls.cc).
  void InstallProtectedCalls();
  static int PcallStart(lua_State* L);
  static int XpcallStart(lua_State* L);
  static int PcallRun(lua_State* L);
  static int PcallRelay(lua_State* L);
  static int PcallFinish(lua_State* L);
  static int XpcallFinish(lua_State* L);
  static int CoroutineYield(lua_State* L);
  static int CoroutineRunning(lua_State* L);
  static int StartChild(lua_State* L, int first, int nargs);
  int ResumeChild(lua_State* L, lua_State* co, int nargs);
  bool IsRunningChild(lua_State* L) const;
  void HookEveryLine(lua_State* L);
  static bool InWrapper(lua_State* L, lua_Debug* ar);
  static int RedisCall(lua_State* L);
  static int RedisPcall(lua_State* L);
  static int RedisSetResp(lua_State* L);
  static int RedisSha1Hex(lua_State* L);
  static int RedisLog(lua_State* L);
  static int RedisAclCheckCmd(lua_State* L);
  static int RedisSetRepl(lua_State* L);
  // pairs, ipairs, next and rawget see through a read-only library table to the library.
  static int ReadonlyAwareTableFunction(lua_State* L);
  void SetUpFunctions();
  static int RegisterFunction(lua_State* L);
  static int RegisterFunctionFromTable(lua_State* L);
  static int RegisterChecked(lua_State* L, int name_index, int callback_index, int description_index, uint32_t flags);
  // Runs the callable and its `nargs` arguments on top of the stack in the engine's coroutine
  // and writes its result or error; `label` names it in errors.
  Outcome Start(int nargs, const std::string& label, protocol::ReplyWriter& reply);
  Outcome Continue(int nargs, protocol::ReplyWriter& reply);
  lua_State* Coroutine();
  void DropCoroutine();
  static std::string ErrorMessage(lua_State* co);
  std::string ErrorLocation(lua_State* co);
  static void PushStrings(lua_State* L, std::span<const std::string_view> items);
  // redis.call and redis.pcall: leaves the result (or the error table) on the stack and
  // returns 1, or returns -1 when the caller must raise the error table on the stack.
  int Call(lua_State* L, bool raise);
  // The arguments of a redis lib call (strings, and numbers as text kept in `numbers`), or
  // Redis's error text for a call without any or with another type.
  static const char* CommandArguments(lua_State* L, std::vector<std::string>& numbers,
                                      std::vector<std::string_view>& args);
  void PushReply(lua_State* L, std::string_view framed);
  void WriteResult(lua_State* L, int index, protocol::ReplyWriter& reply, int depth);
  // Writes an error of the result; `already_counted`: it came from a redis.call.
  void WriteError(protocol::ReplyWriter& reply, const std::string& text, bool already_counted);
  static LuaEngine& Self(lua_State* L);

  lua_State* L_;
  ScriptHost* host_ = nullptr;  // while a script runs
  int resp_ = 2;                // redis.setresp, for the script that runs
  bool logged_ = true;          // redis.set_repl's REPL_AOF bit, for the script that runs
  bool restart_ = false;        // a redis.call asked to start over: every later one fails
  ReplyErrors reply_errors_;    // what the result written holds
  int runs_since_gc_ = 0;
  std::vector<FunctionInfo>* loading_ = nullptr;  // during LoadLibrary
  struct WatchState {
    RunningScripts* registry = nullptr;
    RunningScripts::Slot* slot = nullptr;
    int64_t threshold_ms = 0;
    bool is_function = false;
  } watch_;
  int64_t run_started_ns_ = 0;
  // Scripts and functions run in a coroutine of the engine's, so that a busy one can yield
  // (from the hook) and let its thread serve other clients. It is reused after a return and
  // made anew after an error.
  lua_State* co_ = nullptr;
  int co_ref_ = -2;  // LUA_NOREF
  std::string label_;  // the running script's SHA-1 or function name
  std::unordered_map<std::string, CompiledScript> compiled_;
  bool suspended_by_hook_ = false;
  // The protected calls' child coroutines now running (resumed in C), innermost last.
  struct Child {
    lua_State* thread;
    lua_State* parent;  // the thread whose pcall resumed it
  };
  std::vector<Child> children_;
  bool suspend_allowed_ = false;
};

}  // namespace lapse::server
