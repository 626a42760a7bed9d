// File: protocol/reply_reader.h
//
// Incremental reader for server replies, RESP2 and RESP3: the client-side mirror of
// resp_parser.h, used by the load generator (bench/) and by anything else that talks to a
// Redis-protocol server. It knows the wire format only, nothing of commands or the engine.
//
// Reading is split in two, because a load generator needs the first on every reply and the
// second almost never:
//  - ReplyReader::Next frames one whole reply (nested aggregates included) and reports its
//    top-level type, without allocating and without copying: it walks headers, skips bulk
//    payloads by length, and remembers where it stopped inside an incomplete reply, so a
//    large reply arriving in many reads is scanned once. Offsets are relative to the start
//    of the current reply, so the caller may compact its buffer between calls.
//  - DecodeReply turns the bytes of one framed reply into a Reply tree, for callers that
//    want the values (tests, INFO readers).
//
// Supported types: + - : $ * (RESP2) and _ , # ( = ! % ~ > | (RESP3). An attribute (`|n`)
// is framed together with the reply it annotates. Streamed strings and aggregates (`$?`,
// `*?`) are rejected as a protocol error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::protocol {

enum class ReplyType {
  kSimpleString,  // +
  kError,         // -
  kInteger,       // :
  kBulk,          // $
  kArray,         // *
  kNull,          // _ , and RESP2's $-1 / *-1
  kDouble,        // ,
  kBoolean,       // #
  kBigNumber,     // (
  kVerbatim,      // =
  kBulkError,     // !
  kMap,           // %
  kSet,           // ~
  kPush,          // >  (out-of-band: not the answer to a request)
};

enum class ReplyStatus {
  kOk,        // one reply framed; *consumed bytes belong to it
  kNeedMore,  // input holds only the beginning of a reply; call again with more bytes
  kError,     // not RESP; error() says why; the connection cannot be resynchronised
};

struct ReplyLimits {
  int64_t max_bulk_len = 512ll * 1024 * 1024;
  int64_t max_aggregate_len = 1ll << 32;
  size_t max_depth = 64;       // nested aggregates
  size_t max_line_len = 64 * 1024;
};

class ReplyReader {
 public:
  explicit ReplyReader(ReplyLimits limits = {}) : limits_(limits) {}

  // Frames one reply from `input`, which must start at the first byte not yet consumed.
  // Between a kNeedMore and the next call the caller may append bytes and move the buffer,
  // but must pass the same unconsumed prefix again. On kOk, *consumed is the reply's length
  // and *type its top-level type (the annotated reply's type after an attribute); on
  // kNeedMore *consumed is 0. After kError the reader must be Reset() before reuse.
  ReplyStatus Next(std::string_view input, size_t* consumed, ReplyType* type);

  const std::string& error() const { return error_; }
  void Reset();

 private:
  // What Next is in the middle of.
  enum class Phase { kHeader, kPayload };
  struct OpenAggregate {
    int64_t missing;  // elements still to come
    bool attribute;   // an attribute: closing it does not complete an element of its parent
  };

  // Reads the header at scan_pos_. *element_done is set when the header was a whole
  // element (scalar, null, empty aggregate).
  ReplyStatus ReadHeader(std::string_view input, bool* element_done);
  ReplyStatus Fail(std::string message);
  // Marks one element of the innermost open aggregate as complete, closing every aggregate
  // that this completes. Returns true when the whole reply is complete.
  bool CompleteElement();
  void ResetReply();

  ReplyLimits limits_;
  std::string error_;
  Phase phase_ = Phase::kHeader;
  size_t scan_pos_ = 0;      // first byte of the next header, or of the payload being skipped
  size_t line_scanned_ = 0;  // the search for the current header's '\n' resumes here
  size_t payload_end_ = 0;   // in kPayload: where the payload and its CRLF end
  bool have_top_ = false;    // the top-level type is known (an attribute does not set it)
  ReplyType top_ = ReplyType::kNull;
  std::vector<OpenAggregate> open_;  // outermost first
};

// A decoded reply. Strings are copied out of the wire buffer.
struct Reply {
  ReplyType type = ReplyType::kNull;
  std::string text;     // simple string, error, bulk, verbatim (format stripped), double, big number
  int64_t integer = 0;  // integer; boolean as 0 / 1
  std::vector<Reply> elements;  // array, set, push; a map as key, value, key, value, ...

  bool operator==(const Reply&) const = default;
};

// Decodes the bytes of exactly one reply as framed by ReplyReader::Next (behaviour on other
// input is unspecified but memory-safe: missing parts decode as empty). Attributes are
// dropped; the annotated reply is returned.
Reply DecodeReply(std::string_view framed);

}  // namespace lapse::protocol
