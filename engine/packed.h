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

// Appends `s` front-coded against `previous`: how many leading bytes they share, then the
// rest as a packed element (sorted or structured names then cost a few bytes each).
inline void AppendFrontCoded(std::string* out, std::string_view previous, std::string_view s) {
  size_t shared = 0, most = previous.size() < s.size() ? previous.size() : s.size();
  while (shared < most && previous[shared] == s[shared]) ++shared;
  AppendVarint(out, shared);
  AppendPacked(out, s.substr(shared));
}

// Replaces value bytes [pos, pos + old_len) of `e` with `with`, which must not point into
// the entry. May reallocate the entry (Db::ReserveValue): returns the entry to use.
// With `exact`, growth takes just what the splice needs (Db::ReserveValue).
Entry* SpliceValue(Db& db, Entry* e, size_t pos, size_t old_len, std::string_view with, bool exact = false);

}  // namespace lapse::engine
