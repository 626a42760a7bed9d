// File: server/persistence.h
//
// Snapshots: SAVE, BGSAVE, `save` rules, SHUTDOWN's save, loading at start-up and DEBUG
// RELOAD, in Redis's RDB format (engine/rdb_file.h).
//
// Fork-less, point-in-time background save. Redis forks and lets copy-on-write keep the
// child's view; lapse has threads and keeps the view itself (engine/snapshot.h). BGSAVE, before
// it replies, holds every shard just long enough to start a view of each table (and to take
// the function libraries, container settings and RESIZEDB counts of that instant); the worker
// thread then walks each shard in small slices under its lock (kWalkSliceEntries in
// persistence.cc), keeps off the shard after each as long as it held it, and after each
// slice moves into the file what writers wrote ahead of the walk (a key about to
// change is first written as it was). Every key and item of the start is written once with
// its value and TTL of the start, whatever SWAPDB, FLUSHDB, expiry or a resize do meanwhile.
// FLUSHALL stops it instead, as Redis's FLUSHALL kills its child (AbandonBackgroundSave).
// A view, once started, is always walked to its end, even when the file fails (the tables
// point at it until then).
// Clients come first: a slice ends after a few entries as soon as a client thread waits for
// its shard (ShardSet::WithShardUntilWanted). The walking thread keeps the CPU priority of the
// event-loop threads: SCHED_IDLE cut GET p99 during saves further but starved the save under
// a saturating write load (one took 5 minutes; bench/RESULTS.md).
// An AOF rewrite's base uses the same walk (server/aof.h); the tables have room for one view,
// so a BGSAVE and a rewrite take turns (walker_).
// SAVE (and SHUTDOWN's save, DEBUG RELOAD) holds every shard for the whole save instead: a point-in-time view, with every client waiting, as Redis's SAVE.
//
// Crash safety: the file is written as temp-<pid>-<n>.rdb in `dir`, fsynced, renamed over
// `dbfilename`, and the directory fsynced; a crash at any point leaves the previous snapshot.
//
// The changes counter (INFO rdb_changes_since_last_save) counts what write commands changed,
// as Redis's server.dirty does: MSET of 3 keys adds 3, a write that changed nothing adds 0
// (server/dirty_count.h).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "server/config.h"

#include "engine/rdb_file.h"
#include "engine/snapshot.h"

namespace lapse::server {

class Server;

class Persistence {
 public:
  static constexpr size_t kSliceKeys = 1000;

  explicit Persistence(Server& server);
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Starts the worker that runs background saves and checks the `save` rules.
  void Start();
  // Stops it, waiting for a background save under way to finish.
  void Stop();
  // Follows CONFIG SET (rdbcompression, which DUMP reads on every call).
  void Apply(const Settings& live) { compression_.store(live.rdbcompression, std::memory_order_relaxed); }
  bool compression() const { return compression_.load(std::memory_order_relaxed); }

  // `n` more changes, as Redis counts them (server/dirty_count.h), from any thread.
  void CountChanges(uint64_t n) {
    static thread_local size_t slot = next_slot_.fetch_add(1, std::memory_order_relaxed) % kCounterSlots;
    changes_[slot].value.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t ChangesSinceLastSave() const;

  // SAVE: the whole dataset, every shard held. An error message ("ERR ...") on failure.
  std::optional<std::string> SaveForeground();
  // The result of BGSAVE [SCHEDULE].
  enum class BgsaveStart { kStarted, kScheduled, kAlreadyRunning, kRewriteRunning };
  // BGSAVE: starts at once unless a save runs already, or an AOF rewrite's walk does (one
  // view per table at a time, engine/kv_table.h); with `schedule`, it then starts as soon as
  // the rewrite's walk ends, as Redis's BGSAVE SCHEDULE.
  BgsaveStart StartBackgroundSave(bool schedule = false);
  bool background_save_running() const { return bgsave_running_.load(); }
  // FLUSHALL, holding every shard, before it empties them: a running BGSAVE stops and leaves
  // the snapshot file as it was, as Redis kills its child (INFO's last status stays as it
  // was). Its views are discarded at once, so the flush frees its keys itself, and the walk
  // of the rest ends quickly, writing nothing (every table must be left by its view).
  void AbandonBackgroundSave();
  // FLUSHALL with `save` rules, from the thread that holds every shard: SAVE at once, as
  // Redis's FLUSHALL does, so that a restart does not bring back what it removed. An abandoned
  // BGSAVE may still be walking; it never replaces the file after this. An error message
  // ("ERR ...") on failure.
  std::optional<std::string> SaveHoldingAll();

  // An AOF rewrite's base, with the same point-in-time walk as BGSAVE (server/aof.h). The
  // rewrite first claims the walk (false while a BGSAVE walks), then, holding every shard,
  // starts the view (BeginAofBaseView) in the same instant as it switches to the new
  // incremental file; WriteAofBase then walks it in slices without holding them all, and
  // ends the claim. Containers and items are copied while every shard is held (items have no
  // pre-write hook) and written after the keys; they are always in the base (rdb-lapse-data
  // is for exports): the log must restore them.
  // A walk's instant: every shard's view (engine/snapshot.h) and what lives outside the
  // shards, taken together while holding every shard.
  struct BackgroundView {
    Settings settings;
    int64_t start_ms = 0;
    bool aof_base = false;
    bool replica = false;  // a replica's payload: FLUSHALL does not stop it
    std::shared_ptr<const engine::RecordEncoder> encoder;  // null: RDB records
    std::vector<std::unique_ptr<engine::ShardSnapshot>> parts;
    std::vector<std::string> functions;
    std::vector<engine::rdb::ContainerRecord> containers;  // settings; the walk writes the items
    std::string function_commands;   // base of commands: FUNCTION LOAD of each library, first
    std::string container_commands;  // base of commands: copied
    std::vector<std::pair<uint64_t, uint64_t>> counts;  // keys and volatile keys per database
    uint64_t changes = 0;  // the changes counter at the instant: what the save covers
  };
  bool ClaimWalkForAof();
  // `encoder`: the records' form; null for RDB. `containers`: for a base of commands, the
  // containers and items as commands, which the caller encoded holding every shard.
  std::unique_ptr<BackgroundView> BeginAofBaseView(std::shared_ptr<const engine::RecordEncoder> encoder,
                                                   int64_t start_ms, std::string containers);
  // Writes `view` into `sink` (an RDB file with aof-base set, or the commands alone), then
  // ends the claim. The walk always runs to its end, writing nothing once the sink failed.
  // False when the sink failed.
  bool WriteAofBase(engine::rdb::Sink& sink, std::unique_ptr<BackgroundView> view);
  // A claim that ends without a view (the switch to a new increment failed).
  void ReleaseWalk();

  // A replica's full resynchronisation (server/replication.h), with the same walk: claimed
  // (false while a BGSAVE or a rewrite walks), then, holding every shard, the view started
  // (BeginReplicaView; lapse-only data only with `lapse_data`), then walked into `sink` as
  // an RDB payload, which ends the claim.
  bool ClaimWalkForReplication();
  std::unique_ptr<BackgroundView> BeginReplicaView(bool lapse_data);
  bool WriteReplicaPayload(engine::rdb::Sink& sink, std::unique_ptr<BackgroundView> view);
  // REPLCONF rdb-filter-only: an RDB payload of no keys, with the function libraries when
  // the filter names them.
  bool WriteFunctionsPayload(engine::rdb::Sink& sink, bool functions);

  // Loads `dir`/`dbfilename` if it exists (start-up: no client is served yet). An error
  // naming the file and the offset when it is truncated or corrupt.
  std::optional<std::string> LoadAtStartup();
  // Loads the RDB file at `path` into the data set (start-up: an AOF base file). An error
  // naming the file and the offset when it is truncated or corrupt.
  std::optional<std::string> LoadFile(const std::string& path);
  // DEBUG RELOAD: SAVE, empty every database, load the file back, holding every shard.
  std::optional<std::string> DebugReload();

  // SHUTDOWN and signals: whether the exit path still has to save (SHUTDOWN NOSAVE, or a
  // SHUTDOWN that already saved, clears it).
  void SetShutdownSave(bool needed) { shutdown_save_needed_.store(needed); }
  bool shutdown_save_needed() const;

  int64_t last_save_time_s() const { return last_save_s_.load(); }
  // INFO persistence, the fields Redis 7.0 reports (the aof_* ones stay the AOF's).
  void AppendInfo(std::string& out) const;

 private:
  static constexpr size_t kCounterSlots = 64;
  struct alignas(64) Counter {
    std::atomic<uint64_t> value{0};
  };

  void WorkerLoop();
  bool SaveRulesDue(int64_t now_ms) const;
  // Claims the walk for a BGSAVE and starts its view (false while a rewrite walks).
  std::unique_ptr<BackgroundView> BeginBackgroundView();
  // Holding every shard: the instant's view; what lives outside the shards too.
  void CaptureView(BackgroundView& view, std::shared_ptr<const engine::RecordEncoder> encoder);
  // The walk of every shard in slices; `emit` gets each batch of records and says whether
  // the file still takes them (the walk goes on without writing once it does not).
  void WalkView(BackgroundView& view, const std::function<bool(std::string_view)>& emit);
  void RunBackgroundSave(std::unique_ptr<BackgroundView> view);
  // A view whose file failed before its walk ended (the temp file would not open): walks the
  // rest without writing, so that no table is left pointing at it.
  void FinishViewUnwritten(BackgroundView& view);
  // Writes the snapshot through the atomic-rename path: from `view` in slices, or, with none,
  // whole while the caller holds every shard.
  std::optional<std::string> WriteSnapshot(BackgroundView* view);
  bool Serialise(engine::rdb::Sink& sink, const Settings& settings);
  // BGSAVE's point-in-time walk, one slice per shard lock.
  bool SerialiseInBackground(engine::rdb::Sink& sink, BackgroundView& view);
  void NoteSaved(uint64_t changes_at_start, int64_t now_ms);
  void NoteLoaded(const engine::rdb::LoadStats& stats);
  uint64_t TotalChanges() const;
  std::string SnapshotPath(const Settings& s) const;

  Server& server_;
  std::atomic<bool> compression_{true};
  std::array<Counter, kCounterSlots> changes_{};
  inline static std::atomic<size_t> next_slot_{0};
  std::atomic<uint64_t> changes_at_last_save_{0};
  std::atomic<int64_t> last_save_s_{0};
  std::atomic<bool> last_bgsave_ok_{true};
  std::atomic<int64_t> last_bgsave_seconds_{-1};
  std::atomic<int64_t> bgsave_started_ms_{0};
  std::atomic<int64_t> last_bgsave_try_ms_{0};
  std::atomic<uint64_t> saves_{0};
  std::atomic<bool> bgsave_running_{false};
  std::atomic<bool> bgsave_scheduled_{false};
  // Who walks the tables' one view: 0 none, 1 a BGSAVE, 2 an AOF rewrite, 3 a replica's sync.
  std::atomic<int> walker_{0};
  // The most bytes the last background save's record buffers held (INFO rdb_last_cow_size).
  std::atomic<uint64_t> last_save_buffer_peak_{0};
  std::atomic<bool> shutdown_save_needed_{true};
  std::atomic<bool> loading_{false};
  std::atomic<uint64_t> last_load_keys_loaded_{0};
  std::atomic<uint64_t> last_load_keys_expired_{0};
  std::mutex save_mu_;  // one save at a time, foreground or background

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> hurry_{false};  // shutting down: walks skip their pauses
  // Set by FLUSHALL, cleared as a BGSAVE's view starts (both hold every shard, so a FLUSHALL
  // stops only the save it saw running).
  std::atomic<bool> bgsave_abandoned_{false};
  // A background save checks bgsave_abandoned_ and renames its file under this, so that a
  // FLUSHALL's save, which renames under it too, is never replaced by the save it stopped.
  std::mutex rename_mu_;
  // The running BGSAVE's view, for FLUSHALL to discard; set as it starts, cleared before it
  // is destroyed, both under view_mu_.
  std::mutex view_mu_;
  BackgroundView* bgsave_view_ = nullptr;
  std::unique_ptr<BackgroundView> requested_view_;  // a BGSAVE the worker has to write
  std::thread worker_;
  std::atomic<uint64_t> temp_serial_{0};  // a FLUSHALL's save may write beside a stopping BGSAVE
};

}  // namespace lapse::server
