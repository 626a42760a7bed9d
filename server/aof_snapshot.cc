// File: server/aof_snapshot.cc
//
// The data set as commands, for an AOF base file: what Redis 7.0's rewrite writes with
// aof-use-rdb-preamble no, so Redis loads it too. Each key is recreated by the commands of
// its type (in runs of at most 64 elements, as Redis writes them) and its absolute deadline
// (PEXPIREAT); a hash field's deadline by HPEXPIREAT; a stream by its entries with their IDs,
// XSETID, and its groups, consumers and pending entries (XGROUP, XCLAIM ... FORCE).
//
// Function libraries come first, as FUNCTION LOAD of their code (as Redis writes them).
// Containers follow the keys: their settings and their items, each with its _ts and _etag.
//
// The keys are written by the point-in-time walk of engine/snapshot.h, through CommandEncoder
// (each key's commands at the walk's start, on whichever thread holds its shard); the
// containers and items are encoded while every shard is held, at the same instant
// (AppendOnlyFile::SnapshotAndSwitch).
#include <cmath>
#include <cstdio>
#include <memory>

#include "engine/collection.h"
#include "engine/container.h"
#include "engine/item_json.h"
#include "engine/item_store.h"
#include "engine/list.h"
#include "engine/snapshot.h"
#include "engine/stream.h"
#include "engine/zset.h"
#include "server/aof.h"
#include "server/function_snapshot.h"
#include "server/server.h"

namespace lapse::server {

namespace {

constexpr size_t kItemsPerCommand = 64;  // Redis's AOF_REWRITE_ITEMS_PER_CMD

class BaseWriter {
 public:
  explicit BaseWriter(std::string* out) : out_(out) {}

  void Select(int db) {
    if (db == db_) return;
    Command({"SELECT", std::to_string(db)});
    db_ = db;
  }
  void Command(const std::vector<std::string_view>& args) {
    *out_ += '*';
    *out_ += std::to_string(args.size());
    *out_ += "\r\n";
    for (std::string_view a : args) {
      *out_ += '$';
      *out_ += std::to_string(a.size());
      *out_ += "\r\n";
      *out_ += a;
      *out_ += "\r\n";
    }
  }
  // `verb key` followed by `elements`, in runs of kItemsPerCommand elements (pairs count as
  // `stride` words each).
  void Runs(std::string_view verb, std::string_view key, const std::vector<std::string>& words, size_t stride) {
    for (size_t i = 0; i < words.size(); i += kItemsPerCommand * stride) {
      std::vector<std::string_view> args{verb, key};
      for (size_t j = i; j < std::min(words.size(), i + kItemsPerCommand * stride); ++j) args.push_back(words[j]);
      Command(args);
    }
  }

 private:
  std::string* out_;
  int db_ = -1;
};

// A score as Redis writes one: %.17g, which reads back to the same double; inf as inf.
std::string Score(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", score);
  return buf;
}

void WriteHash(BaseWriter& w, const engine::Entry* e, int64_t now_ms) {
  std::vector<std::string> words;
  std::vector<std::pair<std::string, int64_t>> deadlines;
  engine::hash::ForEach(e, [&](std::string_view field, std::string_view value) {
    int64_t deadline = engine::hash::FieldDeadline(e, field);
    if (deadline > 0 && deadline <= now_ms) return;
    words.emplace_back(field);
    words.emplace_back(value);
    if (deadline > 0) deadlines.emplace_back(field, deadline);
  });
  w.Runs("HSET", e->key(), words, 2);
  for (const auto& [field, deadline] : deadlines) {
    w.Command({"HPEXPIREAT", e->key(), std::to_string(deadline), "FIELDS", "1", field});
  }
}

void WriteStream(BaseWriter& w, const engine::Entry* e) {
  const engine::Stream& s = engine::stream::Of(e);
  std::string key(e->key());
  s.Range(engine::StreamId::Min(), engine::StreamId::Max(), false,
          [&](engine::StreamId id, std::span<const std::string_view> field_values) {
            std::string id_text = id.ToString();
            std::vector<std::string_view> args{"XADD", key, id_text};
            args.insert(args.end(), field_values.begin(), field_values.end());
            w.Command(args);
            return true;
          });
  std::string last = s.last_id().ToString();
  if (s.length() == 0) {
    // As Redis does: an empty stream exists, made by an entry trimmed away at once.
    w.Command({"XADD", key, "MAXLEN", "0", last, "x", "y"});
  }
  std::string added = std::to_string(s.entries_added());
  std::string max_deleted = s.max_deleted_id().ToString();
  w.Command({"XSETID", key, last, "ENTRIESADDED", added, "MAXDELETEDID", max_deleted});
  for (const auto& [name, group] : s.groups()) {
    std::string group_last = group.last_id.ToString();
    std::string read = std::to_string(group.entries_read);
    w.Command({"XGROUP", "CREATE", key, name, group_last, "ENTRIESREAD", read});
    for (const auto& [consumer, state] : group.consumers) {
      w.Command({"XGROUP", "CREATECONSUMER", key, name, consumer});
    }
    for (const auto& [id, pending] : group.pel) {
      std::string id_text = id.ToString();
      std::string time = std::to_string(pending.delivery_time_ms);
      std::string count = std::to_string(pending.delivery_count);
      w.Command({"XCLAIM", key, name, pending.consumer, "0", id_text, "TIME", time, "RETRYCOUNT", count, "JUSTID",
                 "FORCE"});
    }
  }
}

void WriteKey(BaseWriter& w, const engine::Entry* e, int64_t now_ms) {
  std::vector<std::string> words;
  switch (e->type()) {
    case engine::ValueType::kString:
      w.Command({"SET", e->key(), e->value()});
      break;
    case engine::ValueType::kList:
      engine::list::ForEach(e, [&](std::string_view v) { words.emplace_back(v); });
      w.Runs("RPUSH", e->key(), words, 1);
      break;
    case engine::ValueType::kSet:
      engine::set::ForEach(e, [&](std::string_view m) { words.emplace_back(m); });
      w.Runs("SADD", e->key(), words, 1);
      break;
    case engine::ValueType::kZSet:
      engine::zset::ForEach(e, [&](std::string_view member, double score) {
        words.push_back(Score(score));
        words.emplace_back(member);
      });
      w.Runs("ZADD", e->key(), words, 2);
      break;
    case engine::ValueType::kHash:
      WriteHash(w, e, now_ms);
      break;
    case engine::ValueType::kStream:
      WriteStream(w, e);
      break;
  }
  if (e->deadline() != engine::kNoDeadline) w.Command({"PEXPIREAT", e->key(), std::to_string(e->deadline())});
}

// A container's settings, then its live items with their _ts and _etag (IPUT ... REPLAYED,
// which only a replay accepts). CSETTTL comes first: it also makes a container that has no
// items. Redis cannot load these commands: a log with containers is lapse's own.
void WriteContainers(Server& server, BaseWriter& w, int64_t now_ms) {
  engine::ContainerCatalog& catalog = server.containers();
  ShardSet& shards = server.shards();
  int databases = server.settings().databases;
  std::string doc;
  for (int db = 0; db < databases; ++db) {
    for (const std::string& name : catalog.Names(static_cast<uint32_t>(db))) {
      std::shared_ptr<engine::ContainerInfo> info = catalog.Find(static_cast<uint32_t>(db), name);
      if (info == nullptr) continue;
      w.Select(db);
      int64_t ttl = info->default_ttl.load();
      w.Command({"CSETTTL", name, ttl == engine::kTtlOff ? std::string("OFF") : std::to_string(ttl)});
      if (int64_t ru = info->ru_per_second.load(); ru > 0) w.Command({"CSETRU", name, std::to_string(ru)});
      if (info->evictable.load()) w.Command({"CSETEVICT", name, "ON"});
      for (uint32_t id = 0; id < shards.size(); ++id) {
        engine::ItemStore& items = shards.shard(id).items();
        engine::ContainerPart* part = items.Find(static_cast<uint32_t>(db), name);
        if (part == nullptr) continue;
        uint64_t cursor = 0;
        do {
          cursor = items.Scan(*part, cursor, now_ms, 1024, [&](const engine::Item& item) {
            engine::RenderItem(item.id, item.members, item.last_write_ms / 1000, item.etag, &doc);
            w.Command({"IPUT", name, item.id, doc, "REPLAYED", std::to_string(item.last_write_ms),
                       engine::EtagText(item.etag)});
          });
        } while (cursor != 0);
      }
    }
  }
}

}  // namespace

namespace {

// Stateless: the walk calls it from several threads at once.
class CommandEncoder final : public engine::RecordEncoder {
 public:
  explicit CommandEncoder(int64_t start_ms) : start_ms_(start_ms) {}
  void SelectDb(std::string& out, uint32_t db) const override {
    BaseWriter(&out).Command({"SELECT", std::to_string(db)});
  }
  // Hash fields already expired at the start are left out, as the walk leaves out keys.
  void Key(std::string& out, const engine::Entry* e) const override {
    BaseWriter w(&out);
    WriteKey(w, e, start_ms_);
  }

 private:
  int64_t start_ms_;
};

}  // namespace

std::shared_ptr<const engine::RecordEncoder> MakeCommandEncoder(int64_t start_ms) {
  return std::make_shared<CommandEncoder>(start_ms);
}

std::string FunctionLoadCommands(const std::vector<std::string>& codes) {
  std::string out;
  BaseWriter writer(&out);
  for (const std::string& code : codes) writer.Command({"FUNCTION", "LOAD", code});
  return out;
}

std::string SerializeContainers(Server& server, int64_t now_ms) {
  std::string out;
  BaseWriter writer(&out);
  WriteContainers(server, writer, now_ms);
  return out;
}

}  // namespace lapse::server
