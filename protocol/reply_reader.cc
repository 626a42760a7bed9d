// Framing keeps only a stack of "elements still missing" counts and a few offsets, so a
// reply costs no allocation once the stack has grown to the deepest nesting seen. Work per
// call is bounded by the bytes that arrived since the previous call: the search for a header
// terminator resumes where it stopped, and bulk payloads are skipped by length, never scanned.
#include "protocol/reply_reader.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace lapse::protocol {
namespace {

bool ParseInt(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

enum class Shape { kScalar, kLengthPrefixed, kAggregate };

struct TypeInfo {
  bool known = false;
  ReplyType type = ReplyType::kNull;
  Shape shape = Shape::kScalar;
  bool attribute = false;
  int64_t elements_per_count = 1;  // maps and attributes hold two elements per count
};

TypeInfo Classify(char marker) {
  switch (marker) {
    case '+': return {true, ReplyType::kSimpleString, Shape::kScalar};
    case '-': return {true, ReplyType::kError, Shape::kScalar};
    case ':': return {true, ReplyType::kInteger, Shape::kScalar};
    case '_': return {true, ReplyType::kNull, Shape::kScalar};
    case ',': return {true, ReplyType::kDouble, Shape::kScalar};
    case '#': return {true, ReplyType::kBoolean, Shape::kScalar};
    case '(': return {true, ReplyType::kBigNumber, Shape::kScalar};
    case '$': return {true, ReplyType::kBulk, Shape::kLengthPrefixed};
    case '=': return {true, ReplyType::kVerbatim, Shape::kLengthPrefixed};
    case '!': return {true, ReplyType::kBulkError, Shape::kLengthPrefixed};
    case '*': return {true, ReplyType::kArray, Shape::kAggregate};
    case '~': return {true, ReplyType::kSet, Shape::kAggregate};
    case '>': return {true, ReplyType::kPush, Shape::kAggregate};
    case '%': return {true, ReplyType::kMap, Shape::kAggregate, false, 2};
    case '|': return {true, ReplyType::kMap, Shape::kAggregate, true, 2};
    default: return {};
  }
}

// Checks the text of a scalar header against its type.
bool ValidScalar(ReplyType type, std::string_view text) {
  int64_t ignored;
  switch (type) {
    case ReplyType::kInteger: return ParseInt(text, &ignored);
    case ReplyType::kNull: return text.empty();
    case ReplyType::kBoolean: return text == "t" || text == "f";
    case ReplyType::kDouble:
    case ReplyType::kBigNumber: return !text.empty();
    default: return true;
  }
}

}  // namespace

void ReplyReader::Reset() {
  error_.clear();
  ResetReply();
}

void ReplyReader::ResetReply() {
  phase_ = Phase::kHeader;
  scan_pos_ = 0;
  line_scanned_ = 0;
  payload_end_ = 0;
  have_top_ = false;
  top_ = ReplyType::kNull;
  open_.clear();
}

ReplyStatus ReplyReader::Fail(std::string message) {
  error_ = std::move(message);
  ResetReply();
  return ReplyStatus::kError;
}

bool ReplyReader::CompleteElement() {
  while (!open_.empty()) {
    OpenAggregate& innermost = open_.back();
    if (--innermost.missing > 0) return false;
    bool was_attribute = innermost.attribute;
    open_.pop_back();
    // An attribute is not an element of its parent: the element it annotates follows it.
    if (was_attribute) return false;
  }
  return true;
}

ReplyStatus ReplyReader::Next(std::string_view input, size_t* consumed, ReplyType* type) {
  *consumed = 0;
  if (!error_.empty()) return ReplyStatus::kError;
  while (true) {
    bool element_done = false;
    if (phase_ == Phase::kPayload) {
      if (input.size() < payload_end_) return ReplyStatus::kNeedMore;
      if (input[payload_end_ - 2] != '\r' || input[payload_end_ - 1] != '\n') {
        return Fail("Protocol error: expected CRLF after bulk payload");
      }
      scan_pos_ = line_scanned_ = payload_end_;
      phase_ = Phase::kHeader;
      element_done = true;
    } else {
      ReplyStatus status = ReadHeader(input, &element_done);
      if (status != ReplyStatus::kOk) return status;
    }
    if (element_done && CompleteElement()) {
      *consumed = scan_pos_;
      *type = top_;
      ResetReply();
      return ReplyStatus::kOk;
    }
  }
}

ReplyStatus ReplyReader::ReadHeader(std::string_view input, bool* element_done) {
  *element_done = false;
  size_t from = std::max(line_scanned_, scan_pos_);
  const void* hit = from < input.size() ? std::memchr(input.data() + from, '\n', input.size() - from) : nullptr;
  if (!hit) {
    if (input.size() - scan_pos_ > limits_.max_line_len) return Fail("Protocol error: too big reply header");
    line_scanned_ = input.size();
    return ReplyStatus::kNeedMore;
  }
  size_t newline = static_cast<size_t>(static_cast<const char*>(hit) - input.data());
  if (newline < scan_pos_ + 2 || input[newline - 1] != '\r') {
    return Fail("Protocol error: header not terminated by CRLF");
  }
  TypeInfo info = Classify(input[scan_pos_]);
  if (!info.known) return Fail("Protocol error: unknown reply type byte");
  std::string_view text = input.substr(scan_pos_ + 1, newline - 1 - (scan_pos_ + 1));
  size_t next = newline + 1;
  bool at_top = open_.empty() && !info.attribute;
  scan_pos_ = line_scanned_ = next;

  int64_t count = 0;
  if (info.shape != Shape::kScalar && !ParseInt(text, &count)) {
    return Fail("Protocol error: invalid length");
  }
  // RESP2 nulls: $-1 and *-1.
  bool null = (info.type == ReplyType::kBulk || info.type == ReplyType::kArray) && count == -1;
  if (at_top && !have_top_) {
    top_ = null ? ReplyType::kNull : info.type;
    have_top_ = true;
  }
  if (info.shape == Shape::kScalar) {
    if (!ValidScalar(info.type, text)) return Fail("Protocol error: invalid scalar reply");
    *element_done = true;
    return ReplyStatus::kOk;
  }
  if (null) {
    *element_done = true;
    return ReplyStatus::kOk;
  }
  if (count < 0) return Fail("Protocol error: invalid length");
  if (info.shape == Shape::kLengthPrefixed) {
    if (count > limits_.max_bulk_len) return Fail("Protocol error: bulk too long");
    payload_end_ = next + static_cast<size_t>(count) + 2;
    phase_ = Phase::kPayload;
    return ReplyStatus::kOk;
  }
  if (count > limits_.max_aggregate_len) return Fail("Protocol error: aggregate too long");
  if (count == 0) {
    // An empty attribute annotates the next element; an empty aggregate is one element.
    *element_done = !info.attribute;
    return ReplyStatus::kOk;
  }
  if (open_.size() >= limits_.max_depth) return Fail("Protocol error: replies nested too deeply");
  open_.push_back({count * info.elements_per_count, info.attribute});
  return ReplyStatus::kOk;
}

namespace {

constexpr size_t kMaxDecodeDepth = 64;

// Reads the header line at `pos`; returns the position after it, or in.size() if incomplete.
size_t HeaderLine(std::string_view in, size_t pos, std::string_view* text) {
  size_t newline = in.find('\n', pos);
  if (newline == std::string_view::npos || newline < pos + 2) {
    *text = {};
    return in.size();
  }
  *text = in.substr(pos + 1, newline - 1 - (pos + 1));
  return newline + 1;
}

size_t DecodeAt(std::string_view in, size_t pos, size_t depth, Reply* out);

size_t DecodeElements(std::string_view in, size_t pos, size_t depth, int64_t n, std::vector<Reply>* out) {
  for (int64_t i = 0; i < n && pos < in.size(); ++i) {
    out->emplace_back();
    pos = DecodeAt(in, pos, depth + 1, &out->back());
  }
  return pos;
}

size_t DecodeAt(std::string_view in, size_t pos, size_t depth, Reply* out) {
  if (pos >= in.size() || depth > kMaxDecodeDepth) return in.size();
  TypeInfo info = Classify(in[pos]);
  std::string_view text;
  size_t next = HeaderLine(in, pos, &text);
  out->type = info.type;
  if (!info.known) return in.size();
  int64_t count = 0;
  if (info.shape != Shape::kScalar) ParseInt(text, &count);
  if (info.shape == Shape::kScalar) {
    if (info.type == ReplyType::kInteger) ParseInt(text, &out->integer);
    if (info.type == ReplyType::kBoolean) out->integer = text == "t" ? 1 : 0;
    if (info.type != ReplyType::kNull && info.type != ReplyType::kInteger &&
        info.type != ReplyType::kBoolean) {
      out->text.assign(text);
    }
    return next;
  }
  if (count < 0) {
    out->type = ReplyType::kNull;
    return next;
  }
  if (info.shape == Shape::kLengthPrefixed) {
    std::string_view payload = next < in.size() ? in.substr(next, static_cast<size_t>(count)) : std::string_view();
    if (info.type == ReplyType::kVerbatim && payload.size() >= 4 && payload[3] == ':') payload.remove_prefix(4);
    out->text.assign(payload);
    return std::min(in.size(), next + static_cast<size_t>(count) + 2);
  }
  if (info.attribute) {
    std::vector<Reply> dropped;
    next = DecodeElements(in, next, depth, count * 2, &dropped);
    return DecodeAt(in, next, depth + 1, out);
  }
  return DecodeElements(in, next, depth, count * info.elements_per_count, &out->elements);
}

}  // namespace

Reply DecodeReply(std::string_view framed) {
  Reply reply;
  DecodeAt(framed, 0, 0, &reply);
  return reply;
}

}  // namespace lapse::protocol
