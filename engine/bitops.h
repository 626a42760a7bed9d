// File: engine/bitops.h
//
// The pure bit algorithms behind Redis's bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS,
// BITOP, BITFIELD), over a string's bytes. Nothing here knows keys, replies or limits: the
// server parses arguments, finds the string, makes room for writes and calls these.
//
// Bit numbering is Redis's: bit 0 is the most significant bit of byte 0, so bit n lives in
// byte n / 8 at mask 0x80 >> (n % 8). Bits past the end of a string read as 0.
//
// Ranges follow Redis's BITCOUNT/BITPOS rules: start and end are inclusive, in bytes or (BIT)
// in bits, negative values count from the end, and both are clamped into the string. Counting
// and searching go a 64-bit word at a time (popcount, skip of all-0 / all-1 words), so a
// range of n bytes costs O(n / 8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace lapse::engine::bitops {

// Set bits in the `n` bytes at `p`.
uint64_t Popcount(const uint8_t* p, size_t n);

// The value of bit `offset` of `s` (0 past the end).
inline int GetBit(std::string_view s, uint64_t offset) {
  uint64_t byte = offset >> 3;
  if (byte >= s.size()) return 0;
  return (static_cast<uint8_t>(s[byte]) >> (7 - (offset & 7))) & 1;
}
// Sets bit `offset` of `p` (which must hold it) to `on`; returns its former value.
inline int SetBit(uint8_t* p, uint64_t offset, int on) {
  uint8_t& byte = p[offset >> 3];
  uint8_t mask = static_cast<uint8_t>(0x80 >> (offset & 7));
  int old = (byte & mask) != 0;
  byte = static_cast<uint8_t>(on ? (byte | mask) : (byte & ~mask));
  return old;
}

// BITCOUNT over [start, end] (bytes, or bits when `bit_unit`), Redis's range rules.
uint64_t CountRange(std::string_view s, int64_t start, int64_t end, bool bit_unit);

// BITPOS: the first bit equal to `bit` (0 or 1) in [start, end], Redis's range rules (pass
// start 0 and end -1 for the whole string). When none is found: -1, except that a search
// for 0 in whole bytes without an explicit end treats the string as zero-padded on the right
// and answers the first bit past the range, as Redis does. `s` must exist (a missing key is
// the caller's case: 0 for bit 0, -1 for bit 1).
int64_t FindBit(std::string_view s, int bit, int64_t start, int64_t end, bool end_given, bool bit_unit);

// BITOP. The result is as long as the longest source; shorter sources read as zero-padded.
// NOT takes exactly one source.
enum class BitOp { kAnd, kOr, kXor, kNot };
std::string Combine(BitOp op, std::span<const std::string_view> sources);

// ---- BITFIELD ----
// Fields are `bits` wide (1..64), big-endian in Redis's bit order, at any bit offset.

// Reads a field from `p`, which must hold bits [offset, offset + bits).
uint64_t GetUnsignedField(const uint8_t* p, uint64_t offset, unsigned bits);
int64_t GetSignedField(const uint8_t* p, uint64_t offset, unsigned bits);
// Reads a field from a string, its bytes past the end read as 0.
uint64_t GetUnsignedField(std::string_view s, uint64_t offset, unsigned bits);
int64_t GetSignedField(std::string_view s, uint64_t offset, unsigned bits);
// Writes the low `bits` bits of `value` at `offset` of `p`, which must hold them.
void SetField(uint8_t* p, uint64_t offset, unsigned bits, uint64_t value);

enum class Overflow { kWrap, kSat, kFail };

// Whether value + incr overflows an unsigned (bits <= 63) or signed (bits <= 64) field:
// 0 if not, 1 above the maximum, -1 below the minimum. On overflow *limit receives what
// WRAP or SAT stores (untouched for FAIL). SET checks its value with incr 0. As in Redis, a
// negative SET value on an unsigned field counts as overflowing above (it saturates to the
// maximum).
int CheckUnsignedOverflow(uint64_t value, int64_t incr, unsigned bits, Overflow how, uint64_t* limit);
int CheckSignedOverflow(int64_t value, int64_t incr, unsigned bits, Overflow how, int64_t* limit);

}  // namespace lapse::engine::bitops
