#include "engine/rdb_codec.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "engine/collection.h"

namespace lapse::engine::rdb {

namespace {

constexpr uint64_t kJonesReflected = 0x95ac9329ac4bc9b5ULL;  // 0xad93d23594c935a9, bit-reversed

std::array<uint64_t, 256> MakeCrcTable() {
  std::array<uint64_t, 256> table{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kJonesReflected : crc >> 1;
    table[i] = crc;
  }
  return table;
}

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  static const std::array<uint64_t, 256> kTable = MakeCrcTable();
  for (unsigned char byte : data) crc = kTable[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc;
}

void AppendLength(std::string& out, uint64_t length) {
  if (length < (1 << 6)) {
    out.push_back(static_cast<char>(length));
  } else if (length < (1 << 14)) {
    out.push_back(static_cast<char>(0x40 | (length >> 8)));
    out.push_back(static_cast<char>(length & 0xff));
  } else if (length <= UINT32_MAX) {
    out.push_back(static_cast<char>(0x80));
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((length >> shift) & 0xff));
  } else {
    out.push_back(static_cast<char>(0x81));
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((length >> shift) & 0xff));
  }
}

void AppendString(std::string& out, std::string_view s) {
  AppendLength(out, s.size());
  out.append(s);
}

void AppendStringEncoded(std::string& out, std::string_view s, bool compress) {
  int64_t value = 0;
  if (s.size() <= 11 && ParseCanonicalInt(s, &value)) {
    if (value >= INT8_MIN && value <= INT8_MAX) {
      out.push_back(static_cast<char>(0xc0));
      out.push_back(static_cast<char>(value));
      return;
    }
    if (value >= INT16_MIN && value <= INT16_MAX) {
      out.push_back(static_cast<char>(0xc1));
      for (int k = 0; k < 2; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xff));
      return;
    }
    if (value >= INT32_MIN && value <= INT32_MAX) {
      out.push_back(static_cast<char>(0xc2));
      for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xff));
      return;
    }
  }
  // Redis's rdbSaveLzfStringObject: only worth it past 20 bytes, and only if it saves 4.
  if (compress && s.size() > 20) {
    if (auto packed = LzfCompress(s); packed && packed->size() + 4 <= s.size()) {
      out.push_back(static_cast<char>(0xc3));
      AppendLength(out, packed->size());
      AppendLength(out, s.size());
      out.append(*packed);
      return;
    }
  }
  AppendString(out, s);
}

void AppendBinaryDouble(std::string& out, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  AppendUint64Le(out, bits);
}

void AppendUint64Le(std::string& out, uint64_t value) {
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xff));
}

// liblzf's format: literal runs of 1..32 bytes (a control byte ctrl < 32, then ctrl + 1
// bytes) and back references (len - 2 in the top 3 bits, 7 meaning an extra length byte,
// then the 13-bit distance - 1). Matches are found through a table of the last position of
// each 3-byte hash, as liblzf does; any valid encoding decompresses the same.
std::optional<std::string> LzfCompress(std::string_view in) {
  constexpr size_t kHashBits = 14, kMaxOffset = 1 << 13, kMaxRef = (1 << 8) + (1 << 3);
  if (in.size() < 4) return std::nullopt;
  std::vector<int64_t> last(size_t{1} << kHashBits, -1);
  std::string out;
  out.reserve(in.size());
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t n = in.size(), i = 0, literal_start = 0;
  auto flush_literals = [&](size_t end) {
    while (literal_start < end) {
      size_t run = std::min<size_t>(32, end - literal_start);
      out.push_back(static_cast<char>(run - 1));
      out.append(in.substr(literal_start, run));
      literal_start += run;
    }
  };
  while (i + 2 < n) {
    uint32_t h = ((p[i] << 16) | (p[i + 1] << 8) | p[i + 2]) * 2654435761u >> (32 - kHashBits);
    int64_t ref = last[h];
    last[h] = static_cast<int64_t>(i);
    if (ref >= 0 && i - ref <= kMaxOffset && p[ref] == p[i] && p[ref + 1] == p[i + 1] && p[ref + 2] == p[i + 2]) {
      size_t len = 3, most = std::min(kMaxRef, n - i);
      while (len < most && p[ref + len] == p[i + len]) ++len;
      flush_literals(i);
      size_t distance = i - ref - 1, code = len - 2;
      if (code < 7) {
        out.push_back(static_cast<char>((code << 5) | (distance >> 8)));
      } else {
        out.push_back(static_cast<char>((7 << 5) | (distance >> 8)));
        out.push_back(static_cast<char>(code - 7));
      }
      out.push_back(static_cast<char>(distance & 0xff));
      i += len;
      literal_start = i;
      if (out.size() >= n) return std::nullopt;
      continue;
    }
    ++i;
  }
  flush_literals(n);
  if (out.size() >= n) return std::nullopt;
  return out;
}

std::optional<std::string> LzfDecompress(std::string_view in, size_t expected) {
  std::string out;
  out.reserve(expected);
  size_t i = 0;
  while (i < in.size()) {
    unsigned ctrl = static_cast<unsigned char>(in[i++]);
    if (ctrl < 32) {  // a literal run of ctrl + 1 bytes
      size_t run = ctrl + 1;
      if (i + run > in.size() || out.size() + run > expected) return std::nullopt;
      out.append(in.substr(i, run));
      i += run;
      continue;
    }
    size_t len = ctrl >> 5;  // a back reference of len + 2 bytes
    if (len == 7) {
      if (i >= in.size()) return std::nullopt;
      len += static_cast<unsigned char>(in[i++]);
    }
    if (i >= in.size()) return std::nullopt;
    size_t distance = ((ctrl & 0x1f) << 8) + static_cast<unsigned char>(in[i++]) + 1;
    len += 2;
    if (distance > out.size() || out.size() + len > expected) return std::nullopt;
    size_t from = out.size() - distance;
    for (size_t k = 0; k < len; ++k) out.push_back(out[from + k]);  // may overlap what it writes
  }
  if (out.size() != expected) return std::nullopt;
  return out;
}

std::optional<uint8_t> Reader::Byte() {
  if (pos_ >= data_.size()) return Short(), std::nullopt;
  return static_cast<uint8_t>(data_[pos_++]);
}

bool Reader::Length(uint64_t* length, bool* special) {
  auto first = Byte();
  if (!first) return false;
  *special = false;
  switch (*first >> 6) {
    case 0:
      *length = *first & 0x3f;
      return true;
    case 1: {
      auto second = Byte();
      if (!second) return false;
      *length = ((*first & 0x3f) << 8) | *second;
      return true;
    }
    case 2: {
      int bytes = *first == 0x80 ? 4 : *first == 0x81 ? 8 : 0;
      if (bytes == 0) return false;
      if (pos_ + bytes > data_.size()) return Short(), false;
      uint64_t value = 0;
      for (int k = 0; k < bytes; ++k) value = (value << 8) | static_cast<uint8_t>(data_[pos_++]);
      *length = value;
      return true;
    }
    default:
      *special = true;
      *length = *first & 0x3f;
      return true;
  }
}

std::optional<uint64_t> Reader::Length() {
  uint64_t length = 0;
  bool special = false;
  if (!Length(&length, &special) || special) return std::nullopt;
  return length;
}

std::optional<std::string_view> Reader::Raw(size_t n) {
  if (n > data_.size() - pos_) return Short(), std::nullopt;
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

std::optional<uint64_t> Reader::Uint64Le() {
  auto raw = Raw(8);
  if (!raw) return std::nullopt;
  uint64_t value = 0;
  for (int k = 7; k >= 0; --k) value = (value << 8) | static_cast<uint8_t>((*raw)[k]);
  return value;
}

std::optional<double> Reader::BinaryDouble() {
  auto bits = Uint64Le();
  if (!bits) return std::nullopt;
  double value;
  std::memcpy(&value, &*bits, sizeof value);
  return value;
}

std::optional<double> Reader::TextDouble() {
  auto len = Byte();
  if (!len) return std::nullopt;
  if (*len == 253) return std::numeric_limits<double>::quiet_NaN();
  if (*len == 254) return std::numeric_limits<double>::infinity();
  if (*len == 255) return -std::numeric_limits<double>::infinity();
  auto text = Raw(*len);
  if (!text) return std::nullopt;
  std::string copy(*text);
  char* end = nullptr;
  double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

std::optional<std::string> Reader::String() {
  uint64_t length = 0;
  bool special = false;
  if (!Length(&length, &special)) return std::nullopt;
  if (!special) {
    if (length > data_.size() - pos_) return Short(), std::nullopt;
    std::string out(data_.substr(pos_, length));
    pos_ += length;
    return out;
  }
  if (length <= 2) {  // an integer of 1, 2 or 4 bytes, little-endian, signed
    size_t bytes = size_t{1} << length;
    if (pos_ + bytes > data_.size()) return Short(), std::nullopt;
    uint32_t raw = 0;
    for (size_t k = 0; k < bytes; ++k) raw |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_++])) << (8 * k);
    int64_t value = bytes == 1 ? static_cast<int8_t>(raw) : bytes == 2 ? static_cast<int16_t>(raw)
                                                                       : static_cast<int32_t>(raw);
    return std::to_string(value);
  }
  if (length != 3) return std::nullopt;
  uint64_t compressed = 0, original = 0;
  if (!Length(&compressed, &special) || special || !Length(&original, &special) || special) return std::nullopt;
  if (compressed > data_.size() - pos_) return Short(), std::nullopt;
  if (original > (uint64_t{1} << 32)) return std::nullopt;
  std::string_view packed = data_.substr(pos_, compressed);
  pos_ += compressed;
  return LzfDecompress(packed, original);
}

std::string SealPayload(std::string body) {
  body.push_back(static_cast<char>(kVersion & 0xff));
  body.push_back(static_cast<char>(kVersion >> 8));
  uint64_t crc = Crc64(0, body);
  for (int k = 0; k < 8; ++k) body.push_back(static_cast<char>((crc >> (8 * k)) & 0xff));
  return body;
}

std::optional<std::string_view> OpenPayload(std::string_view payload) {
  if (payload.size() < 10) return std::nullopt;
  size_t footer = payload.size() - 10;
  uint16_t version = static_cast<uint8_t>(payload[footer]) | (static_cast<uint8_t>(payload[footer + 1]) << 8);
  if (version > kVersion) return std::nullopt;
  uint64_t crc = 0;
  for (int k = 7; k >= 0; --k) crc = (crc << 8) | static_cast<uint8_t>(payload[footer + 2 + k]);
  if (Crc64(0, payload.substr(0, footer + 2)) != crc) return std::nullopt;
  return payload.substr(0, footer);
}

}  // namespace lapse::engine::rdb
