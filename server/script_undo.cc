#include "server/script_undo.h"

#include <algorithm>

namespace lapse::server {

ScriptUndo::ScriptUndo(double charge_mark) : charge_mark_(charge_mark), ready_mark_(engine::ReadyKeys().size()) {}

std::string ScriptUndo::Id(int db, std::string_view key) {
  std::string id = std::to_string(db);
  id += ':';
  id += key;
  return id;
}

bool ScriptUndo::IsKept(int db, std::string_view key) const {
  if (images_.size() <= kScanLimit) {
    return std::any_of(images_.begin(), images_.end(),
                       [&](const Kept& k) { return k.db == db && k.image.key() == key; });
  }
  return kept_ids_.contains(Id(db, key));
}

bool ScriptUndo::CanKeep(ShardSet& shards, int db, std::string_view key, int64_t now_ms) {
  if (IsKept(db, key)) return true;
  engine::Shard& shard = shards.shard(shards.ShardFor(key));
  return engine::KeyImage::CheapToCapture(shard.db(static_cast<size_t>(db)), key, now_ms);
}

void ScriptUndo::Keep(ShardSet& shards, int db, std::string_view key, int64_t now_ms) {
  if (IsKept(db, key)) return;  // the first pre-image is the one to restore
  uint32_t id = shards.ShardFor(key);
  engine::Db& d = shards.shard(id).db(static_cast<size_t>(db));
  images_.push_back(Kept{id, db, engine::KeyImage::Capture(d, key, now_ms)});
  // Past a few keys, a set finds them instead of a scan.
  if (images_.size() == kScanLimit + 1) {
    for (const Kept& k : images_) kept_ids_.insert(Id(k.db, k.image.key()));
  } else if (images_.size() > kScanLimit + 1) {
    kept_ids_.insert(Id(db, key));
  }
}

void ScriptUndo::NoteShards(ShardSet& shards, std::span<const uint32_t> ids) {
  for (uint32_t id : ids) {
    bool known = std::any_of(lookups_.begin(), lookups_.end(), [id](const auto& l) { return l.first == id; });
    if (!known) lookups_.emplace_back(id, shards.shard(id).read_lookups());
  }
}

std::vector<ScriptUndo::HeldEvent> ScriptUndo::RollBack(ShardSet& shards, int64_t now_ms) {
  // Newest first, as undo logs go; each key has one image, taken before its first change.
  for (auto it = images_.rbegin(); it != images_.rend(); ++it) {
    std::move(it->image).Restore(shards.shard(it->shard).db(static_cast<size_t>(it->db)), now_ms);
  }
  images_.clear();
  kept_ids_.clear();
  for (const auto& [id, counts] : lookups_) shards.shard(id).set_read_lookups(counts);
  lookups_.clear();
  std::vector<HeldEvent> happened;
  for (HeldEvent& e : events_) {
    if (e.happened) happened.push_back(std::move(e));
  }
  events_.clear();
  calls_.clear();
  errors_.clear();
  rejections_.clear();
  acl_refusals_.clear();
  charge_ = 0;
  // Blocked clients hear of the keys the run that counts writes, not of these.
  std::vector<engine::ReadyKey>& ready = engine::ReadyKeys();
  if (ready.size() > ready_mark_) ready.resize(ready_mark_);
  return happened;
}

}  // namespace lapse::server
