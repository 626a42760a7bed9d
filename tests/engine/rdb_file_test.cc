// Whole snapshots (engine/rdb_file.h): a file written in small chunks loads back with every
// key, deadline and hash-field TTL; keys whose deadline passed are not loaded; every
// truncation and every flipped byte is refused with an offset (or, for a byte the checksum
// does not cover, loads), never a crash; rdbchecksum no writes a zero checksum that loads.
#include "engine/rdb_file.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/list.h"

namespace lapse::engine::rdb {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

class TwoDbs final : public LoadTarget {
 public:
  TwoDbs() : dbs{Db(kNow), Db(kNow)} {}
  Db* DbFor(uint32_t db, std::string_view) override { return db < 2 ? &dbs[db] : nullptr; }
  Db dbs[2];
};

// A sink that takes at most a few bytes per call, as a slow file might.
class ChunkCounter final : public Sink {
 public:
  bool Write(std::string_view bytes) override {
    data.append(bytes);
    ++writes;
    return true;
  }
  std::string data;
  size_t writes = 0;
};

std::string Snapshot(TwoDbs& source, SnapshotOptions options = {}) {
  ChunkCounter sink;
  SnapshotWriter writer(sink, options);
  writer.Header(kNow, 0);
  for (uint32_t db = 0; db < 2; ++db) {
    writer.SelectDb(db, source.dbs[db].stored(), source.dbs[db].volatile_count());
    uint64_t cursor = 0;
    do {
      cursor = source.dbs[db].Scan(cursor, kNow, [&](const Entry* e) { writer.Key(e); });
    } while (cursor != 0);
  }
  EXPECT_TRUE(writer.Finish());
  return sink.data;
}

void Fill(TwoDbs& t) {
  CollectionLimits limits;
  for (int i = 0; i < 3000; ++i) t.dbs[0].Put("k" + std::to_string(i), std::string(i % 50, 'v'), ValueType::kString,
                                              i % 3 ? kNoDeadline : kNow + 100000 + i, kNow);
  t.dbs[1].Put("gone", "x", ValueType::kString, kNow + 10, kNow);
  Entry* h = hash::Create(t.dbs[1], "h", kNow);
  for (int i = 0; i < 200; ++i) hash::Set(t.dbs[1], h, "f" + std::to_string(i), "v", limits);
  hash::SetFieldDeadline(t.dbs[1], h, "f7", kNow + 5000, hash::TtlCondition::kAlways, kNow, limits);
  Entry* l = list::Create(t.dbs[1], "l", kNow);
  for (int i = 0; i < 500; ++i) list::Push(t.dbs[1], l, list::End::kTail, std::to_string(i), limits);
}

TEST(RdbFileTest, RoundTripsKeysDeadlinesAndFieldTtls) {
  TwoDbs source;
  Fill(source);
  std::string file = Snapshot(source);
  EXPECT_EQ(file.substr(0, 9), "REDIS0010");
  TwoDbs back;
  LoadStats stats;
  ASSERT_EQ(LoadSnapshot(file, back, CollectionLimits{}, kNow, &stats), std::nullopt);
  EXPECT_EQ(stats.keys_loaded, 3003u);
  EXPECT_EQ(back.dbs[0].Find("k3", kNow)->deadline(), kNow + 100003);
  EXPECT_EQ(back.dbs[0].Find("k4", kNow)->deadline(), kNoDeadline);
  EXPECT_EQ(hash::FieldDeadline(back.dbs[1].Find("h", kNow), "f7"), kNow + 5000);
  EXPECT_EQ(list::Size(back.dbs[1].Find("l", kNow)), 500u);
  // Loaded later, when "gone" is due: it is skipped, never visible.
  TwoDbs later;
  LoadStats later_stats;
  ASSERT_EQ(LoadSnapshot(file, later, CollectionLimits{}, kNow + 20, &later_stats), std::nullopt);
  EXPECT_EQ(later_stats.keys_expired, 1u);
  EXPECT_EQ(later.dbs[1].Find("gone", kNow + 20), nullptr);
}

TEST(RdbFileTest, EveryTruncationIsRefusedWithAnOffset) {
  TwoDbs source;
  source.dbs[0].Put("a", "1", ValueType::kString, kNoDeadline, kNow);
  Entry* l = list::Create(source.dbs[0], "l", kNow);
  for (int i = 0; i < 50; ++i) list::Push(source.dbs[0], l, list::End::kTail, "element", CollectionLimits{});
  std::string file = Snapshot(source);
  for (size_t n = 0; n < file.size(); ++n) {
    TwoDbs back;
    LoadStats stats;
    auto error = LoadSnapshot(std::string_view(file).substr(0, n), back, CollectionLimits{}, kNow, &stats);
    ASSERT_TRUE(error) << n;
    EXPECT_NE(error->find("byte offset"), std::string::npos) << *error;
  }
}

TEST(RdbFileTest, FlippedBytesNeverCrashAndTheChecksumCatchesThem) {
  TwoDbs source;
  Fill(source);
  std::string file = Snapshot(source);
  for (size_t pos = 9; pos < file.size(); pos += 97) {
    std::string damaged = file;
    damaged[pos] = static_cast<char>(damaged[pos] ^ 0x5a);
    TwoDbs back;
    LoadStats stats;
    EXPECT_TRUE(LoadSnapshot(damaged, back, CollectionLimits{}, kNow, &stats)) << pos;
  }
}

TEST(RdbFileTest, WithoutChecksumTheTrailerIsZero) {
  TwoDbs source;
  source.dbs[0].Put("a", "1", ValueType::kString, kNoDeadline, kNow);
  std::string file = Snapshot(source, {true, false, true});
  EXPECT_EQ(file.substr(file.size() - 8), std::string(8, '\0'));
  TwoDbs back;
  LoadStats stats;
  EXPECT_EQ(LoadSnapshot(file, back, CollectionLimits{}, kNow, &stats), std::nullopt);
}

TEST(RdbFileTest, ContainerAndItemRecordsRoundTrip) {
  ContainerRecord c{3, "box", INT64_MIN, true, 50};
  auto back = DecodeContainer(EncodeContainer(c));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->name, "box");
  EXPECT_EQ(back->default_ttl, INT64_MIN);
  EXPECT_TRUE(back->evictable);
  std::string batch = EncodeItemsHeader(2, "box", 2);
  AppendItem(batch, "a", "\"x\":1", -1, kNow, 7);
  AppendItem(batch, "b", "", INT64_MIN, kNow + 1, 8);
  uint32_t db = 0;
  std::string name;
  std::vector<ItemRecord> items;
  ASSERT_TRUE(DecodeItems(batch, &db, &name, &items));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].ttl, INT64_MIN);
  EXPECT_EQ(items[0].etag, 7u);
  EXPECT_FALSE(DecodeItems(batch.substr(0, batch.size() - 1), &db, &name, &items));
}

}  // namespace
}  // namespace lapse::engine::rdb
