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
//    lapse writes integers and LZF as Redis does (AppendStringEncoded); it reads every form.
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
// A raw string: its length and its bytes.
void AppendString(std::string& out, std::string_view s);
// A string as Redis's rdbSaveRawString writes it: a canonical integer of up to 32 bits in its
// integer form, else LZF-compressed when `compress` and it is longer than 20 bytes and LZF
// saves at least 4 bytes, else raw.
void AppendStringEncoded(std::string& out, std::string_view s, bool compress);
// A double as 8 bytes little-endian (ZSET_2 scores).
void AppendBinaryDouble(std::string& out, double value);
// 8 bytes little-endian (millisecond times, EXPIRETIME_MS).
void AppendUint64Le(std::string& out, uint64_t value);

// Compresses `in` with LZF (liblzf's format, which Redis uses); nullopt when the output
// would not be shorter than `in`.
std::optional<std::string> LzfCompress(std::string_view in);

// Decompresses LZF data into exactly `expected` bytes; nullopt if it is malformed.
std::optional<std::string> LzfDecompress(std::string_view in, size_t expected);

// Reads RDB values from a byte string, advancing as it goes; every read fails (nullopt or
// false) past the end or on malformed data, and then leaves the position undefined.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool AtEnd() const { return pos_ >= data_.size(); }
  size_t position() const { return pos_; }
  // Whether a read failed for want of bytes (the data ends too soon) rather than bad ones.
  bool ran_short() const { return ran_short_; }
  std::optional<uint8_t> Byte();
  std::optional<std::string> String();
  // A plain length (not a special string encoding).
  std::optional<uint64_t> Length();
  // `n` raw bytes, viewed in place.
  std::optional<std::string_view> Raw(size_t n);
  std::optional<uint64_t> Uint64Le();
  std::optional<double> BinaryDouble();
  // A score as the old ZSET type writes it: a length byte then its text (253 nan, 254 +inf,
  // 255 -inf).
  std::optional<double> TextDouble();

  // A length, or (special set) the 6-bit code of a special string encoding.
  bool Length(uint64_t* length, bool* special);

 private:
  void Short() { ran_short_ = true; }
  std::string_view data_;
  size_t pos_ = 0;
  bool ran_short_ = false;
};

// Appends the version and checksum that make `body` a DUMP payload.
std::string SealPayload(std::string body);
// The body of a DUMP payload whose version is at most kVersion and whose checksum holds.
std::optional<std::string_view> OpenPayload(std::string_view payload);

}  // namespace lapse::engine::rdb
