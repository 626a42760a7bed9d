// File: engine/item_json.h
//
// Validation and storage form of item bodies. simdjson checks the whole document; a small
// scanner then cuts the top-level object into its members' raw text, so that what is
// stored — and later returned by IGET — is exactly what the client wrote (numbers such as
// 1e3 or -0, escapes, unicode, key order), minus the properties the server owns: "id" is
// checked and re-added, "_ts" and "_etag" are replaced. The optional "ttl" is validated
// with Cosmos DB's rule and kept as written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace lapse::engine {

inline constexpr size_t kMaxItemBytes = 2 * 1024 * 1024;

enum class ItemJsonError {
  kNone,
  kInvalidId,    // the id argument is empty, too long, not UTF-8, or has / \ ? #
  kTooLarge,     // body over kMaxItemBytes
  kInvalidJson,  // detail: simdjson's message
  kNotObject,
  kIdMismatch,   // the body's "id" is not the string given as argument
  kInvalidTtl,   // detail: the ttl value's text as the client wrote it
  kDuplicateProperty,  // detail: the property's name
};

struct ParsedItem {
  std::string members;  // raw top-level members, comma-separated, without id/_ts/_etag
  int64_t ttl;          // kNoItemTtl, -1 or 1 … 2147483647
};

class ItemJsonParser {
 public:
  // Checks `json` as the body of item `id`. On kNone fills *out; otherwise *detail says what
  // was wrong where the error carries a detail. Reuses its buffers between calls.
  ItemJsonError Parse(std::string_view id, std::string_view json, ParsedItem* out, std::string* detail);

 private:
  simdjson::dom::parser parser_;
  std::string zeroed_;  // the stand-in document for numbers simdjson cannot hold
};

// Checks an item id: non-empty, at most 255 bytes, valid UTF-8, none of / \ ? #.
bool ValidItemId(std::string_view id);
// Container names follow the same rule as item ids (Cosmos DB's rule for resource ids).
bool ValidContainerName(std::string_view name);

// The length of the document RenderItem makes, without making it.
size_t RenderedItemBytes(std::string_view id, size_t members_bytes, int64_t ts_seconds);

// The document IGET returns: {"id":…, <members>, "_ts":…, "_etag":"…"}.
void RenderItem(std::string_view id, std::string_view members, int64_t ts_seconds, uint64_t etag, std::string* out);

// The textual etag of an etag number (16 hex digits).
std::string EtagText(uint64_t etag);

// Appends `s` as a JSON string literal (quoted and escaped).
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace lapse::engine
