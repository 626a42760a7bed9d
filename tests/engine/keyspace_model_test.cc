// File: tests/engine/keyspace_model_test.cc
//
// Randomized model test of the keyspace: a few Dbs driven by a fixed-seed stream of Put (with
// and without deadlines, KEEPTTL), Erase, SetDeadline (add, change, remove, past), Find,
// APPEND-style ReserveValue, MOVE (Extract + Adopt), RandomLive, time advances (mostly small,
// sometimes to exactly a deadline or one before, occasionally huge jumps), Reclaim with
// random budgets, and the odd SWAPDB / FLUSHDB, against a reference std::map per database.
//
// The reference holds live keys only: whenever time advances, every key whose deadline is
// <= now is dropped from it, so its size is the live count at all times. Checked:
//  - after every step, for every db: stored() >= live count; the key(s) the step touched and
//    one random key read back exactly as the model says (a read never returns an expired
//    key, a live key is never lost or changed);
//  - every Reclaim removes at most `max_records` keys, and once it reports caught up,
//    stored() == live count and volatile_count() == live volatile count (all due keys are
//    physically gone);
//  - periodically: a full non-mutating Scan equals the model (keys, values, deadlines), and
//    CountLive equals the live count (then stored() does too).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/db.h"
#include "engine/entry.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr int64_t kMaxTtlMs = (int64_t{1} << 31) * 1000;  // 2^31 seconds
constexpr size_t kAll = std::numeric_limits<size_t>::max();

struct ModelEntry {
  std::string value;
  int64_t deadline = kNoDeadline;
};

// One database's live keys, indexed by key and by deadline.
struct Model {
  std::map<std::string, ModelEntry> entries;
  std::set<std::pair<int64_t, std::string>> by_deadline;

  const ModelEntry* Get(const std::string& key) const {
    auto it = entries.find(key);
    return it == entries.end() ? nullptr : &it->second;
  }
  void Set(const std::string& key, std::string value, int64_t deadline) {
    Remove(key);
    entries[key] = ModelEntry{std::move(value), deadline};
    if (deadline != kNoDeadline) by_deadline.insert({deadline, key});
  }
  void Remove(const std::string& key) {
    auto it = entries.find(key);
    if (it == entries.end()) return;
    if (it->second.deadline != kNoDeadline) by_deadline.erase({it->second.deadline, key});
    entries.erase(it);
  }
  void Expire(int64_t now) {
    while (!by_deadline.empty() && by_deadline.begin()->first <= now) {
      entries.erase(by_deadline.begin()->second);
      by_deadline.erase(by_deadline.begin());
    }
  }
  size_t live() const { return entries.size(); }
  size_t live_volatile() const { return by_deadline.size(); }
};

class KeyspaceModel {
 public:
  KeyspaceModel(uint64_t seed, int databases, int keys) : rng_(seed) {
    for (int i = 0; i < databases; ++i) {
      dbs_.emplace_back(kStart);
      models_.emplace_back();
    }
    for (int i = 0; i < keys; ++i) {
      std::string k = "key:" + std::to_string(i);
      if (i % 17 == 0) k += std::string("\0bin", 4);  // binary keys
      keys_.push_back(k);
    }
  }

  void Run(int steps) {
    for (step_ = 0; step_ < steps; ++step_) {
      ASSERT_NO_FATAL_FAILURE(Step());
      ASSERT_NO_FATAL_FAILURE(CheckAfterStep());
      if (step_ % 1000 == 999) {
        for (size_t d = 0; d < dbs_.size(); ++d) ASSERT_NO_FATAL_FAILURE(VerifyByScan(d));
      }
      if (step_ % 1000 == 499) {
        for (size_t d = 0; d < dbs_.size(); ++d) ASSERT_NO_FATAL_FAILURE(VerifyCountLive(d));
      }
      if (step_ % 5000 == 2999) {
        for (size_t d = 0; d < dbs_.size(); ++d) ASSERT_NO_FATAL_FAILURE(VerifyEveryKeyByFind(d));
      }
    }
    // Finally: everything with a deadline goes, persistent keys stay.
    Advance(kMaxTtlMs + 1);
    for (size_t d = 0; d < dbs_.size(); ++d) {
      ASSERT_NO_FATAL_FAILURE(ReclaimFully(d));
      EXPECT_EQ(models_[d].live_volatile(), 0u);
      EXPECT_EQ(dbs_[d].volatile_count(), 0u);
      ASSERT_NO_FATAL_FAILURE(VerifyByScan(d));
      ASSERT_NO_FATAL_FAILURE(VerifyEveryKeyByFind(d));
    }
  }

  // Coverage counters, so that the test can insist that each path was really exercised.
  std::map<std::string, uint64_t> counters;
  int64_t now() const { return now_; }

 private:
  uint64_t Rand(uint64_t n) { return rng_() % n; }
  bool Chance(int percent) { return Rand(100) < static_cast<uint64_t>(percent); }
  size_t RandomDb() { return Rand(dbs_.size()); }
  const std::string& RandomKey() { return keys_[Rand(keys_.size())]; }

  std::string RandomValue() {
    size_t len = Chance(90) ? Rand(40) : Rand(400);
    std::string v(len, '\0');
    for (char& c : v) c = static_cast<char>(Rand(256));
    return v;
  }

  int64_t RandomDeadline() {
    switch (Rand(20)) {
      case 0:
        return now_ + 1;
      case 1:
      case 2:
        return now_ + 1 + static_cast<int64_t>(Rand(3));
      case 3:
      case 4:
      case 5:
      case 6:
      case 7:
      case 8:
        return now_ + 1 + static_cast<int64_t>(Rand(5000));
      case 9:
      case 10:
      case 11:
      case 12:
        return now_ + 1 + static_cast<int64_t>(Rand(10 * 60 * 1000));  // up to minutes
      default: {
        // Log-uniform up to 2^31 seconds ahead.
        int bits = 1 + static_cast<int>(Rand(41));
        int64_t ttl = 1 + static_cast<int64_t>(Rand(uint64_t{1} << bits));
        return now_ + std::min(ttl, kMaxTtlMs);
      }
    }
  }

  // Moves time forward and drops keys that are no longer live from the model.
  void Advance(int64_t ms) {
    now_ += ms;
    for (Model& m : models_) m.Expire(now_);
  }

  // Reads `key` from db `d` and checks it against the model.
  void CheckRead(size_t d, const std::string& key) {
    Entry* e = dbs_[d].Find(key, now_);
    const ModelEntry* m = models_[d].Get(key);
    if (e != nullptr) {
      ASSERT_TRUE(e->deadline() == kNoDeadline || e->deadline() > now_)
          << "read returned an expired key " << key << " deadline " << e->deadline() << " now " << now_;
    }
    if (m == nullptr) {
      ASSERT_EQ(e, nullptr) << "db " << d << " key " << key << " should not exist at step " << step_;
      return;
    }
    ASSERT_NE(e, nullptr) << "db " << d << " lost live key " << key << " (deadline " << m->deadline << ", now "
                          << now_ << ") at step " << step_;
    ASSERT_EQ(e->key(), key);
    ASSERT_EQ(e->value(), m->value) << "db " << d << " key " << key;
    ASSERT_EQ(e->deadline(), m->deadline) << "db " << d << " key " << key;
  }

  void Step() {
    touched_.clear();
    const uint64_t op = Rand(1000);
    if (op < 280) return DoPut();
    if (op < 360) return DoErase();
    if (op < 480) return DoSetDeadline();
    if (op < 660) return DoFind();
    if (op < 760) return DoAdvance();
    if (op < 840) return DoReclaim();
    if (op < 890) return DoMove();
    if (op < 930) return DoAppend();
    if (op < 950) return DoRandomLive();
    if (op < 990) return DoBoundaryProbe();
    if (op < 995) return DoSwap();
    return DoRareFlush();
  }

  void DoPut() {
    size_t d = RandomDb();
    const std::string& key = RandomKey();
    std::string value = RandomValue();
    int64_t deadline = Chance(35) ? kNoDeadline : RandomDeadline();
    if (Chance(5)) {
      // SET ... KEEPTTL: keep the live key's deadline.
      Entry* e = dbs_[d].Find(key, now_);
      deadline = e ? e->deadline() : kNoDeadline;
      ++counters["put_keepttl"];
    }
    Entry* e = dbs_[d].Put(key, value, ValueType::kString, deadline, now_);
    ASSERT_EQ(e->key(), key);
    ASSERT_EQ(e->value(), value);
    ASSERT_EQ(e->deadline(), deadline);
    models_[d].Set(key, value, deadline);
    touched_.push_back({d, key});
    ++counters[deadline == kNoDeadline ? "put_persistent" : "put_volatile"];
  }

  void DoErase() {
    size_t d = RandomDb();
    const std::string& key = RandomKey();
    bool expected = models_[d].Get(key) != nullptr;
    ASSERT_EQ(dbs_[d].Erase(key, now_), expected) << key;
    models_[d].Remove(key);
    touched_.push_back({d, key});
    ++counters[expected ? "erase_hit" : "erase_miss"];
  }

  void DoSetDeadline() {
    size_t d = RandomDb();
    const std::string& key = RandomKey();
    Entry* e = dbs_[d].Find(key, now_);
    const ModelEntry* m = models_[d].Get(key);
    ASSERT_EQ(e != nullptr, m != nullptr) << key;
    touched_.push_back({d, key});
    if (e == nullptr) return;
    int64_t deadline;
    uint64_t kind = Rand(10);
    if (kind < 3) {
      deadline = kNoDeadline;
      ++counters["setdeadline_remove"];
    } else if (kind < 4) {
      deadline = now_ - static_cast<int64_t>(Rand(1000));  // at or before now: deletes
      ++counters["setdeadline_past"];
    } else if (kind < 5 && m->deadline != kNoDeadline) {
      deadline = m->deadline;  // unchanged
      ++counters["setdeadline_same"];
    } else {
      deadline = RandomDeadline();
      ++counters[m->deadline == kNoDeadline ? "setdeadline_add" : "setdeadline_change"];
    }
    std::string value = m->value;
    Entry* r = dbs_[d].SetDeadline(e, deadline, now_);
    if (deadline != kNoDeadline && deadline <= now_) {
      ASSERT_EQ(r, nullptr);
      models_[d].Remove(key);
      return;
    }
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->deadline(), deadline);
    ASSERT_EQ(r->value(), value);
    models_[d].Set(key, value, deadline);
  }

  void DoFind() {
    size_t d = RandomDb();
    const std::string& key = RandomKey();
    touched_.push_back({d, key});  // CheckAfterStep reads it
    ++counters["find"];
  }

  void DoAdvance() {
    int64_t ms;
    uint64_t kind = Rand(1000);
    if (kind < 2) {
      ms = static_cast<int64_t>(Rand(uint64_t{1} << (20 + Rand(22))));  // up to ~2^41 ms
      ++counters["advance_huge"];
    } else if (kind < 300) {
      ms = static_cast<int64_t>(Rand(51));
    } else {
      ms = static_cast<int64_t>(Rand(5001));
    }
    Advance(ms);
  }

  void DoReclaim() {
    size_t d = RandomDb();
    static const size_t kBudgets[] = {1, 2, 3, 10, 64, 1000, kAll};
    size_t budget = kBudgets[Rand(std::size(kBudgets))];
    size_t before = dbs_[d].stored();
    bool more = dbs_[d].Reclaim(now_, budget);
    size_t removed = before - dbs_[d].stored();
    ASSERT_LE(removed, budget);
    ASSERT_GE(dbs_[d].stored(), models_[d].live());
    if (!more) {
      ASSERT_NO_FATAL_FAILURE(CheckCaughtUp(d));
      ++counters["reclaim_caught_up"];
    } else {
      ++counters["reclaim_more"];
    }
  }

  // MOVE key from one db to another, as the server does it.
  void DoMove() {
    size_t src = RandomDb();
    size_t dst = (src + 1 + Rand(dbs_.size() - 1)) % dbs_.size();
    const std::string& key = RandomKey();
    touched_.push_back({src, key});
    touched_.push_back({dst, key});
    const ModelEntry* m = models_[src].Get(key);
    bool src_has = dbs_[src].Find(key, now_) != nullptr;
    ASSERT_EQ(src_has, m != nullptr);
    bool dst_has = dbs_[dst].Find(key, now_) != nullptr;
    ASSERT_EQ(dst_has, models_[dst].Get(key) != nullptr);
    if (!src_has || dst_has) return;
    Entry* e = dbs_[src].Extract(key, now_);
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(e->deadline(), m->deadline);
    ModelEntry moved = *m;
    dbs_[dst].Adopt(e, now_);
    models_[src].Remove(key);
    models_[dst].Set(key, moved.value, moved.deadline);
    ++counters[moved.deadline == kNoDeadline ? "move_persistent" : "move_volatile"];
  }

  // APPEND: grow in place through ReserveValue.
  void DoAppend() {
    size_t d = RandomDb();
    const std::string& key = RandomKey();
    touched_.push_back({d, key});
    Entry* e = dbs_[d].Find(key, now_);
    const ModelEntry* m = models_[d].Get(key);
    ASSERT_EQ(e != nullptr, m != nullptr);
    if (e == nullptr || m->value.size() > 4000) return;
    std::string tail = RandomValue();
    size_t len = e->value().size();
    e = dbs_[d].ReserveValue(e, len + tail.size());
    ASSERT_GE(e->value_capacity(), len + tail.size());
    if (!tail.empty()) std::memcpy(e->mutable_value() + len, tail.data(), tail.size());
    e->set_value_len(static_cast<uint32_t>(len + tail.size()));
    models_[d].Set(key, m->value + tail, m->deadline);
    ++counters["append"];
  }

  void DoRandomLive() {
    size_t d = RandomDb();
    Entry* e = dbs_[d].RandomLive(rng_(), now_);
    if (models_[d].live() == 0) {
      ASSERT_EQ(e, nullptr);
      return;
    }
    ASSERT_NE(e, nullptr);
    ASSERT_TRUE(e->deadline() == kNoDeadline || e->deadline() > now_) << "RandomLive returned an expired key";
    const ModelEntry* m = models_[d].Get(std::string(e->key()));
    ASSERT_NE(m, nullptr) << "RandomLive returned a key the model does not have";
    ASSERT_EQ(e->value(), m->value);
    ++counters["random_live"];
  }

  // Moves time to one millisecond before the earliest deadline of some db, checks that the
  // key is still there, then to exactly the deadline, where it must be gone.
  void DoBoundaryProbe() {
    size_t d = RandomDb();
    if (models_[d].by_deadline.empty()) return;
    auto [deadline, key] = *models_[d].by_deadline.begin();
    ASSERT_GT(deadline, now_);
    if (Chance(50)) Advance(deadline - 1 - now_);
    if (now_ == deadline - 1) {
      ASSERT_NE(models_[d].Get(key), nullptr);
      ASSERT_NO_FATAL_FAILURE(CheckRead(d, key));
      if (Chance(50)) dbs_[d].Reclaim(now_, kAll);  // a reclaim just before must spare it
      ASSERT_NO_FATAL_FAILURE(CheckRead(d, key));
      ++counters["boundary_before"];
    }
    Advance(deadline - now_);
    ASSERT_EQ(models_[d].Get(key), nullptr);
    if (Chance(50)) {
      ++counters["boundary_reclaim"];
      ASSERT_NO_FATAL_FAILURE(ReclaimFully(d));
    }
    touched_.push_back({d, key});
    ++counters["boundary_at"];
  }

  void DoSwap() {
    size_t a = RandomDb();
    size_t b = (a + 1 + Rand(dbs_.size() - 1)) % dbs_.size();
    std::swap(dbs_[a], dbs_[b]);
    std::swap(models_[a], models_[b]);
    ++counters["swap"];
  }

  void DoRareFlush() {
    if (!Chance(10)) return;
    size_t d = RandomDb();
    if (Chance(50)) {
      dbs_[d].Clear();
    } else {
      KvTable taken = dbs_[d].TakeTable();  // destroyed here, as FLUSHALL ASYNC would elsewhere
    }
    models_[d] = Model();
    ASSERT_EQ(dbs_[d].stored(), 0u);
    ASSERT_EQ(dbs_[d].volatile_count(), 0u);
    ++counters["flush"];
  }

  void CheckAfterStep() {
    for (size_t d = 0; d < dbs_.size(); ++d) {
      ASSERT_GE(dbs_[d].stored(), models_[d].live()) << "db " << d << " step " << step_;
      ASSERT_GE(dbs_[d].volatile_count(), models_[d].live_volatile()) << "db " << d << " step " << step_;
    }
    for (const auto& [d, key] : touched_) ASSERT_NO_FATAL_FAILURE(CheckRead(d, key));
    ASSERT_NO_FATAL_FAILURE(CheckRead(RandomDb(), RandomKey()));
  }

  void CheckCaughtUp(size_t d) {
    ASSERT_EQ(dbs_[d].stored(), models_[d].live())
        << "db " << d << ": a caught-up Reclaim left due keys stored at step " << step_ << " now " << now_;
    ASSERT_EQ(dbs_[d].volatile_count(), models_[d].live_volatile()) << "db " << d << " step " << step_;
  }

  void ReclaimFully(size_t d) {
    int calls = 0;
    while (dbs_[d].Reclaim(now_, kAll)) ASSERT_LT(++calls, 1000);
    ASSERT_NO_FATAL_FAILURE(CheckCaughtUp(d));
  }

  void VerifyByScan(size_t d) {
    std::map<std::string, std::pair<std::string, int64_t>> seen;
    uint64_t cursor = 0;
    do {
      cursor = dbs_[d].Scan(cursor, now_, [&](const Entry* e) {
        seen[std::string(e->key())] = {std::string(e->value()), e->deadline()};
      });
    } while (cursor != 0);
    ASSERT_EQ(seen.size(), models_[d].live()) << "db " << d << " step " << step_;
    for (const auto& [key, m] : models_[d].entries) {
      auto it = seen.find(key);
      ASSERT_NE(it, seen.end()) << "scan misses live key " << key;
      ASSERT_EQ(it->second.first, m.value) << key;
      ASSERT_EQ(it->second.second, m.deadline) << key;
    }
  }

  void VerifyCountLive(size_t d) {
    ASSERT_EQ(dbs_[d].CountLive(now_), models_[d].live()) << "db " << d << " step " << step_;
    ASSERT_NO_FATAL_FAILURE(CheckCaughtUp(d));
    ++counters["count_live"];
  }

  void VerifyEveryKeyByFind(size_t d) {
    for (const std::string& key : keys_) ASSERT_NO_FATAL_FAILURE(CheckRead(d, key));
  }

  std::mt19937_64 rng_;
  std::vector<Db> dbs_;
  std::vector<Model> models_;
  std::vector<std::string> keys_;
  std::vector<std::pair<size_t, std::string>> touched_;
  int64_t now_ = kStart;
  int step_ = 0;
};

// The seed is fixed; LAPSE_MODEL_SEED=<n> replays the same run with another seed, for local
// exploration (the coverage expectations below may not all hold for every seed).
uint64_t Seed(uint64_t fixed) {
  const char* env = std::getenv("LAPSE_MODEL_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fixed;
}

TEST(KeyspaceModelTest, RandomOperationsAgainstReference) {
  KeyspaceModel model(Seed(20240601), /*databases=*/4, /*keys=*/500);
  ASSERT_NO_FATAL_FAILURE(model.Run(200000));
  // Every kind of operation really happened.
  for (const char* name :
       {"put_persistent", "put_volatile", "put_keepttl", "erase_hit", "erase_miss", "setdeadline_remove",
        "setdeadline_past", "setdeadline_same", "setdeadline_add", "setdeadline_change", "find", "advance_huge",
        "reclaim_caught_up", "reclaim_more", "move_persistent", "move_volatile", "append", "random_live",
        "boundary_before", "boundary_at", "boundary_reclaim", "swap", "flush", "count_live"}) {
    EXPECT_GT(model.counters[name], 0u) << name;
  }
  // The run crossed at least one 2^42 ms epoch of the timing wheel.
  EXPECT_GT(model.now() >> 42, kStart >> 42);
}

// A second, smaller run with few keys and many databases: heavy contention on the same keys,
// many MOVEs, and most keys volatile.
TEST(KeyspaceModelTest, FewKeysManyDatabases) {
  KeyspaceModel model(Seed(7), /*databases=*/8, /*keys=*/20);
  ASSERT_NO_FATAL_FAILURE(model.Run(40000));
}

}  // namespace
}  // namespace lapse::engine
