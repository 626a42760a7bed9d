// File: engine/rdb_packed.h
//
// Redis's compact encodings as they appear inside RDB strings: listpacks (Redis 7.0's small
// hashes and sorted sets, list nodes and stream nodes), and the older ziplists,
// intsets and zipmaps, which files of earlier Redis versions hold and Redis 7.0 still loads.
//
// lapse never keeps these layouts in memory (engine/collection.h has its own); they exist
// only at the file boundary, so the writer builds a listpack from elements and the readers
// turn each encoding back into elements. Every reader checks every bound against the bytes
// it was given and reports malformed data as false: a corrupt file must never crash the
// loader.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::engine::rdb {

// Builds a listpack, as Redis's lpAppend does: an element that is a canonical integer of up
// to 20 characters is stored in the smallest integer encoding, anything else as a string.
class ListpackWriter {
 public:
  ListpackWriter() { bytes_.assign(6, '\0'); }
  void Append(std::string_view element);
  void AppendInteger(int64_t value);
  size_t count() const { return count_; }
  size_t size() const { return bytes_.size() + 1; }
  // The finished listpack (header filled in, terminator added); the writer is spent.
  std::string Finish();

 private:
  void AppendEntry(std::string_view encoded);
  std::string bytes_;
  size_t count_ = 0;
};

// Calls fn with each element of a listpack, as text (integers formatted in decimal); fn
// returns false to stop early. False when the listpack is malformed.
using ElementFn = std::function<bool(std::string_view element)>;
bool ForEachListpackElement(std::string_view listpack, const ElementFn& fn);
// The same for a ziplist (Redis before 7.0).
bool ForEachZiplistElement(std::string_view ziplist, const ElementFn& fn);
// The same for an intset: its members in ascending order.
bool ForEachIntsetMember(std::string_view intset, const ElementFn& fn);
// A zipmap (Redis before 2.6): field, value, field, value, ...
bool ForEachZipmapElement(std::string_view zipmap, const ElementFn& fn);

// An intset of `members` (ascending, distinct), in the narrowest width that holds them all.
std::string BuildIntset(const std::vector<int64_t>& members);

}  // namespace lapse::engine::rdb
