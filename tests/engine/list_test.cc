// Lists in both layouts (engine/list.h): a model check of every operation against a
// std::deque under several node limits, the conversion from inline to nodes, copies that own
// their nodes, and the ready-key signal a blocked-on key gives (engine/db.h).
#include "engine/list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "engine/collection.h"
#include "engine/db.h"

namespace lapse::engine {
namespace {

constexpr int64_t kNow = 1000;

std::vector<std::string> Contents(const Entry* e) {
  std::vector<std::string> out;
  list::ForEach(e, [&](std::string_view v) { out.emplace_back(v); });
  return out;
}

CollectionLimits WithFill(int64_t fill) {
  CollectionLimits limits;
  limits.list_max_listpack_size = fill;
  return limits;
}

TEST(ListTest, SmallListStaysInlineAndPushesAtBothEnds) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* e = list::Create(db, "l", kNow);
  list::Push(db, e, list::End::kTail, "b", limits);
  list::Push(db, e, list::End::kHead, "a", limits);
  list::Push(db, e, list::End::kTail, "", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  EXPECT_STREQ(EncodingName(e), "quicklist");
  EXPECT_EQ(list::Size(e), 3u);
  EXPECT_EQ(Contents(e), (std::vector<std::string>{"a", "b", ""}));
  EXPECT_EQ(list::At(e, 1), "b");
  EXPECT_EQ(list::Pop(db, e, list::End::kTail), "");
  EXPECT_EQ(list::Pop(db, e, list::End::kHead), "a");
  EXPECT_EQ(db.Find("l", kNow), e);
}

TEST(ListTest, OutgrowingOneNodeMovesToNodesThatKeepTheLimit) {
  Db db(kNow);
  CollectionLimits limits = WithFill(4);
  Entry* e = list::Create(db, "l", kNow);
  for (int i = 0; i < 4; ++i) list::Push(db, e, list::End::kTail, std::to_string(i), limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  list::Push(db, e, list::End::kTail, "4", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  EXPECT_TRUE(e->owns_table());
  EXPECT_EQ(Contents(e), (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  EXPECT_GT(TableBytes(e), 0u);
}

TEST(ListTest, AnElementLargerThanANodeGetsANodeOfItsOwn) {
  Db db(kNow);
  CollectionLimits limits = WithFill(-1);  // 4 KiB nodes
  Entry* e = list::Create(db, "l", kNow);
  std::string huge(10000, 'x');
  list::Push(db, e, list::End::kTail, "a", limits);
  list::Push(db, e, list::End::kTail, huge, limits);
  list::Push(db, e, list::End::kTail, "b", limits);
  EXPECT_EQ(Contents(e), (std::vector<std::string>{"a", huge, "b"}));
}

// Every operation, chosen at random, against a deque, with node limits that make many
// small nodes, byte-limited nodes, and the default.
class ListModelTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(ListModelTest, MatchesADequeUnderRandomOperations) {
  Db db(kNow);
  CollectionLimits limits = WithFill(GetParam());
  std::mt19937 rng(static_cast<uint32_t>(GetParam() + 100));
  Entry* e = list::Create(db, "l", kNow);
  std::deque<std::string> model;
    // Byte-limited nodes get longer elements, so that the list needs several of them.
  size_t max_len = GetParam() < 0 ? 400 : 40;
  auto element = [&] { return std::string(rng() % max_len, static_cast<char>('a' + rng() % 26)); };
  size_t longest = 0;
  bool went_to_nodes = false;
  for (int step = 0; step < 4000; ++step) {
    size_t n = model.size();
    longest = std::max(longest, n);
    went_to_nodes |= e->collection_encoding() == CollectionEncoding::kTable;
    // The first half grows the list (to many nodes); the second mostly edits it.
    unsigned op = rng() % (step < 2000 ? 14 : 9);
    switch (op >= 9 ? 0 : op) {
      case 0:
      case 1: {
        std::string v = element();
        bool head = rng() % 2;
        list::Push(db, e, head ? list::End::kHead : list::End::kTail, v, limits);
        head ? model.push_front(v) : model.push_back(v);
        break;
      }
      case 2:
        if (n > 1) {
          bool head = rng() % 2;
          EXPECT_EQ(list::Pop(db, e, head ? list::End::kHead : list::End::kTail), head ? model.front() : model.back());
          head ? model.pop_front() : model.pop_back();
        }
        break;
      case 3:
        if (n > 0) {
          size_t i = rng() % n;
          EXPECT_EQ(list::At(e, i), model[i]);
        }
        break;
      case 4:
        if (n > 0) {
          size_t i = rng() % n;
          std::string v = element();
          list::Set(db, e, i, v);
          model[i] = v;
        }
        break;
      case 5: {
        size_t i = n == 0 ? 0 : rng() % (n + 1);
        std::string v = element();
        list::Insert(db, e, i, v, limits);
        model.insert(model.begin() + static_cast<std::ptrdiff_t>(i), v);
        break;
      }
      case 6:
        if (n > 2) {
          std::vector<size_t> gone;
          for (size_t i = 0; i < n - 1; ++i) {
            if (rng() % 20 == 0) gone.push_back(i);
          }
          list::RemoveAt(db, e, gone);
          for (size_t k = gone.size(); k-- > 0;) model.erase(model.begin() + static_cast<std::ptrdiff_t>(gone[k]));
        }
        break;
      case 7:
        if (n > 2) {
          size_t k = rng() % std::min<size_t>(n / 2, 8);
          bool head = rng() % 2;
          list::Drop(db, e, head ? list::End::kHead : list::End::kTail, k);
          for (size_t j = 0; j < k; ++j) head ? model.pop_front() : model.pop_back();
        }
        break;
      case 8:
        if (n > 0) {
          size_t first = rng() % n, last = first + rng() % (n - first);
          std::vector<std::string> got;
          list::ForRange(e, first, last, [&](std::string_view v) {
            got.emplace_back(v);
            return true;
          });
          EXPECT_EQ(got, std::vector<std::string>(model.begin() + static_cast<std::ptrdiff_t>(first),
                                                  model.begin() + static_cast<std::ptrdiff_t>(last) + 1));
        }
        break;
    }
    ASSERT_EQ(list::Size(e), model.size()) << "step " << step;
  }
  EXPECT_EQ(Contents(e), std::vector<std::string>(model.begin(), model.end()));
  EXPECT_EQ(db.Find("l", kNow), e);
  EXPECT_GT(longest, 80u);
  EXPECT_TRUE(went_to_nodes) << "the walk should reach lists of several nodes";
}

INSTANTIATE_TEST_SUITE_P(NodeLimits, ListModelTest, ::testing::Values(3, 64, -1, -2, 0));

TEST(ListTest, ACopyOwnsItsNodes) {
  Db db(kNow);
  CollectionLimits limits = WithFill(2);
  Entry* e = list::Create(db, "l", kNow);
  for (int i = 0; i < 10; ++i) list::Push(db, e, list::End::kTail, std::to_string(i), limits);
  {
    ValueCopy copy(*e);
    Entry* c = db.Put("c", copy.bytes(), copy.type(), kNoDeadline, kNow);
    c->set_encoding_bits(copy.encoding_bits());
    copy.Release();
  }
  db.Erase("l", kNow);
  Entry* c = db.Find("c", kNow);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Contents(c).size(), 10u);
  EXPECT_EQ(list::At(c, 9), "9");
}

TEST(ListTest, AWriteToABlockedOnKeyIsReportedReady) {
  Db db(kNow);
  db.SetLocation(3, 2);
  CollectionLimits limits;
  ReadyKeys().clear();
  Entry* e = list::Create(db, "other", kNow);
  list::Push(db, e, list::End::kTail, "x", limits);
  EXPECT_TRUE(ReadyKeys().empty());
  db.AddBlocked("q");
  e = list::Create(db, "q", kNow);
  ASSERT_FALSE(ReadyKeys().empty());
  EXPECT_EQ(ReadyKeys()[0].shard, 3u);
  EXPECT_EQ(ReadyKeys()[0].db, 2u);
  EXPECT_EQ(ReadyKeys()[0].key, "q");
  ReadyKeys().clear();
  db.RemoveBlocked("q");
  db.Touch("q");
  EXPECT_TRUE(ReadyKeys().empty());
}

}  // namespace
}  // namespace lapse::engine
