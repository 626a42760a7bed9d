// File: server/aof.cc
//
// The append-only log's files, appends, fsync policies and rewrites; see server/aof.h for
// the design. Loading lives in server/aof_loader.cc, the logged form of each command in
// server/aof_effects.cc, and the data set as commands in server/aof_snapshot.cc.
#include "server/aof.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <utility>

#include "engine/rdb_file.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace lapse::server {

// A base of commands (server/aof_snapshot.cc): the keys' form for the walk, and the
// containers with their items, encoded holding every shard.
std::shared_ptr<const engine::RecordEncoder> MakeCommandEncoder(int64_t start_ms);
std::string SerializeContainers(Server& server, int64_t now_ms);

namespace {

// What the calling thread has to log that it could not log at once: a transaction's or a
// script's writes (logged as one block), or a command logged as it lets go of its shards.
struct ThreadCapture {
  AppendOnlyFile* aof = nullptr;
  int depth = 0;  // blocks open: EXEC, a script (nested in EXEC)
  std::vector<std::pair<int, LoggedCommand>> block;
  // Inside a block: where the entries of a command logged before it runs begin (npos when
  // none runs), so that a key it finds expired is deleted before it, as it happened.
  size_t running_from = std::string::npos;
  // The expiry and eviction DELs in `block`: they happened whatever becomes of the block.
  std::vector<std::pair<int, std::string>> block_deletes;
  bool pending = false;
  int pending_db = 0;
  std::vector<LoggedCommand> pending_commands;
};
thread_local ThreadCapture tls_capture;
// How far the log must be written (and, under always, synced) before this thread's replies
// may leave: the end of its last append.
thread_local uint64_t tls_appended_upto = 0;

class FdSink final : public engine::rdb::Sink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  bool Write(std::string_view bytes) override;

 private:
  int fd_;
};

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool FdSink::Write(std::string_view bytes) { return fd_ >= 0 && WriteAll(fd_, bytes); }

// fsync of a directory, so that a rename or a new file in it survives a crash.
void SyncDirectory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void AppendCommandResp(std::string& out, const LoggedCommand& command) {
  out += '*';
  out += std::to_string(command.size());
  out += "\r\n";
  for (const std::string& arg : command) {
    out += '$';
    out += std::to_string(arg.size());
    out += "\r\n";
    out += arg;
    out += "\r\n";
  }
}

AppendOnlyFile::AppendOnlyFile(Server& server) : server_(server) {
  fsync_thread_ = std::thread([this] { FsyncLoop(); });
}

AppendOnlyFile::~AppendOnlyFile() {
  {
    std::lock_guard lock(fsync_mu_);
    stopping_ = true;
  }
  fsync_cv_.notify_all();
  fsync_thread_.join();
  if (rewrite_thread_.joinable()) rewrite_thread_.join();
  std::lock_guard io(io_mu_);
  CloseFile();
}

std::string AppendOnlyFile::DirPath() const {
  Settings s = server_.config().Snapshot();
  return EffectiveDir(s) + "/" + s.appenddirname;
}
std::string AppendOnlyFile::PathOf(const std::string& name) const { return DirPath() + "/" + name; }

std::string AppendOnlyFile::FileName(int64_t seq, char type, bool rdb) const {
  const char* suffix = type != 'b' ? ".incr.aof" : rdb ? ".base.rdb" : ".base.aof";
  return server_.config().Snapshot().appendfilename + "." + std::to_string(seq) + suffix;
}

// ---- capture ----

void AppendOnlyFile::Log(int db, std::vector<LoggedCommand> commands) {
  if (commands.empty() || !capturing()) return;
  if (tls_capture.depth > 0) {
    for (LoggedCommand& c : commands) tls_capture.block.emplace_back(db, std::move(c));
    return;
  }
  std::lock_guard lock(mu_);
  AppendLocked(db, commands);
}

bool AppendOnlyFile::capturing() const { return enabled() || server_.replication().active(); }

void AppendOnlyFile::AppendLocked(int db, const std::vector<LoggedCommand>& commands, bool to_replicas) {
  // The replicas get the same commands in the same order (server/replication.h).
  Replication& replication = server_.replication();
  if (to_replicas && replication.active()) [[unlikely]] replication.Feed(db, commands);
  if (!enabled()) return;
  size_t before = buffer_.size();
  if (db != last_db_) {
    AppendCommandResp(buffer_, {"SELECT", std::to_string(db)});
    last_db_ = db;
  }
  for (const LoggedCommand& c : commands) AppendCommandResp(buffer_, c);
  appended_ += buffer_.size() - before;
  tls_appended_upto = appended_;
}

void AppendOnlyFile::OnRelease() {
  ThreadCapture& t = tls_capture;
  if (t.aof == nullptr) return;
  if (t.pending) {
    t.pending = false;
    t.aof->Log(t.pending_db, std::move(t.pending_commands));
    t.pending_commands.clear();
  }
  if (t.depth > 0) {
    t.aof->FlushBlock();
    ShardSet::ArmReleaseHook(&AppendOnlyFile::OnRelease);  // the block may go on
  }
}

void AppendOnlyFile::LogOnRelease(int db, std::vector<LoggedCommand> commands) {
  if (commands.empty() || !capturing()) return;
  if (tls_capture.depth > 0) {
    tls_capture.running_from = tls_capture.block.size();
    return Log(db, std::move(commands));
  }
  tls_capture.aof = this;
  tls_capture.pending = true;
  tls_capture.pending_db = db;
  tls_capture.pending_commands = std::move(commands);
  ShardSet::ArmReleaseHook(&AppendOnlyFile::OnRelease);
}

void AppendOnlyFile::SettlePending(bool failed) {
  ThreadCapture& t = tls_capture;
  t.running_from = std::string::npos;
  if (!t.pending) return;
  // It let go of no shard: nothing can have come between it and this entry.
  t.pending = false;
  if (t.depth == 0) ShardSet::DisarmReleaseHook();
  if (!failed) Log(t.pending_db, std::move(t.pending_commands));
  t.pending_commands.clear();
}

void AppendOnlyFile::BeginBlock() {
  if (!capturing()) return;
  tls_capture.aof = this;
  if (tls_capture.depth++ == 0) ShardSet::ArmReleaseHook(&AppendOnlyFile::OnRelease);
}

void AppendOnlyFile::EndBlock() {
  if (tls_capture.depth == 0) return;  // the log was off when it began
  FlushBlock();
  if (--tls_capture.depth == 0) ShardSet::DisarmReleaseHook();
}

void AppendOnlyFile::DiscardBlock() {
  ThreadCapture& t = tls_capture;
  t.block.clear();
  t.running_from = std::string::npos;
  // A script that starts over keeps what expired meanwhile deleted (server/script_undo.h).
  for (const auto& [db, key] : t.block_deletes) server_.replication().FeedDelete(db, key);
  t.block_deletes.clear();
}

void AppendOnlyFile::PropagateDelete(int db, std::string_view key) {
  ThreadCapture& t = tls_capture;
  if (t.depth > 0 && t.aof == this) {
    auto at = t.running_from <= t.block.size() ? t.block.begin() + static_cast<ptrdiff_t>(t.running_from++)
                                               : t.block.end();
    t.block.insert(at, {db, LoggedCommand{"DEL", std::string(key)}});
    t.block_deletes.emplace_back(db, std::string(key));
    return;
  }
  server_.replication().FeedDelete(db, key);
}

bool AppendOnlyFile::HoldsUnloggedWrites() const { return tls_capture.depth > 0 && !tls_capture.block.empty(); }

void AppendOnlyFile::FlushBlock() {
  std::vector<std::pair<int, LoggedCommand>> block = std::move(tls_capture.block);
  tls_capture.block.clear();
  tls_capture.block_deletes.clear();
  tls_capture.running_from = std::string::npos;
  if (block.empty() || !capturing()) return;
  std::lock_guard lock(mu_);
  // As Redis 7.0 propagates them: several writes as MULTI ... EXEC, one write alone. The
  // replicas get the block in one piece, so that nothing they are sent comes inside it.
  bool wrap = block.size() > 1;
  Replication& replication = server_.replication();
  if (replication.active()) [[unlikely]] replication.FeedBlock(block, wrap);
  if (wrap) AppendLocked(block.front().first, {{"MULTI"}}, false);
  for (const auto& [db, command] : block) AppendLocked(db, {command}, false);
  if (wrap) AppendLocked(block.back().first, {{"EXEC"}}, false);
}

void AppendOnlyFile::BeforeReply() {
  if (!enabled()) return;
  uint64_t mine = tls_appended_upto;
  bool always = fsync_always_.load(std::memory_order_relaxed);
  if ((always ? synced_ : written_).load(std::memory_order_acquire) >= mine) return;
  std::lock_guard io(io_mu_);
  if ((always ? synced_ : written_).load(std::memory_order_acquire) >= mine) return;  // another thread's covered it
  bool skip_fsync = rewriting_.load() && no_fsync_on_rewrite_.load(std::memory_order_relaxed);
  WriteBuffered(always && !skip_fsync);
}

bool AppendOnlyFile::WantsFsync() const {
  return enabled() && fsync_always_.load(std::memory_order_relaxed) &&
         synced_.load(std::memory_order_acquire) < tls_appended_upto;
}

void AppendOnlyFile::CoverEverythingLogged() {
  if (!enabled()) return;
  std::lock_guard lock(mu_);
  tls_appended_upto = appended_;
}

void AppendOnlyFile::WriteBuffered(bool fsync_now) {
  std::string pending;
  uint64_t upto = 0;
  {
    std::lock_guard lock(mu_);
    pending.swap(buffer_);
    upto = appended_;
  }
  if (fd_ < 0) return;
  if (!pending.empty()) {
    bool ok = WriteAll(fd_, pending);
    if (!ok && last_write_ok_.exchange(false)) spdlog::error("Error writing to the AOF file: {}", std::strerror(errno));
    if (ok) last_write_ok_.store(true);
    written_.store(upto, std::memory_order_release);
  }
  if (fsync_now && synced_.load() < upto) {
    ::fdatasync(fd_);
    synced_.store(upto, std::memory_order_release);
  }
}

void AppendOnlyFile::FsyncLoop() {
  std::unique_lock lock(fsync_mu_);
  while (!stopping_) {
    fsync_cv_.wait_for(lock, std::chrono::seconds(1));
    if (stopping_) continue;
    lock.unlock();
    MaybeScheduledRewrite();
    if (!enabled()) {
      lock.lock();
      continue;
    }
    MaybeAutoRewrite();
    if (!fsync_always_.load() && fsync_everysec_.load() &&
        !(rewriting_.load() && no_fsync_on_rewrite_.load(std::memory_order_relaxed))) {
      // The write under io_mu_, the fsync outside it: appends and replies go on meanwhile.
      int fd = -1;
      uint64_t upto = 0;
      {
        std::lock_guard io(io_mu_);
        WriteBuffered(false);
        if (fd_ >= 0) fd = ::dup(fd_);
        upto = written_.load();
      }
      if (fd >= 0) {
        ::fdatasync(fd);
        ::close(fd);
        uint64_t seen = synced_.load();
        while (seen < upto && !synced_.compare_exchange_weak(seen, upto)) {
        }
      }
    }
    lock.lock();
  }
}

void AppendOnlyFile::Configure(const Settings& s) {
  fsync_always_.store(s.appendfsync == "always");
  fsync_everysec_.store(s.appendfsync == "everysec");
  no_fsync_on_rewrite_.store(s.no_appendfsync_on_rewrite);
  auto_percentage_.store(s.auto_aof_rewrite_percentage);
  auto_min_size_.store(s.auto_aof_rewrite_min_size);
}

void AppendOnlyFile::CloseFile() {
  if (fd_ < 0) return;
  WriteBuffered(true);
  ::close(fd_);
  fd_ = -1;
}

// ---- the manifest ----

std::string AppendOnlyFile::ManifestText() const {
  std::string text;
  for (const AofFileEntry& f : files_) {
    text += "file " + f.name + " seq " + std::to_string(f.seq) + " type " + std::string(1, f.type) + "\n";
  }
  return text;
}

bool AppendOnlyFile::WriteManifest(std::string* error) {
  std::string name = server_.config().Snapshot().appendfilename + ".manifest";
  std::string temp = PathOf("temp-" + name);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !WriteAll(fd, ManifestText()) || ::fsync(fd) != 0) {
    *error = "can't write the AOF manifest " + temp + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  ::close(fd);
  if (::rename(temp.c_str(), PathOf(name).c_str()) != 0) {
    *error = "can't rename the AOF manifest: " + std::string(std::strerror(errno));
    return false;
  }
  SyncDirectory(DirPath());
  return true;
}

std::optional<std::string> AppendOnlyFile::OpenIncrement(int64_t seq, std::string name) {
  if (name.empty()) name = FileName(seq, 'i');
  int fd = ::open(PathOf(name).c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return "can't open the append-only file " + PathOf(name) + ": " + std::strerror(errno);
  CloseFile();
  incr_closed_ = 0;
  for (const AofFileEntry& f : files_) {
    if (f.type == 'i') incr_closed_ += FileSize(PathOf(f.name));
  }
  fd_ = fd;
  incr_seq_ = seq;
  incr_start_size_ = FileSize(PathOf(name));
  incr_start_offset_ = written_.load();
  files_.push_back(AofFileEntry{name, seq, 'i'});
  SyncDirectory(DirPath());
  std::lock_guard lock(mu_);
  last_db_ = -1;  // a file's replay starts in database 0: the first write says which
  return std::nullopt;
}

// ---- rewrite ----

bool AppendOnlyFile::SnapshotAndSwitch(RewriteBase* base, std::string* error) {
  bool ok = false;
  base->rdb = server_.config().Snapshot().aof_use_rdb_preamble;
  base->with_log = enabled();
  Persistence& persistence = server_.persistence();
  server_.shards().RunHoldingAll([&] {
    {
      std::lock_guard io(io_mu_);
      if (base->with_log) {
        WriteBuffered(true);
        if (auto err = OpenIncrement(incr_seq_ + 1)) {
          *error = *err;
          return;
        }
      }
      base->seq = base_seq_ + 1;
    }
    // No key is copied here: the view is a few pointers per table (a base of commands copies
    // the items).
    int64_t start_ms = server_.clock().NowMs();
    if (base->rdb) {
      base->view = persistence.BeginAofBaseView(nullptr, start_ms, "");
    } else {
      base->view = persistence.BeginAofBaseView(MakeCommandEncoder(start_ms), start_ms,
                                                SerializeContainers(server_, start_ms));
    }
    ok = true;
  });
  if (!ok || !base->with_log) return ok;
  std::lock_guard io(io_mu_);
  // While the base is written, a crash must still find every write: the old base, the old
  // increments and the new one. Before there was any base there is no history to keep.
  bool has_base = false;
  for (const AofFileEntry& f : files_) has_base |= f.type == 'b';
  if (has_base && !WriteManifest(error)) spdlog::warn("{}", *error);
  return true;
}

void AppendOnlyFile::FinishRewrite(RewriteBase base) {
  int64_t base_seq = base.seq;
  std::string name = FileName(base_seq, 'b', base.rdb);
  std::string path = PathOf(name);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int open_errno = errno;
  // The walk runs to its end even when the file failed: the tables point at the view.
  FdSink sink(fd);
  bool ok = server_.persistence().WriteAofBase(sink, std::move(base.view));
  int write_errno = fd < 0 ? open_errno : errno;
  ok = ok && fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  std::string error;
  std::vector<std::string> obsolete;
  if (ok) {
    std::lock_guard io(io_mu_);
    std::vector<AofFileEntry> kept{AofFileEntry{name, base_seq, 'b'}};
    for (const AofFileEntry& f : files_) {
      // With the log off, as in Redis, every increment is history: the base is the whole log.
      if (f.type == 'i' && f.seq == incr_seq_ && base.with_log) {
        kept.push_back(f);
      } else {
        obsolete.push_back(f.name);
      }
    }
    std::vector<AofFileEntry> previous = std::exchange(files_, kept);
    if (WriteManifest(&error)) {
      base_seq_ = base_seq;
      base_size_ = FileSize(path);
      incr_closed_ = 0;
    } else {
      files_ = std::move(previous);
      obsolete.clear();
      ok = false;
    }
  } else {
    error = "can't write the AOF base file " + path + ": " + std::strerror(write_errno);
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  for (const std::string& old : obsolete) {
    std::error_code ec;
    std::filesystem::remove(PathOf(old), ec);
  }
  if (ok) {
    spdlog::info("Background AOF rewrite finished successfully");
    rewrites_.fetch_add(1);
  } else {
    spdlog::warn("Background AOF rewrite failed: {}", error);
  }
  last_rewrite_ok_.store(ok);
  last_rewrite_ms_.store(NowMs() - rewrite_started_ms_.load());
  rewriting_.store(false);
}

bool AppendOnlyFile::ClaimWalk(bool wait) {
  Persistence& persistence = server_.persistence();
  while (!persistence.ClaimWalkForAof()) {
    if (!wait) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::optional<std::string> AppendOnlyFile::RunRewrite(bool wait) {
  rewrite_started_ms_.store(NowMs());
  RewriteBase base;
  std::string error;
  if (!SnapshotAndSwitch(&base, &error)) {
    server_.persistence().ReleaseWalk();
    spdlog::warn("Background AOF rewrite failed: {}", error);
    last_rewrite_ok_.store(false);
    rewriting_.store(false);
    return error;
  }
  if (rewrite_thread_.joinable()) rewrite_thread_.join();  // the previous one, long finished
  rewrite_thread_ = std::thread([this, base = std::move(base)]() mutable { FinishRewrite(std::move(base)); });
  if (wait) rewrite_thread_.join();
  return std::nullopt;
}

std::optional<std::string> AppendOnlyFile::StartRewrite(bool* scheduled) {
  if (rewriting_.exchange(true)) return std::string("ERR Background append only file rewriting already in progress");
  // With the log off Redis still writes a base and a manifest naming only it, in
  // appenddirname: a log that `appendonly yes` at the next start-up loads.
  if (!enabled()) {
    if (auto err = PrepareDirectory()) {
      rewriting_.store(false);
      return "ERR " + *err;
    }
  }
  if (!ClaimWalk(false)) {
    rewrite_scheduled_.store(true);
    rewriting_.store(false);
    *scheduled = true;
    return std::nullopt;
  }
  spdlog::info("Background append only file rewriting started");
  if (RunRewrite(false)) return std::string("ERR Background append only file rewriting failed to start, see the log");
  return std::nullopt;
}

void AppendOnlyFile::MaybeScheduledRewrite() {
  if (!rewrite_scheduled_.load() || rewriting_.exchange(true)) return;
  if (!ClaimWalk(false)) {
    rewriting_.store(false);
    return;
  }
  rewrite_scheduled_.store(false);
  spdlog::info("Background append only file rewriting started");
  RunRewrite(false);
}

uint64_t AppendOnlyFile::CurrentSize() const {
  return base_size_ + incr_closed_ + incr_start_size_ + (written_.load() - incr_start_offset_);
}

void AppendOnlyFile::MaybeAutoRewrite() {
  int64_t percentage = auto_percentage_.load();
  if (!enabled() || percentage == 0 || rewriting_.load()) return;
  uint64_t size = 0, base = 0;
  {
    std::lock_guard io(io_mu_);
    size = CurrentSize();
    base = base_size_ > 0 ? base_size_ : 1;
  }
  if (size < static_cast<uint64_t>(auto_min_size_.load())) return;
  if ((size - std::min(size, base)) * 100 / base < static_cast<uint64_t>(percentage)) return;
  if (rewriting_.exchange(true)) return;
  if (!ClaimWalk(false)) {  // a BGSAVE walks: the next check tries again, as Redis's cron
    rewriting_.store(false);
    return;
  }
  spdlog::info("Starting automatic rewriting of AOF on {}% growth", (size - std::min(size, base)) * 100 / base);
  RunRewrite(false);
}

// ---- on and off ----

std::optional<std::string> AppendOnlyFile::SetEnabled(bool on) {
  if (on == enabled()) return std::nullopt;
  if (!on) {
    if (rewrite_thread_.joinable()) rewrite_thread_.join();
    enabled_.store(false, std::memory_order_release);
    std::lock_guard io(io_mu_);
    CloseFile();
    return std::nullopt;
  }
  if (rewriting_.exchange(true)) return std::string("ERR Background append only file rewriting already in progress");
  if (auto err = PrepareDirectory()) {
    rewriting_.store(false);
    return err;
  }
  // A BGSAVE under way walks the tables' one view: wait for its end (Redis schedules the
  // rewrite instead and answers at once).
  ClaimWalk(true);
  {
    // Files of an earlier log describe a data set that has changed since: history, deleted
    // once the new base is in place, and never replayed meanwhile.
    std::lock_guard io(io_mu_);
    for (AofFileEntry& f : files_) f.type = 'h';
  }
  // Like Redis, the log starts with a base of the data set as it is, then every write.
  enabled_.store(true, std::memory_order_release);
  if (auto err = RunRewrite(false)) {
    enabled_.store(false, std::memory_order_release);
    std::lock_guard io(io_mu_);
    CloseFile();
    return "ERR " + *err;
  }
  return std::nullopt;
}

// ---- INFO ----

size_t AppendOnlyFile::BufferBytes() const {
  std::lock_guard lock(mu_);
  return buffer_.capacity();
}

std::string AppendOnlyFile::InfoFields() const {
  auto line = [](std::string& out, const char* name, auto value) {
    out += name;
    out += ':';
    if constexpr (std::is_convertible_v<decltype(value), std::string_view>) {
      out += value;
    } else {
      out += std::to_string(value);
    }
    out += "\r\n";
  };
  std::string out;
  bool in_progress = rewriting_.load();
  line(out, "aof_enabled", enabled() ? 1 : 0);
  line(out, "aof_rewrite_in_progress", in_progress ? 1 : 0);
  line(out, "aof_rewrite_scheduled", rewrite_scheduled_.load() ? 1 : 0);
  int64_t last = last_rewrite_ms_.load();
  line(out, "aof_last_rewrite_time_sec", last < 0 ? int64_t{-1} : last / 1000);
  line(out, "aof_current_rewrite_time_sec", in_progress ? (NowMs() - rewrite_started_ms_.load()) / 1000 : int64_t{-1});
  line(out, "aof_last_bgrewrite_status", last_rewrite_ok_.load() ? "ok" : "err");
  line(out, "aof_rewrites", rewrites_.load());
  line(out, "aof_rewrites_consecutive_failures", uint64_t{0});
  line(out, "aof_last_write_status", last_write_ok_.load() ? "ok" : "err");
  line(out, "aof_last_cow_size", uint64_t{0});  // fork-less: nothing is copied on write
  line(out, "module_fork_in_progress", 0);
  line(out, "module_fork_last_cow_size", 0);
  if (enabled()) {
    uint64_t size = 0, base = 0;
    {
      std::lock_guard io(io_mu_);
      size = CurrentSize();
      base = base_size_;
    }
    uint64_t buffered = 0;
    {
      std::lock_guard lock(mu_);
      buffered = buffer_.size();
    }
    line(out, "aof_current_size", size);
    line(out, "aof_base_size", base);
    line(out, "aof_pending_rewrite", 0);
    line(out, "aof_buffer_length", buffered);
    line(out, "aof_pending_bio_fsync", 0);
    line(out, "aof_delayed_fsync", 0);
  }
  return out;
}

}  // namespace lapse::server
