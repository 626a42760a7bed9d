// File: tests/engine/container_db_test.cc
//
// Containers belong to a database (engine/container.h): the catalog and each shard's cache of
// it are keyed by (database, name). These tests pin down what that means for the engine: the
// same name in two databases is two containers; dropping a database's containers (FLUSHDB)
// leaves the others alone; SWAPDB and CMOVE re-key the catalog and the shard's cache together
// and the items, settings and figures follow; an item deleted by expiry is reported with the
// database its container is in at that moment; the reclaimer serves every database.
// The server holds every shard while it re-keys (server/container_commands.cc, keyspace_commands.cc);
// here one ItemStore stands for a shard, driven by hand with a manual time value.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/container.h"
#include "engine/item_store.h"
#include "engine/key_events.h"
#include "engine/shard.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'123;

// Records the item events the store reports.
class ItemEventLog : public KeyEventListener {
 public:
  void KeyExpired(uint32_t, std::string_view) override {}
  void FieldsExpired(uint32_t, std::string_view) override {}
  void KeyEvicted(uint32_t, std::string_view) override {}
  void KeyCreated(uint32_t, std::string_view) override {}
  void KeyMissed(uint32_t, std::string_view) override {}
  void ItemExpired(uint32_t db, std::string_view container, std::string_view id) override {
    expired.emplace_back(db, std::string(container), std::string(id));
  }
  void ItemEvicted(uint32_t db, std::string_view container, std::string_view id) override {
    evicted.emplace_back(db, std::string(container), std::string(id));
  }
  std::vector<std::tuple<uint32_t, std::string, std::string>> expired;
  std::vector<std::tuple<uint32_t, std::string, std::string>> evicted;
};

class ContainerDbTest : public ::testing::Test {
 protected:
  void SetTtl(uint32_t db, const std::string& name, int64_t ttl) {
    catalog_.FindOrCreate(db, name)->default_ttl.store(ttl);
  }
  // Writes item `id` (payload `v`) into container `name` of database `db`, creating it.
  void Put(uint32_t db, const std::string& name, const std::string& id, int v = 1, int64_t ttl = kNoItemTtl) {
    ParsedItem body;
    body.members = "\"v\":" + std::to_string(v);
    body.ttl = ttl;
    ASSERT_TRUE(store_.Put(*store_.FindOrCreate(db, name), id, std::move(body), PutCondition::kAlways, std::nullopt, now_)
                    .written);
  }
  // The live item's members, or "" when there is none (or no such container).
  std::string Members(uint32_t db, const std::string& name, const std::string& id) {
    ContainerPart* part = store_.Find(db, name);
    const Item* item = part ? store_.Get(*part, id, now_) : nullptr;
    return item ? item->members : "";
  }
  uint64_t Live(uint32_t db, const std::string& name) {
    ContainerPart* part = store_.Find(db, name);
    return part ? store_.Figures(*part, now_).live : 0;
  }
  void ReclaimAll() {
    for (int i = 0; i < 100; ++i) {
      if (!store_.Reclaim(now_, SIZE_MAX, [](const Item&) { return true; })) return;
    }
    ADD_FAILURE() << "Reclaim never caught up";
  }

  int64_t now_ = kStart;
  ContainerCatalog catalog_;
  ItemStore store_{0, catalog_, kStart};
};

TEST_F(ContainerDbTest, SameNameInTwoDatabasesIsTwoContainers) {
  SetTtl(0, "c", 10);
  SetTtl(1, "c", -1);
  Put(0, "c", "a", 1);
  Put(1, "c", "a", 2);
  Put(1, "c", "b", 3);
  auto in0 = catalog_.Find(0, "c"), in1 = catalog_.Find(1, "c");
  ASSERT_NE(in0, nullptr);
  ASSERT_NE(in1, nullptr);
  EXPECT_NE(in0, in1);
  EXPECT_NE(in0->id, in1->id);
  EXPECT_EQ(in0->db.load(), 0u);
  EXPECT_EQ(in1->db.load(), 1u);
  EXPECT_EQ(in0->default_ttl.load(), 10);
  EXPECT_EQ(in1->default_ttl.load(), -1);
  EXPECT_EQ(Members(0, "c", "a"), "\"v\":1");
  EXPECT_EQ(Members(1, "c", "a"), "\"v\":2");
  EXPECT_EQ(Members(0, "c", "b"), "");
  EXPECT_EQ(Live(0, "c"), 1u);
  EXPECT_EQ(Live(1, "c"), 2u);
  // Invisible from any other database, and not created by looking.
  EXPECT_EQ(store_.Find(2, "c"), nullptr);
  EXPECT_EQ(catalog_.Find(2, "c"), nullptr);
  EXPECT_EQ(catalog_.Names(0), std::vector<std::string>{"c"});
  EXPECT_EQ(catalog_.Names(2), std::vector<std::string>{});
  EXPECT_EQ(catalog_.Count(), 2u);
  EXPECT_EQ(catalog_.CountsByDb(), (std::map<uint32_t, size_t>{{0, 1}, {1, 1}}));
  // A deletion in one leaves the other alone.
  ASSERT_TRUE(store_.Delete(*store_.Find(1, "c"), "a", now_));
  EXPECT_EQ(Members(0, "c", "a"), "\"v\":1");
}

TEST_F(ContainerDbTest, DropDbDropsOnlyThatDatabasesContainers) {
  Put(0, "a", "x");
  Put(3, "a", "x");
  Put(3, "b", "y");
  Put(4, "b", "y");
  EXPECT_EQ(store_.items_stored(), 4u);
  catalog_.DropDb(3);
  catalog_.DropDb(9);  // no containers there: nothing happens
  EXPECT_EQ(store_.Find(3, "a"), nullptr);
  EXPECT_EQ(store_.Find(3, "b"), nullptr);
  EXPECT_EQ(catalog_.Names(3), std::vector<std::string>{});
  EXPECT_EQ(Members(0, "a", "x"), "\"v\":1");
  EXPECT_EQ(Members(4, "b", "y"), "\"v\":1");
  EXPECT_EQ(catalog_.CountsByDb(), (std::map<uint32_t, size_t>{{0, 1}, {4, 1}}));
  ReclaimAll();  // the dropped parts' memory is freed in the background
  EXPECT_EQ(store_.items_stored(), 2u);
  // A container re-created under the name starts empty.
  Put(3, "a", "z");
  EXPECT_EQ(Live(3, "a"), 1u);
  EXPECT_EQ(Members(3, "a", "x"), "");
  catalog_.DropAll();
  EXPECT_EQ(catalog_.Count(), 0u);
  EXPECT_EQ(store_.Find(0, "a"), nullptr);
  EXPECT_EQ(store_.Find(4, "b"), nullptr);
  ReclaimAll();
  EXPECT_EQ(store_.items_stored(), 0u);
}

TEST_F(ContainerDbTest, SwapDbsCarriesContainersItemsAndSettings) {
  SetTtl(0, "only0", 100);
  Put(0, "only0", "a");
  Put(0, "both", "a", 10);
  Put(1, "both", "a", 11);
  auto only0 = catalog_.Find(0, "only0");
  // The catalog and the shard's cache are re-keyed in the same step, as SWAPDB does.
  catalog_.SwapDbs(0, 1);
  store_.SwapDbs(0, 1);
  EXPECT_EQ(store_.Find(0, "only0"), nullptr);
  ASSERT_NE(store_.Find(1, "only0"), nullptr);
  EXPECT_EQ(store_.Find(1, "only0")->info, only0);  // the same container, not a copy
  EXPECT_EQ(only0->db.load(), 1u);
  EXPECT_EQ(only0->default_ttl.load(), 100);
  EXPECT_EQ(Members(1, "only0", "a"), "\"v\":1");
  EXPECT_EQ(Members(0, "both", "a"), "\"v\":11");
  EXPECT_EQ(Members(1, "both", "a"), "\"v\":10");
  // With a database that had no containers, and with one the store never cached.
  catalog_.SwapDbs(1, 7);
  store_.SwapDbs(1, 7);
  EXPECT_EQ(catalog_.Names(1), std::vector<std::string>{});
  EXPECT_EQ(catalog_.Names(7), (std::vector<std::string>{"both", "only0"}));
  EXPECT_EQ(Members(7, "only0", "a"), "\"v\":1");
  EXPECT_EQ(store_.Find(1, "both"), nullptr);
  // Swapping a database with itself changes nothing.
  catalog_.SwapDbs(7, 7);
  store_.SwapDbs(7, 7);
  EXPECT_EQ(Members(7, "both", "a"), "\"v\":10");
  EXPECT_EQ(store_.items_stored(), 3u);
}

TEST_F(ContainerDbTest, ShardSwapDbsSwapsContainersWithKeys) {
  Shard shard(0, 4, now_, catalog_);
  shard.db(2).Put("k", "v", ValueType::kString, kNoDeadline, now_);
  ParsedItem body;
  body.members = "\"v\":1";
  ItemStore& items = shard.items();
  ASSERT_TRUE(items.Put(*items.FindOrCreate(2, "c"), "i", std::move(body), PutCondition::kAlways, std::nullopt, now_)
                  .written);
  catalog_.SwapDbs(2, 3);
  shard.SwapDbs(2, 3, now_);
  EXPECT_EQ(shard.db(2).Find("k", now_), nullptr);
  EXPECT_NE(shard.db(3).Find("k", now_), nullptr);
  EXPECT_EQ(items.Find(2, "c"), nullptr);
  ContainerPart* moved = items.Find(3, "c");
  ASSERT_NE(moved, nullptr);
  EXPECT_NE(items.Get(*moved, "i", now_), nullptr);
}

TEST_F(ContainerDbTest, MoveTakesItemsSettingsAndBudgetAlong) {
  SetTtl(0, "c", 30);
  Put(0, "c", "a");
  Put(0, "c", "b", 2, 5);
  auto info = catalog_.Find(0, "c");
  info->ru_per_second.store(50);
  ASSERT_TRUE(catalog_.Move("c", 0, 2));
  store_.MoveToDb("c", 0, 2);
  EXPECT_EQ(catalog_.Find(0, "c"), nullptr);
  EXPECT_EQ(store_.Find(0, "c"), nullptr);
  EXPECT_EQ(catalog_.Find(2, "c"), info);
  EXPECT_EQ(info->db.load(), 2u);
  EXPECT_EQ(info->ru_per_second.load(), 50);
  EXPECT_EQ(Live(2, "c"), 2u);
  EXPECT_EQ(Members(2, "c", "b"), "\"v\":2");
  // Its expiry goes on where it was: the own-ttl item's wheel record follows the item.
  now_ += 5'000;
  EXPECT_EQ(Live(2, "c"), 1u);
  ReclaimAll();
  EXPECT_EQ(store_.items_stored(), 1u);
}

TEST_F(ContainerDbTest, MoveRefusesAndChangesNothing) {
  Put(0, "c", "a", 1);
  Put(1, "c", "a", 2);
  EXPECT_FALSE(catalog_.Move("c", 0, 1));       // the target has that name
  EXPECT_FALSE(catalog_.Move("absent", 0, 1));  // nothing to move
  EXPECT_FALSE(catalog_.Move("c", 5, 1));       // a database without containers
  EXPECT_FALSE(catalog_.Move("c", 0, 0));       // onto itself
  EXPECT_EQ(catalog_.Find(0, "c")->db.load(), 0u);
  EXPECT_EQ(catalog_.Find(1, "c")->db.load(), 1u);
  EXPECT_EQ(Members(0, "c", "a"), "\"v\":1");
  EXPECT_EQ(Members(1, "c", "a"), "\"v\":2");
  EXPECT_EQ(catalog_.Count(), 2u);
}

TEST_F(ContainerDbTest, MoveOntoADroppedIncarnationStillCachedInTheTarget) {
  Put(2, "c", "old");
  ASSERT_TRUE(catalog_.Drop(2, "c"));  // the shard still caches the dropped part under (2, c)
  Put(0, "c", "new");
  ASSERT_TRUE(catalog_.Move("c", 0, 2));
  store_.MoveToDb("c", 0, 2);
  EXPECT_EQ(Members(2, "c", "new"), "\"v\":1");
  EXPECT_EQ(Members(2, "c", "old"), "");
  EXPECT_EQ(store_.items_stored(), 2u);
  ReclaimAll();  // the dropped part is freed, the moved one kept
  EXPECT_EQ(store_.items_stored(), 1u);
  EXPECT_EQ(Live(2, "c"), 1u);
  // A shard that never cached the container finds it in its new database from the catalog.
  ItemStore other(1, catalog_, now_);
  ASSERT_NE(other.Find(2, "c"), nullptr);
  EXPECT_EQ(other.Find(2, "c")->info, catalog_.Find(2, "c"));
  EXPECT_EQ(other.Find(0, "c"), nullptr);
}

TEST_F(ContainerDbTest, ExpiredItemsAreReportedInTheirContainersDatabase) {
  ItemEventLog log;
  store_.SetKeyEventListener(&log);
  SetTtl(3, "c", 1);
  SetTtl(5, "c", 1);
  Put(3, "c", "lazy");
  Put(5, "c", "background");
  SetTtl(3, "m", -1);  // items expire by their own ttl only
  Put(3, "m", "moved", 1, 2);
  ASSERT_TRUE(catalog_.Move("m", 3, 6));
  store_.MoveToDb("m", 3, 6);
  now_ += 1'000;
  EXPECT_EQ(Members(3, "c", "lazy"), "");  // a read meets it expired
  ReclaimAll();
  now_ += 1'000;
  ReclaimAll();
  using Event = std::tuple<uint32_t, std::string, std::string>;
  EXPECT_EQ(log.expired, (std::vector<Event>{{3, "c", "lazy"}, {5, "c", "background"}, {6, "m", "moved"}}));
  store_.SetKeyEventListener(nullptr);
}

TEST_F(ContainerDbTest, ReclaimServesEveryDatabaseOldestDeadlineFirst) {
  SetTtl(0, "c", 3);
  SetTtl(9, "c", 1);
  SetTtl(4, "d", 2);
  Put(0, "c", "third");
  Put(9, "c", "first");
  Put(4, "d", "second");
  now_ += 3'000;
  std::vector<std::string> order;
  while (store_.Reclaim(now_, SIZE_MAX, [&](const Item& item) {
    order.push_back(item.id);
    return true;
  })) {
  }
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(store_.items_stored(), 0u);
  EXPECT_EQ(store_.Backlog(now_), 0u);
}

TEST_F(ContainerDbTest, OnlyEvictableContainersOfferAndGiveUpTheirLiveItems) {
  ItemEventLog log;
  store_.SetKeyEventListener(&log);
  SetTtl(2, "cache", 5);
  for (int i = 0; i < 8; ++i) Put(2, "cache", "i" + std::to_string(i));
  for (int i = 0; i < 8; ++i) Put(2, "data", "i" + std::to_string(i));
  uint64_t seed = 7;
  std::set<std::string> offered;
  auto sample = [&] {
    offered.clear();
    store_.SampleEvictable(2, &seed, 64, now_, [&](const Entry&, const ContainerPart& part, const Item& item) {
      offered.insert(part.info->name + "/" + item.id);
    });
  };
  auto never = [](const Item&) { ADD_FAILURE() << "billed an item that was not evicted"; };
  sample();
  EXPECT_TRUE(offered.empty());
  EXPECT_EQ(store_.Evict(2, "cache", "i0", now_, never), 0u);

  catalog_.Find(2, "cache")->evictable.store(true);
  sample();
  ASSERT_FALSE(offered.empty());
  for (const std::string& name : offered) EXPECT_EQ(name.rfind("cache/", 0), 0u) << name;
  // Another database's containers are not this one's.
  store_.SampleEvictable(3, &seed, 64, now_, [&](const Entry&, const ContainerPart&, const Item&) { ADD_FAILURE(); });

  std::vector<std::string> billed;
  EXPECT_GT(store_.Evict(2, "cache", "i0", now_, [&](const Item& item) { billed.push_back(item.id); }), 0u);
  EXPECT_EQ(billed, std::vector<std::string>{"i0"});
  EXPECT_EQ(Members(2, "cache", "i0"), "");
  EXPECT_EQ(Live(2, "cache"), 7u);
  EXPECT_EQ(catalog_.Find(2, "cache")->evicted_items.load(), 1u);
  using Event = std::tuple<uint32_t, std::string, std::string>;
  EXPECT_EQ(log.evicted, (std::vector<Event>{{2, "cache", "i0"}}));
  EXPECT_TRUE(log.expired.empty());
  // Gone, or not evictable: nothing to do.
  EXPECT_EQ(store_.Evict(2, "cache", "i0", now_, never), 0u);
  EXPECT_EQ(store_.Evict(2, "data", "i1", now_, never), 0u);
  EXPECT_EQ(Live(2, "data"), 8u);

  // Expired items are the reclaimer's (forced first under memory pressure), never sampled.
  now_ += 5'000;
  sample();
  EXPECT_TRUE(offered.empty());
  EXPECT_EQ(store_.Evict(2, "cache", "i1", now_, never), 0u);
  store_.SetKeyEventListener(nullptr);
}

}  // namespace
}  // namespace lapse::engine
