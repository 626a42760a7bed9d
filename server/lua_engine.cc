// File: server/lua_engine.cc
//
// The Lua state and its sandbox (server/lua_engine.h says what scripts see), the runs of a
// script in the engine's coroutine, redis.call and redis.pcall, and the count hook that makes
// a busy script step aside or stop. Values are converted in lua_values.cc, FUNCTION libraries
// live in lua_functions.cc and pcall/xpcall in lua_protected_calls.cc.
#include "server/lua_engine.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "protocol/reply_reader.h"
#include "server/lua_libraries.h"
#include "server/lua_internal.h"
#include "server/sha1.h"

namespace lapse::server {

namespace lua_detail {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int NonexistentGlobalError(lua_State* L) {
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

int ReadonlyTableError(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

}  // namespace lua_detail

using namespace lua_detail;

namespace {

// The error a redis.call gets when the script must start over; never seen by a client.
constexpr const char* kRestartText = "ERR lapse restarts this script holding every shard";
constexpr int kGcPeriod = 50;

// Runs once per Lua state, after the libraries are loaded: the rest of the redis library,
// the error handler that adds where an error happened, and Redis 7.0's sandbox (library
// tables and globals read-only, reading an undefined global an error, no debug library).
// The sandbox raises its errors from C functions, as Redis does: the error then names the
// script's line ("user_script:1: ..."), and the handler skips the C frame to find it.
constexpr const char* kPrelude = R"lua(
local global_error, readonly_error, version, version_num, functions_mode = ...
local dbg = debug
local function bad_arguments() return {err='ERR wrong number or type of arguments'} end
-- As Redis 7.0's luaPushErrorBuff: "-CODE message" keeps its code, a message with no space
-- gets ERR, and the message loses the CR and LF at its ends. Redis reads it as a C string.
redis.error_reply = function(...)
  local e = ...
  if select('#', ...) ~= 1 or type(e) ~= 'string' then return bad_arguments() end
  e = e:match('^[^%z]*')
  if e:sub(1, 1) ~= '-' then e = '-' .. e end
  local space = e:find(' ', 1, true)
  local code, message = 'ERR', e:sub(2)
  if space then code, message = e:sub(2, space - 1), e:sub(space + 1) end
  local first, last = message:match('^[\r\n]*()'), #message
  while last >= first and (message:byte(last) == 10 or message:byte(last) == 13) do last = last - 1 end
  return {err=code .. ' ' .. message:sub(first, last)}
end
redis.status_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then return bad_arguments() end
  return {ok=s}
end
if not functions_mode then
  redis.replicate_commands = function() return true end
  -- What Redis answers while its Lua debugger (SCRIPT DEBUG, which lapse lacks) is off.
  redis.breakpoint = function() return false end
  redis.debug = function() end
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = version, version_num
local handler = function(err)
  local i = dbg.getinfo(2, 'nSl')
  if i and i.what == 'C' then i = dbg.getinfo(3, 'nSl') end
  if type(err) ~= 'table' then err = {err='ERR ' .. tostring(err)} end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
local originals = setmetatable({}, {__mode = 'k'})  -- read-only proxy -> its library
local function readonly(t)
  local proxy = setmetatable({}, {__index = t, __newindex = readonly_error, __metatable = false})
  originals[proxy] = t
  return proxy
end
for _, name in ipairs({'redis', 'string', 'math', 'table', 'cjson', 'bit', 'cmsgpack', 'struct', 'coroutine'}) do
  if rawget(_G, name) then rawset(_G, name, readonly(rawget(_G, name))) end
end
debug = nil
setmetatable(_G, {__index = global_error, __newindex = readonly_error, __metatable = false})
return handler, originals
)lua";

void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

// A number as a command argument: the shortest text that reads back as the same double
// ("1", "1.5"), as Redis's fpconv_dtoa writes it.
std::string NumberArgument(lua_Number n) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(n));
  return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

// luaL_newstate's allocator, counting. Lua 5.1 gives the old size of every block it frees
// or resizes (0 for a new one), so the count is exactly what Lua's own GC count says.
void* CountingAlloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* bytes = static_cast<std::atomic<int64_t>*>(ud);
  if (new_size == 0) {
    free(ptr);
    if (bytes != nullptr && ptr != nullptr) bytes->fetch_sub(static_cast<int64_t>(old_size), std::memory_order_relaxed);
    return nullptr;
  }
  void* block = realloc(ptr, new_size);
  if (bytes != nullptr && block != nullptr) {
    bytes->fetch_add(static_cast<int64_t>(new_size) - static_cast<int64_t>(ptr ? old_size : 0), std::memory_order_relaxed);
  }
  return block;
}

// luaL_newstate's panic function: an error outside any protected call, which lapse never
// makes on purpose.
int Panic(lua_State* L) {
  spdlog::critical("PANIC: unprotected error in call to Lua API ({})", lua_tostring(L, -1));
  return 0;
}

}  // namespace

LuaEngine::LuaEngine(Mode mode, std::atomic<int64_t>* vm_bytes) : L_(lua_newstate(CountingAlloc, vm_bytes)) {
  lua_State* L = L_;
  if (L == nullptr) {
    spdlog::critical("Lua state could not be created: out of memory");
    std::abort();
  }
  lua_atpanic(L, Panic);
  OpenLibrary(L, luaopen_base, "");
  OpenLibrary(L, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(L, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(L, luaopen_math, LUA_MATHLIBNAME);
  OpenLibrary(L, luaopen_debug, LUA_DBLIBNAME);  // for the error handler; removed from scripts
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cjson");
  lua_pushcfunction(L, luaopen_bit);
  lua_call(L, 0, 1);
  lua_setglobal(L, "bit");
  lua_pushcfunction(L, OpenCmsgpack);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cmsgpack");
  lua_pushcfunction(L, OpenStruct);
  lua_call(L, 0, 1);
  lua_setglobal(L, "struct");
  InstallProtectedCalls();
  // Redis 7.0.15 lets scripts have only the base functions on its allow list.
  for (const char* removed : {"loadfile", "dofile", "print", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, removed);
  }

  lua_pushlightuserdata(L, this);
  lua_setfield(L, LUA_REGISTRYINDEX, kEngineKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kScriptsKey);

  lua_newtable(L);
  const std::pair<const char*, lua_CFunction> functions[] = {
      {"call", RedisCall},          {"pcall", RedisPcall},
      {"setresp", RedisSetResp},    {"sha1hex", RedisSha1Hex},
      {"log", RedisLog},            {"acl_check_cmd", RedisAclCheckCmd},
      {"set_repl", RedisSetRepl}};
  for (const auto& [name, fn] : functions) {
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, "redis");

  bool loaded = luaL_loadstring(L, kPrelude) == 0;
  if (loaded) {
    lua_pushcfunction(L, NonexistentGlobalError);
    lua_pushcfunction(L, ReadonlyTableError);
    lua_pushstring(L, kRedisVersion);
    lua_pushnumber(L, kRedisVersionNum);
    lua_pushboolean(L, mode == Mode::kFunctions);
  }
  if (!loaded || lua_pcall(L, 5, 2, 0) != 0) {
    spdlog::critical("Lua prelude failed: {}", lua_tostring(L, -1));
    std::abort();
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kReadonlyOriginalsKey);
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorHandlerKey);
  for (const char* name : {"pairs", "ipairs", "next", "rawget"}) {
    lua_pushstring(L, name);
    lua_pushstring(L, name);
    lua_rawget(L, LUA_GLOBALSINDEX);
    lua_pushboolean(L, std::string_view(name) == "rawget");
    lua_pushcclosure(L, ReadonlyAwareTableFunction, 2);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
  if (mode == Mode::kFunctions) SetUpFunctions();
}

LuaEngine::~LuaEngine() { lua_close(L_); }

LuaEngine& LuaEngine::Self(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kEngineKey);
  auto* self = static_cast<LuaEngine*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return *self;
}

std::optional<std::string> LuaEngine::Compile(const std::string& sha, std::string_view body, CompiledScript info) {
  if (compiled_.contains(sha)) return std::nullopt;
  lua_State* L = L_;
  lua_getfield(L, LUA_REGISTRYINDEX, kScriptsKey);
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) {
    std::string error = "ERR Error compiling script (new function): " + OneLine(lua_tostring(L, -1));
    lua_pop(L, 2);
    return error;
  }
  lua_setfield(L, -2, sha.c_str());
  lua_pop(L, 1);
  compiled_.emplace(sha, info);
  return std::nullopt;
}

void LuaEngine::PushStrings(lua_State* L, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

LuaEngine::Outcome LuaEngine::Run(const std::string& sha, std::span<const std::string_view> keys,
                                   std::span<const std::string_view> argv, ScriptHost& host,
                                   protocol::ReplyWriter& reply) {
  lua_State* L = L_;
  host_ = &host;
  // KEYS and ARGV are the only globals a script gets written for it: set past the sandbox.
  for (auto [name, items] : {std::pair{"KEYS", keys}, std::pair{"ARGV", argv}}) {
    lua_pushstring(L, name);
    PushStrings(L, items);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kScriptsKey);
  lua_getfield(L, -1, sha.c_str());
  lua_remove(L, -2);
  return Start(0, sha, reply);
}

lua_State* LuaEngine::Coroutine() {
  if (co_ == nullptr) {
    co_ = lua_newthread(L_);
    co_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);  // keeps it from the collector
  }
  return co_;
}

void LuaEngine::DropCoroutine() {
  luaL_unref(L_, LUA_REGISTRYINDEX, co_ref_);
  co_ = nullptr;
  co_ref_ = LUA_NOREF;
}

LuaEngine::Outcome LuaEngine::Start(int nargs, const std::string& label, protocol::ReplyWriter& reply) {
  lua_State* co = Coroutine();
  reply_errors_ = {};
  lua_xmove(L_, co, nargs + 1);
  label_ = label;
  resp_ = 2;
  logged_ = true;
  restart_ = false;
  if (watch_.slot != nullptr) {
    run_started_ns_ = NowNs();
    lua_sethook(co, Hook, LUA_MASKCOUNT, kHookInstructions);
  }
  return Continue(nargs, reply);
}

LuaEngine::Outcome LuaEngine::Resume(protocol::ReplyWriter& reply) { return Continue(0, reply); }

LuaEngine::Outcome LuaEngine::Continue(int nargs, protocol::ReplyWriter& reply) {
  lua_State* co = co_;
  suspended_by_hook_ = false;
  int status = lua_resume(co, nargs);
  if (status == LUA_YIELD && suspended_by_hook_) return Outcome::kSuspended;
  lua_sethook(co, nullptr, 0, 0);
  children_.clear();
  if (restart_) {
    // Whatever the script did with the failed call (even catching it with Lua's pcall), it
    // starts over; its step takes back what it wrote (server/script_undo.h).
    DropCoroutine();
  } else if (status == 0) {
    if (lua_gettop(co) == 0) lua_pushnil(co);
    WriteResult(co, 1, reply, 0);
    lua_settop(co, 0);  // a coroutine that returned can run the next script
  } else {
    // An error, or a yield of the script's own (coroutine.yield at its top level), which
    // Redis refuses as Lua does across pcall.
    std::string message = status == LUA_YIELD ? "ERR attempt to yield across metamethod/C-call boundary"
                                              : ErrorMessage(co);
    WriteError(reply, OneLine(message + ErrorLocation(co)), status != LUA_YIELD && ErrorAlreadyCounted(co, -1));
    DropCoroutine();
  }
  host_ = nullptr;
  // An incremental collection step every kGcPeriod runs, as Redis does, keeps the garbage
  // of many small scripts bounded without paying for a step on every run.
  if (++runs_since_gc_ == kGcPeriod) {
    lua_gc(L_, LUA_GCSTEP, kGcPeriod);
    runs_since_gc_ = 0;
  }
  return restart_ ? Outcome::kRestart : Outcome::kDone;
}

// The error on top of `co`: {err=...} tables as they are, anything else as "ERR <text>".
std::string LuaEngine::ErrorMessage(lua_State* co) {
  if (lua_istable(co, -1)) {
    PushRawField(co, -1, "err");
    std::string message = lua_type(co, -1) == LUA_TSTRING ? lua_tostring(co, -1) : "ERR unknown error";
    lua_pop(co, 1);
    return message;
  }
  const char* text = lua_tostring(co, -1);
  return std::string("ERR ") + (text != nullptr ? text : "nil");
}

// Redis 7.0's suffix " script: <sha or function>, on @user_script:<line>.": where the error
// was raised, or where the C function that raised it was called. The stack of a coroutine
// that failed is not unwound, so it still shows.
std::string LuaEngine::ErrorLocation(lua_State* co) {
  lua_Debug ar;
  int level = 0;
  bool found = lua_getstack(co, level, &ar) && lua_getinfo(co, "Sl", &ar);
  if (found && std::string_view(ar.what) == "C") found = lua_getstack(co, ++level, &ar) && lua_getinfo(co, "Sl", &ar);
  // pcall's wrapper is a Lua function, where Redis's pcall is a C one: its caller's line.
  while (found && (InWrapper(co, &ar) || std::string_view(ar.what) == "tail")) {
    found = lua_getstack(co, ++level, &ar) && lua_getinfo(co, "Sl", &ar);
  }
  if (!found) return "";
  return " script: " + label_ + ", on " + ar.source + ":" + std::to_string(ar.currentline) + ".";
}

const char* LuaEngine::CommandArguments(lua_State* L, std::vector<std::string>& numbers,
                                        std::vector<std::string_view>& args) {
  int argc = lua_gettop(L);
  if (argc == 0) return "ERR Please specify at least one argument for this redis lib call";
  numbers.reserve(static_cast<size_t>(argc));  // so that the views into it stay valid
  args.reserve(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; ++i) {
    int type = lua_type(L, i);
    if (type == LUA_TSTRING) {
      size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      args.emplace_back(s, n);
    } else if (type == LUA_TNUMBER) {
      numbers.push_back(NumberArgument(lua_tonumber(L, i)));
      args.emplace_back(numbers.back());
    } else {
      args.clear();
      return "ERR Lua redis lib command arguments must be strings or integers";
    }
  }
  return nullptr;
}

int LuaEngine::Call(lua_State* L, bool raise) {
  const char* refusal_text = nullptr;
  bool refused_by_host = false;
  std::string acl_refusal;  // outlives the block: refusal_text may point into it
  {
    std::vector<std::string> numbers;
    std::vector<std::string_view> args;
    refusal_text = CommandArguments(L, numbers, args);
    if (restart_) {
      refusal_text = kRestartText;
    } else if (refusal_text == nullptr) {
      std::string out;
      ScriptHost::Refusal refusal = host_->Call(args, static_cast<protocol::RespVersion>(resp_), logged_, &out);
      refused_by_host = refusal != ScriptHost::Refusal::kNone;
      switch (refusal) {
        case ScriptHost::Refusal::kNone:
          PushReply(L, out);
          break;
        case ScriptHost::Refusal::kUnknownCommand:
          refusal_text = "ERR Unknown Redis command called from script";
          break;
        case ScriptHost::Refusal::kWrongArity:
          refusal_text = "ERR Wrong number of args calling Redis command from script";
          break;
        case ScriptHost::Refusal::kNotAllowed:
          refusal_text = "ERR This Redis command is not allowed from script";
          break;
        case ScriptHost::Refusal::kWriteInReadOnly:
          refusal_text = "ERR Write commands are not allowed from read-only scripts.";
          break;
        case ScriptHost::Refusal::kOom:
          refusal_text = "OOM command not allowed when used memory > 'maxmemory'.";
          break;
        case ScriptHost::Refusal::kRestart:
          restart_ = true;
          refusal_text = kRestartText;
          break;
        case ScriptHost::Refusal::kNoPermission:
          acl_refusal = std::move(out);
          refusal_text = acl_refusal.c_str();
          break;
      }
    }
  }
  if (refusal_text != nullptr) {
    // Redis marks the refusals its command path counted (unknown command, arity, ACL, OOM,
    // ...), not the bad arguments the Lua side refused before.
    if (refused_by_host) PushCommandError(L, refusal_text);
    else PushTableWith(L, "err", refusal_text);
  }
  if (restart_) return -1;  // even from redis.pcall: the run is abandoned
  if (!raise) return 1;
  // redis.call raises what pcall would return as an error table.
  if (!lua_istable(L, -1)) return 1;
  lua_getfield(L, -1, "err");
  bool is_error = lua_isstring(L, -1) != 0;
  lua_pop(L, 1);
  return is_error ? -1 : 1;
}

// Every kHookInstructions while a watched script runs: marks it busy once it has run past
// the threshold, and stops it when SCRIPT KILL or FUNCTION KILL asked, with an error raised
// again on every line after, so that the script cannot catch it and go on.
void LuaEngine::Hook(lua_State* L, lua_Debug* ar) {
  LuaEngine& self = Self(L);
  if (self.loading_ != nullptr) {
    if (NowNs() - self.run_started_ns_ >= kLoadTimeout.count()) RaiseError(L, "ERR FUNCTION LOAD timeout");
    return;
  }
  const WatchState& w = self.watch_;
  if (w.slot == nullptr) return;
  if (w.slot->kill.load(std::memory_order_relaxed)) {
    // A line of pcall's wrapper is not a line of the script (server/lua_protected_calls.cc).
    if (ar->event == LUA_HOOKLINE && InWrapper(L, ar)) return;
    self.HookEveryLine(L);
    // Redis 7.0's hook says SCRIPT KILL for functions too.
    RaiseError(L, "ERR Script killed by user with SCRIPT KILL...");
    return;
  }
  if (!w.slot->busy.load(std::memory_order_relaxed)) {
    if (w.threshold_ms <= 0 || (NowNs() - self.run_started_ns_) / 1000000 < w.threshold_ms) return;
    w.registry->MarkBusy(*w.slot);
  }
  // Busy: let the thread serve its other clients (they get BUSY, or kill it) before going on.
  // In a protected call's child, the yield goes to pcall's wrapper, which passes it up.
  bool top = L == self.co_;
  if (self.suspend_allowed_ && (top || self.IsRunningChild(L)) && SafeToYield(L)) {
    if (top) self.suspended_by_hook_ = true;
    lua_yield(L, 0);
  }
}

// Lua 5.1 lets a hook yield only when no C function, metamethod or iterator call lies
// between the running code and the coroutine's base. Every frame above the base must
// therefore be a Lua function called by name from Lua (a frame whose call the debug API
// cannot name may be a metamethod's, so it counts as unsafe). A function tail-called by
// the base function ("return pcall(...)" at a script's top level) took the base's place, so
// it is the base too.
bool LuaEngine::SafeToYield(lua_State* L, int first_level) {
  lua_Debug ar;
  for (int level = first_level; lua_getstack(L, level, &ar) != 0; ++level) {
    lua_getinfo(L, "Sn", &ar);
    std::string_view what = ar.what;
    if (what == "C") return false;
    if (what == "tail") continue;
    lua_Debug below;
    int next = level + 1;
    bool base = lua_getstack(L, next, &below) == 0;
    while (!base && lua_getinfo(L, "S", &below) && std::string_view(below.what) == "tail") {
      base = lua_getstack(L, ++next, &below) == 0;
    }
    if (base) continue;
    std::string_view how = ar.namewhat != nullptr ? ar.namewhat : "";
    if (how.empty() || how == "for iterator") return false;
  }
  return true;
}

int LuaEngine::RedisCall(lua_State* L) {
  int results = Self(L).Call(L, true);
  return results < 0 ? lua_error(L) : results;
}

int LuaEngine::RedisPcall(lua_State* L) {
  int results = Self(L).Call(L, false);
  return results < 0 ? lua_error(L) : results;
}

int LuaEngine::RedisSetResp(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "ERR redis.setresp() requires one argument.");
  int version = static_cast<int>(lua_tonumber(L, 1));
  if (version != 2 && version != 3) return RaiseError(L, "ERR RESP version must be 2 or 3.");
  Self(L).resp_ = version;
  return 0;
}

int LuaEngine::RedisSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "ERR wrong number of arguments");
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  {
    std::string hex = Sha1Hex(std::string_view(s ? s : "", s ? n : 0));
    lua_pushlstring(L, hex.data(), hex.size());
  }
  return 1;
}

int LuaEngine::RedisLog(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return RaiseError(L, "ERR redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return RaiseError(L, "ERR First argument must be a number (log level).");
  int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return RaiseError(L, "ERR Invalid debug level.");
  {
    std::string text;
    for (int i = 2; i <= argc; ++i) {
      size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      if (s == nullptr) continue;
      if (!text.empty()) text.push_back(' ');
      text.append(s, n);
    }
    static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::debug,
                                                             spdlog::level::info, spdlog::level::warn};
    spdlog::log(kLevels[level], "script: {}", text);
  }
  return 0;
}

int LuaEngine::RedisAclCheckCmd(lua_State* L) {
  LuaEngine& self = Self(L);
  const char* error = nullptr;
  bool allowed = false;
  if (self.host_ == nullptr) {
    error = "ERR redis.acl_check_cmd can only be called inside a script invocation";
  } else {
    // Destroyed before an error is raised: lua_error does not unwind C++ frames.
    std::vector<std::string> numbers;
    std::vector<std::string_view> args;
    error = CommandArguments(L, numbers, args);
    if (error == nullptr) {
      std::optional<bool> verdict = self.host_->AclAllows(args);
      if (!verdict) error = "ERR Invalid command passed to redis.acl_check_cmd()";
      allowed = verdict.value_or(false);
    }
  }
  if (error != nullptr) return RaiseError(L, error);
  lua_pushboolean(L, allowed);
  return 1;
}

// lapse keeps no replicas, so of the flags only REPL_AOF changes anything: without it, the
// script's later writes stay out of the AOF, as in Redis.
int LuaEngine::RedisSetRepl(lua_State* L) {
  // Redis 7.0.15's text says two arguments where it wants one.
  if (lua_gettop(L) != 1) return RaiseError(L, "ERR redis.set_repl() requires two arguments.");
  // Redis truncates the number to an int: REPL_NONE (0) to REPL_ALL (3) are valid.
  double flags = lua_tonumber(L, 1);
  if (!(flags > -1 && flags < 4)) {
    return RaiseError(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  constexpr int kReplAof = 1;
  Self(L).logged_ = (static_cast<int>(flags) & kReplAof) != 0;
  return 0;
}

// Redis 7.0 marks its library tables read-only inside Lua itself, so a script can still
// walk them (pairs(string), next(redis)). lapse's read-only tables are empty proxies, so the
// functions that read a table raw are wrapped to read the library behind a proxy instead.
// Upvalues: the original function, and whether it needs a second argument (rawget).
int LuaEngine::ReadonlyAwareTableFunction(lua_State* L) {
  // Checked here, so that an error names the function the script called.
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_toboolean(L, lua_upvalueindex(2))) luaL_checkany(L, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, kReadonlyOriginalsKey);
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  if (lua_istable(L, -1)) {
    lua_replace(L, 1);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

}  // namespace lapse::server
