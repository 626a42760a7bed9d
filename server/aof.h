// File: server/aof.h
//
// The append-only log (issue 17), in Redis 7.0's multi-part layout, so that redis-check-aof
// accepts it and Redis 7.0 loads it:
//
//   <dir>/<appenddirname>/<appendfilename>.manifest       which files make the log, in order
//   <dir>/<appenddirname>/<appendfilename>.<seq>.base.rdb the data set at a point, as an RDB
//                                                         file (aof-use-rdb-preamble yes, the
//                                                         default), or as commands in
//   <dir>/<appenddirname>/<appendfilename>.<seq>.base.aof (aof-use-rdb-preamble no)
//   <dir>/<appenddirname>/<appendfilename>.<seq>.incr.aof every write since, in RESP
//
// Capture. Every write command that ran without an error is logged by the dispatcher, holding
// the shard it wrote (so two writes to one key reach the log in the order they happened), in
// the form that replays to the same state (server/aof_effects.cc): relative deadlines become
// absolute, and non-deterministic commands become their effects. A transaction's or a
// script's writes are collected on their thread (one atomic step runs on one thread) and
// logged as one MULTI ... EXEC block.
//
// Durability. Appends go to a memory buffer. Before a thread sends replies (the end of a
// dispatcher batch, or a blocking command's early flush) it calls BeforeReply, which writes
// the buffer and, under appendfsync always, fsyncs it: one write and one fsync cover every
// client whose writes are in the buffer (group commit), and a thread whose writes another
// thread's fsync already covered does not wait for one of its own. Under everysec a
// background thread fsyncs once a second; under no the kernel decides.
//
// Rewrite (BGREWRITEAOF, automatic growth, CONFIG SET appendonly yes). It holds every shard
// only for the instant it takes to switch appends to a new incremental file and to start a
// point-in-time view of every table (BGSAVE's, engine/snapshot.h; containers and items are
// copied then, as they have no pre-write hook), so the base is exactly the state before the
// first command of the new file. A background thread then walks the view in slices, one
// shard at a time, writing the base straight to its file while clients go on (a key about to
// change is first written as it was), fsyncs it, and switches the manifest atomically
// (temporary file, fsync, rename, fsync of the directory). The tables have room for one view,
// so a rewrite asked for while a BGSAVE walks is scheduled, as Redis schedules one while its
// save child runs, and starts within a second of the save's end.
// A crash at any point leaves a manifest that names a complete history. With appendonly no,
// BGREWRITEAOF writes the base alone and a manifest naming only it, as Redis 7.0 does.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/command_table.h"
#include "server/config.h"
#include "server/persistence.h"

namespace lapse::server {

class Server;

// One command as the log keeps it.
using LoggedCommand = std::vector<std::string>;
// Appends `command` in RESP, as the log and the replicas' stream carry it.
void AppendCommandResp(std::string& out, const LoggedCommand& command);

// The commands that replay `spec` with `args` as it ran at `now_ms`, answering `reply`
// (server/aof_effects.cc); empty when it changed nothing the log must keep.
std::vector<LoggedCommand> LoggedForm(const CommandSpec& spec, Args args, std::string_view reply, int64_t now_ms);
// The same for a blocking pop served from a key (BLPOP, BLMOVE, BZPOPMIN, ...).
std::vector<LoggedCommand> LoggedFormOfServedPop(const std::vector<std::string>& command, std::string_view reply);

// One file of the manifest.
struct AofFileEntry {
  std::string name;
  int64_t seq = 0;
  char type = 'i';  // b: base, h: history (to delete), i: incremental
};

class AppendOnlyFile {
 public:
  explicit AppendOnlyFile(Server& server);
  ~AppendOnlyFile();
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // ---- start-up (server/aof_loader.cc) ----
  // Replays the log named by the manifest, if there is one, through the command path; then
  // opens it for appending (writing a first base when there was none). An error names the
  // file and the offset; the server must not start then.
  std::optional<std::string> LoadAndOpen();

  // ---- capture ----
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  // Whether writes are captured at all: for the log, or for replicas (server/replication.h),
  // which get what the log would keep, in the same order.
  bool capturing() const;
  // Logs one command as run in database `db`. Inside a transaction or script it joins the
  // block of the calling thread instead.
  void Log(int db, std::vector<LoggedCommand> commands);
  // A transaction or script on the calling thread: its writes are logged together, wrapped
  // in MULTI ... EXEC when there are several, when the outermost block ends.
  void BeginBlock();
  void EndBlock();
  // A script that starts over took back what it wrote (server/script_undo.h): the writes its
  // block collected so far are dropped, never logged.
  void DiscardBlock();
  // Whether the calling thread's block holds writes not yet logged (WAIT inside EXEC).
  bool HoldsUnloggedWrites() const;
  // A key deleted by expiry or eviction, for the replicas (a DEL, as Redis propagates it);
  // inside a transaction's or script's block it joins the block, in its place.
  void PropagateDelete(int db, std::string_view key);
  // A command whose entry is known before it runs (from its arguments) and that may hold
  // several shards (fan-out commands): logged as it lets go of its shards, in the order the
  // shards saw it, or at SettlePending if it took none (then only if it did not fail).
  void LogOnRelease(int db, std::vector<LoggedCommand> commands);
  void SettlePending(bool failed);
  // Before the calling thread sends replies: writes what is buffered, and under
  // appendfsync always makes the calling thread's writes durable first.
  void BeforeReply();
  // Whether BeforeReply would fsync for the calling thread (appendfsync always): the caller
  // first lets the thread's other ready clients run (one event-loop turn), so that one fsync
  // covers all of their writes.
  bool WantsFsync() const;
  // A reply about to leave depends on writes another thread logged (a blocking pop served by
  // the pusher's thread): the next BeforeReply covers everything logged so far.
  void CoverEverythingLogged();

  // ---- turning it on and off, rewriting ----
  // CONFIG SET appendonly: on writes a base of the data set first. An error when that failed.
  std::optional<std::string> SetEnabled(bool on);
  // The live settings it follows: appendfsync, no-appendfsync-on-rewrite, auto-aof-rewrite-*.
  void Configure(const Settings& settings);
  // BGREWRITEAOF. An error reply when one is already running; *scheduled when it waits for
  // a BGSAVE to end.
  std::optional<std::string> StartRewrite(bool* scheduled);
  // Once per second: auto-aof-rewrite-percentage / min-size.
  void MaybeAutoRewrite();
  // INFO persistence's aof_* lines.
  std::string InfoFields() const;
  // INFO memory's mem_aof_buffer: the bytes held for the next write to the file.
  size_t BufferBytes() const;
  bool rewrite_in_progress() const { return rewriting_.load(); }
  bool loading() const { return loading_.load(std::memory_order_relaxed); }

 private:
  friend class AofLoader;
  std::string DirPath() const;
  std::string PathOf(const std::string& name) const;
  std::string FileName(int64_t seq, char type, bool rdb = false) const;
  // The manifest as Redis 7.0 writes it, and writing it crash-safely.
  std::string ManifestText() const;
  bool WriteManifest(std::string* error);
  // Opens incremental file `seq` (named as lapse names it unless `name` says) for appends.
  std::optional<std::string> OpenIncrement(int64_t seq, std::string name = "");
  // A base file's instant, written by the rewrite thread.
  struct RewriteBase {
    std::unique_ptr<Persistence::BackgroundView> view;
    int64_t seq = 0;
    bool rdb = false;  // RDB (aof-use-rdb-preamble yes) or commands
    bool with_log = true;  // appendonly yes: a new increment follows the base
  };
  // Holding every shard: switches appends to a new incremental file and starts the base's
  // view in the same instant.
  bool SnapshotAndSwitch(RewriteBase* base, std::string* error);
  void FinishRewrite(RewriteBase base);
  // Claims the tables' view for the rewrite (server/persistence.h): false while a BGSAVE
  // walks, or, with `wait`, once it has ended.
  bool ClaimWalk(bool wait);
  // With the walk claimed: the switch now, then the base on a background thread (waited for
  // when `wait`).
  std::optional<std::string> RunRewrite(bool wait);
  // Once per second: a rewrite scheduled behind a BGSAVE.
  void MaybeScheduledRewrite();
  // Makes appenddirname and reads its manifest, if any, so that sequence numbers go on.
  std::optional<std::string> PrepareDirectory();
  // Base, closed increments and the current one (io_mu_ held).
  uint64_t CurrentSize() const;
  // Appends to the file's buffer and, unless `to_replicas` is false, feeds the replicas.
  void AppendLocked(int db, const std::vector<LoggedCommand>& commands, bool to_replicas = true);
  void FlushBlock();
  // ShardSet's release hook: logs the thread's pending entry or block.
  static void OnRelease();
  void WriteBuffered(bool fsync_now);
  void FsyncLoop();
  void CloseFile();

  Server& server_;
  std::atomic<bool> enabled_{false};
  std::atomic<bool> loading_{false};

  // Appends: the buffer and what was appended, under mu_.
  mutable std::mutex mu_;
  std::string buffer_;
  int last_db_ = -1;
  uint64_t appended_ = 0;  // bytes ever appended to the current incremental file

  // The file: written and synced under io_mu_ (taken before mu_ when both are needed).
  mutable std::mutex io_mu_;
  int fd_ = -1;
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> synced_{0};
  std::atomic<bool> last_write_ok_{true};

  // The manifest, under io_mu_.
  std::vector<AofFileEntry> files_;
  int64_t base_seq_ = 0;
  int64_t incr_seq_ = 0;
  uint64_t base_size_ = 0;      // of the base file, for auto-aof-rewrite
  uint64_t incr_closed_ = 0;    // bytes of earlier incremental files still in the manifest
  uint64_t incr_start_size_ = 0;    // the current incremental file's size when opened
  uint64_t incr_start_offset_ = 0;  // written_ when it was opened

  // Rewrite state.
  std::atomic<bool> rewriting_{false};
  std::atomic<bool> rewrite_scheduled_{false};
  std::atomic<int64_t> rewrite_started_ms_{0};
  std::atomic<int64_t> last_rewrite_ms_{-1};
  std::atomic<bool> last_rewrite_ok_{true};
  std::atomic<uint64_t> rewrites_{0};
  std::thread rewrite_thread_;

  // Live settings (Configure).
  std::atomic<bool> fsync_always_{false};
  std::atomic<bool> fsync_everysec_{true};
  std::atomic<bool> no_fsync_on_rewrite_{false};
  std::atomic<int64_t> auto_percentage_{100};
  std::atomic<int64_t> auto_min_size_{64ll << 20};

  // everysec's thread, which also checks for an automatic rewrite.
  std::thread fsync_thread_;
  std::mutex fsync_mu_;
  std::condition_variable fsync_cv_;
  bool stopping_ = false;
};

}  // namespace lapse::server
