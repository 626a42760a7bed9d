// File: tests/engine/change_feed_test.cc
//
// The change feed (engine/change_feed.h) on its own and as ItemStore fills it, on a manual
// time value: the exact documents of create, replace and delete; deletions by time to live
// entering when the item is reclaimed (lazily or in the background, held back by a refusing
// budget), under container TTL OFF, -1, n and a changed default; positions and tokens;
// retention; waiters; a dropped container; and two stores (two shards) sharing one feed, the
// second from several threads at once.

#include "engine/change_feed.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/container.h"
#include "engine/item_store.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'123;  // not on a second boundary
constexpr int64_t kStartS = kStart / 1000;

ChangeDraft Draft(const std::string& text) { return DraftWrite(false, "{\"id\":\"" + text + "\"}", kStart, 0); }

std::string CreateDoc(const std::string& id, uint64_t lsn) {
  return "{\"current\":{\"id\":\"" + id + "\"},\"metadata\":{\"operationType\":\"create\",\"lsn\":" +
         std::to_string(lsn) + ",\"crts\":" + std::to_string(kStartS) + "}}";
}

FeedStart After(uint64_t lsn) { return FeedStart{FeedStart::Kind::kAfter, lsn}; }
const FeedStart kBeginning{FeedStart::Kind::kBeginning};
const FeedStart kNow{FeedStart::Kind::kNow};

class CountingWaiter : public ChangeFeedWaiter {
 public:
  void ChangesArrived() override { ++calls; }
  std::atomic<int> calls{0};
};

// ---- ChangeFeed alone ----

TEST(ChangeFeedTest, LsnsStartAtOneAndReadsResumeAfterThePosition) {
  ChangeFeed feed;
  FeedRead empty = feed.Read(kBeginning, 10);
  EXPECT_EQ(empty.status, FeedRead::Status::kOk);
  EXPECT_EQ(empty.position, 0u);
  EXPECT_TRUE(empty.docs.empty());
  EXPECT_EQ(feed.Append(Draft("a"), 1 << 20), 1u);
  EXPECT_EQ(feed.Append(Draft("b"), 1 << 20), 2u);
  EXPECT_EQ(feed.Append(Draft("c"), 1 << 20), 3u);

  FeedRead first = feed.Read(kBeginning, 2);
  ASSERT_EQ(first.status, FeedRead::Status::kOk);
  EXPECT_EQ(first.docs, (std::vector<std::string>{CreateDoc("a", 1), CreateDoc("b", 2)}));
  EXPECT_EQ(first.position, 2u);
  EXPECT_EQ(first.bytes, CreateDoc("a", 1).size() + CreateDoc("b", 2).size());
  FeedRead rest = feed.Read(After(first.position), 10);
  EXPECT_EQ(rest.docs, std::vector<std::string>{CreateDoc("c", 3)});
  EXPECT_EQ(rest.position, 3u);
  FeedRead none = feed.Read(After(3), 10);
  EXPECT_TRUE(none.docs.empty());
  EXPECT_EQ(none.position, 3u);
  // NOW stands after the newest change; a position past it is refused.
  EXPECT_EQ(feed.Read(kNow, 10).position, 3u);
  EXPECT_TRUE(feed.Read(kNow, 10).docs.empty());
  FeedRead ahead = feed.Read(After(4), 10);
  EXPECT_EQ(ahead.status, FeedRead::Status::kAhead);
  EXPECT_EQ(ahead.newest, 3u);
}

TEST(ChangeFeedTest, RetentionDropsTheOldestAndRefusesPositionsBeforeWhatIsKept) {
  ChangeFeed feed;
  const size_t one = CreateDoc("a", 1).size();  // every document here has the same size
  for (int i = 0; i < 5; ++i) feed.Append(Draft("a"), 3 * one);
  EXPECT_EQ(feed.kept(), 3u);
  EXPECT_EQ(feed.kept_bytes(), 3 * one);
  FeedRead from_start = feed.Read(kBeginning, 10);
  ASSERT_EQ(from_start.status, FeedRead::Status::kOk);
  EXPECT_EQ(from_start.docs.front(), CreateDoc("a", 3));
  EXPECT_EQ(from_start.oldest, 2u);
  EXPECT_EQ(feed.Read(After(2), 10).docs.size(), 3u);  // the oldest position still readable
  FeedRead old = feed.Read(After(1), 10);
  EXPECT_EQ(old.status, FeedRead::Status::kTooOld);
  EXPECT_EQ(old.oldest, 2u);
  EXPECT_TRUE(old.docs.empty());
  // A smaller retention applies at the next append; the newest change is always kept.
  feed.Append(Draft("a"), 1);
  EXPECT_EQ(feed.kept(), 1u);
  EXPECT_EQ(feed.Read(kBeginning, 10).docs, std::vector<std::string>{CreateDoc("a", 6)});
  EXPECT_EQ(feed.Read(After(4), 10).status, FeedRead::Status::kTooOld);
  EXPECT_EQ(feed.Read(After(5), 10).status, FeedRead::Status::kOk);
}

TEST(ChangeFeedTest, AWaiterIsToldOnceOfTheNextChangeOnlyWhenNothingWasThere) {
  ChangeFeed feed;
  auto waiter = std::make_shared<CountingWaiter>();
  feed.Append(Draft("a"), 1 << 20);
  // Something to read: not registered.
  EXPECT_EQ(feed.Read(After(0), 10, waiter).docs.size(), 1u);
  feed.Append(Draft("b"), 1 << 20);
  EXPECT_EQ(waiter->calls.load(), 0);
  // Nothing after 2: registered in the same step, told of the next change, then forgotten.
  EXPECT_TRUE(feed.Read(After(2), 10, waiter).docs.empty());
  feed.Append(Draft("c"), 1 << 20);
  EXPECT_EQ(waiter->calls.load(), 1);
  feed.Append(Draft("d"), 1 << 20);
  EXPECT_EQ(waiter->calls.load(), 1);
  // A waiter that stops waiting is not told.
  EXPECT_TRUE(feed.Read(kNow, 10, waiter).docs.empty());
  feed.StopWaiting(waiter.get());
  feed.Append(Draft("e"), 1 << 20);
  EXPECT_EQ(waiter->calls.load(), 1);
  // A waiter that went away without a word drops out.
  {
    auto gone = std::make_shared<CountingWaiter>();
    feed.Read(kNow, 10, gone);
  }
  feed.Append(Draft("f"), 1 << 20);
}

TEST(ChangeFeedTest, ClosingWakesWaitersAndRefusesEverything) {
  ChangeFeed feed;
  feed.Append(Draft("a"), 1 << 20);
  auto waiter = std::make_shared<CountingWaiter>();
  feed.Read(kNow, 10, waiter);
  feed.Close();
  EXPECT_EQ(waiter->calls.load(), 1);
  EXPECT_EQ(feed.Read(kBeginning, 10).status, FeedRead::Status::kClosed);
  EXPECT_EQ(feed.Append(Draft("b"), 1 << 20), 0u);
  EXPECT_EQ(feed.kept(), 0u);
}

TEST(ChangeFeedTest, ConcurrentAppendsGetEveryLsnOnceInEachWritersOrder) {
  ChangeFeed feed;
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&feed, t] {
      for (int i = 0; i < kEach; ++i) feed.Append(Draft(std::to_string(t) + "_" + std::to_string(i)), 1ull << 40);
    });
  }
  for (auto& th : threads) th.join();
  FeedRead all = feed.Read(kBeginning, SIZE_MAX);
  ASSERT_EQ(all.docs.size(), static_cast<size_t>(kThreads * kEach));
  std::map<int, int> next;  // per writer: the index it must show next
  for (size_t k = 0; k < all.docs.size(); ++k) {
    const std::string& doc = all.docs[k];
    size_t id_at = doc.find("\"id\":\"") + 6;
    size_t underscore = doc.find('_', id_at);
    int t = std::stoi(doc.substr(id_at, underscore - id_at));
    int i = std::stoi(doc.substr(underscore + 1));
    EXPECT_EQ(i, next[t]++) << "writer " << t;
    EXPECT_NE(doc.find("\"lsn\":" + std::to_string(k + 1) + ","), std::string::npos) << doc;
  }
}

// ---- As ItemStore fills it ----

class ItemFeedTest : public ::testing::Test {
 protected:
  void SetTtl(int64_t ttl) { catalog_.FindOrCreate(0, "c")->default_ttl.store(ttl); }
  ContainerPart& Part(ItemStore& store) { return *store.FindOrCreate(0, "c"); }
  uint64_t Put(const std::string& id, const std::string& members, int64_t ttl = kNoItemTtl, ItemStore* store = nullptr) {
    ItemStore& s = store ? *store : store_;
    ParsedItem body{members, ttl};
    PutOutcome o = s.Put(Part(s), id, std::move(body), PutCondition::kAlways, std::nullopt, now_);
    EXPECT_TRUE(o.written);
    return o.etag;
  }
  bool Delete(const std::string& id) { return store_.Delete(Part(store_), id, now_); }
  bool Live(const std::string& id) { return store_.Get(Part(store_), id, now_) != nullptr; }
  // Every change after `after`.
  std::vector<std::string> Changes(uint64_t after = 0) {
    FeedRead r = catalog_.FindOrCreate(0, "c")->feed.Read(After(after), SIZE_MAX);
    EXPECT_EQ(r.status, FeedRead::Status::kOk);
    return r.docs;
  }
  uint64_t Newest() { return catalog_.FindOrCreate(0, "c")->feed.newest(); }
  // Background reclamation; `budget` deletions admitted, then refusals.
  void Reclaim(size_t budget = SIZE_MAX) {
    for (int i = 0; i < 100; ++i) {
      bool more = store_.Reclaim(now_, SIZE_MAX, [&](const Item&) { return budget > 0 && budget-- > 0; });
      if (!more || store_.reclaim_blocked()) return;
    }
  }
  static std::string S(int64_t ms) { return std::to_string(ms / 1000); }
  static std::string Etag(uint64_t etag) { return EtagText(etag); }
  std::string Current(const std::string& id, const std::string& members, int64_t ts_ms, uint64_t etag) {
    std::string doc;
    RenderItem(id, members, ts_ms / 1000, etag, &doc);
    return doc;
  }
  std::string TtlDelete(const std::string& id, int64_t ts_ms, uint64_t lsn, int64_t crts_ms, uint64_t prev,
                        int64_t deadline_ms) {
    return "{\"previous\":{\"id\":\"" + id + "\",\"_ts\":" + S(ts_ms) + "},\"metadata\":{\"operationType\":\"delete\",\"lsn\":" +
           std::to_string(lsn) + ",\"crts\":" + S(crts_ms) + ",\"previousImageLSN\":" + std::to_string(prev) +
           ",\"timeToLiveExpired\":true,\"id\":\"" + id + "\",\"expiredAt\":" + S(deadline_ms) +
           ",\"reclaimLagMs\":" + std::to_string(crts_ms - deadline_ms) + "}}";
  }

  int64_t now_ = kStart;
  ContainerCatalog catalog_;
  ItemStore store_{0, catalog_, kStart};
};

TEST_F(ItemFeedTest, CreateReplaceAndDeleteDocuments) {
  uint64_t e1 = Put("a", "\"v\":1");
  now_ += 2500;
  uint64_t e2 = Put("a", "\"v\":2,\"ttl\":-1");
  now_ += 1000;
  ASSERT_TRUE(Delete("a"));
  EXPECT_FALSE(Delete("a"));  // nothing live: no change
  std::vector<std::string> changes = Changes();
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0], "{\"current\":" + Current("a", "\"v\":1", kStart, e1) +
                            ",\"metadata\":{\"operationType\":\"create\",\"lsn\":1,\"crts\":" + S(kStart) + "}}");
  EXPECT_EQ(changes[1], "{\"current\":" + Current("a", "\"v\":2,\"ttl\":-1", kStart + 2500, e2) +
                            ",\"metadata\":{\"operationType\":\"replace\",\"lsn\":2,\"crts\":" + S(kStart + 2500) +
                            ",\"previousImageLSN\":1}}");
  EXPECT_EQ(changes[2], "{\"previous\":{\"id\":\"a\",\"_ts\":" + S(kStart + 2500) +
                            "},\"metadata\":{\"operationType\":\"delete\",\"lsn\":3,\"crts\":" + S(kStart + 3500) +
                            ",\"previousImageLSN\":2,\"timeToLiveExpired\":false,\"id\":\"a\"}}");
  // Written again after its delete: a create with no earlier image.
  uint64_t e3 = Put("a", "");
  EXPECT_EQ(Changes(3), std::vector<std::string>{"{\"current\":" + Current("a", "", now_, e3) +
                                                 ",\"metadata\":{\"operationType\":\"create\",\"lsn\":4,\"crts\":" +
                                                 S(now_) + "}}"});
}

TEST_F(ItemFeedTest, IdsAreEscapedInDeletes) {
  Put("q\"t\\x", "");
  ASSERT_TRUE(Delete("q\"t\\x"));
  EXPECT_NE(Changes(1).at(0).find("{\"previous\":{\"id\":\"q\\\"t\\\\x\","), std::string::npos);
  EXPECT_NE(Changes(1).at(0).find("\"id\":\"q\\\"t\\\\x\"}}"), std::string::npos);
}

TEST_F(ItemFeedTest, ExpiryEntersWhenReclaimedNotAtTheDeadline) {
  SetTtl(10);
  Put("a", "");
  const int64_t deadline = kStart + 10'000;
  now_ = deadline;
  EXPECT_EQ(Newest(), 1u);  // expired and invisible, but not yet deleted: no change yet
  now_ = deadline + 1234;
  Reclaim();
  EXPECT_EQ(Changes(1), std::vector<std::string>{TtlDelete("a", kStart, 2, deadline + 1234, 1, deadline)});
}

TEST_F(ItemFeedTest, ARefusingBudgetDelaysTheDeletionAndTheLagShows) {
  SetTtl(10);
  Put("a", "");
  now_ += 1;
  Put("b", "");
  now_ = kStart + 10'001;
  Reclaim(1);  // the budget admits one deletion, the oldest deadline
  EXPECT_EQ(Changes(2), std::vector<std::string>{TtlDelete("a", kStart, 3, now_, 1, kStart + 10'000)});
  now_ += 5'000;  // a later second brings budget for the other
  Reclaim();
  EXPECT_EQ(Changes(3), std::vector<std::string>{TtlDelete("b", kStart + 1, 4, now_, 2, kStart + 10'001)});
}

TEST_F(ItemFeedTest, ExpiryMetByAReadOrAWriteEntersThen) {
  SetTtl(5);
  Put("a", "");
  Put("b", "");
  now_ = kStart + 6'000;
  EXPECT_FALSE(Live("a"));  // a read reclaims it: the deletion enters now
  EXPECT_EQ(Changes(2), std::vector<std::string>{TtlDelete("a", kStart, 3, now_, 1, kStart + 5'000)});
  uint64_t e = Put("b", "\"v\":1");  // a write over an expired item: its deletion, then a create
  std::vector<std::string> after = Changes(3);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0], TtlDelete("b", kStart, 4, now_, 2, kStart + 5'000));
  EXPECT_EQ(after[1], "{\"current\":" + Current("b", "\"v\":1", now_, e) +
                          ",\"metadata\":{\"operationType\":\"create\",\"lsn\":5,\"crts\":" + S(now_) + "}}");
}

TEST_F(ItemFeedTest, ContainerTtlOffMinusOneAndAChangedDefault) {
  // OFF: nothing expires, not even an own ttl.
  Put("own", "\"ttl\":5", 5);
  Put("inherit", "");
  now_ = kStart + 100'000;
  Reclaim();
  EXPECT_EQ(Newest(), 2u);
  // -1: only the own ttl counts; its deadline was long ago, so it goes at once.
  SetTtl(-1);
  Reclaim();
  EXPECT_EQ(Changes(2), std::vector<std::string>{TtlDelete("own", kStart, 3, now_, 1, kStart + 5'000)});
  // A default of 200 s: the inheriting item has 100 s left; lowered to 50 s, it is overdue
  // and its deadline is the one of the new setting.
  SetTtl(200);
  Reclaim();
  EXPECT_EQ(Newest(), 3u);
  SetTtl(50);
  Reclaim();
  EXPECT_EQ(Changes(3), std::vector<std::string>{TtlDelete("inherit", kStart, 4, now_, 2, kStart + 50'000)});
}

TEST_F(ItemFeedTest, TwoShardsShareOneFeedInCommitOrder) {
  ItemStore other{1, catalog_, kStart};
  Put("a", "", kNoItemTtl);
  Put("b", "", kNoItemTtl, &other);
  Put("a", "\"v\":2");
  ASSERT_TRUE(other.Delete(Part(other), "b", now_));
  std::vector<std::string> changes = Changes();
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].rfind("{\"current\":{\"id\":\"a\",", 0), 0u);
  EXPECT_NE(changes[0].find("\"operationType\":\"create\",\"lsn\":1,"), std::string::npos);
  EXPECT_EQ(changes[1].rfind("{\"current\":{\"id\":\"b\",", 0), 0u);
  EXPECT_NE(changes[1].find("\"operationType\":\"create\",\"lsn\":2,"), std::string::npos);
  EXPECT_NE(changes[2].find("\"operationType\":\"replace\",\"lsn\":3,"), std::string::npos);
  EXPECT_NE(changes[3].find("\"operationType\":\"delete\",\"lsn\":4,"), std::string::npos);
  EXPECT_NE(changes[3].find("\"previousImageLSN\":2,"), std::string::npos);
}

TEST_F(ItemFeedTest, RetentionFromTheStoresSetting) {
  std::atomic<uint64_t> retention{1};
  store_.SetChangeFeedRetention(&retention);
  Put("a", "");
  Put("b", "");
  EXPECT_EQ(catalog_.FindOrCreate(0, "c")->feed.kept(), 1u);
  retention = 1 << 20;
  Put("c", "");
  EXPECT_EQ(catalog_.FindOrCreate(0, "c")->feed.kept(), 2u);
}

TEST_F(ItemFeedTest, ADroppedContainersFeedClosesAndANewOneStartsAgain) {
  Put("a", "");
  std::shared_ptr<ContainerInfo> old = catalog_.Find(0, "c");
  auto waiter = std::make_shared<CountingWaiter>();
  old->feed.Read(kNow, 10, waiter);
  ASSERT_TRUE(catalog_.Drop(0, "c"));
  EXPECT_EQ(waiter->calls.load(), 1);
  EXPECT_EQ(old->feed.Read(kBeginning, 10).status, FeedRead::Status::kClosed);
  Put("a", "");  // a new container of the same name
  std::shared_ptr<ContainerInfo> fresh = catalog_.Find(0, "c");
  EXPECT_NE(fresh->id, old->id);
  EXPECT_EQ(fresh->feed.newest(), 1u);
}

}  // namespace
}  // namespace lapse::engine
