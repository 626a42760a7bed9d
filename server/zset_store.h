// File: server/zset_store.h
//
// Storing a computed sorted set under a destination key, as ZUNIONSTORE, ZRANGESTORE and
// the geo commands' STORE options do: one rule for layout, WATCH and keyspace events.
// Defined in zset_commands.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/collection.h"
#include "engine/db.h"
#include "server/command_table.h"

namespace lapse::server {

// Replaces `key` in `db` with a sorted set of `elements` (laid out as Redis lays out a set
// built whole) and reports `event`, or deletes the key when there are none (`del`, if it
// existed). Touches the key for WATCH either way when it changed. Counts one change for
// either (ConnCommand::changes), as Redis counts ZUNIONSTORE's.
void StoreZSet(ConnCommand& c, engine::Db& db, std::string_view key, std::vector<std::pair<std::string, double>> elements,
               const engine::CollectionLimits& limits, int64_t now, const char* event);

}  // namespace lapse::server
