#include "protocol/reply_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

namespace lapse::protocol {
namespace {

using namespace std::string_literals;

// Renders one call sequence in the given version.
std::string Render(RespVersion version, const std::function<void(ReplyWriter&)>& write) {
  std::string out;
  ReplyWriter writer(&out, version);
  write(writer);
  return out;
}

// Checks the bytes of one call sequence in RESP2 and RESP3.
void ExpectBytes(const std::function<void(ReplyWriter&)>& write, const std::string& resp2,
                 const std::string& resp3) {
  EXPECT_EQ(Render(RespVersion::kResp2, write), resp2);
  EXPECT_EQ(Render(RespVersion::kResp3, write), resp3);
}

void ExpectSame(const std::function<void(ReplyWriter&)>& write, const std::string& bytes) {
  ExpectBytes(write, bytes, bytes);
}

TEST(ReplyWriterTest, Ok) { ExpectSame([](ReplyWriter& w) { w.Ok(); }, "+OK\r\n"); }

TEST(ReplyWriterTest, SimpleString) {
  ExpectSame([](ReplyWriter& w) { w.SimpleString("PONG"); }, "+PONG\r\n");
  ExpectSame([](ReplyWriter& w) { w.SimpleString(""); }, "+\r\n");
  ExpectSame([](ReplyWriter& w) { w.SimpleString("a\r\nb"); }, "+a  b\r\n");
}

TEST(ReplyWriterTest, Error) {
  ExpectSame([](ReplyWriter& w) { w.Error("ERR syntax error"); }, "-ERR syntax error\r\n");
  ExpectSame([](ReplyWriter& w) { w.Error("ERR Protocol error: expected '$', got '\r'"); },
             "-ERR Protocol error: expected '$', got ' '\r\n");
}

TEST(ReplyWriterTest, Integer) {
  ExpectSame([](ReplyWriter& w) { w.Integer(0); }, ":0\r\n");
  ExpectSame([](ReplyWriter& w) { w.Integer(-1); }, ":-1\r\n");
  ExpectSame([](ReplyWriter& w) { w.Integer(1234567); }, ":1234567\r\n");
  ExpectSame([](ReplyWriter& w) { w.Integer(std::numeric_limits<int64_t>::max()); },
             ":9223372036854775807\r\n");
  ExpectSame([](ReplyWriter& w) { w.Integer(std::numeric_limits<int64_t>::min()); },
             ":-9223372036854775808\r\n");
}

TEST(ReplyWriterTest, Bulk) {
  ExpectSame([](ReplyWriter& w) { w.Bulk("hello"); }, "$5\r\nhello\r\n");
  ExpectSame([](ReplyWriter& w) { w.Bulk(""); }, "$0\r\n\r\n");
  ExpectSame([](ReplyWriter& w) { w.Bulk("a\0\r\nb"s); }, "$5\r\na\0\r\nb\r\n"s);
  std::string big(100000, 'x');
  ExpectSame([&](ReplyWriter& w) { w.Bulk(big); }, "$100000\r\n" + big + "\r\n");
}

TEST(ReplyWriterTest, Nulls) {
  ExpectBytes([](ReplyWriter& w) { w.Null(); }, "$-1\r\n", "_\r\n");
  ExpectBytes([](ReplyWriter& w) { w.NullArray(); }, "*-1\r\n", "_\r\n");
}

TEST(ReplyWriterTest, AggregateHeaders) {
  ExpectSame([](ReplyWriter& w) { w.ArrayHeader(0); }, "*0\r\n");
  ExpectSame([](ReplyWriter& w) { w.ArrayHeader(3); }, "*3\r\n");
  ExpectBytes([](ReplyWriter& w) { w.MapHeader(2); }, "*4\r\n", "%2\r\n");
  ExpectBytes([](ReplyWriter& w) { w.MapHeader(0); }, "*0\r\n", "%0\r\n");
  ExpectBytes([](ReplyWriter& w) { w.SetHeader(5); }, "*5\r\n", "~5\r\n");
}

TEST(ReplyWriterTest, Double) {
  ExpectBytes([](ReplyWriter& w) { w.Double(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(0); }, "$1\r\n0\r\n", ",0\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(-2); }, "$2\r\n-2\r\n", ",-2\r\n");
  // %.17g shows the binary value, as Redis 7.0 does.
  ExpectBytes([](ReplyWriter& w) { w.Double(0.1); }, "$19\r\n0.10000000000000001\r\n",
              ",0.10000000000000001\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(1e100); }, "$6\r\n1e+100\r\n", ",1e+100\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(-1.2345678901234567e-300); },
              "$24\r\n-1.2345678901234568e-300\r\n", ",-1.2345678901234568e-300\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(HUGE_VAL); }, "$3\r\ninf\r\n", ",inf\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(-HUGE_VAL); }, "$4\r\n-inf\r\n", ",-inf\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(std::nan("")); }, "$3\r\nnan\r\n", ",nan\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(-std::nan("")); }, "$4\r\n-nan\r\n", ",-nan\r\n");
}

// A verbatim string's format is three letters, cut or padded with spaces; a big number is
// sent as digits in RESP3 and as a bulk string in RESP2.
TEST(ReplyWriterTest, VerbatimFormatsAndBigNumbers) {
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("x", "markdown"); }, "$1\r\nx\r\n", "=5\r\nmar:x\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("x", "t"); }, "$1\r\nx\r\n", "=5\r\nt  :x\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("hi"); }, "$2\r\nhi\r\n", "=6\r\ntxt:hi\r\n");
  ExpectBytes([](ReplyWriter& w) { w.BigNumber("123"); }, "$3\r\n123\r\n", "(123\r\n");
}

// A double in a form the caller chose (GEOPOS's 17 decimals) is sent as it is.
TEST(ReplyWriterTest, DoubleText) {
  ExpectBytes([](ReplyWriter& w) { w.DoubleText("13.36138933897018433"); }, "$20\r\n13.36138933897018433\r\n",
              ",13.36138933897018433\r\n");
}

TEST(ReplyWriterTest, Bool) {
  ExpectBytes([](ReplyWriter& w) { w.Bool(true); }, ":1\r\n", "#t\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Bool(false); }, ":0\r\n", "#f\r\n");
}

TEST(ReplyWriterTest, Verbatim) {
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("a\r\nb"); }, "$4\r\na\r\nb\r\n",
              "=8\r\ntxt:a\r\nb\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Verbatim(""); }, "$0\r\n\r\n", "=4\r\ntxt:\r\n");
}

TEST(ReplyWriterTest, SameCallsRenderInBothVersions) {
  auto write = [](ReplyWriter& w) {
    w.MapHeader(2);
    w.Bulk("score");
    w.Double(2.5);
    w.Bulk("found");
    w.Bool(true);
    w.ArrayHeader(2);
    w.Null();
    w.Integer(7);
  };
  ExpectBytes(write, "*4\r\n$5\r\nscore\r\n$3\r\n2.5\r\n$5\r\nfound\r\n:1\r\n*2\r\n$-1\r\n:7\r\n",
              "%2\r\n$5\r\nscore\r\n,2.5\r\n$5\r\nfound\r\n#t\r\n*2\r\n_\r\n:7\r\n");
}

TEST(ReplyWriterTest, AppendsAndSwitches) {
  std::string first = "existing";
  std::string second;
  ReplyWriter writer(&first);
  EXPECT_EQ(writer.version(), RespVersion::kResp2);
  EXPECT_EQ(writer.buffer(), &first);
  writer.Integer(1);
  writer.set_version(RespVersion::kResp3);
  writer.Null();
  writer.set_buffer(&second);
  writer.Bool(false);
  EXPECT_EQ(first, "existing:1\r\n_\r\n");
  EXPECT_EQ(second, "#f\r\n");
}

}  // namespace
}  // namespace lapse::protocol
