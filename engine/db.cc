#include "engine/db.h"

#include "engine/access.h"
#include "engine/collection.h"

#include <algorithm>
#include <optional>

namespace lapse::engine {

namespace {
// RANDOMKEY tolerates this many expired picks before answering from a full reclaim.
constexpr int kRandomKeyTries = 100;
}  // namespace

void Db::Track(const Entry* e, uint64_t hash) {
  int64_t d = e->deadline();
  if (d == kNoDeadline) return;
  ++volatile_count_;
  wheel_.Schedule(hash & ~kFieldRecord, d);
}

void Db::Untrack(const Entry* e) {
  if (e->deadline() != kNoDeadline) --volatile_count_;
}

void Db::DestroyUnlinked(Entry* e) {
  Untrack(e);
  Entry::Destroy(e);
}

void Db::DestroyExpired(Entry* e) {
  ++expiry_stats_.expired_keys;
  Touch(e->key());
  if (listener_ != nullptr) [[unlikely]] listener_->KeyExpired(index_, e->key());
  DestroyUnlinked(e);
}

Entry* Db::Find(std::string_view key, uint64_t hash, int64_t now_ms) {
  Entry** link = table_.FindLink(key, hash);
  if (link == nullptr) return nullptr;
  Entry* e = *link;
  if (IsExpired(e, now_ms)) {
    DestroyExpired(table_.UnlinkAt(link));
    ++expiry_stats_.expired_lazily;
    return nullptr;
  }
  if (engine::hash::HasDueFields(e, now_ms)) [[unlikely]] PurgeDueFields(e, hash, now_ms);
  return e;
}

void Db::PurgeDueFields(Entry* e, uint64_t hash, int64_t now_ms) {
  if (engine::hash::PurgeDueFields(e, now_ms) > 0) {
    Touch(e->key());
    if (listener_ != nullptr) [[unlikely]] listener_->FieldsExpired(index_, e->key());
  }
  int64_t next = engine::hash::NextFieldDeadline(e);
  if (next != kNoDeadline) wheel_.Schedule(hash | kFieldRecord, next);
}

bool Db::NewToHistory(uint64_t hash) const {
  return sketch_ != nullptr && sketch_->enabled() && StartsOnProbation(sketch_->Estimate(hash));
}

namespace {
// A value written over an existing key is a new value to LRU, but keeps the key's frequency
// under LFU, as Redis's dbOverwrite does.
void NoteReplaced(Entry* fresh, const Entry* old, int64_t now_ms) {
  if (Access().lfu.load(std::memory_order_relaxed)) fresh->set_access_stamp(old->access_stamp());
  else NoteCreated(fresh, now_ms);
}
}  // namespace

Entry* Db::Put(std::string_view key, std::string_view value, ValueType type, int64_t deadline_ms, int64_t now_ms) {
  uint64_t hash = HashKey(key);
  Entry** link = table_.FindLink(key, hash);
  if (link != nullptr) {
    Entry* old = *link;
    bool fits = type == ValueType::kString && old->type() == type && value.size() <= old->value_capacity() &&
                (deadline_ms == kNoDeadline || old->has_deadline_slot()) &&
                // Keep small entries tight: reuse only if the block is not grossly oversized.
                old->value_capacity() <= 2 * value.size() + 32;
    if (fits) {
      int64_t old_deadline = old->deadline();
      if (value.size() > 0) std::memmove(old->mutable_value(), value.data(), value.size());
      old->set_value_len(static_cast<uint32_t>(value.size()));
      old->set_string_encoding(StringEncoding::kByContent);
      if (old_deadline != deadline_ms) {
        Untrack(old);
        old->set_deadline(deadline_ms);
        Track(old, hash);
      }
      NoteReplaced(old, old, now_ms);
      Touch(key);
      return old;
    }
    Entry* fresh = Entry::Create(key, value, type, deadline_ms);
    NoteReplaced(fresh, old, now_ms);
    DestroyUnlinked(table_.ReplaceAt(link, fresh));
    Track(fresh, hash);
    Touch(key);
    return fresh;
  }
  Entry* fresh = Entry::Create(key, value, type, deadline_ms);
  NoteCreated(fresh, now_ms);
  if (NewToHistory(hash)) probation_->Push(index_, key);
  table_.Insert(fresh, hash);
  Track(fresh, hash);
  Touch(key);
  // Redis sends `new` from dbAdd, so before the command's own event on the key.
  if (listener_ != nullptr) [[unlikely]] listener_->KeyCreated(index_, key);
  return fresh;
}

Entry* Db::SetDeadline(Entry* entry, int64_t deadline_ms, int64_t now_ms) {
  std::string_view key = entry->key();
  uint64_t hash = HashKey(key);
  Entry** link = table_.FindLink(key, hash);
  if (deadline_ms != kNoDeadline && deadline_ms <= now_ms) {
    Entry* gone = table_.UnlinkAt(link);
    Touch(gone->key());
    DestroyUnlinked(gone);
    return nullptr;
  }
  // Like Redis, setting a deadline touches the key even when it does not move; removing a
  // deadline the key does not have does not.
  if (entry->deadline() == deadline_ms) {
    if (deadline_ms != kNoDeadline) Touch(key);
    return entry;
  }
  Untrack(entry);
  if (deadline_ms == kNoDeadline || entry->has_deadline_slot()) {
    entry->set_deadline(deadline_ms);
  } else {
    Entry* fresh = Entry::Create(key, entry->value(), entry->type(), deadline_ms);
    fresh->set_access_stamp(entry->access_stamp());
    fresh->set_encoding_bits(entry->encoding_bits());
    Entry::DestroyMoved(table_.ReplaceAt(link, fresh));
    entry = fresh;
  }
  Track(entry, hash);
  Touch(entry->key());
  return entry;
}

Entry* Db::FitValue(Entry* entry) {
  if (entry->value_capacity() <= entry->value().size() + 64) return entry;
  std::string_view key = entry->key();
  Entry** link = table_.FindLink(key, HashKey(key));
  Entry* fresh = Entry::Create(key, entry->value(), entry->type(), entry->deadline(), false, entry->value().size());
  fresh->set_access_stamp(entry->access_stamp());
  fresh->set_encoding_bits(entry->encoding_bits());
  Entry::DestroyMoved(table_.ReplaceAt(link, fresh));
  return fresh;
}

Entry* Db::ReserveValue(Entry* entry, size_t capacity, bool exact) {
  if (capacity <= entry->value_capacity()) return entry;
  std::string_view key = entry->key();
  Entry** link = table_.FindLink(key, HashKey(key));
  // Small values grow exactly; larger ones double so that APPEND loops stay linear.
  size_t grown = capacity < 1024 || exact ? capacity : std::max(capacity, 2 * static_cast<size_t>(entry->value().size()));
  Entry* fresh = Entry::Create(key, entry->value(), entry->type(), entry->deadline(), false, grown);
  fresh->set_access_stamp(entry->access_stamp());
  fresh->set_encoding_bits(entry->encoding_bits());
  Entry::DestroyMoved(table_.ReplaceAt(link, fresh));
  return fresh;
}

bool Db::Erase(std::string_view key, int64_t now_ms) {
  Entry* e = Extract(key, now_ms);
  if (e == nullptr) return false;
  Entry::Destroy(e);
  return true;
}

// One lookup: unlink first, then treat an expired entry exactly as Find would (lazy expiry).
Entry* Db::Extract(std::string_view key, int64_t now_ms) {
  Entry** link = table_.FindLink(key, HashKey(key));
  if (link == nullptr) return nullptr;
  Entry* e = table_.UnlinkAt(link);
  if (IsExpired(e, now_ms)) {
    DestroyExpired(e);
    ++expiry_stats_.expired_lazily;
    return nullptr;
  }
  Untrack(e);
  Touch(e->key());
  return e;
}

void Db::Adopt(Entry* entry, int64_t now_ms) {
  uint64_t hash = HashKey(entry->key());
  table_.Insert(entry, hash);
  Track(entry, hash);
  TrackFields(entry);
  Touch(entry->key());
  if (listener_ != nullptr) [[unlikely]] listener_->KeyCreated(index_, entry->key());
}

bool Db::Reclaim(int64_t now_ms, size_t max_records) {
  auto deadline_of = [this](uint64_t payload, int64_t start, int64_t end) -> std::optional<int64_t> {
    std::optional<int64_t> found;
    uint64_t hash = payload & ~kFieldRecord;
    table_.ForEachInBucketOf(hash, [&](Entry** link) {
      const Entry* e = *link;
      if ((HashKey(e->key()) & ~kFieldRecord) != hash) return false;
      int64_t d = (payload & kFieldRecord) ? engine::hash::NextFieldDeadline(e) : e->deadline();
      if (d != kNoDeadline && d >= start && d < end) found = d;
      return false;
    });
    return found;
  };
  auto on_due = [this, now_ms](uint64_t payload) {
    uint64_t hash = payload & ~kFieldRecord;
    table_.ForEachInBucketOf(hash, [&](Entry** link) {
      Entry* e = *link;
      if ((HashKey(e->key()) & ~kFieldRecord) != hash) return false;
      if (!IsExpired(e, now_ms)) {
        if (engine::hash::HasDueFields(e, now_ms)) PurgeDueFields(e, hash, now_ms);
        return false;
      }
      int64_t due = e->deadline() != kNoDeadline && e->deadline() <= now_ms ? e->deadline() : now_ms;
      uint64_t lag = static_cast<uint64_t>(now_ms - due);
      expiry_stats_.expired_lag_sum_ms += lag;
      expiry_stats_.expired_lag_max_ms = std::max(expiry_stats_.expired_lag_max_ms, lag);
      DestroyExpired(table_.UnlinkAt(link));
      return true;
    });
  };
  return wheel_.Advance(now_ms, max_records, deadline_of, on_due);
}

size_t Db::CountLive(int64_t now_ms) {
  while (Reclaim(now_ms, SIZE_MAX)) {
  }
  return table_.size();
}

uint64_t Db::Scan(uint64_t cursor, int64_t now_ms, const std::function<void(const Entry*)>& fn) const {
  return table_.Scan(cursor, [&](const Entry* e) {
    if (!IsExpired(e, now_ms)) fn(e);
  });
}

Entry* Db::TryRandomLive(uint64_t* seed, int64_t now_ms) {
  for (int i = 0; i < kRandomKeyTries && table_.size() > 0; ++i) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    Entry* e = table_.RandomEntry(*seed ^ (*seed >> 29));
    if (e == nullptr) return nullptr;
    if (!IsExpired(e, now_ms)) {
      table_.Protect(e);  // the caller may change it
      return e;
    }
    std::string key(e->key());
    Find(key, now_ms);  // deletes it
  }
  return nullptr;
}

Entry* Db::RandomLive(uint64_t seed, int64_t now_ms) {
  if (Entry* e = TryRandomLive(&seed, now_ms)) return e;
  if (CountLive(now_ms) == 0) return nullptr;
  Entry* e = table_.RandomEntry(seed);
  if (e != nullptr) table_.Protect(e);
  return e;
}

void Db::SampleLive(uint64_t* seed, size_t count, bool volatile_only, int64_t now_ms,
                    const std::function<void(const Entry*)>& fn) const {
  if (table_.size() == 0 || (volatile_only && volatile_count_ == 0)) return;
  auto wanted = [&](const Entry* e) { return !IsExpired(e, now_ms) && (!volatile_only || e->deadline() != kNoDeadline); };
  size_t found = 0;
  for (size_t tries = 0; found < count && tries < 2 * count; ++tries) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    const Entry* e = table_.RandomEntry(*seed ^ (*seed >> 29));
    if (e == nullptr) return;
    if (wanted(e)) {
      fn(e);
      ++found;
    }
  }
  if (found > 0 || !volatile_only) return;
  // Volatile keys are a small share of the table: walk a few buckets from a random one.
  constexpr int kWalkBuckets = 256;
  uint64_t cursor = *seed >> 7;
  for (int steps = 0; steps < kWalkBuckets && found < count; ++steps) {
    cursor = table_.Scan(cursor, [&](const Entry* e) {
      if (found < count && wanted(e)) {
        fn(e);
        ++found;
      }
    });
    if (cursor == 0) break;
  }
}

size_t Db::Evict(std::string_view key, int64_t now_ms) {
  Entry* e = Extract(key, now_ms);
  if (e == nullptr) return 0;
  size_t bytes = e->AllocatedBytes() + TableBytes(e) + sizeof(Entry*);
  if (listener_ != nullptr) [[unlikely]] listener_->KeyEvicted(index_, e->key());
  Entry::Destroy(e);
  return bytes;
}

Db::TtlSample Db::SampleTtls(int64_t now_ms) const {
  if (volatile_count_ == 0) return {};
  constexpr int kSampleBuckets = 64;
  long double ttl_sum = 0;
  uint64_t live = 0, stale = 0;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    cursor = table_.Scan(cursor, [&](const Entry* e) {
      int64_t d = e->deadline();
      if (d == kNoDeadline) return;
      if (d > now_ms) {
        ttl_sum += static_cast<long double>(d - now_ms);
        ++live;
      } else {
        ++stale;
      }
    });
  } while (cursor != 0 && ++steps < kSampleBuckets);
  TtlSample s;
  if (live > 0) s.average_ttl_ms = static_cast<int64_t>(ttl_sum / live);
  if (live + stale > 0) s.stale_fraction = static_cast<double>(stale) / static_cast<double>(live + stale);
  return s;
}

void Db::Clear() {
  TouchAllWatched(nullptr, 0);
  SignalStoredBlocked();
  table_.RetireToSnapshot();  // a running save frees what it has still to write, in its walk
  table_.Clear();
  wheel_.Clear();
  volatile_count_ = 0;
}

KvTable Db::TakeTable() {
  TouchAllWatched(nullptr, 0);
  SignalStoredBlocked();
  table_.RetireToSnapshot();
  KvTable taken = table_.TakeEntries();
  wheel_.Clear();
  volatile_count_ = 0;
  return taken;
}

bool Db::StoredButExpired(std::string_view key, int64_t now_ms) const {
  const Entry* e = table_.Peek(key, HashKey(key));
  return e != nullptr && IsExpired(e, now_ms);
}

void Db::Watch(std::string_view key, Watcher* watcher, int64_t now_ms) {
  auto it = watched_.find(key);
  if (it == watched_.end()) it = watched_.emplace(std::string(key), std::vector<KeyWatch>{}).first;
  it->second.push_back(KeyWatch{watcher, StoredButExpired(key, now_ms)});
}

void Db::Unwatch(std::string_view key, const Watcher* watcher) {
  auto it = watched_.find(key);
  if (it == watched_.end()) return;
  std::erase_if(it->second, [&](const KeyWatch& w) { return w.watcher == watcher; });
  if (it->second.empty()) watched_.erase(it);
}

bool Db::WatchedKeyExpired(std::string_view key, const Watcher* watcher, int64_t now_ms) const {
  auto it = watched_.find(key);
  if (it == watched_.end()) return false;
  for (const KeyWatch& w : it->second) {
    if (w.watcher == watcher) return !w.expired_at_watch && StoredButExpired(key, now_ms);
  }
  return false;
}

void Db::TouchWatchers(std::string_view key) {
  auto it = watched_.find(key);
  if (it == watched_.end()) return;
  bool stored = Stored(key);
  for (KeyWatch& w : it->second) {
    // Deleting a key that had already expired when it was watched changes nothing logically.
    if (w.expired_at_watch && !stored) {
      w.expired_at_watch = false;
      continue;
    }
    w.watcher->MarkDirty();
  }
}

// Redis 7.0's touchAllWatchedKeysInDb, rule for rule.
void Db::TouchAllWatched(const Db* replacement, int64_t now_ms) {
  for (auto& [key, watches] : watched_) {
    bool in_this = Stored(key);
    bool in_replacement = replacement != nullptr && replacement->Stored(key);
    if (!in_this && !in_replacement) continue;
    for (KeyWatch& w : watches) {
      if (w.expired_at_watch) {
        if (!in_replacement) {
          w.expired_at_watch = false;  // the expired key is gone: no logical change
          continue;
        }
        if (replacement->StoredButExpired(key, now_ms)) continue;  // still logically absent
      } else if (!in_this && replacement->StoredButExpired(key, now_ms)) {
        w.expired_at_watch = true;  // absent before, logically absent after
        continue;
      }
      w.watcher->MarkDirty();
    }
  }
}

size_t Db::MemoryEstimate() const { return table_.BucketBytes() + wheel_.size() * sizeof(uint64_t); }

}  // namespace lapse::engine

namespace lapse::engine {

std::vector<ReadyKey>& ReadyKeys() {
  thread_local std::vector<ReadyKey> ready;
  return ready;
}

void Db::SignalReady(std::string_view key) {
  if (blocked_.find(key) != blocked_.end()) ReadyKeys().push_back({shard_, index_, std::string(key)});
}

void Db::SignalStoredBlocked() {
  for (const auto& [key, clients] : blocked_) {
    if (Stored(key)) ReadyKeys().push_back({shard_, index_, key});
  }
}

void Db::AddBlocked(std::string_view key) {
  auto it = blocked_.find(key);
  if (it == blocked_.end()) {
    blocked_.emplace(std::string(key), 1);
  } else {
    ++it->second;
  }
}

void Db::RemoveBlocked(std::string_view key) {
  auto it = blocked_.find(key);
  if (it != blocked_.end() && --it->second == 0) blocked_.erase(it);
}

void Db::SwapBlocked(Db& other) {
  std::swap(blocked_, other.blocked_);
  std::swap(shard_, other.shard_);
  std::swap(index_, other.index_);
  for (Db* db : {this, &other}) {
    for (const auto& [key, clients] : db->blocked_) ReadyKeys().push_back({db->shard_, db->index_, key});
  }
}

}  // namespace lapse::engine
