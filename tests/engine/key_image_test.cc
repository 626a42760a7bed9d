// File: tests/engine/key_image_test.cc
//
// KeyImage: a key's state kept and put back, as a script's undo log uses it. Each test
// captures a key, changes it the way a command would (replace, edit in place, delete,
// create, re-time, change a hash field's TTL) and checks that Restore gives back exactly the
// captured state: value, type, encoding, deadline, field deadlines, access stamp, or absence.

#include "engine/key_image.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "engine/collection.h"
#include "engine/entry.h"

namespace lapse::engine {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

TEST(KeyImageTest, RestoresAReplacedStringWithItsDeadlineAndEncoding) {
  Db db(kNow);
  Entry* e = db.Put("k", "12345", ValueType::kString, kNow + 60'000, kNow);
  e->set_string_encoding(StringEncoding::kRaw);
  e->set_access_stamp(777);
  KeyImage image = KeyImage::Capture(db, "k", kNow);
  ASSERT_TRUE(image.present());
  db.Put("k", "something else", ValueType::kString, kNoDeadline, kNow);

  std::move(image).Restore(db, kNow);
  Entry* back = db.Find("k", kNow);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->value(), "12345");
  EXPECT_EQ(back->deadline(), kNow + 60'000);
  EXPECT_EQ(back->string_encoding(), StringEncoding::kRaw);
  EXPECT_EQ(back->access_stamp(), 777u);
  EXPECT_EQ(db.volatile_count(), 1u);
}

TEST(KeyImageTest, RestoresADeletedKeyAndDeletesACreatedOne) {
  Db db(kNow);
  db.Put("kept", "v", ValueType::kString, kNoDeadline, kNow);
  KeyImage was_there = KeyImage::Capture(db, "kept", kNow);
  KeyImage was_absent = KeyImage::Capture(db, "new", kNow);
  EXPECT_FALSE(was_absent.present());
  ASSERT_TRUE(db.Erase("kept", kNow));
  db.Put("new", "x", ValueType::kString, kNow + 5'000, kNow);

  std::move(was_absent).Restore(db, kNow);
  std::move(was_there).Restore(db, kNow);
  EXPECT_EQ(db.Find("new", kNow), nullptr);
  ASSERT_NE(db.Find("kept", kNow), nullptr);
  EXPECT_EQ(db.Find("kept", kNow)->value(), "v");
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.CountLive(kNow), 1u);
}

TEST(KeyImageTest, AKeyPastItsDeadlineIsExpiredByCaptureAndStaysGone) {
  Db db(kNow);
  db.Put("old", "v", ValueType::kString, kNow + 10, kNow);
  KeyImage image = KeyImage::Capture(db, "old", kNow + 10);
  EXPECT_FALSE(image.present());
  EXPECT_EQ(db.expiry_stats().expired_lazily, 1u);
  db.Put("old", "written", ValueType::kString, kNoDeadline, kNow + 10);
  std::move(image).Restore(db, kNow + 10);
  EXPECT_EQ(db.Find("old", kNow + 10), nullptr);
}

TEST(KeyImageTest, RestoresAHashTableWithItsFieldDeadlines) {
  Db db(kNow);
  CollectionLimits limits;
  limits.hash_max_listpack_entries = 2;  // three fields: a table of its own
  Entry* e = hash::Create(db, "h", kNow);
  for (std::string f : {"a", "b", "c"}) hash::Set(db, e, f, "value-" + f, limits);
  ASSERT_EQ(hash::SetFieldDeadline(db, e, "b", kNow + 30'000, hash::TtlCondition::kAlways, kNow, limits), 1);
  ASSERT_TRUE(e->owns_table());
  EXPECT_FALSE(KeyImage::CheapToCapture(db, "h", kNow));
  KeyImage image = KeyImage::Capture(db, "h", kNow);

  // Edited in place, the way HSET and HPERSIST change it.
  hash::Set(db, e, "a", "changed", limits);
  hash::Delete(db, e, "c");
  hash::PersistField(e, "b");
  std::move(image).Restore(db, kNow);

  Entry* back = db.Find("h", kNow);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(hash::Size(back), 3u);
  EXPECT_EQ(hash::Get(back, "a"), "value-a");
  EXPECT_EQ(hash::Get(back, "c"), "value-c");
  EXPECT_EQ(hash::FieldDeadline(back, "b"), kNow + 30'000);
  // The restored hash's field deadline is filed: the field goes when it is due.
  EXPECT_FALSE(db.Reclaim(kNow + 30'000, 1000));
  back = db.Find("h", kNow + 30'000);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(hash::Size(back), 2u);
  EXPECT_FALSE(hash::Get(back, "b").has_value());
}

TEST(KeyImageTest, SmallValuesAreCheapAndBigOnesAreNot) {
  Db db(kNow);
  EXPECT_TRUE(KeyImage::CheapToCapture(db, "absent", kNow));
  db.Put("small", std::string(100, 'x'), ValueType::kString, kNoDeadline, kNow);
  db.Put("big", std::string(KeyImage::kCheapBytes + 1, 'x'), ValueType::kString, kNoDeadline, kNow);
  EXPECT_TRUE(KeyImage::CheapToCapture(db, "small", kNow));
  EXPECT_FALSE(KeyImage::CheapToCapture(db, "big", kNow));
}

}  // namespace
}  // namespace lapse::engine
