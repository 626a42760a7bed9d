#include "server/tracking_table.h"

#include <algorithm>

namespace lapse::server {

namespace {
// Redis's test for overlapping prefixes: the shorter is a prefix of the longer.
bool Overlaps(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}
}  // namespace

// ---- TrackedKeys ----

bool TrackedKeys::Remember(std::string_view key, uint64_t id) {
  Stripe& stripe = StripeOf(key);
  std::lock_guard lock(stripe.mu);
  auto it = stripe.readers.find(key);
  if (it == stripe.readers.end()) {
    it = stripe.readers.emplace(std::string(key), std::vector<uint64_t>{}).first;
    keys_.fetch_add(1, std::memory_order_relaxed);
  }
  std::vector<uint64_t>& ids = it->second;
  // A key has few readers; a scan beats a set's allocations.
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) return false;
  ids.push_back(id);
  items_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::vector<uint64_t> TrackedKeys::Take(std::string_view key) {
  Stripe& stripe = StripeOf(key);
  std::lock_guard lock(stripe.mu);
  auto it = stripe.readers.find(key);
  if (it == stripe.readers.end()) return {};
  std::vector<uint64_t> ids = std::move(it->second);
  stripe.readers.erase(it);
  keys_.fetch_sub(1, std::memory_order_relaxed);
  items_.fetch_sub(ids.size(), std::memory_order_relaxed);
  return ids;
}

void TrackedKeys::Clear() {
  for (Stripe& stripe : stripes_) {
    std::lock_guard lock(stripe.mu);
    size_t items = 0;
    for (const auto& [key, ids] : stripe.readers) items += ids.size();
    keys_.fetch_sub(stripe.readers.size(), std::memory_order_relaxed);
    items_.fetch_sub(items, std::memory_order_relaxed);
    stripe.readers.clear();
  }
}

std::optional<std::string> TrackedKeys::AnyKey(uint64_t seed) const {
  for (size_t i = 0; i < kStripes; ++i) {
    const Stripe& stripe = stripes_[(seed + i) % kStripes];
    std::lock_guard lock(stripe.mu);
    if (!stripe.readers.empty()) return stripe.readers.begin()->first;
  }
  return std::nullopt;
}

// ---- PrefixIndex ----

std::optional<PrefixIndex::Overlap> PrefixIndex::FindOverlap(uint64_t id,
                                                             const std::vector<std::string>& proposed) const {
  std::shared_lock lock(mu_);
  auto mine = prefixes_by_client_.find(id);
  for (size_t i = 0; i < proposed.size(); ++i) {
    if (mine != prefixes_by_client_.end()) {
      for (const std::string& registered : mine->second) {
        if (Overlaps(registered, proposed[i])) return Overlap{proposed[i], registered, true};
      }
    }
    for (size_t j = i + 1; j < proposed.size(); ++j) {
      if (Overlaps(proposed[i], proposed[j])) return Overlap{proposed[i], proposed[j], false};
    }
  }
  return std::nullopt;
}

void PrefixIndex::Add(uint64_t id, const std::string& prefix) {
  std::unique_lock lock(mu_);
  if (!prefixes_by_client_[id].insert(prefix).second) return;
  std::vector<uint64_t>& clients = clients_by_prefix_[prefix];
  clients.push_back(id);
  size_.store(clients_by_prefix_.size(), std::memory_order_relaxed);
}

void PrefixIndex::RemoveClient(uint64_t id) {
  std::unique_lock lock(mu_);
  auto mine = prefixes_by_client_.find(id);
  if (mine == prefixes_by_client_.end()) return;
  for (const std::string& prefix : mine->second) {
    auto it = clients_by_prefix_.find(prefix);
    if (it == clients_by_prefix_.end()) continue;
    std::erase(it->second, id);
    if (it->second.empty()) clients_by_prefix_.erase(it);
  }
  prefixes_by_client_.erase(mine);
  size_.store(clients_by_prefix_.size(), std::memory_order_relaxed);
}

std::vector<std::string> PrefixIndex::PrefixesOf(uint64_t id) const {
  std::shared_lock lock(mu_);
  auto mine = prefixes_by_client_.find(id);
  if (mine == prefixes_by_client_.end()) return {};
  return std::vector<std::string>(mine->second.begin(), mine->second.end());
}

std::vector<std::string> PrefixIndex::Matching(std::string_view key) const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [prefix, clients] : clients_by_prefix_) {
    if (key.substr(0, prefix.size()) == prefix) out.push_back(prefix);
  }
  return out;
}

std::vector<uint64_t> PrefixIndex::ClientsOf(const std::string& prefix) const {
  std::shared_lock lock(mu_);
  auto it = clients_by_prefix_.find(prefix);
  return it == clients_by_prefix_.end() ? std::vector<uint64_t>{} : it->second;
}

}  // namespace lapse::server
