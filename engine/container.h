// File: engine/container.h
//
// Containers: named sets of JSON items whose expiry follows Cosmos DB's time-to-live rules
// (DESIGN.md §1). A container's settings live once, in a ContainerInfo shared by every
// shard; its items are spread over the shards by (container, id). Settings are atomics, so
// the moment CSETTTL stores a new DefaultTimeToLive, every shard's next read uses it — there
// is no per-shard copy to fall out of date. The catalog maps names to infos under a mutex;
// shards cache the pointer, and a dropped container is recognised by its `dropped` flag.
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
  ContainerInfo(std::string container_name, uint64_t container_id, ItemReclaimStats* stats)
      : name(std::move(container_name)), id(container_id), server_stats(stats) {}
  const std::string name;
  const uint64_t id;  // unique for the life of the process, even across drop and re-create
  ItemReclaimStats* const server_stats;  // the catalog's, which outlives every container
  std::atomic<int64_t> default_ttl{kTtlOff};
  std::atomic<bool> dropped{false};
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
  std::shared_ptr<ContainerInfo> Find(std::string_view name) const;
  // Creates the container (TTL off) if it does not exist.
  std::shared_ptr<ContainerInfo> FindOrCreate(std::string_view name);
  // Marks the container dropped and forgets it; false if there was none.
  bool Drop(std::string_view name);
  void DropAll();
  std::vector<std::string> Names() const;  // sorted
  ItemReclaimStats& stats() { return stats_; }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ContainerInfo>, std::less<>> by_name_;
  uint64_t next_id_ = 1;
  ItemReclaimStats stats_;
};

}  // namespace lapse::engine
