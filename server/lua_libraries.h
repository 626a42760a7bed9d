// File: server/lua_libraries.h
//
// The two libraries Redis bundles with its Lua that Debian does not package for Lua 5.1,
// written for lapse with the behaviour Redis 7.0's scripts see:
//
//  - cmsgpack (lua-cmsgpack 0.4.0's API): pack(...), unpack(s), unpack_one(s [, offset]),
//    unpack_limit(s, limit [, offset]). Numbers with an exact int64 value pack as the
//    smallest MessagePack integer, others as float 32 when that is exact, else float 64;
//    strings as fixstr/str8/str16/str32; a table whose keys are exactly 1..n as an array,
//    any other as a map; tables nested 16 deep pack as nil.
//  - struct (Roberto Ierusalimschy's struct library): pack(fmt, ...), unpack(fmt, s [, pos])
//    and size(fmt), with the options < > ! x b B h H l L T i[n] I[n] c[n] s f d.
//
// Both are C functions called by Lua and raise Lua errors (longjmp): they hold no C++
// object that needs destroying when they do.
#pragma once

struct lua_State;

namespace lapse::server {

// Each pushes its library table.
int OpenCmsgpack(lua_State* L);
int OpenStruct(lua_State* L);

}  // namespace lapse::server
