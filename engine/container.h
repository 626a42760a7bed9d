// File: engine/container.h
//
// Containers: named sets of JSON items whose expiry follows Cosmos DB's time-to-live rules
// (DESIGN.md §1). A container's settings live once, in a ContainerInfo shared by every
// shard; its items are spread over the shards by (container, id). Settings are atomics, so
// the moment CSETTTL stores a new DefaultTimeToLive, every shard's next read uses it — there
// is no per-shard copy to fall out of date. The catalog maps names to infos under a mutex;
// shards cache the pointer, and a dropped container is recognised by its `dropped` flag.
//
// A container belongs to a numbered database, as a Cosmos DB container belongs to its
// database: the catalog is keyed by (database, name), so the same name in two databases is
// two containers. Whatever acts on a whole database acts on its containers too (FLUSHDB drops
// them, SWAPDB swaps them); CMOVE moves one, as MOVE moves a key. SwapDbs and Move re-key the
// catalog only: the caller holds every shard meanwhile and re-keys the shards' caches of it
// (ItemStore::SwapDbs, ItemStore::MoveToDb) in the same atomic step, so that no command sees
// the catalog and a shard disagree.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/change_feed.h"
#include "engine/request_units.h"

namespace lapse::engine {

// DefaultTimeToLive values: kTtlOff (absent / switched off), -1 (items expire only by their
// own ttl), or 1 … kMaxTtlSeconds.
inline constexpr int64_t kTtlOff = INT64_MIN;
inline constexpr int64_t kMaxTtlSeconds = 2147483647;
// An item without a "ttl" property.
inline constexpr int64_t kNoItemTtl = INT64_MIN;

// Parses a ttl as Cosmos DB accepts it: "-1" or an integer 1 … 2147483647, written plainly
// (no sign but '-', no leading zeros, no spaces, no fraction or exponent).
bool ParseTtlSeconds(std::string_view text, int64_t* seconds);

// Server-wide reclamation figures for items, kept by the catalog so that they survive the
// containers they were counted in.
struct ItemReclaimStats {
  std::atomic<uint64_t> reclaimed_background{0};
  std::atomic<uint64_t> reclaimed_lazy{0};
  std::atomic<uint64_t> throttled{0};
  LagHistogram lag;
};

struct ContainerInfo {
  ContainerInfo(std::string container_name, uint32_t database, uint64_t container_id, ItemReclaimStats* stats)
      : name(std::move(container_name)), db(database), id(container_id), server_stats(stats) {}
  const std::string name;
  // The database it belongs to. Changed only by the catalog (SWAPDB, CMOVE) while every shard
  // is held, so a reader holding any shard sees a value that agrees with that shard's cache.
  std::atomic<uint32_t> db;
  const uint64_t id;  // unique for the life of the process, even across drop and re-create
  ItemReclaimStats* const server_stats;  // the catalog's, which outlives every container
  std::atomic<int64_t> default_ttl{kTtlOff};
  std::atomic<bool> dropped{false};
  // CSETEVICT: whether its live items may be evicted under the allkeys-* policies. Off by
  // default: items are data, not cache entries.
  std::atomic<bool> evictable{false};
  std::atomic<uint64_t> evicted_items{0};
  // Its own RU budget (CSETRU); limit 0 means the container shares the server-wide budget.
  // The meter keeps it as a double; the integer the client set is kept too, to read back exactly.
  RuMeter meter;
  std::atomic<int64_t> ru_per_second{0};
  // Reclamation figures over all shards.
  std::atomic<uint64_t> reclaimed_background{0};
  std::atomic<uint64_t> reclaimed_lazy{0};
  std::atomic<int64_t> ru_user_total_milli{0};
  std::atomic<int64_t> ru_reclaim_total_milli{0};
  LagHistogram lag;
  // Every change to its items (ICHANGES); it goes with the container wherever it is kept.
  ChangeFeed feed;

  // Marks the container dropped: its shards free its items in the background, and its change
  // feed closes at once, waking whoever waits on it.
  void MarkDropped() {
    dropped.store(true);
    feed.Close();
  }
};

// The effective ttl in seconds of an item under a container setting, or nullopt if it never
// expires: OFF suspends all expiry; an item's own ttl wins over the default; -1 pins.
inline std::optional<int64_t> EffectiveTtl(int64_t default_ttl, int64_t item_ttl) {
  if (default_ttl == kTtlOff) return std::nullopt;
  int64_t ttl = item_ttl != kNoItemTtl ? item_ttl : default_ttl;
  if (ttl == -1) return std::nullopt;
  return ttl;
}

class ContainerCatalog {
 public:
  // Container `name` of database `db`, or nullptr.
  std::shared_ptr<ContainerInfo> Find(uint32_t db, std::string_view name) const;
  // Creates the container (TTL off) in `db` if it does not exist there.
  std::shared_ptr<ContainerInfo> FindOrCreate(uint32_t db, std::string_view name);
  // Marks the container dropped and forgets it; false if there was none.
  bool Drop(uint32_t db, std::string_view name);
  // FLUSHDB: drops every container of `db`.
  void DropDb(uint32_t db);
  // FLUSHALL: drops every container of every database.
  void DropAll();
  // SWAPDB: the containers of `a` become those of `b` and the other way round.
  void SwapDbs(uint32_t a, uint32_t b);
  // CMOVE: moves container `name` from database `from` to `to`, settings, budget and figures
  // with it; false (nothing done) when it is not in `from` or `to` already has that name.
  bool Move(std::string_view name, uint32_t from, uint32_t to);
  std::vector<std::string> Names(uint32_t db) const;  // sorted
  // Containers per database, only those that have some (INFO reclaim).
  std::map<uint32_t, size_t> CountsByDb() const;
  size_t Count() const;
  ItemReclaimStats& stats() { return stats_; }

 private:
  using ByName = std::map<std::string, std::shared_ptr<ContainerInfo>, std::less<>>;
  static void MarkDropped(ByName& containers);

  mutable std::mutex mu_;
  std::map<uint32_t, ByName> by_db_;  // a database without containers may have no entry
  uint64_t next_id_ = 1;
  ItemReclaimStats stats_;
};

}  // namespace lapse::engine
