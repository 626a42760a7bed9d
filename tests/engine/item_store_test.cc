// File: tests/engine/item_store_test.cc
//
// ItemStore against DESIGN.md §1, with a manual time value: the whole matrix (container OFF /
// -1 / n  ×  item without ttl / -1 / m) at exactly deadline-1 ms and at the deadline, every
// transition of the container's setting, conditional writes, the reclaimer's order and
// budgets, dropped containers and Scan. Reads (Get) reclaim an expired item they meet, so a
// check that must not disturb the store uses Figures or Scan instead.

#include "engine/item_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/container.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'123;  // not on a second boundary
constexpr int64_t kFar = int64_t{2147483647} * 1000 * 3;  // beyond any ttl

class ItemStoreTest : public ::testing::Test {
 protected:
  void SetTtl(const std::string& name, int64_t ttl) { catalog_.FindOrCreate(0, name)->default_ttl.store(ttl); }
  ContainerPart& Part(const std::string& name) { return *store_.FindOrCreate(0, name); }

  // Writes item `id` with the given own ttl (kNoItemTtl for none) under a condition.
  PutOutcome Put(const std::string& container, const std::string& id, int64_t ttl = kNoItemTtl,
                 PutCondition condition = PutCondition::kAlways, std::optional<uint64_t> if_match = std::nullopt,
                 const std::string& payload = "1") {
    ParsedItem body;
    body.members = "\"v\":" + payload;
    if (ttl != kNoItemTtl) body.members += ",\"ttl\":" + std::to_string(ttl);
    body.ttl = ttl;
    return store_.Put(Part(container), id, std::move(body), condition, if_match, now_);
  }
  uint64_t MustPut(const std::string& container, const std::string& id, int64_t ttl = kNoItemTtl) {
    PutOutcome o = Put(container, id, ttl);
    EXPECT_TRUE(o.written);
    return o.etag;
  }
  const Item* Get(const std::string& container, const std::string& id) {
    ContainerPart* part = store_.Find(0, container);
    return part ? store_.Get(*part, id, now_) : nullptr;
  }
  bool Live(const std::string& container, const std::string& id) { return Get(container, id) != nullptr; }
  bool Delete(const std::string& container, const std::string& id) {
    ContainerPart* part = store_.Find(0, container);
    return part && store_.Delete(*part, id, now_);
  }
  ContainerFigures Figures(const std::string& container) {
    ContainerPart* part = store_.Find(0, container);
    return part ? store_.Figures(*part, now_) : ContainerFigures{};
  }
  void ExpectFigures(const std::string& container, uint64_t live, uint64_t stored, uint64_t expired) {
    ContainerFigures f = Figures(container);
    EXPECT_EQ(f.live, live) << container;
    EXPECT_EQ(f.stored, stored) << container;
    EXPECT_EQ(f.expired_unreclaimed, expired) << container;
  }
  std::set<std::string> ScanIds(const std::string& container, size_t buckets = 1) {
    std::set<std::string> ids;
    ContainerPart* part = store_.Find(0, container);
    if (!part) return ids;
    uint64_t cursor = 0;
    size_t visits = 0;
    do {
      cursor = store_.Scan(*part, cursor, now_, buckets, [&](const Item& item) {
        EXPECT_FALSE(item.Expired(part->default_ttl(), now_)) << item.id;
        EXPECT_TRUE(ids.insert(item.id).second) << "twice: " << item.id;
      });
      EXPECT_LT(++visits, 1000000u);
    } while (cursor != 0);
    return ids;
  }
  // Reclaims with an unlimited budget; returns the ids deleted, in order.
  std::vector<std::string> ReclaimAll(size_t max_items = SIZE_MAX) {
    std::vector<std::string> order;
    for (int i = 0; i < 1000; ++i) {
      bool more = store_.Reclaim(now_, max_items, [&](const Item& item) {
        order.push_back(item.id);
        return true;
      });
      if (!more) return order;
    }
    ADD_FAILURE() << "Reclaim never caught up";
    return order;
  }

  int64_t now_ = kStart;
  ContainerCatalog catalog_;
  ItemStore store_{0, catalog_, kStart};
};

// ---- The matrix of DESIGN.md §1 ----

enum class Dttl { kOff, kMinusOne, kN };
enum class Own { kNone, kMinusOne, kM };

struct MatrixCase {
  Dttl dttl;
  Own own;
  int64_t m;              // the item's own ttl when Own::kM
  bool set_after_write;   // the container's setting applied after the write (retroactive)
  bool lazy;              // the expired item is removed by a read rather than by Reclaim
};

std::string Name(const ::testing::TestParamInfo<MatrixCase>& info) {
  const MatrixCase& c = info.param;
  std::string s = c.dttl == Dttl::kOff ? "Off" : c.dttl == Dttl::kMinusOne ? "Minus1" : "N10";
  s += c.own == Own::kNone ? "_NoTtl" : c.own == Own::kMinusOne ? "_TtlMinus1" : "_Ttl" + std::to_string(c.m);
  if (c.set_after_write) s += "_SetAfter";
  if (c.lazy) s += "_Lazy";
  return s;
}

class ItemStoreMatrixTest : public ItemStoreTest, public ::testing::WithParamInterface<MatrixCase> {};

TEST_P(ItemStoreMatrixTest, ExpiresExactlyAtTheDeadline) {
  const MatrixCase& c = GetParam();
  const int64_t n = 10;
  int64_t dttl = c.dttl == Dttl::kOff ? kTtlOff : c.dttl == Dttl::kMinusOne ? -1 : n;
  int64_t own = c.own == Own::kNone ? kNoItemTtl : c.own == Own::kMinusOne ? -1 : c.m;
  // Expected effective ttl per the table.
  std::optional<int64_t> expect;
  if (c.dttl == Dttl::kOff) expect = std::nullopt;
  else if (c.own == Own::kM) expect = c.m;
  else if (c.own == Own::kMinusOne) expect = std::nullopt;
  else if (c.dttl == Dttl::kN) expect = n;
  else expect = std::nullopt;

  if (!c.set_after_write) SetTtl("c", dttl);
  now_ = kStart;
  MustPut("c", "x", own);
  MustPut("other", "y");  // a neighbour container with TTL off, never touched
  if (c.set_after_write) SetTtl("c", dttl);
  ExpectFigures("c", 1, 1, 0);

  if (!expect) {
    for (int64_t t : {int64_t{999}, int64_t{7000}, int64_t{10000}, int64_t{100000}, kFar}) {
      now_ = kStart + t;
      ExpectFigures("c", 1, 1, 0);
      EXPECT_TRUE(ReclaimAll().empty());
      ASSERT_TRUE(Live("c", "x"));
    }
    EXPECT_EQ(Get("c", "x")->Deadline(dttl), std::nullopt);
    return;
  }
  const int64_t deadline = kStart + *expect * 1000;
  EXPECT_EQ(Get("c", "x")->Deadline(dttl), deadline);

  now_ = deadline - 1;
  ExpectFigures("c", 1, 1, 0);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, 0);
  EXPECT_EQ(ScanIds("c"), std::set<std::string>{"x"});
  EXPECT_TRUE(ReclaimAll().empty());
  ASSERT_TRUE(Live("c", "x"));  // also: this read does not reset the countdown

  now_ = deadline;
  ExpectFigures("c", 0, 1, 1);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, deadline);
  EXPECT_TRUE(ScanIds("c").empty());
  if (c.lazy) {
    EXPECT_FALSE(Live("c", "x"));
    EXPECT_EQ(Figures("c").reclaimed_lazy, 1u);
    EXPECT_TRUE(ReclaimAll().empty());
  } else {
    EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"x"});
    EXPECT_EQ(Figures("c").reclaimed_background, 1u);
    EXPECT_FALSE(Live("c", "x"));
    EXPECT_EQ(Figures("c").reclaimed_lazy, 0u);
  }
  ExpectFigures("c", 0, 0, 0);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, 0);
  EXPECT_EQ(store_.items_stored(), 1u);
  ExpectFigures("other", 1, 1, 0);
  // Switching OFF now brings nothing back: it was reclaimed.
  SetTtl("c", kTtlOff);
  EXPECT_FALSE(Live("c", "x"));
}

std::vector<MatrixCase> AllMatrixCases() {
  std::vector<MatrixCase> cases;
  for (Dttl d : {Dttl::kOff, Dttl::kMinusOne, Dttl::kN}) {
    for (bool after : {false, true}) {
      for (bool lazy : {false, true}) {
        cases.push_back({d, Own::kNone, 0, after, lazy});
        cases.push_back({d, Own::kMinusOne, 0, after, lazy});
        cases.push_back({d, Own::kM, 7, after, lazy});    // own ttl shorter than the default
        cases.push_back({d, Own::kM, 15, after, lazy});   // and longer: it wins either way
        cases.push_back({d, Own::kM, 1, after, lazy});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Matrix, ItemStoreMatrixTest, ::testing::ValuesIn(AllMatrixCases()), Name);

TEST_F(ItemStoreTest, ExtremeTtlsExpireToTheMillisecond) {
  SetTtl("c", 2147483647);
  MustPut("c", "inherit");
  MustPut("c", "own", 2147483647);
  MustPut("c", "one", 1);
  now_ = kStart + 999;
  ExpectFigures("c", 3, 3, 0);
  now_ = kStart + 1000;
  ExpectFigures("c", 2, 3, 1);
  now_ = kStart + int64_t{2147483647} * 1000 - 1;
  ExpectFigures("c", 2, 3, 1);
  EXPECT_TRUE(Live("c", "inherit"));
  EXPECT_TRUE(Live("c", "own"));
  now_ += 1;
  ExpectFigures("c", 0, 3, 3);
  EXPECT_EQ(ReclaimAll().size(), 3u);
  ExpectFigures("c", 0, 0, 0);
}

// ---- Transitions of the container's setting ----

TEST_F(ItemStoreTest, LoweringTheDefaultHidesOldItemsAtOnce) {
  SetTtl("c", 100);
  MustPut("c", "old");
  MustPut("c", "own", 200);
  now_ += 50'000;
  MustPut("c", "new");
  now_ += 1'000;  // old is 51 s old, new 1 s
  ExpectFigures("c", 3, 3, 0);
  SetTtl("c", 30);
  EXPECT_FALSE(Live("c", "old"));  // lazily reclaimed
  EXPECT_TRUE(Live("c", "new"));
  EXPECT_TRUE(Live("c", "own"));   // its own ttl wins
  ExpectFigures("c", 2, 2, 0);
  EXPECT_EQ(Figures("c").reclaimed_lazy, 1u);
  // Lower again, below "new"'s age; the reclaimer finds it without any read.
  now_ += 5'000;  // new is 6 s old
  SetTtl("c", 6);
  ExpectFigures("c", 1, 2, 1);
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"new"});
  ExpectFigures("c", 1, 1, 0);
}

TEST_F(ItemStoreTest, RaisingTheDefaultBringsBackUnreclaimedItems) {
  SetTtl("c", 10);
  MustPut("c", "a");
  now_ += 5'000;
  MustPut("c", "b");
  now_ += 6'000;  // a expired 1 s ago, b is live
  ExpectFigures("c", 1, 2, 1);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, kStart + 10'000);
  SetTtl("c", 20);
  ExpectFigures("c", 2, 2, 0);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, 0);
  ASSERT_TRUE(Live("c", "a"));
  EXPECT_EQ(Get("c", "a")->last_write_ms, kStart);  // unchanged by the setting or the read
  // Now "a" expires 20 s after its write, exactly.
  now_ = kStart + 20'000 - 1;
  EXPECT_TRUE(Live("c", "a"));
  now_ += 1;
  ExpectFigures("c", 1, 2, 1);
  EXPECT_FALSE(Live("c", "a"));
  // -1 brings back every inheriting item too (none expire then).
  SetTtl("c", 1);
  now_ += 100'000;
  ExpectFigures("c", 0, 1, 1);
  SetTtl("c", -1);
  ExpectFigures("c", 1, 1, 0);
  EXPECT_TRUE(Live("c", "b"));
  EXPECT_TRUE(ReclaimAll().empty());
}

TEST_F(ItemStoreTest, SwitchingOffBringsBackEverythingAndSuspendsExpiry) {
  SetTtl("c", 10);
  MustPut("c", "inherit");
  MustPut("c", "own", 5);
  MustPut("c", "pinned", -1);
  MustPut("c", "later", 100);
  now_ += 20'000;
  ExpectFigures("c", 2, 4, 2);
  SetTtl("c", kTtlOff);
  ExpectFigures("c", 4, 4, 0);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, 0);
  EXPECT_EQ(ScanIds("c"), (std::set<std::string>{"inherit", "own", "pinned", "later"}));
  EXPECT_TRUE(ReclaimAll().empty());
  // Expiry is suspended: even "later"'s own deadline passes without effect.
  now_ += 1'000'000;
  EXPECT_TRUE(ReclaimAll().empty());
  ExpectFigures("c", 4, 4, 0);
  for (const char* id : {"inherit", "own", "pinned", "later"}) EXPECT_TRUE(Live("c", id)) << id;
  // Switching back on hides every item already past its time, at once.
  SetTtl("c", 10);
  ExpectFigures("c", 1, 4, 3);
  EXPECT_EQ(Figures("c").oldest_expired_deadline_ms, kStart + 5'000);
  EXPECT_EQ(ScanIds("c"), std::set<std::string>{"pinned"});
  EXPECT_FALSE(Live("c", "own"));  // lazily reclaimed
  ExpectFigures("c", 1, 3, 2);
  auto order = ReclaimAll();
  EXPECT_EQ(order, (std::vector<std::string>{"inherit", "later"}));  // deadlines +10 s, +100 s
  ExpectFigures("c", 1, 1, 0);
  EXPECT_EQ(store_.items_stored(), 1u);
}

TEST_F(ItemStoreTest, SwitchingOnWithMinusOneExpiresOnlyOwnTtls) {
  MustPut("c", "inherit");
  MustPut("c", "own", 5);
  now_ += 6'000;
  ExpectFigures("c", 2, 2, 0);
  SetTtl("c", -1);
  ExpectFigures("c", 1, 2, 1);
  EXPECT_TRUE(Live("c", "inherit"));
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"own"});
  SetTtl("c", 3);  // now the default applies to "inherit", 6 s old
  ExpectFigures("c", 0, 1, 1);
  SetTtl("c", kTtlOff);
  ExpectFigures("c", 1, 1, 0);
}

TEST_F(ItemStoreTest, RewriteResetsTheCountdownAndReadsDoNot) {
  SetTtl("c", 10);
  MustPut("c", "inherit");
  MustPut("c", "own", 4);
  now_ += 3'999;
  // Reads right before the deadlines change nothing.
  ASSERT_TRUE(Live("c", "own"));
  ASSERT_TRUE(Live("c", "inherit"));
  MustPut("c", "own", 8);  // rewritten: 8 s from now
  now_ = kStart + 9'999;
  ASSERT_TRUE(Live("c", "inherit"));
  MustPut("c", "inherit");
  // The first write's deadlines pass: nothing expires, the wheel's stale record is ignored.
  now_ = kStart + 10'000;
  ExpectFigures("c", 2, 2, 0);
  EXPECT_TRUE(ReclaimAll().empty());
  now_ = kStart + 3'999 + 8'000 - 1;
  ExpectFigures("c", 2, 2, 0);
  now_ += 1;
  ExpectFigures("c", 1, 2, 1);
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"own"});
  now_ = kStart + 9'999 + 10'000 - 1;
  EXPECT_TRUE(Live("c", "inherit"));
  now_ += 1;
  EXPECT_FALSE(Live("c", "inherit"));
  ExpectFigures("c", 0, 0, 0);
}

TEST_F(ItemStoreTest, RewritingMovesAnItemBetweenKinds) {
  SetTtl("c", 10);
  MustPut("c", "x", 100);
  now_ += 1'000;
  // Removing the ttl makes it inherit the default, counted from this write.
  MustPut("c", "x");
  EXPECT_EQ(Get("c", "x")->ttl, kNoItemTtl);
  now_ = kStart + 1'000 + 10'000 - 1;
  ExpectFigures("c", 1, 1, 0);
  now_ += 1;
  ExpectFigures("c", 0, 1, 1);
  // Rewriting an expired item creates it afresh; ttl -1 pins it.
  MustPut("c", "x", -1);
  now_ += kFar;
  ExpectFigures("c", 1, 1, 0);
  EXPECT_TRUE(ReclaimAll().empty());
  // From pinned to own ttl.
  MustPut("c", "x", 2);
  now_ += 2'000;
  ExpectFigures("c", 0, 1, 1);
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"x"});
}

TEST_F(ItemStoreTest, RewritingAFiredItemWhileOffTakesItOutOfTheFiredList) {
  MustPut("c", "x", 5);
  MustPut("c", "y", 5);
  now_ += 6'000;
  ExpectFigures("c", 2, 2, 0);  // OFF: fired, but not expired
  MustPut("c", "x");             // now inheriting
  MustPut("c", "y", 60);         // a fresh own deadline
  SetTtl("c", 10);
  ExpectFigures("c", 2, 2, 0);
  now_ += 10'000 - 1;
  ExpectFigures("c", 2, 2, 0);
  now_ += 1;
  ExpectFigures("c", 1, 2, 1);
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"x"});
  now_ += 50'000;
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"y"});
  ExpectFigures("c", 0, 0, 0);
}

TEST_F(ItemStoreTest, ItemsKeepTheirOwnWriteTimes) {
  SetTtl("c", 10);
  for (int i = 0; i < 10; ++i) {
    MustPut("c", "i" + std::to_string(i));
    now_ += 1'000;
  }
  // now = start + 10 s: i0 expires now, i9 in 9 s.
  for (int i = 0; i < 10; ++i) {
    ContainerFigures f = Figures("c");
    EXPECT_EQ(f.expired_unreclaimed, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(f.live, static_cast<uint64_t>(9 - i));
    EXPECT_EQ(f.oldest_expired_deadline_ms, kStart + 10'000);
    now_ += 1'000;
  }
}

// ---- Conditional writes ----

TEST_F(ItemStoreTest, ConditionalPuts) {
  SetTtl("c", 10);
  PutOutcome o = Put("c", "x", kNoItemTtl, PutCondition::kIfPresent);
  EXPECT_FALSE(o.written);
  o = Put("c", "x", kNoItemTtl, PutCondition::kIfAbsent);
  ASSERT_TRUE(o.written);
  EXPECT_FALSE(o.replaced);
  uint64_t etag1 = o.etag;
  EXPECT_FALSE(Put("c", "x", kNoItemTtl, PutCondition::kIfAbsent).written);
  o = Put("c", "x", kNoItemTtl, PutCondition::kIfPresent, std::nullopt, "2");
  ASSERT_TRUE(o.written);
  EXPECT_TRUE(o.replaced);
  uint64_t etag2 = o.etag;
  EXPECT_NE(etag1, etag2);
  EXPECT_EQ(Get("c", "x")->members, "\"v\":2");
  // IFMATCH: the current etag only.
  EXPECT_FALSE(Put("c", "x", kNoItemTtl, PutCondition::kAlways, etag1, "3").written);
  EXPECT_EQ(Get("c", "x")->etag, etag2);
  EXPECT_EQ(Get("c", "x")->members, "\"v\":2");
  EXPECT_FALSE(Put("c", "missing", kNoItemTtl, PutCondition::kAlways, etag2).written);
  EXPECT_EQ(Figures("c").stored, 1u);
  o = Put("c", "x", kNoItemTtl, PutCondition::kAlways, etag2, "4");
  ASSERT_TRUE(o.written);
  EXPECT_TRUE(o.replaced);
  uint64_t etag3 = o.etag;
  // A failed condition changes nothing, not even the write time.
  now_ += 5'000;
  EXPECT_FALSE(Put("c", "x", kNoItemTtl, PutCondition::kIfAbsent).written);
  EXPECT_FALSE(Put("c", "x", kNoItemTtl, PutCondition::kAlways, etag1).written);
  EXPECT_EQ(Get("c", "x")->last_write_ms, kStart);
  EXPECT_EQ(Get("c", "x")->etag, etag3);

  // Once expired, the item counts as absent for all three.
  now_ = kStart + 10'000;
  EXPECT_FALSE(Put("c", "x", kNoItemTtl, PutCondition::kAlways, etag3).written);
  EXPECT_EQ(Figures("c").stored, 0u);  // the failed write still reclaimed the expired item
  EXPECT_FALSE(Put("c", "x", kNoItemTtl, PutCondition::kIfPresent).written);
  MustPut("c", "y", 1);
  now_ += 1'000;
  ExpectFigures("c", 0, 1, 1);
  EXPECT_FALSE(Put("c", "y", kNoItemTtl, PutCondition::kIfPresent).written);
  MustPut("c", "z", 1);
  uint64_t etag_z = Get("c", "z")->etag;
  now_ += 1'000;
  EXPECT_FALSE(Put("c", "z", kNoItemTtl, PutCondition::kAlways, etag_z).written);
  MustPut("c", "w", 1);
  now_ += 1'000;
  o = Put("c", "w", kNoItemTtl, PutCondition::kIfAbsent, std::nullopt, "5");
  ASSERT_TRUE(o.written);
  EXPECT_FALSE(o.replaced);  // created afresh
  ASSERT_TRUE(Live("c", "w"));
  EXPECT_EQ(Get("c", "w")->members, "\"v\":5");
  EXPECT_EQ(Get("c", "w")->last_write_ms, now_);
  ExpectFigures("c", 1, 1, 0);
  // An upsert over an expired item is a creation too.
  MustPut("c", "u", 1);
  now_ += 1'000;
  o = Put("c", "u");
  EXPECT_TRUE(o.written);
  EXPECT_FALSE(o.replaced);
}

TEST_F(ItemStoreTest, EtagsAreUniqueAcrossStoresAndWrites) {
  ItemStore other(1, catalog_, kStart);
  std::set<uint64_t> etags;
  for (int i = 0; i < 100; ++i) {
    etags.insert(MustPut("c", "x"));
    ParsedItem body{"\"v\":1", kNoItemTtl};
    etags.insert(other.Put(*other.FindOrCreate(0, "c"), "x", std::move(body), PutCondition::kAlways, std::nullopt, now_).etag);
  }
  EXPECT_EQ(etags.size(), 200u);
  EXPECT_EQ(etags.count(0), 0u);
}

// ---- Delete ----

TEST_F(ItemStoreTest, DeleteCountsOnlyLiveItems) {
  SetTtl("c", 10);
  MustPut("c", "a");
  MustPut("c", "b", 2);
  MustPut("c", "c", -1);
  EXPECT_FALSE(Delete("c", "missing"));
  EXPECT_FALSE(Delete("nocontainer", "a"));
  EXPECT_TRUE(Delete("c", "c"));
  EXPECT_FALSE(Delete("c", "c"));
  now_ += 2'000;
  EXPECT_FALSE(Delete("c", "b"));  // expired: not deleted by this call, but reclaimed
  ExpectFigures("c", 1, 1, 0);
  now_ += 8'000;
  EXPECT_FALSE(Delete("c", "a"));
  ExpectFigures("c", 0, 0, 0);
  EXPECT_TRUE(ReclaimAll().empty());
  EXPECT_EQ(store_.items_stored(), 0u);
}

// ---- Reclaim ----

class ReclaimOrderTest : public ItemStoreTest {
 protected:
  void SetUp() override {
    SetTtl("A", 10);
    SetTtl("B", -1);
    SetTtl("C", 20);
    PutAt(0, "A", "a1");              // deadline 10000
    PutAt(0, "B", "b1", 3);           // 3000
    PutAt(1000, "C", "c1");           // 21000
    PutAt(1000, "C", "c2", 5);        // 6000
    PutAt(2000, "A", "a2");           // 12000
    PutAt(2000, "B", "b2", 30);       // 32000
    PutAt(2500, "C", "c3", 1);        // 3500
    PutAt(3000, "B", "b3", 8);        // 11000
    PutAt(3000, "A", "a3", 2);        // 5000
    PutAt(3000, "B", "b4");           // never (inherits -1)
    PutAt(3000, "A", "a4", -1);       // never
  }
  void At(int64_t t) { now_ = kStart + t; }
  void PutAt(int64_t t, const std::string& container, const std::string& id, int64_t ttl = kNoItemTtl) {
    At(t);
    MustPut(container, id, ttl);
  }
  const std::vector<std::string> kOrder = {"b1", "c3", "a3", "c2", "a1", "b3", "a2", "c1", "b2"};
};

TEST_F(ReclaimOrderTest, OldestDeadlineFirstAcrossContainersAndKinds) {
  At(40'000);
  EXPECT_EQ(ReclaimAll(), kOrder);
  ExpectFigures("A", 1, 1, 0);
  ExpectFigures("B", 1, 1, 0);
  ExpectFigures("C", 0, 0, 0);
  EXPECT_EQ(store_.items_stored(), 2u);
}

TEST_F(ReclaimOrderTest, OnlyWhatIsDueAtEachTime) {
  std::vector<std::string> all;
  for (int64_t t = 3'000; t <= 40'000; t += 500) {
    At(t);
    auto got = ReclaimAll();
    all.insert(all.end(), got.begin(), got.end());
  }
  EXPECT_EQ(all, kOrder);
}

TEST_F(ReclaimOrderTest, ExactDeadlineBoundaries) {
  At(10'999);
  EXPECT_EQ(ReclaimAll(), (std::vector<std::string>{"b1", "c3", "a3", "c2", "a1"}));
  At(11'000);
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"b3"});
}

TEST_F(ReclaimOrderTest, BoundedByMaxItems) {
  At(40'000);
  std::vector<std::string> order;
  auto yes = [&](const Item& item) {
    order.push_back(item.id);
    return true;
  };
  EXPECT_TRUE(store_.Reclaim(now_, 0, yes));
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(store_.items_stored(), 11u);
  size_t calls = 0;
  while (store_.Reclaim(now_, 2, yes)) {
    ++calls;
    ASSERT_EQ(store_.items_stored(), 11u - std::min<size_t>(order.size(), 9));
    ASSERT_LE(order.size(), 2 * calls);
    ASSERT_LT(calls, 100u);
  }
  EXPECT_EQ(order, kOrder);
  EXPECT_EQ(store_.items_stored(), 2u);
}

TEST_F(ReclaimOrderTest, StopsWhenAdmitRefuses) {
  At(40'000);
  std::vector<std::string> admitted;
  int budget = 3;
  auto admit = [&](const Item& item) {
    if (budget == 0) return false;
    --budget;
    admitted.push_back(item.id);
    return true;
  };
  // A refusal sets that container aside for the call; when every container has been refused
  // the call reports itself blocked (not "more due": the caller should wait).
  EXPECT_FALSE(store_.Reclaim(now_, 100, admit));
  EXPECT_TRUE(store_.reclaim_blocked());
  EXPECT_EQ(admitted, (std::vector<std::string>{"b1", "c3", "a3"}));
  EXPECT_EQ(store_.items_stored(), 8u);
  // Refused again: nothing more is deleted, however large max_items is, and each container
  // is offered once, its oldest first, oldest container first.
  std::vector<std::string> offered;
  EXPECT_FALSE(store_.Reclaim(now_, SIZE_MAX, [&](const Item& item) {
    offered.push_back(item.id);
    return false;
  }));
  EXPECT_TRUE(store_.reclaim_blocked());
  EXPECT_EQ(offered, (std::vector<std::string>{"c2", "a1", "b3"}));
  EXPECT_EQ(store_.items_stored(), 8u);
  // Expired items stay invisible while waiting.
  ExpectFigures("A", 1, 3, 2);
  ExpectFigures("B", 1, 3, 2);
  ExpectFigures("C", 0, 2, 2);
  budget = 2;
  EXPECT_FALSE(store_.Reclaim(now_, 100, admit));
  EXPECT_EQ(admitted, (std::vector<std::string>{"b1", "c3", "a3", "c2", "a1"}));
  // Within budget, bounded by max_items: not blocked, more due.
  budget = 100;
  EXPECT_TRUE(store_.Reclaim(now_, 1, admit));
  EXPECT_FALSE(store_.reclaim_blocked());
  EXPECT_EQ(admitted.back(), "b3");
  EXPECT_EQ(ReclaimAll(), (std::vector<std::string>{"a2", "c1", "b2"}));
}

// A container out of its own budget must not hold back the others (found by
// tests/integration/test_request_units.py).
TEST_F(ReclaimOrderTest, ARefusedContainerDoesNotHoldBackTheOthers) {
  At(40'000);
  std::vector<std::string> admitted;
  auto all_but_c = [&](const Item& item) {
    if (item.id[0] == 'c') return false;
    admitted.push_back(item.id);
    return true;
  };
  EXPECT_FALSE(store_.Reclaim(now_, 100, all_but_c));
  EXPECT_TRUE(store_.reclaim_blocked());
  EXPECT_EQ(admitted, (std::vector<std::string>{"b1", "a3", "a1", "b3", "a2", "b2"}));
  ExpectFigures("C", 0, 3, 3);
}

TEST_F(ReclaimOrderTest, OldestExpiredDeadlineFigure) {
  At(2'999);
  EXPECT_EQ(Figures("A").oldest_expired_deadline_ms, 0);
  EXPECT_EQ(Figures("B").oldest_expired_deadline_ms, 0);
  At(12'000);
  EXPECT_EQ(Figures("A").oldest_expired_deadline_ms, kStart + 5'000);   // a3 (own) before a1 (inherit)
  EXPECT_EQ(Figures("B").oldest_expired_deadline_ms, kStart + 3'000);
  EXPECT_EQ(Figures("C").oldest_expired_deadline_ms, kStart + 3'500);
  ExpectFigures("A", 1, 4, 3);
  ExpectFigures("B", 2, 4, 2);
  ExpectFigures("C", 1, 3, 2);
  // The inheriting item older than every fired one: A without a3.
  EXPECT_FALSE(Live("A", "a3"));
  EXPECT_EQ(Figures("A").oldest_expired_deadline_ms, kStart + 10'000);
  // Lower C's default: c1 (written at 1 s) now expired at 2 s, older than c3's 3.5 s.
  SetTtl("C", 1);
  EXPECT_EQ(Figures("C").oldest_expired_deadline_ms, kStart + 2'000);
  SetTtl("C", kTtlOff);
  EXPECT_EQ(Figures("C").oldest_expired_deadline_ms, 0);
  SetTtl("C", 20);
  EXPECT_EQ(ReclaimAll(), (std::vector<std::string>{"b1", "c3", "c2", "a1", "b3", "a2"}));
  EXPECT_EQ(Figures("A").oldest_expired_deadline_ms, 0);
}

TEST_F(ItemStoreTest, ReclaimReturnsFalseWhenCaughtUp) {
  auto yes = [](const Item&) { return true; };
  EXPECT_FALSE(store_.Reclaim(now_, 10, yes));
  SetTtl("c", 1);
  MustPut("c", "a");
  MustPut("c", "b", 2);
  EXPECT_FALSE(store_.Reclaim(now_, 10, yes));
  now_ += 1'000;
  EXPECT_TRUE(store_.Reclaim(now_, 1, yes));  // deleted a, maybe more is due
  EXPECT_FALSE(store_.Reclaim(now_, 10, yes));
  now_ += 1'000;
  store_.Reclaim(now_, 10, yes);
  EXPECT_FALSE(store_.Reclaim(now_, 10, yes));
  EXPECT_EQ(store_.items_stored(), 0u);
}

// Enough items that the wheel needs more than one Reclaim call to catch up (it handles 4096
// records per call); deadlines must still come out in order across kinds and containers.
void ReclaimManyInOrder(ContainerCatalog& catalog, size_t max_items) {
  ItemStore store(3, catalog, kStart);
  catalog.FindOrCreate(0, "c")->default_ttl.store(3);
  catalog.FindOrCreate(0, "d")->default_ttl.store(-1);
  std::mt19937_64 rng(7);
  std::map<std::string, int64_t> deadline;
  int64_t now = kStart;
  for (int i = 0; i < 6000; ++i) {
    now = kStart + i;  // writes in time order, as a shard sees them
    std::string id = "k" + std::to_string(i);
    int64_t ttl = 1 + static_cast<int64_t>(rng() % 4);
    std::string container = rng() % 2 ? "c" : "d";
    bool own = container == "d" || rng() % 2 == 0;
    ParsedItem body{"\"v\":1", own ? ttl : kNoItemTtl};
    ASSERT_TRUE(store.Put(*store.FindOrCreate(0, container), id, std::move(body), PutCondition::kAlways, std::nullopt, now).written);
    deadline[id] = now + (own ? ttl : 3) * 1000;
  }
  now = kStart + 100'000;
  int64_t last = 0;
  size_t n = 0, out_of_order = 0;
  for (int i = 0; i < 10000; ++i) {
    bool more = store.Reclaim(now, max_items, [&](const Item& item) {
      int64_t d = deadline.at(item.id);
      if (d < last) ++out_of_order;
      last = std::max(last, d);
      ++n;
      return true;
    });
    if (!more) break;
  }
  EXPECT_EQ(out_of_order, 0u) << "max_items " << max_items;
  EXPECT_EQ(n, 6000u);
  EXPECT_EQ(store.items_stored(), 0u);
}

TEST_F(ItemStoreTest, ManyItemsReclaimedInDeadlineOrderSmallSlices) { ReclaimManyInOrder(catalog_, 100); }
TEST_F(ItemStoreTest, ManyItemsReclaimedInDeadlineOrderOneSlice) { ReclaimManyInOrder(catalog_, SIZE_MAX); }

// ---- Dropped containers ----

TEST_F(ItemStoreTest, DroppedContainersAreInvisibleAndFreedInSlices) {
  SetTtl("d", 10);
  for (int i = 0; i < 10; ++i) MustPut("d", "i" + std::to_string(i), i % 3 == 0 ? kNoItemTtl : i % 3 == 1 ? -1 : 5);
  MustPut("keep", "k");
  EXPECT_EQ(store_.items_stored(), 11u);
  ASSERT_TRUE(catalog_.Drop(0, "d"));
  EXPECT_FALSE(catalog_.Drop(0, "d"));
  EXPECT_EQ(store_.Find(0, "d"), nullptr);
  EXPECT_FALSE(Live("d", "i0"));
  EXPECT_FALSE(Delete("d", "i1"));
  EXPECT_EQ(store_.items_stored(), 11u);  // memory not reclaimed yet
  int admitted = 0;
  auto admit = [&](const Item&) {
    ++admitted;
    return true;
  };
  EXPECT_TRUE(store_.Reclaim(now_, 3, admit));
  EXPECT_EQ(store_.items_stored(), 8u);
  EXPECT_TRUE(store_.Reclaim(now_, 3, admit));
  EXPECT_EQ(store_.items_stored(), 5u);
  EXPECT_TRUE(store_.Reclaim(now_, 3, admit));
  EXPECT_EQ(store_.items_stored(), 2u);
  store_.Reclaim(now_, 3, admit);
  EXPECT_EQ(store_.items_stored(), 1u);
  EXPECT_FALSE(store_.Reclaim(now_, 3, admit));
  EXPECT_EQ(admitted, 0);  // freeing a dropped container is not an expiry
  ExpectFigures("keep", 1, 1, 0);
  // The own-ttl items' wheel records pass without effect.
  now_ += 60'000;
  EXPECT_FALSE(store_.Reclaim(now_, 3, admit));
  ExpectFigures("keep", 1, 1, 0);
}

TEST_F(ItemStoreTest, DroppedContainerFreedWhileItsItemsStillFire) {
  // A dropped part is freed one item per Reclaim call while the wheel keeps firing its
  // remaining own-ttl items, one per second, into the part's fired list. Each call first
  // fires (the item becomes the list's tail), then frees one item in table order; when that
  // was the tail, the next fire wrote through a freed item — a use after free before
  // FreeDropped unfiled the items it freed (the sanitizer build reports it; the plain build
  // corrupted the links of items that reused the memory).
  for (int i = 0; i < 60; ++i) MustPut("d", "x" + std::to_string(i), 1 + i);
  MustPut("keep", "k", 1000);
  SetTtl("keep", -1);
  ASSERT_TRUE(catalog_.Drop(0, "d"));
  for (int s = 0; s < 60 && store_.items_stored() > 1; ++s) {
    now_ += 1'000;
    store_.Reclaim(now_, 1, [](const Item&) { return true; });
    MustPut("keep", "n" + std::to_string(s), 1);  // fresh items reuse the freed memory
  }
  now_ += 100'000;
  ReclaimAll();
  ExpectFigures("keep", 1, 1, 0);
  EXPECT_EQ(store_.items_stored(), 1u);
}

TEST_F(ItemStoreTest, RecreatedContainerStartsEmpty) {
  SetTtl("d", 10);
  MustPut("d", "a", 5);
  MustPut("d", "b");
  ContainerPart* old_part = store_.Find(0, "d");
  ASSERT_TRUE(catalog_.Drop(0, "d"));
  // Re-created before any Reclaim: the old part is retired, not reused.
  ContainerPart& fresh = Part("d");
  EXPECT_EQ(fresh.default_ttl(), kTtlOff);
  EXPECT_NE(fresh.info.get(), old_part->info.get());
  ExpectFigures("d", 0, 0, 0);
  EXPECT_FALSE(Live("d", "a"));
  MustPut("d", "a");
  ExpectFigures("d", 1, 1, 0);
  EXPECT_EQ(store_.items_stored(), 3u);
  // The old own-ttl item's deadline passes before its part is freed.
  now_ += 6'000;
  ExpectFigures("d", 1, 1, 0);
  EXPECT_TRUE(ReclaimAll().empty());
  EXPECT_EQ(store_.items_stored(), 1u);
  ExpectFigures("d", 1, 1, 0);
  SetTtl("d", 1);
  EXPECT_EQ(ReclaimAll(), std::vector<std::string>{"a"});
  EXPECT_EQ(store_.items_stored(), 0u);
}

TEST_F(ItemStoreTest, DropAllDropsEveryContainer) {
  MustPut("a", "x", 3);
  MustPut("b", "y");
  catalog_.DropAll();
  EXPECT_TRUE(catalog_.Names(0).empty());
  EXPECT_EQ(store_.Find(0, "a"), nullptr);
  EXPECT_EQ(store_.Find(0, "b"), nullptr);
  now_ += 5'000;
  EXPECT_TRUE(ReclaimAll().empty());
  EXPECT_EQ(store_.items_stored(), 0u);
}

TEST_F(ItemStoreTest, SharedSettingsAcrossStores) {
  // Two shards' stores see one catalog: a setting made once applies to both at once.
  ItemStore other(1, catalog_, kStart);
  MustPut("c", "here");
  ParsedItem body{"\"v\":1", kNoItemTtl};
  ASSERT_TRUE(other.Put(*other.FindOrCreate(0, "c"), "there", std::move(body), PutCondition::kAlways, std::nullopt, now_).written);
  now_ += 5'000;
  SetTtl("c", 5);
  EXPECT_EQ(Figures("c").expired_unreclaimed, 1u);
  EXPECT_EQ(other.Figures(*other.Find(0, "c"), now_).expired_unreclaimed, 1u);
  EXPECT_EQ(other.Get(*other.Find(0, "c"), "there", now_), nullptr);
  catalog_.Drop(0, "c");
  EXPECT_EQ(other.Find(0, "c"), nullptr);
  EXPECT_EQ(store_.Find(0, "c"), nullptr);
  EXPECT_EQ(catalog_.Names(0), std::vector<std::string>{});
}

// ---- Scan ----

TEST_F(ItemStoreTest, ScanReturnsExactlyTheLiveItems) {
  SetTtl("c", 10);
  std::mt19937_64 rng(42);
  std::set<std::string> live;
  for (int i = 0; i < 2000; ++i) {
    std::string id = "item:" + std::to_string(i);
    int kind = static_cast<int>(rng() % 4);
    now_ = kStart + i * 10;  // writes in time order, as a shard sees them
    int64_t ttl = kind == 0 ? kNoItemTtl : kind == 1 ? -1 : kind == 2 ? 5 : 30;
    MustPut("c", id, ttl);
  }
  MustPut("other", "item:0");
  now_ = kStart + 20'000;
  // The expected set: every stored item (a Scan at a time when nothing had expired yet),
  // filtered by the rule at the current time.
  auto expected = [&] {
    std::set<std::string> s;
    int64_t d = store_.Find(0, "c")->default_ttl();
    ContainerPart& part = *store_.Find(0, "c");
    uint64_t cursor = 0;
    do {
      cursor = store_.Scan(part, cursor, now_ - 1'000'000'000'000, 1 << 20, [&](const Item& item) {
        if (!item.Expired(d, now_)) s.insert(item.id);
      });
    } while (cursor != 0);
    return s;
  };
  std::set<std::string> want = expected();
  ASSERT_GT(want.size(), 100u);
  ASSERT_LT(want.size(), 2000u);
  EXPECT_EQ(want.size(), Figures("c").live);
  for (size_t buckets : {size_t{1}, size_t{3}, size_t{64}, size_t{100000}}) EXPECT_EQ(ScanIds("c", buckets), want);
  SetTtl("c", kTtlOff);
  EXPECT_EQ(ScanIds("c").size(), 2000u);
  SetTtl("c", -1);
  EXPECT_EQ(ScanIds("c").size(), Figures("c").live);
  EXPECT_EQ(ScanIds("other"), std::set<std::string>{"item:0"});
  EXPECT_TRUE(ScanIds("missing").empty());
}

}  // namespace
}  // namespace lapse::engine
