// File: engine/rdb_stream.h
//
// Streams in RDB (engine/rdb_value.h's stream half), as Redis 7.0's rdbSaveObject writes
// STREAM_LISTPACKS_2: the entries in listpack nodes keyed by their master id, then the
// stream's length, last id, first id, max deleted id and entries added, then each consumer
// group with its last id, read counter, PEL (id, delivery time, delivery count) and
// consumers (name, seen time, ids of their pending entries). Internal to engine/.
//
// A node's listpack holds a master entry (live count, deleted count, the master field
// names, 0) and then each entry: flags (1 deleted, 2 same fields as the master), the id as
// ms and seq differences from the master id, the values alone (same fields) or the field
// count and field/value pairs, and lp-count, the element count of the entry for walking
// backwards. lapse writes live entries only, so every node's deleted count is 0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/entry.h"
#include "engine/rdb_codec.h"

namespace lapse::engine {
class Db;
}

namespace lapse::engine::rdb {

void AppendStream(std::string& out, const Entry* e, bool compress);
// Reads STREAM_LISTPACKS (15, Redis 5-6) or STREAM_LISTPACKS_2 (19, Redis 7.0).
Entry* ReadStream(Reader& r, uint8_t type, Db& db, std::string_view key, int64_t now_ms, std::string* error);

}  // namespace lapse::engine::rdb
