// File: server/lua_functions.cc
//
// Redis 7.0's FUNCTION libraries in the functions-mode Lua state: the library API a library's
// top-level code sees while it loads (redis.register_function, redis.log and the constants,
// nothing else), LoadLibrary, which runs that code under FUNCTION LOAD's time limit, and
// RunFunction. A library's functions see the sandboxed globals through a table of their own.
#include "server/lua_engine.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "server/lua_internal.h"

namespace lapse::server {

using namespace lua_detail;

namespace {

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

}  // namespace

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
