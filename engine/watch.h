// File: engine/watch.h
//
// WATCH, as Redis 7.0 has it. A client watches keys; every change to a watched key
// ("touching" it, Redis's signalModifiedKey) marks the client dirty, and its next EXEC then
// fails. Each database of each shard keeps, per watched key, who watches it (Db::Watch), so
// that a write finds its watchers with one lookup, and a write to a key nobody watches pays
// one branch on an empty table.
//
// Expiry counts as a change, with Redis 7.0's refinement: a key that was already expired
// (stored, past its deadline, not yet deleted) when it was watched is not changed by being
// deleted, since it was logically absent all along. KeyWatch::expired_at_watch carries that
// through lazy and background deletion, FLUSHDB and SWAPDB.
#pragma once

#include <atomic>

namespace lapse::engine {

// One client's watch state. Whichever thread touches a watched key sets `dirty`, holding that
// key's shard; the client reads it at EXEC holding the shards of all its watched keys.
struct Watcher {
  void MarkDirty() { dirty.store(true, std::memory_order_relaxed); }
  bool IsDirty() const { return dirty.load(std::memory_order_relaxed); }
  void Reset() { dirty.store(false, std::memory_order_relaxed); }

  std::atomic<bool> dirty{false};
};

// One watcher of one key, filed in the key's database.
struct KeyWatch {
  Watcher* watcher;
  bool expired_at_watch;
};

}  // namespace lapse::engine
