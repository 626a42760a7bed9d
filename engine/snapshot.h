// File: engine/snapshot.h
//
// One shard's part of a point-in-time background save (BGSAVE), without fork.
//
// Redis forks and lets copy-on-write keep the child's view. lapse instead starts a view of
// every table of the shard at one instant (the server does it for all shards at once, holding
// them all, so the whole file is one point in time) and then walks the tables in slices while
// clients keep writing. What keeps the view is the pre-write hook of engine/kv_table.h: the
// first change to an entry the walk has not reached yet writes the entry as it still is into
// this shard's record buffer, then lets the change happen. So every key is written exactly
// once, with its value at the start; keys created after the start are never written, keys
// deleted (or expired, evicted, renamed, moved, flushed) after it are written with their old
// value, and keys already expired at the start are skipped. This is Dragonfly's scheme, per
// entry rather than per bucket (an entry carries a mark bit that costs no space), which lets
// resizes go on during the save. A table emptied whole (FLUSHDB, or FLUSHALL during an AOF
// rewrite) hands its entries to its view (KvTable::RetireToSnapshot), which the walk drains
// before anything else, on every shard: it writes those it had not reached and frees them
// all. So the flush writes nothing ahead of the walk, but its memory is freed at the walk's
// pace (INFO used_memory stays up until then). A discarded save takes nothing: the flush
// frees its entries at once, as with no save.
//
// Items (engine/item_store.h) are kept the same way: each live container part's index is a
// KvTable, observed like a database's table, and an item is written, as it was at the start,
// when its first change or the walk reaches it. Items already expired at the start (under
// their container's DefaultTimeToLive of that instant) are skipped. They go into the file in
// batches, as the AUX records a synchronous save writes; their containers' settings are
// written by the caller, as captured at the start. A container dropped during the save has
// its items written as its part is drained. Only the RDB form observes items (the command
// form of an AOF base has its own copy of them).
//
// The records go to an in-memory buffer that the saving thread drains into the file after
// every slice (TakeRecords), so the buffer holds at most what writers pre-empted since the
// last drain: that is the save's whole memory overhead, besides one slice's encoding.
//
// The same walk writes an AOF rewrite's base (server/aof.cc): as RDB records, or, without
// the RDB preamble, as commands. The record form is a RecordEncoder; the default is RDB.
//
// Threads: the constructor and WalkSlice run holding the shard; the hook runs on whichever
// thread holds the shard; TakeRecords runs on the saving thread at any time, so the buffer has
// its own mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/rdb_file.h"

namespace lapse::engine {

class Shard;
struct Item;
struct ContainerInfo;

// A container whose items a save writes, as captured with every shard held, before the
// shards' views start: CDROP and CSETTTL hold no shard, so each view must use this capture,
// not what it finds, for the file to hold every container's settings with all its items.
struct SavedContainer {
  std::shared_ptr<ContainerInfo> info;
  uint32_t db = 0;
  int64_t default_ttl = 0;  // decides which items were already expired at the start
};

// How the walk writes one key, and the switch to another database before it. Called on
// whichever thread holds the shard, so it keeps no state between calls.
class RecordEncoder {
 public:
  virtual ~RecordEncoder() = default;
  virtual void SelectDb(std::string& out, uint32_t db) const = 0;
  virtual void Key(std::string& out, const Entry* e) const = 0;
};

class ShardSnapshot {
 public:
  // Holding the shard: starts the view of each of its databases as they are at `start_ms`.
  // Records are RDB (with `options`) unless `encoder` says otherwise. The items written are
  // those of `containers` (RDB records with lapse data only).
  ShardSnapshot(Shard& shard, rdb::SnapshotOptions options, int64_t start_ms,
                std::shared_ptr<const RecordEncoder> encoder = nullptr,
                const std::vector<SavedContainer>& containers = {});
  ~ShardSnapshot();
  ShardSnapshot(const ShardSnapshot&) = delete;
  ShardSnapshot& operator=(const ShardSnapshot&) = delete;

  // Holding the shard: takes at least one step and walks on until about `max_entries`
  // entries were visited (adding how many to *visited when given), or, with `waiters`, until
  // it is above 0 after a few entries (another thread waits for the shard: a client's command
  // must not wait for a whole slice). True once every table was walked whole; the shard's
  // tables are then free of the view.
  bool WalkSlice(size_t max_entries, size_t* visited = nullptr, const std::atomic<uint32_t>* waiters = nullptr);
  bool done() const;
  // Any thread: whether a table of this shard was flushed (FLUSHDB) with entries the walk
  // has still to write and free; the saving thread then walks this shard first.
  bool retired_pending() const { return retired_pending_.load(std::memory_order_relaxed) > 0; }

  // Any thread: appends the records written so far to *out and empties the buffer.
  void TakeRecords(std::string* out);
  // After the file failed: writes nothing more, but the walk still has to finish so that
  // every entry ends with its table's mark.
  void Discard();
  bool discarded() const;

  uint64_t keys_written() const;
  uint64_t items_written() const;
  // The most bytes the record buffer held at once (the save's memory overhead, INFO).
  size_t peak_buffer_bytes() const;

 private:
  class WalkedTable;
  class DbView;
  class ItemView;
  void Append(uint32_t db, const Entry* e);
  void AppendItem(const ItemView& view, const Item& item);
  // Holding mu_: the batch of items under way becomes one AUX record in records_.
  void FlushItemBatchLocked();

  rdb::SnapshotOptions options_;
  int64_t start_ms_;
  std::shared_ptr<const RecordEncoder> encoder_;
  std::vector<std::unique_ptr<WalkedTable>> views_;  // the databases' tables, then the items'
  size_t next_view_ = 0;                              // the first one not walked whole
  std::atomic<size_t> retired_pending_{0};            // views with a flushed table to drain

  mutable std::mutex mu_;
  std::string records_;
  int64_t current_db_ = -1;  // the database of the last record in records_, -1: none yet
  bool discard_ = false;
  uint64_t keys_written_ = 0;
  uint64_t items_written_ = 0;
  // Items of one container part, encoded as a batch (rdb::AppendItem) until another part's
  // item or TakeRecords ends it.
  const ItemView* batch_view_ = nullptr;
  std::string item_batch_;
  size_t item_batch_count_ = 0;
  size_t peak_buffer_bytes_ = 0;
};

}  // namespace lapse::engine
