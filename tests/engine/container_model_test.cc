// File: tests/engine/container_model_test.cc
//
// Randomized model test of containers and items: two ItemStores (two shards) sharing one
// ContainerCatalog are driven by a fixed-seed stream of ~100k operations — conditional and
// unconditional writes with every kind of ttl, deletes, reads, DefaultTimeToLive changes
// including OFF/ON switches, container drops, time advances (small steps, exact deadlines,
// occasional large jumps), and reclamation with random budgets and an admit() that sometimes
// refuses — and compared after every step with a plain reference model: a map of items with
// their last write time and ttl, and each container's setting.
//
// The model knows exactly which items are physically stored: an item leaves it only when the
// store says it did (a read, write or delete met it expired, or admit() let the reclaimer take
// it). So switching TTL OFF must bring back exactly the expired items the model still holds.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/container.h"
#include "engine/hash.h"
#include "engine/item_store.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr int kContainers = 4;
constexpr int kIdsPerContainer = 150;
constexpr int kStores = 2;

struct ModelItem {
  int64_t last_write = 0;
  int64_t ttl = kNoItemTtl;
  uint64_t etag = 0;
  std::string members;
};

struct ModelContainer {
  bool exists = false;
  int64_t dttl = kTtlOff;
  std::map<std::string, ModelItem> items;  // physically stored, expired or not
};

// The rule of DESIGN.md §1, written out independently of EffectiveTtl.
std::optional<int64_t> ModelDeadline(int64_t dttl, const ModelItem& item) {
  if (dttl == kTtlOff) return std::nullopt;
  if (item.ttl == -1) return std::nullopt;
  if (item.ttl != kNoItemTtl) return item.last_write + item.ttl * 1000;
  if (dttl == -1) return std::nullopt;
  return item.last_write + dttl * 1000;
}

class ContainerModel {
 public:
  explicit ContainerModel(uint64_t seed) : rng_(seed) {
    for (int s = 0; s < kStores; ++s) stores_.push_back(std::make_unique<ItemStore>(s, catalog_, now_));
    for (int c = 0; c < kContainers; ++c) names_.push_back("c" + std::to_string(c));
  }

  void Run(int steps) {
    for (step_ = 0; step_ < steps; ++step_) {
      Step();
      CheckFigures();
      if (::testing::Test::HasFatalFailure() || failures_ > 20) return;
      if (step_ % 500 == 0) CheckScan();
    }
    FullReclaim();
    CheckFigures();
    CheckScan();
    // Counters that must have been exercised for the test to mean anything.
    const uint64_t n = static_cast<uint64_t>(steps);
    EXPECT_GT(stats_.reclaimed_by_admit, n / 20);
    EXPECT_GT(stats_.refused, n / 500);
    EXPECT_GT(stats_.lazy, n / 100);
    EXPECT_GT(stats_.revived, n / 100);  // expired items brought back by OFF / a longer ttl
    EXPECT_GT(stats_.cond_failed, n / 50);
    EXPECT_GT(stats_.exact_deadline_checks, n / 50);
    EXPECT_GT(stats_.expired_sum / n, 5u);  // on average, expired items waiting to be reclaimed
  }

 private:
  bool Chance(int percent) { return static_cast<int>(rng_() % 100) < percent; }
  int64_t Uniform(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1)); }

  size_t StoreOf(const std::string& container, const std::string& id) const {
    return ShardOf(HashKey(id, HashKey(container)), kStores);
  }
  ItemStore& Store(const std::string& container, const std::string& id) { return *stores_[StoreOf(container, id)]; }

  bool Expired(const ModelContainer& mc, const ModelItem& item) const {
    auto d = ModelDeadline(mc.dttl, item);
    return d && now_ >= *d;
  }
  // The model's live item, erasing an expired one as the store's lazy reclamation does.
  const ModelItem* LiveOrReclaim(ModelContainer& mc, const std::string& id) {
    auto it = mc.items.find(id);
    if (it == mc.items.end()) return nullptr;
    if (Expired(mc, it->second)) {
      mc.items.erase(it);
      ++stats_.lazy;
      return nullptr;
    }
    return &it->second;
  }

  void Fail(const std::string& what) {
    ++failures_;
    ADD_FAILURE() << "step " << step_ << " now " << (now_ - kStart) << ": " << what;
  }

  int64_t RandomItemTtl() {
    int r = static_cast<int>(rng_() % 100);
    if (r < 40) return kNoItemTtl;
    if (r < 55) return -1;
    if (r < 95) return Uniform(1, 12);
    return kMaxTtlSeconds;
  }
  int64_t RandomDttl() {
    int r = static_cast<int>(rng_() % 100);
    if (r < 25) return kTtlOff;
    if (r < 40) return -1;
    if (r < 92) return Uniform(1, 20);
    return Uniform(1000, kMaxTtlSeconds);
  }

  void Step() {
    int r = static_cast<int>(rng_() % 1000);
    int c = static_cast<int>(rng_() % kContainers);
    std::string id = "i" + std::to_string(rng_() % kIdsPerContainer);
    if (r < 400) return Put(c, id);
    if (r < 460) return Delete(c, id);
    if (r < 680) return Get(c, id);
    if (r < 730) return SetDttl(c);
    if (r < 733) return Drop(c);
    if (r < 880) return Advance();
    if (r < 930) return AdvanceToDeadline();
    if (r < 996) return Reclaim();
    return FullReclaim();
  }

  void Put(int c, const std::string& id) {
    const std::string& name = names_[c];
    ModelContainer& mc = model_[c];
    ItemStore& store = Store(name, id);
    ParsedItem body;
    body.ttl = RandomItemTtl();
    body.members = "\"n\":" + std::to_string(step_);
    if (body.ttl != kNoItemTtl) body.members += ",\"ttl\":" + std::to_string(body.ttl);
    PutCondition cond = PutCondition::kAlways;
    std::optional<uint64_t> if_match;
    int k = static_cast<int>(rng_() % 100);
    auto existing = mc.items.find(id);
    if (k < 10) cond = PutCondition::kIfAbsent;
    else if (k < 20) cond = PutCondition::kIfPresent;
    else if (k < 30) if_match = existing != mc.items.end() && Chance(70) ? existing->second.etag : rng_() | 1;

    const ModelItem* live = LiveOrReclaim(mc, id);  // an expired item is reclaimed by the write
    bool expect = true;
    if (cond == PutCondition::kIfAbsent && live) expect = false;
    if (cond == PutCondition::kIfPresent && !live) expect = false;
    if (if_match && (!live || live->etag != *if_match)) expect = false;
    bool replaced = live != nullptr;
    std::string members = body.members;
    int64_t ttl = body.ttl;

    PutOutcome o = store.Put(*store.FindOrCreate(0, name), id, std::move(body), cond, if_match, now_);
    mc.exists = true;
    if (o.written != expect) return Fail("put " + name + "/" + id + " written=" + std::to_string(o.written));
    if (!expect) {
      ++stats_.cond_failed;
      return;
    }
    if (o.replaced != replaced) Fail("put replaced mismatch " + name + "/" + id);
    mc.items[id] = ModelItem{now_, ttl, o.etag, members};
  }

  void Delete(int c, const std::string& id) {
    const std::string& name = names_[c];
    ModelContainer& mc = model_[c];
    ItemStore& store = Store(name, id);
    ContainerPart* part = store.Find(0, name);
    if (!mc.exists) {
      if (part) Fail("deleted container still found: " + name);
      return;
    }
    if (!part) return Fail("container missing: " + name);
    bool live = LiveOrReclaim(mc, id) != nullptr;
    bool got = store.Delete(*part, id, now_);
    if (got != live) return Fail("delete " + name + "/" + id);
    if (live) mc.items.erase(id);
  }

  void Get(int c, const std::string& id) {
    const std::string& name = names_[c];
    ModelContainer& mc = model_[c];
    ItemStore& store = Store(name, id);
    ContainerPart* part = store.Find(0, name);
    if (!mc.exists) {
      if (part) Fail("deleted container still found: " + name);
      return;
    }
    if (!part) return Fail("container missing: " + name);
    const ModelItem* want = LiveOrReclaim(mc, id);
    const Item* got = store.Get(*part, id, now_);
    if (!want) {
      if (got) Fail("get returned an expired or absent item " + name + "/" + id);
      return;
    }
    if (!got) return Fail("get lost a live item " + name + "/" + id);
    if (got->etag != want->etag || got->last_write_ms != want->last_write || got->ttl != want->ttl ||
        got->members != want->members)
      Fail("get returned the wrong version of " + name + "/" + id);
    if (got->Deadline(mc.dttl) != ModelDeadline(mc.dttl, *want)) Fail("deadline mismatch " + name + "/" + id);
  }

  void SetDttl(int c) {
    ModelContainer& mc = model_[c];
    int64_t dttl = RandomDttl();
    // Count expired items this change brings back (coverage of the revive path).
    for (auto& [id, item] : mc.items) {
      if (Expired(mc, item)) {
        auto d = ModelDeadline(dttl, item);
        if (!d || now_ < *d) ++stats_.revived;
      }
    }
    catalog_.FindOrCreate(0, names_[c])->default_ttl.store(dttl);
    mc.exists = true;
    mc.dttl = dttl;
  }

  void Drop(int c) {
    ModelContainer& mc = model_[c];
    bool dropped = catalog_.Drop(0, names_[c]);
    if (dropped != mc.exists) Fail("drop " + names_[c]);
    mc = ModelContainer{};
  }

  void Advance() {
    if (Chance(2)) now_ += Uniform(60'000, 3'600'000);
    else now_ += Uniform(0, 5'000);
  }

  // Moves to exactly the next deadline of some stored item, or 1 ms before it.
  void AdvanceToDeadline() {
    std::optional<int64_t> next;
    for (auto& mc : model_) {
      for (auto& [id, item] : mc.items) {
        auto d = ModelDeadline(mc.dttl, item);
        if (d && *d > now_ && (!next || *d < *next)) next = d;
      }
    }
    if (!next || *next - now_ > 3'600'000) return;
    now_ = Chance(50) ? *next : std::max(now_, *next - 1);
    ++stats_.exact_deadline_checks;
  }

  // The oldest deadline among the model's expired items that live in store `s`, leaving out
  // the containers in `skip`.
  std::optional<int64_t> OldestExpiredIn(size_t s, const std::set<int>& skip = {}) const {
    std::optional<int64_t> oldest;
    for (int c = 0; c < kContainers; ++c) {
      if (skip.count(c)) continue;
      const ModelContainer& mc = model_[c];
      for (auto& [id, item] : mc.items) {
        if (StoreOf(names_[c], id) != s || !Expired(mc, item)) continue;
        int64_t d = *ModelDeadline(mc.dttl, item);
        if (!oldest || d < *oldest) oldest = d;
      }
    }
    return oldest;
  }

  int ContainerIndex(const Item& item) {
    for (int c = 0; c < kContainers; ++c) {
      // The current incarnation only: a dropped container's items are never offered.
      if (item.part->info == catalog_.Find(0, names_[c])) return c;
    }
    return -1;
  }

  // Runs one Reclaim on store `s`; `refuse_percent` of the admissions are refused. A refusal
  // sets that container aside for the rest of the call; the others go on.
  bool ReclaimOnce(size_t s, size_t max_items, int refuse_percent) {
    size_t admitted = 0;
    std::set<int> refused;
    bool more = stores_[s]->Reclaim(now_, max_items, [&](const Item& item) {
      int c = ContainerIndex(item);
      if (c < 0) {
        Fail("admit asked about an item of a dropped container");
        return false;
      }
      if (refused.count(c)) Fail("admit asked again about a container it refused");
      ModelContainer& mc = model_[c];
      auto it = mc.items.find(item.id);
      if (it == mc.items.end()) {
        Fail("admit asked about an item the model does not hold: " + item.id);
        return false;
      }
      if (!Expired(mc, it->second)) {
        Fail("reclaimer offered a live item " + names_[c] + "/" + item.id);
        return false;
      }
      // Oldest deadline first: the offered item is as old as the oldest expired in this store.
      if (*ModelDeadline(mc.dttl, it->second) != OldestExpiredIn(s, refused)) Fail("reclaimer skipped an older item");
      if (admitted >= max_items) Fail("reclaimer exceeded max_items");
      if (Chance(refuse_percent)) {
        refused.insert(c);
        ++stats_.refused;
        return false;
      }
      ++admitted;
      ++stats_.reclaimed_by_admit;
      mc.items.erase(it);
      return true;
    });
    if (!refused.empty() != stores_[s]->reclaim_blocked()) Fail("reclaim_blocked() does not match a refusal");
    // A refused call may still report more due: other containers, or a wheel that is behind.
    return more;
  }

  void Reclaim() {
    size_t s = rng_() % kStores;
    size_t max_items = static_cast<size_t>(Uniform(0, 12));
    int refuse = Chance(20) ? 100 : Chance(50) ? 10 : 0;
    ReclaimOnce(s, max_items, refuse);
  }

  void FullReclaim() {
    for (size_t s = 0; s < kStores; ++s) {
      int calls = 0;
      while (ReclaimOnce(s, 1000, 0)) {
        if (++calls > 100000) return Fail("reclaim never caught up");
      }
    }
    // Nothing expired may remain, in the store or the model.
    size_t stored = 0;
    for (int c = 0; c < kContainers; ++c) {
      ModelContainer& mc = model_[c];
      for (auto& [id, item] : mc.items) {
        if (Expired(mc, item)) Fail("full reclaim left " + names_[c] + "/" + id);
      }
      stored += mc.items.size();
      for (auto& store : stores_) {
        if (ContainerPart* part = store->Find(0, names_[c])) {
          ContainerFigures f = store->Figures(*part, now_);
          if (f.stored != f.live) Fail("stored != live after a full reclaim in " + names_[c]);
        }
      }
    }
    size_t actual = 0;
    for (auto& store : stores_) actual += store->items_stored();
    if (actual != stored) Fail("items_stored " + std::to_string(actual) + " != model " + std::to_string(stored));
  }

  void CheckFigures() {
    for (int c = 0; c < kContainers; ++c) {
      const ModelContainer& mc = model_[c];
      uint64_t live = 0, stored = 0;
      int64_t oldest = 0;
      for (auto& [id, item] : mc.items) {
        ++stored;
        if (!Expired(mc, item)) {
          ++live;
        } else {
          int64_t d = *ModelDeadline(mc.dttl, item);
          if (oldest == 0 || d < oldest) oldest = d;
        }
      }
      ContainerFigures total;
      bool found = false;
      for (auto& store : stores_) {
        ContainerPart* part = store->Find(0, names_[c]);
        if (!part) continue;
        found = true;
        ContainerFigures f = store->Figures(*part, now_);
        total.live += f.live;
        total.stored += f.stored;
        total.expired_unreclaimed += f.expired_unreclaimed;
        if (f.oldest_expired_deadline_ms != 0 &&
            (total.oldest_expired_deadline_ms == 0 || f.oldest_expired_deadline_ms < total.oldest_expired_deadline_ms))
          total.oldest_expired_deadline_ms = f.oldest_expired_deadline_ms;
      }
      if (found != mc.exists) Fail("container existence " + names_[c]);
      stats_.stored_sum += stored;
      stats_.expired_sum += stored - live;
      if (total.live != live || total.stored != stored || total.expired_unreclaimed != stored - live ||
          total.oldest_expired_deadline_ms != oldest) {
        Fail("figures of " + names_[c] + ": live " + std::to_string(total.live) + "/" + std::to_string(live) +
             " stored " + std::to_string(total.stored) + "/" + std::to_string(stored) + " expired " +
             std::to_string(total.expired_unreclaimed) + " oldest " + std::to_string(total.oldest_expired_deadline_ms) +
             "/" + std::to_string(oldest) + " dttl " + std::to_string(mc.dttl));
      }
    }
  }

  void CheckScan() {
    for (int c = 0; c < kContainers; ++c) {
      const ModelContainer& mc = model_[c];
      std::set<std::string> want, got;
      for (auto& [id, item] : mc.items) {
        if (!Expired(mc, item)) want.insert(id);
      }
      for (auto& store : stores_) {
        ContainerPart* part = store->Find(0, names_[c]);
        if (!part) continue;
        uint64_t cursor = 0;
        do {
          cursor = store->Scan(*part, cursor, now_, 1 + rng_() % 8, [&](const Item& item) {
            if (!got.insert(item.id).second) Fail("scan returned twice " + item.id);
          });
        } while (cursor != 0);
      }
      if (got != want) Fail("scan of " + names_[c] + " returned " + std::to_string(got.size()) + " items, want " +
                            std::to_string(want.size()));
    }
  }

  struct Stats {
    uint64_t stored_sum = 0, expired_sum = 0;
    uint64_t reclaimed_by_admit = 0, refused = 0, lazy = 0, revived = 0, cond_failed = 0, exact_deadline_checks = 0;
  };

  std::mt19937_64 rng_;
  int64_t now_ = kStart;
  ContainerCatalog catalog_;
  std::vector<std::unique_ptr<ItemStore>> stores_;
  std::vector<std::string> names_;
  ModelContainer model_[kContainers];
  int step_ = 0;
  int failures_ = 0;
  Stats stats_;
};

TEST(ContainerModelTest, RandomOperationsMatchTheModel) {
  ContainerModel model(20261122);
  model.Run(100'000);
}

TEST(ContainerModelTest, AnotherSeed) {
  ContainerModel model(7);
  model.Run(30'000);
}

}  // namespace
}  // namespace lapse::engine
