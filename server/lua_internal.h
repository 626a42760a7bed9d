// File: server/lua_internal.h
//
// What the parts of LuaEngine share (lua_engine.cc: the state, the sandbox, runs and
// redis.call; lua_values.cc: values between Lua and RESP; lua_functions.cc: FUNCTION
// libraries): the registry's keys, the limits, and the helpers that build and read Redis's
// {ok=...} and {err=...} tables. Not for use outside the Lua engine.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/reply_reader.h"

struct lua_State;

namespace lapse::server::lua_detail {

// Keys in the Lua registry.
inline constexpr const char* kEngineKey = "lapse_engine";
inline constexpr const char* kScriptsKey = "lapse_scripts";
inline constexpr const char* kErrorHandlerKey = "lapse_error_handler";
inline constexpr const char* kReadonlyOriginalsKey = "lapse_readonly_originals";  // proxy -> library
inline constexpr const char* kFunctionsKey = "lapse_functions";          // name -> callback
inline constexpr const char* kPendingFunctionsKey = "lapse_pending";     // during LoadLibrary
inline constexpr const char* kFunctionGlobalsMetaKey = "lapse_fn_meta";  // functions' globals' metatable
inline constexpr const char* kLoadIndexKey = "lapse_load_index";         // its __index while loading
inline constexpr const char* kFunctionGlobalsKey = "lapse_fn_globals";   // functions' globals
// lapse answers INFO as Redis 7.0.0 does.
inline constexpr const char* kRedisVersion = "7.0.0";
inline constexpr int kRedisVersionNum = 0x070000;
// Lua instructions between two looks at the clock and the kill flag, as Redis's hook.
inline constexpr int kHookInstructions = 100000;
// How long a library's top-level code may run in FUNCTION LOAD (Redis's limit).
inline constexpr std::chrono::nanoseconds kLoadTimeout = std::chrono::milliseconds(500);
// Nested tables deeper than this in a script's result are refused (Redis's stack limit).
inline constexpr int kMaxResultDepth = 1000;
// Redis 7.0's marker on the error table of a failed redis.call or redis.pcall: its error was
// counted in INFO errorstats when the command failed, so the script's reply does not count it
// again. Scripts see the field, as on Redis.
inline constexpr const char* kIgnoreErrorStats = "ignore_error_stats_update";

int64_t NowNs();

// Pushes t[field] of the table at `index` without metamethods, as Redis's lua_rawget: reading
// a script's result or error must run none of its code, which could raise outside any
// protected call or loop where no hook stops it.
void PushRawField(lua_State* L, int index, const char* field);
// Pushes {<field>=<text>}.
void PushTableWith(lua_State* L, const char* field, std::string_view text);
// Pushes {err=<text>, ignore_error_stats_update=true}.
void PushCommandError(lua_State* L, std::string_view text);
// Whether the table at `index` carries kIgnoreErrorStats.
bool ErrorAlreadyCounted(lua_State* L, int index);
// Raises {err=<message>} as a Lua error. Call only from a C function with no C++ object
// alive that needs destroying.
int RaiseError(lua_State* L, const char* message);
// Error text goes on one line, as Redis's error replies do.
std::string OneLine(std::string_view s);
// A command's reply as a script sees it, by Redis's rules for the script's protocol `resp`.
void PushValue(lua_State* L, const protocol::Reply& r, int resp);

// The sandbox's __index on globals: reading a global nobody set is an error.
int NonexistentGlobalError(lua_State* L);
// The sandbox's __newindex on globals and library tables.
int ReadonlyTableError(lua_State* L);

}  // namespace lapse::server::lua_detail
