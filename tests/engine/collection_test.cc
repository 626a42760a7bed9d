// Hashes and sets in their three layouts (engine/collection.h): each operation on each
// layout, the conversions at Redis's thresholds, and copies that own their table.
#include "engine/collection.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/hash.h"

namespace lapse::engine {
namespace {

constexpr int64_t kNow = 1000;

std::map<std::string, std::string> HashContents(const Entry* e) {
  std::map<std::string, std::string> out;
  hash::ForEach(e, [&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}

std::vector<std::string> SetMembers(const Entry* e) {
  std::vector<std::string> out;
  set::ForEach(e, [&](std::string_view m) { out.emplace_back(m); });
  return out;
}

TEST(CollectionTest, PackedHashSetsGetsAndDeletesInInsertionOrder) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* e = hash::Create(db, "h", kNow);
  EXPECT_TRUE(hash::Set(db, e, "a", "1", limits));
  EXPECT_TRUE(hash::Set(db, e, "b", "22", limits));
  EXPECT_TRUE(hash::Set(db, e, "c", "333", limits));
  EXPECT_FALSE(hash::Set(db, e, "b", "a longer value than before", limits));
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  EXPECT_STREQ(EncodingName(e), "listpack");
  EXPECT_EQ(hash::Size(e), 3u);
  EXPECT_EQ(*hash::Get(e, "b"), "a longer value than before");
  EXPECT_FALSE(hash::Get(e, "zz").has_value());
  std::vector<std::string> order;
  hash::ForEach(e, [&](std::string_view f, std::string_view) { order.emplace_back(f); });
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(hash::Delete(db, e, "b"));
  EXPECT_FALSE(hash::Delete(db, e, "b"));
  EXPECT_EQ(HashContents(e), (std::map<std::string, std::string>{{"a", "1"}, {"c", "333"}}));
  // The entry found again in the db is the one the edits left.
  EXPECT_EQ(db.Find("h", kNow), e);
}

TEST(CollectionTest, PackedFieldNamesAreFrontCodedAndSurviveDeletesAnywhere) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* e = hash::Create(db, "h", kNow);
  std::vector<std::string> fields = {"user:name", "user:mail", "user:id", "u", "", "user:mail2", "zeta"};
  for (size_t i = 0; i < fields.size(); ++i) hash::Set(db, e, fields[i], "v" + std::to_string(i), limits);
  // "user:mail" shares 5 bytes with "user:name": 1 + 1 + 4 bytes instead of 1 + 9.
  size_t plain = 0;
  for (size_t i = 0; i < fields.size(); ++i) plain += 2 + fields[i].size() + 1 + 2;
  EXPECT_LT(e->value().size(), plain);
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(*hash::Get(e, fields[i]), "v" + std::to_string(i)) << fields[i];
  // Delete the first, a middle one and the last; the rest keep their names, values and order.
  for (const char* gone : {"user:name", "", "zeta"}) EXPECT_TRUE(hash::Delete(db, e, gone));
  std::vector<std::string> order;
  hash::ForEach(e, [&](std::string_view f, std::string_view v) { order.push_back(std::string(f) + "=" + std::string(v)); });
  EXPECT_EQ(order, (std::vector<std::string>{"user:mail=v1", "user:id=v2", "u=v3", "user:mail2=v5"}));
  hash::Set(db, e, "user:id", "changed", limits);
  hash::Set(db, e, "user:idx", "new", limits);
  EXPECT_EQ(*hash::Get(e, "user:id"), "changed");
  EXPECT_EQ(*hash::Get(e, "user:idx"), "new");
  EXPECT_EQ(hash::Size(e), 5u);
}

TEST(CollectionTest, PackedElementsLongerThan127BytesUseTwoLengthBytes) {
  Db db(kNow);
  CollectionLimits limits;
  limits.hash_max_listpack_value = 1000;
  Entry* e = hash::Create(db, "h", kNow);
  std::string big(300, 'v');
  hash::Set(db, e, "f", big, limits);
  hash::Set(db, e, std::string(200, 'k'), "x", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  EXPECT_EQ(*hash::Get(e, "f"), big);
  EXPECT_EQ(*hash::Get(e, std::string(200, 'k')), "x");
}

TEST(CollectionTest, HashConvertsToTableAboveEitherThreshold) {
  Db db(kNow);
  CollectionLimits limits;
  limits.hash_max_listpack_entries = 4;
  Entry* e = hash::Create(db, "h", kNow);
  for (int i = 0; i < 4; ++i) hash::Set(db, e, "f" + std::to_string(i), "v", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  hash::Set(db, e, "f4", "v", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  EXPECT_STREQ(EncodingName(e), "hashtable");
  EXPECT_EQ(hash::Size(e), 5u);
  EXPECT_EQ(*hash::Get(e, "f0"), "v");
  // No conversion back, even when it shrinks below the threshold.
  for (int i = 0; i < 4; ++i) hash::Delete(db, e, "f" + std::to_string(i));
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  EXPECT_EQ(hash::Size(e), 1u);

  Entry* l = hash::Create(db, "long", kNow);
  hash::Set(db, l, "a", "1", limits);
  hash::Set(db, l, "b", std::string(65, 'x'), limits);
  EXPECT_EQ(l->collection_encoding(), CollectionEncoding::kTable);
  EXPECT_EQ(HashContents(l).size(), 2u);
  EXPECT_TRUE(db.Erase("long", kNow));  // frees the table (ASan checks)
}

TEST(CollectionTest, TableValuesAreReplacedInPlaceOrReallocated) {
  Db db(kNow);
  CollectionLimits limits;
  limits.hash_max_listpack_entries = 0;
  Entry* e = hash::Create(db, "h", kNow);
  hash::Set(db, e, "f", "short", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  hash::Set(db, e, "f", std::string(500, 'z'), limits);
  EXPECT_EQ(hash::Get(e, "f")->size(), 500u);
  hash::Set(db, e, "f", "s", limits);
  EXPECT_EQ(*hash::Get(e, "f"), "s");
}

TEST(CollectionTest, IntSetKeepsMembersSortedAndWidens) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* e = set::Create(db, "s", "5", kNow);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kIntSet);
  for (const char* m : {"5", "-3", "100", "7"}) set::Add(db, e, m, limits);
  EXPECT_FALSE(set::Add(db, e, "7", limits));
  EXPECT_EQ(SetMembers(e), (std::vector<std::string>{"-3", "5", "7", "100"}));
  // 13-byte header, then offsets from -3 in 7 bits (the range is 103): 4 members in 4 bytes.
  EXPECT_EQ(e->value().size(), 13u + 4);
  set::Add(db, e, "70000", limits);
  EXPECT_EQ(e->value().size(), 13u + (5 * 17 + 7) / 8);
  set::Add(db, e, "-9223372036854775808", limits);
  EXPECT_EQ(e->value().size(), 13u + (6 * 64 + 7) / 8);
  EXPECT_EQ(SetMembers(e).front(), "-9223372036854775808");
  set::Add(db, e, "9223372036854775807", limits);
  EXPECT_EQ(SetMembers(e).back(), "9223372036854775807");
  EXPECT_TRUE(set::Contains(e, "9223372036854775807"));
  EXPECT_TRUE(set::Remove(db, e, "9223372036854775807"));
  EXPECT_TRUE(set::Contains(e, "70000"));
  EXPECT_FALSE(set::Contains(e, "070000"));  // not canonical: not the integer 70000
  EXPECT_TRUE(set::Remove(db, e, "5"));
  EXPECT_FALSE(set::Remove(db, e, "5"));
  EXPECT_FALSE(set::Remove(db, e, "abc"));
  EXPECT_EQ(set::Size(e), 5u);
  EXPECT_EQ(SetMembers(e), (std::vector<std::string>{"-9223372036854775808", "-3", "7", "100", "70000"}));
  EXPECT_STREQ(EncodingName(e), "intset");
}

TEST(CollectionTest, IntSetMatchesASortedModel) {
  Db db(kNow);
  CollectionLimits limits;
  limits.set_max_intset_entries = 1000;
  std::set<int64_t> model;
  uint64_t x = 12345;
  Entry* e = set::Create(db, "s", "0", kNow);
  for (int i = 0; i < 600; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int64_t v = static_cast<int64_t>(x >> (i % 3 == 0 ? 0 : i % 3 == 1 ? 40 : 56)) * (i % 2 ? -1 : 1);
    if (i % 5 == 4 && !model.empty()) {
      int64_t gone = *model.begin();
      EXPECT_TRUE(set::Remove(db, e, std::to_string(gone)));
      model.erase(gone);
    }
    EXPECT_EQ(set::Add(db, e, std::to_string(v), limits), model.insert(v).second);
  }
  ASSERT_EQ(e->collection_encoding(), CollectionEncoding::kIntSet);
  std::vector<std::string> expected;
  for (int64_t v : model) expected.push_back(std::to_string(v));
  EXPECT_EQ(SetMembers(e), expected);
  for (int64_t v : model) EXPECT_TRUE(set::Contains(e, std::to_string(v)));
}

TEST(CollectionTest, IntSetTakesAStringAsPackedThenTable) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* e = set::Create(db, "s", "1", kNow);
  set::Add(db, e, "1", limits);
  set::Add(db, e, "2", limits);
  set::Add(db, e, "x", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kPacked);
  EXPECT_STREQ(EncodingName(e), "hashtable");  // what Redis 7.0 would report
  EXPECT_EQ(SetMembers(e), (std::vector<std::string>{"1", "2", "x"}));
  for (size_t i = 0; i < kPackedSetMaxEntries; ++i) set::Add(db, e, "m" + std::to_string(i), limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  EXPECT_EQ(set::Size(e), 3 + kPackedSetMaxEntries);
  EXPECT_TRUE(set::Contains(e, "2"));
  EXPECT_TRUE(set::Remove(db, e, "2"));
  EXPECT_FALSE(set::Contains(e, "2"));
}

TEST(CollectionTest, IntSetConvertsAboveItsEntryLimit) {
  Db db(kNow);
  CollectionLimits limits;
  limits.set_max_intset_entries = 3;
  Entry* e = set::Create(db, "s", "1", kNow);
  for (const char* m : {"1", "2", "3"}) set::Add(db, e, m, limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kIntSet);
  set::Add(db, e, "4", limits);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  std::vector<std::string> members = SetMembers(e);
  EXPECT_EQ(std::set<std::string>(members.begin(), members.end()), (std::set<std::string>{"1", "2", "3", "4"}));
}

TEST(CollectionTest, ValueCopyDuplicatesATableAndFreesItUnlessReleased) {
  Db db(kNow);
  CollectionLimits limits;
  limits.hash_max_listpack_entries = 1;
  Entry* e = hash::Create(db, "h", kNow);
  hash::Set(db, e, "a", "1", limits);
  hash::Set(db, e, "b", "2", limits);
  ASSERT_TRUE(e->owns_table());
  {
    ValueCopy unused(*e);  // destroyed unreleased: its table is freed (ASan checks)
  }
  ValueCopy copy(*e);
  Entry* c = db.Put("copy", copy.bytes(), copy.type(), kNoDeadline, kNow);
  c->set_encoding_bits(copy.encoding_bits());
  copy.Release();
  hash::Delete(db, e, "a");
  EXPECT_EQ(HashContents(c), (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(HashContents(e), (std::map<std::string, std::string>{{"b", "2"}}));
  EXPECT_GT(TableBytes(c), 0u);
  // A deadline that reallocates the entry moves the table along, without freeing it.
  c = db.SetDeadline(c, kNow + 5000, kNow);
  EXPECT_EQ(*hash::Get(c, "a"), "1");
  db.Clear();
}

TEST(CollectionTest, ReplacingACollectionWithAStringFreesItsTable) {
  Db db(kNow);
  CollectionLimits limits;
  limits.set_max_intset_entries = 0;
  Entry* e = set::Create(db, "s", "1", kNow);
  set::Add(db, e, "1", limits);
  ASSERT_TRUE(e->owns_table());
  Entry* str = db.Put("s", "plain", ValueType::kString, kNoDeadline, kNow);
  EXPECT_EQ(str->type(), ValueType::kString);
  EXPECT_EQ(str->value(), "plain");
}

TEST(CollectionTest, ScanAnswersPackedLayoutsAtOnceAndWalksTables) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* small = set::Create(db, "small", "a", kNow);
  set::Add(db, small, "a", limits);
  set::Add(db, small, "b", limits);
  size_t seen = 0;
  EXPECT_EQ(ScanCollection(small, 0, 1, [&](std::string_view, std::string_view) { ++seen; }), 0u);
  EXPECT_EQ(seen, 2u);

  Entry* big = set::Create(db, "big", "m", kNow);
  for (int i = 0; i < 1000; ++i) set::Add(db, big, "m" + std::to_string(i), limits);
  std::set<std::string> members;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    cursor = ScanCollection(big, cursor, 10, [&](std::string_view m, std::string_view) { members.emplace(m); });
    ++steps;
  } while (cursor != 0);
  EXPECT_EQ(members.size(), 1000u);
  EXPECT_GT(steps, 10);
}

TEST(CollectionTest, ParseCanonicalIntIsRedisString2ll) {
  int64_t v = 0;
  EXPECT_TRUE(ParseCanonicalInt("0", &v));
  EXPECT_TRUE(ParseCanonicalInt("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_TRUE(ParseCanonicalInt("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  for (const char* bad : {"", "-", "-0", "01", "+1", " 1", "1 ", "1.0", "9223372036854775808", "-9223372036854775809",
                          "123456789012345678901"}) {
    EXPECT_FALSE(ParseCanonicalInt(bad, &v)) << bad;
  }
}

TEST(CollectionTest, FieldDeadlinesHideFieldsAtTheirMillisecondAndReclaimDropsThem) {
  Db db(kNow);
  CollectionLimits limits;
  Entry* e = hash::Create(db, "h", kNow);
  hash::Set(db, e, "a", "1", limits);
  hash::Set(db, e, "b", "2", limits);
  EXPECT_EQ(hash::SetFieldDeadline(db, e, "zz", kNow + 10, hash::TtlCondition::kAlways, kNow, limits), -2);
  EXPECT_EQ(hash::SetFieldDeadline(db, e, "a", kNow + 10, hash::TtlCondition::kAlways, kNow, limits), 1);
  EXPECT_EQ(e->collection_encoding(), CollectionEncoding::kTable);
  EXPECT_EQ(hash::FieldDeadline(e, "a"), kNow + 10);
  EXPECT_EQ(hash::FieldDeadline(e, "b"), -1);
  // At deadline - 1 the field is there; at the deadline Find drops it.
  e = db.Find("h", kNow + 9);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(hash::Get(e, "a").has_value());
  e = db.Find("h", kNow + 10);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(hash::Get(e, "a").has_value());
  EXPECT_EQ(hash::Size(e), 1u);

  // Background: Reclaim drops due fields without any read, and a hash left with none.
  Entry* g = hash::Create(db, "g", kNow);
  hash::Set(db, g, "x", "1", limits);
  hash::Set(db, g, "y", "2", limits);
  hash::SetFieldDeadline(db, g, "x", kNow + 20, hash::TtlCondition::kAlways, kNow, limits);
  hash::SetFieldDeadline(db, g, "y", kNow + 30, hash::TtlCondition::kAlways, kNow, limits);
  while (db.Reclaim(kNow + 25, 100)) {
  }
  EXPECT_EQ(TableOf(g).table.size(), 1u);
  while (db.Reclaim(kNow + 30, 100)) {
  }
  EXPECT_EQ(db.stored(), 1u);  // only "h"
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
}

TEST(CollectionTest, AFieldTtlSetAfterTheLastOneWasClearedIsStillReclaimed) {
  Db db(0);
  CollectionLimits limits;
  Entry* e = hash::Create(db, "h", 0);
  hash::Set(db, e, "f", "v", limits);
  hash::SetFieldDeadline(db, e, "f", 100, hash::TtlCondition::kAlways, 0, limits);
  EXPECT_EQ(hash::PersistField(e, "f"), 1);
  while (db.Reclaim(200, 100)) {
  }
  e = db.Find("h", 200);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(hash::SetFieldDeadline(db, e, "f", 300, hash::TtlCondition::kAlways, 200, limits), 1);
  while (db.Reclaim(1000, 100)) {
  }
  EXPECT_EQ(db.stored(), 0u);
}

TEST(CollectionTest, KeyAndFieldDeadlinesInOneWheelSlotKeepTheirOwnRecords) {
  CollectionLimits limits;
  {
    // The field deadline first, the key's in the same upper-level slot.
    Db db(0);
    Entry* e = hash::Create(db, "h", 0);
    hash::Set(db, e, "f", "1", limits);
    hash::Set(db, e, "g", "2", limits);
    e = db.SetDeadline(e, 102000, 0);
    hash::SetFieldDeadline(db, e, "f", 100000, hash::TtlCondition::kAlways, 0, limits);
    while (db.Reclaim(100000, 100)) {
    }
    EXPECT_EQ(db.stored(), 1u);
    while (db.Reclaim(200000, 100)) {
    }
    EXPECT_EQ(db.stored(), 0u);
  }
  {
    // The key deadline first, then removed: the field's record must survive.
    Db db(0);
    Entry* e = hash::Create(db, "h", 0);
    hash::Set(db, e, "f", "1", limits);
    e = db.SetDeadline(e, 100000, 0);
    hash::SetFieldDeadline(db, e, "f", 102000, hash::TtlCondition::kAlways, 0, limits);
    while (db.Reclaim(99000, 100)) {
    }
    e = db.Find("h", 99000);
    ASSERT_NE(e, nullptr);
    db.SetDeadline(e, kNoDeadline, 99000);
    while (db.Reclaim(200000, 100)) {
    }
    EXPECT_EQ(db.stored(), 0u);
  }
}

TEST(CollectionTest, AFieldTtlCostsItsEightByteDeadline) {
  Db db(kNow);
  CollectionLimits limits;
  limits.hash_max_listpack_entries = 0;
  Entry* e = hash::Create(db, "h", kNow);
  hash::Set(db, e, "field", "value", limits);
  const Entry* before = TableOf(e).table.Peek("field", HashKey("field"));
  size_t requested_before = 20 + before->key().size() + before->value().size();
  hash::SetFieldDeadline(db, e, "field", kNow + 100, hash::TtlCondition::kAlways, kNow, limits);
  const Entry* after = TableOf(e).table.Peek("field", HashKey("field"));
  EXPECT_TRUE(after->has_deadline_slot());
  // The element entry asks for 8 more bytes; the hash files one wheel record (8 bytes) for
  // its next deadline, not one per field.
  EXPECT_EQ(20 + 8 + after->key().size() + after->value().size(), requested_before + 8);
  EXPECT_LE(db.wheel_records(), 1u);
}

}  // namespace
}  // namespace lapse::engine
