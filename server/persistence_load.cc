// File: server/persistence_load.cc
//
// Loading a snapshot, at start-up and in DEBUG RELOAD: straight into the shards while every
// shard is held, so no client sees a half-loaded keyspace.
#include "server/persistence.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <tuple>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/rdb_file.h"
#include "engine/shard.h"
#include "server/function_snapshot.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

// Start-up and DEBUG RELOAD load straight into the shards: nothing else runs meanwhile.
// Items are gathered per shard and container and restored once the file is read, in
// last-write order (engine/item_store.h's inherit lists need it), so a failed load restores
// none of them.
class ShardTarget final : public engine::rdb::LoadTarget {
 public:
  ShardTarget(ShardSet& shards, engine::ContainerCatalog& catalog, size_t databases)
      : shards_(shards), catalog_(catalog), databases_(databases) {}
  engine::Db* DbFor(uint32_t db, std::string_view key) override {
    if (db >= databases_) return nullptr;
    return &shards_.shard(shards_.ShardFor(key)).db(db);
  }

  bool OnLapseAux(std::string_view key, std::string_view value, int64_t now_ms) override {
    if (key == engine::rdb::kAuxContainer) {
      auto c = engine::rdb::DecodeContainer(value);
      if (!c || c->db >= databases_) return false;
      containers_.push_back(std::move(*c));
      return true;
    }
    if (key == engine::rdb::kAuxItems) {
      uint32_t db = 0;
      std::string container;
      std::vector<engine::rdb::ItemRecord> items;
      if (!engine::rdb::DecodeItems(value, &db, &container, &items) || db >= databases_) return false;
      for (auto& item : items) {
        uint32_t shard = shards_.ShardForItem(container, item.id);
        pending_[{shard, db, container}].push_back(std::move(item));
      }
      return true;
    }
    return true;  // a later lapse's record this one does not know: information only
  }

  bool OnFunction(std::string code) override {
    functions_.push_back(std::move(code));
    return true;
  }
  std::vector<std::string> TakeFunctions() { return std::move(functions_); }

  // After a complete load: the containers' settings, then their items.
  void Finish(int64_t now_ms) {
    for (const engine::rdb::ContainerRecord& c : containers_) {
      std::shared_ptr<engine::ContainerInfo> info = catalog_.FindOrCreate(c.db, c.name);
      info->default_ttl.store(c.default_ttl);
      info->evictable.store(c.evictable);
      info->meter.set_limit(static_cast<double>(c.ru_per_second));
      info->ru_per_second.store(c.ru_per_second);
    }
    for (auto& [where, items] : pending_) {
      auto& [shard_id, db, container] = where;
      std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.last_write_ms < b.last_write_ms; });
      engine::ItemStore& store = shards_.shard(shard_id).items();
      engine::ContainerPart* part = store.FindOrCreate(db, container);
      for (auto& item : items) {
        store.Restore(*part, item.id, std::move(item.members), item.ttl, item.last_write_ms, item.etag, now_ms);
      }
    }
  }

 private:
  ShardSet& shards_;
  engine::ContainerCatalog& catalog_;
  size_t databases_;
  std::vector<engine::rdb::ContainerRecord> containers_;
  std::vector<std::string> functions_;
  std::map<std::tuple<uint32_t, uint32_t, std::string>, std::vector<engine::rdb::ItemRecord>> pending_;
};

}  // namespace

std::optional<std::string> Persistence::LoadAtStartup() {
  Settings s = server_.config().Snapshot();
  std::string path = SnapshotPath(s);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return LoadFile(path);
}

std::optional<std::string> Persistence::LoadFile(const std::string& path) {
  loading_.store(true);
  ShardTarget target(server_.shards(), server_.containers(), static_cast<size_t>(server_.settings().databases));
  engine::rdb::LoadStats stats;
  auto start = std::chrono::steady_clock::now();
  std::optional<std::string> error;
  server_.shards().RunHoldingAll([&] {
    error = engine::rdb::LoadSnapshotFile(path, target, server_.collection_limits(), server_.clock().NowMs(), &stats);
    if (!error) target.Finish(server_.clock().NowMs());
  });
  loading_.store(false);
  if (error) return "Short read or corrupt RDB file: " + *error;
  if (auto err = LoadLibraryCodes(server_, target.TakeFunctions())) return path + ": function library: " + *err;
  NoteLoaded(stats);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("DB loaded from disk: {:.3f} seconds ({} keys loaded, {} expired while down, {} empty skipped)",
               seconds, stats.keys_loaded, stats.keys_expired, stats.empty_skipped);
  return std::nullopt;
}

std::optional<std::string> Persistence::DebugReload() {
  if (bgsave_running_.load()) return std::string("ERR Background save already in progress");
  std::lock_guard save_lock(save_mu_);
  Settings s = server_.config().Snapshot();
  ShardSet& shards = server_.shards();
  ShardTarget target(shards, server_.containers(), static_cast<size_t>(server_.settings().databases));
  engine::rdb::LoadStats stats;
  std::optional<std::string> save_error, load_error;
  uint64_t changes = TotalChanges();
  // Save, empty and load back as one step: no client sees the keyspace in between.
  shards.RunHoldingAll([&] {
    save_error = WriteSnapshot(nullptr);
    if (save_error) return;
    for (uint32_t id = 0; id < shards.size(); ++id) {
      for (size_t db = 0; db < shards.shard(id).database_count(); ++db) shards.shard(id).db(db).Clear();
    }
    server_.containers().DropAll();
    load_error = engine::rdb::LoadSnapshotFile(SnapshotPath(s), target, server_.collection_limits(),
                                               server_.clock().NowMs(), &stats);
    if (!load_error) target.Finish(server_.clock().NowMs());
  });
  if (save_error) return std::string("ERR ") + *save_error;
  NoteSaved(changes, server_.clock().NowMs());
  if (load_error) {
    spdlog::warn("DEBUG RELOAD failed: {}", *load_error);
    return std::string("ERR Error trying to load the RDB dump, check server logs.");
  }
  NoteLoaded(stats);
  return std::nullopt;
}

void Persistence::NoteLoaded(const engine::rdb::LoadStats& stats) {
  last_load_keys_loaded_.store(stats.keys_loaded);
  last_load_keys_expired_.store(stats.keys_expired);
}

}  // namespace lapse::server
