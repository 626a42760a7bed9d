#include "engine/rdb_codec.h"

#include <array>

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
  if (pos_ >= data_.size()) return std::nullopt;
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
      if (bytes == 0 || pos_ + bytes > data_.size()) return false;
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

std::optional<std::string> Reader::String() {
  uint64_t length = 0;
  bool special = false;
  if (!Length(&length, &special)) return std::nullopt;
  if (!special) {
    if (length > data_.size() - pos_) return std::nullopt;
    std::string out(data_.substr(pos_, length));
    pos_ += length;
    return out;
  }
  if (length <= 2) {  // an integer of 1, 2 or 4 bytes, little-endian, signed
    size_t bytes = size_t{1} << length;
    if (pos_ + bytes > data_.size()) return std::nullopt;
    uint32_t raw = 0;
    for (size_t k = 0; k < bytes; ++k) raw |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_++])) << (8 * k);
    int64_t value = bytes == 1 ? static_cast<int8_t>(raw) : bytes == 2 ? static_cast<int16_t>(raw)
                                                                       : static_cast<int32_t>(raw);
    return std::to_string(value);
  }
  if (length != 3) return std::nullopt;
  uint64_t compressed = 0, original = 0;
  if (!Length(&compressed, &special) || special || !Length(&original, &special) || special) return std::nullopt;
  if (compressed > data_.size() - pos_ || original > (uint64_t{1} << 32)) return std::nullopt;
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
