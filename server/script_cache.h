// File: server/script_cache.h
//
// The scripts EVAL and SCRIPT LOAD have seen, by SHA-1, shared by every thread: a script
// loaded through one connection can be called by EVALSHA on any other. Each thread's Lua
// state compiles a script the first time it runs it there; SCRIPT FLUSH moves the epoch on,
// and a thread whose state is older starts a fresh one.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace lapse::server {

class ScriptCache {
 public:
  void Add(const std::string& sha, std::string body) {
    std::lock_guard lock(mu_);
    bodies_.try_emplace(sha, std::move(body));
  }
  std::optional<std::string> Find(const std::string& sha) const {
    std::lock_guard lock(mu_);
    auto it = bodies_.find(sha);
    if (it == bodies_.end()) return std::nullopt;
    return it->second;
  }
  bool Contains(const std::string& sha) const {
    std::lock_guard lock(mu_);
    return bodies_.count(sha) != 0;
  }
  void Flush() {
    std::lock_guard lock(mu_);
    bodies_.clear();
    epoch_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t epoch() const { return epoch_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> bodies_;
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace lapse::server
