#include "engine/container.h"

namespace lapse::engine {

bool ParseTtlSeconds(std::string_view text, int64_t* seconds) {
  if (text == "-1") {
    *seconds = -1;
    return true;
  }
  if (text.empty() || text.size() > 10 || text[0] < '1' || text[0] > '9') return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > kMaxTtlSeconds) return false;
  *seconds = v;
  return true;
}

std::shared_ptr<ContainerInfo> ContainerCatalog::Find(uint32_t db, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto in_db = by_db_.find(db);
  if (in_db == by_db_.end()) return nullptr;
  auto it = in_db->second.find(name);
  return it == in_db->second.end() ? nullptr : it->second;
}

std::shared_ptr<ContainerInfo> ContainerCatalog::FindOrCreate(uint32_t db, std::string_view name) {
  std::lock_guard lock(mu_);
  ByName& containers = by_db_[db];
  auto it = containers.find(name);
  if (it != containers.end()) return it->second;
  auto info = std::make_shared<ContainerInfo>(std::string(name), db, next_id_++, &stats_);
  containers.emplace(std::string(name), info);
  return info;
}

bool ContainerCatalog::Drop(uint32_t db, std::string_view name) {
  std::lock_guard lock(mu_);
  auto in_db = by_db_.find(db);
  if (in_db == by_db_.end()) return false;
  auto it = in_db->second.find(name);
  if (it == in_db->second.end()) return false;
  it->second->MarkDropped();
  in_db->second.erase(it);
  return true;
}

void ContainerCatalog::MarkDropped(ByName& containers) {
  for (auto& [name, info] : containers) info->MarkDropped();
}

void ContainerCatalog::DropDb(uint32_t db) {
  std::lock_guard lock(mu_);
  auto in_db = by_db_.find(db);
  if (in_db == by_db_.end()) return;
  MarkDropped(in_db->second);
  by_db_.erase(in_db);
}

void ContainerCatalog::DropAll() {
  std::lock_guard lock(mu_);
  for (auto& [db, containers] : by_db_) MarkDropped(containers);
  by_db_.clear();
}

void ContainerCatalog::SwapDbs(uint32_t a, uint32_t b) {
  if (a == b) return;
  std::lock_guard lock(mu_);
  std::swap(by_db_[a], by_db_[b]);
  for (uint32_t db : {a, b}) {
    for (auto& [name, info] : by_db_[db]) info->db.store(db, std::memory_order_relaxed);
  }
}

bool ContainerCatalog::Move(std::string_view name, uint32_t from, uint32_t to) {
  std::lock_guard lock(mu_);
  auto in_from = by_db_.find(from);
  if (from == to || in_from == by_db_.end()) return false;
  auto it = in_from->second.find(name);
  if (it == in_from->second.end()) return false;
  ByName& target = by_db_[to];
  if (target.contains(name)) return false;
  std::shared_ptr<ContainerInfo> info = std::move(it->second);
  in_from->second.erase(it);
  info->db.store(to, std::memory_order_relaxed);
  target.emplace(std::string(name), std::move(info));
  return true;
}

std::vector<std::string> ContainerCatalog::Names(uint32_t db) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  auto in_db = by_db_.find(db);
  if (in_db == by_db_.end()) return names;
  names.reserve(in_db->second.size());
  for (const auto& [name, info] : in_db->second) names.push_back(name);
  return names;
}

std::map<uint32_t, size_t> ContainerCatalog::CountsByDb() const {
  std::lock_guard lock(mu_);
  std::map<uint32_t, size_t> counts;
  for (const auto& [db, containers] : by_db_) {
    if (!containers.empty()) counts[db] = containers.size();
  }
  return counts;
}

size_t ContainerCatalog::Count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [db, containers] : by_db_) n += containers.size();
  return n;
}

}  // namespace lapse::engine
