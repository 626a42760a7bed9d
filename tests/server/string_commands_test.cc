#include <gtest/gtest.h>

#include "tests/server/test_server.h"

namespace lapse::server::testing {
namespace {

class StringCommandsTest : public ::testing::TestWithParam<int> {
 protected:
  StringCommandsTest() : t_(GetParam()) {}
  std::string Run(std::vector<std::string> cmd) { return t_.Run(std::move(cmd)); }
  TestServer t_;
};

TEST_P(StringCommandsTest, GetSetBasics) {
  EXPECT_EQ(Run({"GET", "k"}), kNil);
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"get", "k"}), Bulk("v"));
  std::string binary("a\0b\r\nc", 6);
  EXPECT_EQ(Run({"SET", binary, binary}), kOk);
  EXPECT_EQ(Run({"GET", binary}), Bulk(binary));
  EXPECT_EQ(Run({"SET", "empty", ""}), kOk);
  EXPECT_EQ(Run({"GET", "empty"}), Bulk(""));
}

TEST_P(StringCommandsTest, SetConditionsAndGet) {
  EXPECT_EQ(Run({"SET", "k", "1", "XX"}), kNil);
  EXPECT_EQ(Run({"GET", "k"}), kNil);
  EXPECT_EQ(Run({"SET", "k", "1", "NX"}), kOk);
  EXPECT_EQ(Run({"SET", "k", "2", "NX"}), kNil);
  EXPECT_EQ(Run({"SET", "k", "3", "XX", "GET"}), Bulk("1"));
  EXPECT_EQ(Run({"SET", "k", "4", "NX", "GET"}), Bulk("3"));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("3"));
  EXPECT_EQ(Run({"SET", "new", "x", "GET"}), kNil);
  EXPECT_EQ(Run({"GET", "new"}), Bulk("x"));
}

TEST_P(StringCommandsTest, SetExpiryOptions) {
  int64_t now = t_.clock().NowMs();
  EXPECT_EQ(Run({"SET", "a", "v", "EX", "10"}), kOk);
  EXPECT_EQ(Run({"PTTL", "a"}), Int(10000));
  EXPECT_EQ(Run({"SET", "b", "v", "PX", "1500"}), kOk);
  EXPECT_EQ(Run({"SET", "c", "v", "EXAT", std::to_string(now / 1000 + 100)}), kOk);
  EXPECT_EQ(Run({"EXPIRETIME", "c"}), Int(now / 1000 + 100));
  EXPECT_EQ(Run({"SET", "d", "v", "PXAT", std::to_string(now + 777)}), kOk);
  EXPECT_EQ(Run({"PEXPIRETIME", "d"}), Int(now + 777));
  EXPECT_EQ(Run({"SET", "a", "w", "KEEPTTL"}), kOk);
  EXPECT_EQ(Run({"PTTL", "a"}), Int(10000));
  EXPECT_EQ(Run({"SET", "a", "w"}), kOk);
  EXPECT_EQ(Run({"TTL", "a"}), Int(-1));
  // A deadline already in the past deletes the key.
  EXPECT_EQ(Run({"SET", "e", "v", "PXAT", "1"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "e"}), Int(0));
  t_.clock().Advance(1499);
  EXPECT_EQ(Run({"GET", "b"}), Bulk("v"));
  t_.clock().Advance(1);
  EXPECT_EQ(Run({"GET", "b"}), kNil);
}

TEST_P(StringCommandsTest, SetSyntaxErrorsChangeNothing) {
  EXPECT_EQ(Run({"SET", "k", "orig"}), kOk);
  const std::string syntax = Err("ERR syntax error");
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "XX"}), syntax);
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "10", "PX", "10"}), syntax);
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "10", "KEEPTTL"}), syntax);
  EXPECT_EQ(Run({"SET", "k", "v", "EX"}), syntax);
  EXPECT_EQ(Run({"SET", "k", "v", "BOGUS"}), syntax);
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "abc"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "0"}), Err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "-5"}), Err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "9223372036854775807"}), Err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("orig"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
}

TEST_P(StringCommandsTest, SetVariants) {
  EXPECT_EQ(Run({"SETNX", "k", "1"}), Int(1));
  EXPECT_EQ(Run({"SETNX", "k", "2"}), Int(0));
  EXPECT_EQ(Run({"SETEX", "k", "5", "v"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(5));
  EXPECT_EQ(Run({"SETEX", "k", "0", "v"}), Err("ERR invalid expire time in 'setex' command"));
  EXPECT_EQ(Run({"PSETEX", "k", "-1", "v"}), Err("ERR invalid expire time in 'psetex' command"));
  EXPECT_EQ(Run({"PSETEX", "k", "2500", "w"}), kOk);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(2500));
  EXPECT_EQ(Run({"GETSET", "k", "x"}), Bulk("w"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"GETSET", "fresh", "x"}), kNil);
  EXPECT_EQ(Run({"GETDEL", "k"}), Bulk("x"));
  EXPECT_EQ(Run({"GETDEL", "k"}), kNil);
}

TEST_P(StringCommandsTest, GetEx) {
  EXPECT_EQ(Run({"GETEX", "k"}), kNil);
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"GETEX", "k", "EX", "100"}), Bulk("v"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(100));
  EXPECT_EQ(Run({"GETEX", "k", "PERSIST"}), Bulk("v"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"GETEX", "k", "PX", "0"}), Err("ERR invalid expire time in 'getex' command"));
  EXPECT_EQ(Run({"GETEX", "k", "EX", "1", "PERSIST"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"GETEX", "k", "KEEPTTL"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
}

TEST_P(StringCommandsTest, Counters) {
  EXPECT_EQ(Run({"INCR", "n"}), Int(1));
  EXPECT_EQ(Run({"INCRBY", "n", "41"}), Int(42));
  EXPECT_EQ(Run({"DECR", "n"}), Int(41));
  EXPECT_EQ(Run({"DECRBY", "n", "50"}), Int(-9));
  EXPECT_EQ(Run({"SET", "n", "9223372036854775807"}), kOk);
  EXPECT_EQ(Run({"INCR", "n"}), Err("ERR increment or decrement would overflow"));
  EXPECT_EQ(Run({"GET", "n"}), Bulk("9223372036854775807"));
  EXPECT_EQ(Run({"SET", "s", "abc"}), kOk);
  EXPECT_EQ(Run({"INCR", "s"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"INCRBY", "n", "x"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"SET", "t", "5", "EX", "100"}), kOk);
  EXPECT_EQ(Run({"INCR", "t"}), Int(6));
  EXPECT_EQ(Run({"TTL", "t"}), Int(100));
}

TEST_P(StringCommandsTest, IncrByFloat) {
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "10.5"}), Bulk("10.5"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "0.1"}), Bulk("10.6"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "-5.6"}), Bulk("5"));
  EXPECT_EQ(Run({"SET", "g", "5.0e3"}), kOk);
  EXPECT_EQ(Run({"INCRBYFLOAT", "g", "2.0e2"}), Bulk("5200"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "g", "abc"}), Err("ERR value is not a valid float"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "g", "inf"}), Err("ERR increment would produce NaN or Infinity"));
  EXPECT_EQ(Run({"GET", "g"}), Bulk("5200"));
}

TEST_P(StringCommandsTest, AppendStrlenRanges) {
  EXPECT_EQ(Run({"APPEND", "s", "Hello"}), Int(5));
  EXPECT_EQ(Run({"APPEND", "s", " World"}), Int(11));
  EXPECT_EQ(Run({"STRLEN", "s"}), Int(11));
  EXPECT_EQ(Run({"STRLEN", "missing"}), Int(0));
  EXPECT_EQ(Run({"GETRANGE", "s", "0", "4"}), Bulk("Hello"));
  EXPECT_EQ(Run({"GETRANGE", "s", "-5", "-1"}), Bulk("World"));
  EXPECT_EQ(Run({"GETRANGE", "s", "5", "2"}), Bulk(""));
  EXPECT_EQ(Run({"GETRANGE", "s", "0", "100"}), Bulk("Hello World"));
  EXPECT_EQ(Run({"GETRANGE", "missing", "0", "1"}), Bulk(""));
  EXPECT_EQ(Run({"SETRANGE", "s", "6", "Redis"}), Int(11));
  EXPECT_EQ(Run({"GET", "s"}), Bulk("Hello Redis"));
  EXPECT_EQ(Run({"SETRANGE", "z", "3", "ab"}), Int(5));
  EXPECT_EQ(Run({"GET", "z"}), Bulk(std::string("\0\0\0ab", 5)));
  EXPECT_EQ(Run({"SETRANGE", "none", "3", ""}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "none"}), Int(0));
  EXPECT_EQ(Run({"SETRANGE", "s", "-1", "x"}), Err("ERR offset is out of range"));
  EXPECT_EQ(Run({"SETRANGE", "s", "536870911", "xx"}),
            Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)"));
  // Repeated appends keep working past reallocation.
  std::string expect;
  for (int i = 0; i < 2000; ++i) {
    std::string piece = "piece" + std::to_string(i);
    expect += piece;
    ASSERT_EQ(Run({"APPEND", "big", piece}), Int(static_cast<long long>(expect.size())));
  }
  EXPECT_EQ(Run({"GET", "big"}), Bulk(expect));
}

TEST_P(StringCommandsTest, MultiKey) {
  EXPECT_EQ(Run({"MSET", "a", "1", "b", "2", "c", "3"}), kOk);
  EXPECT_EQ(Run({"MGET", "a", "b", "nope", "c"}), "*4\r\n" + Bulk("1") + Bulk("2") + kNil + Bulk("3"));
  EXPECT_EQ(Run({"MSET", "a", "1", "b"}), Err("ERR wrong number of arguments for 'mset' command"));
  EXPECT_EQ(Run({"MSETNX", "x", "1", "a", "9"}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "x"}), Int(0));
  EXPECT_EQ(Run({"MSETNX", "x", "1", "y", "2"}), Int(1));
  EXPECT_EQ(Run({"MGET", "x", "y"}), "*2\r\n" + Bulk("1") + Bulk("2"));
}

TEST_P(StringCommandsTest, ArityErrors) {
  EXPECT_EQ(Run({"GET"}), Err("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(Run({"SET", "k"}), Err("ERR wrong number of arguments for 'set' command"));
  EXPECT_EQ(Run({"GETRANGE", "k", "1"}), Err("ERR wrong number of arguments for 'getrange' command"));
}

INSTANTIATE_TEST_SUITE_P(Threads, StringCommandsTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace lapse::server::testing
