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
#include "server/sha1.h"

namespace lapse::server {

namespace {

constexpr const char* kEngineKey = "lapse_engine";
constexpr const char* kScriptsKey = "lapse_scripts";
constexpr const char* kErrorHandlerKey = "lapse_error_handler";
constexpr const char* kFunctionsKey = "lapse_functions";          // name -> callback
constexpr const char* kPendingFunctionsKey = "lapse_pending";     // during LoadLibrary
constexpr const char* kFunctionGlobalsMetaKey = "lapse_fn_meta";  // functions' globals' metatable
constexpr const char* kLoadIndexKey = "lapse_load_index";         // its __index while loading
constexpr const char* kFunctionGlobalsKey = "lapse_fn_globals";   // functions' globals
// lapse answers INFO as Redis 7.0.0 does.
constexpr const char* kRedisVersion = "7.0.0";
constexpr int kRedisVersionNum = 0x070000;
// The error a redis.call gets when the script must start over; never seen by a client.
constexpr const char* kRestartText = "ERR lapse restarts this script holding every shard";
constexpr int kGcPeriod = 50;
// Lua instructions between two looks at the clock and the kill flag, as Redis's hook.
constexpr int kHookInstructions = 100000;
// How long a library's top-level code may run in FUNCTION LOAD (Redis's limit).
constexpr std::chrono::nanoseconds kLoadTimeout = std::chrono::milliseconds(500);

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Nested tables deeper than this in a script's result are refused (Redis's stack limit).
constexpr int kMaxResultDepth = 1000;

// Runs once per Lua state, after the libraries are loaded: the rest of the redis library,
// the error handler that adds where an error happened, and Redis 7.0's sandbox (library
// tables and globals read-only, reading an undefined global an error, no debug library).
// The sandbox raises its errors from C functions, as Redis does: the error then names the
// script's line ("user_script:1: ..."), and the handler skips the C frame to find it.
constexpr const char* kPrelude = R"lua(
local global_error, readonly_error, version, version_num = ...
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
redis.set_repl = function() end
redis.replicate_commands = function() return true end
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
local function readonly(t)
  return setmetatable({}, {__index = t, __newindex = readonly_error, __metatable = false})
end
for _, name in ipairs({'redis', 'string', 'math', 'table', 'cjson', 'bit', 'cmsgpack', 'struct', 'coroutine'}) do
  if rawget(_G, name) then rawset(_G, name, readonly(rawget(_G, name))) end
end
debug = nil
setmetatable(_G, {__index = global_error, __newindex = readonly_error, __metatable = false})
return handler
)lua";

// Functions mode, after kPrelude: a library's code and its functions see the globals
// through an empty table whose metatable's __index is the (sandboxed) globals when they run,
// and, while the library loads, a lookup that knows only `redis` with register_function,
// log and the constants (Redis 7.0's library API). Returns that metatable and the lookup.
constexpr const char* kFunctionPrelude = R"lua(
local global_error, readonly_error, load_index_maker, register_function, log, version, version_num = ...
local load_redis = setmetatable({
  register_function = register_function, log = log,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REDIS_VERSION = version, REDIS_VERSION_NUM = version_num,
}, {__index = global_error, __newindex = readonly_error, __metatable = false})
local meta = {__index = _G, __newindex = readonly_error, __metatable = false}
return setmetatable({}, meta), meta, load_index_maker(load_redis)
)lua";

// While a library loads: `redis` is the library API (the closure's upvalue), any other
// global an error.
int LoadGlobalIndex(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  if (name != nullptr && std::string_view(name) == "redis") {
    lua_pushvalue(L, lua_upvalueindex(1));
    return 1;
  }
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

int MakeLoadGlobalIndex(lua_State* L) {
  lua_pushcclosure(L, LoadGlobalIndex, 1);
  return 1;
}

void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

// Pushes t[field] of the table at `index` without metamethods, as Redis's lua_rawget: reading
// a script's result or error must run none of its code, which could raise outside any
// protected call or loop where no hook stops it.
void PushRawField(lua_State* L, int index, const char* field) {
  int table = index < 0 && index > LUA_REGISTRYINDEX ? lua_gettop(L) + index + 1 : index;
  lua_pushstring(L, field);
  lua_rawget(L, table);
}

// Pushes {<field>=<text>}.
void PushTableWith(lua_State* L, const char* field, std::string_view text) {
  lua_newtable(L);
  lua_pushstring(L, field);
  lua_pushlstring(L, text.data(), text.size());
  lua_settable(L, -3);
}

// Redis 7.0's marker on the error table of a failed redis.call or redis.pcall: its error was
// counted in INFO errorstats when the command failed, so the script's reply does not count it
// again. Scripts see the field, as on Redis.
constexpr const char* kIgnoreErrorStats = "ignore_error_stats_update";

// Pushes {err=<text>, ignore_error_stats_update=true}.
void PushCommandError(lua_State* L, std::string_view text) {
  PushTableWith(L, "err", text);
  lua_pushstring(L, kIgnoreErrorStats);
  lua_pushboolean(L, 1);
  lua_settable(L, -3);
}

// Whether the table at `index` carries kIgnoreErrorStats.
bool ErrorAlreadyCounted(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  PushRawField(L, index, kIgnoreErrorStats);
  bool counted = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return counted;
}

// Raises {err=<message>} as a Lua error. Call only from a C function with no C++ object
// alive that needs destroying.
int RaiseError(lua_State* L, const char* message) {
  PushTableWith(L, "err", message);
  return lua_error(L);
}

// A number as a command argument: the shortest text that reads back as the same double
// ("1", "1.5"), as Redis's fpconv_dtoa writes it.
std::string NumberArgument(lua_Number n) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(n));
  return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

// Error text goes on one line, as Redis's error replies do.
std::string OneLine(std::string_view s) {
  std::string out(s);
  for (char& ch : out) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  return out;
}

// The sandbox's __index on globals: reading a global nobody set is an error.
int NonexistentGlobalError(lua_State* L) {
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

// The sandbox's __newindex on globals and library tables.
int ReadonlyTableError(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

void PushValue(lua_State* L, const protocol::Reply& r, int resp) {
  using protocol::ReplyType;
  switch (r.type) {
    case ReplyType::kSimpleString:
      return PushTableWith(L, "ok", r.text);
    case ReplyType::kError:
    case ReplyType::kBulkError:
      return PushCommandError(L, r.text);
    case ReplyType::kInteger:
      return lua_pushnumber(L, static_cast<lua_Number>(r.integer));
    case ReplyType::kBulk:
    case ReplyType::kVerbatim:
      return lua_pushlstring(L, r.text.data(), r.text.size());
    case ReplyType::kNull:
      return resp == 2 ? lua_pushboolean(L, 0) : lua_pushnil(L);
    case ReplyType::kBoolean:
      return lua_pushboolean(L, r.integer != 0);
    case ReplyType::kDouble:
      lua_newtable(L);
      lua_pushstring(L, "double");
      lua_pushnumber(L, std::strtod(r.text.c_str(), nullptr));
      lua_settable(L, -3);
      return;
    case ReplyType::kBigNumber:
      return PushTableWith(L, "big_number", r.text);
    case ReplyType::kMap:
    case ReplyType::kSet: {
      bool map = r.type == ReplyType::kMap;
      lua_newtable(L);
      lua_pushstring(L, map ? "map" : "set");
      lua_newtable(L);
      for (size_t i = 0; i < r.elements.size(); i += map ? 2 : 1) {
        PushValue(L, r.elements[i], resp);
        if (map && i + 1 < r.elements.size()) {
          PushValue(L, r.elements[i + 1], resp);
        } else {
          lua_pushboolean(L, 1);
        }
        lua_settable(L, -3);
      }
      lua_settable(L, -3);
      return;
    }
    case ReplyType::kArray:
    case ReplyType::kPush:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (size_t i = 0; i < r.elements.size(); ++i) {
        PushValue(L, r.elements[i], resp);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
  }
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
  for (const char* removed : {"loadfile", "dofile"}) {
    lua_pushnil(L);
    lua_setglobal(L, removed);
  }

  lua_pushlightuserdata(L, this);
  lua_setfield(L, LUA_REGISTRYINDEX, kEngineKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kScriptsKey);

  lua_newtable(L);
  const std::pair<const char*, lua_CFunction> functions[] = {
      {"call", RedisCall}, {"pcall", RedisPcall}, {"setresp", RedisSetResp}, {"sha1hex", RedisSha1Hex}, {"log", RedisLog}};
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
  }
  if (!loaded || lua_pcall(L, 4, 1, 0) != 0) {
    spdlog::critical("Lua prelude failed: {}", lua_tostring(L, -1));
    std::abort();
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorHandlerKey);
  if (mode == Mode::kFunctions) SetUpFunctions();
}

void LuaEngine::SetUpFunctions() {
  lua_State* L = L_;
  bool loaded = luaL_loadstring(L, kFunctionPrelude) == 0;
  if (loaded) {
    lua_pushcfunction(L, NonexistentGlobalError);
    lua_pushcfunction(L, ReadonlyTableError);
    lua_pushcfunction(L, MakeLoadGlobalIndex);
    lua_pushcfunction(L, RegisterFunction);
    lua_pushcfunction(L, RedisLog);
    lua_pushstring(L, kRedisVersion);
    lua_pushnumber(L, kRedisVersionNum);
  }
  if (!loaded || lua_pcall(L, 7, 3, 0) != 0) {
    spdlog::critical("Lua function prelude failed: {}", lua_tostring(L, -1));
    std::abort();
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadIndexKey);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionGlobalsMetaKey);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionGlobalsKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
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

LuaEngine::Outcome LuaEngine::RunFunction(const std::string& name, std::span<const std::string_view> keys,
                                           std::span<const std::string_view> args, ScriptHost& host,
                                           protocol::ReplyWriter& reply) {
  lua_State* L = L_;
  host_ = &host;
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_getfield(L, -1, name.c_str());
  lua_remove(L, -2);
  PushStrings(L, keys);
  PushStrings(L, args);
  return Start(2, name, reply);
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

std::optional<std::string> LuaEngine::LoadLibrary(std::string_view code, bool keep,
                                                    std::vector<FunctionInfo>* functions) {
  lua_State* L = L_;
  int base = lua_gettop(L);
  if (luaL_loadbuffer(L, code.data(), code.size(), "@user_function") != 0) {
    std::string error = "ERR Error compiling function: " + OneLine(lua_tostring(L, -1));
    lua_settop(L, base);
    return error;
  }
  int chunk = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionGlobalsKey);
  lua_setfenv(L, chunk);
  // While it loads, the library sees only the library API.
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionGlobalsMetaKey);
  int meta = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kLoadIndexKey);
  lua_setfield(L, meta, "__index");
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingFunctionsKey);
  functions->clear();
  loading_ = functions;
  lua_getfield(L, LUA_REGISTRYINDEX, kErrorHandlerKey);
  lua_pushvalue(L, chunk);
  // A library's top-level code gets kLoadTimeout, as in Redis (Hook stops it).
  run_started_ns_ = NowNs();
  lua_sethook(L, Hook, LUA_MASKCOUNT, kHookInstructions);
  int status = lua_pcall(L, 0, 0, meta + 1);
  lua_sethook(L, nullptr, 0, 0);
  loading_ = nullptr;
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, meta, "__index");
  std::optional<std::string> error;
  if (status != 0) {
    std::string text = "ERR unknown error";
    if (lua_istable(L, -1)) {
      PushRawField(L, -1, "err");
      if (lua_type(L, -1) == LUA_TSTRING) text = lua_tostring(L, -1);
    } else if (lua_isstring(L, -1)) {
      text = lua_tostring(L, -1);
    }
    error = "ERR Error registering functions: " + OneLine(text);
  } else if (functions->empty()) {
    error = "ERR No functions registered";
  } else if (keep) {
    lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
    lua_getfield(L, LUA_REGISTRYINDEX, kPendingFunctionsKey);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_settable(L, -5);
    }
  }
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingFunctionsKey);
  lua_settop(L, base);
  std::sort(functions->begin(), functions->end(),
            [](const FunctionInfo& a, const FunctionInfo& b) { return a.name < b.name; });
  return error;
}

void LuaEngine::WriteError(protocol::ReplyWriter& reply, const std::string& text, bool already_counted) {
  size_t at = reply.buffer()->size();
  reply.Error(text);
  if (already_counted) ++reply_errors_.already_counted;
  else reply_errors_.counted.push_back(reply.buffer()->substr(at));
}

namespace {

// {verbatim_string={format=..., string=...}}: both fields strings, or it is no verbatim reply.
bool WriteVerbatim(lua_State* L, int index, protocol::ReplyWriter& reply) {
  int top = lua_gettop(L);
  PushRawField(L, index, "verbatim_string");
  bool written = false;
  if (lua_istable(L, -1)) {
    PushRawField(L, -1, "format");
    PushRawField(L, -2, "string");
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
      size_t n = 0;
      const char* text = lua_tolstring(L, -1, &n);
      reply.Verbatim(std::string_view(text, n), lua_tostring(L, -2));
      written = true;
    }
  }
  lua_settop(L, top);
  return written;
}

}  // namespace

void LuaEngine::WriteResult(lua_State* L, int index, protocol::ReplyWriter& reply, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      return reply.Bulk(std::string_view(s, n));
    }
    case LUA_TBOOLEAN:
      if (resp_ == 3) return reply.Bool(lua_toboolean(L, index) != 0);
      return lua_toboolean(L, index) ? reply.Integer(1) : reply.Null();
    case LUA_TNUMBER: {
      // Truncated, as Redis's (long long) cast; out of range (and NaN) it gives what that
      // cast gives on x86-64, INT64_MIN, where C++ would leave it undefined.
      double n = lua_tonumber(L, index);
      if (!(n >= -9.2233720368547758e18 && n < 9.2233720368547758e18)) return reply.Integer(INT64_MIN);
      return reply.Integer(static_cast<int64_t>(n));
    }
    case LUA_TTABLE:
      break;
    default:
      return reply.Null();
  }
  // Each level holds a few stack slots, and Lua promises only LUA_MINSTACK free ones.
  if (depth > kMaxResultDepth || !lua_checkstack(L, 4)) return WriteError(reply, "ERR reached lua stack limit", false);
  PushRawField(L, index, "err");
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::string text = OneLine(lua_tostring(L, -1));
    lua_pop(L, 1);
    return WriteError(reply, text, ErrorAlreadyCounted(L, index));
  }
  lua_pop(L, 1);
  PushRawField(L, index, "ok");
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::string text = OneLine(lua_tostring(L, -1));
    lua_pop(L, 1);
    return reply.SimpleString(text);
  }
  lua_pop(L, 1);
  // Redis 7.0 reads these fields whatever redis.setresp says; a RESP2 client gets each in
  // its RESP2 form (a bulk string, a flat array).
  PushRawField(L, index, "double");
  if (lua_type(L, -1) == LUA_TNUMBER) {
    double d = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return reply.Double(d);
  }
  lua_pop(L, 1);
  PushRawField(L, index, "big_number");
  if (lua_type(L, -1) == LUA_TSTRING) {
    size_t n = 0;
    const char* text = lua_tolstring(L, -1, &n);
    std::string digits(text, n);
    lua_pop(L, 1);
    std::replace_if(digits.begin(), digits.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
    return reply.BigNumber(digits);
  }
  lua_pop(L, 1);
  if (WriteVerbatim(L, index, reply)) return;
  for (const char* kind : {"map", "set"}) {
    PushRawField(L, index, kind);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    bool map = kind[0] == 'm';
    int inner = lua_gettop(L);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, inner) != 0) {
      ++n;
      lua_pop(L, 1);
    }
    map ? reply.MapHeader(n) : reply.SetHeader(n);
    lua_pushnil(L);
    while (lua_next(L, inner) != 0) {
      WriteResult(L, lua_gettop(L) - 1, reply, depth + 1);
      if (map) WriteResult(L, lua_gettop(L), reply, depth + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  // An array: the elements up to the first nil.
  size_t n = 0;
  while (true) {
    lua_rawgeti(L, index, static_cast<int>(n + 1));
    bool present = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!present) break;
    ++n;
  }
  reply.ArrayHeader(n);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, static_cast<int>(i));
    WriteResult(L, lua_gettop(L), reply, depth + 1);
    lua_pop(L, 1);
  }
}

void LuaEngine::PushReply(lua_State* L, std::string_view framed) {
  PushValue(L, protocol::DecodeReply(framed), resp_);
}

int LuaEngine::Call(lua_State* L, bool raise) {
  const char* refusal_text = nullptr;
  bool refused_by_host = false;
  std::string acl_refusal;  // outlives the block: refusal_text may point into it
  {
    int argc = lua_gettop(L);
    if (argc == 0) {
      refusal_text = "ERR Please specify at least one argument for this redis lib call";
    } else {
      std::vector<std::string> numbers;  // text of number arguments; reserved so views stay valid
      numbers.reserve(static_cast<size_t>(argc));
      std::vector<std::string_view> args;
      args.reserve(static_cast<size_t>(argc));
      for (int i = 1; i <= argc && refusal_text == nullptr; ++i) {
        int type = lua_type(L, i);
        if (type == LUA_TSTRING) {
          size_t n = 0;
          const char* s = lua_tolstring(L, i, &n);
          args.emplace_back(s, n);
        } else if (type == LUA_TNUMBER) {
          numbers.push_back(NumberArgument(lua_tonumber(L, i)));
          args.emplace_back(numbers.back());
        } else {
          refusal_text = "ERR Lua redis lib command arguments must be strings or integers";
        }
      }
      if (restart_) {
        refusal_text = kRestartText;
      } else if (refusal_text == nullptr) {
        std::string out;
        ScriptHost::Refusal refusal = host_->Call(args, static_cast<protocol::RespVersion>(resp_), &out);
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

}  // namespace lapse::server

namespace lapse::server {

namespace {

// The flag named by the string at `index`, or 0 if none is.
uint32_t FunctionFlagAt(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TSTRING) return 0;
  return FunctionFlagNamed(lua_tostring(L, index));
}

}  // namespace

// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}, while a library loads. Errors are raised
// with Redis's texts; each check runs before anything is recorded.
int LuaEngine::RegisterFunction(lua_State* L) {
  if (Self(L).loading_ == nullptr)
    return RaiseError(L, "ERR redis.register_function can only be called on FUNCTION LOAD command");
  int argc = lua_gettop(L);
  if (argc == 1) {
    if (!lua_istable(L, 1)) {
      return RaiseError(L, "ERR calling redis.register_function with a single argument is only applicable to Lua "
                           "table (representing named arguments).");
    }
    return RegisterFunctionFromTable(L);
  }
  if (argc != 2) return RaiseError(L, "ERR wrong number of arguments to redis.register_function");
  if (!lua_isstring(L, 1)) return RaiseError(L, "ERR first argument to redis.register_function must be a string");
  if (!lua_isfunction(L, 2)) return RaiseError(L, "ERR second argument to redis.register_function must be a function");
  return RegisterChecked(L, 1, 2, 0, 0);
}

int LuaEngine::RegisterFunctionFromTable(lua_State* L) {
  // Slots 2, 3 and 4 keep the name, callback and description found; 5 and 6 are lua_next's
  // key and value.
  constexpr int kName = 2, kCallback = 3, kDescription = 4, kKey = 5, kValue = 6;
  lua_settop(L, 1);
  lua_settop(L, kDescription);
  bool named = false, called = false, described = false;
  uint32_t flags = 0;
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    // A copy of the key is read, so that lua_next still finds its place.
    lua_pushvalue(L, kKey);
    if (!lua_isstring(L, -1))
      return RaiseError(L, "ERR named argument key given to redis.register_function is not a string");
    std::string_view key = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (key == "function_name") {
      if (!lua_isstring(L, kValue))
        return RaiseError(L, "ERR function_name argument given to redis.register_function must be a string");
      lua_pushvalue(L, kValue);
      lua_replace(L, kName);
      named = true;
    } else if (key == "description") {
      if (!lua_isstring(L, kValue))
        return RaiseError(L, "ERR description argument given to redis.register_function must be a string");
      lua_pushvalue(L, kValue);
      lua_replace(L, kDescription);
      described = true;
    } else if (key == "callback") {
      if (!lua_isfunction(L, kValue))
        return RaiseError(L, "ERR callback argument given to redis.register_function must be a function");
      lua_pushvalue(L, kValue);
      lua_replace(L, kCallback);
      called = true;
    } else if (key == "flags") {
      if (!lua_istable(L, kValue))
        return RaiseError(L, "ERR flags argument to redis.register_function must be a table representing function "
                             "flags");
      lua_pushnil(L);
      while (lua_next(L, kValue) != 0) {
        uint32_t flag = FunctionFlagAt(L, -1);
        if (flag == 0) return RaiseError(L, "ERR unknown flag given");
        flags |= flag;
        lua_pop(L, 1);
      }
    } else {
      return RaiseError(L, "ERR unknown argument given to redis.register_function");
    }
    lua_settop(L, kKey);
  }
  if (!named) return RaiseError(L, "ERR redis.register_function must get a function name argument");
  if (!called) return RaiseError(L, "ERR redis.register_function must get a callback argument");
  return RegisterChecked(L, kName, kCallback, described ? kDescription : 0, flags);
}

int LuaEngine::RegisterChecked(lua_State* L, int name_index, int callback_index, int description_index,
                               uint32_t flags) {
  size_t length = 0;
  const char* name = lua_tolstring(L, name_index, &length);
  if (!ValidLibraryName(std::string_view(name, length))) {
    return RaiseError(L, "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
                         "least one character long");
  }
  std::vector<FunctionInfo>& functions = *Self(L).loading_;
  bool duplicate = false;
  for (const FunctionInfo& f : functions) duplicate = duplicate || f.name == std::string_view(name, length);
  if (duplicate) return RaiseError(L, "ERR Function already exists in the library");
  {
    FunctionInfo info{std::string(name, length), std::nullopt, flags};
    if (description_index != 0) info.description = lua_tostring(L, description_index);
    functions.push_back(std::move(info));
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kPendingFunctionsKey);
  lua_pushvalue(L, callback_index);
  lua_setfield(L, -2, name);
  return 0;
}

}  // namespace lapse::server
