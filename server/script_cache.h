// File: server/script_cache.h
//
// The scripts EVAL and SCRIPT LOAD have seen, by SHA-1, shared by every thread: a script
// loaded through one connection can be called by EVALSHA on any other. Each thread's Lua
// state compiles a script the first time it runs it there; SCRIPT FLUSH moves the epoch on,
// and a thread whose state is older starts a fresh one.
//
// The cache also remembers, per script, whether it keeps to the keys it declares in KEYS
// (script_commands.cc decides what a script holds from that).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace lapse::server {

class ScriptCache {
 public:
  void Add(const std::string& sha, std::string body) {
    std::lock_guard lock(mu_);
    scripts_.try_emplace(sha, Script{std::move(body)});
  }
  std::optional<std::string> Find(const std::string& sha) const {
    std::lock_guard lock(mu_);
    auto it = scripts_.find(sha);
    if (it == scripts_.end()) return std::nullopt;
    return it->second.body;
  }
  bool Contains(const std::string& sha) const {
    std::lock_guard lock(mu_);
    return scripts_.count(sha) != 0;
  }
  // What a script has been seen to touch.
  enum class Footprint { kUnknown, kDeclaredKeys, kUndeclaredKeys };
  Footprint FootprintOf(const std::string& sha) const {
    std::lock_guard lock(mu_);
    auto it = scripts_.find(sha);
    return it == scripts_.end() ? Footprint::kUnknown : it->second.footprint;
  }
  void SetFootprint(const std::string& sha, Footprint footprint) {
    std::lock_guard lock(mu_);
    auto it = scripts_.find(sha);
    if (it != scripts_.end() && it->second.footprint != Footprint::kUndeclaredKeys) it->second.footprint = footprint;
  }
  void Flush() {
    std::lock_guard lock(mu_);
    scripts_.clear();
    epoch_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t epoch() const { return epoch_.load(std::memory_order_relaxed); }
  // How many scripts are cached and the bytes of their names and bodies (MEMORY STATS's
  // lua.caches, MEMORY DOCTOR's "many scripts").
  std::pair<size_t, size_t> CountAndBytes() const {
    std::lock_guard lock(mu_);
    size_t bytes = 0;
    for (const auto& [sha, script] : scripts_) bytes += sha.capacity() + script.body.capacity() + sizeof(Script);
    return {scripts_.size(), bytes};
  }

 private:
  mutable std::mutex mu_;
  struct Script {
    std::string body;
    Footprint footprint = Footprint::kUnknown;
  };
  std::unordered_map<std::string, Script> scripts_;
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace lapse::server
