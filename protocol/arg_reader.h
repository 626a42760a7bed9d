// File: protocol/arg_reader.h
//
// Typed, sequential reading of command arguments with one latched error: a handler reads
// everything it needs, then checks ok() once and replies with error(). The first failure
// wins and later reads return neutral values, so handlers stay short and cannot forget a
// check in the middle. Number parsing is as strict as Redis's (string2ll / strtold rules).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace lapse::protocol {

// Redis's string2ll: optional '-', digits, no '+', no leading zeros, no spaces, fits int64.
bool ParseInt64(std::string_view s, int64_t* out);
// Redis's string2ld rules for a long double: no spaces, not empty, not NaN ("inf" allowed).
bool ParseLongDouble(std::string_view s, long double* out);
// As ParseLongDouble, for a double.
bool ParseDouble(std::string_view s, double* out);
// ASCII case-insensitive equality.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// An argument as Redis's C code sees it where it treats it as a C string: compared with
// strcasecmp (option names) or quoted with %s (error replies), both of which stop at the
// first NUL byte. "nx\0junk" is NX there, and "a\0b" is quoted as "a".
inline std::string_view AsCString(std::string_view arg) { return arg.substr(0, arg.find('\0')); }
// A copy with ASCII letters lowered (command names, option values, SHA-1 digests).
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
  return out;
}

class ArgReader {
 public:
  explicit ArgReader(std::span<const std::string_view> args) : args_(args) {}

  size_t remaining() const { return pos_ < args_.size() ? args_.size() - pos_ : 0; }
  bool HasMore() const { return remaining() > 0; }
  size_t position() const { return pos_; }

  // Next raw argument; latches "ERR syntax error" and returns "" when none is left.
  std::string_view Next();
  // Consumes the next argument if it equals `keyword` case-insensitively.
  bool NextIf(std::string_view keyword);
  // Latch "ERR value is not an integer or out of range" on failure (returns 0).
  int64_t NextInt64();
  // Latch "ERR value is not a valid float" on failure (returns 0).
  double NextDouble();

  // Latches `message` unless an error is already latched.
  void Fail(std::string_view message);
  bool ok() const { return !error_.has_value(); }
  std::string_view error() const { return error_.value_or(std::string_view()); }

 private:
  std::span<const std::string_view> args_;
  size_t pos_ = 0;
  std::optional<std::string_view> error_;
};

}  // namespace lapse::protocol
