#include <gtest/gtest.h>

#include <set>

#include "tests/server/test_server.h"

namespace lapse::server::testing {
namespace {

class KeyCommandsTest : public ::testing::TestWithParam<int> {
 protected:
  KeyCommandsTest() : t_(GetParam(), {{"enable-debug-command", "yes"}}) {}
  std::string Run(std::vector<std::string> cmd) { return t_.Run(std::move(cmd)); }
  TestServer t_;
};

TEST_P(KeyCommandsTest, DelExistsTypeTouch) {
  EXPECT_EQ(Run({"MSET", "a", "1", "b", "2", "c", "3"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "a", "a", "b", "zz"}), Int(3));
  EXPECT_EQ(Run({"TOUCH", "a", "zz"}), Int(1));
  EXPECT_EQ(Run({"TYPE", "a"}), "+string\r\n");
  EXPECT_EQ(Run({"TYPE", "zz"}), "+none\r\n");
  EXPECT_EQ(Run({"DEL", "a", "b", "zz"}), Int(2));
  EXPECT_EQ(Run({"UNLINK", "c"}), Int(1));
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
}

TEST_P(KeyCommandsTest, ExpireFamily) {
  EXPECT_EQ(Run({"EXPIRE", "k", "10"}), Int(0));
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"TTL", "missing"}), Int(-2));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "XX"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "GT"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "NX"}), Int(1));
  EXPECT_EQ(Run({"EXPIRE", "k", "20", "NX"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "5", "GT"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "50", "GT"}), Int(1));
  EXPECT_EQ(Run({"EXPIRE", "k", "60", "LT"}), Int(0));
  EXPECT_EQ(Run({"PEXPIRE", "k", "30000", "LT", "XX"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(30000));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "NX", "XX"}),
            Err("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "GT", "LT"}), Err("ERR GT and LT options at the same time are not compatible"));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "FOO"}), Err("ERR Unsupported option FOO"));
  EXPECT_EQ(Run({"EXPIRE", "k", "ten"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"EXPIRE", "k", "9223372036854775807"}), Err("ERR invalid expire time in 'expire' command"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(30000));
  int64_t now = t_.clock().NowMs();
  EXPECT_EQ(Run({"PEXPIREAT", "k", std::to_string(now + 5000)}), Int(1));
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), Int(now + 5000));
  EXPECT_EQ(Run({"EXPIREAT", "k", std::to_string(now / 1000 + 100)}), Int(1));
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), Int(now / 1000 + 100));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(1));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(0));
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), Int(-1));
  // Zero or a past time deletes the key, as in Redis.
  EXPECT_EQ(Run({"EXPIRE", "k", "0"}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"EXPIREAT", "k", "1"}), Int(1));
  EXPECT_EQ(Run({"GET", "k"}), kNil);
}

TEST_P(KeyCommandsTest, ExpiredKeysInvisibleEverywhereAtTheMillisecond) {
  EXPECT_EQ(Run({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}), kOk);
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "1500"}), kOk);
  EXPECT_EQ(Run({"SET", "p", "v"}), kOk);
  t_.clock().Advance(1499);
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(1));
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
  t_.clock().Advance(1);
  EXPECT_EQ(Run({"KEYS", "k*"}), "*0\r\n");
  EXPECT_EQ(Run({"SCAN", "0", "MATCH", "k", "COUNT", "1000"}).find("$1\r\nk\r\n"), std::string::npos);
  EXPECT_EQ(Run({"DBSIZE"}), Int(1));
  EXPECT_EQ(Run({"MGET", "k", "p"}), "*2\r\n" + kNil + Bulk("v"));
  EXPECT_EQ(Run({"TYPE", "k"}), "+none\r\n");
  EXPECT_EQ(Run({"TTL", "k"}), Int(-2));
  EXPECT_EQ(Run({"GET", "k"}), kNil);
  EXPECT_EQ(Run({"RANDOMKEY"}), Bulk("p"));
}

TEST_P(KeyCommandsTest, RenameCopyMove) {
  EXPECT_EQ(Run({"RENAME", "nope", "x"}), Err("ERR no such key"));
  EXPECT_EQ(Run({"SET", "a", "1", "EX", "100"}), kOk);
  EXPECT_EQ(Run({"RENAME", "a", "b"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "a"}), Int(0));
  EXPECT_EQ(Run({"GET", "b"}), Bulk("1"));
  EXPECT_EQ(Run({"TTL", "b"}), Int(100));
  EXPECT_EQ(Run({"RENAME", "b", "b"}), kOk);
  EXPECT_EQ(Run({"SET", "c", "3"}), kOk);
  EXPECT_EQ(Run({"RENAMENX", "b", "c"}), Int(0));
  EXPECT_EQ(Run({"RENAMENX", "b", "d"}), Int(1));
  EXPECT_EQ(Run({"COPY", "d", "c"}), Int(0));
  EXPECT_EQ(Run({"COPY", "d", "c", "REPLACE"}), Int(1));
  EXPECT_EQ(Run({"GET", "c"}), Bulk("1"));
  EXPECT_EQ(Run({"COPY", "d", "d"}), Err("ERR source and destination objects are the same"));
  EXPECT_EQ(Run({"COPY", "d", "d", "DB", "1"}), Int(1));
  EXPECT_EQ(Run({"COPY", "d", "d", "DB", "99"}), Err("ERR DB index is out of range"));
  EXPECT_EQ(Run({"MOVE", "c", "2"}), Int(1));
  EXPECT_EQ(Run({"MOVE", "c", "2"}), Int(0));
  EXPECT_EQ(Run({"MOVE", "d", "0"}), Err("ERR source and destination objects are the same"));
  EXPECT_EQ(Run({"SELECT", "2"}), kOk);
  EXPECT_EQ(Run({"GET", "c"}), Bulk("1"));
  EXPECT_EQ(Run({"SELECT", "1"}), kOk);
  EXPECT_EQ(Run({"TTL", "d"}), Int(100));
  EXPECT_EQ(Run({"SELECT", "16"}), Err("ERR DB index is out of range"));
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
}

TEST_P(KeyCommandsTest, ScanVisitsEveryKeyOnce) {
  std::set<std::string> expected;
  for (int i = 0; i < 500; ++i) {
    std::string k = "key:" + std::to_string(i);
    expected.insert(k);
    ASSERT_EQ(Run({"SET", k, "v"}), kOk);
  }
  std::set<std::string> seen;
  std::string cursor = "0";
  int rounds = 0;
  do {
    std::string reply = Run({"SCAN", cursor, "COUNT", "20"});
    // Parse: *2 $n cursor *m ($len key)*
    size_t pos = reply.find("\r\n", 4);
    size_t start = reply.find("\r\n") + 2;
    size_t len_end = reply.find("\r\n", start);
    int len = std::stoi(reply.substr(start + 1, len_end - start - 1));
    cursor = reply.substr(len_end + 2, len);
    pos = reply.find("\r\n", len_end + 2 + len + 2);
    size_t p = pos + 2;
    while (p < reply.size()) {
      size_t e = reply.find("\r\n", p);
      int kl = std::stoi(reply.substr(p + 1, e - p - 1));
      seen.insert(reply.substr(e + 2, kl));
      p = e + 2 + kl + 2;
    }
    ASSERT_LT(++rounds, 10000);
  } while (cursor != "0");
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(Run({"SCAN", "abc"}), Err("ERR invalid cursor"));
  EXPECT_EQ(Run({"SCAN", "0", "COUNT", "0"}), Err("ERR syntax error"));
}

TEST_P(KeyCommandsTest, FlushAndSwap) {
  EXPECT_EQ(Run({"SET", "a", "1"}), kOk);
  EXPECT_EQ(Run({"SWAPDB", "0", "1"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "a"}), Int(0));
  EXPECT_EQ(Run({"SELECT", "1"}), kOk);
  EXPECT_EQ(Run({"GET", "a"}), Bulk("1"));
  EXPECT_EQ(Run({"SWAPDB", "x", "1"}), Err("ERR invalid first DB index"));
  EXPECT_EQ(Run({"SWAPDB", "0", "y"}), Err("ERR invalid second DB index"));
  EXPECT_EQ(Run({"SWAPDB", "0", "16"}), Err("ERR DB index is out of range"));
  EXPECT_EQ(Run({"FLUSHDB", "ASYNC"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  EXPECT_EQ(Run({"SET", "b", "1"}), kOk);
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"SET", "c", "1"}), kOk);
  EXPECT_EQ(Run({"FLUSHALL", "BOGUS"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"FLUSHALL", "SYNC"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  EXPECT_EQ(Run({"SELECT", "1"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
}

TEST_P(KeyCommandsTest, ObjectSubcommands) {
  EXPECT_EQ(Run({"SET", "i", "12345"}), kOk);
  EXPECT_EQ(Run({"SET", "e", "short"}), kOk);
  EXPECT_EQ(Run({"SET", "r", std::string(100, 'x')}), kOk);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "i"}), Bulk("int"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "e"}), Bulk("embstr"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "r"}), Bulk("raw"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "missing"}), kNil);
  t_.clock().Advance(5000);
  EXPECT_EQ(Run({"OBJECT", "IDLETIME", "i"}), Int(5));
}

// Redis checks NX/XX/GT/LT before it reads the amount: an option error wins.
TEST_P(KeyCommandsTest, ExpireOptionErrorsComeBeforeValueErrors) {
  EXPECT_EQ(Run({"SET", "str", "v"}), kOk);
  const std::string nx_xx = Err("ERR NX and XX, GT or LT options at the same time are not compatible");
  const std::string gt_lt = Err("ERR GT and LT options at the same time are not compatible");
  EXPECT_EQ(Run({"EXPIRE", "str", "abc", "NX", "XX"}), nx_xx);
  EXPECT_EQ(Run({"PEXPIREAT", "missing", "abc", "GT", "LT"}), gt_lt);
  EXPECT_EQ(Run({"EXPIRE", "str", "abc", "FOO"}), Err("ERR Unsupported option FOO"));
  EXPECT_EQ(Run({"EXPIRE", "str", "abc", "NX", "FOO"}), Err("ERR Unsupported option FOO"));
  EXPECT_EQ(Run({"EXPIRE", "str", "99999999999999999999", "GT", "LT"}), gt_lt);
  EXPECT_EQ(Run({"EXPIRE", "str", "9223372036854775807", "NX", "XX"}), nx_xx);
  EXPECT_EQ(Run({"EXPIRE", "str", "abc", "NX"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"TTL", "str"}), Int(-1));
  EXPECT_EQ(Run({"EXISTS", "missing"}), Int(0));
}

// Redis compares and quotes option names as C strings, which end at a NUL byte.
TEST_P(KeyCommandsTest, OptionNamesEndAtNul) {
  EXPECT_EQ(Run({"SET", "str", "v"}), kOk);
  EXPECT_EQ(Run({"EXPIRE", "str", "100", std::string("a\0b", 3)}), Err("ERR Unsupported option a"));
  EXPECT_EQ(Run({"EXPIRE", "str", "abc", std::string("F\0OO", 4)}), Err("ERR Unsupported option F"));
  EXPECT_EQ(Run({"EXPIRE", "str", "100", std::string("\0x", 2)}), Err("ERR Unsupported option "));
  EXPECT_EQ(Run({"TTL", "str"}), Int(-1));
  EXPECT_EQ(Run({"EXPIRE", "str", "100", std::string("nx\0b", 4)}), Int(1));
  EXPECT_EQ(Run({"TTL", "str"}), Int(100));
  EXPECT_EQ(Run({"COPY", "str", "x", std::string("replace\0q", 9)}), Int(1));
  EXPECT_EQ(Run({"COPY", "str", "x", std::string("REPLACE\0q", 9)}), Int(1));
  EXPECT_EQ(Run({"COPY", "str", "x", std::string("db\0q", 4), "1"}), Int(1));
  EXPECT_EQ(Run({"COPY", "str", "x", std::string("foo\0q", 5)}), Err("ERR syntax error"));
  std::string scan = Run({"SCAN", "0", std::string("count\0x", 7), "100", std::string("type\0y", 6),
                          std::string("string\0z", 8)});
  EXPECT_EQ(scan.substr(0, 15), "*2\r\n$1\r\n0\r\n*2\r\n") << scan;
  EXPECT_NE(scan.find(Bulk("str")), std::string::npos) << scan;
  EXPECT_NE(scan.find(Bulk("x")), std::string::npos) << scan;
  EXPECT_EQ(Run({"FLUSHDB", std::string("sync\0x", 6)}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
}

// Each OBJECT subcommand has its own arity, reported under its lower-case full name.
TEST_P(KeyCommandsTest, ObjectSubcommandArity) {
  EXPECT_EQ(Run({"SET", "str", "v"}), kOk);
  EXPECT_EQ(Run({"OBJECT", "ENCODING"}), Err("ERR wrong number of arguments for 'object|encoding' command"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "a", "b"}), Err("ERR wrong number of arguments for 'object|encoding' command"));
  EXPECT_EQ(Run({"OBJECT", "FREQ"}), Err("ERR wrong number of arguments for 'object|freq' command"));
  EXPECT_EQ(Run({"OBJECT", "Freq"}), Err("ERR wrong number of arguments for 'object|freq' command"));
  EXPECT_EQ(Run({"OBJECT", "IDLETIME", "a", "b"}), Err("ERR wrong number of arguments for 'object|idletime' command"));
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT"}), Err("ERR wrong number of arguments for 'object|refcount' command"));
  EXPECT_EQ(Run({"OBJECT", "HELP", "x"}), Err("ERR wrong number of arguments for 'object|help' command"));
  EXPECT_EQ(Run({"OBJECT", "FOO"}), Err("ERR unknown subcommand 'FOO'. Try OBJECT HELP."));
  EXPECT_EQ(Run({"OBJECT", "FOO", "a", "b"}), Err("ERR unknown subcommand 'FOO'. Try OBJECT HELP."));
  // A subcommand is matched on all its bytes, but quoted up to a NUL and at most 128 bytes.
  EXPECT_EQ(Run({"OBJECT", std::string("encoding\0x", 10), "str"}),
            Err("ERR unknown subcommand 'encoding'. Try OBJECT HELP."));
  EXPECT_EQ(Run({"OBJECT", std::string(200, 'x'), "str"}),
            Err("ERR unknown subcommand '" + std::string(128, 'x') + "'. Try OBJECT HELP."));
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "str"}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "refcount", "missing"}), kNil);
  EXPECT_EQ(Run({"OBJECT", "HELP"}).substr(0, 1), "*");
  EXPECT_EQ(Run({"GET", "str"}), Bulk("v"));
}

// A deadline of INT64_MAX ms used to overflow (ms + 500) / 1000 into a negative EXPIRETIME.
TEST_P(KeyCommandsTest, TtlOfLargestDeadline) {
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"PEXPIREAT", "k", "9223372036854775807"}), Int(1));
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), Int(9223372036854776));
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), Int(9223372036854775807));
  int64_t left = INT64_MAX - t_.clock().NowMs();
  EXPECT_EQ(Run({"PTTL", "k"}), Int(left));
  EXPECT_EQ(Run({"TTL", "k"}), Int(left / 1000 + (left % 1000 >= 500)));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
  // Halves round up, as in Redis.
  EXPECT_EQ(Run({"PEXPIRE", "k", "1500"}), Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Int(2));
  EXPECT_EQ(Run({"PEXPIRE", "k", "1499"}), Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Int(1));
}

// OBJECT ENCODING follows how Redis built the value, not only its bytes.
TEST_P(KeyCommandsTest, ObjectEncodingFollowsHowTheValueWasBuilt) {
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "1e3"}), Bulk("1000"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "f"}), Bulk("embstr"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "f2", "1e50"}), Bulk("100000000000000000003583830118858923890798487404544"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "f2"}), Bulk("raw"));
  EXPECT_EQ(Run({"INCR", "f"}), Int(1001));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "f"}), Bulk("int"));
  EXPECT_EQ(Run({"SETRANGE", "sr", "3", "x"}), Int(4));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "sr"}), Bulk("raw"));
  EXPECT_EQ(Run({"APPEND", "new", "12"}), Int(2));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "new"}), Bulk("int"));
  EXPECT_EQ(Run({"SET", "s", "5"}), kOk);
  EXPECT_EQ(Run({"SETRANGE", "s", "0", ""}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "s"}), Bulk("int"));
  EXPECT_EQ(Run({"APPEND", "s", ""}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "s"}), Bulk("raw"));
  // An APPENDed string stays raw through RENAME, RENAMENX, COPY, MOVE and TTL changes...
  EXPECT_EQ(Run({"SET", "a", "abc"}), kOk);
  EXPECT_EQ(Run({"APPEND", "a", "d"}), Int(4));
  EXPECT_EQ(Run({"RENAME", "a", "n"}), kOk);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n"}), Bulk("raw"));
  EXPECT_EQ(Run({"RENAMENX", "n", "n2"}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n2"}), Bulk("raw"));
  EXPECT_EQ(Run({"COPY", "n2", "m"}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), Bulk("raw"));
  EXPECT_EQ(Run({"COPY", "n2", "m", "DB", "1"}), Int(1));
  EXPECT_EQ(Run({"EXPIRE", "m", "100"}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), Bulk("raw"));
  EXPECT_EQ(Run({"PERSIST", "m"}), Int(1));
  EXPECT_EQ(Run({"MOVE", "m", "2"}), Int(1));
  EXPECT_EQ(Run({"SELECT", "1"}), kOk);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), Bulk("raw"));
  EXPECT_EQ(Run({"SELECT", "2"}), kOk);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), Bulk("raw"));
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  // ... until a whole new value replaces it.
  EXPECT_EQ(Run({"GETSET", "n2", "abcd"}), Bulk("abcd"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n2"}), Bulk("embstr"));
  EXPECT_EQ(Run({"SET", "m", "7"}), kOk);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), Bulk("int"));
}

INSTANTIATE_TEST_SUITE_P(Threads, KeyCommandsTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace lapse::server::testing
