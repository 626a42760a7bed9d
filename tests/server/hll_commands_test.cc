// File: tests/server/hll_commands_test.cc
//
// PFADD, PFCOUNT and PFMERGE through the real dispatcher, in-process: replies, what they leave
// in the keyspace (the cached estimate PFCOUNT writes back, deadlines kept, expired HLLs
// unseen on the manual clock), hll-sparse-max-bytes under CONFIG SET, keys spread over
// shards, and request-unit charges. Byte identity with Redis is checked against
// redis-server in tests/integration/test_hyperloglog.py.
#include <gtest/gtest.h>

#include "engine/hyperloglog.h"
#include "tests/server/test_server.h"

namespace lapse::server::testing {
namespace {

namespace hll = engine::hll;

class HllCommandsTest : public ::testing::TestWithParam<int> {
 protected:
  HllCommandsTest() : t_(GetParam()) {}
  std::string Run(std::vector<std::string> cmd) { return t_.Run(std::move(cmd)); }
  // The value of a string key (the reply without its bulk header).
  std::string Value(const std::string& key) {
    std::string reply = Run({"GET", key});
    size_t body = reply.find("\r\n") + 2;
    return reply.substr(body, reply.size() - body - 2);
  }
  TestServer t_;
};

const std::string kNotHll = Err("WRONGTYPE Key is not a valid HyperLogLog string value.");
const std::string kCorrupt = Err("INVALIDOBJ Corrupted HLL object detected");

TEST_P(HllCommandsTest, AddAndCount) {
  EXPECT_EQ(Run({"PFCOUNT", "h"}), Int(0));
  EXPECT_EQ(Run({"PFADD", "h", "a", "b", "c"}), Int(1));
  EXPECT_EQ(Run({"PFADD", "h", "a"}), Int(0));
  EXPECT_EQ(Run({"PFCOUNT", "h"}), Int(3));
  EXPECT_EQ(Run({"PFADD", "empty"}), Int(1));
  EXPECT_EQ(Run({"PFADD", "empty"}), Int(0));
  EXPECT_EQ(Run({"PFCOUNT", "empty", "h", "missing"}), Int(3));
  EXPECT_EQ(Run({"TYPE", "h"}), "+string\r\n");
}

TEST_P(HllCommandsTest, CountWritesTheCacheBack) {
  Run({"PFADD", "h", "a", "b"});
  std::string before = Value("h");
  EXPECT_FALSE(hll::CacheValid(before));
  EXPECT_EQ(Run({"PFCOUNT", "h"}), Int(2));
  std::string after = Value("h");
  EXPECT_TRUE(hll::CacheValid(after));
  EXPECT_EQ(hll::CachedCardinality(after), 2u);
  EXPECT_EQ(before.substr(16), after.substr(16));
  // A count of several keys caches nothing.
  Run({"PFADD", "h", "c"});
  Run({"PFCOUNT", "h", "other"});
  EXPECT_FALSE(hll::CacheValid(Value("h")));
}

TEST_P(HllCommandsTest, DeadlinesKeptAndExpiredHllsUnseen) {
  Run({"PFADD", "h", "a"});
  EXPECT_EQ(Run({"PEXPIRE", "h", "5000"}), Int(1));
  Run({"PFADD", "h", "b", "c"});
  Run({"PFCOUNT", "h"});
  Run({"PFMERGE", "h", "h"});
  EXPECT_EQ(Run({"PTTL", "h"}), Int(5000));
  for (int i = 0; i < 3000; ++i) Run({"PFADD", "h", "e" + std::to_string(i)});  // turns dense
  EXPECT_EQ(Value("h").size(), hll::kDenseSize);
  EXPECT_EQ(Run({"PTTL", "h"}), Int(5000));
  t_.clock().Advance(5000);
  EXPECT_EQ(Run({"PFCOUNT", "h"}), Int(0));
  EXPECT_EQ(Run({"PFCOUNT", "h", "h"}), Int(0));
  EXPECT_EQ(Run({"PFADD", "h"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "h"}), Int(-1));
}

TEST_P(HllCommandsTest, SparseMaxBytesFollowsConfig) {
  EXPECT_EQ(Run({"CONFIG", "GET", "hll-sparse-max-bytes"}),
            "*2\r\n" + Bulk("hll-sparse-max-bytes") + Bulk("3000"));
  EXPECT_EQ(Run({"CONFIG", "SET", "hll-sparse-max-bytes", "50"}), kOk);
  std::vector<std::string> add = {"PFADD", "h"};
  for (int i = 0; i < 20; ++i) add.push_back("e" + std::to_string(i));
  Run(add);
  EXPECT_EQ(Value("h").size(), hll::kDenseSize);
  EXPECT_EQ(Run({"CONFIG", "SET", "hll-sparse-max-bytes", "1kb"}), kOk);
  add[1] = "s";
  Run(add);
  EXPECT_LT(Value("s").size(), 1024u);
  EXPECT_EQ(Run({"PFCOUNT", "h"}), Run({"PFCOUNT", "s"}));
}

TEST_P(HllCommandsTest, WrongTypesAndCorruption) {
  Run({"SET", "s", "not an hll"});
  EXPECT_EQ(Run({"PFADD", "s", "a"}), kNotHll);
  EXPECT_EQ(Run({"PFCOUNT", "s"}), kNotHll);
  EXPECT_EQ(Run({"PFMERGE", "d", "s"}), kNotHll);
  EXPECT_EQ(Run({"EXISTS", "d"}), Int(0));
  std::string bad = hll::NewSparse();
  bad.back() = '\xfe';  // 16383 registers
  hll::InvalidateCache(bad.data());
  Run({"SET", "bad", bad});
  EXPECT_EQ(Run({"PFCOUNT", "bad"}), kCorrupt);
  EXPECT_EQ(Run({"PFCOUNT", "bad", "s"}), kCorrupt);  // the first bad key decides
  EXPECT_EQ(Run({"PFMERGE", "d", "bad"}), kCorrupt);
  EXPECT_EQ(Run({"EXISTS", "d"}), Int(0));
  EXPECT_EQ(Value("bad"), bad);
  EXPECT_EQ(Run({"PFADD"}), Err("ERR wrong number of arguments for 'pfadd' command"));
}

TEST_P(HllCommandsTest, ManyKeysOverShards) {
  std::vector<std::string> keys;
  for (int k = 0; k < 40; ++k) {
    keys.push_back("key" + std::to_string(k));
    std::vector<std::string> add = {"PFADD", keys.back()};
    for (int i = 0; i < 25; ++i) add.push_back(std::to_string(k) + ":" + std::to_string(i));
    Run(add);
  }
  std::vector<std::string> count = {"PFCOUNT"}, merge = {"PFMERGE", "all"};
  count.insert(count.end(), keys.begin(), keys.end());
  merge.insert(merge.end(), keys.begin(), keys.end());
  std::string union_count = Run(count);
  EXPECT_EQ(Run(merge), kOk);
  EXPECT_EQ(Run({"PFCOUNT", "all"}), union_count);
  int64_t n = std::stoll(union_count.substr(1));
  EXPECT_GT(n, 970);
  EXPECT_LT(n, 1030);
}

TEST_P(HllCommandsTest, RequestUnits) {
  EXPECT_EQ(Run({"PFADD", "h", "a"}), Int(1));
  EXPECT_EQ(Run({"LASTCHARGE"}), Bulk("5"));  // insert of key and element
  EXPECT_EQ(Run({"PFADD", "h", "b"}), Int(1));
  EXPECT_EQ(Run({"LASTCHARGE"}), Bulk("10"));  // replace
  EXPECT_EQ(Run({"PFADD", "h", "a"}), Int(0));
  EXPECT_EQ(Run({"LASTCHARGE"}), Bulk("1"));  // nothing changed: a read
  EXPECT_EQ(Run({"PFCOUNT", "h"}), Int(2));
  EXPECT_EQ(Run({"LASTCHARGE"}), Bulk("1"));
}

INSTANTIATE_TEST_SUITE_P(Threads, HllCommandsTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace lapse::server::testing
