#include "server/slowlog.h"

#include <algorithm>

namespace lapse::server {

void Slowlog::Configure(int64_t slower_than_us, int64_t max_len) {
  slower_than_us_.store(slower_than_us, std::memory_order_relaxed);
  // Like Redis, a shorter maximum trims the log at the next entry, not now.
  max_len_.store(max_len, std::memory_order_relaxed);
}

void Slowlog::Add(std::span<const std::string_view> args, int64_t micros, int64_t unix_seconds,
                  std::string client_addr, std::string client_name) {
  SlowlogEntry entry{0, unix_seconds, micros, {}, std::move(client_addr), std::move(client_name)};
  // Redis keeps 31 arguments and says how many more there were in the 32nd.
  size_t kept = args.size() > kMaxArgs ? kMaxArgs - 1 : args.size();
  for (size_t i = 0; i < kept; ++i) {
    std::string_view a = args[i];
    if (a.size() > kMaxArgBytes) {
      entry.args.push_back(std::string(a.substr(0, kMaxArgBytes)) + "... (" + std::to_string(a.size() - kMaxArgBytes) +
                           " more bytes)");
    } else {
      entry.args.emplace_back(a);
    }
  }
  if (kept < args.size()) entry.args.push_back("... (" + std::to_string(args.size() - kept) + " more arguments)");
  std::lock_guard lock(mu_);
  entry.id = next_id_++;
  entries_.push_front(std::move(entry));
  size_t max_len = static_cast<size_t>(std::max<int64_t>(0, max_len_.load(std::memory_order_relaxed)));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowlogEntry> Slowlog::Newest(int64_t count) const {
  std::lock_guard lock(mu_);
  size_t n = count < 0 ? entries_.size() : std::min(entries_.size(), static_cast<size_t>(count));
  return {entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n)};
}

size_t Slowlog::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void Slowlog::Reset() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

}  // namespace lapse::server
