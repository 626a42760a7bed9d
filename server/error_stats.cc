#include "server/error_stats.h"

namespace lapse::server {

void ErrorStats::Count(const std::string& out, size_t at) {
  total_.fetch_add(1, std::memory_order_relaxed);
  std::string_view text = std::string_view(out).substr(at + 1);
  std::string_view code = text.substr(0, text.find_first_of(" \r"));
  std::lock_guard lock(mu_);
  auto it = by_code_.find(code);
  if (it != by_code_.end()) {
    ++it->second;
  } else if (by_code_.size() < kMaxCodes) {
    by_code_.emplace(std::string(code), 1);
  }
}

std::vector<std::pair<std::string, uint64_t>> ErrorStats::ByCode() const {
  std::lock_guard lock(mu_);
  return {by_code_.begin(), by_code_.end()};
}

void ErrorStats::Reset() {
  total_.store(0, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  by_code_.clear();
}

}  // namespace lapse::server
