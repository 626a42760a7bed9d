// File: engine/rdb_value.h
//
// One key's value in Redis's RDB format, version 10 (Redis 7.0): the type byte and the value
// as rdbSaveObjectType / rdbSaveObject write them, and the reverse for every type and
// encoding Redis 7.0 loads. DUMP/RESTORE payloads and snapshot key records share it.
//
// What lapse writes, by its own layout (engine/collection.h), so that Redis 7.0 loads each
// value with the encoding it would have chosen itself:
//   string          STRING (0): integer form, LZF (rdbcompression) or raw, as Redis
//   hash            HASH_LISTPACK (16) when packed, else HASH (4)
//   set             SET_INTSET (11) when an intset, else SET (2)
//   list            LIST_QUICKLIST_2 (18): packed nodes of at most 128 elements / 8 KiB
//   sorted set      ZSET_LISTPACK (17) when packed, else ZSET_2 (5, binary scores)
//   stream          STREAM_LISTPACKS_2 (19), consumer groups and their PELs included;
//                   deleted entries are not written (Redis keeps them as tombstones)
// What it reads: all of the above, plus LIST (1), ZSET (3), HASH_ZIPMAP (9),
// LIST_ZIPLIST (10), ZSET_ZIPLIST (12), HASH_ZIPLIST (13), LIST_QUICKLIST (14),
// STREAM_LISTPACKS (15) and SET_LISTPACK (20): what any Redis up to 7.0 writes.
// Module values (6, 7) are refused (lapse has no modules).
//
// A value is read into a Db the caller chooses (normally a scratch one), so that malformed
// data leaves the real keyspace untouched: the caller moves the finished entry across
// (Db::Extract / Db::Adopt) only when the whole value was read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/collection.h"
#include "engine/entry.h"
#include "engine/rdb_codec.h"

namespace lapse::engine {
class Db;
}

namespace lapse::engine::rdb {

enum TypeByte : uint8_t {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZSet = 3,
  kTypeHash = 4,
  kTypeZSet2 = 5,
  kTypeModule = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZSetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZSetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
  kTypeSetListpack = 20,
};

// Whether a byte read where a record's type is expected names a value type.
bool IsValueType(uint8_t type);

// Appends the type byte and the value of `e`.
void AppendValue(std::string& out, const Entry* e, bool compress);

// Reads a value of RDB type `type` and stores it in `db` under `key`, replacing whatever was
// there, with no deadline. Returns the entry, or nullptr: with *error set when the data is
// malformed (the key may then hold part of it: the caller discards `db`'s key), or with
// *error empty when the value was empty (Redis skips such keys too).
Entry* ReadValue(Reader& reader, uint8_t type, Db& db, std::string_view key, const CollectionLimits& limits,
                 int64_t now_ms, std::string* error);

// Formats a score as Redis's d2string does for a listpack entry.
std::string ScoreText(double score);

}  // namespace lapse::engine::rdb
