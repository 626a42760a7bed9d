// File: server/function_registry.h
//
// Redis 7 functions: the libraries FUNCTION LOAD has accepted, shared by every thread. A
// change (LOAD, DELETE, FLUSH, RESTORE) publishes a new immutable snapshot and moves the
// epoch on; each thread's function Lua state (Server::function_lua) is made afresh from the
// snapshot when its epoch is older, so a library loaded through one connection is callable
// by FCALL on every other. Like the script cache, it also remembers per function whether it
// keeps to the keys it declares (script_commands.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/script_cache.h"

namespace lapse::server {

// Function flags, in Redis's order (FUNCTION LIST lists them so).
enum FunctionFlag : uint32_t {
  kFunctionNoWrites = 1 << 0,
  kFunctionAllowOom = 1 << 1,
  kFunctionAllowStale = 1 << 2,
  kFunctionNoCluster = 1 << 3,
  kFunctionAllowCrossSlotKeys = 1 << 4,
};
inline constexpr const char* kFunctionFlagNames[] = {"no-writes", "allow-oom", "allow-stale", "no-cluster",
                                                     "allow-cross-slot-keys"};

// The flag called `name`, or 0 when no flag is.
inline uint32_t FunctionFlagNamed(std::string_view name) {
  for (size_t bit = 0; bit < std::size(kFunctionFlagNames); ++bit) {
    if (name == kFunctionFlagNames[bit]) return uint32_t{1} << bit;
  }
  return 0;
}

// The space-separated words of a "#!..." line (a library's or a script's).
inline std::vector<std::string_view> ShebangWords(std::string_view line) {
  std::vector<std::string_view> words;
  for (size_t i = 0; i < line.size();) {
    size_t end = line.find_first_of(" \t\r", i);
    if (end == std::string_view::npos) end = line.size();
    if (end > i) words.push_back(line.substr(i, end - i));
    i = end + 1;
  }
  return words;
}

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  uint32_t flags = 0;
};

struct FunctionLibrary {
  std::string name;
  std::string code;  // as loaded, its "#!lua name=..." line included
  std::vector<FunctionInfo> functions;  // sorted by name
};

// What a library's first line says: "#!<engine> name=<name>".
struct LibraryMetadata {
  std::string engine;
  std::string name;
};
// The metadata, or Redis's error for it ("ERR Missing library metadata", ...).
std::variant<LibraryMetadata, std::string> ParseLibraryMetadata(std::string_view code);
// The code after the metadata line, from its newline on, so that line numbers in errors
// count from the top of what the user wrote.
inline std::string_view LibraryBody(std::string_view code) {
  size_t newline = code.find('\n');
  return newline == std::string_view::npos ? std::string_view() : code.substr(newline);
}
// Redis's rule for library and function names.
bool ValidLibraryName(std::string_view name);

class FunctionRegistry {
 public:
  struct Snapshot {
    uint64_t epoch = 0;
    std::map<std::string, FunctionLibrary> libraries;
    // function name -> its library's name
    std::map<std::string, std::string> owners;

    const FunctionInfo* Find(const std::string& function) const {
      auto owner = owners.find(function);
      if (owner == owners.end()) return nullptr;
      for (const FunctionInfo& f : libraries.at(owner->second).functions) {
        if (f.name == function) return &f;
      }
      return nullptr;
    }
  };

  std::shared_ptr<const Snapshot> Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  // Publishes `next` (built from Current()) unless another change came first; false then.
  bool Publish(const std::shared_ptr<const Snapshot>& based_on, Snapshot next) {
    std::lock_guard lock(mu_);
    if (based_on != current_) return false;
    next.epoch = current_->epoch + 1;
    next.owners.clear();
    for (const auto& [name, library] : next.libraries) {
      for (const FunctionInfo& f : library.functions) next.owners[f.name] = name;
    }
    current_ = std::make_shared<const Snapshot>(std::move(next));
    footprints_.clear();
    return true;
  }

  ScriptCache::Footprint FootprintOf(const std::string& function) const {
    std::lock_guard lock(mu_);
    auto it = footprints_.find(function);
    return it == footprints_.end() ? ScriptCache::Footprint::kUnknown : it->second;
  }
  void SetFootprint(const std::string& function, ScriptCache::Footprint footprint) {
    std::lock_guard lock(mu_);
    auto& known = footprints_[function];
    if (known != ScriptCache::Footprint::kUndeclaredKeys) known = footprint;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_ = std::make_shared<const Snapshot>();
  std::map<std::string, ScriptCache::Footprint> footprints_;
};

}  // namespace lapse::server
