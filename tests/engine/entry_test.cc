// File: tests/engine/entry_test.cc
//
// Entry layout: one allocation holding header, optional deadline slot, key and value. Keys and
// values are binary (NUL bytes and all 256 byte values survive), the deadline slot exists
// exactly when asked for, and the value may grow in place up to value_capacity().

#include "engine/entry.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace lapse::engine {
namespace {

struct EntryDeleter {
  void operator()(Entry* e) const { Entry::Destroy(e); }
};
using EntryPtr = std::unique_ptr<Entry, EntryDeleter>;

EntryPtr Make(std::string_view key, std::string_view value, int64_t deadline = kNoDeadline,
              bool reserve_deadline = false, size_t capacity = 0) {
  return EntryPtr(Entry::Create(key, value, ValueType::kString, deadline, reserve_deadline, capacity));
}

std::string AllBytes() {
  std::string s;
  for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
  return s;
}

// The documented layout: a 20-byte header, then the 8-byte deadline slot if present, then the
// key bytes, then the value bytes, all in the entry's own allocation.
constexpr ptrdiff_t kHeaderBytes = 20;

ptrdiff_t OffsetOf(const Entry* e, const char* p) { return p - reinterpret_cast<const char*>(e); }

TEST(EntryTest, Layout) {
  for (bool slot : {false, true}) {
    for (size_t key_len : {size_t{0}, size_t{1}, size_t{3}, size_t{8}, size_t{33}}) {
      std::string key(key_len, 'k');
      EntryPtr e = Make(key, "value", slot ? 7 : kNoDeadline);
      const ptrdiff_t slot_bytes = slot ? 8 : 0;
      EXPECT_EQ(OffsetOf(e.get(), e->key().data()), kHeaderBytes + slot_bytes) << key_len;
      EXPECT_EQ(OffsetOf(e.get(), e->value().data()), kHeaderBytes + slot_bytes + static_cast<ptrdiff_t>(key_len));
      EXPECT_EQ(OffsetOf(e.get(), e->mutable_value()), OffsetOf(e.get(), e->value().data()));
      // Everything fits the allocation, and the spare room is exactly what value_capacity reports.
      const size_t fixed = kHeaderBytes + slot_bytes + key_len;
      EXPECT_GE(e->AllocatedBytes(), fixed + e->value().size());
      EXPECT_EQ(e->value_capacity(), e->AllocatedBytes() - fixed);
    }
  }
}

TEST(EntryTest, KeyAndValueAreBinarySafe) {
  const std::string key("a\0b\0\0c", 6);
  const std::string value("\0\0x\0y\0", 6);
  EntryPtr e = Make(key, value);
  EXPECT_EQ(e->key(), key);
  EXPECT_EQ(e->key().size(), 6u);
  EXPECT_EQ(e->value(), value);
  EXPECT_EQ(e->value().size(), 6u);
  EXPECT_EQ(e->type(), ValueType::kString);
  EXPECT_EQ(e->next(), nullptr);

  const std::string all = AllBytes();
  EntryPtr f = Make(all, all + all, 123456789);
  EXPECT_EQ(f->key(), all);
  EXPECT_EQ(f->value(), all + all);
  EXPECT_EQ(f->deadline(), 123456789);
}

TEST(EntryTest, EmptyKeyAndValue) {
  EntryPtr e = Make("", "");
  EXPECT_TRUE(e->key().empty());
  EXPECT_TRUE(e->value().empty());
  EXPECT_FALSE(e->has_deadline_slot());

  EntryPtr f = Make("", "", 42);
  EXPECT_TRUE(f->key().empty());
  EXPECT_TRUE(f->value().empty());
  EXPECT_EQ(f->deadline(), 42);
}

TEST(EntryTest, NoDeadlineSlotUnlessAsked) {
  EntryPtr e = Make("key", "value");
  EXPECT_FALSE(e->has_deadline_slot());
  EXPECT_EQ(e->deadline(), kNoDeadline);
  // Without a slot, set_deadline is a no-op and must not clobber the key.
  e->set_deadline(kNoDeadline);
  EXPECT_EQ(e->deadline(), kNoDeadline);
  EXPECT_EQ(e->key(), "key");
  EXPECT_EQ(e->value(), "value");
}

TEST(EntryTest, DeadlineSlotWhenDeadlineGiven) {
  const int64_t deadline = 1'700'000'000'123;
  EntryPtr e = Make("key", "value", deadline);
  EXPECT_TRUE(e->has_deadline_slot());
  EXPECT_EQ(e->deadline(), deadline);
  EXPECT_EQ(e->key(), "key");
  EXPECT_EQ(e->value(), "value");
}

TEST(EntryTest, ReservedDeadlineSlotStartsEmpty) {
  EntryPtr e = Make("key", "value", kNoDeadline, /*reserve_deadline=*/true);
  EXPECT_TRUE(e->has_deadline_slot());
  EXPECT_EQ(e->deadline(), kNoDeadline);
  e->set_deadline(99);
  EXPECT_EQ(e->deadline(), 99);
  EXPECT_EQ(e->key(), "key");
  EXPECT_EQ(e->value(), "value");
}

TEST(EntryTest, SetDeadlineChangesAndClearsWithoutTouchingKeyOrValue) {
  const std::string key("k\0ey", 4);
  const std::string value("v\0alue", 6);
  EntryPtr e = Make(key, value, 1000);
  for (int64_t d : {int64_t{2000}, int64_t{1}, INT64_MAX, int64_t{-5}, kNoDeadline, int64_t{777}}) {
    e->set_deadline(d);
    EXPECT_EQ(e->deadline(), d);
    EXPECT_TRUE(e->has_deadline_slot());  // the slot stays even when the key is persisted
    EXPECT_EQ(e->key(), key);
    EXPECT_EQ(e->value(), value);
  }
}

TEST(EntryTest, ValueCapacityAtLeastSize) {
  for (size_t len : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{100}, size_t{4096}, size_t{100000}}) {
    for (bool slot : {false, true}) {
      std::string value(len, 'x');
      EntryPtr e = Make("some-key", value, slot ? 5 : kNoDeadline);
      EXPECT_GE(e->value_capacity(), len) << len << " slot=" << slot;
      EXPECT_GE(e->AllocatedBytes(), kHeaderBytes + (slot ? 8 : 0) + 8 + len);
    }
  }
}

TEST(EntryTest, RequestedCapacityIsHonouredAndUsableInPlace) {
  EntryPtr e = Make("key", "abc", 321, false, 1000);
  ASSERT_GE(e->value_capacity(), 1000u);
  EXPECT_EQ(e->value(), "abc");
  // Grow in place up to capacity: write the whole range and set the length.
  size_t cap = e->value_capacity();
  for (size_t i = 3; i < cap; ++i) e->mutable_value()[i] = static_cast<char>('a' + i % 26);
  e->set_value_len(static_cast<uint32_t>(cap));
  EXPECT_EQ(e->value().size(), cap);
  EXPECT_EQ(e->value().substr(0, 3), "abc");
  EXPECT_EQ(e->value()[3], static_cast<char>('a' + 3 % 26));
  EXPECT_EQ(e->key(), "key");
  EXPECT_EQ(e->deadline(), 321);
  // Shrink in place.
  e->set_value_len(1);
  EXPECT_EQ(e->value(), "a");
}

TEST(EntryTest, CapacitySmallerThanValueIsIgnored) {
  EntryPtr e = Make("key", "0123456789", kNoDeadline, false, 3);
  EXPECT_EQ(e->value(), "0123456789");
  EXPECT_GE(e->value_capacity(), 10u);
}

TEST(EntryTest, AccessStampHas24Bits) {
  EntryPtr e = Make("key", "value", 10);
  EXPECT_EQ(e->access_stamp(), 0u);
  e->set_access_stamp(12345);
  EXPECT_EQ(e->access_stamp(), 12345u);
  e->set_access_stamp((1u << 24) - 1);
  EXPECT_EQ(e->access_stamp(), (1u << 24) - 1);
  EXPECT_EQ(e->type(), ValueType::kString);
  // The stamp shares the header with the type and flags: the deadline slot and payload are
  // unaffected.
  EXPECT_TRUE(e->has_deadline_slot());
  EXPECT_EQ(e->deadline(), 10);
  EXPECT_EQ(e->key(), "key");
  EXPECT_EQ(e->value(), "value");
}

TEST(EntryTest, NextLinkIsTheNextField) {
  EntryPtr a = Make("a", "1");
  EntryPtr b = Make("b", "2");
  a->set_next(b.get());
  EXPECT_EQ(a->next(), b.get());
  EXPECT_EQ(*a->next_link(), b.get());
  *a->next_link() = nullptr;
  EXPECT_EQ(a->next(), nullptr);
  EXPECT_EQ(a->key(), "a");
}

}  // namespace
}  // namespace lapse::engine
