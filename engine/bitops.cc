#include "engine/bitops.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace lapse::engine::bitops {

namespace {

uint64_t LoadWord(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// A range after Redis's normalisation, in bits; empty when start > end.
struct BitSpan {
  bool empty = true;
  uint64_t first = 0, last = 0;  // inclusive bit positions
  int64_t end_unit = 0;          // the clamped end, in the caller's unit
};

BitSpan Normalize(size_t len, int64_t start, int64_t end, bool bit_unit) {
  int64_t total = static_cast<int64_t>(len);
  if (bit_unit) total <<= 3;
  if (start < 0) start += total;
  if (end < 0) end += total;
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  if (end >= total) end = total - 1;
  BitSpan span;
  span.end_unit = end;
  if (start > end) return span;
  span.empty = false;
  span.first = bit_unit ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
  span.last = bit_unit ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return span;
}

// The first bit equal to `bit` in bits [first, last] of `p`, or -1. Whole words made only of
// the other value are skipped eight bytes at a time.
int64_t Scan(const uint8_t* p, uint64_t first, uint64_t last, int bit) {
  uint64_t i = first >> 3, last_byte = last >> 3;
  const uint64_t skip = bit ? 0 : ~uint64_t{0};
  while (i <= last_byte) {
    if (i != (first >> 3) && i + 8 <= last_byte && LoadWord(p + i) == skip) {
      i += 8;
      continue;
    }
    uint8_t v = bit ? p[i] : static_cast<uint8_t>(~p[i]);
    if (i == (first >> 3)) v &= static_cast<uint8_t>(0xFF >> (first & 7));
    if (i == last_byte) v &= static_cast<uint8_t>(0xFF << (7 - (last & 7)));
    if (v != 0) return static_cast<int64_t>(i * 8 + static_cast<uint64_t>(__builtin_clz(v) - 24));
    ++i;
  }
  return -1;
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// POPCNT where the CPU has it, chosen once at load time; the portable bit trick elsewhere.
__attribute__((target_clones("popcnt", "default")))
#endif
uint64_t Popcount(const uint8_t* p, size_t n) {
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    count += static_cast<uint64_t>(__builtin_popcountll(LoadWord(p + i))) +
             static_cast<uint64_t>(__builtin_popcountll(LoadWord(p + i + 8))) +
             static_cast<uint64_t>(__builtin_popcountll(LoadWord(p + i + 16))) +
             static_cast<uint64_t>(__builtin_popcountll(LoadWord(p + i + 24)));
  }
  for (; i + 8 <= n; i += 8) count += static_cast<uint64_t>(__builtin_popcountll(LoadWord(p + i)));
  for (; i < n; ++i) count += static_cast<uint64_t>(__builtin_popcount(p[i]));
  return count;
}

uint64_t CountRange(std::string_view s, int64_t start, int64_t end, bool bit_unit) {
  // Redis answers 0 for two negative indexes out of order before it clamps them.
  if (start < 0 && end < 0 && start > end) return 0;
  BitSpan span = Normalize(s.size(), start, end, bit_unit);
  if (span.empty) return 0;
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  uint64_t first_byte = span.first >> 3, last_byte = span.last >> 3;
  uint64_t count = Popcount(p + first_byte, last_byte - first_byte + 1);
  // Take away the bits of the edge bytes that lie outside the range.
  count -= static_cast<uint64_t>(__builtin_popcount(p[first_byte] & ~(0xFFu >> (span.first & 7)) & 0xFF));
  count -= static_cast<uint64_t>(__builtin_popcount(p[last_byte] & (0xFFu >> ((span.last & 7) + 1))));
  return count;
}

int64_t FindBit(std::string_view s, int bit, int64_t start, int64_t end, bool end_given, bool bit_unit) {
  BitSpan span = Normalize(s.size(), start, end, bit_unit);
  if (span.empty) return -1;
  int64_t pos = Scan(reinterpret_cast<const uint8_t*>(s.data()), span.first, span.last, bit);
  if (pos >= 0) return pos;
  // No 0 in range: without an explicit end the string counts as zero-padded on the right.
  if (bit == 0 && !end_given) return static_cast<int64_t>(span.last + 1);
  return -1;
}

std::string Combine(BitOp op, std::span<const std::string_view> sources) {
  size_t max_len = 0;
  for (std::string_view s : sources) max_len = std::max(max_len, s.size());
  std::string out(max_len, '\0');
  if (max_len == 0 || sources.empty()) return out;
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  // A missing key is an empty view whose data() may be null: copy only real bytes.
  if (!sources[0].empty()) std::memcpy(dst, sources[0].data(), sources[0].size());
  if (op == BitOp::kNot) {
    for (size_t i = 0; i < max_len; ++i) dst[i] = static_cast<uint8_t>(~dst[i]);
    return out;
  }
  for (size_t k = 1; k < sources.size(); ++k) {
    const auto* src = reinterpret_cast<const uint8_t*>(sources[k].data());
    size_t n = sources[k].size();
    switch (op) {
      case BitOp::kAnd:
        for (size_t i = 0; i < n; ++i) dst[i] &= src[i];
        std::memset(dst + n, 0, max_len - n);  // past its end a source reads as zeros
        break;
      case BitOp::kOr:
        for (size_t i = 0; i < n; ++i) dst[i] |= src[i];
        break;
      case BitOp::kXor:
        for (size_t i = 0; i < n; ++i) dst[i] ^= src[i];
        break;
      case BitOp::kNot:
        break;
    }
  }
  return out;
}

uint64_t GetUnsignedField(const uint8_t* p, uint64_t offset, unsigned bits) {
  uint64_t value = 0;
  for (unsigned j = 0; j < bits; ++j, ++offset) {
    value = (value << 1) | ((p[offset >> 3] >> (7 - (offset & 7))) & 1u);
  }
  return value;
}

int64_t GetSignedField(const uint8_t* p, uint64_t offset, unsigned bits) {
  uint64_t u = GetUnsignedField(p, offset, bits);
  if (bits < 64 && (u & (uint64_t{1} << (bits - 1)))) u |= ~uint64_t{0} << bits;  // sign-extend
  return static_cast<int64_t>(u);
}

namespace {
// Up to 9 bytes (a 64-bit field at any bit offset) from `s`, zero-padded past its end.
struct FieldWindow {
  uint8_t bytes[9] = {};
  uint64_t bit_offset;
  FieldWindow(std::string_view s, uint64_t offset) : bit_offset(offset & 7) {
    uint64_t byte = offset >> 3;
    for (uint64_t i = 0; i < 9 && byte + i < s.size(); ++i) bytes[i] = static_cast<uint8_t>(s[byte + i]);
  }
};
}  // namespace

uint64_t GetUnsignedField(std::string_view s, uint64_t offset, unsigned bits) {
  FieldWindow w(s, offset);
  return GetUnsignedField(w.bytes, w.bit_offset, bits);
}

int64_t GetSignedField(std::string_view s, uint64_t offset, unsigned bits) {
  FieldWindow w(s, offset);
  return GetSignedField(w.bytes, w.bit_offset, bits);
}

void SetField(uint8_t* p, uint64_t offset, unsigned bits, uint64_t value) {
  for (unsigned j = 0; j < bits; ++j, ++offset) SetBit(p, offset, static_cast<int>((value >> (bits - 1 - j)) & 1));
}

// The comparisons below are Redis's, including their wrap-around arithmetic (done here in
// unsigned types, where it is defined), so that edge cases such as SET i8 -2^63 saturate the
// same way.
int CheckUnsignedOverflow(uint64_t value, int64_t incr, unsigned bits, Overflow how, uint64_t* limit) {
  uint64_t max = bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  auto max_incr = static_cast<int64_t>(max - value);
  auto min_incr = static_cast<int64_t>(uint64_t{0} - value);
  auto wrap = [&] { *limit = (value + static_cast<uint64_t>(incr)) & max; };
  if (value > max || (incr > 0 && incr > max_incr)) {
    if (how == Overflow::kWrap) wrap();
    if (how == Overflow::kSat) *limit = max;
    return 1;
  }
  if (incr < 0 && incr < min_incr) {
    if (how == Overflow::kWrap) wrap();
    if (how == Overflow::kSat) *limit = 0;
    return -1;
  }
  return 0;
}

int CheckSignedOverflow(int64_t value, int64_t incr, unsigned bits, Overflow how, int64_t* limit) {
  int64_t max = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  int64_t min = -max - 1;
  auto max_incr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  auto min_incr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  auto wrap = [&] {
    uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      uint64_t high = ~uint64_t{0} << bits;
      sum = (sum & (uint64_t{1} << (bits - 1))) ? (sum | high) : (sum & ~high);
    }
    *limit = static_cast<int64_t>(sum);
  };
  bool full = bits >= 64;
  if (value > max || (!full && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)) {
    if (how == Overflow::kWrap) wrap();
    if (how == Overflow::kSat) *limit = max;
    return 1;
  }
  if (value < min || (!full && incr < min_incr) || (value < 0 && incr < 0 && incr < min_incr)) {
    if (how == Overflow::kWrap) wrap();
    if (how == Overflow::kSat) *limit = min;
    return -1;
  }
  return 0;
}

}  // namespace lapse::engine::bitops
