#include "engine/item_json.h"

#include <algorithm>
#include <vector>

#include "engine/container.h"

namespace lapse::engine {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

// Index one past the string literal starting at s[i] == '"'.
size_t SkipString(std::string_view s, size_t i) {
  ++i;
  while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
  return i + 1;
}

// Index one past the JSON value starting at s[i]; the document is already known valid.
size_t SkipValue(std::string_view s, size_t i) {
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      char c = s[i];
      if (c == '"') {
        i = SkipString(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return i;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !IsSpace(s[i])) ++i;
  return i;
}

struct RawMember {
  std::string_view text;   // "key": value
  std::string_view value;  // value only
};

// Cuts a valid top-level object into its members' raw text, in document order.
void SplitMembers(std::string_view json, std::vector<RawMember>* members) {
  members->clear();
  size_t i = SkipSpace(json, 0) + 1;  // past '{'
  while (true) {
    i = SkipSpace(json, i);
    if (i >= json.size() || json[i] == '}') return;
    size_t start = i;
    i = SkipString(json, i);
    i = SkipSpace(json, i) + 1;  // past ':'
    i = SkipSpace(json, i);
    size_t value_start = i;
    i = SkipValue(json, i);
    members->push_back({json.substr(start, i - start), json.substr(value_start, i - value_start)});
    i = SkipSpace(json, i);
    if (i < json.size() && json[i] == ',') ++i;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Whether s is exactly one JSON number by the grammar of RFC 8259:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size() || !IsDigit(s[i])) return false;
  if (s[i++] != '0') {
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    if (++i >= s.size() || !IsDigit(s[i])) return false;
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !IsDigit(s[i])) return false;
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  return i == s.size();
}

// simdjson refuses numbers it cannot represent (1e400, integers past 64 bits) although
// JSON allows them. This copy has every well-formed number outside strings replaced by 0,
// which keeps the document valid exactly when the original was; numbers that break the
// grammar are left alone, so they still fail.
std::string WithNumbersZeroed(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  size_t i = 0;
  while (i < json.size()) {
    char c = json[i];
    if (c == '"') {
      size_t end = std::min(SkipString(json, i), json.size());
      out.append(json.substr(i, end - i));
      i = end;
    } else if (c == '-' || IsDigit(c)) {
      size_t end = i;
      while (end < json.size() && (IsDigit(json[end]) || json[end] == '-' || json[end] == '+' || json[end] == '.' ||
                                   json[end] == 'e' || json[end] == 'E'))
        ++end;
      std::string_view token = json.substr(i, end - i);
      out.append(IsJsonNumber(token) ? std::string_view("0") : token);
      i = end;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

bool IsNumberError(simdjson::error_code e) {
  return e == simdjson::NUMBER_ERROR || e == simdjson::NUMBER_OUT_OF_RANGE;
}

bool ValidTtlElement(const simdjson::dom::element& v, int64_t* ttl) {
  if (v.type() != simdjson::dom::element_type::INT64 && v.type() != simdjson::dom::element_type::UINT64) return false;
  int64_t n = 0;
  if (v.type() == simdjson::dom::element_type::UINT64) {
    uint64_t u = v.get_uint64().value_unsafe();
    if (u > static_cast<uint64_t>(kMaxTtlSeconds)) return false;
    n = static_cast<int64_t>(u);
  } else {
    n = v.get_int64().value_unsafe();
  }
  if (n != -1 && (n < 1 || n > kMaxTtlSeconds)) return false;
  *ttl = n;
  return true;
}

}  // namespace

bool ValidContainerName(std::string_view name) { return ValidItemId(name); }

bool ValidItemId(std::string_view id) {
  if (id.empty() || id.size() > 255) return false;
  for (char c : id) {
    if (c == '/' || c == '\\' || c == '?' || c == '#') return false;
  }
  return simdjson::validate_utf8(id.data(), id.size());
}

ItemJsonError ItemJsonParser::Parse(std::string_view id, std::string_view json, ParsedItem* out, std::string* detail) {
  if (!ValidItemId(id)) return ItemJsonError::kInvalidId;
  if (json.size() > kMaxItemBytes) return ItemJsonError::kTooLarge;
  simdjson::dom::element doc;
  auto error = parser_.parse(json.data(), json.size(), true).get(doc);
  if (IsNumberError(error)) {
    // Parse the stand-in for validity and structure; members are still cut from `json`, so
    // the numbers are stored as written, and a huge "ttl" is an invalid ttl, not bad JSON.
    zeroed_ = WithNumbersZeroed(json);
    simdjson::error_code retry = parser_.parse(zeroed_.data(), zeroed_.size(), true).get(doc);
    if (!retry) error = simdjson::SUCCESS;
  }
  if (error) {
    *detail = simdjson::error_message(error);
    return ItemJsonError::kInvalidJson;
  }
  if (doc.type() != simdjson::dom::element_type::OBJECT) return ItemJsonError::kNotObject;
  simdjson::dom::object object = doc.get_object().value_unsafe();

  static thread_local std::vector<RawMember> raw;
  SplitMembers(json, &raw);
  out->members.clear();
  out->ttl = kNoItemTtl;
  // A property given twice would leave readers to guess which one counts (and IGET would
  // return both): refused, whatever the property, but for the server's own _ts and _etag,
  // which are dropped anyway.
  static thread_local std::vector<std::string_view> keys;
  keys.clear();
  for (auto field : object) {
    if (field.key != "_ts" && field.key != "_etag") keys.push_back(field.key);
  }
  std::sort(keys.begin(), keys.end());
  if (auto dup = std::adjacent_find(keys.begin(), keys.end()); dup != keys.end()) {
    *detail = std::string(*dup);
    return ItemJsonError::kDuplicateProperty;
  }
  size_t index = 0;
  for (auto field : object) {
    const RawMember& member = raw[index++];
    std::string_view key = field.key;
    if (key == "id") {
      std::string_view value;
      if (field.value.get_string().get(value) || value != id) return ItemJsonError::kIdMismatch;
      continue;
    }
    if (key == "_ts" || key == "_etag") continue;
    if (key == "ttl" && !ValidTtlElement(field.value, &out->ttl)) {
      *detail = std::string(member.value);
      return ItemJsonError::kInvalidTtl;
    }
    if (!out->members.empty()) out->members.push_back(',');
    out->members.append(member.text);
  }
  return ItemJsonError::kNone;
}

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

std::string EtagText(uint64_t etag) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, etag >>= 4) s[i] = kHex[etag & 15];
  return s;
}

size_t RenderedItemBytes(std::string_view id, size_t members_bytes, int64_t ts_seconds) {
  size_t id_literal = 2;
  for (char c : id) {
    unsigned char u = static_cast<unsigned char>(c);
    id_literal += c == '"' || c == '\\' ? 2 : u < 0x20 ? 6 : 1;
  }
  constexpr size_t kFixed = sizeof("{\"id\":") - 1 + sizeof(",\"_ts\":") - 1 + sizeof(",\"_etag\":\"") - 1 + 16 +
                            sizeof("\"}") - 1;
  return kFixed + id_literal + (members_bytes ? members_bytes + 1 : 0) + std::to_string(ts_seconds).size();
}

void RenderItem(std::string_view id, std::string_view members, int64_t ts_seconds, uint64_t etag, std::string* out) {
  out->clear();
  out->reserve(members.size() + id.size() + 64);
  out->append("{\"id\":");
  AppendJsonString(id, out);
  if (!members.empty()) {
    out->push_back(',');
    out->append(members);
  }
  out->append(",\"_ts\":");
  out->append(std::to_string(ts_seconds));
  out->append(",\"_etag\":\"");
  out->append(EtagText(etag));
  out->append("\"}");
}

}  // namespace lapse::engine
