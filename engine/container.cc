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

std::shared_ptr<ContainerInfo> ContainerCatalog::Find(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::shared_ptr<ContainerInfo> ContainerCatalog::FindOrCreate(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  auto info = std::make_shared<ContainerInfo>(std::string(name), next_id_++, &stats_);
  by_name_.emplace(std::string(name), info);
  return info;
}

bool ContainerCatalog::Drop(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return false;
  it->second->MarkDropped();
  by_name_.erase(it);
  return true;
}

void ContainerCatalog::DropAll() {
  std::lock_guard lock(mu_);
  for (auto& [name, info] : by_name_) info->MarkDropped();
  by_name_.clear();
}

std::vector<std::string> ContainerCatalog::Names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  names.reserve(by_name_.size());
  for (const auto& [name, info] : by_name_) names.push_back(name);
  return names;
}

}  // namespace lapse::engine
