// File: server/lua_values.cc
//
// Values crossing between Lua and RESP, by Redis 7.0's rules (server/lua_engine.h's header
// comment lists them): a command's reply pushed for a script (PushValue), a script's result
// written as the client's reply (WriteResult), and the {ok=...} / {err=...} tables both use.
#include "server/lua_engine.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <algorithm>
#include <cstdlib>

#include "protocol/reply_reader.h"
#include "server/lua_internal.h"

namespace lapse::server {

namespace lua_detail {

void PushRawField(lua_State* L, int index, const char* field) {
  int table = index < 0 && index > LUA_REGISTRYINDEX ? lua_gettop(L) + index + 1 : index;
  lua_pushstring(L, field);
  lua_rawget(L, table);
}

void PushTableWith(lua_State* L, const char* field, std::string_view text) {
  lua_newtable(L);
  lua_pushstring(L, field);
  lua_pushlstring(L, text.data(), text.size());
  lua_settable(L, -3);
}

void PushCommandError(lua_State* L, std::string_view text) {
  PushTableWith(L, "err", text);
  lua_pushstring(L, kIgnoreErrorStats);
  lua_pushboolean(L, 1);
  lua_settable(L, -3);
}

bool ErrorAlreadyCounted(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  PushRawField(L, index, kIgnoreErrorStats);
  bool counted = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return counted;
}

int RaiseError(lua_State* L, const char* message) {
  PushTableWith(L, "err", message);
  return lua_error(L);
}

std::string OneLine(std::string_view s) {
  std::string out(s);
  for (char& ch : out) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  return out;
}

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

}  // namespace lua_detail

using namespace lua_detail;

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

}  // namespace lapse::server
