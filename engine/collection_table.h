// File: engine/collection_table.h
//
// What engine/collection.cc (hashes) and engine/collection_set.cc (sets) share: a collection
// moved to its own table, and that table's edits, which keep the hash-field deadline counts.
// Not for use outside the engine's collection code.
#pragma once

#include <functional>
#include <string_view>

#include "engine/collection.h"

namespace lapse::engine::collection_detail {

// Rewrites an entry's value bytes to hold `table` (whose ownership passes to the entry).
Entry* InstallTable(Db& db, Entry* e, CollectionTable* table);
// Sets `name` to `value` in a table; returns true when it is new. An existing element's
// deadline is cleared unless `keep_ttl`.
bool TableSet(CollectionTable& ct, std::string_view name, std::string_view value, bool keep_ttl = false);
bool TableDelete(CollectionTable& ct, std::string_view name);
void TableForEach(const KvTable& t, const std::function<void(const Entry*)>& fn);
// Replaces an entry's whole value with `bytes` (a layout change).
Entry* Rewrite(Db& db, Entry* e, std::string_view bytes, CollectionEncoding enc);

}  // namespace lapse::engine::collection_detail
