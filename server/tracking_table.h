// File: server/tracking_table.h
//
// The two indexes behind client-side caching (server/tracking.h), kept free of clients,
// sockets and RESP so that they can be tested alone.
//
// TrackedKeys is Redis's TrackingTable: for each key some tracking client has read, the ids
// of the clients that read it. Like Redis's, it ignores the database: a key read in database
// 0 is invalidated by a write to the same name in database 1. A write takes the key's whole
// entry out at once (Take): each reader is told once, and must read the key again to hear of
// the next change. Clients are kept by id, not by pointer, so an entry may outlive its
// client; the caller skips ids that no longer track (Redis does the same).
//
// Any thread reads or writes it: the keys are spread over kStripes maps by hash, each with
// its own mutex, so that writers on different threads rarely meet. The totals (INFO's
// tracking_total_keys and tracking_total_items) are atomics, so the check every write makes,
// "is anything tracked at all", is one relaxed load.
//
// PrefixIndex is Redis's PrefixTable for BCAST mode: for each prefix, the clients that
// registered it, in prefix order (Redis's radix tree order, which its invalidation messages
// follow). It is small and changes only on CLIENT TRACKING, so one shared_mutex guards it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lapse::server {

class TrackedKeys {
 public:
  // Records that client `id` read `key`; false if it was already recorded.
  bool Remember(std::string_view key, uint64_t id);
  // Removes `key` and returns the ids that read it, in the order they first did (empty when
  // nobody tracks it).
  std::vector<uint64_t> Take(std::string_view key);
  // Forgets every key (FLUSHDB and FLUSHALL drop the whole table, as Redis does).
  void Clear();
  // Some tracked key, chosen starting from a stripe picked by `seed`; nullopt when none is.
  // Used to evict keys over tracking-table-max-keys, where any key will do.
  std::optional<std::string> AnyKey(uint64_t seed) const;

  size_t keys() const { return keys_.load(std::memory_order_relaxed); }
  size_t items() const { return items_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kStripes = 64;
  // Looked up by string_view, so that a write to an untracked key allocates nothing.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  struct Stripe {
    mutable std::mutex mu;
    std::unordered_map<std::string, std::vector<uint64_t>, KeyHash, std::equal_to<>> readers;
  };
  Stripe& StripeOf(std::string_view key) { return stripes_[std::hash<std::string_view>{}(key) % kStripes]; }

  std::array<Stripe, kStripes> stripes_;
  std::atomic<size_t> keys_{0};
  std::atomic<size_t> items_{0};
};

class PrefixIndex {
 public:
  // Where a proposed prefix overlaps one already registered or another proposed one (one is
  // a prefix of the other, or they are equal). `existing` tells which kind of overlap.
  struct Overlap {
    std::string proposed;
    std::string other;
    bool existing;
  };
  // Redis's order of checks: for each proposed prefix, first the client's registered ones (in
  // prefix order), then the proposed ones after it.
  std::optional<Overlap> FindOverlap(uint64_t id, const std::vector<std::string>& proposed) const;

  void Add(uint64_t id, const std::string& prefix);
  // Removes every prefix of client `id`; prefixes nobody else has disappear.
  void RemoveClient(uint64_t id);
  // The prefixes client `id` registered, in prefix order.
  std::vector<std::string> PrefixesOf(uint64_t id) const;
  // The registered prefixes that `key` starts with, in prefix order.
  std::vector<std::string> Matching(std::string_view key) const;
  // The clients of `prefix`, in the order they registered it.
  std::vector<uint64_t> ClientsOf(const std::string& prefix) const;

  // Distinct prefixes registered (INFO's tracking_total_prefixes).
  size_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::vector<uint64_t>> clients_by_prefix_;
  std::unordered_map<uint64_t, std::set<std::string>> prefixes_by_client_;
  std::atomic<size_t> size_{0};
};

}  // namespace lapse::server
