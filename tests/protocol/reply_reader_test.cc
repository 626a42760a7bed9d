// Every case is replayed whole and in 1-, 2-, 5- and 10-byte fragments, with and without
// buffer compaction, as resp_parser_test.cc does for requests: an incremental reader that
// keeps a pointer instead of an offset, or re-reads a header it already passed, shows up here.
#include "protocol/reply_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"

namespace lapse::protocol {
namespace {

using namespace std::string_literals;

struct Framed {
  ReplyType type;
  std::string bytes;
  bool operator==(const Framed&) const = default;
};

void PrintTo(const Framed& f, std::ostream* os) {
  *os << "{type=" << static_cast<int>(f.type) << " bytes=" << testing::PrintToString(f.bytes) << "}";
}

struct Outcome {
  std::vector<Framed> replies;
  ReplyStatus final_status = ReplyStatus::kOk;  // kOk: all input consumed
  bool operator==(const Outcome&) const = default;
};

void PrintTo(const Outcome& o, std::ostream* os) {
  *os << "{status=" << static_cast<int>(o.final_status) << " replies=" << testing::PrintToString(o.replies) << "}";
}

// Feeds `wire` to a fresh reader `chunk` bytes at a time, the way a client connection would.
// With `compact`, every call sees the unconsumed bytes in a freshly allocated buffer and the
// old one is overwritten.
Outcome Replay(std::string_view wire, size_t chunk, bool compact) {
  ReplyReader reader;
  Outcome outcome;
  std::string buffer;
  size_t start = 0, fed = 0;
  while (true) {
    std::string_view input = compact ? std::string_view(buffer) : wire.substr(start, fed - start);
    size_t consumed = 99;
    ReplyType type{};
    ReplyStatus status = input.empty() ? ReplyStatus::kNeedMore : reader.Next(input, &consumed, &type);
    if (status == ReplyStatus::kOk) {
      EXPECT_GT(consumed, 0u);
      outcome.replies.push_back({type, std::string(input.substr(0, consumed))});
      if (compact) {
        buffer.erase(0, consumed);
      } else {
        start += consumed;
      }
      continue;
    }
    if (status == ReplyStatus::kError) {
      EXPECT_FALSE(reader.error().empty());
      outcome.final_status = status;
      return outcome;
    }
    if (!input.empty()) {
      EXPECT_EQ(consumed, 0u);
    }
    if (fed == wire.size()) {
      outcome.final_status = input.empty() ? ReplyStatus::kOk : ReplyStatus::kNeedMore;
      return outcome;
    }
    size_t n = std::min(chunk, wire.size() - fed);
    if (compact) {
      std::string moved = buffer;
      buffer.assign(buffer.size(), '#');
      buffer.swap(moved);
      buffer.append(wire.substr(fed, n));
    }
    fed += n;
  }
}

void ExpectOutcome(std::string_view wire, const Outcome& expected) {
  for (size_t chunk : {wire.size() + 1, size_t{1}, size_t{2}, size_t{5}, size_t{10}}) {
    for (bool compact : {false, true}) {
      SCOPED_TRACE("chunk=" + std::to_string(chunk) + " compact=" + std::to_string(compact));
      EXPECT_EQ(Replay(wire, chunk, compact), expected);
    }
  }
}

// `wire` is one reply of `type` followed by nothing.
void ExpectOne(const std::string& wire, ReplyType type) {
  ExpectOutcome(wire, Outcome{{{type, wire}}, ReplyStatus::kOk});
}

void ExpectError(const std::string& wire, std::vector<Framed> before = {}) {
  ExpectOutcome(wire, Outcome{std::move(before), ReplyStatus::kError});
}

TEST(ReplyReaderTest, Resp2Scalars) {
  ExpectOne("+OK\r\n", ReplyType::kSimpleString);
  ExpectOne("-ERR unknown command 'FOO'\r\n", ReplyType::kError);
  ExpectOne(":-42\r\n", ReplyType::kInteger);
  ExpectOne("$5\r\nhello\r\n", ReplyType::kBulk);
  ExpectOne("$0\r\n\r\n", ReplyType::kBulk);
  ExpectOne("$-1\r\n", ReplyType::kNull);
  ExpectOne("*-1\r\n", ReplyType::kNull);
}

TEST(ReplyReaderTest, BulkPayloadMayHoldCrlfAndMarkers) {
  ExpectOne("$12\r\n*1\r\n$1\r\nx\r\n:\r\n", ReplyType::kBulk);
}

TEST(ReplyReaderTest, NestedArrays) {
  ExpectOne("*0\r\n", ReplyType::kArray);
  ExpectOne("*2\r\n$1\r\na\r\n*2\r\n:1\r\n*0\r\n", ReplyType::kArray);
  ExpectOne("*3\r\n$-1\r\n*-1\r\n+x\r\n", ReplyType::kArray);
  // SCAN's reply shape.
  ExpectOne("*2\r\n$1\r\n0\r\n*2\r\n$3\r\nfoo\r\n$3\r\nbar\r\n", ReplyType::kArray);
}

TEST(ReplyReaderTest, Resp3Types) {
  ExpectOne("_\r\n", ReplyType::kNull);
  ExpectOne(",3.14\r\n", ReplyType::kDouble);
  ExpectOne(",inf\r\n", ReplyType::kDouble);
  ExpectOne("#t\r\n", ReplyType::kBoolean);
  ExpectOne("(3492890328409238509324850943850943825024385\r\n", ReplyType::kBigNumber);
  ExpectOne("=15\r\ntxt:Some string\r\n", ReplyType::kVerbatim);
  ExpectOne("!21\r\nSYNTAX invalid syntax\r\n", ReplyType::kBulkError);
  ExpectOne("%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n_\r\n", ReplyType::kMap);
  ExpectOne("~2\r\n+a\r\n+b\r\n", ReplyType::kSet);
  ExpectOne(">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", ReplyType::kPush);
  ExpectOne("%0\r\n", ReplyType::kMap);
}

TEST(ReplyReaderTest, AttributeIsFramedWithTheReplyItAnnotates) {
  ExpectOne("|1\r\n+ttl\r\n:3\r\n$2\r\nok\r\n", ReplyType::kBulk);
  ExpectOne("|0\r\n:7\r\n", ReplyType::kInteger);
  // Inside an aggregate an attribute does not count as one of its elements.
  ExpectOne("*2\r\n:1\r\n|1\r\n+k\r\n+v\r\n:2\r\n", ReplyType::kArray);
}

TEST(ReplyReaderTest, PipelinedRepliesComeOutOneByOne) {
  ExpectOutcome("+OK\r\n$1\r\nv\r\n:1\r\n*1\r\n$-1\r\n",
                Outcome{{{ReplyType::kSimpleString, "+OK\r\n"},
                         {ReplyType::kBulk, "$1\r\nv\r\n"},
                         {ReplyType::kInteger, ":1\r\n"},
                         {ReplyType::kArray, "*1\r\n$-1\r\n"}},
                        ReplyStatus::kOk});
}

TEST(ReplyReaderTest, IncompleteReplyWaits) {
  ExpectOutcome("$5\r\nhel", Outcome{{}, ReplyStatus::kNeedMore});
  ExpectOutcome("+OK\r\n*2\r\n:1\r\n", Outcome{{{ReplyType::kSimpleString, "+OK\r\n"}}, ReplyStatus::kNeedMore});
}

TEST(ReplyReaderTest, ProtocolViolationsAreErrors) {
  ExpectError("?what\r\n");
  ExpectError(":12x\r\n");
  ExpectError("$abc\r\n");
  ExpectError("$-2\r\n");
  ExpectError("*-2\r\n");
  ExpectError("$3\r\nabcXY");
  ExpectError("#x\r\n");
  ExpectError("_x\r\n");
  ExpectError("+OK\n");
  ExpectError("+OK\r\n$?\r\n", {{ReplyType::kSimpleString, "+OK\r\n"}});
}

TEST(ReplyReaderTest, LimitsAreEnforced) {
  ReplyLimits limits;
  limits.max_bulk_len = 4;
  limits.max_depth = 2;
  limits.max_line_len = 8;
  ReplyReader reader(limits);
  size_t consumed;
  ReplyType type;
  EXPECT_EQ(reader.Next("$5\r\nhello\r\n", &consumed, &type), ReplyStatus::kError);
  reader.Reset();
  EXPECT_EQ(reader.Next("*1\r\n*1\r\n*1\r\n:1\r\n", &consumed, &type), ReplyStatus::kError);
  reader.Reset();
  EXPECT_EQ(reader.Next("+123456789", &consumed, &type), ReplyStatus::kError);
  reader.Reset();
  EXPECT_EQ(reader.Next("*1\r\n*1\r\n:1\r\n", &consumed, &type), ReplyStatus::kOk);
  EXPECT_EQ(consumed, 12u);
}

TEST(ReplyReaderTest, ErrorIsStickyUntilReset) {
  ReplyReader reader;
  size_t consumed;
  ReplyType type;
  EXPECT_EQ(reader.Next("?\r\n", &consumed, &type), ReplyStatus::kError);
  EXPECT_EQ(reader.Next("+OK\r\n", &consumed, &type), ReplyStatus::kError);
  reader.Reset();
  EXPECT_EQ(reader.Next("+OK\r\n", &consumed, &type), ReplyStatus::kOk);
}

TEST(ReplyReaderTest, LargeBulkArrivingInPiecesIsFramed) {
  std::string payload(100000, 'x');
  ExpectOutcome("$100000\r\n" + payload + "\r\n:1\r\n",
                Outcome{{{ReplyType::kBulk, "$100000\r\n" + payload + "\r\n"}, {ReplyType::kInteger, ":1\r\n"}},
                        ReplyStatus::kOk});
}

Reply Str(ReplyType type, std::string text) {
  Reply r;
  r.type = type;
  r.text = std::move(text);
  return r;
}

Reply Int(int64_t v, ReplyType type = ReplyType::kInteger) {
  Reply r;
  r.type = type;
  r.integer = v;
  return r;
}

Reply Aggregate(ReplyType type, std::vector<Reply> elements) {
  Reply r;
  r.type = type;
  r.elements = std::move(elements);
  return r;
}

TEST(DecodeReplyTest, Scalars) {
  EXPECT_EQ(DecodeReply("+OK\r\n"), Str(ReplyType::kSimpleString, "OK"));
  EXPECT_EQ(DecodeReply("-ERR x\r\n"), Str(ReplyType::kError, "ERR x"));
  EXPECT_EQ(DecodeReply(":-7\r\n"), Int(-7));
  EXPECT_EQ(DecodeReply("$3\r\na\r\n\r\n"), Str(ReplyType::kBulk, "a\r\n"));
  EXPECT_EQ(DecodeReply("$-1\r\n"), Reply{});
  EXPECT_EQ(DecodeReply("_\r\n"), Reply{});
  EXPECT_EQ(DecodeReply("#t\r\n"), Int(1, ReplyType::kBoolean));
  EXPECT_EQ(DecodeReply(",1.5\r\n"), Str(ReplyType::kDouble, "1.5"));
  EXPECT_EQ(DecodeReply("=9\r\ntxt:hello\r\n"), Str(ReplyType::kVerbatim, "hello"));
}

TEST(DecodeReplyTest, Aggregates) {
  EXPECT_EQ(DecodeReply("*2\r\n$1\r\n0\r\n*1\r\n:5\r\n"),
            Aggregate(ReplyType::kArray, {Str(ReplyType::kBulk, "0"), Aggregate(ReplyType::kArray, {Int(5)})}));
  EXPECT_EQ(DecodeReply("%1\r\n+k\r\n:1\r\n"),
            Aggregate(ReplyType::kMap, {Str(ReplyType::kSimpleString, "k"), Int(1)}));
  EXPECT_EQ(DecodeReply("|1\r\n+a\r\n+b\r\n:9\r\n"), Int(9));
}

TEST(DecodeReplyTest, TruncatedInputIsSafe) {
  EXPECT_EQ(DecodeReply("*3\r\n:1\r\n").type, ReplyType::kArray);
  EXPECT_EQ(DecodeReply("$10\r\nab").text, "ab");
  EXPECT_EQ(DecodeReply("*1000000000\r\n").elements.size(), 0u);
}

// What lapse's own reply writer produces, the reader frames and decodes back, in both versions.
TEST(ReplyReaderTest, ReadsWhatTheReplyWriterWrites) {
  for (RespVersion version : {RespVersion::kResp2, RespVersion::kResp3}) {
    std::string wire;
    ReplyWriter writer(&wire, version);
    writer.MapHeader(2);
    writer.Bulk("a");
    writer.Integer(1);
    writer.Bulk("b");
    writer.Double(2.5);
    writer.Null();
    writer.Bool(true);
    ReplyReader reader;
    std::string_view rest = wire;
    std::vector<Reply> decoded;
    size_t consumed;
    ReplyType type;
    while (reader.Next(rest, &consumed, &type) == ReplyStatus::kOk) {
      decoded.push_back(DecodeReply(rest.substr(0, consumed)));
      rest.remove_prefix(consumed);
    }
    EXPECT_TRUE(rest.empty());
    ASSERT_EQ(decoded.size(), 3u);
    EXPECT_EQ(decoded[0].elements.size(), 4u);
    EXPECT_EQ(decoded[0].elements[3].text, "2.5");
    EXPECT_EQ(decoded[1].type, ReplyType::kNull);
    EXPECT_EQ(decoded[2].integer, 1);
  }
}

}  // namespace
}  // namespace lapse::protocol
