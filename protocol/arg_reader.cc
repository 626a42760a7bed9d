// Number parsing follows Redis bit for bit (string2ll, string2ld, getDoubleFromObject), so that
// a value Redis rejects is rejected here with the same error, and a value it accepts parses to
// the same number. The floating-point parsers go through strtod/strtold rather than
// std::from_chars because Redis accepts what strtod accepts: "+1.5", "0x1p3", "infinity".
//
// Once an error is latched the reader is exhausted (remaining() == 0): a handler loop such as
// `while (r.HasMore()) { if (r.NextIf("NX")) ... else r.Fail(kSyntax); }` then terminates
// instead of spinning on the argument that failed.
#include "protocol/arg_reader.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "protocol/errors.h"

namespace lapse::protocol {
namespace {

// Redis's LONG_STR_SIZE: string2ll rejects inputs of this length or more outright.
constexpr size_t kLongStrSize = 21;
// Redis's MAX_LONG_DOUBLE_CHARS: string2ld copies into a buffer of this size.
constexpr size_t kMaxLongDoubleChars = 5 * 1024;

bool IsCSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Redis rejects a floating-point value that overflowed to +-HUGE_VAL or underflowed to zero
// (ERANGE); a denormal result that also sets ERANGE is accepted.
template <typename T>
bool RangeOk(T value) {
  if (errno != ERANGE) return errno != EINVAL;
  return !(std::isinf(value) || value == 0);
}

}  // namespace

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() >= kLongStrSize) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    if (++i == s.size()) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;  // no leading zeros, no "-0"
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > std::numeric_limits<uint64_t>::max() / 10) return false;
    v *= 10;
    if (v > std::numeric_limits<uint64_t>::max() - digit) return false;
    v += digit;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (v > kMaxPositive + 1) return false;
    *out = static_cast<int64_t>(0 - v);  // well defined in two's complement, covers INT64_MIN
  } else {
    if (v > kMaxPositive) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool ParseLongDouble(std::string_view s, long double* out) {
  if (s.empty() || s.size() >= kMaxLongDoubleChars) return false;
  char buf[kMaxLongDoubleChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  long double value = std::strtold(buf, &end);
  // An embedded NUL stops strtold early, so it fails the full-length check like trailing junk.
  if (IsCSpace(buf[0]) || static_cast<size_t>(end - buf) != s.size() || !RangeOk(value) ||
      std::isnan(value)) {
    return false;
  }
  *out = value;
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty() || IsCSpace(s[0])) return false;
  // Redis parses the value in place (sds strings are NUL-terminated) with no length cap; a
  // stack buffer covers every realistic number without an allocation.
  char small[128];
  std::string large;
  const char* str;
  if (s.size() < sizeof(small)) {
    std::memcpy(small, s.data(), s.size());
    small[s.size()] = '\0';
    str = small;
  } else {
    large.assign(s);
    str = large.c_str();
  }
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(str, &end);
  if (static_cast<size_t>(end - str) != s.size() || !RangeOk(value) || std::isnan(value)) {
    return false;
  }
  *out = value;
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + ('a' - 'A'));
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + ('a' - 'A'));
    if (x != y) return false;
  }
  return true;
}

std::string_view ArgReader::Next() {
  if (!ok()) return {};
  if (pos_ >= args_.size()) {
    Fail(errors::kSyntax);
    return {};
  }
  return args_[pos_++];
}

bool ArgReader::NextIf(std::string_view keyword) {
  if (!ok() || pos_ >= args_.size() || !EqualsIgnoreCase(args_[pos_], keyword)) return false;
  ++pos_;
  return true;
}

int64_t ArgReader::NextInt64() {
  if (!ok()) return 0;
  std::string_view arg = Next();
  int64_t value = 0;
  if (!ok()) return 0;
  if (!ParseInt64(arg, &value)) {
    Fail(errors::kNotInteger);
    return 0;
  }
  return value;
}

double ArgReader::NextDouble() {
  if (!ok()) return 0;
  std::string_view arg = Next();
  double value = 0;
  if (!ok()) return 0;
  if (!ParseDouble(arg, &value)) {
    Fail(errors::kNotFloat);
    return 0;
  }
  return value;
}

void ArgReader::Fail(std::string_view message) {
  if (!ok()) return;
  error_ = message;
  pos_ = args_.size();
}

}  // namespace lapse::protocol
