// Integer and Bulk are on every hot path, so they format with std::to_chars into a stack buffer
// and grow the output at most once per reply. Doubles are rarer and go through snprintf
// ("%.17g"), which is what Redis 7.0 uses, so the digits match it exactly.
//
// SimpleString and Error replace CR and LF with spaces, as Redis's addReplyErrorFormat does:
// a message that embeds client input (e.g. "expected '$', got '\r'") must not break framing.
#include "protocol/reply_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace lapse::protocol {
namespace {

// Longest "<prefix><int64>\r\n": 1 + 20 + 2.
constexpr size_t kHeaderMax = 24;

// Writes "<prefix><value>\r\n" into buf and returns its length.
template <typename Int>
size_t FormatHeader(char (&buf)[kHeaderMax], char prefix, Int value) {
  buf[0] = prefix;
  char* end = std::to_chars(buf + 1, buf + kHeaderMax - 2, value).ptr;
  end[0] = '\r';
  end[1] = '\n';
  return static_cast<size_t>(end + 2 - buf);
}

// Appends "<prefix><value>\r\n".
template <typename Int>
void AppendHeader(std::string* out, char prefix, Int value) {
  char buf[kHeaderMax];
  out->append(buf, FormatHeader(buf, prefix, value));
}

// Appends "<prefix><len>\r\n<tag><payload>\r\n" growing `out` at most once.
void AppendLengthPrefixed(std::string* out, char prefix, std::string_view tag,
                          std::string_view payload) {
  char buf[kHeaderMax];
  size_t header_len = FormatHeader(buf, prefix, tag.size() + payload.size());
  size_t needed = out->size() + header_len + tag.size() + payload.size() + 2;
  if (needed > out->capacity()) out->reserve(needed);  // libstdc++ still grows geometrically
  out->append(buf, header_len);
  out->append(tag);
  out->append(payload);
  out->append("\r\n", 2);
}

void AppendLine(std::string* out, char prefix, std::string_view s) {
  size_t start = out->size();
  out->reserve(start + s.size() + 3);
  out->push_back(prefix);
  out->append(s);
  for (size_t i = start + 1; i < out->size(); ++i) {
    char& c = (*out)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out->append("\r\n", 2);
}

}  // namespace

void ReplyWriter::SimpleString(std::string_view s) { AppendLine(out_, '+', s); }

void ReplyWriter::Error(std::string_view message) { AppendLine(out_, '-', message); }

void ReplyWriter::Integer(int64_t value) { AppendHeader(out_, ':', value); }

void ReplyWriter::Bulk(std::string_view s) { AppendLengthPrefixed(out_, '$', {}, s); }

void ReplyWriter::Null() {
  if (version_ == RespVersion::kResp3) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("$-1\r\n", 5);
  }
}

void ReplyWriter::NullArray() {
  if (version_ == RespVersion::kResp3) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("*-1\r\n", 5);
  }
}

void ReplyWriter::ArrayHeader(size_t n) { AppendHeader(out_, '*', n); }

void ReplyWriter::PushHeader(size_t n) { AppendHeader(out_, version_ == RespVersion::kResp3 ? '>' : '*', n); }

void ReplyWriter::MapHeader(size_t pairs) {
  if (version_ == RespVersion::kResp3) {
    AppendHeader(out_, '%', pairs);
  } else {
    AppendHeader(out_, '*', pairs * 2);
  }
}

void ReplyWriter::SetHeader(size_t n) {
  AppendHeader(out_, version_ == RespVersion::kResp3 ? '~' : '*', n);
}

void ReplyWriter::Double(double value) {
  char buf[32];
  std::string_view text;
  // Spelled out as glibc's %.17g spells them on the Linux Redis runs on (a NaN keeps its
  // sign: Lua's 0/0 is "-nan"); Redis spells out inf itself.
  if (std::isnan(value)) {
    text = std::signbit(value) ? "-nan" : "nan";
  } else if (std::isinf(value)) {
    text = value > 0 ? "inf" : "-inf";
  } else {
    int n = std::snprintf(buf, sizeof(buf), "%.17g", value);
    text = std::string_view(buf, static_cast<size_t>(n));
  }
  DoubleText(text);
}

void ReplyWriter::DoubleText(std::string_view text) {
  if (version_ == RespVersion::kResp3) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n", 2);
  } else {
    Bulk(text);
  }
}

void ReplyWriter::Bool(bool value) {
  if (version_ == RespVersion::kResp3) {
    out_->append(value ? "#t\r\n" : "#f\r\n", 4);
  } else {
    out_->append(value ? ":1\r\n" : ":0\r\n", 4);
  }
}

void ReplyWriter::Verbatim(std::string_view s) { Verbatim(s, "txt"); }

void ReplyWriter::Verbatim(std::string_view s, std::string_view format) {
  if (version_ != RespVersion::kResp3) return Bulk(s);
  char tag[4] = {' ', ' ', ' ', ':'};
  std::copy_n(format.begin(), std::min<size_t>(format.size(), 3), tag);
  AppendLengthPrefixed(out_, '=', std::string_view(tag, 4), s);
}

void ReplyWriter::BigNumber(std::string_view digits) {
  if (version_ != RespVersion::kResp3) return Bulk(digits);
  AppendLine(out_, '(', digits);
}

}  // namespace lapse::protocol
