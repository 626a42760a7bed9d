// TrackedKeys and PrefixIndex (server/tracking_table.h): the indexes behind CLIENT TRACKING.
#include "server/tracking_table.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace lapse::server {
namespace {

TEST(TrackedKeysTest, RemembersEachReaderOnceAndCountsKeysAndItems) {
  TrackedKeys keys;
  EXPECT_TRUE(keys.Remember("a", 1));
  EXPECT_FALSE(keys.Remember("a", 1));
  EXPECT_TRUE(keys.Remember("a", 2));
  EXPECT_TRUE(keys.Remember("b", 1));
  EXPECT_EQ(keys.keys(), 2u);
  EXPECT_EQ(keys.items(), 3u);
}

TEST(TrackedKeysTest, TakeHandsOverTheReadersInOrderAndForgetsTheKey) {
  TrackedKeys keys;
  keys.Remember("k", 7);
  keys.Remember("k", 3);
  keys.Remember("other", 7);
  EXPECT_EQ(keys.Take("k"), (std::vector<uint64_t>{7, 3}));
  // The next change finds nobody: a reader must read again to be told again.
  EXPECT_TRUE(keys.Take("k").empty());
  EXPECT_EQ(keys.keys(), 1u);
  EXPECT_EQ(keys.items(), 1u);
}

TEST(TrackedKeysTest, KeysAreBinarySafe) {
  TrackedKeys keys;
  std::string with_nul("a\0b", 3);
  keys.Remember(with_nul, 1);
  EXPECT_TRUE(keys.Take("a").empty());
  EXPECT_EQ(keys.Take(with_nul), (std::vector<uint64_t>{1}));
}

TEST(TrackedKeysTest, ClearForgetsEverything) {
  TrackedKeys keys;
  for (int i = 0; i < 500; ++i) keys.Remember("key:" + std::to_string(i), static_cast<uint64_t>(i % 3));
  keys.Clear();
  EXPECT_EQ(keys.keys(), 0u);
  EXPECT_EQ(keys.items(), 0u);
  EXPECT_FALSE(keys.AnyKey(0).has_value());
}

TEST(TrackedKeysTest, AnyKeyFindsATrackedKeyFromEverySeed) {
  TrackedKeys keys;
  EXPECT_FALSE(keys.AnyKey(5).has_value());
  keys.Remember("only", 1);
  for (uint64_t seed = 0; seed < 200; ++seed) EXPECT_EQ(keys.AnyKey(seed), "only");
}

TEST(TrackedKeysTest, ConcurrentRemembersAndTakesKeepTheTotalsExact) {
  TrackedKeys keys;
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&keys, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string key = "k" + std::to_string(i % 100);
        keys.Remember(key, t);
        if (i % 7 == 0) keys.Take(key);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  size_t keys_left = 0, items_left = 0;
  for (int i = 0; i < 100; ++i) {
    std::vector<uint64_t> ids = keys.Take("k" + std::to_string(i));
    keys_left += ids.empty() ? 0 : 1;
    items_left += ids.size();
    EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), ids.size()) << "a reader recorded twice";
  }
  EXPECT_EQ(keys.keys(), 0u);
  EXPECT_EQ(keys.items(), 0u);
  EXPECT_GT(keys_left, 0u);
  EXPECT_GE(items_left, keys_left);
}

TEST(PrefixIndexTest, MatchingAndClientsFollowPrefixOrder) {
  PrefixIndex index;
  index.Add(1, "user:");
  index.Add(2, "user:");
  index.Add(2, "");
  index.Add(1, "u");
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.Matching("user:42"), (std::vector<std::string>{"", "u", "user:"}));
  EXPECT_EQ(index.Matching("other"), (std::vector<std::string>{""}));
  EXPECT_EQ(index.ClientsOf("user:"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(index.PrefixesOf(1), (std::vector<std::string>{"u", "user:"}));
}

TEST(PrefixIndexTest, RemovingAClientDropsPrefixesNobodyElseHas) {
  PrefixIndex index;
  index.Add(1, "a");
  index.Add(1, "b");
  index.Add(2, "b");
  index.RemoveClient(1);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_TRUE(index.ClientsOf("a").empty());
  EXPECT_EQ(index.ClientsOf("b"), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(index.PrefixesOf(1).empty());
  index.RemoveClient(1);  // twice is harmless
  EXPECT_EQ(index.size(), 1u);
}

TEST(PrefixIndexTest, AddingAPrefixTwiceKeepsOneEntry) {
  PrefixIndex index;
  index.Add(1, "a");
  index.Add(1, "a");
  EXPECT_EQ(index.ClientsOf("a"), (std::vector<uint64_t>{1}));
}

TEST(PrefixIndexTest, OverlapsAreFoundInRedisOrder) {
  PrefixIndex index;
  index.Add(1, "b");
  index.Add(1, "d");
  // "ab" meets neither registered prefix nor "bc"; "bc" then meets the registered "b".
  auto overlap = index.FindOverlap(1, {"ab", "bc"});
  ASSERT_TRUE(overlap.has_value());
  EXPECT_EQ(overlap->proposed, "bc");
  EXPECT_EQ(overlap->other, "b");
  EXPECT_TRUE(overlap->existing);
  // For each proposed prefix the registered ones come before the proposed ones after it.
  overlap = index.FindOverlap(1, {"x", "xy", "dz"});
  ASSERT_TRUE(overlap.has_value());
  EXPECT_EQ(overlap->proposed, "x");
  EXPECT_EQ(overlap->other, "xy");
  EXPECT_FALSE(overlap->existing);
  // Equal prefixes overlap; the empty prefix overlaps everything.
  EXPECT_TRUE(index.FindOverlap(1, {"d"}).has_value());
  EXPECT_TRUE(index.FindOverlap(1, {""}).has_value());
  EXPECT_TRUE(index.FindOverlap(2, {"a", ""}).has_value());
  // Another client's prefixes do not count.
  EXPECT_FALSE(index.FindOverlap(2, {"b", "c"}).has_value());
}

}  // namespace
}  // namespace lapse::server
