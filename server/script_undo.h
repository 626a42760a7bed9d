// File: server/script_undo.h
//
// The undo log of a growable script step (server/script_step.h), which lets a script that has
// written still start over holding every shard.
//
// Why. A script known to keep to its KEYS holds only their shards and takes any other shard
// it touches with try_lock, since waiting for one while holding others could deadlock. When
// one is busy the script must start over holding every shard. Before it has written that is
// free; after, its writes must first be taken back, and nobody may have seen them.
//
// What is kept, only in such a step:
//  - before a write command first changes a key, the key's pre-image (engine/key_image.h),
//    found through the command table's key positions, as COMMAND GETKEYS finds them;
//  - the hits and misses counters of each shard as the step first meets it;
//  - the side effects that would tell the world what the script did before it is done, held
//    back instead of emitted: keyspace notifications and client-side-caching invalidations
//    (keyspace_events.h), the per-command statistics, the slow log and MONITOR lines of its
//    commands, their error counts, the ACL LOG entries of the commands ACL refused, and the
//    request units they cost (charged once the run counts).
// The log of the append-only file needs nothing here: a script's writes are collected on
// its thread and written at the step's end (server/aof.h); a rollback discards them. Blocked
// clients are served after the step (the ready keys it added are dropped on a rollback).
//
// A rollback (RollBack) restores the pre-images in reverse order and the counters, drops
// what was held back, except the expiry and eviction events that really happened (a key
// deleted because its deadline passed stays deleted), and discards the step's log block:
// the run that counts then starts, holding every shard, as if it were the first. A run that
// ends, or that takes every shard (after which it can never have to start over), commits:
// what was held back is emitted then, in order, still holding the shards.
//
// What a pre-image cannot describe is never written under an undo log: a command whose keys
// the table cannot locate, that touches another database (MOVE, COPY), containers or items,
// or that has effects outside the keyspace (PUBLISH, admin commands), and a key whose value
// is too big to copy cheaply, make the step take every shard first (Dispatcher), and the
// log is committed. A spurious WATCH invalidation of a key written then restored remains
// (harmless: the watcher's EXEC fails and it retries).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/key_image.h"
#include "engine/shard.h"
#include "server/acl.h"
#include "server/command_table.h"
#include "server/shard_set.h"

namespace lapse::server {

class ScriptUndo {
 public:
  // A keyspace notification held back (KeyspaceEvents::Notify's arguments). `happened` marks
  // expiry and eviction, which a rollback does not take back.
  struct HeldEvent {
    uint32_t event_class;
    std::string event;
    std::string key;
    uint32_t db;
    bool happened;
  };
  // One command's statistics held back (Dispatcher::CountCall). `args` is kept only when a
  // MONITOR or the slow log will want it.
  struct HeldCall {
    const CommandSpec* spec;
    uint32_t stat_id;
    std::chrono::nanoseconds elapsed;
    bool failed;
    uint64_t changes;  // for rdb_changes_since_last_save
    int db;
    bool has_args;
    std::vector<std::string> args;
  };

  // `charge_mark`: the caller's running charge sum when the step began, given back on a
  // rollback.
  explicit ScriptUndo(double charge_mark);

  // ---- pre-images ----
  // Whether `key` of database `db` can be kept cheaply (engine::KeyImage::CheapToCapture),
  // or already is.
  bool CanKeep(ShardSet& shards, int db, std::string_view key, int64_t now_ms);
  // Keeps `key`'s pre-image unless one is kept already: the step holds its shard.
  void Keep(ShardSet& shards, int db, std::string_view key, int64_t now_ms);
  // Notes the hits and misses of shards the step holds, the first time it meets each.
  void NoteShards(ShardSet& shards, std::span<const uint32_t> ids);
  size_t kept() const { return images_.size(); }
  // The run counts: nothing will be restored.
  void ForgetImages() {
    images_.clear();
    kept_ids_.clear();
    lookups_.clear();
  }

  // ---- side effects held back ----
  void HoldEvent(uint32_t event_class, std::string_view event, std::string_view key, uint32_t db, bool happened) {
    events_.push_back(HeldEvent{event_class, std::string(event), std::string(key), db, happened});
  }
  void HoldCall(HeldCall call) { calls_.push_back(std::move(call)); }
  void HoldError(std::string_view line) { errors_.emplace_back(line); }
  void HoldRejection(uint32_t stat_id) { rejections_.push_back(stat_id); }
  void HoldAclRefusal(AclLogEntry entry) { acl_refusals_.push_back(std::move(entry)); }
  void HoldCharge(double ru) { charge_ += ru; }

  // Puts every kept key and counter back and drops what was held back but the events that
  // happened anyway (returned, to be emitted), holding the shards. The caller discards the
  // step's log block (AppendOnlyFile::DiscardBlock).
  std::vector<HeldEvent> RollBack(ShardSet& shards, int64_t now_ms);
  double charge_mark() const { return charge_mark_; }

  // What a commit emits, taken out in the order it was held.
  std::vector<HeldEvent> TakeEvents() { return std::exchange(events_, {}); }
  std::vector<HeldCall> TakeCalls() { return std::exchange(calls_, {}); }
  std::vector<std::string> TakeErrors() { return std::exchange(errors_, {}); }
  std::vector<uint32_t> TakeRejections() { return std::exchange(rejections_, {}); }
  std::vector<AclLogEntry> TakeAclRefusals() { return std::exchange(acl_refusals_, {}); }
  double TakeCharge() { return std::exchange(charge_, 0); }

 private:
  struct Kept {
    uint32_t shard;
    int db;
    engine::KeyImage image;
  };
  static std::string Id(int db, std::string_view key);
  bool IsKept(int db, std::string_view key) const;
  // Scripts write few keys: up to this many are found by a scan of images_, which costs no
  // allocation per key; kept_ids_ indexes them beyond.
  static constexpr size_t kScanLimit = 16;

  std::vector<Kept> images_;
  std::unordered_set<std::string> kept_ids_;  // Id(db, key) of every image, past kScanLimit
  std::vector<std::pair<uint32_t, engine::Shard::ReadLookups>> lookups_;
  std::vector<HeldEvent> events_;
  std::vector<HeldCall> calls_;
  std::vector<std::string> errors_;
  std::vector<uint32_t> rejections_;  // stat ids of the commands the script's path refused
  std::vector<AclLogEntry> acl_refusals_;
  double charge_ = 0;
  double charge_mark_;
  size_t ready_mark_;  // engine::ReadyKeys() when the step began
};

// The undo log of the calling thread's step, or nullptr: outside a step, in a fixed one
// (EXEC, a script holding every shard), or once the step holds every shard.
inline ScriptUndo* ActiveScriptUndo() {
  ShardSet::AtomicStep* step = ShardSet::CurrentStep();
  return step != nullptr ? step->undo() : nullptr;
}

}  // namespace lapse::server
