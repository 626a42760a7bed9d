// The parser follows Redis 7's processMultibulkBuffer and processInlineBuffer, quirks included,
// because clients and proxies are tested against them:
//   * a header line ends at the first '\r'; the byte after it is skipped unchecked, exactly as
//     bulk payloads are followed by two skipped bytes;
//   * the "too big" limits apply only while no terminator has arrived, and they count every
//     byte received for the unfinished line, so the same request can pass in one read and
//     fail when it trickles in (Redis behaves the same way);
//   * an inline line is split like sdssplitargs, which stops at a NUL byte.
// Work per call is bounded by the bytes that arrived since the previous call: header searches
// resume at line_scanned_, and a bulk payload is only length-checked, never scanned.
#include "protocol/resp_parser.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstring>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/split_args.h"

namespace lapse::protocol {
namespace {

// Caps the up-front reservation so that `*1000000\r\n` alone cannot allocate megabytes.
constexpr size_t kMaxArgReserve = 1024;

size_t Find(std::string_view input, char c, size_t from) {
  if (from >= input.size()) return std::string_view::npos;
  const void* hit = std::memchr(input.data() + from, c, input.size() - from);
  return hit ? static_cast<size_t>(static_cast<const char*>(hit) - input.data())
             : std::string_view::npos;
}

}  // namespace

RespParser::RespParser(ParserLimits limits) : limits_(limits) {}

void RespParser::Reset() {
  error_.clear();
  ResetCommand();
}

void RespParser::ResetCommand() {
  bytes_hint_ = 0;
  expected_args_ = -1;
  bulk_len_ = -1;
  scan_pos_ = 0;
  line_scanned_ = 0;
  arg_spans_.clear();
}

ParseStatus RespParser::Fail(std::string message) {
  error_ = std::move(message);
  ResetCommand();
  return ParseStatus::kError;
}

ParseStatus RespParser::Parse(std::string_view input, size_t* consumed,
                              std::vector<std::string_view>* args) {
  *consumed = 0;
  args->clear();
  if (!error_.empty()) return ParseStatus::kError;
  // The caller must hand back at least what was already examined.
  assert(input.size() >= line_scanned_ && input.size() >= scan_pos_);
  if (input.empty()) return ParseStatus::kNeedMore;
  if (input[0] == '*') return ParseMultibulk(input, consumed, args);
  return ParseInline(input, consumed, args);
}

bool RespParser::FindHeaderEnd(std::string_view input, size_t line_start, size_t* cr,
                               bool* too_long) {
  *too_long = false;
  size_t pos = Find(input, '\r', std::max(line_scanned_, line_start));
  if (pos == std::string_view::npos) {
    line_scanned_ = input.size();
    *too_long = input.size() - line_start > limits_.max_inline_len;
    return false;
  }
  // Stay on the '\r' so that the next call finds it again if its successor is missing.
  line_scanned_ = pos;
  *cr = pos;
  return pos + 1 < input.size();
}

ParseStatus RespParser::ParseMultibulk(std::string_view input, size_t* consumed,
                                       std::vector<std::string_view>* args) {
  size_t cr = 0;
  bool too_long = false;
  if (expected_args_ < 0) {
    if (!FindHeaderEnd(input, 0, &cr, &too_long)) {
      return too_long ? Fail(std::string(errors::kTooBigMbulkCount)) : ParseStatus::kNeedMore;
    }
    int64_t count = 0;
    if (!ParseInt64(input.substr(1, cr - 1), &count) ||
        (count > 0 && static_cast<uint64_t>(count) > limits_.max_multibulk_len)) {
      return Fail(std::string(errors::kInvalidMultibulkLength));
    }
    if (limits_.unauthenticated && count > ParserLimits::kUnauthenticatedMaxArgs) {
      return Fail(std::string(errors::kUnauthenticatedMultibulkLength));
    }
    scan_pos_ = cr + 2;
    if (count <= 0) return Finish(input, consumed, args);
    expected_args_ = count;
    arg_spans_.reserve(std::min(static_cast<size_t>(count), kMaxArgReserve));
  }

  while (arg_spans_.size() < static_cast<size_t>(expected_args_)) {
    if (bulk_len_ < 0) {
      if (!FindHeaderEnd(input, scan_pos_, &cr, &too_long)) {
        return too_long ? Fail(std::string(errors::kTooBigBulkCount)) : ParseStatus::kNeedMore;
      }
      if (input[scan_pos_] != '$') {
        std::string message = "Protocol error: expected '$', got '";
        message.push_back(input[scan_pos_]);
        message.push_back('\'');
        return Fail(std::move(message));
      }
      int64_t len = 0;
      if (!ParseInt64(input.substr(scan_pos_ + 1, cr - scan_pos_ - 1), &len) || len < 0 ||
          static_cast<uint64_t>(len) > limits_.max_bulk_len) {
        return Fail(std::string(errors::kInvalidBulkLength));
      }
      if (limits_.unauthenticated && len > ParserLimits::kUnauthenticatedMaxBulk) {
        return Fail(std::string(errors::kUnauthenticatedBulkLength));
      }
      bulk_len_ = len;
      scan_pos_ = cr + 2;
    }
    size_t available = input.size() - scan_pos_;
    size_t needed = static_cast<size_t>(bulk_len_) + 2;  // payload and its CRLF
    if (available < needed) {
      bytes_hint_ = needed - available;
      return ParseStatus::kNeedMore;
    }
    arg_spans_.emplace_back(scan_pos_, static_cast<size_t>(bulk_len_));
    scan_pos_ += needed;
    bulk_len_ = -1;
  }
  return Finish(input, consumed, args);
}

ParseStatus RespParser::Finish(std::string_view input, size_t* consumed,
                               std::vector<std::string_view>* args) {
  args->reserve(arg_spans_.size());
  for (const auto& [offset, len] : arg_spans_) args->emplace_back(input.data() + offset, len);
  *consumed = scan_pos_;
  ResetCommand();
  return ParseStatus::kOk;
}

ParseStatus RespParser::ParseInline(std::string_view input, size_t* consumed,
                                    std::vector<std::string_view>* args) {
  size_t newline = Find(input, '\n', line_scanned_);
  if (newline == std::string_view::npos) {
    if (input.size() > limits_.max_inline_len) return Fail(std::string(errors::kTooBigInline));
    line_scanned_ = input.size();
    return ParseStatus::kNeedMore;
  }
  size_t end = newline;
  if (end > 0 && input[end - 1] == '\r') --end;
  if (!SplitArgs(input.substr(0, end), &unescaped_, args)) {
    args->clear();
    return Fail(std::string(errors::kUnbalancedQuotes));
  }
  *consumed = newline + 1;
  ResetCommand();
  return ParseStatus::kOk;
}

}  // namespace lapse::protocol
