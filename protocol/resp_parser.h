// File: protocol/resp_parser.h
//
// Incremental parser for client requests: RESP multibulk (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`)
// and inline commands (`GET k\r\n`, as typed into telnet, with sdssplitargs-style quoting).
//
// The parser never copies multibulk argument bytes: arguments are views into the caller's
// buffer (only inline arguments written with quotes are unescaped into parser storage).
// It remembers how far it got inside the current, incomplete command, so a 512 MB bulk
// arriving in 64 KB reads is scanned once, not re-parsed on every read. Offsets are kept
// relative to the start of the current command, so the caller may move the unconsumed
// tail of its buffer to the front (compaction) between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::protocol {

struct ParserLimits {
  uint64_t max_bulk_len = 512ull * 1024 * 1024;  // proto-max-bulk-len
  uint64_t max_multibulk_len = 1024 * 1024;      // items in one request
  uint64_t max_inline_len = 64 * 1024;           // one inline request or count line
  // A client that still has to authenticate gets Redis's tighter limits: at most
  // kUnauthenticatedMaxArgs arguments of at most kUnauthenticatedMaxBulk bytes each.
  bool unauthenticated = false;
  static constexpr int64_t kUnauthenticatedMaxArgs = 10;
  static constexpr int64_t kUnauthenticatedMaxBulk = 16 * 1024;
};

enum class ParseStatus {
  kOk,        // one command parsed; *consumed bytes of input belong to it
  kNeedMore,  // input holds only the beginning of a command; call again with more bytes
  kError,     // protocol violation; error() holds Redis's message; the connection must close
};

class RespParser {
 public:
  explicit RespParser(ParserLimits limits = {});

  // Parses one command from `input`, which must start at the first byte not yet consumed.
  // Between a kNeedMore and the next call the caller may append bytes and may move the
  // buffer, but must pass the same unconsumed prefix again.
  // On kOk, `args` holds the arguments as views into `input` and `*consumed` is the command's
  // length. An empty request (blank inline line, `*0`, `*-1`) yields kOk with no args.
  // Exception: an inline argument containing quotes is unescaped into storage owned by the
  // parser; that view stays valid until the next Parse() or Reset() call.
  // On kNeedMore `*consumed` is 0. After kError the parser must be Reset() before reuse.
  ParseStatus Parse(std::string_view input, size_t* consumed, std::vector<std::string_view>* args);

  // Redis's wording without the "-ERR " prefix, e.g. "Protocol error: invalid bulk length".
  const std::string& error() const { return error_; }

  // Bytes the current incomplete command still needs at least (0 if unknown); lets the
  // caller reserve buffer space once for a large bulk.
  size_t bytes_hint() const { return bytes_hint_; }

  void Reset();
  void set_limits(const ParserLimits& limits) { limits_ = limits; }

 private:
  ParseStatus ParseInline(std::string_view input, size_t* consumed, std::vector<std::string_view>* args);
  ParseStatus ParseMultibulk(std::string_view input, size_t* consumed, std::vector<std::string_view>* args);
  bool FindHeaderEnd(std::string_view input, size_t line_start, size_t* cr, bool* too_long);
  ParseStatus Finish(std::string_view input, size_t* consumed, std::vector<std::string_view>* args);
  ParseStatus Fail(std::string message);
  void ResetCommand();

  ParserLimits limits_;
  std::string error_;
  size_t bytes_hint_ = 0;
  // Progress inside the current command; offsets are relative to its start so that they
  // survive the caller compacting its buffer.
  int64_t expected_args_ = -1;  // multibulk count, -1 until the `*<n>` line is parsed
  int64_t bulk_len_ = -1;       // length of the bulk being read, -1 while reading its header
  size_t scan_pos_ = 0;         // first byte not yet parsed (next header or bulk payload)
  size_t line_scanned_ = 0;     // the search for the current line's terminator resumes here
  std::vector<std::pair<size_t, size_t>> arg_spans_;  // offset, length
  std::string unescaped_;  // backing store for quoted inline arguments
};

}  // namespace lapse::protocol
