// Point-in-time background saves (engine/snapshot.h): a save is started on a shard, then keys
// are overwritten, deleted, created, expired, renamed, moved, flushed, swapped, edited in
// place (hash fields, field TTLs, list pushes) and the table grows and shrinks, between walk
// slices and before the walk reaches them. The file loads back to exactly the keys and
// values of the start, each key written once; a later save sees the later state. Items of
// containers are held to the same rule: replaced, deleted, created, expired and reclaimed,
// moved to another database and dropped with their container during the walk.
#include "engine/snapshot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/collection.h"
#include "engine/container.h"
#include "engine/item_store.h"
#include "engine/list.h"
#include "engine/shard.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr size_t kDatabases = 2;

class Loaded final : public rdb::LoadTarget {
 public:
  Loaded() : dbs{Db(kStart), Db(kStart)} {}
  Db* DbFor(uint32_t db, std::string_view) override { return db < kDatabases ? &dbs[db] : nullptr; }
  bool OnLapseAux(std::string_view key, std::string_view value, int64_t) override {
    if (key != rdb::kAuxItems) return true;
    uint32_t db;
    std::string container;
    std::vector<rdb::ItemRecord> batch;
    if (!rdb::DecodeItems(value, &db, &container, &batch)) return false;
    for (rdb::ItemRecord& item : batch) {
      std::string where = std::to_string(db) + "/" + container + "/" + item.id;
      if (!items.emplace(where, std::move(item.members)).second) ++items_written_twice;
    }
    return true;
  }
  std::string Value(uint32_t db, std::string_view key) {
    Entry* e = dbs[db].Find(key, kStart);
    return e == nullptr ? "<none>" : std::string(e->value());
  }
  Db dbs[kDatabases];
  std::map<std::string, std::string> items;  // "db/container/id" -> members
  int items_written_twice = 0;
};

class SnapshotTest : public ::testing::Test {
 protected:
  SnapshotTest() : shard_(0, kDatabases, kStart, catalog_) {}

  Db& db(size_t i) { return shard_.db(i); }
  void PutString(size_t d, const std::string& key, const std::string& value, int64_t deadline = kNoDeadline) {
    db(d).Put(key, value, ValueType::kString, deadline, now_);
  }

  // Writes item `id` of container `name` (database `d`) whose members are `"v":payload`.
  void PutItem(uint32_t d, const std::string& name, const std::string& id, const std::string& payload,
               int64_t written_ms) {
    ParsedItem body;
    body.members = "\"v\":" + payload;
    body.ttl = kNoItemTtl;
    ContainerPart* part = shard_.items().FindOrCreate(d, name);
    ASSERT_TRUE(shard_.items().Put(*part, id, std::move(body), PutCondition::kAlways, std::nullopt, written_ms).written);
  }

  // Starts a save of every key and of the items of every container the catalog has now, as
  // the server captures them.
  // `between` runs after the capture, before the shard's view starts (CDROP and CSETTTL hold
  // no shard, so they can).
  void Begin(const std::function<void()>& between = {}) {
    std::vector<SavedContainer> saved;
    for (uint32_t d = 0; d < kDatabases; ++d) {
      for (const std::string& name : catalog_.Names(d)) {
        std::shared_ptr<ContainerInfo> info = catalog_.Find(d, name);
        saved.push_back({info, d, info->default_ttl.load()});
      }
    }
    if (between) between();
    snapshot_ = std::make_unique<ShardSnapshot>(shard_, rdb::SnapshotOptions{}, kStart, nullptr, saved);
  }
  // One walk slice of `keys` entries, draining the records into the file as the server does.
  bool Slice(size_t keys) {
    bool done = snapshot_->WalkSlice(keys);
    snapshot_->TakeRecords(&records_);
    return done;
  }
  // Finishes the walk and loads the file at the start time.
  void FinishAndLoad(Loaded& back, rdb::LoadStats* stats) {
    while (!Slice(7)) {
    }
    rdb::StringSink sink;
    rdb::SnapshotWriter writer(sink, {});
    writer.Header(kStart, 0);
    writer.Records(records_);
    ASSERT_TRUE(writer.Finish());
    records_.clear();
    ASSERT_EQ(rdb::LoadSnapshot(sink.data, back, limits_, kStart, stats), std::nullopt);
  }

  ContainerCatalog catalog_;
  Shard shard_;
  CollectionLimits limits_;
  int64_t now_ = kStart;
  std::unique_ptr<ShardSnapshot> snapshot_;
  std::string records_;
};

TEST_F(SnapshotTest, ChangesBeforeTheWalkReachesAKeyLeaveItsStartValue) {
  for (int i = 0; i < 400; ++i) PutString(0, "k" + std::to_string(i), "v0-" + std::to_string(i));
  PutString(0, "expires-during", "old", kStart + 10);
  PutString(0, "expired-at-start", "old", kStart - 1 + 1);  // due exactly at the start
  Begin();
  ASSERT_FALSE(Slice(50));
  now_ = kStart + 20;
  for (int i = 0; i < 400; i += 4) PutString(0, "k" + std::to_string(i), "v1-" + std::to_string(i));  // overwrite
  for (int i = 1; i < 400; i += 4) ASSERT_TRUE(db(0).Erase("k" + std::to_string(i), now_));            // delete
  for (int i = 0; i < 100; ++i) PutString(0, "new" + std::to_string(i), "x");                         // create
  Entry* appended = db(0).Find("k2", now_);                                                             // grow in place
  appended = db(0).ReserveValue(appended, 4096);
  std::memcpy(appended->mutable_value(), "XX", 2);
  Entry* renamed = db(0).Extract("k3", now_);                                                           // RENAME
  ASSERT_NE(renamed, nullptr);
  Entry* fresh = Entry::Create("k3-renamed", renamed->value(), renamed->type(), kNoDeadline);
  Entry::Destroy(renamed);
  db(0).Adopt(fresh, now_);
  while (db(0).Reclaim(now_, 1000)) {  // "expires-during" goes now
  }
  EXPECT_EQ(db(0).Find("expires-during", now_), nullptr);
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 401u);  // the 400 and "expires-during", each once
  for (int i = 0; i < 400; ++i) EXPECT_EQ(back.Value(0, "k" + std::to_string(i)), "v0-" + std::to_string(i)) << i;
  EXPECT_EQ(back.Value(0, "expires-during"), "old");
  EXPECT_EQ(back.Value(0, "expired-at-start"), "<none>");
  EXPECT_EQ(back.Value(0, "new0"), "<none>");
  EXPECT_EQ(back.Value(0, "k3-renamed"), "<none>");
}

// A slice ends after a few entries when another thread waits for the shard (the server's
// WithShardUntilWanted), yet every slice takes at least one step, so a walk on a shard that
// is always wanted still ends, and writes every key once.
TEST_F(SnapshotTest, ASliceEndsEarlyWhileTheShardIsWantedButAlwaysMovesOn) {
  for (int i = 0; i < 400; ++i) PutString(0, "k" + std::to_string(i), "v" + std::to_string(i));
  Begin();
  std::atomic<uint32_t> waiters{1};
  size_t visited = 0;
  ASSERT_FALSE(snapshot_->WalkSlice(1000, &visited, &waiters));
  EXPECT_LT(visited, 100u);  // a few entries, not the slice of 1000
  EXPECT_GT(visited, 0u);
  size_t slices = 1;
  while (!snapshot_->WalkSlice(1000, &visited, &waiters)) ASSERT_LT(++slices, 10'000u) << "the walk stopped moving";
  EXPECT_EQ(visited, 400u);
  EXPECT_GT(slices, 1u);
  snapshot_->TakeRecords(&records_);
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 400u);
  for (int i = 0; i < 400; ++i) EXPECT_EQ(back.Value(0, "k" + std::to_string(i)), "v" + std::to_string(i)) << i;
}

TEST_F(SnapshotTest, CollectionsEditedInPlaceAndFieldTtlsKeepTheirStartState) {
  Entry* h = hash::Create(db(0), "h", now_);
  for (int i = 0; i < 300; ++i) hash::Set(db(0), h, "f" + std::to_string(i), "v0", limits_);  // a table hash
  Entry* small = hash::Create(db(0), "small", now_);
  hash::Set(db(0), small, "a", "1", limits_);
  Entry* l = list::Create(db(0), "l", now_);
  for (int i = 0; i < 3; ++i) list::Push(db(0), l, list::End::kTail, std::to_string(i), limits_);
  Begin();
  Entry* e = db(0).Find("h", now_);
  hash::Set(db(0), e, "f0", "v1", limits_);
  hash::Set(db(0), e, "added", "v1", limits_);
  ASSERT_EQ(hash::SetFieldDeadline(db(0), e, "f1", kStart + 5, hash::TtlCondition::kAlways, now_, limits_), 1);
  e = db(0).Find("small", now_);
  hash::Delete(db(0), e, "a");
  e = db(0).Find("l", now_);
  list::Push(db(0), e, list::End::kHead, "pushed", limits_);
  now_ = kStart + 10;
  while (db(0).Reclaim(now_, 1000)) {  // the field TTL set during the save comes due
  }
  EXPECT_FALSE(hash::Get(db(0).Find("h", now_), "f1").has_value());
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  Entry* loaded = back.dbs[0].Find("h", kStart);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(hash::Size(loaded), 300u);
  EXPECT_EQ(hash::Get(loaded, "f0"), "v0");
  EXPECT_EQ(hash::Get(loaded, "f1"), "v0");
  EXPECT_EQ(hash::FieldDeadline(loaded, "f1"), -1);  // no TTL at the start
  EXPECT_FALSE(hash::Get(loaded, "added").has_value());
  ASSERT_NE(back.dbs[0].Find("small", kStart), nullptr);
  EXPECT_EQ(hash::Get(back.dbs[0].Find("small", kStart), "a"), "1");
  EXPECT_EQ(list::Size(back.dbs[0].Find("l", kStart)), 3u);
}

TEST_F(SnapshotTest, AFieldTtlSetBeforeTheStartIsKept) {
  Entry* h = hash::Create(db(0), "h", now_);
  for (int i = 0; i < 300; ++i) hash::Set(db(0), h, "f" + std::to_string(i), "v", limits_);
  ASSERT_EQ(hash::SetFieldDeadline(db(0), h, "f9", kStart + 50'000, hash::TtlCondition::kAlways, now_, limits_), 1);
  Begin();
  Entry* e = db(0).Find("h", now_);
  ASSERT_EQ(hash::PersistField(e, "f9"), 1);
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(hash::FieldDeadline(back.dbs[0].Find("h", kStart), "f9"), kStart + 50'000);
}

TEST_F(SnapshotTest, GrowingAndShrinkingTheTableDuringTheWalkWritesEachKeyOnce) {
  for (int i = 0; i < 5000; ++i) PutString(0, "k" + std::to_string(i), "v" + std::to_string(i));
  Begin();
  int added = 0, removed = 0, old_removed = 0;
  // Between slices: enough new keys to double the table several times, then deletions of the
  // new keys and most old ones, enough to shrink it (walk positions land mid-rehash).
  while (!Slice(97)) {
    if (added < 40000) {
      for (int j = 0; j < 1000; ++j, ++added) PutString(0, "n" + std::to_string(added), "x");
    } else if (removed < 40000) {
      for (int j = 0; j < 2000; ++j, ++removed) db(0).Erase("n" + std::to_string(removed), now_);
      for (int j = 0; j < 200 && old_removed < 4900; ++j) db(0).Erase("k" + std::to_string(old_removed++), now_);
    }
    db(0).RehashStep(3);
  }
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 5000u);
  EXPECT_EQ(back.dbs[0].stored(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(back.Value(0, "k" + std::to_string(i)), "v" + std::to_string(i)) << i;
}

TEST_F(SnapshotTest, SwapMoveAndFlushKeepEachDatabasesStartKeys) {
  for (int i = 0; i < 300; ++i) {
    PutString(0, "a" + std::to_string(i), "db0");
    PutString(1, "b" + std::to_string(i), "db1");
  }
  Begin();
  ASSERT_FALSE(Slice(100));
  shard_.SwapDbs(0, 1, now_);  // SWAPDB: the tables change slots, the file keeps their numbers
  Entry* moved = db(1).Extract("a5", now_);  // MOVE a5 from (former db0, now slot 1) to slot 0
  ASSERT_NE(moved, nullptr);
  db(0).Adopt(moved, now_);
  ASSERT_FALSE(Slice(100));
  db(1).Clear();  // FLUSHDB of what was db0
  KvTable garbage = db(0).TakeTable();  // FLUSHALL ASYNC of what was db1
  PutString(0, "after", "x");
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 600u);
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(back.Value(0, "a" + std::to_string(i)), "db0");
    EXPECT_EQ(back.Value(1, "b" + std::to_string(i)), "db1");
  }
  EXPECT_EQ(back.Value(0, "after"), "<none>");
  EXPECT_EQ(back.Value(1, "after"), "<none>");
}

// FLUSHDB and FLUSHALL ASYNC during a save hand the keys the walk has not reached to the save
// instead of writing them all at once: the flush buffers nothing (it used to encode every
// unwalked key under the shards' locks, so the buffer could reach the data set's size), and
// the walk still writes every start key once, freeing them as it goes.
TEST_F(SnapshotTest, AFlushDuringTheWalkWritesNothingAheadAndTheFileKeepsTheStartKeys) {
  for (int i = 0; i < 500; ++i) {
    PutString(0, "a" + std::to_string(i), "db0");
    PutString(1, "b" + std::to_string(i), "db1");
  }
  Begin();
  ASSERT_FALSE(Slice(100));  // part of database 0 is written
  PutString(0, "a7", "changed");  // protected ahead of the walk, or already walked
  snapshot_->TakeRecords(&records_);
  db(0).Clear();                        // FLUSHDB
  KvTable garbage = db(1).TakeTable();  // FLUSHALL ASYNC
  std::string ahead;
  snapshot_->TakeRecords(&ahead);
  EXPECT_TRUE(ahead.empty()) << ahead.size() << " bytes written by the flush";
  EXPECT_EQ(garbage.size(), 0u);  // the save holds them, not the flush's garbage
  EXPECT_EQ(db(0).stored(), 0u);
  EXPECT_EQ(db(1).stored(), 0u);
  // The flushed tables are drained first, before the rest of database 0's walk.
  EXPECT_TRUE(snapshot_->retired_pending());
  ASSERT_FALSE(Slice(1000));
  EXPECT_FALSE(snapshot_->retired_pending());
  PutString(0, "after", "x");
  db(0).Clear();  // a second flush of the emptied table is an ordinary one
  PutString(1, "b3", "new");
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 1000u);
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(back.Value(0, "a" + std::to_string(i)), "db0") << i;
    EXPECT_EQ(back.Value(1, "b" + std::to_string(i)), "db1") << i;
  }
  EXPECT_EQ(back.Value(0, "after"), "<none>");
  EXPECT_EQ(db(1).Find("b3", now_)->value(), "new");
  // The next save sees only what was written after the flushes.
  Begin();
  Loaded second;
  stats = {};
  FinishAndLoad(second, &stats);
  EXPECT_EQ(stats.keys_loaded, 1u);
  EXPECT_EQ(second.Value(1, "b3"), "new");
}

// A discarded save (its file failed, or FLUSHALL stopped it) writes nothing more: a flush then
// frees its keys itself, at once, and the next save still sees every key once.
TEST_F(SnapshotTest, AFlushAfterADiscardFreesTheKeysAtOnce) {
  for (int i = 0; i < 300; ++i) PutString(0, "k" + std::to_string(i), "old");
  Begin();
  ASSERT_FALSE(Slice(50));
  snapshot_->Discard();
  records_.clear();
  db(0).Clear();
  EXPECT_FALSE(snapshot_->retired_pending());
  for (int i = 0; i < 100; ++i) PutString(0, "k" + std::to_string(i), "new");
  while (!Slice(10)) {
  }
  EXPECT_TRUE(records_.empty());
  Begin();
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 100u);
  EXPECT_EQ(back.Value(0, "k5"), "new");
}

TEST_F(SnapshotTest, ASecondSaveSeesTheChangesOfTheFirstOnesTime) {
  for (int i = 0; i < 100; ++i) PutString(0, "k" + std::to_string(i), "first");
  Begin();
  ASSERT_FALSE(Slice(10));
  for (int i = 0; i < 100; ++i) PutString(0, "k" + std::to_string(i), "second");
  Loaded first;
  rdb::LoadStats stats;
  FinishAndLoad(first, &stats);
  EXPECT_EQ(first.Value(0, "k50"), "first");
  Begin();
  Loaded second;
  stats = {};
  FinishAndLoad(second, &stats);
  EXPECT_EQ(stats.keys_loaded, 100u);
  EXPECT_EQ(second.Value(0, "k50"), "second");
}

TEST_F(SnapshotTest, ADiscardedSaveStillLeavesTheNextOneWhole) {
  for (int i = 0; i < 100; ++i) PutString(0, "k" + std::to_string(i), "v");
  Begin();
  ASSERT_FALSE(Slice(10));
  snapshot_->Discard();
  records_.clear();  // what the file already had: it failed
  PutString(0, "k1", "changed");  // pre-empted while discarding: written nowhere
  while (!Slice(10)) {
  }
  EXPECT_TRUE(records_.empty());
  Begin();
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(stats.keys_loaded, 100u);
  EXPECT_EQ(back.Value(0, "k1"), "changed");
}

TEST_F(SnapshotTest, ItemsKeepTheirStartStateWhateverHappensDuringTheWalk) {
  catalog_.FindOrCreate(0, "c")->default_ttl.store(-1);  // on, nothing expires by default
  catalog_.FindOrCreate(0, "short")->default_ttl.store(10);
  catalog_.FindOrCreate(0, "gone")->default_ttl.store(-1);
  catalog_.FindOrCreate(0, "moved")->default_ttl.store(-1);
  for (int i = 0; i < 300; ++i) PutItem(0, "c", "i" + std::to_string(i), "0", now_);
  PutItem(0, "short", "expired-at-start", "0", kStart - 10'000);  // due exactly at the start
  PutItem(0, "short", "expires-during", "0", kStart - 5'000);
  for (int i = 0; i < 50; ++i) PutItem(0, "gone", "g" + std::to_string(i), "0", now_);
  for (int i = 0; i < 20; ++i) PutItem(0, "moved", "m" + std::to_string(i), "0", now_);
  Begin();
  ASSERT_FALSE(Slice(30));
  now_ = kStart + 6'000;
  ContainerPart& c = *shard_.items().Find(0, "c");
  for (int i = 0; i < 300; i += 3) PutItem(0, "c", "i" + std::to_string(i), "1", now_);  // replace
  for (int i = 1; i < 300; i += 3) ASSERT_TRUE(shard_.items().Delete(c, "i" + std::to_string(i), now_));
  for (int i = 0; i < 100; ++i) PutItem(0, "c", "new" + std::to_string(i), "1", now_);  // create
  catalog_.FindOrCreate(0, "short")->default_ttl.store(-1);  // CSETTTL: the start's setting decides
  catalog_.FindOrCreate(0, "short")->default_ttl.store(10);
  auto admit_all = [](const Item&) { return true; };
  while (shard_.items().Reclaim(now_, 1000, admit_all)) {  // "expires-during" goes now
  }
  ASSERT_EQ(shard_.items().Get(*shard_.items().Find(0, "short"), "expires-during", now_), nullptr);
  ASSERT_FALSE(Slice(30));
  ASSERT_TRUE(catalog_.Move("moved", 0, 1));  // CMOVE: the file keeps the start's database
  shard_.items().MoveToDb("moved", 0, 1);
  PutItem(1, "moved", "m0", "1", now_);
  ASSERT_TRUE(catalog_.Drop(0, "gone"));  // CDELETE: its items are written as they are freed
  while (shard_.items().Reclaim(now_, 7, admit_all)) {
  }
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(back.items_written_twice, 0);
  EXPECT_EQ(back.items.size(), 300u + 1 + 50 + 20);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(back.items["0/c/i" + std::to_string(i)], "\"v\":0") << i;
  EXPECT_EQ(back.items.count("0/c/new0"), 0u);
  EXPECT_EQ(back.items.count("0/short/expired-at-start"), 0u);
  EXPECT_EQ(back.items["0/short/expires-during"], "\"v\":0");
  for (int i = 0; i < 50; ++i) EXPECT_EQ(back.items.count("0/gone/g" + std::to_string(i)), 1u) << i;
  EXPECT_EQ(back.items["0/moved/m0"], "\"v\":0");

  // The next save sees what the walk did not write.
  Begin();
  Loaded next;
  stats = {};
  FinishAndLoad(next, &stats);
  EXPECT_EQ(next.items["0/c/i0"], "\"v\":1");
  EXPECT_EQ(next.items.count("0/c/i1"), 0u);
  EXPECT_EQ(next.items.count("0/c/new99"), 1u);
  EXPECT_EQ(next.items.count("0/gone/g0"), 0u);
  EXPECT_EQ(next.items["1/moved/m0"], "\"v\":1");
}

TEST_F(SnapshotTest, AContainerDroppedOrRetimedAsTheSaveStartsIsWrittenAsCaptured) {
  catalog_.FindOrCreate(0, "dropped")->default_ttl.store(-1);
  catalog_.FindOrCreate(0, "retimed")->default_ttl.store(kTtlOff);
  for (int i = 0; i < 20; ++i) PutItem(0, "dropped", "d" + std::to_string(i), "0", now_);
  PutItem(0, "retimed", "old", "0", kStart - 100'000);  // live while the container is OFF
  Begin([&] {
    ASSERT_TRUE(catalog_.Drop(0, "dropped"));
    catalog_.FindOrCreate(0, "retimed")->default_ttl.store(60);  // "old" would have expired
  });
  auto admit_all = [](const Item&) { return true; };
  while (shard_.items().Reclaim(now_, 1000, admit_all)) {
  }
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(back.items.count("0/dropped/d" + std::to_string(i)), 1u) << i;
  EXPECT_EQ(back.items["0/retimed/old"], "\"v\":0");
}

TEST_F(SnapshotTest, ADiscardedSaveWritesNoItems) {
  catalog_.FindOrCreate(0, "c")->default_ttl.store(-1);
  for (int i = 0; i < 100; ++i) PutItem(0, "c", "i" + std::to_string(i), "0", now_);
  Begin();
  ASSERT_FALSE(Slice(10));
  snapshot_->Discard();
  records_.clear();
  uint64_t written = snapshot_->items_written();
  PutItem(0, "c", "i99", "1", now_);  // pre-empted while discarding: written nowhere
  while (!Slice(10)) {
  }
  EXPECT_TRUE(records_.empty());
  EXPECT_EQ(snapshot_->items_written(), written);
  Begin();
  Loaded back;
  rdb::LoadStats stats;
  FinishAndLoad(back, &stats);
  EXPECT_EQ(back.items.size(), 100u);
  EXPECT_EQ(back.items["0/c/i99"], "\"v\":1");
}

}  // namespace
}  // namespace lapse::engine
