// File: server/slowlog.h
//
// SLOWLOG, as Redis 7.0 keeps it: every command that ran at least slowlog-log-slower-than
// microseconds (negative: none, 0: all) is kept, newest first, up to slowlog-max-len
// entries, with its arguments (at most 32, each cut at 128 bytes, as Redis cuts them), the
// client's address and name. Slow commands are rare by definition, so one mutex serves
// every thread; the common case is the dispatcher's comparison against the threshold.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::server {

struct SlowlogEntry {
  uint64_t id;
  int64_t unix_seconds;
  int64_t micros;
  std::vector<std::string> args;
  std::string client_addr;
  std::string client_name;
};

class Slowlog {
 public:
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxArgBytes = 128;

  // The live settings (CONFIG SET); read on every command, hence atomics.
  void Configure(int64_t slower_than_us, int64_t max_len);
  bool Wants(int64_t micros) const {
    int64_t threshold = slower_than_us_.load(std::memory_order_relaxed);
    return threshold >= 0 && micros >= threshold;
  }
  void Add(std::span<const std::string_view> args, int64_t micros, int64_t unix_seconds, std::string client_addr,
           std::string client_name);
  // The newest `count` entries (all of them for a negative count).
  std::vector<SlowlogEntry> Newest(int64_t count) const;
  size_t size() const;
  void Reset();

 private:
  std::atomic<int64_t> slower_than_us_{10000};
  std::atomic<int64_t> max_len_{128};
  mutable std::mutex mu_;
  std::deque<SlowlogEntry> entries_;  // newest first
  uint64_t next_id_ = 0;
};

}  // namespace lapse::server
