// File: engine/rdb_file.h
//
// Whole snapshots in Redis's RDB format, version 10 (Redis 7.0):
//
//   "REDIS0010"  AUX redis-ver, redis-bits, ctime, used-mem, aof-base
//   per database: SELECTDB n, RESIZEDB keys expires, then key records:
//                 [EXPIRETIME_MS (252) 8 bytes LE] type key value  (engine/rdb_value.h)
//   EOF (255), then the CRC-64 of everything before it, 8 bytes LE (0 without rdbchecksum)
//
// lapse-only data travels in AUX fields (opcode 250), which Redis 7.0 and redis-check-rdb
// read and skip ("Unrecognized RDB AUX field" at debug level), so a file with them still
// loads in Redis, without them:
//   "lapse-hfe"        after a hash's key record: the key, then field / deadline pairs
//                      (hash-field TTLs, absolute Unix ms)
//   "lapse-container"  one container: database, name, DefaultTimeToLive (OFF included), RU
//                      budget, eviction opt-in
//   "lapse-items"      a batch of one container's items: id, JSON members, own ttl, _ts (ms)
//                      and _etag; batches follow their container's record
//
// The writer streams: records accumulate in a buffer that goes to the Sink in chunks of
// about kChunkBytes, the checksum running over them as they go, so that a background save
// can hand it one shard's keys at a time, in slices, and never holds the file in memory.
//
// The loader reads the file through a read-only mapping, sequentially, so the kernel pages
// it in as it goes and drops it behind; nothing is copied but the values. It reports
// truncation or corruption as an error that names the byte offset; it never crashes on a bad
// file (every read is bounds-checked).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/collection.h"
#include "engine/entry.h"
#include "engine/rdb_codec.h"

namespace lapse::engine {
class Db;
}

namespace lapse::engine::rdb {

constexpr uint8_t kOpcodeModuleAux = 247;
constexpr uint8_t kOpcodeIdle = 248;
constexpr uint8_t kOpcodeFreq = 249;
constexpr uint8_t kOpcodeAux = 250;
constexpr uint8_t kOpcodeResizeDb = 251;
constexpr uint8_t kOpcodeExpireTimeMs = 252;
constexpr uint8_t kOpcodeExpireTime = 253;
constexpr uint8_t kOpcodeSelectDb = 254;
constexpr uint8_t kOpcodeEof = 255;

inline constexpr std::string_view kAuxHashFieldTtls = "lapse-hfe";
inline constexpr std::string_view kAuxContainer = "lapse-container";
inline constexpr std::string_view kAuxItems = "lapse-items";

struct ContainerRecord {
  uint32_t db = 0;
  std::string name;
  int64_t default_ttl = 0;  // engine/container.h's kTtlOff when OFF
  bool evictable = false;
  int64_t ru_per_second = 0;
};
std::string EncodeContainer(const ContainerRecord& c);
std::optional<ContainerRecord> DecodeContainer(std::string_view bytes);

struct ItemRecord {
  std::string id;
  std::string members;
  int64_t ttl = 0;
  int64_t last_write_ms = 0;
  uint64_t etag = 0;
};
// Appends one item to a batch under construction (EncodeItemsHeader first).
std::string EncodeItemsHeader(uint32_t db, std::string_view container, size_t count);
void AppendItem(std::string& out, std::string_view id, std::string_view members, int64_t ttl, int64_t last_write_ms,
                uint64_t etag);
bool DecodeItems(std::string_view bytes, uint32_t* db, std::string* container, std::vector<ItemRecord>* items);

// Where a snapshot's bytes go; Write returns false on an I/O error (the save then fails).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual bool Write(std::string_view bytes) = 0;
};

class StringSink final : public Sink {
 public:
  bool Write(std::string_view bytes) override {
    data.append(bytes);
    return true;
  }
  std::string data;
};

struct SnapshotOptions {
  bool compress = true;     // rdbcompression
  bool checksum = true;     // rdbchecksum
  bool lapse_data = true;   // rdb-lapse-data: hash-field TTLs and containers as AUX fields
};

// One key record as SnapshotWriter::Key writes it (with its lapse-hfe AUX record), appended
// to `out`: a background save encodes keys into per-shard buffers (engine/snapshot.h).
void AppendKeyRecord(std::string& out, const Entry* e, const SnapshotOptions& options);
// One AUX record (a background save's item batches, engine/snapshot.h).
void AppendAux(std::string& out, std::string_view key, std::string_view value, bool compress);
// SELECTDB alone, without RESIZEDB (which Redis and lapse both treat as optional).
void AppendSelectDb(std::string& out, uint32_t db);

class SnapshotWriter {
 public:
  static constexpr size_t kChunkBytes = 1 << 16;

  SnapshotWriter(Sink& sink, SnapshotOptions options) : sink_(sink), options_(options) {}

  // The magic and the AUX fields Redis 7.0 writes first.
  void Header(int64_t now_ms, uint64_t used_memory, bool aof_base = false);
  void Aux(std::string_view key, std::string_view value);
  // A function library (FUNCTION2 record), written before the keys as Redis does.
  void Function(std::string_view code);
  void SelectDb(uint32_t db, uint64_t keys, uint64_t expires);
  // One key record: its deadline, type, name and value (and its field TTLs as lapse data).
  void Key(const Entry* e);
  // Records encoded elsewhere (AppendKeyRecord, AppendSelectDb).
  void Records(std::string_view bytes) {
    buffer_.append(bytes);
    MaybeFlush();
  }
  // EOF and the checksum; flushes everything. False when any write failed.
  bool Finish();

  const SnapshotOptions& options() const { return options_; }
  bool failed() const { return failed_; }
  uint64_t bytes_written() const { return written_ + buffer_.size(); }

 private:
  void MaybeFlush() {
    if (buffer_.size() >= kChunkBytes) Flush();
  }
  void Flush();

  Sink& sink_;
  SnapshotOptions options_;
  std::string buffer_;
  uint64_t crc_ = 0;
  uint64_t written_ = 0;
  bool failed_ = false;
};

// What a loader calls as it meets records.
class LoadTarget {
 public:
  virtual ~LoadTarget() = default;
  // The Db (of database `db`) that `key` goes to, or nullptr when `db` is out of range.
  virtual Db* DbFor(uint32_t db, std::string_view key) = 0;
  // A function library's code (FUNCTION2 record); false to refuse the file.
  virtual bool OnFunction(std::string code) { return false; }
  // An AUX field lapse reads itself (containers); false when it is malformed.
  virtual bool OnLapseAux(std::string_view key, std::string_view value, int64_t now_ms) { return true; }
};

struct LoadStats {
  uint64_t keys_loaded = 0;
  uint64_t keys_expired = 0;  // their deadline passed while the server was down: not loaded
  uint64_t empty_skipped = 0;
};

// Loads a whole snapshot from `bytes`. On failure returns an error naming the byte offset
// where the bad data starts (the keys loaded so far stay in the target: callers load into
// fresh state, or give up).
std::optional<std::string> LoadSnapshot(std::string_view bytes, LoadTarget& target, const CollectionLimits& limits,
                                        int64_t now_ms, LoadStats* stats);
// The same from a file, mapped read-only; errors name the file.
std::optional<std::string> LoadSnapshotFile(const std::string& path, LoadTarget& target,
                                            const CollectionLimits& limits, int64_t now_ms, LoadStats* stats);

}  // namespace lapse::engine::rdb
