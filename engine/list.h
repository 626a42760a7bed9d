// File: engine/list.h
//
// Lists (LPUSH, LRANGE, BLPOP, ...): a sequence of elements in the packed format of
// engine/packed.h, in one of two layouts (the entry's CollectionEncoding):
//
//   kPacked  inline: a 4-byte element count, then the elements, in the key's own entry.
//            A list of a hundred short elements is one allocation with its key.
//   kTable   8 bytes: a pointer to a ListTable, a deque of nodes, each a packed run of
//            elements (Redis's quicklist of listpacks). Pushes and pops at either end touch
//            one node; an index walks node counts, not elements.
//
// A list is inline while it fits one node: list-max-listpack-size, a positive count of
// elements or -1..-5 for 4..64 KiB of bytes (Redis's meaning). Past it, it becomes a table
// whose nodes obey the same limit; it never returns inline. Redis 7.0 calls every list
// "quicklist" whatever its size, so the layout is invisible to clients.
//
// Packed elements carry their length in front only, so a node is walked from its head; a
// tail pop walks one node (bounded by the node limit), never the list.
//
// Editing functions take the entry by reference: an inline list may be reallocated. None of
// them deletes the key: a caller that leaves the list empty erases it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/collection.h"
#include "engine/entry.h"

namespace lapse::engine {

class Db;

namespace list {

enum class End { kHead, kTail };

// A new, empty list under `key` (the caller pushes at once).
Entry* Create(Db& db, std::string_view key, int64_t now_ms);
size_t Size(const Entry* e);
void Push(Db& db, Entry*& e, End end, std::string_view element, const CollectionLimits& limits);
// Removes the element at `end` (the list must not be empty) and returns it.
std::string Pop(Db& db, Entry*& e, End end);
// Removes `n` <= Size() elements at `end`.
void Drop(Db& db, Entry*& e, End end, size_t n);
// The element at `index` < Size(); the view lasts until the list changes.
std::string_view At(const Entry* e, size_t index);
// Replaces the element at `index` < Size().
void Set(Db& db, Entry*& e, size_t index, std::string_view element);
// Inserts `element` so that it ends up at `index` <= Size().
void Insert(Db& db, Entry*& e, size_t index, std::string_view element, const CollectionLimits& limits);
// Removes the elements at `indices` (ascending, each < Size()).
void RemoveAt(Db& db, Entry*& e, const std::vector<size_t>& indices);
// fn(element) for the elements first..last (inclusive, last < Size()), head to tail; fn
// returns false to stop. Views last only during the call.
void ForRange(const Entry* e, size_t first, size_t last, const std::function<bool(std::string_view)>& fn);
// fn(element) from the tail to the head until fn returns false; one node is parsed at a time.
void ForEachReverse(const Entry* e, const std::function<bool(std::string_view)>& fn);
// Every element, head to tail.
void ForEach(const Entry* e, const std::function<void(std::string_view)>& fn);
// Bytes of all elements (request units).
size_t ElementBytes(const Entry* e);
// The list's nodes (an inline list is one) and their packed bytes: DEBUG OBJECT's ql_ fields.
struct NodeFigures {
  size_t nodes = 0, packed_bytes = 0;
};
NodeFigures Nodes(const Entry* e);

// The big layout's hooks (engine/collection.cc); `e` owns its table.
void DestroyTable(const Entry* e);
size_t TableBytes(const Entry* e);
// A deep copy of the table, as the 8 pointer bytes an entry's value would hold.
std::string CopyTable(const Entry* e);
const char* EncodingName(const Entry* e);

}  // namespace list
}  // namespace lapse::engine
