#include "protocol/resp_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/errors.h"

namespace lapse::protocol {
namespace {

using namespace std::string_literals;
using Command = std::vector<std::string>;

struct Outcome {
  std::vector<Command> commands;
  ParseStatus final_status = ParseStatus::kOk;  // kOk: all input consumed
  std::string error;

  bool operator==(const Outcome&) const = default;
};

void PrintTo(const Outcome& o, std::ostream* os) {
  *os << "{status=" << static_cast<int>(o.final_status) << " error=\"" << o.error << "\" commands=[";
  for (const auto& c : o.commands) {
    *os << "[";
    for (const auto& a : c) *os << testing::PrintToString(a) << " ";
    *os << "]";
  }
  *os << "]}";
}

// Feeds `wire` to a fresh parser `chunk` bytes at a time, the way a connection would: it parses
// the unconsumed prefix it holds, and on kNeedMore appends the next fragment and calls again.
// With `compact`, every call sees the unconsumed bytes in a freshly allocated buffer and the old
// one is overwritten, so a parser that kept pointers instead of offsets reads garbage.
Outcome Replay(std::string_view wire, size_t chunk, bool compact, ParserLimits limits = {}) {
  RespParser parser(limits);
  Outcome outcome;
  std::string buffer;
  size_t start = 0;  // without compaction: unconsumed bytes are wire[start, fed)
  size_t fed = 0;
  std::vector<std::string_view> args;
  while (true) {
    std::string_view input =
        compact ? std::string_view(buffer) : wire.substr(start, fed - start);
    size_t consumed = 123;
    ParseStatus status = input.empty() ? ParseStatus::kNeedMore
                                       : parser.Parse(input, &consumed, &args);
    if (status == ParseStatus::kOk) {
      EXPECT_GT(consumed, 0u);
      EXPECT_LE(consumed, input.size());
      outcome.commands.emplace_back(args.begin(), args.end());
      if (compact) {
        buffer.erase(0, consumed);
      } else {
        start += consumed;
      }
      continue;
    }
    if (status == ParseStatus::kError) {
      EXPECT_TRUE(args.empty());
      outcome.final_status = status;
      outcome.error = parser.error();
      return outcome;
    }
    if (!input.empty()) {
      EXPECT_EQ(consumed, 0u);
    }
    if (fed == wire.size()) {
      outcome.final_status = input.empty() ? ParseStatus::kOk : ParseStatus::kNeedMore;
      return outcome;
    }
    size_t n = std::min(chunk, wire.size() - fed);
    if (compact) {
      std::string moved;
      moved.reserve(buffer.size() + n + 16);
      moved.append(buffer);
      buffer.assign(buffer.size(), '#');
      buffer.swap(moved);
      buffer.append(wire.substr(fed, n));
    }
    fed += n;
  }
}

// Replays `wire` whole and in 1-, 2-, 5- and 10-byte fragments, with and without compaction,
// and checks that every replay agrees with `expected`.
void ExpectOutcome(std::string_view wire, const Outcome& expected, ParserLimits limits = {}) {
  for (size_t chunk : {wire.size() + 1, size_t{1}, size_t{2}, size_t{5}, size_t{10}}) {
    for (bool compact : {false, true}) {
      SCOPED_TRACE("chunk=" + std::to_string(chunk) + " compact=" + std::to_string(compact));
      EXPECT_EQ(Replay(wire, chunk, compact, limits), expected);
    }
  }
}

void ExpectCommands(std::string_view wire, std::vector<Command> commands, ParserLimits limits = {}) {
  ExpectOutcome(wire, Outcome{std::move(commands), ParseStatus::kOk, ""}, limits);
}

void ExpectError(std::string_view wire, std::string_view error, ParserLimits limits = {},
                 std::vector<Command> before = {}) {
  ExpectOutcome(wire, Outcome{std::move(before), ParseStatus::kError, std::string(error)}, limits);
}

void ExpectIncomplete(std::string_view wire, std::vector<Command> before = {}) {
  ExpectOutcome(wire, Outcome{std::move(before), ParseStatus::kNeedMore, ""});
}

ParserLimits SmallLimits() {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  limits.max_multibulk_len = 3;
  limits.max_inline_len = 8;
  return limits;
}

// --- Multibulk -------------------------------------------------------------------------------

TEST(RespParserTest, SingleMultibulk) {
  ExpectCommands("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", {{"GET", "key"}});
}

TEST(RespParserTest, PipelinedCommandsInOneBuffer) {
  ExpectCommands(
      "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\nPING\r\n"
      "*2\r\n$3\r\nGET\r\n$1\r\nk\r\nECHO hi\n",
      {{"PING"}, {"SET", "k", "value"}, {"PING"}, {"GET", "k"}, {"ECHO", "hi"}});
}

TEST(RespParserTest, BinaryBulkWithNulAndCrlfInside) {
  std::string payload = "a\0\r\nb\r\n\0"s;
  std::string wire = "*2\r\n$3\r\nSET\r\n$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
  ExpectCommands(wire, {{"SET", payload}});
}

TEST(RespParserTest, EmptyBulk) {
  ExpectCommands("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$0\r\n\r\n", {{"SET", "", ""}});
}

TEST(RespParserTest, NonPositiveCountIsAnEmptyCommand) {
  ExpectCommands("*0\r\n*-1\r\n*-5\r\n*1\r\n$1\r\nx\r\n", {{}, {}, {}, {"x"}});
}

TEST(RespParserTest, IncompleteCommandNeedsMore) {
  ExpectIncomplete("*");
  ExpectIncomplete("*2");
  ExpectIncomplete("*2\r");
  ExpectIncomplete("*2\r\n$3\r\nGET\r\n");
  ExpectIncomplete("*2\r\n$3\r\nGET\r\n$3\r\nke");
  ExpectIncomplete("*2\r\n$3\r\nGET\r\n$3\r\nkey\r");
  ExpectIncomplete("*1\r\n$1\r\na\r\n*1\r\n$", {{"a"}});
}

TEST(RespParserTest, ArgumentsAreViewsIntoInput) {
  RespParser parser;
  std::string wire = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nPING\r\n";
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse(wire, &consumed, &args), ParseStatus::kOk);
  EXPECT_EQ(consumed, wire.size() - 6);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].data(), wire.data() + 8);
  EXPECT_EQ(args[1].data(), wire.data() + 17);
  ASSERT_EQ(parser.Parse(std::string_view(wire).substr(consumed), &consumed, &args),
            ParseStatus::kOk);
  EXPECT_EQ(consumed, 6u);
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].data(), wire.data() + wire.size() - 6);
}

// Redis finds a header line by its '\r' and skips the next byte unchecked, and skips the two
// bytes after a bulk payload the same way. Matching that keeps byte-for-byte compatibility.
TEST(RespParserTest, TerminatorBytesAreSkippedUncheckedLikeRedis) {
  ExpectCommands("*1\rX$1\rYa\r\n", {{"a"}});
  ExpectCommands("*1\r\n$1\r\naXY*1\r\n$1\r\nb\r\n", {{"a"}, {"b"}});
}

TEST(RespParserTest, LargeBulkParsedIncrementally) {
  const size_t kSize = 1 << 20;
  std::string payload(kSize, 'v');
  payload[12345] = '\r';
  std::string wire = "*2\r\n$3\r\nSET\r\n$" + std::to_string(kSize) + "\r\n" + payload + "\r\n";
  const size_t header = wire.size() - kSize - 2;

  RespParser parser;
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse(std::string_view(wire).substr(0, header + 10), &consumed, &args),
            ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), kSize + 2 - 10);
  // 64 KB reads, compacting into a fresh buffer each time.
  std::string buffer(wire, 0, header + 10);
  for (size_t fed = buffer.size(); fed < wire.size();) {
    size_t n = std::min<size_t>(64 * 1024, wire.size() - fed);
    std::string next;
    next.reserve(buffer.size() + n);
    next.append(buffer).append(wire, fed, n);
    buffer.swap(next);
    fed += n;
    ParseStatus status = parser.Parse(buffer, &consumed, &args);
    if (fed < wire.size()) {
      ASSERT_EQ(status, ParseStatus::kNeedMore);
      EXPECT_EQ(parser.bytes_hint(), wire.size() - fed);
    } else {
      ASSERT_EQ(status, ParseStatus::kOk);
      EXPECT_EQ(parser.bytes_hint(), 0u);
    }
  }
  EXPECT_EQ(consumed, wire.size());
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1], payload);
}

// A parser that re-scanned the received part of a bulk on every call would do 32k scans of
// 16 MB on average here and blow the test timeout; an incremental one does trivial work.
TEST(RespParserTest, LargeBulkIsNotRescanned) {
  const size_t kSize = 32u << 20;
  std::string wire = "*1\r\n$" + std::to_string(kSize) + "\r\n" + std::string(kSize, 'a') + "\r\n";
  RespParser parser;
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ParseStatus status = ParseStatus::kNeedMore;
  for (size_t fed = 1024; status == ParseStatus::kNeedMore; fed += 1024) {
    status = parser.Parse(std::string_view(wire).substr(0, std::min(fed, wire.size())), &consumed,
                          &args);
  }
  ASSERT_EQ(status, ParseStatus::kOk);
  EXPECT_EQ(consumed, wire.size());
  EXPECT_EQ(args.at(0).size(), kSize);
}

// --- Inline ----------------------------------------------------------------------------------

TEST(RespParserTest, InlineCommands) {
  ExpectCommands("PING\r\n", {{"PING"}});
  ExpectCommands("SET k v\n", {{"SET", "k", "v"}});
  ExpectCommands("  set \t a   b  \r\n", {{"set", "a", "b"}});
  ExpectCommands("\vGET\fk\n", {{"GET\fk"}});  // \v and \f separate nothing inside an argument
  ExpectCommands("a\rb\r\n", {{"a", "b"}});
}

TEST(RespParserTest, BlankInlineLineIsAnEmptyCommand) {
  ExpectCommands("\r\n\n  \r\nPING\n", {{}, {}, {}, {"PING"}});
}

TEST(RespParserTest, InlineQuotesAndEscapes) {
  ExpectCommands("SET \"hello world\" 'it\\'s'\r\n", {{"SET", "hello world", "it's"}});
  ExpectCommands("ECHO \"\\x41\\x4a\\n\\r\\t\\b\\a\\\\\\\"\\z\"\n",
                 {{"ECHO", "AJ\n\r\t\b\a\\\"z"}});
  ExpectCommands("ECHO \"\\x4g\" \"\\x00\"\n", {{"ECHO", "x4g", "\0"s}});
  ExpectCommands("ECHO 'a\\nb' 'x\\\\y'\n", {{"ECHO", "a\\nb", "x\\\\y"}});
  ExpectCommands("SET k \"\" ''\n", {{"SET", "k", "", ""}});
  ExpectCommands("a\"b c\"\t'd'\n", {{"ab c", "d"}});
}

TEST(RespParserTest, InlineStopsAtNulLikeSdssplitargs) {
  ExpectCommands("GET a\0b c\r\nPING\n"s, {{"GET", "a"}, {"PING"}});
}

TEST(RespParserTest, InlineArgumentsStayValidUntilNextParse) {
  RespParser parser;
  std::string wire = "SET \"a b\" plain 'c d'\r\n";
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse(wire, &consumed, &args), ParseStatus::kOk);
  EXPECT_EQ(consumed, wire.size());
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0].data(), wire.data());
  EXPECT_EQ(args[2].data(), wire.data() + 10);
  EXPECT_EQ(args[1], "a b");
  EXPECT_EQ(args[3], "c d");
}

// --- Errors ----------------------------------------------------------------------------------

TEST(RespParserTest, InvalidMultibulkLength) {
  for (const char* wire : {"*abc\r\n", "*\r\n", "*01\r\n", "*-0\r\n", "*+1\r\n", "* 1\r\n",
                           "*1 \r\n", "*99999999999999999999\r\n"}) {
    SCOPED_TRACE(wire);
    ExpectError(wire, errors::kInvalidMultibulkLength);
  }
  ExpectError("*1\0\r\n"s, errors::kInvalidMultibulkLength);
  ExpectError("*1\r\n$1\r\na\r\n*1x\r\n", errors::kInvalidMultibulkLength, {}, {{"a"}});
  ExpectError("*4\r\n", errors::kInvalidMultibulkLength, SmallLimits());
  ExpectError("*1048577\r\n", errors::kInvalidMultibulkLength);
}

TEST(RespParserTest, MultibulkCountAtLimitIsAccepted) {
  ExpectCommands("*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", {{"a", "b", "c"}}, SmallLimits());
}

// Before AUTH, Redis 7.0 allows at most 10 arguments of at most 16 KiB.
TEST(RespParserTest, UnauthenticatedLimits) {
  ParserLimits before_auth;
  before_auth.unauthenticated = true;
  ExpectError("*11\r\n", errors::kUnauthenticatedMultibulkLength, before_auth);
  ExpectError("*2\r\n$4\r\nAUTH\r\n$16385\r\n", errors::kUnauthenticatedBulkLength, before_auth, {});
  std::string big_arg = "*2\r\n$4\r\nAUTH\r\n$16384\r\n" + std::string(16384, 'p') + "\r\n";
  ExpectCommands(big_arg, {{"AUTH", std::string(16384, 'p')}}, before_auth);
  ExpectCommands("*10\r\n" + std::string() + [] {
    std::string s;
    for (int i = 0; i < 10; ++i) s += "$1\r\nx\r\n";
    return s;
  }(), {Command(10, "x")}, before_auth);
  // The general limits still come first.
  ExpectError("*x\r\n", errors::kInvalidMultibulkLength, before_auth);
}

TEST(RespParserTest, ExpectedDollar) {
  ExpectError("*1\r\nX\r\n", "Protocol error: expected '$', got 'X'");
  ExpectError("*2\r\n$1\r\na\r\n:1\r\n", "Protocol error: expected '$', got ':'");
  ExpectError("*1\r\n\r\n", "Protocol error: expected '$', got '\r'");
  ExpectError("*1\r\n\0\r\n"s, "Protocol error: expected '$', got '\0'"s);
  ExpectIncomplete("*1\r\nX");  // Redis waits for the line before judging it
}

TEST(RespParserTest, InvalidBulkLength) {
  for (const char* wire : {"*1\r\n$-1\r\n", "*1\r\n$abc\r\n", "*1\r\n$\r\n", "*1\r\n$01\r\n",
                           "*1\r\n$+1\r\n", "*1\r\n$-0\r\n", "*1\r\n$1 \r\n",
                           "*1\r\n$99999999999999999999\r\n", "*1\r\n$536870913\r\n"}) {
    SCOPED_TRACE(wire);
    ExpectError(wire, errors::kInvalidBulkLength);
  }
  ExpectError("*1\r\n$11\r\n", errors::kInvalidBulkLength, SmallLimits());
  ExpectCommands("*1\r\n$10\r\n0123456789\r\n", {{"0123456789"}}, SmallLimits());
}

TEST(RespParserTest, TooBigCountLines) {
  // max_inline_len = 8: nine bytes of an unterminated line are too many, eight are not.
  ExpectError("*12345678", errors::kTooBigMbulkCount, SmallLimits());
  ExpectOutcome("*1234567", {{}, ParseStatus::kNeedMore, ""}, SmallLimits());
  ExpectError("*1\r\n$12345678", errors::kTooBigBulkCount, SmallLimits());
  ExpectOutcome("*1\r\n$1234567", {{}, ParseStatus::kNeedMore, ""}, SmallLimits());
  // The bulk header is measured from its own start, not from the command's.
  ExpectOutcome("*2\r\n$1\r\na\r\n$1234567", {{}, ParseStatus::kNeedMore, ""}, SmallLimits());
}

TEST(RespParserTest, TooBigInline) {
  ExpectError("GET abcde", errors::kTooBigInline, SmallLimits());
  ExpectOutcome("GET abcd", {{}, ParseStatus::kNeedMore, ""}, SmallLimits());
  ExpectError("GET a\nGET abcde", errors::kTooBigInline, SmallLimits(), {{"GET", "a"}});
}

// Like Redis, the inline limit applies to what has arrived without a newline, so a long line
// delivered in one read is accepted.
TEST(RespParserTest, LongInlineLineInOneReadIsAccepted) {
  RespParser parser(SmallLimits());
  size_t consumed = 0;
  std::vector<std::string_view> args;
  std::string wire = "GET abcdefghij\r\n";
  ASSERT_EQ(parser.Parse(wire, &consumed, &args), ParseStatus::kOk);
  EXPECT_EQ(args, (std::vector<std::string_view>{"GET", "abcdefghij"}));
}

TEST(RespParserTest, UnbalancedQuotes) {
  for (const char* wire : {"GET \"foo\n", "GET 'foo\n", "GET \"foo\"bar\n", "GET 'foo'bar\n",
                           "GET \"foo\\\"\n", "GET \"foo\\\n", "\"\n"}) {
    SCOPED_TRACE(wire);
    ExpectError(wire, errors::kUnbalancedQuotes);
  }
}

TEST(RespParserTest, ErrorIsStickyUntilReset) {
  RespParser parser;
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse("*x\r\n", &consumed, &args), ParseStatus::kError);
  EXPECT_EQ(parser.error(), errors::kInvalidMultibulkLength);
  EXPECT_EQ(parser.Parse("PING\r\n", &consumed, &args), ParseStatus::kError);
  parser.Reset();
  EXPECT_EQ(parser.error(), "");
  ASSERT_EQ(parser.Parse("PING\r\n", &consumed, &args), ParseStatus::kOk);
  EXPECT_EQ(consumed, 6u);
}

TEST(RespParserTest, ResetDropsPartialCommand) {
  RespParser parser;
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse("*2\r\n$3\r\nGET\r\n$5\r\nab", &consumed, &args), ParseStatus::kNeedMore);
  parser.Reset();
  ASSERT_EQ(parser.Parse("*1\r\n$1\r\nz\r\n", &consumed, &args), ParseStatus::kOk);
  EXPECT_EQ(args, (std::vector<std::string_view>{"z"}));
}

TEST(RespParserTest, SetLimits) {
  RespParser parser;
  parser.set_limits(SmallLimits());
  size_t consumed = 0;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse("*1\r\n$11\r\n", &consumed, &args), ParseStatus::kError);
  EXPECT_EQ(parser.error(), errors::kInvalidBulkLength);
}

}  // namespace
}  // namespace lapse::protocol
