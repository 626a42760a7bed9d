// File: engine/rdb_codec.h
//
// Pieces of Redis's RDB encoding (version 10, Redis 7.0) shared by everything that reads or
// writes it: DUMP/RESTORE payloads (FUNCTION DUMP today) and, later, snapshots.
//
//  - Lengths: 6-bit (00xxxxxx), 14-bit (01xxxxxx xxxxxxxx, big-endian), 32-bit (0x80 +
//    4 bytes big-endian) and 64-bit (0x81 + 8 bytes big-endian); 11xxxxxx marks a special
//    string encoding instead (integers, LZF).
//  - Strings: a length and the bytes, an integer written as text (0xc0/0xc1/0xc2: 8/16/32-bit
//    little-endian), or LZF-compressed (0xc3, compressed length, original length, data).
//    lapse writes strings raw; it reads every form Redis writes.
//  - Payloads (DUMP): the body, the RDB version as 2 bytes little-endian, and the CRC-64
//    (Jones polynomial, reflected, as Redis's crc64.c) of all that, 8 bytes little-endian.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lapse::engine::rdb {

constexpr uint16_t kVersion = 10;  // Redis 7.0
constexpr uint8_t kOpcodeFunction2 = 245;
constexpr uint8_t kOpcodeFunctionPreGa = 246;

uint64_t Crc64(uint64_t crc, std::string_view data);

void AppendLength(std::string& out, uint64_t length);
void AppendString(std::string& out, std::string_view s);

// Decompresses LZF data into exactly `expected` bytes; nullopt if it is malformed.
std::optional<std::string> LzfDecompress(std::string_view in, size_t expected);

// Reads RDB values from a byte string, advancing as it goes; every read fails (nullopt or
// false) past the end or on malformed data, and then leaves the position undefined.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool AtEnd() const { return pos_ >= data_.size(); }
  std::optional<uint8_t> Byte();
  std::optional<std::string> String();

 private:
  // A length, or (special set) the 6-bit code of a special string encoding.
  bool Length(uint64_t* length, bool* special);
  std::string_view data_;
  size_t pos_ = 0;
};

// Appends the version and checksum that make `body` a DUMP payload.
std::string SealPayload(std::string body);
// The body of a DUMP payload whose version is at most kVersion and whose checksum holds.
std::optional<std::string_view> OpenPayload(std::string_view payload);

}  // namespace lapse::engine::rdb
