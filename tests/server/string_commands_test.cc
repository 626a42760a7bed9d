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

// offset + length near INT64_MAX must not wrap past the size check (it used to abort the
// server with std::length_error or std::bad_alloc).
TEST_P(StringCommandsTest, SetRangeOffsetNearInt64MaxIsTooLong) {
  const std::string too_long = Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(Run({"SET", "str", "hello"}), kOk);
  for (const char* key : {"str", "missing"}) {
    EXPECT_EQ(Run({"SETRANGE", key, "9223372036854775807", "x"}), too_long) << key;
    EXPECT_EQ(Run({"SETRANGE", key, "9223372036854775800", "0123456789"}), too_long) << key;
  }
  // An empty patch changes nothing and is never too long, as in Redis.
  EXPECT_EQ(Run({"SETRANGE", "str", "9223372036854775807", ""}), Int(5));
  EXPECT_EQ(Run({"SETRANGE", "missing", "9223372036854775807", ""}), Int(0));
  EXPECT_EQ(Run({"GET", "str"}), Bulk("hello"));
  EXPECT_EQ(Run({"EXISTS", "missing"}), Int(0));
  EXPECT_EQ(Run({"GETRANGE", "str", "-9223372036854775808", "9223372036854775807"}), Bulk("hello"));
  EXPECT_EQ(Run({"GETRANGE", "str", "9223372036854775807", "-9223372036854775808"}), Bulk(""));
  EXPECT_EQ(Run({"GETRANGE", "str", "0", "-9223372036854775808"}), Bulk("h"));
}

// SETRANGE and APPEND grow a string up to the live proto-max-bulk-len, as Redis does.
TEST_P(StringCommandsTest, StringGrowthFollowsProtoMaxBulkLen) {
  const std::string too_long = Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(Run({"CONFIG", "SET", "proto-max-bulk-len", "1048576"}), kOk);
  EXPECT_EQ(Run({"SETRANGE", "k", "1048575", "x"}), Int(1048576));
  EXPECT_EQ(Run({"APPEND", "k", "x"}), too_long);
  EXPECT_EQ(Run({"SETRANGE", "k", "1048576", "x"}), too_long);
  EXPECT_EQ(Run({"SETRANGE", "k2", "1048576", "x"}), too_long);
  EXPECT_EQ(Run({"STRLEN", "k"}), Int(1048576));
  EXPECT_EQ(Run({"EXISTS", "k2"}), Int(0));
}

// Redis parses every option before it reads any number: syntax errors win over bad numbers,
// and a repeated option's earlier value is never read.
TEST_P(StringCommandsTest, SetOptionErrorsComeBeforeValueErrors) {
  EXPECT_EQ(Run({"SET", "str", "orig", "EX", "1000"}), kOk);
  const std::string syntax = Err("ERR syntax error");
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "abc", "PX", "10"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "0", "NX", "XX"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "abc", "FOO"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "0", "FOO"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "PX", "abc", "KEEPTTL"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "9223372036854775807", "NX", "XX"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "10", "PX", "10"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "10", "EX"}), syntax);
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "5", "PXAT", "10"}), syntax);
  // The last value of a repeated option is the one read.
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "10", "EX", "abc"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"SET", "str", "v", "EX", "5", "EX", "0"}), Err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(Run({"GET", "str"}), Bulk("orig"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(1000));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "abc", "EX", "100000"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(100000));
  EXPECT_EQ(Run({"SET", "k", "w", "EX", "0", "ex", "5"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(5));
  EXPECT_EQ(Run({"SET", "k", "x", "KEEPTTL", "KEEPTTL", "NX", "NX"}), kNil);
  EXPECT_EQ(Run({"SET", "k", "y", "XX", "XX", "GET", "GET", "KEEPTTL"}), Bulk("w"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(5));
}

TEST_P(StringCommandsTest, GetExOptionErrorsComeBeforeValueErrors) {
  EXPECT_EQ(Run({"SET", "str", "hello"}), kOk);
  const std::string syntax = Err("ERR syntax error");
  EXPECT_EQ(Run({"GETEX", "str", "EX", "abc", "PX", "10"}), syntax);
  EXPECT_EQ(Run({"GETEX", "str", "EX", "0", "FOO"}), syntax);
  EXPECT_EQ(Run({"GETEX", "missing", "EX", "1", "PX", "1"}), syntax);
  EXPECT_EQ(Run({"GETEX", "str", "EX", "5", "EX", "abc"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"GETEX", "str", "EX", "abc", "EX", "0"}), Err("ERR invalid expire time in 'getex' command"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(-1));
  EXPECT_EQ(Run({"GETEX", "str", "PX", "abc", "PX", "100000000"}), Bulk("hello"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(100000));
  EXPECT_EQ(Run({"GETEX", "str", "PERSIST", "PERSIST"}), Bulk("hello"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(-1));
}

// Redis looks the key up before it reads the time: a missing key answers nil.
TEST_P(StringCommandsTest, GetExMissingKeyIgnoresBadTime) {
  for (std::vector<std::string> opt : {std::vector<std::string>{"EX", "0"}, {"EX", "abc"}, {"PXAT", "-1"},
                                       {"PX", "9223372036854775807"}}) {
    EXPECT_EQ(Run({"GETEX", "missing", opt[0], opt[1]}), kNil) << opt[0] << " " << opt[1];
  }
  EXPECT_EQ(Run({"EXISTS", "missing"}), Int(0));
  EXPECT_EQ(Run({"SET", "str", "hello"}), kOk);
  EXPECT_EQ(Run({"GETEX", "str", "EX", "0"}), Err("ERR invalid expire time in 'getex' command"));
  EXPECT_EQ(Run({"GETEX", "str", "PXAT", "-1"}), Err("ERR invalid expire time in 'getex' command"));
  EXPECT_EQ(Run({"GETEX", "str", "EX", "abc"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(-1));
}

// Redis compares option names as C strings: they end at a NUL byte.
TEST_P(StringCommandsTest, OptionNamesEndAtNul) {
  EXPECT_EQ(Run({"SET", "str", "hello"}), kOk);
  EXPECT_EQ(Run({"SET", "str", "v", std::string("NX\0zz", 5)}), kNil);
  EXPECT_EQ(Run({"SET", "str", "v", std::string("GET\0zz", 6)}), Bulk("hello"));
  EXPECT_EQ(Run({"SET", "str", "w", std::string("EX\0zz", 5), "100"}), kOk);
  EXPECT_EQ(Run({"TTL", "str"}), Int(100));
  EXPECT_EQ(Run({"GETEX", "str", std::string("persist\0", 8)}), Bulk("w"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(-1));
  EXPECT_EQ(Run({"SET", "str", "v", std::string("\0NX", 3)}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"GET", "str"}), Bulk("w"));
}

INSTANTIATE_TEST_SUITE_P(Threads, StringCommandsTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace lapse::server::testing
