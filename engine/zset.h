// File: engine/zset.h
//
// Sorted sets (ZADD and friends). Not built yet: only the hooks every collection type gives
// engine/collection.cc (destroy, measure, copy and name its big layout) exist, so that the
// type can be added without touching the shared code again.
#pragma once

#include <cstddef>
#include <string>

#include "engine/entry.h"

namespace lapse::engine::zset {

// The big layout's hooks; `e` owns its table (Entry::owns_table()).
void DestroyTable(const Entry* e);
size_t TableBytes(const Entry* e);
// A deep copy of the table, as the 8 pointer bytes an entry's value would hold.
std::string CopyTable(const Entry* e);
// What OBJECT ENCODING answers for a sorted set in any layout.
const char* EncodingName(const Entry* e);

}  // namespace lapse::engine::zset
