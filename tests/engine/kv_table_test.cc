// File: tests/engine/kv_table_test.cc
//
// KvTable: chained table with incremental rehashing and a reverse-binary Scan cursor.
//
// Presence is checked with Probe(), which walks the key's bucket in both arrays through
// ForEachInBucketOf — unlike Find, it moves no bucket, so a check of every key sees one and
// the same intermediate rehash state. The table recomputes HashKey(key) when it moves a
// bucket, so every hash handed to it here is HashKey(key), as the Db does.

#include "engine/kv_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "engine/entry.h"
#include "engine/hash.h"

namespace lapse::engine {
namespace {

std::string Key(std::string_view prefix, int i) { return std::string(prefix) + ":" + std::to_string(i); }

// A thin owner around KvTable that speaks keys instead of hashes and links.
class Table {
 public:
  KvTable& raw() { return table_; }
  const KvTable& raw() const { return table_; }

  Entry* Insert(std::string_view key, std::string_view value = "v") {
    Entry* e = Entry::Create(key, value, ValueType::kString, kNoDeadline);
    table_.Insert(e, HashKey(key));
    return e;
  }
  Entry* Find(std::string_view key) { return table_.Find(key, HashKey(key)); }
  bool Erase(std::string_view key) {
    Entry** link = table_.FindLink(key, HashKey(key));
    if (link == nullptr) return false;
    Entry::Destroy(table_.UnlinkAt(link));
    return true;
  }
  // Number of entries with `key` reachable for lookups, without moving any bucket.
  int Probe(std::string_view key) {
    int found = 0;
    table_.ForEachInBucketOf(HashKey(key), [&](Entry** link) {
      if ((*link)->key() == key) ++found;
      return false;
    });
    return found;
  }
  // One whole scan with no mutation in between: key -> times returned.
  std::map<std::string, int> FullScan() const {
    std::map<std::string, int> seen;
    uint64_t cursor = 0;
    size_t steps = 0;
    do {
      cursor = table_.Scan(cursor, [&](const Entry* e) { ++seen[std::string(e->key())]; });
      EXPECT_LT(++steps, size_t{1} << 24) << "scan does not terminate";
    } while (cursor != 0 && steps < (size_t{1} << 24));
    return seen;
  }
  void FinishRehash() {
    while (table_.RehashStep(100)) {
    }
  }

 private:
  KvTable table_;
};

// Every key in `present` is reachable exactly once, and every key in `absent` not at all.
void ExpectExactly(Table& t, const std::set<std::string>& present, const std::vector<std::string>& absent = {}) {
  ASSERT_EQ(t.raw().size(), present.size());
  for (const std::string& k : present) ASSERT_EQ(t.Probe(k), 1) << k << " rehashing=" << t.raw().rehashing();
  for (const std::string& k : absent) ASSERT_EQ(t.Probe(k), 0) << k;
}

TEST(KvTableTest, EmptyTable) {
  Table t;
  EXPECT_EQ(t.raw().size(), 0u);
  EXPECT_EQ(t.Find("nope"), nullptr);
  EXPECT_EQ(t.raw().FindLink("nope", HashKey("nope")), nullptr);
  EXPECT_EQ(t.raw().RandomEntry(12345), nullptr);
  EXPECT_FALSE(t.raw().rehashing());
  EXPECT_FALSE(t.raw().RehashStep(10));
  int calls = 0;
  EXPECT_EQ(t.raw().Scan(0, [&](const Entry*) { ++calls; }), 0u);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(t.Probe("nope"), 0);
  EXPECT_FALSE(t.Erase("nope"));
}

TEST(KvTableTest, InsertFindUnlink) {
  Table t;
  Entry* a = t.Insert("alpha", "1");
  Entry* b = t.Insert("beta", "2");
  Entry* c = t.Insert(std::string("ga\0mma", 6), "3");
  EXPECT_EQ(t.raw().size(), 3u);
  EXPECT_EQ(t.Find("alpha"), a);
  EXPECT_EQ(t.Find("beta"), b);
  EXPECT_EQ(t.Find(std::string("ga\0mma", 6)), c);
  EXPECT_EQ(t.Find("ga"), nullptr);  // a NUL-truncated prefix is a different key
  EXPECT_EQ(t.Find("gamma"), nullptr);

  Entry** link = t.raw().FindLink("beta", HashKey("beta"));
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(*link, b);
  Entry* unlinked = t.raw().UnlinkAt(link);
  EXPECT_EQ(unlinked, b);
  EXPECT_EQ(unlinked->next(), nullptr);
  Entry::Destroy(unlinked);
  EXPECT_EQ(t.raw().size(), 2u);
  EXPECT_EQ(t.Find("beta"), nullptr);
  EXPECT_EQ(t.Find("alpha"), a);
  EXPECT_EQ(t.Find(std::string("ga\0mma", 6)), c);
}

TEST(KvTableTest, ReplaceAtKeepsChainAndSize) {
  Table t;
  // Many keys in few buckets: chains of several entries, so a replaced entry has neighbours.
  std::set<std::string> keys;
  for (int i = 0; i < 12; ++i) {
    keys.insert(Key("k", i));
    t.Insert(Key("k", i), "old");
  }
  t.FinishRehash();
  for (int i = 0; i < 12; ++i) {
    std::string k = Key("k", i);
    Entry** link = t.raw().FindLink(k, HashKey(k));
    ASSERT_NE(link, nullptr);
    Entry* fresh = Entry::Create(k, "new:" + std::to_string(i), ValueType::kString, kNoDeadline);
    Entry* old = t.raw().ReplaceAt(link, fresh);
    EXPECT_EQ(old->key(), k);
    EXPECT_EQ(old->value(), "old");
    Entry::Destroy(old);
    EXPECT_EQ(t.raw().size(), 12u);
    ExpectExactly(t, keys);
  }
  for (int i = 0; i < 12; ++i) {
    Entry* e = t.Find(Key("k", i));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->value(), "new:" + std::to_string(i));
  }
}

TEST(KvTableTest, ForEachInBucketOfCanUnlink) {
  Table t;
  for (int i = 0; i < 40; ++i) t.Insert(Key("k", i));
  std::string target = Key("k", 17);
  int visited = 0;
  t.raw().ForEachInBucketOf(HashKey(target), [&](Entry** link) {
    ++visited;
    if ((*link)->key() != target) return false;
    Entry::Destroy(t.raw().UnlinkAt(link));
    return true;
  });
  EXPECT_GE(visited, 1);
  EXPECT_EQ(t.raw().size(), 39u);
  EXPECT_EQ(t.Find(target), nullptr);
  for (int i = 0; i < 40; ++i) {
    if (i != 17) {
      EXPECT_NE(t.Find(Key("k", i)), nullptr) << i;
    }
  }
}

// Grows from 16 buckets through several doublings, one insert at a time; after every insert
// (each of which moves at most one bucket) every key is reachable exactly once.
TEST(KvTableTest, GrowthKeepsEveryKeyFindableAtEveryStep) {
  Table t;
  std::set<std::string> present;
  size_t rehashing_states = 0;
  size_t last_buckets = 0;
  int growths = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string k = Key("grow", i);
    t.Insert(k, k);
    present.insert(k);
    if (t.raw().rehashing()) ++rehashing_states;
    if (!t.raw().rehashing() && t.raw().bucket_count() > last_buckets) {
      if (last_buckets != 0) ++growths;
      last_buckets = t.raw().bucket_count();
    }
    ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present, {Key("grow", i + 1)}));
  }
  EXPECT_GT(rehashing_states, 0u);
  EXPECT_GE(growths, 4);  // 16 -> ... -> at least 256
  t.FinishRehash();
  // Load factor at most 1 once quiescent (after one more insert triggers any pending grow).
  EXPECT_GE(t.raw().bucket_count(), t.raw().size() / 2);
  for (const std::string& k : present) {
    Entry* e = t.Find(k);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->value(), k);
  }
}

// Drives one rehash by hand, a single bucket per step, checking all keys between steps.
TEST(KvTableTest, ManualRehashStepsKeepEveryKeyFindable) {
  Table t;
  std::set<std::string> present;
  int i = 0;
  // Insert until a rehash of a few hundred keys is under way, then stop mutating.
  while (!(t.raw().rehashing() && present.size() >= 200)) {
    std::string k = Key("m", i++);
    t.Insert(k);
    present.insert(k);
  }
  ASSERT_TRUE(t.raw().rehashing());
  size_t steps = 0;
  while (true) {
    ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present));
    // An unmodified scan during rehashing returns every key exactly once.
    auto seen = t.FullScan();
    ASSERT_EQ(seen.size(), present.size());
    for (const auto& [k, n] : seen) ASSERT_EQ(n, 1) << k;
    bool more = t.raw().RehashStep(1);
    ++steps;
    if (!more) break;
    ASSERT_LT(steps, 100000u);
  }
  EXPECT_FALSE(t.raw().rehashing());
  EXPECT_GT(steps, 1u);
  ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present));
}

// Shrinks through several halvings, one delete at a time.
TEST(KvTableTest, ShrinkKeepsEveryKeyFindableAtEveryStep) {
  Table t;
  std::set<std::string> present;
  const int n = 1200;
  for (int i = 0; i < n; ++i) {
    t.Insert(Key("s", i));
    present.insert(Key("s", i));
  }
  t.FinishRehash();
  size_t rehashing_states = 0;
  std::mt19937 rng(7);
  std::vector<std::string> order(present.begin(), present.end());
  std::shuffle(order.begin(), order.end(), rng);
  for (const std::string& k : order) {
    ASSERT_TRUE(t.Erase(k)) << k;
    present.erase(k);
    if (t.raw().rehashing()) ++rehashing_states;
    ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present, {k}));
  }
  EXPECT_GT(rehashing_states, 0u);
  EXPECT_EQ(t.raw().size(), 0u);
  // A mass delete can outrun the rehash it started (each delete moves one bucket); when that
  // one finishes the next shrink starts by itself, so rehash steps alone (the shard's idle
  // time) bring the emptied table down to the minimum size, with no further write.
  t.FinishRehash();
  EXPECT_EQ(t.raw().bucket_count(), 16u);
}

// Random inserts and deletes interleaved; the table rehashes up and down repeatedly.
TEST(KvTableTest, RandomChurnAgainstReference) {
  Table t;
  std::set<std::string> present;
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 6; ++round) {
    // Alternate a growing phase and a shrinking phase.
    const bool grow = round % 2 == 0;
    for (int op = 0; op < 2500; ++op) {
      int id = static_cast<int>(rng() % 3000);
      std::string k = Key("r", id);
      bool insert = (rng() % 100) < (grow ? 80u : 20u);
      if (insert) {
        if (present.count(k)) {
          ASSERT_NE(t.Find(k), nullptr);
        } else {
          t.Insert(k, k);
          present.insert(k);
        }
      } else {
        ASSERT_EQ(t.Erase(k), present.erase(k) == 1) << k;
      }
      if (op % 97 == 0) {
        ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present));
      }
    }
    ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present));
  }
  for (const std::string& k : present) {
    Entry* e = t.Find(k);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->value(), k);
  }
}

TEST(KvTableTest, FullScanReturnsEachKeyOnceWhenUnmodified) {
  for (int n : {1, 5, 16, 17, 100, 1000}) {
    Table t;
    std::set<std::string> keys;
    for (int i = 0; i < n; ++i) {
      t.Insert(Key("f", i));
      keys.insert(Key("f", i));
    }
    auto seen = t.FullScan();
    ASSERT_EQ(seen.size(), keys.size()) << n;
    for (const auto& [k, count] : seen) {
      EXPECT_TRUE(keys.count(k)) << k;
      EXPECT_EQ(count, 1) << k;
    }
  }
}

// The SCAN guarantee: a key present for the whole scan is returned at least once, however
// the table grows or shrinks between calls. Between scan steps other keys are inserted and
// deleted in bursts large enough to force several resizes in both directions, and a scan
// step often lands while a rehash is in progress.
void RunScanUnderChurn(uint64_t seed, int stable_count, int burst) {
  Table t;
  std::set<std::string> stable;
  for (int i = 0; i < stable_count; ++i) {
    t.Insert(Key("stable", i));
    stable.insert(Key("stable", i));
  }
  std::mt19937_64 rng(seed);
  std::vector<std::string> others;  // currently present non-stable keys
  int next_other = 0;
  std::set<std::string> ever_present(stable);

  std::map<std::string, int> returned;
  uint64_t cursor = 0;
  size_t steps = 0, steps_while_rehashing = 0;
  size_t min_buckets = SIZE_MAX, max_buckets = 0;
  do {
    if (t.raw().rehashing()) ++steps_while_rehashing;
    cursor = t.raw().Scan(cursor, [&](const Entry* e) { ++returned[std::string(e->key())]; });
    ++steps;
    ASSERT_LT(steps, 1000000u) << "scan does not terminate";
    // Mutate OTHER keys only.
    int phase = static_cast<int>((steps / 8) % 4);
    int ops = static_cast<int>(rng() % burst) + 1;
    for (int k = 0; k < ops; ++k) {
      bool insert = phase < 2 ? (rng() % 10 < 8) : (rng() % 10 < 1);
      if (insert || others.empty()) {
        std::string key = Key("other", next_other++);
        t.Insert(key);
        others.push_back(key);
        ever_present.insert(key);
      } else {
        size_t idx = rng() % others.size();
        ASSERT_TRUE(t.Erase(others[idx]));
        others[idx] = others.back();
        others.pop_back();
      }
    }
    min_buckets = std::min(min_buckets, t.raw().bucket_count());
    max_buckets = std::max(max_buckets, t.raw().bucket_count());
  } while (cursor != 0);

  for (const std::string& k : stable) EXPECT_GE(returned[k], 1) << k << " seed=" << seed;
  for (const auto& [k, n] : returned) EXPECT_TRUE(ever_present.count(k)) << "phantom key " << k;
  // The churn really did resize the table while scanning.
  EXPECT_GT(steps_while_rehashing, 0u) << "seed=" << seed;
  EXPECT_GT(max_buckets, min_buckets) << "seed=" << seed;
}

TEST(KvTableTest, ScanGuaranteeUnderGrowthAndShrink) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    ASSERT_NO_FATAL_FAILURE(RunScanUnderChurn(seed, 300, 120));
  }
}

TEST(KvTableTest, ScanGuaranteeSmallStableSetLargeChurn) {
  for (uint64_t seed = 11; seed <= 14; ++seed) {
    ASSERT_NO_FATAL_FAILURE(RunScanUnderChurn(seed, 20, 400));
  }
}

// A hand-made schedule: grow massively after the first step, then shrink back to tiny, then
// grow again, each time scanning with a cursor from the previous size.
TEST(KvTableTest, ScanGuaranteeAcrossExtremeResizes) {
  Table t;
  std::set<std::string> stable;
  for (int i = 0; i < 64; ++i) {
    t.Insert(Key("stable", i));
    stable.insert(Key("stable", i));
  }
  t.FinishRehash();
  std::map<std::string, int> returned;
  uint64_t cursor = 0;
  int step = 0;
  int other = 0;
  std::vector<std::string> others;
  do {
    cursor = t.raw().Scan(cursor, [&](const Entry* e) { ++returned[std::string(e->key())]; });
    ++step;
    if (step % 3 == 1) {
      for (int i = 0; i < 3000; ++i) {
        others.push_back(Key("o", other++));
        t.Insert(others.back());
      }
    } else if (step % 3 == 2) {
      for (const std::string& k : others) ASSERT_TRUE(t.Erase(k));
      others.clear();
    } else {
      // Let a pending resize run partly, leaving the table mid-rehash for the next step.
      t.raw().RehashStep(3);
    }
    ASSERT_LT(step, 1000000);
  } while (cursor != 0);
  for (const std::string& k : stable) EXPECT_GE(returned[k], 1) << k;
}

TEST(KvTableTest, RandomEntryReturnsOnlyPresentEntries) {
  Table t;
  std::mt19937_64 rng(99);
  std::set<std::string> present;
  for (int round = 0; round < 40; ++round) {
    // Mutate: mostly inserts early, mostly deletes late, so both rehash directions occur.
    int ops = 150;
    for (int i = 0; i < ops; ++i) {
      bool insert = round < 20 ? rng() % 10 < 8 : rng() % 10 < 2;
      std::string k = Key("rnd", static_cast<int>(rng() % 2000));
      if (insert) {
        if (!present.count(k)) {
          t.Insert(k);
          present.insert(k);
        }
      } else if (present.erase(k)) {
        ASSERT_TRUE(t.Erase(k));
      }
    }
    std::set<const Entry*> live;
    for (const std::string& k : present) live.insert(t.raw().Find(k, HashKey(k)));
    // Find may have moved buckets, but entries never move in memory.
    for (int s = 0; s < 200; ++s) {
      Entry* e = t.raw().RandomEntry(rng());
      if (present.empty()) {
        ASSERT_EQ(e, nullptr);
      } else {
        ASSERT_NE(e, nullptr);
        ASSERT_TRUE(live.count(e)) << "RandomEntry returned an entry not in the table";
        ASSERT_TRUE(present.count(std::string(e->key())));
      }
    }
  }
}

TEST(KvTableTest, RandomEntryReachesEveryEntry) {
  Table t;
  std::set<std::string> keys;
  for (int i = 0; i < 30; ++i) {
    t.Insert(Key("k", i));
    keys.insert(Key("k", i));
  }
  t.FinishRehash();
  std::mt19937_64 rng(5);
  std::set<std::string> seen;
  for (int s = 0; s < 50000 && seen.size() < keys.size(); ++s) {
    seen.insert(std::string(t.raw().RandomEntry(rng())->key()));
  }
  EXPECT_EQ(seen, keys);
}

TEST(KvTableTest, ClearDestroysEverythingAndTableIsReusable) {
  Table t;
  for (int i = 0; i < 500; ++i) t.Insert(Key("c", i));
  // Clear in the middle of a rehash too (LeakSanitizer checks both arrays are freed).
  while (!t.raw().rehashing()) t.Insert(Key("c2", static_cast<int>(t.raw().size())));
  t.raw().Clear();
  EXPECT_EQ(t.raw().size(), 0u);
  EXPECT_FALSE(t.raw().rehashing());
  EXPECT_EQ(t.raw().bucket_count(), 0u);
  EXPECT_EQ(t.Find(Key("c", 1)), nullptr);
  EXPECT_EQ(t.raw().RandomEntry(1), nullptr);
  EXPECT_EQ(t.raw().Scan(0, [](const Entry*) { FAIL(); }), 0u);
  std::set<std::string> present;
  for (int i = 0; i < 100; ++i) {
    t.Insert(Key("again", i));
    present.insert(Key("again", i));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectExactly(t, present, {Key("c", 1)}));
  t.raw().Clear();
  t.raw().Clear();  // idempotent
  EXPECT_EQ(t.raw().size(), 0u);
}

TEST(KvTableTest, MoveConstructionAndAssignment) {
  KvTable a;
  std::set<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    std::string k = Key("mv", i);
    a.Insert(Entry::Create(k, k, ValueType::kString, kNoDeadline), HashKey(k));
    keys.insert(k);
  }
  // Move while rehashing, so that both arrays and the rehash index travel.
  for (int i = 300; !a.rehashing(); ++i) {
    std::string k = Key("mv", i);
    a.Insert(Entry::Create(k, k, ValueType::kString, kNoDeadline), HashKey(k));
    keys.insert(k);
  }
  ASSERT_TRUE(a.rehashing());

  KvTable b(std::move(a));
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is defined empty
  EXPECT_EQ(a.bucket_count(), 0u);
  EXPECT_FALSE(a.rehashing());
  EXPECT_EQ(a.Find("mv:1", HashKey("mv:1")), nullptr);
  EXPECT_EQ(b.size(), keys.size());
  EXPECT_TRUE(b.rehashing());
  for (const std::string& k : keys) {
    Entry* e = b.Find(k, HashKey(k));
    ASSERT_NE(e, nullptr) << k;
    EXPECT_EQ(e->value(), k);
  }

  // Assignment over a non-empty table destroys its entries (LeakSanitizer would notice).
  KvTable c;
  for (int i = 0; i < 50; ++i) {
    std::string k = Key("old", i);
    c.Insert(Entry::Create(k, k, ValueType::kString, kNoDeadline), HashKey(k));
  }
  c = std::move(b);
  EXPECT_EQ(b.size(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.size(), keys.size());
  EXPECT_EQ(c.Find("old:1", HashKey("old:1")), nullptr);
  for (const std::string& k : keys) ASSERT_NE(c.Find(k, HashKey(k)), nullptr) << k;

  // Self-assignment is harmless.
  KvTable& alias = c;
  c = std::move(alias);
  EXPECT_EQ(c.size(), keys.size());

  // A moved-from table is reusable.
  a.Insert(Entry::Create("fresh", "1", ValueType::kString, kNoDeadline), HashKey("fresh"));
  EXPECT_EQ(a.size(), 1u);
  EXPECT_NE(a.Find("fresh", HashKey("fresh")), nullptr);
  b = std::move(a);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_NE(b.Find("fresh", HashKey("fresh")), nullptr);
}

// DrainSome tears a table down in slices: each entry is handed out exactly once, a call never
// removes more than asked, and it works from any state, mid-rehash included.
TEST(KvTableTest, DrainSomeInSlices) {
  for (size_t slice : {size_t{1}, size_t{7}, size_t{100}, size_t{5000}}) {
    for (bool mid_rehash : {false, true}) {
      Table t;
      std::set<std::string> keys;
      for (int i = 0; i < 1000 || (mid_rehash && !t.raw().rehashing()); ++i) {
        t.Insert(Key("d", i));
        keys.insert(Key("d", i));
      }
      if (!mid_rehash) t.FinishRehash();
      ASSERT_EQ(t.raw().rehashing(), mid_rehash);
      std::map<std::string, int> drained;
      size_t calls = 0;
      while (t.raw().size() > 0) {
        size_t before = t.raw().size();
        size_t removed = t.raw().DrainSome(slice, [&](Entry* e) { ++drained[std::string(e->key())]; });
        ASSERT_LE(removed, slice);
        ASSERT_GT(removed, 0u) << "DrainSome made no progress with " << before << " entries left";
        ASSERT_EQ(t.raw().size(), before - removed);
        ASSERT_LT(++calls, 100000u);
      }
      ASSERT_EQ(drained.size(), keys.size()) << slice;
      for (const auto& [k, n] : drained) ASSERT_EQ(n, 1) << k;
      EXPECT_EQ(t.raw().DrainSome(10, [](Entry*) { FAIL(); }), 0u);
    }
  }
}

// A partly drained table moved elsewhere keeps draining where it stopped, and the moved-from
// table is an ordinary empty table again.
TEST(KvTableTest, DrainSomeAcrossMove) {
  KvTable a;
  for (int i = 0; i < 600; ++i) {
    std::string k = Key("dm", i);
    a.Insert(Entry::Create(k, k, ValueType::kString, kNoDeadline), HashKey(k));
  }
  std::set<std::string> drained;
  auto collect = [&](Entry* e) { ASSERT_TRUE(drained.insert(std::string(e->key())).second); };
  ASSERT_EQ(a.DrainSome(250, collect), 250u);
  KvTable b(std::move(a));
  while (b.size() > 0) ASSERT_GT(b.DrainSome(64, collect), 0u);
  EXPECT_EQ(drained.size(), 600u);

  // Reuse the moved-from table and drain it completely.
  for (int i = 0; i < 50; ++i) {
    std::string k = Key("again", i);
    a.Insert(Entry::Create(k, k, ValueType::kString, kNoDeadline), HashKey(k));
  }
  drained.clear();
  size_t calls = 0;
  while (a.size() > 0 && calls++ < 100) a.DrainSome(8, collect);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(drained.size(), 50u);
}

TEST(KvTableTest, BucketBytesTracksBucketCount) {
  Table t;
  for (int i = 0; i < 100; ++i) t.Insert(Key("b", i));
  EXPECT_EQ(t.raw().BucketBytes(), t.raw().bucket_count() * sizeof(Entry*));
  EXPECT_GT(t.raw().bucket_count(), 0u);
}

}  // namespace
}  // namespace lapse::engine
