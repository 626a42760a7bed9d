// File: engine/packed.h
//
// The packed element format every collection layout shares (engine/collection.h): an element
// is its length as a LEB128 varint followed by its bytes, and elements follow each other with
// nothing in between. Internal to engine/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/entry.h"

namespace lapse::engine {

class Db;

inline size_t VarintSize(size_t n) {
  size_t bytes = 1;
  while (n >= 0x80) n >>= 7, ++bytes;
  return bytes;
}

inline void AppendVarint(std::string* out, size_t n) {
  while (n >= 0x80) {
    out->push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
}

inline void AppendPacked(std::string* out, std::string_view element) {
  AppendVarint(out, element.size());
  out->append(element);
}

inline size_t PackedSize(std::string_view element) { return VarintSize(element.size()) + element.size(); }

// Replaces value bytes [pos, pos + old_len) of `e` with `with`, which must not point into
// the entry. May reallocate the entry (Db::ReserveValue): returns the entry to use.
// With `exact`, growth takes just what the splice needs (Db::ReserveValue).
Entry* SpliceValue(Db& db, Entry* e, size_t pos, size_t old_len, std::string_view with, bool exact = false);

}  // namespace lapse::engine
