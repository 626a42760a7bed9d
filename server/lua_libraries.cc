#include "server/lua_libraries.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace lapse::server {

namespace {

// ---------------------------------------------------------------------------------------
// cmsgpack

constexpr int kMaxPackNesting = 16;
constexpr const char* kPackBufferMeta = "lapse.cmsgpack.buffer";

// The bytes being packed, in memory that a userdata's __gc frees: a Lua error (out of
// memory) may unwind past the packer at any point without leaking it.
struct PackBuffer {
  char* data;
  size_t len;
  size_t cap;
};

int FreePackBuffer(lua_State* L) {
  auto* b = static_cast<PackBuffer*>(lua_touserdata(L, 1));
  std::free(b->data);
  b->data = nullptr;
  return 0;
}

PackBuffer* PushPackBuffer(lua_State* L) {
  auto* b = static_cast<PackBuffer*>(lua_newuserdata(L, sizeof(PackBuffer)));
  *b = PackBuffer{nullptr, 0, 0};
  if (luaL_newmetatable(L, kPackBufferMeta)) {
    lua_pushcfunction(L, FreePackBuffer);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

void Add(lua_State* L, PackBuffer* b, const void* bytes, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap == 0 ? 64 : b->cap;
    while (cap < b->len + n) cap *= 2;
    char* grown = static_cast<char*>(std::realloc(b->data, cap));
    if (grown == nullptr) luaL_error(L, "not enough memory");
    b->data = grown;
    b->cap = cap;
  }
  std::memcpy(b->data + b->len, bytes, n);
  b->len += n;
}

void AddByte(lua_State* L, PackBuffer* b, unsigned char byte) { Add(L, b, &byte, 1); }

// A type byte, then the low `bytes` bytes of `value`, big-endian.
void AddBigEndian(lua_State* L, PackBuffer* b, unsigned char type, uint64_t value, int bytes) {
  unsigned char out[9];
  out[0] = type;
  for (int k = 0; k < bytes; ++k) out[1 + k] = static_cast<unsigned char>((value >> ((bytes - 1 - k) * 8)) & 0xff);
  Add(L, b, out, static_cast<size_t>(bytes) + 1);
}

void PackInteger(lua_State* L, PackBuffer* b, int64_t n) {
  uint64_t u = static_cast<uint64_t>(n);
  if (n >= 0) {
    if (n <= 127) return AddByte(L, b, static_cast<unsigned char>(n));
    if (n <= 0xff) return AddBigEndian(L, b, 0xcc, u, 1);
    if (n <= 0xffff) return AddBigEndian(L, b, 0xcd, u, 2);
    if (n <= 0xffffffffLL) return AddBigEndian(L, b, 0xce, u, 4);
    return AddBigEndian(L, b, 0xcf, u, 8);
  }
  if (n >= -32) return AddByte(L, b, static_cast<unsigned char>(static_cast<signed char>(n)));
  if (n >= -128) return AddBigEndian(L, b, 0xd0, u, 1);
  if (n >= -32768) return AddBigEndian(L, b, 0xd1, u, 2);
  if (n >= -2147483648LL) return AddBigEndian(L, b, 0xd2, u, 4);
  AddBigEndian(L, b, 0xd3, u, 8);
}

void PackNumber(lua_State* L, PackBuffer* b, lua_Number n) {
  // An exact int64 value packs as an integer (the cast is only taken inside its range).
  if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 && static_cast<lua_Number>(static_cast<int64_t>(n)) == n)
    return PackInteger(L, b, static_cast<int64_t>(n));
  float f = static_cast<float>(n);
  if (static_cast<double>(f) == n) {
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    return AddBigEndian(L, b, 0xca, bits, 4);
  }
  uint64_t bits = 0;
  double d = n;
  std::memcpy(&bits, &d, sizeof bits);
  AddBigEndian(L, b, 0xcb, bits, 8);
}

void PackString(lua_State* L, PackBuffer* b, const char* s, size_t len) {
  if (len < 32) {
    AddByte(L, b, static_cast<unsigned char>(0xa0 | len));
  } else if (len <= 0xff) {
    AddBigEndian(L, b, 0xd9, len, 1);
  } else if (len <= 0xffff) {
    AddBigEndian(L, b, 0xda, len, 2);
  } else {
    AddBigEndian(L, b, 0xdb, len, 4);
  }
  Add(L, b, s, len);
}

void PackHeader(lua_State* L, PackBuffer* b, bool map, size_t n) {
  if (n <= 15) return AddByte(L, b, static_cast<unsigned char>((map ? 0x80 : 0x90) | n));
  if (n <= 0xffff) return AddBigEndian(L, b, map ? 0xde : 0xdc, n, 2);
  AddBigEndian(L, b, map ? 0xdf : 0xdd, n, 4);
}

// True when the table on top has exactly the keys 1..n.
bool IsArray(lua_State* L) {
  int top = lua_gettop(L);
  lua_Number count = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, top) != 0) {
    lua_pop(L, 1);
    lua_Number key = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (key <= 0 || key != std::floor(key) || key > INT_MAX) {
      lua_settop(L, top);
      return false;
    }
    max = key > max ? key : max;
    ++count;
  }
  lua_settop(L, top);
  return max == count;
}

// Packs the value on top of the stack and pops it.
void PackValue(lua_State* L, PackBuffer* b, int level);

void PackTable(lua_State* L, PackBuffer* b, int level) {
  int table = lua_gettop(L);
  luaL_checkstack(L, 4, "in function PackTable");
  if (IsArray(L)) {
    size_t n = lua_objlen(L, table);
    PackHeader(L, b, false, n);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, table, static_cast<int>(i));
      PackValue(L, b, level + 1);
    }
    return;
  }
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    lua_pop(L, 1);
    ++n;
  }
  PackHeader(L, b, true, n);
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    // key value -> key value key: the key is packed from the copy, then the value.
    lua_pushvalue(L, -2);
    PackValue(L, b, level + 1);
    PackValue(L, b, level + 1);
  }
}

void PackValue(lua_State* L, PackBuffer* b, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxPackNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      PackString(L, b, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      AddByte(L, b, lua_toboolean(L, -1) ? 0xc3 : 0xc2);
      break;
    case LUA_TNUMBER:
      PackNumber(L, b, lua_tonumber(L, -1));
      break;
    case LUA_TTABLE:
      PackTable(L, b, level);
      break;
    default:
      AddByte(L, b, 0xc0);
      break;
  }
  lua_pop(L, 1);
}

// cmsgpack.pack(...): each argument packed in turn, concatenated.
int CmsgpackPack(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  luaL_checkstack(L, 2, "in function CmsgpackPack");
  PackBuffer* b = PushPackBuffer(L);
  for (int i = 1; i <= argc; ++i) {
    lua_pushvalue(L, i);
    PackValue(L, b, 0);
  }
  lua_pushlstring(L, b->data ? b->data : "", b->len);
  return 1;
}

enum class DecodeError { kNone, kEof, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  DecodeError error = DecodeError::kNone;

  bool Need(size_t n) {
    if (left < n) {
      error = DecodeError::kEof;
      return false;
    }
    return true;
  }
  uint64_t BigEndian(size_t offset, size_t bytes) const {
    uint64_t v = 0;
    for (size_t k = 0; k < bytes; ++k) v = (v << 8) | p[offset + k];
    return v;
  }
  void Skip(size_t n) {
    p += n;
    left -= n;
  }
};

void DecodeValue(lua_State* L, Cursor* c);

void DecodeString(lua_State* L, Cursor* c, size_t header, size_t len) {
  if (!c->Need(header + len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p + header), len);
  c->Skip(header + len);
}

void DecodeArray(lua_State* L, Cursor* c, size_t header, size_t n) {
  if (!c->Need(header)) return;
  c->Skip(header);
  luaL_checkstack(L, 2, "in function DecodeArray");
  lua_newtable(L);
  for (size_t i = 1; i <= n && c->error == DecodeError::kNone; ++i) {
    DecodeValue(L, c);
    if (c->error != DecodeError::kNone) return;
    lua_rawseti(L, -2, static_cast<int>(i));
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t header, size_t n) {
  if (!c->Need(header)) return;
  c->Skip(header);
  luaL_checkstack(L, 3, "in function DecodeMap");
  lua_newtable(L);
  for (size_t i = 0; i < n; ++i) {
    DecodeValue(L, c);
    if (c->error != DecodeError::kNone) return;
    DecodeValue(L, c);
    if (c->error != DecodeError::kNone) return;
    lua_settable(L, -3);
  }
}

void DecodeValue(lua_State* L, Cursor* c) {
  if (!c->Need(1)) return;
  unsigned char type = c->p[0];
  auto number = [&](size_t bytes, bool is_signed) {
    if (!c->Need(1 + bytes)) return;
    uint64_t raw = c->BigEndian(1, bytes);
    lua_Number value;
    if (is_signed) {
      int shift = 64 - static_cast<int>(bytes) * 8;
      value = static_cast<lua_Number>(static_cast<int64_t>(raw << shift) >> shift);
    } else {
      value = static_cast<lua_Number>(raw);
    }
    lua_pushnumber(L, value);
    c->Skip(1 + bytes);
  };
  switch (type) {
    case 0xcc: return number(1, false);
    case 0xcd: return number(2, false);
    case 0xce: return number(4, false);
    case 0xcf: return number(8, false);
    case 0xd0: return number(1, true);
    case 0xd1: return number(2, true);
    case 0xd2: return number(4, true);
    case 0xd3: return number(8, true);
    case 0xc0:
      lua_pushnil(L);
      return c->Skip(1);
    case 0xc2:
    case 0xc3:
      lua_pushboolean(L, type == 0xc3);
      return c->Skip(1);
    case 0xca: {
      if (!c->Need(5)) return;
      uint32_t bits = static_cast<uint32_t>(c->BigEndian(1, 4));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      lua_pushnumber(L, f);
      return c->Skip(5);
    }
    case 0xcb: {
      if (!c->Need(9)) return;
      uint64_t bits = c->BigEndian(1, 8);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      lua_pushnumber(L, d);
      return c->Skip(9);
    }
    case 0xc4:
    case 0xd9:
      if (!c->Need(2)) return;
      return DecodeString(L, c, 2, c->BigEndian(1, 1));
    case 0xc5:
    case 0xda:
      if (!c->Need(3)) return;
      return DecodeString(L, c, 3, c->BigEndian(1, 2));
    case 0xc6:
    case 0xdb:
      if (!c->Need(5)) return;
      return DecodeString(L, c, 5, c->BigEndian(1, 4));
    case 0xdc:
      if (!c->Need(3)) return;
      return DecodeArray(L, c, 3, c->BigEndian(1, 2));
    case 0xdd:
      if (!c->Need(5)) return;
      return DecodeArray(L, c, 5, c->BigEndian(1, 4));
    case 0xde:
      if (!c->Need(3)) return;
      return DecodeMap(L, c, 3, c->BigEndian(1, 2));
    case 0xdf:
      if (!c->Need(5)) return;
      return DecodeMap(L, c, 5, c->BigEndian(1, 4));
    default:
      break;
  }
  if (type <= 0x7f) {
    lua_pushnumber(L, type);
    c->Skip(1);
  } else if (type >= 0xe0) {
    lua_pushnumber(L, static_cast<signed char>(type));
    c->Skip(1);
  } else if ((type & 0xe0) == 0xa0) {
    DecodeString(L, c, 1, type & 0x1f);
  } else if ((type & 0xf0) == 0x90) {
    DecodeArray(L, c, 1, type & 0x0f);
  } else if ((type & 0xf0) == 0x80) {
    DecodeMap(L, c, 1, type & 0x0f);
  } else {
    c->error = DecodeError::kBadFormat;
  }
}

// Decodes up to `limit` values (all when limit and offset are 0) from argument 1 at
// `offset`; with a limit or offset, the next offset (-1 at the end) comes first.
int Unpack(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  bool all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (all) limit = INT_MAX;
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset)};
  int count = 0;
  for (; c.left > 0 && count < limit; ++count) {
    luaL_checkstack(L, 1, "in function Unpack");
    DecodeValue(L, &c);
    if (c.error == DecodeError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.error == DecodeError::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (!all) {
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_insert(L, 2);
    ++count;
  }
  return count;
}

int CmsgpackUnpack(lua_State* L) { return Unpack(L, 0, 0); }

int CmsgpackUnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, 1);
  return Unpack(L, 1, offset);
}

int CmsgpackUnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return Unpack(L, limit, offset);
}

// ---------------------------------------------------------------------------------------
// struct

constexpr int kMaxIntSize = 32;
constexpr int kMaxAlign = 8;

struct Layout {
  bool little = true;  // x86-64's order is the default
  int align = 1;
};

// The number that follows in the format, or `fallback` when none does.
int ReadCount(lua_State* L, const char** fmt, int fallback) {
  if (!std::isdigit(static_cast<unsigned char>(**fmt))) return fallback;
  int n = 0;
  do {
    int digit = *((*fmt)++) - '0';
    if (n > (INT_MAX - digit) / 10) luaL_error(L, "integral size overflow");
    n = n * 10 + digit;
  } while (std::isdigit(static_cast<unsigned char>(**fmt)));
  return n;
}

size_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'b': case 'B': return 1;
    case 'h': case 'H': return sizeof(short);
    case 'l': case 'L': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return static_cast<size_t>(ReadCount(L, fmt, 1));
    case 'i': case 'I': {
      int size = ReadCount(L, fmt, sizeof(int));
      if (size > kMaxIntSize) luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      return static_cast<size_t>(size);
    }
    default: return 0;
  }
}

// Padding that brings `pos` to the alignment of an item of `size` bytes.
size_t Padding(size_t pos, const Layout& layout, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(layout.align)) size = static_cast<size_t>(layout.align);
  return (size - (pos & (size - 1))) & (size - 1);
}

// Options that change the layout ('<', '>', '!n', ' '); any other letter is an error.
void LayoutOption(lua_State* L, char opt, const char** fmt, Layout* layout) {
  switch (opt) {
    case ' ': return;
    case '>': layout->little = false; return;
    case '<': layout->little = true; return;
    case '!': {
      int a = ReadCount(L, fmt, kMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      layout->align = a;
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

void AddInteger(lua_State* L, luaL_Buffer* b, int arg, bool little, size_t size) {
  lua_Number n = luaL_checknumber(L, arg);
  uint64_t value = n < 0 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : static_cast<uint64_t>(n);
  char bytes[kMaxIntSize] = {};
  for (size_t i = 0; i < size; ++i) {
    bytes[little ? i : size - 1 - i] = static_cast<char>(value & 0xff);
    value = i < 7 ? value >> 8 : 0;  // wider than 8 bytes: the rest is zero
  }
  luaL_addlstring(b, bytes, size);
}

// Raw bytes of a float or double, in the layout's order.
void AddFloatBytes(luaL_Buffer* b, const void* raw, size_t size, bool little) {
  const char* bytes = static_cast<const char*>(raw);
  for (size_t i = 0; i < size; ++i) luaL_addchar(b, bytes[little ? i : size - 1 - i]);
}

int StructPack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Layout layout;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // keeps the arguments apart from the buffer's pieces
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    size_t pad = Padding(total, layout, opt, size);
    total += pad;
    while (pad-- > 0) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        AddInteger(L, &b, arg++, layout.little, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        AddFloatBytes(&b, &f, sizeof f, layout.little);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        AddFloatBytes(&b, &d, sizeof d, layout.little);
        break;
      }
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (size == 0) size = len;
        luaL_argcheck(L, len >= size, arg, "string too short");
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          ++size;
        }
        break;
      }
      default:
        LayoutOption(L, opt, &fmt, &layout);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

lua_Number ReadInteger(const char* bytes, bool little, bool is_signed, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[little ? size - 1 - i : i]);
  if (!is_signed) return static_cast<lua_Number>(value);
  if (size < 8) {
    uint64_t sign = uint64_t{1} << (size * 8 - 1);
    if (value & sign) value |= ~uint64_t{0} << (size * 8 - 1);
  }
  return static_cast<lua_Number>(static_cast<int64_t>(value));
}

void ReadFloatBytes(void* raw, const char* bytes, size_t size, bool little) {
  char* out = static_cast<char*>(raw);
  for (size_t i = 0; i < size; ++i) out[i] = bytes[little ? i : size - 1 - i];
}

int StructUnpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const char* data = luaL_checklstring(L, 2, &len);
  lua_Integer start = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, start > 0, 3, "offset must be 1 or greater");
  size_t pos = static_cast<size_t>(start) - 1;
  int results = 0;
  Layout layout;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    pos += Padding(pos, layout, opt, size);
    luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        lua_pushnumber(L, ReadInteger(data + pos, layout.little, std::islower(static_cast<unsigned char>(opt)), size));
        ++results;
        break;
      case 'x':
        break;
      case 'f': {
        float f;
        ReadFloatBytes(&f, data + pos, sizeof f, layout.little);
        lua_pushnumber(L, f);
        ++results;
        break;
      }
      case 'd': {
        double d;
        ReadFloatBytes(&d, data + pos, sizeof d, layout.little);
        lua_pushnumber(L, d);
        ++results;
        break;
      }
      case 'c':
        if (size == 0) {
          if (results == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          size = static_cast<size_t>(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --results;
          luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        ++results;
        break;
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        ++results;
        break;
      }
      default:
        LayoutOption(L, opt, &fmt, &layout);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return results + 1;
}

int StructSize(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Layout layout;
  size_t pos = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    pos += Padding(pos, layout, opt, size);
    if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
    if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
    if (!std::isalnum(static_cast<unsigned char>(opt))) LayoutOption(L, opt, &fmt, &layout);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

void SetFunctions(lua_State* L, const luaL_Reg* fns) {
  for (; fns->name != nullptr; ++fns) {
    lua_pushcfunction(L, fns->func);
    lua_setfield(L, -2, fns->name);
  }
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"pack", CmsgpackPack},
                                        {"unpack", CmsgpackUnpack},
                                        {"unpack_one", CmsgpackUnpackOne},
                                        {"unpack_limit", CmsgpackUnpackLimit},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  SetFunctions(L, kFunctions);
  lua_pushstring(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushstring(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushstring(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushstring(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  return 1;
}

int OpenStruct(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", StructPack}, {"unpack", StructUnpack}, {"size", StructSize}, {nullptr, nullptr}};
  lua_newtable(L);
  SetFunctions(L, kFunctions);
  return 1;
}

}  // namespace lapse::server
