#include "engine/shard.h"

#include <algorithm>

namespace lapse::engine {

Shard::Shard(uint32_t id, size_t databases, int64_t now_ms, ContainerCatalog& catalog)
    : id_(id), items_(id, catalog, now_ms) {
  dbs_.reserve(databases);
  for (size_t i = 0; i < databases; ++i) {
    dbs_.emplace_back(now_ms);
    dbs_.back().SetLocation(id, static_cast<uint32_t>(i));
    dbs_.back().SetFrequencySketch(sketch_.get(), probation_.get());
  }
}

bool Shard::ReclaimSlice(int64_t now_ms, size_t max_records, const std::function<bool(const Item&)>& admit_item) {
  bool items_more = ReclaimItemsSlice(now_ms, max_records, admit_item);
  bool keys_more = ReclaimKeysSlice(now_ms, max_records);
  return items_more || keys_more;
}

bool Shard::ReclaimKeysSlice(int64_t now_ms, size_t max_records) {
  bool more = false;
  size_t n = dbs_.size();
  size_t per_db = std::max<size_t>(1, max_records / n);
  for (size_t i = 0; i < n; ++i) {
    Db& db = dbs_[(next_db_ + i) % n];
    if (db.wheel_records() == 0) continue;
    if (db.Reclaim(now_ms, per_db)) more = true;
  }
  next_db_ = (next_db_ + 1) % n;
  return more;
}

void Shard::RehashIdle(size_t buckets) {
  for (Db& db : dbs_) db.RehashStep(buckets);
}

ShardStats Shard::Stats() const {
  ShardStats s;
  for (const Db& db : dbs_) {
    const ExpiryStats& e = db.expiry_stats();
    s.expired_keys += e.expired_keys;
    s.expired_lazily += e.expired_lazily;
    s.expired_lag_max_ms = std::max(s.expired_lag_max_ms, e.expired_lag_max_ms);
    s.keys_stored += db.stored();
    s.keys_volatile += db.volatile_count();
  }
  s.keyspace_hits = keyspace_hits_;
  s.keyspace_misses = keyspace_misses_;
  return s;
}

void Shard::ResetStats() {
  for (Db& db : dbs_) db.ResetExpiryStats();
  keyspace_hits_ = keyspace_misses_ = 0;
}

}  // namespace lapse::engine
