// File: server/lua_protected_calls.cc
//
// pcall and xpcall for scripts, so that a busy script can step aside even inside them.
//
// A busy script lets its thread serve other clients (BUSY replies, SCRIPT KILL, SHUTDOWN
// NOSAVE) by yielding its coroutine from the count hook (LuaEngine::Hook). Lua 5.1 cannot
// yield across a C call, and the base library's pcall is one: a loop inside pcall kept its
// thread, and with one event-loop thread nobody could kill it. Redis has no such problem (its
// hook serves the event loop without returning), so lapse must not have it either.
//
// The chosen way is the "coxpcall" technique: pcall and xpcall run the protected function in
// a child coroutine (lua_resume is protected, as lua_pcall is). A hook inside the child may
// then yield it; the wrapper, a Lua function in the parent, sees that and passes the yield up
// (Relay), level by level, to the engine's driver, and on the way back resumes the child where
// it stopped. Where a level cannot yield (the pcall was called from a metamethod, a sort
// comparator, a user coroutine), the wrapper just resumes the child at once: as before, the
// script then keeps its thread until it ends or another thread kills it.
//
// Other ways were weighed: a patched Lua (Redis's own is vendored, lapse uses Debian's
// liblua5.1) or LuaJIT (whose pcall is yieldable, but not all else behaves identically), and
// serving the event loop from inside the hook as Redis does (lapse's event loop runs many
// clients' coroutines and shards; re-entering it from a hook is not safe).
//
// What the script sees stays Lua 5.1's, which the tests compare with redis-server: the same
// results with their nil holes, error values of any type untouched, "bad argument" errors
// that name the caller's line, xpcall's handler given the error (it runs after the child
// stopped, whose stack Lua leaves as it was; scripts have no debug library to see the
// difference), a handler that fails giving "error in error handling" as Lua's does after its
// retries, and nesting bounded as Lua bounds C calls ("C stack overflow"), which here also
// keeps nested resumes from overflowing the thread's C stack. A coroutine.yield inside a
// protected call fails with Lua's own error, as it must cross pcall's C boundary there;
// coroutine.running() answers as if there were no child (nil in the script's own coroutine, as
// in Redis, where scripts run in Lua's main thread). Redis 7.0's own pcall differences are
// kept: an error table's `err` string in place of the table, and `pcall()` calling a boolean.
// Known differences: error(msg, level) with a level beyond the protected function names no
// line, where Lua names the line that called pcall (pcall(error, "x", 2)); and a tail call
// ("return xpcall(f)") replaces the caller's frame, so xpcall's "bad argument" error then
// names no line, and a busy loop under it steps aside only at the script's top level.
//
// SCRIPT KILL: as in Redis, the kill error is raised by the hook and then, the hook set to
// run on every line, raised again on each new line of the script, so a pcall may catch it
// only until the script reaches its next line. The line hook is set on the script's coroutine
// and every running child, and the wrapper's own line (one line, no loop taken after a kill)
// raises nothing, so the script ends exactly where Redis's would.
//
// Cost: a coroutine per protected call, taken from a small pool of children that ended
// without an error (a new one costs an allocation and its collection), and three C calls.

#include "server/lua_engine.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace lapse::server {

namespace {

// The wrappers' chunk name: the hook and error locations skip frames of this source.
constexpr const char* kWrapperSource = "=lapse_protected_call";

// One line each (see the file comment): after a kill, a new line inside them would raise.
constexpr const char* kWrappers =
    "local start, xstart, run, relay, finish, xfinish = ...\n"
    "local pcall = function(...) local co, busy = start(...) while busy do relay() busy = run(co) end "
    "return finish(co) end\n"
    "local xpcall = function(...) local h, co, busy = xstart(...) while busy do relay() busy = run(co) end "
    "return xfinish(co, h) end\n"
    "return pcall, xpcall\n";

// Children that ended without an error are kept for the next protected calls, up to this
// many: a new coroutine for every pcall would cost an allocation and its collection.
constexpr size_t kPoolSize = 16;

// Pushes a child from the pool (the C function's upvalue), or a new one.
lua_State* TakeChild(lua_State* L) {
  size_t n = lua_objlen(L, lua_upvalueindex(1));
  if (n == 0) return lua_newthread(L);
  lua_rawgeti(L, lua_upvalueindex(1), static_cast<int>(n));
  lua_pushnil(L);
  lua_rawseti(L, lua_upvalueindex(1), static_cast<int>(n));
  return lua_tothread(L, -1);
}

// Puts the child at L's index 1 back in the pool if it ended without an error and gave all
// its results: it is then as a new one (status 0, empty stack; its hook is set again when
// taken). Needs one free stack slot.
void KeepChild(lua_State* L, lua_State* co) {
  size_t n = lua_objlen(L, lua_upvalueindex(1));
  if (lua_status(co) != 0 || lua_gettop(co) != 0 || n >= kPoolSize) return;
  lua_pushvalue(L, 1);
  lua_rawseti(L, lua_upvalueindex(1), static_cast<int>(n + 1));
}

// A protected call that ended well: true, then the child's results; the child goes back
// to the pool.
int ReturnChildResults(lua_State* L, lua_State* co) {
  int n = lua_gettop(co);
  if (!lua_checkstack(L, n + 2)) luaL_error(L, "too many results to unpack");
  lua_pushboolean(L, 1);
  lua_xmove(co, L, n);
  KeepChild(L, co);
  return n + 1;
}

// Lua 5.1's LUAI_MAXCCALLS, less the C calls a script's own run takes.
constexpr size_t kMaxNestedCalls = 198;
// How often a failing xpcall handler is retried before "error in error handling".
constexpr int kHandlerRetries = 200;

// luaL_argerror for the wrapper at level 1, as if it were the C function Lua's is: the name
// the caller used, and the caller's line.
// A tail-called wrapper ("return xpcall(f)") has lost its name and caller: it is then named
// by `fallback`, and its caller's line is not known.
int WrapperArgError(lua_State* L, int narg, const char* extramsg, const char* fallback) {
  lua_Debug ar;
  const char* name = fallback;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "n", &ar) && ar.name != nullptr) name = ar.name;
  luaL_where(L, 2);
  lua_pushfstring(L, "bad argument #%d to '%s' (%s)", narg, name, extramsg);
  lua_concat(L, 2);
  return lua_error(L);
}

int CallsABoolean(lua_State* L) {
  lua_pushstring(L, "attempt to call a boolean value");
  return lua_error(L);
}

int StackOverflow(lua_State* L) {
  lua_pushstring(L, "C stack overflow");
  return lua_error(L);
}

}  // namespace

void LuaEngine::InstallProtectedCalls() {
  lua_State* L = L_;
  if (luaL_loadbuffer(L, kWrappers, std::char_traits<char>::length(kWrappers), kWrapperSource) != 0) {
    return;  // cannot happen: the chunk is fixed; the base library's functions stay
  }
  lua_newtable(L);  // the pool of children to reuse: their upvalue
  int pool = lua_gettop(L);
  for (lua_CFunction fn : {PcallStart, XpcallStart, PcallRun, PcallRelay, PcallFinish, XpcallFinish}) {
    lua_pushvalue(L, pool);
    lua_pushcclosure(L, fn, 1);
  }
  lua_remove(L, pool);
  if (lua_pcall(L, 6, 2, 0) != 0) {
    lua_pop(L, 1);
    return;
  }
  lua_setglobal(L, "xpcall");
  lua_setglobal(L, "pcall");
  lua_getglobal(L, "coroutine");
  lua_pushcfunction(L, CoroutineYield);
  lua_setfield(L, -2, "yield");
  lua_pushcfunction(L, CoroutineRunning);
  lua_setfield(L, -2, "running");
  lua_pop(L, 1);
}

bool LuaEngine::IsRunningChild(lua_State* L) const { return !children_.empty() && children_.back().thread == L; }

// Starts the child: `body` (on L's stack at `first`) with the values above it as arguments,
// or with none (xpcall). Leaves co on L's stack at `first` and returns what Resume pushed.
int LuaEngine::StartChild(lua_State* L, int first, int nargs) {
  LuaEngine& self = Self(L);
  lua_State* co = TakeChild(L);
  lua_sethook(co, lua_gethook(L), lua_gethookmask(L), lua_gethookcount(L));
  lua_insert(L, first);
  if (self.children_.size() >= kMaxNestedCalls) {
    int body = lua_gettop(L) - nargs;
    lua_pushcfunction(L, StackOverflow);
    lua_replace(L, body);
  }
  int moved = lua_gettop(L) - first;
  if (!lua_checkstack(co, moved)) return luaL_error(L, "stack overflow");
  lua_xmove(L, co, moved);
  return self.ResumeChild(L, co, nargs);
}

// Resumes `co`; pushes on L whether it yielded (busy: pass the yield up) rather than ended.
int LuaEngine::ResumeChild(lua_State* L, lua_State* co, int nargs) {
  lua_checkstack(L, 2);
  children_.push_back({co, L});
  int status = lua_resume(co, nargs);
  children_.pop_back();
  lua_pushboolean(L, status == LUA_YIELD);
  return 2;
}

// start(f, ...): pcall's start.
int LuaEngine::PcallStart(lua_State* L) {
  int n = lua_gettop(L);
  if (n == 0) {
    // Redis's pcall then calls the `true` it put in front of the arguments.
    lua_pushcfunction(L, CallsABoolean);
    n = 1;
  }
  return StartChild(L, 1, n - 1);
}

// xstart(f, handler, ...): xpcall's start, f without arguments; gives the handler back for
// xfinish (a child's stack after an error is the failed frame's, not the base's).
int LuaEngine::XpcallStart(lua_State* L) {
  if (lua_gettop(L) < 2) return WrapperArgError(L, 2, "value expected", "xpcall");
  lua_settop(L, 2);
  lua_insert(L, 1);  // handler, f
  return StartChild(L, 2, 0) + 1;
}

// run(co): goes on with a child that yielded.
int LuaEngine::PcallRun(lua_State* L) {
  lua_State* co = lua_tothread(L, 1);
  lua_settop(L, 1);
  return Self(L).ResumeChild(L, co, 0) - 1;
}

// relay(): the child yielded from the hook; yields this level too where it can, so that the
// yield reaches the engine's driver. Level 0 is this C function, so the check starts above it.
int LuaEngine::PcallRelay(lua_State* L) {
  LuaEngine& self = Self(L);
  bool top = L == self.co_;
  if (!self.suspend_allowed_ || !(top || self.IsRunningChild(L)) || !SafeToYield(L, 1)) return 0;
  if (top) self.suspended_by_hook_ = true;
  return lua_yield(L, 0);
}

// finish(co): pcall's results from the child that ended. Redis 7.0's pcall (script_lua.c's
// luaRedisPcall) gives an error table's `err` field in its place when that is a string or a
// number, and otherwise the table followed by that field.
int LuaEngine::PcallFinish(lua_State* L) {
  lua_State* co = lua_tothread(L, 1);
  if (lua_status(co) != 0) {
    lua_settop(L, 0);
    lua_pushboolean(L, 0);
    lua_xmove(co, L, 1);
    if (lua_istable(L, 2)) {
      lua_getfield(L, 2, "err");
      if (lua_isstring(L, 3)) lua_replace(L, 2);
    }
    return lua_gettop(L);
  }
  return ReturnChildResults(L, co);
}

// xfinish(co, handler): xpcall's results.
int LuaEngine::XpcallFinish(lua_State* L) {
  lua_State* co = lua_tothread(L, 1);
  int status = lua_status(co);
  if (status == 0) {
    return ReturnChildResults(L, co);
  }
  lua_settop(L, 2);        // 1: co, 2: the handler
  lua_xmove(co, L, 1);     // 3: the error
  lua_pushboolean(L, 0);   // 4: false; each return below gives it and the value above it
  if (status != LUA_ERRRUN) {  // Lua calls the handler for runtime errors only
    lua_pushvalue(L, 3);
    return 2;
  }
  // Lua calls the handler again for an error the handler raises, until its C calls run out.
  for (int tries = 0; lua_isfunction(L, 2) && tries < kHandlerRetries; ++tries) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    if (lua_pcall(L, 1, 1, 0) == 0) return 2;
    lua_replace(L, 3);
  }
  lua_pushstring(L, "error in error handling");
  return 2;
}

// coroutine.yield: inside a protected call Lua would have to yield across pcall's C call,
// which fails; elsewhere it yields as Lua's does.
int LuaEngine::CoroutineYield(lua_State* L) {
  if (Self(L).IsRunningChild(L)) {
    lua_pushstring(L, "attempt to yield across metamethod/C-call boundary");
    return lua_error(L);
  }
  return lua_yield(L, lua_gettop(L));
}

// coroutine.running: the coroutine the script sees, not a protected call's child; nil for
// the script's own, which Redis runs in Lua's main thread.
int LuaEngine::CoroutineRunning(lua_State* L) {
  LuaEngine& self = Self(L);
  lua_State* t = L;
  for (auto it = self.children_.rbegin(); it != self.children_.rend() && it->thread == t; ++it) t = it->parent;
  if (t == self.co_) {
    lua_pushnil(L);
  } else if (t == L) {
    lua_pushthread(L);
  } else {
    lua_checkstack(t, 1);
    lua_pushthread(t);
    lua_xmove(t, L, 1);
  }
  return 1;
}

// After a kill: every new line of the script raises the kill again (see Hook), in the
// script's coroutine and in each protected call's child that runs.
void LuaEngine::HookEveryLine(lua_State* L) {
  lua_sethook(L, Hook, LUA_MASKLINE, 0);
  if (co_ != nullptr) lua_sethook(co_, Hook, LUA_MASKLINE, 0);
  for (const Child& child : children_) lua_sethook(child.thread, Hook, LUA_MASKLINE, 0);
}

bool LuaEngine::InWrapper(lua_State* L, lua_Debug* ar) {
  return lua_getinfo(L, "S", ar) != 0 && std::string_view(ar->source) == kWrapperSource;
}

}  // namespace lapse::server
