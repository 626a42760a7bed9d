#include "engine/kv_table.h"

#include <algorithm>
#include <bit>

#include "engine/hash.h"

namespace lapse::engine {

namespace {
constexpr size_t kInitialBuckets = 16;
constexpr size_t kEmptyVisitsPerStep = 10;

uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  return __builtin_bswap64(v);
}
}  // namespace

KvTable::~KvTable() {
  Clear();
  // A save may still be walking its views when a table goes (a dropped container's item
  // index): the view then knows its table is gone, every entry having been written above.
  if (observer_ != nullptr) observer_->table = nullptr;
}

KvTable::KvTable(KvTable&& other) noexcept { *this = std::move(other); }

KvTable& KvTable::operator=(KvTable&& other) noexcept {
  if (this != &other) {
    Clear();
    tables_[0] = std::move(other.tables_[0]);
    tables_[1] = std::move(other.tables_[1]);
    rehash_index_ = other.rehash_index_;
    drain_index_ = other.drain_index_;
    size_ = other.size_;
    mark_ = other.mark_;
    observer_ = other.observer_;
    if (observer_ != nullptr) observer_->table = this;
    other.observer_ = nullptr;
    other.tables_[0].clear();
    other.tables_[1].clear();
    other.rehash_index_ = 0;
    // Reset like the rest of `other`: a stale drain position past the end of the fresh
    // buckets a reused moved-from table allocates made DrainSome stop at once with entries
    // left (returning 0 while size() > 0, so a drain-until-empty loop never finished).
    other.drain_index_ = 0;
    other.size_ = 0;
  }
  return *this;
}

Entry** KvTable::FindLink(std::string_view key, uint64_t hash) {
  if (size_ == 0) return nullptr;
  if (rehashing()) RehashStep(1);
  for (int t = 0; t < 2; ++t) {
    Buckets& table = tables_[t];
    if (table.empty()) continue;
    size_t index = BucketIndex(table, hash);
    if (t == 0 && rehashing() && index < rehash_index_) continue;
    for (Entry** link = &table[index]; *link != nullptr; link = (*link)->next_link()) {
      if ((*link)->key() == key) {
        Protect(*link);
        return link;
      }
    }
  }
  return nullptr;
}

const Entry* KvTable::Peek(std::string_view key, uint64_t hash) const {
  for (int t = 0; t < 2; ++t) {
    const Buckets& table = tables_[t];
    if (table.empty()) continue;
    size_t index = BucketIndex(table, hash);
    if (t == 0 && rehashing() && index < rehash_index_) continue;
    for (const Entry* e = table[index]; e != nullptr; e = e->next()) {
      if (e->key() == key) return e;
    }
  }
  return nullptr;
}

void KvTable::Insert(Entry* e, uint64_t hash) {
  MaybeResize();
  if (rehashing()) RehashStep(1);
  Buckets& table = rehashing() ? tables_[1] : tables_[0];
  Entry*& head = table[BucketIndex(table, hash)];
  e->set_snapshot_mark(mark_);
  e->set_next(head);
  head = e;
  ++size_;
}

Entry* KvTable::ReplaceAt(Entry** link, Entry* fresh) {
  Entry* old = *link;
  Protect(old);
  fresh->set_snapshot_mark(mark_);
  fresh->set_next(old->next());
  *link = fresh;
  return old;
}

Entry* KvTable::UnlinkAt(Entry** link) {
  Entry* old = *link;
  *link = old->next();
  old->set_next(nullptr);
  --size_;
  MaybeResize();
  return old;
}

void KvTable::ForEachInBucketOf(uint64_t hash, const std::function<bool(Entry**)>& fn) {
  for (int t = 0; t < 2; ++t) {
    Buckets& table = tables_[t];
    if (table.empty()) continue;
    size_t index = BucketIndex(table, hash);
    if (t == 0 && rehashing() && index < rehash_index_) continue;
    Entry** link = &table[index];
    while (*link != nullptr) {
      Protect(*link);
      if (!fn(link)) link = (*link)->next_link();
    }
  }
}

void KvTable::MaybeResize() {
  if (rehashing()) return;
  size_t buckets = tables_[0].size();
  if (buckets == 0) {
    tables_[0].assign(kInitialBuckets, nullptr);
    return;
  }
  if (size_ >= buckets) {
    StartRehash(std::bit_ceil(size_ * 2));
  } else if (buckets > kInitialBuckets && size_ < buckets / 8) {
    StartRehash(std::max(kInitialBuckets, std::bit_ceil(std::max<size_t>(size_, 1) * 2)));
  }
}

void KvTable::StartRehash(size_t new_size) {
  if (new_size == tables_[0].size()) return;
  tables_[1].assign(new_size, nullptr);
  rehash_index_ = 0;
}

bool KvTable::RehashStep(size_t buckets) {
  if (!rehashing()) return false;
  size_t empty_budget = buckets * kEmptyVisitsPerStep;
  Buckets& from = tables_[0];
  Buckets& to = tables_[1];
  while (buckets > 0 && rehash_index_ < from.size()) {
    Entry* e = from[rehash_index_];
    if (e == nullptr) {
      ++rehash_index_;
      if (--empty_budget == 0) break;
      continue;
    }
    while (e != nullptr) {
      Entry* next = e->next();
      Entry*& head = to[BucketIndex(to, HashKey(e->key()))];
      e->set_next(head);
      head = e;
      e = next;
    }
    from[rehash_index_++] = nullptr;
    --buckets;
  }
  if (rehash_index_ >= from.size()) {
    tables_[0] = std::move(tables_[1]);
    tables_[1] = Buckets();
    rehash_index_ = 0;
    // A table emptied by a mass expiry shrinks by 8x at a time: start the next step now, or
    // it would wait for the next write to notice.
    MaybeResize();
    return rehashing();
  }
  return true;
}

uint64_t KvTable::Scan(uint64_t cursor, const std::function<void(const Entry*)>& fn) const {
  if (size_ == 0 || tables_[0].empty()) return 0;
  auto emit_bucket = [&](const Buckets& t, size_t index) {
    for (const Entry* e = t[index]; e != nullptr; e = e->next()) fn(e);
  };
  if (!rehashing()) {
    uint64_t mask = tables_[0].size() - 1;
    emit_bucket(tables_[0], cursor & mask);
    cursor |= ~mask;
    cursor = ReverseBits(cursor);
    ++cursor;
    return ReverseBits(cursor);
  }
  // During a rehash, visit the cursor's bucket in the smaller table and every bucket of the
  // larger table that expands from it. Buckets of tables_[0] already moved are empty.
  const Buckets* small = &tables_[0];
  const Buckets* large = &tables_[1];
  if (small->size() > large->size()) std::swap(small, large);
  uint64_t small_mask = small->size() - 1;
  uint64_t large_mask = large->size() - 1;
  emit_bucket(*small, cursor & small_mask);
  do {
    emit_bucket(*large, cursor & large_mask);
    cursor |= ~large_mask;
    cursor = ReverseBits(cursor);
    ++cursor;
    cursor = ReverseBits(cursor);
  } while (cursor & (small_mask ^ large_mask));
  return cursor;
}

Entry* KvTable::RandomEntry(uint64_t random) const {
  if (size_ == 0) return nullptr;
  // Probe buckets from a random start; the load factor keeps the expected probes small.
  const Buckets& t = rehashing() && tables_[1].size() > tables_[0].size() ? tables_[1] : tables_[0];
  for (int pass = 0; pass < 2; ++pass) {
    const Buckets& table = pass == 0 ? t : (&t == &tables_[0] ? tables_[1] : tables_[0]);
    if (table.empty()) continue;
    size_t n = table.size();
    size_t start = random & (n - 1);
    for (size_t i = 0; i < n; ++i) {
      Entry* head = table[(start + i) & (n - 1)];
      if (head == nullptr) continue;
      size_t len = 0;
      for (Entry* e = head; e != nullptr; e = e->next()) ++len;
      size_t pick = (random >> 32) % len;
      Entry* e = head;
      while (pick-- > 0) e = e->next();
      return e;
    }
  }
  return nullptr;
}

size_t KvTable::DrainSome(size_t max, const std::function<void(Entry*)>& fn) {
  size_t removed = 0;
  while (removed < max && size_ > 0) {
    size_t n0 = tables_[0].size();
    Buckets& table = drain_index_ < n0 ? tables_[0] : tables_[1];
    size_t index = drain_index_ < n0 ? drain_index_ : drain_index_ - n0;
    if (index >= table.size()) break;
    Entry*& head = table[index];
    if (head == nullptr) {
      ++drain_index_;
      continue;
    }
    Entry* e = head;
    Protect(e);
    head = e->next();
    fn(e);
    Entry::Destroy(e);
    --size_;
    ++removed;
  }
  return removed;
}

void KvTable::ProtectSlow(Entry* e) {
  if (e->snapshot_mark() == mark_) return;
  observer_->SaveBeforeChange(e);
  e->set_snapshot_mark(mark_);
}

void KvTable::ProtectAll() {
  if (observer_ == nullptr) return;
  for (Buckets& table : tables_) {
    for (Entry* e : table) {
      for (; e != nullptr; e = e->next()) ProtectSlow(e);
    }
  }
}

uint64_t KvTable::SnapshotScan(uint64_t cursor, size_t* visited) {
  // Scan hands out const entries; the walk only flips their mark bit, which no reader uses.
  return Scan(cursor, [&](const Entry* e) {
    Protect(const_cast<Entry*>(e));
    ++*visited;
  });
}

bool KvTable::RetireToSnapshot() {
  if (observer_ == nullptr) return false;
  observer_->Retire(std::move(*this));  // the move carries the observer along
  return true;
}

KvTable KvTable::TakeEntries() {
  ProtectAll();
  KvTable taken;
  std::swap(taken.tables_, tables_);
  std::swap(taken.rehash_index_, rehash_index_);
  std::swap(taken.size_, size_);
  drain_index_ = 0;
  return taken;
}

void KvTable::Clear() {
  ProtectAll();
  for (auto& table : tables_) {
    for (Entry* head : table) {
      while (head != nullptr) {
        Entry* next = head->next();
        Entry::Destroy(head);
        head = next;
      }
    }
    table.clear();
    table.shrink_to_fit();
  }
  rehash_index_ = 0;
  drain_index_ = 0;
  size_ = 0;
}

}  // namespace lapse::engine
