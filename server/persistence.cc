// File: server/persistence.cc
//
// Snapshots in Redis's RDB format: SAVE, the fork-less BGSAVE (a point-in-time view of every
// shard, walked in short slices by the persistence thread; engine/snapshot.h), save rules,
// crash-safe writing and INFO persistence. Loading a snapshot is in persistence_load.cc.
#include "server/persistence.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/rdb_file.h"
#include "engine/shard.h"
#include "engine/snapshot.h"
#include "server/function_snapshot.h"
#include "server/memory.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

// Redis retries a failed background save no sooner than this (CONFIG_BGSAVE_RETRY_DELAY).
constexpr int64_t kRetryDelayMs = 5000;

class FileSink final : public engine::rdb::Sink {
 public:
  explicit FileSink(int fd) : fd_(fd) {}
  bool Write(std::string_view bytes) override {
    while (!bytes.empty()) {
      ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

 private:
  int fd_;
};

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// Makes the rename itself durable.
bool FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// rdb-key-save-delay after a slice of `keys` keys, with no shard held. A negative delay is
// 1 us per -delay keys; `carried` keeps the keys short of a whole microsecond for the next
// slice, since a slice that gives way to a client may walk only a few keys.
void KeySaveDelay(int64_t delay, size_t keys, int64_t* carried) {
  if (delay == 0 || keys == 0) return;
  int64_t micros = 0;
  if (delay > 0) {
    micros = delay * static_cast<int64_t>(keys);
  } else {
    *carried += static_cast<int64_t>(keys);
    micros = *carried / -delay;
    *carried %= -delay;
  }
  if (micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

// Entries one slice of BGSAVE's walk visits under a shard's lock, at most. It is smaller than
// kSliceKeys (what a walk that writes nothing, after a failed file, takes at a time) because
// it encodes what it visits. The slice ends sooner when a client thread waits for the shard
// (WithShardUntilWanted), so a GET waits for a few entries of the walk, not for the slice
// (about 45 us for 128 small keys). A client thread that waits for a core rather than for
// the lock waits for the slice, though: 128 rather than 256 cut GET p99 during saves at 2
// clients by about a third; 48 halved it there but raised it by a fifth when the CPUs were
// saturated (bench/RESULTS.md).
constexpr size_t kWalkSliceEntries = 128;

// The walking thread's timer slack. Its pauses are tens of microseconds, and the default
// slack (50 us) made each one last a timer tick longer than asked, slowing saves.
constexpr unsigned long kWalkTimerSlackNs = 1000;

// After a slice that held a shard for `held`, keeps off it at least as long (counting from
// `released`), so that a save takes at most half of a shard's time. Without the pause the
// worker took the lock back within microseconds, and a client thread waiting for it (which
// polls, server/shard_set.h's Wait) only got in by luck: GETs were starved for tens of
// milliseconds during a save (and a benchmark's GET run took 4x as long, so that 10x more
// back-to-back saves fitted in it).
void LeaveShardToClients(std::chrono::steady_clock::duration held, std::chrono::steady_clock::time_point released) {
  auto until = released + held;
  if (std::chrono::steady_clock::now() < until) std::this_thread::sleep_until(until);
}

template <typename T>
void StoreMax(std::atomic<T>& target, T value) {
  T current = target.load();
  while (current < value && !target.compare_exchange_weak(current, value)) {
  }
}

// The keys and volatile keys of database `db` over every shard (RESIZEDB's hint); the caller
// holds every shard.
std::pair<uint64_t, uint64_t> CountDb(ShardSet& shards, size_t db) {
  uint64_t keys = 0, expires = 0;
  for (uint32_t id = 0; id < shards.size(); ++id) {
    keys += shards.shard(id).db(db).stored();
    expires += shards.shard(id).db(db).volatile_count();
  }
  return {keys, expires};
}

// Every container's settings (DTTL, RU budget, eviction opt-in) as they are now; the caller
// holds every shard, so that they belong to the same instant as the keys. `saved`, when
// given, receives the same containers for a background walk of their items: each setting is
// read once, since CDROP and CSETTTL hold no shard.
std::vector<engine::rdb::ContainerRecord> CaptureContainers(engine::ContainerCatalog& catalog, size_t databases,
                                                            std::vector<engine::SavedContainer>* saved = nullptr) {
  std::vector<engine::rdb::ContainerRecord> out;
  for (uint32_t db = 0; db < databases; ++db) {
    for (const std::string& name : catalog.Names(db)) {
      std::shared_ptr<engine::ContainerInfo> info = catalog.Find(db, name);
      if (!info) continue;
      out.push_back({db, name, info->default_ttl.load(), info->evictable.load(), info->ru_per_second.load()});
      if (saved != nullptr) saved->push_back({info, db, out.back().default_ttl});
    }
  }
  return out;
}

// The containers as lapse-only AUX records, handed to `aux`: one per container, then, with
// `items`, its items in batches of at most one shard's part. The caller holds every shard.
// A background save passes no `items`: its walk writes them (engine/snapshot.h).
using AuxFn = std::function<void(std::string_view key, std::string value)>;
void WriteContainers(ShardSet& shards, const std::vector<engine::rdb::ContainerRecord>& containers, const AuxFn& aux,
                     engine::Clock& clock, bool items) {
  for (const engine::rdb::ContainerRecord& c : containers) {
    aux(engine::rdb::kAuxContainer, engine::rdb::EncodeContainer(c));
    if (!items) continue;
    for (uint32_t id = 0; id < shards.size(); ++id) {
      engine::Shard& shard = shards.shard(id);
      engine::ContainerPart* part = shard.items().Find(c.db, c.name);
      if (part == nullptr) continue;
      std::string batch;
      size_t count = 0;
      uint64_t cursor = 0;
      do {
        cursor = shard.items().Scan(*part, cursor, clock.NowMs(), SIZE_MAX / 2, [&](const engine::Item& item) {
          engine::rdb::AppendItem(batch, item.id, item.members, item.ttl, item.last_write_ms, item.etag);
          ++count;
        });
      } while (cursor != 0);
      if (count > 0) aux(engine::rdb::kAuxItems, engine::rdb::EncodeItemsHeader(c.db, c.name, count) + batch);
    }
  }
}

}  // namespace

Persistence::Persistence(Server& server) : server_(server) {}

Persistence::~Persistence() { Stop(); }

void Persistence::Start() {
  last_save_s_.store(server_.clock().NowMs() / 1000);
  worker_ = std::thread([this] { WorkerLoop(); });
}

void Persistence::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  // Clients are gone: a walk under way (this worker's, or an AOF rewrite's, which the log
  // waits for as it closes) finishes at full speed instead of leaving the shards to them.
  hurry_.store(true);
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

uint64_t Persistence::ChangesSinceLastSave() const { return TotalChanges() - changes_at_last_save_.load(); }

bool Persistence::shutdown_save_needed() const {
  return shutdown_save_needed_.load() && !server_.config().Snapshot().save_rules.empty();
}

std::string Persistence::SnapshotPath(const Settings& s) const { return EffectiveDir(s) + "/" + s.dbfilename; }

uint64_t Persistence::TotalChanges() const {
  uint64_t total = 0;
  for (const Counter& c : changes_) total += c.value.load(std::memory_order_relaxed);
  return total;
}

// Only ever forward: a BGSAVE that renamed its file just before a FLUSHALL saved must not,
// noting its success after, take LASTSAVE and the changes counter back to its own start.
void Persistence::NoteSaved(uint64_t changes_at_start, int64_t now_ms) {
  StoreMax(changes_at_last_save_, changes_at_start);
  StoreMax(last_save_s_, now_ms / 1000);
  saves_.fetch_add(1);
}

bool Persistence::Serialise(engine::rdb::Sink& sink, const Settings& s) {
  ShardSet& shards = server_.shards();
  size_t databases = static_cast<size_t>(server_.settings().databases);
  engine::rdb::SnapshotWriter writer(sink, {s.rdbcompression, s.rdbchecksum, s.rdb_lapse_data});
  int64_t now = server_.clock().NowMs();
  // Redis records INFO's used_memory at the start of the save; tools read it to size a load.
  writer.Header(now, ReadMemory().allocated, false);
  for (const std::string& code : LibraryCodes(server_)) writer.Function(code);
  for (size_t db = 0; db < databases; ++db) {
    auto [keys, expires] = CountDb(shards, db);
    if (keys == 0) continue;
    writer.SelectDb(static_cast<uint32_t>(db), keys, expires);
    for (uint32_t id = 0; id < shards.size() && !writer.failed(); ++id) {
      engine::Db& d = shards.shard(id).db(db);
      uint64_t cursor = 0;
      do {
        cursor = d.Scan(cursor, now, [&](const engine::Entry* e) { writer.Key(e); });
      } while (cursor != 0);
    }
  }
  if (s.rdb_lapse_data) {
    WriteContainers(
        shards, CaptureContainers(server_.containers(), databases),
        [&](std::string_view key, std::string value) { writer.Aux(key, value); }, server_.clock(), true);
  }
  return writer.Finish();
}

std::unique_ptr<Persistence::BackgroundView> Persistence::BeginBackgroundView() {
  int none = 0;
  if (!walker_.compare_exchange_strong(none, 1)) return nullptr;
  auto view = std::make_unique<BackgroundView>();
  view->settings = server_.config().Snapshot();
  // Every shard is held only while the views start (a few pointers per database, no key is
  // copied), so that the file is one instant of the whole data set.
  server_.shards().RunHoldingAll([&] {
    view->start_ms = server_.clock().NowMs();
    bgsave_abandoned_.store(false);
    CaptureView(*view, nullptr);
    std::lock_guard lock(view_mu_);
    bgsave_view_ = view.get();
  });
  return view;
}

void Persistence::CaptureView(BackgroundView& view, std::shared_ptr<const engine::RecordEncoder> encoder) {
  const Settings& s = view.settings;
  engine::rdb::SnapshotOptions options{s.rdbcompression, s.rdbchecksum, s.rdb_lapse_data};
  ShardSet& shards = server_.shards();
  size_t databases = static_cast<size_t>(server_.settings().databases);
  view.encoder = encoder;
  view.changes = TotalChanges();
  view.parts.resize(shards.size());
  view.counts.resize(databases);
  // The containers first: the shards' views then watch the items of exactly these.
  std::vector<engine::SavedContainer> saved;
  if (s.rdb_lapse_data) view.containers = CaptureContainers(server_.containers(), databases, &saved);
  for (uint32_t id = 0; id < shards.size(); ++id) {
    view.parts[id] =
        std::make_unique<engine::ShardSnapshot>(shards.shard(id), options, view.start_ms, encoder, saved);
  }
  for (size_t db = 0; db < databases; ++db) view.counts[db] = CountDb(shards, db);
  view.functions = LibraryCodes(server_);
}

bool Persistence::ClaimWalkForAof() {
  int none = 0;
  return walker_.compare_exchange_strong(none, 2);
}

void Persistence::ReleaseWalk() {
  walker_.store(0);
  wake_.notify_all();  // a scheduled BGSAVE may start
}

std::unique_ptr<Persistence::BackgroundView> Persistence::BeginAofBaseView(
    std::shared_ptr<const engine::RecordEncoder> encoder, int64_t start_ms, std::string containers) {
  auto view = std::make_unique<BackgroundView>();
  view->settings = server_.config().Snapshot();
  view->settings.rdb_lapse_data = true;
  view->aof_base = true;
  view->start_ms = start_ms;
  CaptureView(*view, encoder);
  // The RDB form writes the containers' settings as a BGSAVE does, and the walk their items
  // as they are now: a replay of the new increment (IPUT ... REPLAYED, IDEL, ...) must start
  // from exactly this state.
  if (encoder) {
    view->function_commands = FunctionLoadCommands(view->functions);
    view->container_commands = std::move(containers);
  }
  return view;
}

bool Persistence::ClaimWalkForReplication() {
  int none = 0;
  return walker_.compare_exchange_strong(none, 3);
}

std::unique_ptr<Persistence::BackgroundView> Persistence::BeginReplicaView(bool lapse_data) {
  auto view = std::make_unique<BackgroundView>();
  view->settings = server_.config().Snapshot();
  view->settings.rdb_lapse_data = lapse_data;
  view->replica = true;
  view->start_ms = server_.clock().NowMs();
  CaptureView(*view, nullptr);
  return view;
}

bool Persistence::WriteReplicaPayload(engine::rdb::Sink& sink, std::unique_ptr<BackgroundView> view) {
  bool ok = SerialiseInBackground(sink, *view);
  view.reset();
  ReleaseWalk();
  return ok;
}

bool Persistence::WriteFunctionsPayload(engine::rdb::Sink& sink, bool functions) {
  Settings s = server_.config().Snapshot();
  engine::rdb::SnapshotWriter writer(sink, {s.rdbcompression, s.rdbchecksum, false});
  writer.Header(server_.clock().NowMs(), ReadMemory().allocated, false);
  if (functions) {
    for (const std::string& code : LibraryCodes(server_)) writer.Function(code);
  }
  return writer.Finish();
}

bool Persistence::WriteAofBase(engine::rdb::Sink& sink, std::unique_ptr<BackgroundView> view) {
  bool ok = true;
  if (view->encoder) {
    ok = sink.Write(view->function_commands);
    WalkView(*view, [&](std::string_view bytes) { return ok = ok && sink.Write(bytes); });
    ok = ok && sink.Write(view->container_commands);
  } else {
    ok = SerialiseInBackground(sink, *view);
  }
  view.reset();
  ReleaseWalk();
  return ok;
}

void Persistence::WalkView(BackgroundView& view, const std::function<bool(std::string_view)>& emit) {
  ShardSet& shards = server_.shards();
  ::prctl(PR_SET_TIMERSLACK, kWalkTimerSlackNs);
  auto& parts = view.parts;
  std::string records;
  bool discarding = false;
  int64_t delay_carry = 0;  // KeySaveDelay's keys short of a microsecond
  // After every slice, what writers saved on any shard goes to the file too: that buffer is
  // the save's memory overhead, so it is kept to what one slice's time lets them pre-empt.
  auto drain = [&] {
    for (auto& part : parts) part->TakeRecords(&records);
    bool ok = records.empty() || emit(records);
    records.clear();
    if (!ok && !discarding) {
      discarding = true;  // the walk still finishes: it must leave every entry marked
      for (auto& part : parts) part->Discard();
    }
  };
  for (uint32_t id = 0; id < shards.size(); ++id) {
    bool done = false;
    while (!done) {
      if (!view.aof_base && !view.replica && !discarding && bgsave_abandoned_.load()) {
        discarding = true;  // FLUSHALL stopped this save: the rest of the walk writes nothing
        for (auto& part : parts) part->Discard();
      }
      // A shard ahead with a flushed table goes first: its memory is freed as its slices
      // drain it (engine/snapshot.h).
      uint32_t at = id;
      for (uint32_t ahead = id + 1; ahead < shards.size() && at == id; ++ahead) {
        if (parts[ahead]->retired_pending()) at = ahead;
      }
      size_t visited = 0;
      std::chrono::steady_clock::duration held{};
      bool finished = shards.WithShardUntilWanted(at, [&](engine::Shard&, const std::atomic<uint32_t>& waiters) {
        auto start = std::chrono::steady_clock::now();
        bool walked = parts[at]->WalkSlice(kWalkSliceEntries, &visited, &waiters);
        held = std::chrono::steady_clock::now() - start;
        return walked;
      });
      if (at == id) done = finished;
      auto released = std::chrono::steady_clock::now();
      drain();
      if (hurry_.load(std::memory_order_relaxed)) continue;
      if (!discarding) KeySaveDelay(server_.config().Snapshot().rdb_key_save_delay, visited, &delay_carry);
      LeaveShardToClients(held, released);
    }
  }
  drain();
  size_t peak = 0;
  for (auto& part : parts) peak += part->peak_buffer_bytes();
  if (!view.aof_base && !view.replica) last_save_buffer_peak_.store(peak);
}

bool Persistence::SerialiseInBackground(engine::rdb::Sink& sink, BackgroundView& view) {
  const Settings& s = view.settings;
  engine::rdb::SnapshotOptions options{s.rdbcompression, s.rdbchecksum, s.rdb_lapse_data};
  engine::rdb::SnapshotWriter writer(sink, options);
  writer.Header(view.start_ms, ReadMemory().allocated, view.aof_base);
  for (const std::string& code : view.functions) writer.Function(code);
  // RESIZEDB hints up front; the key records that follow name their database themselves.
  for (size_t db = 0; db < view.counts.size(); ++db) {
    auto [keys, expires] = view.counts[db];
    if (keys > 0) writer.SelectDb(static_cast<uint32_t>(db), keys, expires);
  }
  WalkView(view, [&](std::string_view bytes) {
    writer.Records(bytes);
    return !writer.failed();
  });
  if (s.rdb_lapse_data) {
    WriteContainers(
        server_.shards(), view.containers,
        [&](std::string_view key, std::string value) { writer.Aux(key, value); }, server_.clock(), false);
  }
  return writer.Finish();
}

void Persistence::FinishViewUnwritten(BackgroundView& view) {
  ShardSet& shards = server_.shards();
  for (uint32_t id = 0; id < shards.size(); ++id) {
    engine::ShardSnapshot& part = *view.parts[id];
    if (part.done()) continue;
    part.Discard();
    while (!shards.WithShardUntilWanted(id, [&](engine::Shard&, const std::atomic<uint32_t>& waiters) {
      return part.WalkSlice(kSliceKeys, nullptr, &waiters);
    })) {
    }
  }
}

std::optional<std::string> Persistence::WriteSnapshot(BackgroundView* view) {
  Settings s = view != nullptr ? view->settings : server_.config().Snapshot();
  std::string dir = EffectiveDir(s);
  std::string temp = dir + "/temp-" + std::to_string(::getpid()) + "-" + std::to_string(++temp_serial_) + ".rdb";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoText("Failed opening the temp RDB file " + temp);
  FileSink sink(fd);
  bool ok = view != nullptr ? SerialiseInBackground(sink, *view) : Serialise(sink, s);
  if (!ok) {
    std::string error = ErrnoText("Write error saving DB on disk (" + temp + ")");
    ::close(fd);
    ::unlink(temp.c_str());
    return error;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string error = ErrnoText("fsync of " + temp + " failed");
    ::unlink(temp.c_str());
    return error;
  }
  std::string target = SnapshotPath(s);
  std::lock_guard rename_lock(rename_mu_);
  if (view != nullptr && !view->aof_base && bgsave_abandoned_.load()) {
    ::unlink(temp.c_str());
    return std::string("Background save stopped by FLUSHALL");
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    std::string error = ErrnoText("Error moving temp DB file " + temp + " on the final destination " + target);
    ::unlink(temp.c_str());
    return error;
  }
  if (!FsyncDirectory(dir)) return ErrnoText("fsync of directory " + dir + " failed");
  return std::nullopt;
}

std::optional<std::string> Persistence::SaveForeground() {
  if (bgsave_running_.load()) return std::string("ERR Background save already in progress");
  std::lock_guard save_lock(save_mu_);
  std::optional<std::string> error;
  server_.shards().RunHoldingAll([&] { error = SaveHoldingAll(); });
  return error;
}

void Persistence::AbandonBackgroundSave() {
  std::lock_guard lock(view_mu_);
  if (bgsave_view_ == nullptr) return;  // none, or one whose view is not taken yet
  bgsave_abandoned_.store(true);
  for (auto& part : bgsave_view_->parts) part->Discard();
}

std::optional<std::string> Persistence::SaveHoldingAll() {
  uint64_t changes = TotalChanges();
  std::optional<std::string> error = WriteSnapshot(nullptr);
  if (error) {
    spdlog::warn("SAVE failed: {}", *error);
    return std::string("ERR ") + *error;
  }
  last_bgsave_ok_.store(true);  // as Redis's rdbSave
  NoteSaved(changes, server_.clock().NowMs());
  spdlog::info("DB saved on disk");
  return std::nullopt;
}

Persistence::BgsaveStart Persistence::StartBackgroundSave(bool schedule) {
  if (bgsave_running_.exchange(true)) return BgsaveStart::kAlreadyRunning;
  bgsave_started_ms_.store(server_.clock().NowMs());
  // The instant is taken here, before BGSAVE replies, as Redis's fork is: the file holds
  // exactly what a client saw when the command returned.
  std::unique_ptr<BackgroundView> view = BeginBackgroundView();
  if (view == nullptr) {  // an AOF rewrite walks, or a replica's sync (Redis's save for it)
    bgsave_running_.store(false);
    if (!schedule) return walker_.load() == 3 ? BgsaveStart::kAlreadyRunning : BgsaveStart::kRewriteRunning;
    bgsave_scheduled_.store(true);
    return BgsaveStart::kScheduled;
  }
  {
    std::lock_guard lock(mu_);
    requested_view_ = std::move(view);
  }
  wake_.notify_all();
  return BgsaveStart::kStarted;
}

void Persistence::RunBackgroundSave(std::unique_ptr<BackgroundView> view) {
  std::lock_guard save_lock(save_mu_);
  int64_t start = view->start_ms;
  auto steady_start = std::chrono::steady_clock::now();
  uint64_t changes = view->changes;
  std::optional<std::string> error = WriteSnapshot(view.get());
  FinishViewUnwritten(*view);
  {
    std::lock_guard lock(view_mu_);
    bgsave_view_ = nullptr;
  }
  view.reset();
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - steady_start).count();
  last_bgsave_seconds_.store(seconds);
  last_bgsave_try_ms_.store(start);
  if (error && bgsave_abandoned_.load()) {
    // As Redis's child killed by FLUSHALL: the last save's status stays as it was.
    spdlog::info("Background saving stopped by FLUSHALL");
  } else if (error) {
    last_bgsave_ok_.store(false);
    spdlog::warn("Background saving error: {}", *error);
  } else {
    last_bgsave_ok_.store(true);
    NoteSaved(changes, start);
    spdlog::info("Background saving terminated with success");
  }
  walker_.store(0);
  bgsave_running_.store(false);
}

bool Persistence::SaveRulesDue(int64_t now_ms) const {
  Settings s = server_.config().Snapshot();
  uint64_t changes = ChangesSinceLastSave();
  int64_t since_save = now_ms / 1000 - last_save_s_.load();
  // As Redis's serverCron: after a failed save, wait kRetryDelayMs before the next try.
  bool may_retry = last_bgsave_ok_.load() || now_ms - last_bgsave_try_ms_.load() > kRetryDelayMs;
  for (auto [seconds, min_changes] : s.save_rules) {
    // Compared signed, as Redis's server.dirty >= sp->changes: a rule whose changes count
    // wrapped negative (save "5 4294967295") fires with no change at all.
    bool enough = min_changes <= 0 || changes >= static_cast<uint64_t>(min_changes);
    if (enough && since_save > seconds && may_retry) return true;
  }
  return false;
}

void Persistence::WorkerLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_ || requested_view_ != nullptr; });
    std::unique_ptr<BackgroundView> view = std::move(requested_view_);
    // A view already started must be written even when stopping: its tables still point at it.
    if (stop_ && view == nullptr) break;
    // A BGSAVE SCHEDULE, or a `save` rule, once no rewrite walks (Redis waits for its child).
    bool scheduled = bgsave_scheduled_.load() && walker_.load() == 0;
    if (view == nullptr && !stop_ && (scheduled || SaveRulesDue(server_.clock().NowMs())) &&
        !bgsave_running_.exchange(true)) {
      bgsave_started_ms_.store(server_.clock().NowMs());
      lock.unlock();
      view = BeginBackgroundView();
      lock.lock();
      if (view == nullptr) {
        bgsave_running_.store(false);
      } else {
        bgsave_scheduled_.store(false);
      }
    }
    if (view == nullptr) continue;
    lock.unlock();
    RunBackgroundSave(std::move(view));
    lock.lock();
  }
}

void Persistence::AppendInfo(std::string& out) const {
  auto line = [&](std::string_view name, const std::string& value) {
    out.append(name).append(":").append(value).append("\r\n");
  };
  bool running = bgsave_running_.load();
  int64_t now = server_.clock().NowMs();
  line("loading", loading_.load() ? "1" : "0");
  line("async_loading", "0");
  line("current_cow_peak", "0");
  line("current_cow_size", "0");
  line("current_cow_size_age", "0");
  line("current_fork_perc", "0.00");
  line("current_save_keys_processed", "0");
  line("current_save_keys_total", "0");
  line("rdb_changes_since_last_save", std::to_string(ChangesSinceLastSave()));
  line("rdb_bgsave_in_progress", running ? "1" : "0");
  line("rdb_last_save_time", std::to_string(last_save_s_.load()));
  line("rdb_last_bgsave_status", last_bgsave_ok_.load() ? "ok" : "err");
  line("rdb_last_bgsave_time_sec", std::to_string(last_bgsave_seconds_.load()));
  line("rdb_current_bgsave_time_sec", running ? std::to_string((now - bgsave_started_ms_.load()) / 1000) : "-1");
  line("rdb_saves", std::to_string(saves_.load()));
  line("rdb_last_cow_size", std::to_string(last_save_buffer_peak_.load()));
  line("rdb_last_load_keys_expired", std::to_string(last_load_keys_expired_.load()));
  line("rdb_last_load_keys_loaded", std::to_string(last_load_keys_loaded_.load()));
}

}  // namespace lapse::server
