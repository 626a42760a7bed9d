#include "engine/rdb_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine/db.h"
#include "engine/list.h"
#include "engine/rdb_packed.h"
#include "engine/rdb_stream.h"
#include "engine/zset.h"

namespace lapse::engine::rdb {

namespace {

// Redis 7.0's default list-max-listpack-size (-2): nodes of up to 8 KiB.
constexpr size_t kListNodeMaxBytes = 8192;
constexpr size_t kListNodeMaxEntries = 128;
constexpr uint64_t kQuicklistNodePlain = 1, kQuicklistNodePacked = 2;

void AppendHash(std::string& out, const Entry* e, bool compress) {
  if (e->collection_encoding() == CollectionEncoding::kPacked) {
    ListpackWriter lp;
    hash::ForEach(e, [&](std::string_view f, std::string_view v) { lp.Append(f), lp.Append(v); });
    out.push_back(static_cast<char>(kTypeHashListpack));
    AppendStringEncoded(out, lp.Finish(), compress);
    return;
  }
  out.push_back(static_cast<char>(kTypeHash));
  AppendLength(out, hash::Size(e));
  hash::ForEach(e, [&](std::string_view f, std::string_view v) {
    AppendStringEncoded(out, f, compress);
    AppendStringEncoded(out, v, compress);
  });
}

void AppendSet(std::string& out, const Entry* e, bool compress) {
  if (e->collection_encoding() == CollectionEncoding::kIntSet) {
    std::vector<int64_t> members;
    set::ForEach(e, [&](std::string_view m) {
      int64_t v = 0;
      ParseCanonicalInt(m, &v);
      members.push_back(v);
    });
    out.push_back(static_cast<char>(kTypeSetIntset));
    AppendStringEncoded(out, BuildIntset(members), compress);
    return;
  }
  out.push_back(static_cast<char>(kTypeSet));
  AppendLength(out, set::Size(e));
  set::ForEach(e, [&](std::string_view m) { AppendStringEncoded(out, m, compress); });
}

void AppendList(std::string& out, const Entry* e, bool compress) {
  std::vector<std::string> nodes;
  ListpackWriter lp;
  list::ForEach(e, [&](std::string_view element) {
    if (lp.count() > 0 && (lp.count() >= kListNodeMaxEntries || lp.size() + element.size() > kListNodeMaxBytes)) {
      nodes.push_back(lp.Finish());
      lp = ListpackWriter();
    }
    lp.Append(element);
  });
  if (lp.count() > 0) nodes.push_back(lp.Finish());
  out.push_back(static_cast<char>(kTypeListQuicklist2));
  AppendLength(out, nodes.size());
  for (const std::string& node : nodes) {
    AppendLength(out, kQuicklistNodePacked);
    AppendStringEncoded(out, node, compress);
  }
}

void AppendZSet(std::string& out, const Entry* e, bool compress) {
  if (e->collection_encoding() == CollectionEncoding::kPacked) {
    ListpackWriter lp;
    zset::ForEach(e, [&](std::string_view m, double score) { lp.Append(m), lp.Append(ScoreText(score)); });
    out.push_back(static_cast<char>(kTypeZSetListpack));
    AppendStringEncoded(out, lp.Finish(), compress);
    return;
  }
  out.push_back(static_cast<char>(kTypeZSet2));
  AppendLength(out, zset::Size(e));
  zset::ForEach(e, [&](std::string_view m, double score) {
    AppendStringEncoded(out, m, compress);
    AppendBinaryDouble(out, score);
  });
}

// ---- Reading ----

bool Fail(std::string* error, std::string what) {
  *error = std::move(what);
  return false;
}

bool ParseScore(std::string_view text, double* score) {
  std::string copy(text);
  char* end = nullptr;
  *score = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size() && !std::isnan(*score);
}

// Collects the elements of an encoded blob (listpack, ziplist, ...) read as one string.
bool ReadBlobElements(Reader& r, bool (*walk)(std::string_view, const ElementFn&), std::vector<std::string>* out,
                      std::string* error) {
  auto blob = r.String();
  if (!blob) return Fail(error, "truncated encoded value");
  bool ok = walk(*blob, [&](std::string_view element) {
    out->emplace_back(element);
    return true;
  });
  return ok || Fail(error, "malformed encoded value");
}

bool ReadStrings(Reader& r, uint64_t count, std::vector<std::string>* out, std::string* error) {
  for (uint64_t k = 0; k < count; ++k) {
    auto s = r.String();
    if (!s) return Fail(error, "truncated element");
    out->push_back(std::move(*s));
  }
  return true;
}

bool ReadCount(Reader& r, uint64_t* count, std::string* error) {
  auto n = r.Length();
  if (!n) return Fail(error, "bad length");
  *count = *n;
  return true;
}

Entry* BuildHash(Db& db, std::string_view key, const std::vector<std::string>& fv, const CollectionLimits& limits,
                 int64_t now_ms, std::string* error) {
  if (fv.size() % 2 != 0) return Fail(error, "odd hash element count"), nullptr;
  if (fv.empty()) return nullptr;
  Entry* e = hash::Create(db, key, now_ms);
  for (size_t k = 0; k < fv.size(); k += 2) {
    if (!hash::Set(db, e, fv[k], fv[k + 1], limits)) return Fail(error, "duplicate hash field"), nullptr;
  }
  return e;
}

Entry* BuildSet(Db& db, std::string_view key, const std::vector<std::string>& members, const CollectionLimits& limits,
                int64_t now_ms, std::string* error) {
  if (members.empty()) return nullptr;
  Entry* e = set::Create(db, key, members[0], now_ms);
  for (const std::string& m : members) {
    if (!set::Add(db, e, m, limits)) return Fail(error, "duplicate set member"), nullptr;
  }
  return e;
}

Entry* BuildList(Db& db, std::string_view key, const std::vector<std::string>& elements, const CollectionLimits& limits,
                 int64_t now_ms) {
  if (elements.empty()) return nullptr;
  Entry* e = list::Create(db, key, now_ms);
  for (const std::string& element : elements) list::Push(db, e, list::End::kTail, element, limits);
  return e;
}

Entry* BuildZSet(Db& db, std::string_view key, std::vector<std::pair<std::string, double>> elements,
                 const CollectionLimits& limits, int64_t now_ms, std::string* error) {
  if (elements.empty()) return nullptr;
  size_t count = elements.size();
  Entry* e = zset::Build(db, key, std::move(elements), limits, now_ms);
  if (zset::Size(e) != count) return Fail(error, "duplicate sorted set member"), nullptr;
  return e;
}

// Sorted set elements from member/score text pairs (listpack, ziplist).
bool PairScores(const std::vector<std::string>& flat, std::vector<std::pair<std::string, double>>* out,
                std::string* error) {
  if (flat.size() % 2 != 0) return Fail(error, "odd sorted set element count");
  for (size_t k = 0; k < flat.size(); k += 2) {
    double score = 0;
    if (!ParseScore(flat[k + 1], &score)) return Fail(error, "bad sorted set score");
    out->emplace_back(flat[k], score);
  }
  return true;
}

// Redis keeps a packed hash or sorted set it loads packed unless it has too many entries:
// the value-length limit only applies to what is added later (rdbLoadObject).
CollectionLimits LoadedPackedLimits(CollectionLimits limits) {
  limits.hash_max_listpack_value = SIZE_MAX;
  limits.zset_max_listpack_value = SIZE_MAX;
  return limits;
}

Entry* ReadZSet(Reader& r, uint8_t type, Db& db, std::string_view key, const CollectionLimits& limits,
                int64_t now_ms, std::string* error) {
  std::vector<std::pair<std::string, double>> elements;
  if (type == kTypeZSetListpack || type == kTypeZSetZiplist) {
    std::vector<std::string> flat;
    auto walk = type == kTypeZSetListpack ? ForEachListpackElement : ForEachZiplistElement;
    if (!ReadBlobElements(r, walk, &flat, error) || !PairScores(flat, &elements, error)) return nullptr;
    return BuildZSet(db, key, std::move(elements), LoadedPackedLimits(limits), now_ms, error);
  }
  uint64_t count = 0;
  if (!ReadCount(r, &count, error)) return nullptr;
  for (uint64_t k = 0; k < count; ++k) {
    auto member = r.String();
    if (!member) return Fail(error, "truncated sorted set member"), nullptr;
    auto score = type == kTypeZSet2 ? r.BinaryDouble() : r.TextDouble();
    if (!score || std::isnan(*score)) return Fail(error, "bad sorted set score"), nullptr;
    elements.emplace_back(std::move(*member), *score);
  }
  return BuildZSet(db, key, std::move(elements), limits, now_ms, error);
}

Entry* ReadList(Reader& r, uint8_t type, Db& db, std::string_view key, const CollectionLimits& limits,
                int64_t now_ms, std::string* error) {
  std::vector<std::string> elements;
  uint64_t count = 0;
  if (type == kTypeListZiplist) {
    if (!ReadBlobElements(r, ForEachZiplistElement, &elements, error)) return nullptr;
  } else if (type == kTypeList) {
    if (!ReadCount(r, &count, error) || !ReadStrings(r, count, &elements, error)) return nullptr;
  } else {
    if (!ReadCount(r, &count, error)) return nullptr;
    for (uint64_t node = 0; node < count; ++node) {
      uint64_t container = kQuicklistNodePacked;
      if (type == kTypeListQuicklist2 && !ReadCount(r, &container, error)) return nullptr;
      if (container == kQuicklistNodePlain) {
        if (!ReadStrings(r, 1, &elements, error)) return nullptr;
        continue;
      }
      if (container != kQuicklistNodePacked) return Fail(error, "bad quicklist node container"), nullptr;
      auto walk = type == kTypeListQuicklist2 ? ForEachListpackElement : ForEachZiplistElement;
      if (!ReadBlobElements(r, walk, &elements, error)) return nullptr;
    }
  }
  return BuildList(db, key, elements, limits, now_ms);
}

}  // namespace

bool IsValueType(uint8_t type) {
  return type <= kTypeZSet2 || (type >= kTypeHashZipmap && type <= kTypeSetListpack) || type == kTypeModule ||
         type == kTypeModule2;
}

std::string ScoreText(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  if (score == 0 && std::signbit(score)) return "-0";
  char buf[32];
  if (std::floor(score) == score && std::fabs(score) < 1e17) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(score));
    return std::string(buf, end - buf);
  }
  int n = std::snprintf(buf, sizeof buf, "%.17g", score);
  return std::string(buf, n);
}

void AppendValue(std::string& out, const Entry* e, bool compress) {
  switch (e->type()) {
    case ValueType::kString:
      out.push_back(static_cast<char>(kTypeString));
      return AppendStringEncoded(out, e->value(), compress);
    case ValueType::kHash:
      return AppendHash(out, e, compress);
    case ValueType::kSet:
      return AppendSet(out, e, compress);
    case ValueType::kList:
      return AppendList(out, e, compress);
    case ValueType::kZSet:
      return AppendZSet(out, e, compress);
    case ValueType::kStream:
      return AppendStream(out, e, compress);
  }
}

Entry* ReadValue(Reader& r, uint8_t type, Db& db, std::string_view key, const CollectionLimits& limits,
                 int64_t now_ms, std::string* error) {
  error->clear();
  std::vector<std::string> elements;
  uint64_t count = 0;
  switch (type) {
    case kTypeString: {
      auto value = r.String();
      if (!value) return Fail(error, "truncated string value"), nullptr;
      return db.Put(key, *value, ValueType::kString, kNoDeadline, now_ms);
    }
    case kTypeHash:
      if (!ReadCount(r, &count, error) || !ReadStrings(r, 2 * count, &elements, error)) return nullptr;
      return BuildHash(db, key, elements, limits, now_ms, error);
    case kTypeHashListpack:
    case kTypeHashZiplist:
    case kTypeHashZipmap: {
      auto walk = type == kTypeHashListpack  ? ForEachListpackElement
                  : type == kTypeHashZiplist ? ForEachZiplistElement
                                             : ForEachZipmapElement;
      if (!ReadBlobElements(r, walk, &elements, error)) return nullptr;
      return BuildHash(db, key, elements, type == kTypeHashZipmap ? limits : LoadedPackedLimits(limits), now_ms, error);
    }
    case kTypeSet:
      if (!ReadCount(r, &count, error) || !ReadStrings(r, count, &elements, error)) return nullptr;
      return BuildSet(db, key, elements, limits, now_ms, error);
    case kTypeSetIntset:
    case kTypeSetListpack:
      if (!ReadBlobElements(r, type == kTypeSetIntset ? ForEachIntsetMember : ForEachListpackElement, &elements,
                            error)) {
        return nullptr;
      }
      return BuildSet(db, key, elements, limits, now_ms, error);
    case kTypeList:
    case kTypeListZiplist:
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      return ReadList(r, type, db, key, limits, now_ms, error);
    case kTypeZSet:
    case kTypeZSet2:
    case kTypeZSetListpack:
    case kTypeZSetZiplist:
      return ReadZSet(r, type, db, key, limits, now_ms, error);
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
      return ReadStream(r, type, db, key, now_ms, error);
    case kTypeModule:
    case kTypeModule2:
      return Fail(error, "module values are not supported"), nullptr;
    default:
      return Fail(error, "unknown value type " + std::to_string(type)), nullptr;
  }
}

}  // namespace lapse::engine::rdb
