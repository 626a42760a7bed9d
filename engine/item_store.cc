#include "engine/item_store.h"

#include <algorithm>
#include <cstring>

#include "engine/access.h"
#include "engine/hash.h"

namespace lapse::engine {

namespace {

Item* ItemOf(const Entry* e) {
  Item* item;
  std::memcpy(&item, e->value().data(), sizeof item);
  return item;
}

std::string_view PointerBytes(const Item* const& item) {
  return {reinterpret_cast<const char*>(&item), sizeof item};
}

// Wheel records handled per AdvanceWheel call from Reclaim; the wheel only moves pointers.
constexpr size_t kWheelRecordsPerCall = 4096;

}  // namespace

void ItemList::PushBack(Item* item, Item::List kind) {
  item->list = kind;
  item->prev = tail_;
  item->next = nullptr;
  if (tail_) tail_->next = item;
  else head_ = item;
  tail_ = item;
  ++size_;
}

void ItemList::Remove(Item* item) {
  if (item->prev) item->prev->next = item->next;
  else head_ = item->next;
  if (item->next) item->next->prev = item->prev;
  else tail_ = item->prev;
  item->prev = item->next = nullptr;
  item->list = Item::List::kNone;
  --size_;
}

ItemStore::ItemStore(uint32_t shard_id, ContainerCatalog& catalog, int64_t now_ms)
    : catalog_(catalog), wheel_(now_ms), next_etag_((static_cast<uint64_t>(shard_id) + 1) << 48) {}

ItemStore::~ItemStore() {
  for (PartsByName& parts : parts_) {
    for (auto& [name, part] : parts) dropped_.push_back(std::move(part));
  }
  parts_.clear();
  FreeDropped(SIZE_MAX);
}

ItemStore::PartsByName& ItemStore::PartsOf(uint32_t db) {
  if (db >= parts_.size()) parts_.resize(static_cast<size_t>(db) + 1);
  return parts_[db];
}

ContainerPart* ItemStore::Attach(std::shared_ptr<ContainerInfo> info) {
  auto& slot = PartsOf(info->db.load(std::memory_order_relaxed))[info->name];
  if (slot) dropped_.push_back(std::move(slot));
  slot = std::make_unique<ContainerPart>(std::move(info));
  return slot.get();
}

ContainerPart* ItemStore::Find(uint32_t db, std::string_view container) {
  if (db < parts_.size()) {
    auto it = parts_[db].find(std::string(container));
    if (it != parts_[db].end() && !it->second->info->dropped.load(std::memory_order_acquire)) return it->second.get();
  }
  // Not cached here yet, or the cached part belongs to a dropped incarnation.
  auto info = catalog_.Find(db, container);
  if (!info) return nullptr;
  return Attach(std::move(info));
}

ContainerPart* ItemStore::FindOrCreate(uint32_t db, std::string_view container) {
  if (ContainerPart* part = Find(db, container)) return part;
  return Attach(catalog_.FindOrCreate(db, container));
}

void ItemStore::SwapDbs(uint32_t a, uint32_t b) {
  if (a == b) return;
  PartsOf(std::max(a, b));  // grown first: PartsOf may reallocate, which would leave a dangling reference
  std::swap(parts_[a], parts_[b]);
}

void ItemStore::MoveToDb(std::string_view container, uint32_t from, uint32_t to) {
  if (from >= parts_.size()) return;
  auto node = parts_[from].extract(std::string(container));
  if (node.empty()) return;  // this shard never cached it: Find will, from the catalog
  PartsByName& target = PartsOf(to);
  // What the target still caches under that name can only be a dropped incarnation (the
  // catalog refuses to move onto a live one): its memory is freed like any dropped part's.
  if (auto old = target.find(node.key()); old != target.end()) {
    dropped_.push_back(std::move(old->second));
    target.erase(old);
  }
  target.insert(std::move(node));
}

Item* ItemStore::Lookup(ContainerPart& part, std::string_view id, uint64_t* hash, Entry** entry) {
  *hash = HashKey(id);
  Entry* e = part.index.Find(id, *hash);
  if (entry != nullptr) *entry = e;
  return e ? ItemOf(e) : nullptr;
}

void ItemStore::File(Item* item) {
  if (item->ttl == kNoItemTtl) {
    item->part->inherit.PushBack(item, Item::List::kInherit);
  } else if (item->ttl > 0) {
    item->serial = next_serial_++;
    filed_.emplace(item->serial, item);
    wheel_.Schedule(item->serial, item->last_write_ms + item->ttl * 1000);
  }
}

void ItemStore::Unfile(Item* item) {
  if (item->list == Item::List::kInherit) item->part->inherit.Remove(item);
  else if (item->list == Item::List::kFired) item->part->fired.Remove(item);
  if (item->serial != 0) {
    filed_.erase(item->serial);  // the wheel's record goes stale and is dropped when it comes up
    item->serial = 0;
  }
}

void ItemStore::DestroyExpired(ContainerPart& part, Item* item, int64_t now_ms) {
  if (listener_ != nullptr) [[unlikely]] {
    listener_->ItemExpired(part.info->db.load(std::memory_order_relaxed), part.info->name, item->id);
  }
  RecordDelete(part, *item, now_ms, DeleteCause{item->Deadline(part.default_ttl())});
  Destroy(part, item);
}

void ItemStore::RecordWrite(ContainerPart& part, Item* item, bool replaced, int64_t now_ms) {
  RenderItem(item->id, item->members, item->last_write_ms / 1000, item->etag, &feed_doc_);
  item->feed_lsn = part.info->feed.Append(DraftWrite(replaced, feed_doc_, now_ms, item->feed_lsn), FeedRetention());
}

void ItemStore::RecordDelete(ContainerPart& part, const Item& item, int64_t now_ms, const DeleteCause& cause) {
  part.info->feed.Append(DraftDelete(item.id, item.last_write_ms, now_ms, item.feed_lsn, cause), FeedRetention());
}

void ItemStore::Destroy(ContainerPart& part, Item* item) {
  Unfile(item);
  Entry** link = part.index.FindLink(item->id, HashKey(item->id));
  Entry::Destroy(part.index.UnlinkAt(link));
  delete item;
  --items_stored_;
}

PutOutcome ItemStore::Put(ContainerPart& part, std::string_view id, ParsedItem&& body, PutCondition condition,
                          const std::optional<uint64_t>& if_match, int64_t now_ms, const ItemStamp* replayed) {
  uint64_t hash;
  Entry* stamp = nullptr;
  Item* item = Lookup(part, id, &hash, &stamp);
  if (item && item->Expired(part.default_ttl(), now_ms)) {
    CountLazy(part);
    DestroyExpired(part, item, now_ms);
    item = nullptr;
  }
  PutOutcome outcome;
  if (condition == PutCondition::kIfAbsent && item) return outcome;
  if (condition == PutCondition::kIfPresent && !item) return outcome;
  if (if_match && (!item || item->etag != *if_match)) return outcome;
  if (item) {
    Unfile(item);
    NoteAccess(stamp, now_ms);
    outcome.replaced = true;
  } else {
    item = new Item();
    item->id = std::string(id);
    item->part = &part;
    stamp = Entry::Create(id, PointerBytes(item), ValueType::kString, kNoDeadline);
    NoteCreated(stamp, now_ms);
    part.index.Insert(stamp, hash);
    ++items_stored_;
  }
  item->members = std::move(body.members);
  item->ttl = body.ttl;
  item->last_write_ms = replayed != nullptr ? replayed->last_write_ms : now_ms;
  item->etag = replayed != nullptr ? replayed->etag : next_etag_++;
  // A new write must never get an etag this item (or any loaded one) had.
  if (replayed != nullptr) next_etag_ = std::max(next_etag_, replayed->etag + 1);
  File(item);
  RecordWrite(part, item, outcome.replaced, now_ms);
  outcome.written = true;
  outcome.etag = item->etag;
  return outcome;
}

void ItemStore::Restore(ContainerPart& part, std::string_view id, std::string members, int64_t ttl,
                        int64_t last_write_ms, uint64_t etag, int64_t now_ms) {
  uint64_t hash;
  if (Lookup(part, id, &hash) != nullptr) return;
  auto* item = new Item();
  item->id = std::string(id);
  item->part = &part;
  Entry* stamp = Entry::Create(id, PointerBytes(item), ValueType::kString, kNoDeadline);
  NoteCreated(stamp, now_ms);
  part.index.Insert(stamp, hash);
  ++items_stored_;
  item->members = std::move(members);
  item->ttl = ttl;
  item->last_write_ms = last_write_ms;
  item->etag = etag;
  next_etag_ = std::max(next_etag_, etag + 1);
  File(item);
}

void ItemStore::CountLazy(ContainerPart& part) {
  ++part.counters.reclaimed_lazy;
  part.info->reclaimed_lazy.fetch_add(1, std::memory_order_relaxed);
  catalog_.stats().reclaimed_lazy.fetch_add(1, std::memory_order_relaxed);
}

const Item* ItemStore::Get(ContainerPart& part, std::string_view id, int64_t now_ms) {
  uint64_t hash;
  Entry* stamp = nullptr;
  Item* item = Lookup(part, id, &hash, &stamp);
  if (!item) return nullptr;
  if (item->Expired(part.default_ttl(), now_ms)) {
    CountLazy(part);
    DestroyExpired(part, item, now_ms);
    return nullptr;
  }
  NoteAccess(stamp, now_ms);
  return item;
}

void ItemStore::SampleEvictable(uint32_t db, uint64_t* seed, size_t count, int64_t now_ms,
                                const std::function<void(const Entry&, const ContainerPart&, const Item&)>& fn) {
  if (db >= parts_.size()) return;
  for (auto& [name, part] : parts_[db]) {
    if (part->index.size() == 0 || !part->info->evictable.load(std::memory_order_relaxed) ||
        part->info->dropped.load(std::memory_order_relaxed))
      continue;
    int64_t default_ttl = part->default_ttl();
    size_t found = 0;
    for (size_t tries = 0; found < count && tries < 2 * count; ++tries) {
      *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
      const Entry* e = part->index.RandomEntry(*seed ^ (*seed >> 29));
      if (e == nullptr) break;
      const Item* item = ItemOf(e);
      if (item->Expired(default_ttl, now_ms)) continue;
      fn(*e, *part, *item);
      ++found;
    }
  }
}

size_t ItemStore::Evict(uint32_t db, std::string_view container, std::string_view id, int64_t now_ms,
                        const std::function<void(const Item&)>& bill) {
  ContainerPart* part = Find(db, container);
  if (part == nullptr || !part->info->evictable.load(std::memory_order_relaxed)) return 0;
  uint64_t hash;
  Entry* stamp = nullptr;
  Item* item = Lookup(*part, id, &hash, &stamp);
  if (item == nullptr || item->Expired(part->default_ttl(), now_ms)) return 0;
  size_t bytes = sizeof(Item) + item->id.capacity() + item->members.capacity() + stamp->AllocatedBytes() +
                 sizeof(Entry*);
  bill(*item);
  if (listener_ != nullptr) [[unlikely]] listener_->ItemEvicted(db, part->info->name, item->id);
  RecordDelete(*part, *item, now_ms, DeleteCause{.expired_at_ms = std::nullopt, .evicted = true});
  part->info->evicted_items.fetch_add(1, std::memory_order_relaxed);
  Destroy(*part, item);
  return bytes;
}

bool ItemStore::Delete(ContainerPart& part, std::string_view id, int64_t now_ms) {
  const Item* item = Get(part, id, now_ms);
  if (!item) return false;
  RecordDelete(part, *item, now_ms, DeleteCause{});
  Destroy(part, const_cast<Item*>(item));
  return true;
}

void ItemStore::AdvanceWheel(int64_t now_ms, size_t max_records) {
  auto deadline_of = [this](uint64_t serial, int64_t, int64_t) -> std::optional<int64_t> {
    auto it = filed_.find(serial);
    if (it == filed_.end()) return std::nullopt;
    const Item* item = it->second;
    return item->last_write_ms + item->ttl * 1000;
  };
  auto on_due = [this](uint64_t serial) {
    auto it = filed_.find(serial);
    if (it == filed_.end()) return;
    Item* item = it->second;
    filed_.erase(it);
    item->serial = 0;
    item->part->fired.PushBack(item, Item::List::kFired);
  };
  wheel_.Advance(now_ms, max_records, deadline_of, on_due);
}

Item* ItemStore::OldestExpired(ContainerPart& part, int64_t now_ms, int64_t* deadline) {
  int64_t dttl = part.default_ttl();
  if (dttl == kTtlOff) return nullptr;
  Item* best = nullptr;
  if (Item* f = part.fired.front()) {
    best = f;
    *deadline = f->last_write_ms + f->ttl * 1000;
  }
  if (dttl > 0) {
    Item* h = part.inherit.front();
    if (h && h->last_write_ms + dttl * 1000 <= now_ms) {
      int64_t d = h->last_write_ms + dttl * 1000;
      if (!best || d < *deadline) {
        best = h;
        *deadline = d;
      }
    }
  }
  return best;
}

ContainerFigures ItemStore::Figures(ContainerPart& part, int64_t now_ms) {
  AdvanceWheel(now_ms, SIZE_MAX);
  ContainerFigures f;
  f.stored = part.index.size();
  int64_t dttl = part.default_ttl();
  if (dttl != kTtlOff) {
    f.expired_unreclaimed = part.fired.size();
    if (part.fired.front()) f.oldest_expired_deadline_ms = part.fired.front()->last_write_ms + part.fired.front()->ttl * 1000;
    if (dttl > 0) {
      // The expired inheriting items are a prefix of the last-write list.
      for (Item* it = part.inherit.front(); it && it->last_write_ms + dttl * 1000 <= now_ms; it = it->next) {
        int64_t d = it->last_write_ms + dttl * 1000;
        if (f.expired_unreclaimed == part.fired.size() && (f.oldest_expired_deadline_ms == 0 || d < f.oldest_expired_deadline_ms))
          f.oldest_expired_deadline_ms = d;
        ++f.expired_unreclaimed;
      }
    }
  }
  f.live = f.stored - f.expired_unreclaimed;
  f.reclaimed_background = part.counters.reclaimed_background;
  f.reclaimed_lazy = part.counters.reclaimed_lazy;
  return f;
}

uint64_t ItemStore::Scan(ContainerPart& part, uint64_t cursor, int64_t now_ms, size_t buckets,
                         const std::function<void(const Item&)>& fn) {
  int64_t dttl = part.default_ttl();
  size_t visited = 0;
  do {
    cursor = part.index.Scan(cursor, [&](const Entry* e) {
      const Item* item = ItemOf(e);
      if (!item->Expired(dttl, now_ms)) fn(*item);
    });
  } while (cursor != 0 && ++visited < buckets);
  return cursor;
}

size_t ItemStore::FreeDropped(size_t max_items) {
  size_t freed = 0;
  while (!dropped_.empty() && freed < max_items) {
    ContainerPart& part = *dropped_.back();
    // The part is unreachable: only the wheel's serials still point into it. Unfile each item
    // rather than only forgetting its serial: the part's lists outlive this slice, and the
    // wheel may still move one of its remaining items into `fired` (PushBack writes through the
    // tail), so a freed item left linked there was a use after free that corrupted other
    // items' links (found by tests/engine/container_model_test.cc).
    freed += part.index.DrainSome(max_items - freed, [this](Entry* e) {
      Item* item = ItemOf(e);
      Unfile(item);
      delete item;
      --items_stored_;
    });
    if (part.index.size() == 0) dropped_.pop_back();
  }
  return freed;
}

bool ItemStore::Reclaim(int64_t now_ms, size_t max_items, const std::function<bool(const Item&)>& admit) {
  blocked_ = false;
  AdvanceWheel(now_ms, kWheelRecordsPerCall);
  // Parts of dropped containers are unreachable already; free their memory in slices.
  CollectDropped();
  size_t done = FreeDropped(max_items);
  if (!dropped_.empty()) return true;
  // Oldest deadline first across this shard's containers. In an expiry storm the wheel moves
  // only kWheelRecordsPerCall records per call, so own-ttl items past their deadline may not
  // be in a fired list yet; every deadline before the wheel's current() is. Until the wheel
  // catches up, take only items older than that, or an inheriting item would overtake older
  // own-ttl ones (found by tests/engine/item_store_test.cc, ManyItemsReclaimedInDeadlineOrder).
  const bool wheel_behind = wheel_.NextEventTime().value_or(INT64_MAX) <= now_ms;
  // Containers whose budget refused a deletion in this call: the others still go on, so one
  // container out of its own budget does not hold back the rest.
  std::vector<const ContainerPart*> refused;
  auto is_refused = [&](const ContainerPart* p) { return std::find(refused.begin(), refused.end(), p) != refused.end(); };
  while (done < max_items) {
    ContainerPart* best_part = nullptr;
    Item* best = nullptr;
    int64_t best_deadline = 0;
    for (PartsByName& parts : parts_) {
      for (auto& [name, part] : parts) {
        if (!refused.empty() && is_refused(part.get())) continue;
        int64_t d = 0;
        if (Item* item = OldestExpired(*part, now_ms, &d); item && (!best || d < best_deadline)) {
          best = item;
          best_deadline = d;
          best_part = part.get();
        }
      }
    }
    // Out of budget for now: report caught up so that the caller sleeps instead of spinning.
    if (!best) return !blocked_ && wheel_.NextEventTime().value_or(INT64_MAX) <= now_ms;
    if (wheel_behind && best_deadline >= wheel_.current()) return true;  // next call advances it
    if (!admit(*best)) {
      blocked_ = true;
      refused.push_back(best_part);
      continue;
    }
    uint64_t lag = static_cast<uint64_t>(std::max<int64_t>(0, now_ms - best_deadline));
    best_part->counters.reclaim_lag_max_ms = std::max(best_part->counters.reclaim_lag_max_ms, lag);
    ++best_part->counters.reclaimed_background;
    best_part->info->reclaimed_background.fetch_add(1, std::memory_order_relaxed);
    best_part->info->lag.Record(lag);
    catalog_.stats().reclaimed_background.fetch_add(1, std::memory_order_relaxed);
    catalog_.stats().lag.Record(lag);
    DestroyExpired(*best_part, best, now_ms);
    ++done;
  }
  return true;
}

uint64_t ItemStore::Backlog(int64_t now_ms) {
  uint64_t backlog = 0;
  for (PartsByName& parts : parts_) {
    for (auto& [name, part] : parts) {
      if (part->info->dropped.load(std::memory_order_acquire)) continue;
      backlog += Figures(*part, now_ms).expired_unreclaimed;
    }
  }
  return backlog;
}

void ItemStore::ForEachCachedPart(const std::function<void(ContainerPart&)>& fn) {
  for (PartsByName& parts : parts_) {
    for (auto& [name, part] : parts) fn(*part);
  }
}

const Item& ItemStore::ItemIn(const Entry* e) { return *ItemOf(e); }

void ItemStore::CollectDropped() {
  for (PartsByName& parts : parts_) {
    for (auto it = parts.begin(); it != parts.end();) {
      if (it->second->info->dropped.load(std::memory_order_acquire)) {
        dropped_.push_back(std::move(it->second));
        it = parts.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace lapse::engine
