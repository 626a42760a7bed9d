// Sorted sets in both layouts (engine/zset.h): each operation on each layout, the conversion
// at Redis's thresholds, ranks and ranges, and a randomized comparison against a std::set
// model large enough to split and merge many tree leaves.
#include "engine/zset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/db.h"

namespace lapse::engine {
namespace {

constexpr int64_t kNow = 1000;

using Model = std::set<std::pair<double, std::string>>;

std::vector<std::pair<std::string, double>> Contents(const Entry* e) {
  std::vector<std::pair<std::string, double>> out;
  zset::ForEach(e, [&](std::string_view m, double s) { out.emplace_back(m, s); });
  return out;
}

std::vector<std::pair<std::string, double>> ModelContents(const Model& m) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [s, member] : m) out.emplace_back(member, s);
  return out;
}

CollectionLimits Limits(size_t entries = 128, size_t value = 64) {
  CollectionLimits l;
  l.zset_max_listpack_entries = entries;
  l.zset_max_listpack_value = value;
  return l;
}

TEST(ZSetTest, PackedOrdersByScoreThenMember) {
  Db db(kNow);
  auto limits = Limits();
  Entry* e = zset::Create(db, "z", kNow);
  EXPECT_TRUE(zset::Set(db, e, "b", 2, limits));
  EXPECT_TRUE(zset::Set(db, e, "a", 2, limits));
  EXPECT_TRUE(zset::Set(db, e, "c", -1.5, limits));
  EXPECT_TRUE(zset::Set(db, e, "d", std::numeric_limits<double>::infinity(), limits));
  EXPECT_TRUE(zset::Set(db, e, "e", 1e300, limits));
  EXPECT_TRUE(zset::Set(db, e, "f", -0.0, limits));
  EXPECT_FALSE(zset::Set(db, e, "b", 2, limits));
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  std::vector<std::pair<std::string, double>> want = {
      {"c", -1.5}, {"f", 0.0}, {"a", 2}, {"b", 2}, {"e", 1e300}, {"d", std::numeric_limits<double>::infinity()}};
  EXPECT_EQ(Contents(e), want);
  EXPECT_FALSE(std::signbit(*zset::Score(e, "f")));  // a listpack keeps -0 as "0"
  EXPECT_EQ(zset::Rank(e, "b"), 3u);
  EXPECT_EQ(zset::Rank(e, "zz"), std::nullopt);
  EXPECT_FALSE(zset::Set(db, e, "c", 5, limits));
  EXPECT_EQ(zset::Rank(e, "c"), 3u);
  EXPECT_TRUE(zset::Remove(db, e, "a"));
  EXPECT_FALSE(zset::Remove(db, e, "a"));
  EXPECT_EQ(zset::Size(e), 5u);
}

TEST(ZSetTest, ConvertsAtTheEntryAndValueLimits) {
  Db db(kNow);
  auto limits = Limits(3, 4);
  Entry* e = zset::Create(db, "z", kNow);
  for (int i = 0; i < 3; ++i) zset::Set(db, e, "m" + std::to_string(i), i, limits);
  EXPECT_STREQ(zset::EncodingName(e), "listpack");
  zset::Set(db, e, "m3", 3, limits);
  EXPECT_STREQ(zset::EncodingName(e), "skiplist");
  EXPECT_EQ(zset::Size(e), 4u);
  // Never back, even when small again.
  zset::RemoveRange(db, e, 0, 3);
  EXPECT_STREQ(zset::EncodingName(e), "skiplist");
  Entry* f = zset::Create(db, "f", kNow);
  zset::Set(db, f, "abcde", 1, limits);
  EXPECT_STREQ(zset::EncodingName(f), "skiplist");
}

TEST(ZSetTest, PartitionPointAndRangesOnBothLayouts) {
  for (bool big : {false, true}) {
    Db db(kNow);
    auto limits = big ? Limits(0) : Limits();
    Entry* e = zset::Create(db, "z", kNow, big);
    for (int i = 0; i < 10; ++i) zset::Set(db, e, std::string(1, static_cast<char>('a' + i)), i / 2, limits);
    size_t from = zset::PartitionPoint(e, [](double s, std::string_view) { return s < 2; });
    size_t to = zset::PartitionPoint(e, [](double s, std::string_view) { return s <= 3; });
    EXPECT_EQ(from, 4u);
    EXPECT_EQ(to, 8u);
    std::string seen;
    zset::ForRange(e, from, to, true, [&](std::string_view m, double) { seen += m; });
    EXPECT_EQ(seen, "hgfe");
    EXPECT_EQ(zset::RemoveRange(db, e, 1, 9), 8u);
    std::vector<std::pair<std::string, double>> want = {{"a", 0}, {"j", 4}};
    EXPECT_EQ(Contents(e), want);
    std::string buffer;
    auto [m, s] = zset::Random(e, 7, &buffer);
    EXPECT_TRUE(m == "a" || m == "j");
  }
}

TEST(ZSetTest, BuildPacksWhatFits) {
  Db db(kNow);
  auto limits = Limits(2);
  Entry* e = zset::Build(db, "z", {{"b", 1}, {"a", 1}}, limits, kNow);
  EXPECT_STREQ(zset::EncodingName(e), "listpack");
  std::vector<std::pair<std::string, double>> want = {{"a", 1}, {"b", 1}};
  EXPECT_EQ(Contents(e), want);
  e = zset::Build(db, "z", {{"b", 1}, {"a", 1}, {"c", 0}}, limits, kNow);
  EXPECT_STREQ(zset::EncodingName(e), "skiplist");
  EXPECT_EQ(zset::Rank(e, "c"), 0u);
}

TEST(ZSetTest, CopyOwnsItsTable) {
  Db db(kNow);
  auto limits = Limits(0);
  Entry* e = zset::Create(db, "z", kNow, true);
  for (int i = 0; i < 500; ++i) zset::Set(db, e, "m" + std::to_string(i), i % 7, limits);
  ValueCopy copy(*e);
  db.Erase("z", kNow);
  Entry* c = db.Put("c", copy.bytes(), ValueType::kZSet, kNoDeadline, kNow);
  c->set_encoding_bits(copy.encoding_bits());
  copy.Release();
  EXPECT_EQ(zset::Size(c), 500u);
  EXPECT_EQ(zset::Score(c, "m13"), 6.0);
  EXPECT_GT(zset::TableBytes(c), 500u * 16);
}

TEST(ZSetTest, RandomOperationsMatchAModel) {
  for (size_t entries : {size_t{128}, size_t{0}}) {
    Db db(kNow);
    auto limits = Limits(entries);
    Entry* e = zset::Create(db, "z", kNow, entries == 0);
    Model model;
    std::map<std::string, double> scores;
    std::mt19937_64 rng(42);
    size_t universe = entries == 0 ? 3000 : 100;
    for (int step = 0; step < 20000; ++step) {
      // Members that share prefixes of every length (and the empty one) test the front coding.
      std::string m = rng() % 8 == 0 ? std::string(rng() % 4, 'm') : "m" + std::to_string(rng() % universe);
      int op = static_cast<int>(rng() % 10);
      if (op < 6) {
        double s = static_cast<double>(rng() % 50) / 4;
        bool fresh = !scores.count(m);
        if (!fresh) model.erase({scores[m], m});
        model.insert({s, m});
        scores[m] = s;
        ASSERT_EQ(zset::Set(db, e, m, s, limits), fresh);
      } else if (op < 8) {
        bool had = scores.count(m) > 0;
        if (had) model.erase({scores[m], m}), scores.erase(m);
        ASSERT_EQ(zset::Remove(db, e, m), had);
      } else if (op == 8 && !model.empty()) {
        size_t n = model.size();
        size_t first = rng() % n, last = std::min(n, first + rng() % 40);
        auto it = std::next(model.begin(), static_cast<std::ptrdiff_t>(first));
        for (size_t i = first; i < last; ++i) {
          scores.erase(it->second);
          it = model.erase(it);
        }
        ASSERT_EQ(zset::RemoveRange(db, e, first, last), last - first);
      } else if (scores.count(m)) {
        auto rank = static_cast<size_t>(std::distance(model.begin(), model.find({scores[m], m})));
        ASSERT_EQ(zset::Rank(e, m), rank);
      }
      ASSERT_EQ(zset::Size(e), model.size());
    }
    EXPECT_EQ(Contents(e), ModelContents(model));
    std::vector<std::pair<std::string, double>> backwards;
    zset::ForRange(e, 0, zset::Size(e), true, [&](std::string_view m, double s) { backwards.emplace_back(m, s); });
    auto want = ModelContents(model);
    std::reverse(want.begin(), want.end());
    EXPECT_EQ(backwards, want);
  }
}

// Tens of thousands of members: hundreds of leaves, so that splits, merges and range
// removals move leaves across the rank index's chunks.
TEST(ZSetTest, ManyLeavesKeepRanksRight) {
  Db db(kNow);
  auto limits = Limits();
  Entry* e = zset::Create(db, "z", kNow, true);
  Model model;
  std::map<std::string, double> scores;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 120000; ++step) {
    std::string m = "m" + std::to_string(rng() % 60000);
    int op = static_cast<int>(rng() % 100);
    if (op < 70) {
      double s = static_cast<double>(rng() % 5000);
      if (scores.count(m)) model.erase({scores[m], m});
      model.insert({s, m});
      scores[m] = s;
      zset::Set(db, e, m, s, limits);
    } else if (op < 95) {
      if (scores.count(m)) model.erase({scores[m], m}), scores.erase(m);
      zset::Remove(db, e, m);
    } else if (!model.empty()) {
      size_t n = model.size();
      size_t first = rng() % n, last = std::min(n, first + rng() % 400);
      auto it = std::next(model.begin(), static_cast<std::ptrdiff_t>(first));
      for (size_t i = first; i < last; ++i) {
        scores.erase(it->second);
        it = model.erase(it);
      }
      zset::RemoveRange(db, e, first, last);
    }
    if (step % 1000 == 0 && !model.empty()) {
      ASSERT_EQ(zset::Size(e), model.size());
      size_t rank = rng() % model.size();
      auto it = std::next(model.begin(), static_cast<std::ptrdiff_t>(rank));
      ASSERT_EQ(zset::Rank(e, it->second), rank);
      std::string at;
      zset::ForRange(e, rank, rank + 1, false, [&](std::string_view member, double) { at = member; });
      ASSERT_EQ(at, it->second);
    }
  }
  EXPECT_EQ(Contents(e), ModelContents(model));
}

TEST(ZSetTest, AscendingInsertsFillLeaves) {
  Db db(kNow);
  auto limits = Limits();
  Entry* e = zset::Create(db, "z", kNow, true);
  for (int i = 0; i < 100000; ++i) zset::Set(db, e, "member:" + std::to_string(i), i, limits);
  EXPECT_EQ(zset::Size(e), 100000u);
  EXPECT_EQ(zset::Rank(e, "member:99999"), 99999u);
  EXPECT_EQ(zset::Rank(e, "member:50000"), 50000u);
  // About 16 bytes of leaf per member, not the 32 that half-full leaves would cost.
  EXPECT_LT(zset::TableBytes(e), 100000u * 90);
}

}  // namespace
}  // namespace lapse::engine
