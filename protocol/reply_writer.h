// File: protocol/reply_writer.h
//
// Serializes replies in RESP2 or RESP3 into a caller-owned byte string. A connection keeps
// one writer and switches its version when HELLO 3 arrives; the same call sequence renders
// correctly in both versions (maps become flat arrays, nulls become $-1 / *-1, doubles and
// booleans become bulk strings / integers in RESP2), so command handlers never branch on
// the protocol version.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lapse::protocol {

enum class RespVersion { kResp2 = 2, kResp3 = 3 };

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string* out, RespVersion version = RespVersion::kResp2)
      : out_(out), version_(version) {}

  RespVersion version() const { return version_; }
  void set_version(RespVersion v) { version_ = v; }
  std::string* buffer() { return out_; }
  void set_buffer(std::string* out) { out_ = out; }

  void Ok() { out_->append("+OK\r\n"); }
  void SimpleString(std::string_view s);  // +s
  void Error(std::string_view message);   // -message; message like "ERR syntax error"
  void Integer(int64_t value);            // :value
  void Bulk(std::string_view s);          // $len s
  void Null();                            // RESP2 $-1, RESP3 _
  void NullArray();                       // RESP2 *-1, RESP3 _
  void ArrayHeader(size_t n);             // *n
  void MapHeader(size_t pairs);           // RESP3 %n, RESP2 *2n
  void SetHeader(size_t n);               // RESP3 ~n, RESP2 *n
  void PushHeader(size_t n);              // RESP3 >n (out-of-band data), RESP2 *n
  void Double(double value);              // RESP3 ,v; RESP2 bulk, formatted like Redis (%.17g)
  // A double the caller has already formatted (Redis's other forms, e.g. GEOPOS's 17
  // decimals): RESP3 ,text; RESP2 bulk text.
  void DoubleText(std::string_view text);
  void Bool(bool value);                  // RESP3 #t/#f; RESP2 :1/:0
  void Verbatim(std::string_view s);      // RESP3 =len txt:s; RESP2 bulk
  // As Verbatim with its own three-letter format: longer is cut, shorter padded with spaces.
  void Verbatim(std::string_view s, std::string_view format);
  void BigNumber(std::string_view digits);  // RESP3 (digits; RESP2 bulk

 private:
  std::string* out_;
  RespVersion version_;
};

}  // namespace lapse::protocol
