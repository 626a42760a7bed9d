// File: tests/server/script_undo_test.cc
//
// ScriptUndo, the undo log of a growable script step: it keeps each key's first pre-image,
// across shards and databases, and a rollback puts back every key and every shard's hits and
// misses, drops what it held back but the expiry and eviction events that really happened,
// and the ready keys the run added. The keys are read and written here directly on the
// shards, as the commands of a script would, inside a step that holds them.

#include "server/script_undo.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/clock.h"
#include "engine/container.h"
#include "server/keyspace_events.h"

namespace lapse::server {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

class ScriptUndoTest : public ::testing::Test {
 protected:
  ScriptUndoTest() : clock_(kNow), shards_(1, 2, clock_, catalog_, 8) {
    // Two keys on different shards.
    for (int i = 0; shards_.ShardFor(second_) == shards_.ShardFor(first_); ++i) second_ = "second:" + std::to_string(i);
  }

  engine::Db& DbOf(const std::string& key, int db = 0) { return shards_.shard(shards_.ShardFor(key)).db(db); }
  std::string ValueOf(const std::string& key, int db = 0) {
    engine::Entry* e = DbOf(key, db).Find(key, kNow);
    return e == nullptr ? "(absent)" : std::string(e->value());
  }

  engine::ManualClock clock_;
  engine::ContainerCatalog catalog_;
  ShardSet shards_;
  std::string first_ = "first";
  std::string second_ = "second";
};

TEST_F(ScriptUndoTest, RollBackPutsBackEveryKeptKeyAsItWasBeforeItsFirstChange) {
  DbOf(first_).Put(first_, "one", engine::ValueType::kString, engine::kNoDeadline, kNow);
  DbOf(first_, 1).Put(first_, "in db 1", engine::ValueType::kString, engine::kNoDeadline, kNow);
  ShardSet::AtomicStep step(shards_, {shards_.ShardFor(first_), shards_.ShardFor(second_)});
  ScriptUndo undo(0);
  step.set_undo(&undo);

  undo.Keep(shards_, 0, first_, kNow);
  DbOf(first_).Put(first_, "two", engine::ValueType::kString, engine::kNoDeadline, kNow);
  undo.Keep(shards_, 0, first_, kNow);  // a second write keeps nothing new
  DbOf(first_).Put(first_, "three", engine::ValueType::kString, engine::kNoDeadline, kNow);
  undo.Keep(shards_, 0, second_, kNow);
  DbOf(second_).Put(second_, "created", engine::ValueType::kString, kNow + 1000, kNow);
  EXPECT_EQ(undo.kept(), 2u);

  undo.RollBack(shards_, kNow);
  EXPECT_EQ(ValueOf(first_), "one");
  EXPECT_EQ(ValueOf(second_), "(absent)");
  EXPECT_EQ(ValueOf(first_, 1), "in db 1");  // another database's key was never kept
  EXPECT_EQ(DbOf(second_).volatile_count(), 0u);
}

TEST_F(ScriptUndoTest, ManyKeysAreEachKeptOnce) {
  std::vector<uint32_t> all;
  for (uint32_t id = 0; id < shards_.size(); ++id) all.push_back(id);
  ShardSet::AtomicStep step(shards_, all);
  ScriptUndo undo(0);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 40; ++i) {
      std::string key = "many:" + std::to_string(i);
      undo.Keep(shards_, 0, key, kNow);
      DbOf(key).Put(key, "round " + std::to_string(round), engine::ValueType::kString, engine::kNoDeadline, kNow);
    }
  }
  EXPECT_EQ(undo.kept(), 40u);
  undo.RollBack(shards_, kNow);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(ValueOf("many:" + std::to_string(i)), "(absent)") << i;
}

TEST_F(ScriptUndoTest, RollBackRestoresHitsAndMissesOfTheShardsItMet) {
  uint32_t id = shards_.ShardFor(first_);
  shards_.shard(id).CountReadLookup(true);
  ShardSet::AtomicStep step(shards_, {id});
  ScriptUndo undo(0);
  undo.NoteShards(shards_, std::vector<uint32_t>{id});
  shards_.shard(id).CountReadLookup(true);
  shards_.shard(id).CountReadLookup(false);
  undo.NoteShards(shards_, std::vector<uint32_t>{id});  // the first note is the one kept

  undo.RollBack(shards_, kNow);
  EXPECT_EQ(shards_.shard(id).read_lookups().hits, 1u);
  EXPECT_EQ(shards_.shard(id).read_lookups().misses, 0u);
}

TEST_F(ScriptUndoTest, RollBackKeepsOnlyTheEventsThatHappenedAnyway) {
  ShardSet::AtomicStep step(shards_, {shards_.ShardFor(first_)});
  ScriptUndo undo(2.5);
  undo.HoldEvent(kEventString, "set", first_, 0, false);
  undo.HoldEvent(kEventExpired, "expired", "gone", 0, true);
  undo.HoldCharge(1.0);
  undo.HoldError("-ERR x\r\n");
  std::vector<ScriptUndo::HeldEvent> happened = undo.RollBack(shards_, kNow);
  ASSERT_EQ(happened.size(), 1u);
  EXPECT_EQ(happened[0].event, "expired");
  EXPECT_EQ(happened[0].key, "gone");
  EXPECT_TRUE(undo.TakeEvents().empty());
  EXPECT_TRUE(undo.TakeErrors().empty());
  EXPECT_EQ(undo.TakeCharge(), 0);
  EXPECT_EQ(undo.charge_mark(), 2.5);
}

TEST_F(ScriptUndoTest, ReadyKeysAddedDuringTheRunAreDropped) {
  engine::ReadyKeys().clear();
  engine::ReadyKeys().push_back({0, 0, "before"});
  ShardSet::AtomicStep step(shards_, {shards_.ShardFor(first_)});
  ScriptUndo undo(0);
  engine::ReadyKeys().push_back({0, 0, "during"});
  undo.RollBack(shards_, kNow);
  ASSERT_EQ(engine::ReadyKeys().size(), 1u);
  EXPECT_EQ(engine::ReadyKeys()[0].key, "before");
  engine::ReadyKeys().clear();
}

TEST_F(ScriptUndoTest, ACommitForgetsThePreImages) {
  DbOf(first_).Put(first_, "one", engine::ValueType::kString, engine::kNoDeadline, kNow);
  ShardSet::AtomicStep step(shards_, {shards_.ShardFor(first_)});
  ScriptUndo undo(0);
  undo.Keep(shards_, 0, first_, kNow);
  DbOf(first_).Put(first_, "two", engine::ValueType::kString, engine::kNoDeadline, kNow);
  undo.ForgetImages();
  undo.RollBack(shards_, kNow);
  EXPECT_EQ(ValueOf(first_), "two");
}

}  // namespace
}  // namespace lapse::server
