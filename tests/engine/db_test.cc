// File: tests/engine/db_test.cc
//
// Db: one database's keys, their deadlines and the wheel that reclaims them. Time is a plain
// int64 the tests advance by hand. "Bounded" is asserted as a count of keys removed per
// Reclaim call, never as elapsed time.
//
// StoredKeys() lists what is physically stored (expired or not) through a const Scan with
// now_ms = INT64_MIN, so looking never deletes anything.

#include "engine/db.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/entry.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr size_t kAll = std::numeric_limits<size_t>::max();
constexpr int64_t kPast = std::numeric_limits<int64_t>::min();

std::string Key(int i) { return "key:" + std::to_string(i); }

std::set<std::string> StoredKeys(const Db& db) {
  std::set<std::string> keys;
  uint64_t cursor = 0;
  do {
    cursor = db.Scan(cursor, kPast, [&](const Entry* e) { keys.insert(std::string(e->key())); });
  } while (cursor != 0);
  return keys;
}

std::set<std::string> ScanLive(const Db& db, int64_t now) {
  std::set<std::string> keys;
  uint64_t cursor = 0;
  do {
    cursor = db.Scan(cursor, now, [&](const Entry* e) { keys.insert(std::string(e->key())); });
  } while (cursor != 0);
  return keys;
}

// Reclaims everything due at `now`; returns the number of calls made.
int ReclaimAll(Db& db, int64_t now, size_t max_records = kAll) {
  int calls = 1;
  while (db.Reclaim(now, max_records)) ++calls;
  return calls;
}

Entry* Put(Db& db, std::string_view key, std::string_view value, int64_t deadline, int64_t now) {
  return db.Put(key, value, ValueType::kString, deadline, now);
}

class DbTest : public ::testing::Test {
 protected:
  int64_t now = kStart;
  Db db{kStart};
};

// ---- Reads and lazy expiry ----

TEST_F(DbTest, FindHidesExpiredKeyAtExactlyItsDeadline) {
  const int64_t deadline = now + 100;
  Entry* e = Put(db, "k", "v", deadline, now);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->deadline(), deadline);
  EXPECT_EQ(db.volatile_count(), 1u);

  Entry* seen = db.Find("k", deadline - 1);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->value(), "v");
  EXPECT_EQ(db.stored(), 1u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 0u);

  EXPECT_EQ(db.Find("k", deadline), nullptr);
  EXPECT_EQ(db.stored(), 0u);  // deleted on the spot
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
  EXPECT_EQ(db.expiry_stats().expired_lazily, 1u);

  // Gone for good: a second look counts nothing more.
  EXPECT_EQ(db.Find("k", deadline + 1000), nullptr);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
  EXPECT_EQ(db.expiry_stats().expired_lazily, 1u);
  // Its wheel record is now stale and harmless.
  ReclaimAll(db, deadline + 5000);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
}

TEST_F(DbTest, EraseAndExtractTreatExpiredAsAbsent) {
  Put(db, "a", "1", now + 10, now);
  Put(db, "b", "2", now + 10, now);
  EXPECT_FALSE(db.Erase("a", now + 10));
  EXPECT_EQ(db.Extract("b", now + 11), nullptr);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 2u);
  EXPECT_EQ(db.expiry_stats().expired_lazily, 2u);
  EXPECT_FALSE(db.Erase("missing", now));
  EXPECT_EQ(db.Extract("missing", now), nullptr);
}

TEST_F(DbTest, PersistentKeysNeverExpire) {
  Put(db, "p", "v", kNoDeadline, now);
  EXPECT_EQ(db.volatile_count(), 0u);
  const int64_t far = now + (int64_t{1} << 40);
  ReclaimAll(db, far);
  ASSERT_NE(db.Find("p", far), nullptr);
  EXPECT_EQ(db.CountLive(far), 1u);
}

// ---- Put ----

TEST_F(DbTest, PutReplacesValueAndSetsOrClearsDeadline) {
  Put(db, "k", "first", kNoDeadline, now);
  EXPECT_EQ(db.volatile_count(), 0u);

  Entry* e = Put(db, "k", "second", now + 50, now);
  EXPECT_EQ(e->value(), "second");
  EXPECT_EQ(e->deadline(), now + 50);
  EXPECT_EQ(db.stored(), 1u);
  EXPECT_EQ(db.volatile_count(), 1u);

  // Replacing with the current deadline keeps it (SET ... KEEPTTL).
  e = Put(db, "k", "third", db.Find("k", now)->deadline(), now);
  EXPECT_EQ(e->value(), "third");
  EXPECT_EQ(e->deadline(), now + 50);
  EXPECT_EQ(db.volatile_count(), 1u);

  // A plain replace clears it; the old wheel record must not delete the key later.
  e = Put(db, "k", "fourth", kNoDeadline, now);
  EXPECT_EQ(e->deadline(), kNoDeadline);
  EXPECT_EQ(db.volatile_count(), 0u);
  ReclaimAll(db, now + 50);
  ReclaimAll(db, now + 100000);
  ASSERT_NE(db.Find("k", now + 100000), nullptr);
  EXPECT_EQ(db.Find("k", now + 100000)->value(), "fourth");
  EXPECT_EQ(db.expiry_stats().expired_keys, 0u);
}

TEST_F(DbTest, PutKeepTtlThenReclaimedAtOriginalDeadline) {
  const int64_t deadline = now + 300;
  Put(db, "k", "v1", deadline, now);
  now += 100;
  Put(db, "k", "v2-longer-value-that-may-need-a-new-block", db.Find("k", now)->deadline(), now);
  ReclaimAll(db, deadline - 1);
  ASSERT_NE(db.Find("k", deadline - 1), nullptr);
  ReclaimAll(db, deadline);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
  EXPECT_EQ(db.expiry_stats().expired_lazily, 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
}

// Value sizes that alternate between the in-place path and the reallocating path, with and
// without deadlines; every step is checked, and the final state expires correctly.
TEST_F(DbTest, PutInPlaceAndReallocatedAgree) {
  const std::vector<size_t> sizes = {0, 1, 5, 40, 3, 200, 190, 7, 5000, 10, 0, 64, 65, 2};
  size_t volatile_expected = 0;
  int64_t last_deadline = kNoDeadline;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string value(sizes[i], static_cast<char>('a' + i));
    if (!value.empty()) value[0] = '\0';  // binary
    const int64_t deadline = (i % 3 == 0) ? kNoDeadline : now + 1000 + static_cast<int64_t>(i);
    Entry* e = Put(db, "k", value, deadline, now);
    last_deadline = deadline;
    volatile_expected = deadline == kNoDeadline ? 0 : 1;
    EXPECT_EQ(e->value(), value) << i;
    EXPECT_EQ(e->deadline(), deadline) << i;
    EXPECT_EQ(db.Find("k", now), e);
    EXPECT_EQ(db.stored(), 1u);
    EXPECT_EQ(db.volatile_count(), volatile_expected) << i;
  }
  ASSERT_NE(last_deadline, kNoDeadline);
  ReclaimAll(db, last_deadline - 1);
  ASSERT_NE(db.Find("k", last_deadline - 1), nullptr);
  ReclaimAll(db, last_deadline);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
}

TEST_F(DbTest, PutValueAliasingTheOldValue) {
  Entry* e = Put(db, "k", "hello world", kNoDeadline, now);
  std::string expected(e->value().substr(6));
  e = Put(db, "k", e->value().substr(6), kNoDeadline, now);  // overlapping in-place copy
  EXPECT_EQ(e->value(), expected);
  e = Put(db, "k", std::string(1000, 'z'), kNoDeadline, now);
  e = Put(db, "k", e->value().substr(10, 5), now + 10, now);  // old block freed after copy
  EXPECT_EQ(e->value(), "zzzzz");
}

// ---- SetDeadline ----

TEST_F(DbTest, SetDeadlineAddChangeRemove) {
  Entry* e = Put(db, "k", "value", kNoDeadline, now);
  e->set_access_stamp(4242);

  e = db.SetDeadline(e, now + 100, now);  // add: the entry may move to gain a slot
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(db.Find("k", now), e);
  EXPECT_EQ(e->deadline(), now + 100);
  EXPECT_EQ(e->value(), "value");
  EXPECT_EQ(e->access_stamp(), 4242u);
  EXPECT_EQ(db.volatile_count(), 1u);

  e = db.SetDeadline(e, now + 100, now);  // same
  EXPECT_EQ(e->deadline(), now + 100);
  EXPECT_EQ(db.volatile_count(), 1u);

  e = db.SetDeadline(e, now + 500, now);  // later
  EXPECT_EQ(e->deadline(), now + 500);
  EXPECT_EQ(db.volatile_count(), 1u);
  ReclaimAll(db, now + 100);  // the record filed for +100 is stale now
  ASSERT_NE(db.Find("k", now + 100), nullptr);

  e = db.Find("k", now + 100);
  e = db.SetDeadline(e, now + 200, now + 100);  // earlier
  EXPECT_EQ(e->deadline(), now + 200);
  ReclaimAll(db, now + 199);
  ASSERT_NE(db.Find("k", now + 199), nullptr);

  e = db.SetDeadline(db.Find("k", now + 199), kNoDeadline, now + 199);  // remove (PERSIST)
  EXPECT_EQ(e->deadline(), kNoDeadline);
  EXPECT_EQ(db.volatile_count(), 0u);
  ReclaimAll(db, now + 200);
  ReclaimAll(db, now + 500);
  ReclaimAll(db, now + 1000000);
  ASSERT_NE(db.Find("k", now + 1000000), nullptr);
  EXPECT_EQ(db.Find("k", now + 1000000)->value(), "value");
  EXPECT_EQ(db.expiry_stats().expired_keys, 0u);

  // Removing from a key that has none is a no-op.
  e = db.SetDeadline(db.Find("k", now), kNoDeadline, now);
  EXPECT_EQ(e->deadline(), kNoDeadline);
  EXPECT_EQ(db.volatile_count(), 0u);

  // Re-adding reuses the slot that the key kept.
  e = db.SetDeadline(e, now + 2000000, now + 1000000);
  EXPECT_EQ(e->deadline(), now + 2000000);
  EXPECT_EQ(db.volatile_count(), 1u);
  ReclaimAll(db, now + 2000000);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
}

TEST_F(DbTest, SetDeadlineInThePastDeletes) {
  Entry* a = Put(db, "a", "1", kNoDeadline, now);
  Entry* b = Put(db, "b", "2", now + 1000, now);
  Entry* c = Put(db, "c", "3", now + 1000, now);
  EXPECT_EQ(db.volatile_count(), 2u);
  EXPECT_EQ(db.SetDeadline(a, now - 5, now), nullptr);
  EXPECT_EQ(db.SetDeadline(b, now, now), nullptr);  // exactly now is already past
  EXPECT_EQ(db.Find("a", now), nullptr);
  EXPECT_EQ(db.Find("b", now), nullptr);
  EXPECT_EQ(db.stored(), 1u);
  EXPECT_EQ(db.volatile_count(), 1u);
  // The survivor is untouched, and b's old record does not hurt anything.
  ReclaimAll(db, now + 999);
  EXPECT_EQ(db.Find("c", now + 999), c);
  ReclaimAll(db, now + 1000);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
}

// ---- ReserveValue ----

TEST_F(DbTest, ReserveValueKeepsContentDeadlineAndTracking) {
  const std::string initial("ab\0cd", 5);
  Entry* e = Put(db, "k", initial, now + 700, now);
  e->set_access_stamp(77);
  for (size_t want : {size_t{3}, size_t{64}, size_t{1000}, size_t{5000}, size_t{100000}}) {
    size_t len = e->value().size();
    want = std::max(want, len + 1);  // room for the byte appended below
    Entry* r = db.ReserveValue(e, want);
    ASSERT_GE(r->value_capacity(), want);
    EXPECT_EQ(r->value().substr(0, 5), initial);
    EXPECT_EQ(r->key(), "k");
    EXPECT_EQ(r->deadline(), now + 700);
    EXPECT_EQ(r->access_stamp(), 77u);
    EXPECT_EQ(db.Find("k", now), r);
    EXPECT_EQ(db.stored(), 1u);
    EXPECT_EQ(db.volatile_count(), 1u);
    // Use the room like APPEND does.
    r->mutable_value()[len] = 'x';
    r->set_value_len(static_cast<uint32_t>(len + 1));
    e = r;
  }
  EXPECT_EQ(e->value(), initial + "xxxxx");
  ReclaimAll(db, now + 699);
  ASSERT_NE(db.Find("k", now + 699), nullptr);
  ReclaimAll(db, now + 700);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
  EXPECT_EQ(db.volatile_count(), 0u);
}

TEST_F(DbTest, ReserveValueOnPersistentKey) {
  Entry* e = Put(db, "k", "abc", kNoDeadline, now);
  e = db.ReserveValue(e, 4096);
  EXPECT_EQ(e->value(), "abc");
  EXPECT_EQ(e->deadline(), kNoDeadline);
  EXPECT_EQ(db.volatile_count(), 0u);
  // Repeated growth by small appends stays correct.
  std::string expected = "abc";
  for (int i = 0; i < 3000; ++i) {
    size_t len = e->value().size();
    e = db.ReserveValue(e, len + 7);
    std::memcpy(e->mutable_value() + len, "1234567", 7);
    e->set_value_len(static_cast<uint32_t>(len + 7));
    expected += "1234567";
  }
  EXPECT_EQ(db.Find("k", now)->value(), expected);
}

// ---- Extract / Adopt (MOVE) ----

TEST_F(DbTest, ExtractAdoptKeepsDeadlineAndWheelTracking) {
  Db other(kStart);
  const int64_t deadline = now + 1234;
  Put(db, "moving", "payload", deadline, now);
  Put(db, "staying", "x", deadline, now);
  Put(db, "persistent", "p", kNoDeadline, now);

  now += 10;
  Entry* e = db.Extract("moving", now);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->deadline(), deadline);
  EXPECT_EQ(db.stored(), 2u);
  EXPECT_EQ(db.volatile_count(), 1u);
  EXPECT_EQ(db.Find("moving", now), nullptr);
  other.Adopt(e, now);
  EXPECT_EQ(other.stored(), 1u);
  EXPECT_EQ(other.volatile_count(), 1u);
  Entry* found = other.Find("moving", now);
  ASSERT_EQ(found, e);
  EXPECT_EQ(found->value(), "payload");
  EXPECT_EQ(found->deadline(), deadline);

  Entry* p = db.Extract("persistent", now);
  other.Adopt(p, now);
  EXPECT_EQ(other.volatile_count(), 1u);
  EXPECT_EQ(db.volatile_count(), 1u);

  // The source's record for "moving" is stale: reclaiming there removes only "staying".
  ReclaimAll(db, deadline);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);

  // The target reclaims "moving" at its deadline, without any read.
  ReclaimAll(other, deadline - 1);
  EXPECT_EQ(other.stored(), 2u);
  ReclaimAll(other, deadline);
  EXPECT_EQ(other.stored(), 1u);
  EXPECT_EQ(other.volatile_count(), 0u);
  EXPECT_EQ(other.expiry_stats().expired_keys, 1u);
  EXPECT_EQ(other.expiry_stats().expired_lazily, 0u);
  EXPECT_NE(other.Find("persistent", deadline), nullptr);
}

// Adopting into databases whose wheels stand at different times: one never advanced (time
// 0, as a default-constructed Db) and one already reclaimed up to the present.
TEST_F(DbTest, AdoptIntoDatabasesWithDifferentWheelTimes) {
  Db fresh;  // wheel at time 0
  Db current(kStart - 100000);
  ReclaimAll(current, now);  // its wheel has caught up with the clock
  for (int i = 0; i < 50; ++i) Put(db, Key(i), "v", now + 1000 + i, now);
  now += 10;
  for (int i = 0; i < 50; ++i) {
    Db& target = i % 2 ? fresh : current;
    target.Adopt(db.Extract(Key(i), now), now);
  }
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(fresh.volatile_count() + current.volatile_count(), 50u);
  ReclaimAll(current, now + 500);
  ReclaimAll(fresh, now + 500);
  EXPECT_EQ(current.stored() + fresh.stored(), 50u);
  const int64_t t = kStart + 1024;  // deadlines kStart+1000 .. kStart+1024 are due
  ReclaimAll(current, t, 3);
  ReclaimAll(fresh, t, 3);
  EXPECT_EQ(current.stored() + fresh.stored(), 25u);
  for (int i = 0; i < 50; ++i) {
    Db& target = i % 2 ? fresh : current;
    EXPECT_EQ(target.Find(Key(i), t) != nullptr, i > 24) << i;
  }
  ReclaimAll(current, kStart + 1049);
  ReclaimAll(fresh, kStart + 1049);
  EXPECT_EQ(current.stored() + fresh.stored(), 0u);
  EXPECT_EQ(current.expiry_stats().expired_lazily + fresh.expiry_stats().expired_lazily, 0u);
  EXPECT_EQ(current.expiry_stats().expired_keys + fresh.expiry_stats().expired_keys, 50u);
  // The source's records were all stale.
  ReclaimAll(db, kStart + 1049);
  EXPECT_EQ(db.expiry_stats().expired_keys, 0u);
}

// ---- Reclaim ----

TEST_F(DbTest, ReclaimDeletesOldestFirstInBoundedSlices) {
  const int n = 3000;
  std::vector<int64_t> deadlines;
  for (int i = 0; i < n; ++i) deadlines.push_back(now + 1 + i * 37 % 100000);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  // Insert in a shuffled order so that the table order says nothing about deadlines.
  std::mt19937 rng(3);
  std::shuffle(order.begin(), order.end(), rng);
  for (int i : order) Put(db, Key(i), "v", deadlines[i], now);
  std::vector<int> by_deadline(n);
  for (int i = 0; i < n; ++i) by_deadline[i] = i;
  std::sort(by_deadline.begin(), by_deadline.end(), [&](int a, int b) { return deadlines[a] < deadlines[b]; });

  const int64_t after_all = now + 200000;
  const size_t slice = 25;
  size_t removed_total = 0;
  int calls = 0;
  bool more = true;
  while (more) {
    size_t before = db.stored();
    more = db.Reclaim(after_all, slice);
    ++calls;
    size_t removed = before - db.stored();
    ASSERT_LE(removed, slice) << "call " << calls;
    removed_total += removed;
    // The removed keys are exactly the `removed_total` oldest ones.
    if (calls % 10 == 0 || !more) {
      std::set<std::string> stored = StoredKeys(db);
      ASSERT_EQ(stored.size(), n - removed_total);
      for (size_t j = 0; j < static_cast<size_t>(n); ++j) {
        ASSERT_EQ(stored.count(Key(by_deadline[j])), j < removed_total ? 0u : 1u)
            << "rank " << j << " after " << removed_total << " removals";
      }
    }
    ASSERT_LT(calls, 100000);
  }
  EXPECT_EQ(removed_total, static_cast<size_t>(n));
  EXPECT_GE(calls, n / static_cast<int>(slice));
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, static_cast<uint64_t>(n));
  EXPECT_EQ(db.expiry_stats().expired_lazily, 0u);
  EXPECT_FALSE(db.Reclaim(after_all, slice));
}

TEST_F(DbTest, ReclaimStopsAtNow) {
  for (int i = 0; i < 1000; ++i) Put(db, Key(i), "v", now + 1 + i, now);
  for (int64_t t = now; t <= now + 1000; t += 50) {
    ReclaimAll(db, t, 7);
    EXPECT_EQ(db.stored(), static_cast<size_t>(now + 1000 - t)) << t - now;
    std::set<std::string> stored = StoredKeys(db);
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(stored.count(Key(i)), now + 1 + i > t ? 1u : 0u) << i;
    }
  }
}

// 200k keys that expire in the same millisecond: reclaimed 1000 records per call at most.
TEST_F(DbTest, MassExpiryInOneMillisecondIsReclaimedInSlices) {
  const int n = 200000;
  const int64_t deadline = now + 60000;
  for (int i = 0; i < n; ++i) Put(db, Key(i), "v", deadline, now);
  Put(db, "persistent", "p", kNoDeadline, now);
  ASSERT_EQ(db.stored(), static_cast<size_t>(n) + 1);
  ASSERT_EQ(db.volatile_count(), static_cast<size_t>(n));

  // Before the deadline the wheel may cascade records downwards, but deletes nothing.
  bool more = true;
  int calls = 0;
  while (more) {
    more = db.Reclaim(deadline - 1, 1000);
    ASSERT_EQ(db.stored(), static_cast<size_t>(n) + 1);
    ASSERT_LT(++calls, 10000);
  }

  more = true;
  calls = 0;
  int productive_calls = 0;
  while (more) {
    size_t before = db.stored();
    more = db.Reclaim(deadline, 1000);
    size_t removed = before - db.stored();
    ASSERT_LE(removed, 1000u) << "call " << calls;
    if (removed > 0) ++productive_calls;
    if (more) {
      ASSERT_GT(db.stored(), 1u);  // true means due work was left undone
    }
    ASSERT_LT(++calls, 10000);
  }
  EXPECT_GE(productive_calls, n / 1000);
  EXPECT_EQ(db.stored(), 1u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.wheel_records(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, static_cast<uint64_t>(n));
  EXPECT_NE(db.Find("persistent", deadline), nullptr);
}

// Wheel records outlive the state they were filed for; none of them may delete a live key.
TEST_F(DbTest, StaleRecordsNeverDeleteLiveKeys) {
  const int n = 400;
  const int64_t d1 = now + 5000;
  for (int i = 0; i < n; ++i) Put(db, Key(i), "old", d1 + i % 7, now);
  now += 100;
  for (int i = 0; i < n; ++i) {
    std::string k = Key(i);
    switch (i % 8) {
      case 0:  // deleted and re-set without a deadline
        ASSERT_TRUE(db.Erase(k, now));
        Put(db, k, "new", kNoDeadline, now);
        break;
      case 1:  // deleted and re-set with a later deadline
        ASSERT_TRUE(db.Erase(k, now));
        Put(db, k, "new", d1 + 100000, now);
        break;
      case 2:  // overwritten with a later deadline
        Put(db, k, "new", d1 + 100000, now);
        break;
      case 3:  // persisted
        ASSERT_NE(db.SetDeadline(db.Find(k, now), kNoDeadline, now), nullptr);
        break;
      case 4:  // pushed later by SetDeadline
        ASSERT_NE(db.SetDeadline(db.Find(k, now), d1 + 100000, now), nullptr);
        break;
      case 5:  // overwritten without deadline, with a big value (reallocated)
        Put(db, k, std::string(3000, 'n'), kNoDeadline, now);
        break;
      case 6:  // moved later by one millisecond only (same level-0 neighbourhood)
        ASSERT_NE(db.SetDeadline(db.Find(k, now), d1 + i % 7 + 1, now), nullptr);
        break;
      case 7:  // left alone: expires at d1 + i % 7
        break;
    }
  }
  // Reclaim in small slices through the old deadlines, then well past them.
  for (int64_t t = now; t <= d1 + 10; t += 3) ReclaimAll(db, t, 5);
  for (int i = 0; i < n; ++i) {
    Entry* e = db.Find(Key(i), d1 + 10);
    if (i % 8 == 7 || i % 8 == 6) {
      EXPECT_EQ(e, nullptr) << i;
    } else {
      ASSERT_NE(e, nullptr) << i;
      const int kind = i % 8;
      const std::string expected = kind <= 2 ? "new" : kind == 5 ? std::string(3000, 'n') : "old";
      EXPECT_EQ(e->value(), expected) << i;
    }
  }
  // Keys of kind 6/7 were reclaimed by the background, not by the Finds above.
  EXPECT_EQ(db.expiry_stats().expired_lazily, 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, static_cast<uint64_t>(n / 4));

  ReclaimAll(db, d1 + 99999);
  EXPECT_EQ(db.CountLive(d1 + 99999), static_cast<size_t>(n / 8 * 6));
  ReclaimAll(db, d1 + 100000);
  // Kinds 1, 2 and 4 expire now; 0, 3 and 5 remain forever.
  EXPECT_EQ(db.stored(), static_cast<size_t>(n / 8 * 3));
  EXPECT_EQ(db.volatile_count(), 0u);
  ReclaimAll(db, d1 + (int64_t{1} << 41));
  EXPECT_EQ(db.stored(), static_cast<size_t>(n / 8 * 3));
}

// A key deleted and re-created with the very same deadline has two records; it expires once.
TEST_F(DbTest, DuplicateRecordsForTheSameDeadline) {
  const int64_t d = now + 777;
  Put(db, "k", "1", d, now);
  ASSERT_TRUE(db.Erase("k", now));
  Put(db, "k", "2", d, now);
  Entry* e = db.Extract("k", now);
  db.Adopt(e, now);  // and once more through Extract/Adopt in the same db
  EXPECT_EQ(db.volatile_count(), 1u);
  EXPECT_GE(db.wheel_records(), 3u);
  ReclaimAll(db, d - 1);
  EXPECT_EQ(db.Find("k", d - 1)->value(), "2");
  ReclaimAll(db, d);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_keys, 1u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.wheel_records(), 0u);
}

TEST_F(DbTest, FarDeadlinesAndBigJumps) {
  const int64_t max_ttl = (int64_t{1} << 31) * 1000;  // 2^31 seconds
  Put(db, "far", "v", now + max_ttl, now);
  Put(db, "near", "v", now + 1, now);
  Put(db, "mid", "v", now + (int64_t{1} << 36), now);
  ReclaimAll(db, now + 1);
  EXPECT_EQ(db.stored(), 2u);
  ReclaimAll(db, now + max_ttl - 1);
  EXPECT_EQ(db.stored(), 1u);
  ASSERT_NE(db.Find("far", now + max_ttl - 1), nullptr);
  ReclaimAll(db, now + max_ttl);
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.expiry_stats().expired_lazily, 0u);
}

// ---- Counting, scanning, sampling ----

TEST_F(DbTest, CountLive) {
  EXPECT_EQ(db.CountLive(now), 0u);
  for (int i = 0; i < 300; ++i) {
    int64_t deadline = i % 3 == 0 ? kNoDeadline : now + 1 + i;
    Put(db, Key(i), "v", deadline, now);
  }
  EXPECT_EQ(db.CountLive(now), 300u);
  // At now + 151, keys with deadline now + 1 + i <= now + 151 (i <= 150, i % 3 != 0) are due.
  size_t due = 0;
  for (int i = 0; i <= 150; ++i) due += i % 3 != 0;
  EXPECT_EQ(db.stored(), 300u);
  EXPECT_EQ(db.CountLive(now + 151), 300u - due);
  EXPECT_EQ(db.stored(), 300u - due);  // CountLive reclaimed them physically
  EXPECT_EQ(db.CountLive(now + 100000), 100u);
}

TEST_F(DbTest, VolatileCountBookkeeping) {
  Db other(kStart);
  auto check = [&](size_t a, size_t b) {
    ASSERT_EQ(db.volatile_count(), a);
    ASSERT_EQ(other.volatile_count(), b);
  };
  Put(db, "a", "1", now + 100, now);  // +1
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  Put(db, "a", "2", now + 200, now);  // replace volatile with volatile
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  Put(db, "a", std::string(500, 'x'), now + 300, now);  // replace, reallocated
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  Put(db, "a", "3", kNoDeadline, now);  // -1
  ASSERT_NO_FATAL_FAILURE(check(0, 0));
  Entry* e = db.SetDeadline(db.Find("a", now), now + 100, now);  // +1
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  e = db.SetDeadline(e, kNoDeadline, now);  // -1
  ASSERT_NO_FATAL_FAILURE(check(0, 0));
  e = db.SetDeadline(e, now + 100, now);  // +1 (slot reused)
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  e = db.ReserveValue(e, 10000);  // unchanged
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  EXPECT_EQ(db.SetDeadline(e, now - 1, now), nullptr);  // deleted: -1
  ASSERT_NO_FATAL_FAILURE(check(0, 0));

  Put(db, "b", "1", now + 100, now);
  Put(db, "c", "1", now + 100, now);
  Put(db, "d", "1", now + 50, now);
  Put(db, "e", "1", now + 50, now);
  Put(db, "p", "1", kNoDeadline, now);
  ASSERT_NO_FATAL_FAILURE(check(4, 0));
  other.Adopt(db.Extract("b", now), now);  // moves with its deadline
  ASSERT_NO_FATAL_FAILURE(check(3, 1));
  other.Adopt(db.Extract("p", now), now);  // persistent: no change
  ASSERT_NO_FATAL_FAILURE(check(3, 1));
  EXPECT_TRUE(db.Erase("c", now));
  ASSERT_NO_FATAL_FAILURE(check(2, 1));
  EXPECT_EQ(db.Find("d", now + 50), nullptr);  // lazy expiry
  ASSERT_NO_FATAL_FAILURE(check(1, 1));
  ReclaimAll(db, now + 50);  // background expiry of "e"
  ASSERT_NO_FATAL_FAILURE(check(0, 1));
  ReclaimAll(other, now + 100);
  ASSERT_NO_FATAL_FAILURE(check(0, 0));

  for (int i = 0; i < 10; ++i) Put(db, Key(i), "v", now + 1000, now);
  ASSERT_NO_FATAL_FAILURE(check(10, 0));
  db.Clear();
  ASSERT_NO_FATAL_FAILURE(check(0, 0));
  EXPECT_EQ(db.stored(), 0u);
  for (int i = 0; i < 10; ++i) Put(db, Key(i), "v", now + 1000, now);
  KvTable taken = db.TakeTable();
  EXPECT_EQ(taken.size(), 10u);
  ASSERT_NO_FATAL_FAILURE(check(0, 0));
  EXPECT_EQ(db.stored(), 0u);
  EXPECT_EQ(db.wheel_records(), 0u);
  // The emptied db works normally afterwards.
  Put(db, "after", "v", now + 10, now);
  ASSERT_NO_FATAL_FAILURE(check(1, 0));
  ReclaimAll(db, now + 10);
  ASSERT_NO_FATAL_FAILURE(check(0, 0));
  EXPECT_EQ(db.stored(), 0u);
}

TEST_F(DbTest, ScanSkipsExpiredWithoutDeleting) {
  std::set<std::string> live_at_500;
  for (int i = 0; i < 1000; ++i) {
    int64_t deadline = i % 4 == 0 ? kNoDeadline : now + i;
    Put(db, Key(i), "v", deadline, now);
    if (deadline == kNoDeadline || deadline > now + 500) live_at_500.insert(Key(i));
  }
  EXPECT_EQ(ScanLive(db, now + 500), live_at_500);
  EXPECT_EQ(db.stored(), 1000u);  // Scan is read-only
  EXPECT_EQ(StoredKeys(db).size(), 1000u);
  // Exactly at a deadline the key is already hidden.
  EXPECT_EQ(ScanLive(db, now + 1).count(Key(1)), 0u);
  EXPECT_EQ(ScanLive(db, now).count(Key(1)), 1u);
}

TEST_F(DbTest, RandomLiveNeverReturnsAnExpiredKey) {
  for (int i = 0; i < 2000; ++i) Put(db, Key(i), "v", i % 10 == 0 ? now + 100000 : now + 10, now);
  const int64_t t = now + 10;
  std::mt19937_64 rng(17);
  for (int s = 0; s < 3000; ++s) {
    Entry* e = db.RandomLive(rng(), t);
    ASSERT_NE(e, nullptr);
    ASSERT_GT(e->deadline(), t);
    ASSERT_EQ(db.Find(e->key(), t), e);
  }
  // Only one live key among many expired ones: still found (after the bounded retries).
  Db sparse(kStart);
  for (int i = 0; i < 5000; ++i) Put(sparse, Key(i), "v", now + 10, now);
  Put(sparse, "survivor", "v", kNoDeadline, now);
  for (int s = 0; s < 20; ++s) {
    Entry* e = sparse.RandomLive(rng(), t);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->key(), "survivor");
  }
  // Nothing live at all.
  Db dead(kStart);
  for (int i = 0; i < 500; ++i) Put(dead, Key(i), "v", now + 10, now);
  EXPECT_EQ(dead.RandomLive(rng(), t), nullptr);
  EXPECT_EQ(dead.stored(), 0u);
  EXPECT_EQ(Db(kStart).RandomLive(1, t), nullptr);
}

TEST_F(DbTest, SampledTtlsGiveTheAverageAndTheStaleShare) {
  EXPECT_EQ(db.SampleTtls(now).average_ttl_ms, 0);
  EXPECT_EQ(db.SampleTtls(now).stale_fraction, 0);
  Put(db, "a", "v", now + 1000, now);
  Put(db, "b", "v", now + 3000, now);
  Put(db, "p", "v", kNoDeadline, now);
  EXPECT_EQ(db.SampleTtls(now).average_ttl_ms, 2000);
  EXPECT_EQ(db.SampleTtls(now).stale_fraction, 0);
  // At now + 1000 "a" has expired but is still stored: half the volatile keys are stale, and
  // the average covers "b" alone.
  Db::TtlSample later = db.SampleTtls(now + 1000);
  EXPECT_EQ(later.average_ttl_ms, 2000);
  EXPECT_DOUBLE_EQ(later.stale_fraction, 0.5);
}

TEST_F(DbTest, MoveConstructedDbKeepsEverything) {
  for (int i = 0; i < 100; ++i) Put(db, Key(i), "v", now + 10 + i, now);
  Db moved(std::move(db));
  EXPECT_EQ(moved.stored(), 100u);
  EXPECT_EQ(moved.volatile_count(), 100u);
  ReclaimAll(moved, now + 59);
  EXPECT_EQ(moved.stored(), 50u);
  Db assigned(0);
  assigned = std::move(moved);
  ReclaimAll(assigned, now + 200);
  EXPECT_EQ(assigned.stored(), 0u);
  EXPECT_EQ(assigned.expiry_stats().expired_keys, 100u);
}

}  // namespace
}  // namespace lapse::engine
