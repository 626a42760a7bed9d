// File: server/error_stats.h
//
// INFO errorstats and total_error_replies: every error reply is counted under its code, the
// first word of its text ("ERR", "WRONGTYPE", "EXECABORT"), as Redis 7.0 counts them. Errors
// are rare next to replies, so one mutex over an ordered map is enough, and the map's order is
// the order INFO lists them in, as Redis's radix tree gives it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lapse::server {

class ErrorStats {
 public:
  // Like Redis, stops tracking new codes after this many (a client inventing codes must not
  // grow the server without bound); their errors still count in the total.
  static constexpr size_t kMaxCodes = 128;

  // Counts the error reply that starts at out[at] ('-'), if there is one there.
  void CountIfError(const std::string& out, size_t at) {
    if (out.size() > at && out[at] == '-') [[unlikely]] Count(out, at);
  }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  std::vector<std::pair<std::string, uint64_t>> ByCode() const;
  void Reset();

 private:
  void Count(const std::string& out, size_t at);

  std::atomic<uint64_t> total_{0};
  mutable std::mutex mu_;
  std::map<std::string, uint64_t, std::less<>> by_code_;
};

}  // namespace lapse::server
