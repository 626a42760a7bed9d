// File: engine/shard.h
//
// A shard owns a slice of the keyspace (every key whose hash maps to it) across all numbered
// databases, and the work of expiring it. Nothing here is synchronised: the server lets one
// thread at a time use a shard, the one holding its lock (server/shard_set.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/container.h"
#include "engine/db.h"
#include "engine/frequency_sketch.h"
#include "engine/item_store.h"

namespace lapse::engine {

struct ShardStats {
  uint64_t expired_keys = 0;
  uint64_t expired_lazily = 0;
  uint64_t expired_lag_max_ms = 0;
  size_t keys_stored = 0;
  size_t keys_volatile = 0;
  uint64_t keyspace_hits = 0;    // lookups on behalf of a read that found a live key
  uint64_t keyspace_misses = 0;  // ... and that did not
};

class Shard {
 public:
  Shard(uint32_t id, size_t databases, int64_t now_ms, ContainerCatalog& catalog);

  uint32_t id() const { return id_; }
  void SetKeyEventListener(KeyEventListener* listener) {
    for (Db& db : dbs_) db.SetKeyEventListener(listener);
    items_.SetKeyEventListener(listener);
  }
  size_t database_count() const { return dbs_.size(); }
  Db& db(size_t index) { return dbs_[index]; }
  const Db& db(size_t index) const { return dbs_[index]; }

  // Items of every container whose (container, id) hash to this shard.
  ItemStore& items() { return items_; }

  // SWAPDB: every shard swaps its part, so that the swap is whole once all shards did it.
  // Watches stay with their database index (a client watches the database it selected), and
  // are touched first, as in Redis. Containers go with their database's keys; the caller
  // swaps them in the catalog in the same atomic step (ContainerCatalog::SwapDbs).
  void SwapDbs(size_t a, size_t b, int64_t now_ms) {
    if (a == b) return;
    dbs_[a].TouchAllWatched(&dbs_[b], now_ms);
    dbs_[b].TouchAllWatched(&dbs_[a], now_ms);
    std::swap(dbs_[a], dbs_[b]);
    dbs_[a].SwapWatches(dbs_[b]);
    dbs_[a].SwapBlocked(dbs_[b]);
    items_.SwapDbs(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
  }

  // The reclaimer's single entry point: deletes due keys across this shard's databases and
  // expired items of its containers, handling at most `max_records` records of each.
  // `admit_item` may refuse an item deletion (request-unit budget). Returns true while more
  // is due.
  bool ReclaimSlice(int64_t now_ms, size_t max_records, const std::function<bool(const Item&)>& admit_item);
  // Its two halves, which the server times apart (LATENCY's item-reclaim-cycle and
  // expire-cycle events).
  bool ReclaimItemsSlice(int64_t now_ms, size_t max_records, const std::function<bool(const Item&)>& admit_item) {
    return items_.Reclaim(now_ms, max_records, admit_item);
  }
  bool ReclaimKeysSlice(int64_t now_ms, size_t max_records);

  // Spends idle time on incremental rehashing.
  void RehashIdle(size_t buckets);

  ShardStats Stats() const;
  // Counts a lookup made on behalf of a read (INFO keyspace_hits / keyspace_misses).
  void CountReadLookup(bool hit) { ++(hit ? keyspace_hits_ : keyspace_misses_); }
  // Both counters, so that a script that starts over can take back the lookups of the run
  // it abandoned (server/script_undo.h).
  struct ReadLookups {
    uint64_t hits = 0;
    uint64_t misses = 0;
  };
  ReadLookups read_lookups() const { return {keyspace_hits_, keyspace_misses_}; }
  void set_read_lookups(ReadLookups counts) { keyspace_hits_ = counts.hits, keyspace_misses_ = counts.misses; }
  // CONFIG RESETSTAT: zeroes the counters INFO stats reports.
  void ResetStats();

  // The read history its databases count into (engine/frequency_sketch.h); off until sized.
  FrequencySketch& frequency_sketch() { return *sketch_; }
  // The keys its databases created on probation, for the evictor.
  ProbationQueue& probation() { return *probation_; }

 private:
  uint32_t id_;
  std::vector<Db> dbs_;
  ItemStore items_;
  // Held apart so that the databases' pointer to it survives a move of the shard.
  std::unique_ptr<FrequencySketch> sketch_ = std::make_unique<FrequencySketch>();
  std::unique_ptr<ProbationQueue> probation_ = std::make_unique<ProbationQueue>();
  size_t next_db_ = 0;  // round robin so that one busy database does not starve the others
  uint64_t keyspace_hits_ = 0;
  uint64_t keyspace_misses_ = 0;
};

}  // namespace lapse::engine
