#include "engine/rdb_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/db.h"
#include "engine/rdb_value.h"

namespace lapse::engine::rdb {

namespace {

// The Redis version lapse reports (INFO redis_version), which Redis 7.0 also writes.
constexpr std::string_view kRedisVersion = "7.0.0";
constexpr std::string_view kMagic = "REDIS";

std::string HashFieldTtls(const Entry* e) {
  std::string out;
  AppendString(out, e->key());
  std::vector<std::pair<std::string, int64_t>> fields;
  hash::ForEach(e, [&](std::string_view f, std::string_view) {
    int64_t d = hash::FieldDeadline(e, f);
    if (d >= 0) fields.emplace_back(f, d);
  });
  AppendLength(out, fields.size());
  for (const auto& [field, deadline] : fields) {
    AppendString(out, field);
    AppendUint64Le(out, static_cast<uint64_t>(deadline));
  }
  return out;
}

bool HasFieldTtls(const Entry* e) {
  return e->type() == ValueType::kHash && e->owns_table() && TableOf(e).volatile_fields > 0;
}

}  // namespace

void SnapshotWriter::Header(int64_t now_ms, uint64_t used_memory, bool aof_base) {
  buffer_.append(kMagic);
  buffer_.append("0010");
  Aux("redis-ver", kRedisVersion);
  Aux("redis-bits", "64");
  Aux("ctime", std::to_string(now_ms / 1000));
  Aux("used-mem", std::to_string(used_memory));
  Aux("aof-base", aof_base ? "1" : "0");
}

void SnapshotWriter::Aux(std::string_view key, std::string_view value) {
  AppendAux(buffer_, key, value, options_.compress);
  MaybeFlush();
}

void AppendAux(std::string& out, std::string_view key, std::string_view value, bool compress) {
  out.push_back(static_cast<char>(kOpcodeAux));
  AppendStringEncoded(out, key, compress);
  AppendStringEncoded(out, value, compress);
}

void SnapshotWriter::Function(std::string_view code) {
  buffer_.push_back(static_cast<char>(kOpcodeFunction2));
  AppendStringEncoded(buffer_, code, options_.compress);
  MaybeFlush();
}

void SnapshotWriter::SelectDb(uint32_t db, uint64_t keys, uint64_t expires) {
  buffer_.push_back(static_cast<char>(kOpcodeSelectDb));
  AppendLength(buffer_, db);
  buffer_.push_back(static_cast<char>(kOpcodeResizeDb));
  AppendLength(buffer_, keys);
  AppendLength(buffer_, expires);
}

void AppendKeyRecord(std::string& out, const Entry* e, const SnapshotOptions& options) {
  if (e->deadline() != kNoDeadline) {
    out.push_back(static_cast<char>(kOpcodeExpireTimeMs));
    AppendUint64Le(out, static_cast<uint64_t>(e->deadline()));
  }
  // The type byte comes first in AppendValue's output, the key after it.
  std::string value;
  AppendValue(value, e, options.compress);
  out.push_back(value[0]);
  AppendStringEncoded(out, e->key(), options.compress);
  out.append(value, 1);
  if (options.lapse_data && HasFieldTtls(e)) AppendAux(out, kAuxHashFieldTtls, HashFieldTtls(e), options.compress);
}

void AppendSelectDb(std::string& out, uint32_t db) {
  out.push_back(static_cast<char>(kOpcodeSelectDb));
  AppendLength(out, db);
}

void SnapshotWriter::Key(const Entry* e) {
  AppendKeyRecord(buffer_, e, options_);
  MaybeFlush();
}

void SnapshotWriter::Flush() {
  if (buffer_.empty()) return;
  if (options_.checksum) crc_ = Crc64(crc_, buffer_);
  if (!failed_ && !sink_.Write(buffer_)) failed_ = true;
  written_ += buffer_.size();
  buffer_.clear();
}

bool SnapshotWriter::Finish() {
  buffer_.push_back(static_cast<char>(kOpcodeEof));
  Flush();
  std::string tail;
  AppendUint64Le(tail, options_.checksum ? crc_ : 0);
  if (!failed_ && !sink_.Write(tail)) failed_ = true;
  written_ += tail.size();
  return !failed_;
}

// ---- lapse-only records ----

std::string EncodeContainer(const ContainerRecord& c) {
  std::string out;
  AppendLength(out, c.db);
  AppendString(out, c.name);
  AppendUint64Le(out, static_cast<uint64_t>(c.default_ttl));
  out.push_back(c.evictable ? 1 : 0);
  AppendUint64Le(out, static_cast<uint64_t>(c.ru_per_second));
  return out;
}

std::optional<ContainerRecord> DecodeContainer(std::string_view bytes) {
  Reader r(bytes);
  ContainerRecord c;
  auto db = r.Length();
  auto name = db ? r.String() : std::nullopt;
  auto ttl = name ? r.Uint64Le() : std::nullopt;
  auto evictable = ttl ? r.Byte() : std::nullopt;
  auto ru = evictable ? r.Uint64Le() : std::nullopt;
  if (!ru || !r.AtEnd() || *db > UINT32_MAX) return std::nullopt;
  c.db = static_cast<uint32_t>(*db);
  c.name = std::move(*name);
  c.default_ttl = static_cast<int64_t>(*ttl);
  c.evictable = *evictable != 0;
  c.ru_per_second = static_cast<int64_t>(*ru);
  return c;
}

std::string EncodeItemsHeader(uint32_t db, std::string_view container, size_t count) {
  std::string out;
  AppendLength(out, db);
  AppendString(out, container);
  AppendLength(out, count);
  return out;
}

void AppendItem(std::string& out, std::string_view id, std::string_view members, int64_t ttl, int64_t last_write_ms,
                uint64_t etag) {
  AppendString(out, id);
  AppendString(out, members);
  AppendUint64Le(out, static_cast<uint64_t>(ttl));
  AppendUint64Le(out, static_cast<uint64_t>(last_write_ms));
  AppendUint64Le(out, etag);
}

bool DecodeItems(std::string_view bytes, uint32_t* db, std::string* container, std::vector<ItemRecord>* items) {
  Reader r(bytes);
  auto d = r.Length();
  auto name = d ? r.String() : std::nullopt;
  auto count = name ? r.Length() : std::nullopt;
  if (!count || *d > UINT32_MAX) return false;
  *db = static_cast<uint32_t>(*d);
  *container = std::move(*name);
  for (uint64_t k = 0; k < *count; ++k) {
    ItemRecord item;
    auto id = r.String();
    auto members = id ? r.String() : std::nullopt;
    auto ttl = members ? r.Uint64Le() : std::nullopt;
    auto ts = ttl ? r.Uint64Le() : std::nullopt;
    auto etag = ts ? r.Uint64Le() : std::nullopt;
    if (!etag) return false;
    items->push_back({std::move(*id), std::move(*members), static_cast<int64_t>(*ttl), static_cast<int64_t>(*ts), *etag});
  }
  return r.AtEnd();
}

// ---- Loading ----

namespace {

class Loader {
 public:
  Loader(std::string_view bytes, LoadTarget& target, const CollectionLimits& limits, int64_t now_ms, LoadStats* stats)
      : bytes_(bytes), r_(bytes), target_(target), limits_(limits), now_ms_(now_ms), stats_(stats) {}

  std::optional<std::string> Run();

 private:
  std::optional<std::string> Error(std::string what, size_t offset) {
    return what + " at byte offset " + std::to_string(offset);
  }
  std::optional<std::string> Truncated() { return Error("unexpected end of file", bytes_.size()); }
  std::optional<std::string> Key(uint8_t type, int64_t deadline, size_t record_start);
  std::optional<std::string> AuxField(size_t record_start);
  bool FieldTtls(std::string_view value);

  std::string_view bytes_;
  Reader r_;
  LoadTarget& target_;
  const CollectionLimits& limits_;
  int64_t now_ms_;
  LoadStats* stats_;
  uint32_t db_ = 0;
  int version_ = 0;
};

std::optional<std::string> Loader::Run() {
  if (bytes_.size() < 9 || bytes_.substr(0, 5) != kMagic) return Error("not an RDB file (no REDIS signature)", 0);
  for (char c : bytes_.substr(5, 4)) {
    if (c < '0' || c > '9') return Error("not an RDB file (bad version)", 5);
    version_ = version_ * 10 + (c - '0');
  }
  if (version_ < 1 || version_ > kVersion) {
    return Error("RDB version " + std::to_string(version_) + " is not supported (lapse reads 1 to 10)", 5);
  }
  r_.Raw(9);
  int64_t deadline = kNoDeadline;
  while (true) {
    size_t start = r_.position();
    auto type = r_.Byte();
    if (!type) return Truncated();
    switch (*type) {
      case kOpcodeEof: {
        size_t end = r_.position();
        if (version_ < 5) return std::nullopt;
        auto crc = r_.Uint64Le();
        if (!crc) return Truncated();
        if (*crc != 0 && Crc64(0, bytes_.substr(0, end)) != *crc) return Error("wrong RDB checksum", end);
        return std::nullopt;
      }
      case kOpcodeSelectDb: {
        auto db = r_.Length();
        if (!db) return Truncated();
        if (*db > UINT32_MAX || target_.DbFor(static_cast<uint32_t>(*db), "") == nullptr) {
          return Error("database " + std::to_string(*db) + " is out of range", start);
        }
        db_ = static_cast<uint32_t>(*db);
        continue;
      }
      case kOpcodeResizeDb: {
        auto keys = r_.Length();
        if (!keys || !r_.Length()) return Truncated();
        continue;
      }
      case kOpcodeExpireTimeMs: {
        auto ms = r_.Uint64Le();
        if (!ms) return Truncated();
        deadline = static_cast<int64_t>(*ms);
        continue;
      }
      case kOpcodeExpireTime: {
        auto raw = r_.Raw(4);
        if (!raw) return Truncated();
        uint32_t s = 0;
        for (int k = 3; k >= 0; --k) s = (s << 8) | static_cast<uint8_t>((*raw)[k]);
        deadline = static_cast<int64_t>(s) * 1000;
        continue;
      }
      case kOpcodeIdle:
        if (!r_.Length()) return Truncated();
        continue;
      case kOpcodeFreq:
        if (!r_.Byte()) return Truncated();
        continue;
      case kOpcodeAux:
        if (auto err = AuxField(start)) return err;
        continue;
      case kOpcodeModuleAux:
        return Error("module data is not supported", start);
      case kOpcodeFunction2: {
        auto code = r_.String();
        if (!code) return Truncated();
        if (!target_.OnFunction(std::move(*code))) return Error("function library refused", start);
        continue;
      }
      case kOpcodeFunctionPreGa:
        return Error("pre-GA function format not supported", start);
      default:
        if (!IsValueType(*type)) return Error("unknown record type " + std::to_string(*type), start);
        if (auto err = Key(*type, deadline, start)) return err;
        deadline = kNoDeadline;
    }
  }
}

std::optional<std::string> Loader::Key(uint8_t type, int64_t deadline, size_t record_start) {
  auto key = r_.String();
  if (!key) return Truncated();
  Db* db = target_.DbFor(db_, *key);
  if (db->Find(*key, now_ms_) != nullptr) return Error("duplicate key '" + *key + "'", record_start);
  size_t value_start = r_.position();
  std::string error;
  Entry* e = ReadValue(r_, type, *db, *key, limits_, now_ms_, &error);
  if (e == nullptr && !error.empty()) {
    db->Erase(*key, now_ms_);
    if (r_.ran_short()) return Truncated();
    return Error("bad value of key '" + *key + "' (" + error + ")", value_start);
  }
  if (e == nullptr) {
    ++stats_->empty_skipped;
    return std::nullopt;
  }
  if (deadline != kNoDeadline && deadline <= now_ms_) {
    // Its deadline passed while the server was down: it was never visible, so it is not kept.
    db->Erase(*key, now_ms_);
    ++stats_->keys_expired;
    return std::nullopt;
  }
  if (deadline != kNoDeadline) db->SetDeadline(e, deadline, now_ms_);
  ++stats_->keys_loaded;
  return std::nullopt;
}

std::optional<std::string> Loader::AuxField(size_t record_start) {
  auto key = r_.String();
  auto value = key ? r_.String() : std::nullopt;
  if (!value) return Truncated();
  if (*key == kAuxHashFieldTtls) {
    if (!FieldTtls(*value)) return Error("malformed lapse-hfe field", record_start);
  } else if (key->rfind("lapse-", 0) == 0) {
    if (!target_.OnLapseAux(*key, *value, now_ms_)) return Error("malformed " + *key + " field", record_start);
  }
  // Any other AUX field is information only (redis-ver, ctime, ...), as for Redis.
  return std::nullopt;
}

bool Loader::FieldTtls(std::string_view value) {
  Reader r(value);
  auto key = r.String();
  auto count = key ? r.Length() : std::nullopt;
  if (!count) return false;
  Db* db = target_.DbFor(db_, *key);
  Entry* e = db->Find(*key, now_ms_);
  for (uint64_t k = 0; k < *count; ++k) {
    auto field = r.String();
    auto deadline = field ? r.Uint64Le() : std::nullopt;
    if (!deadline) return false;
    if (e == nullptr) continue;  // the hash itself expired while down
    if (e->type() != ValueType::kHash) return false;
    hash::SetFieldDeadline(*db, e, *field, static_cast<int64_t>(*deadline), hash::TtlCondition::kAlways, now_ms_,
                           limits_);
    if (hash::Size(e) == 0) {
      db->Erase(*key, now_ms_);
      e = nullptr;
    }
  }
  return r.AtEnd();
}

}  // namespace

std::optional<std::string> LoadSnapshot(std::string_view bytes, LoadTarget& target, const CollectionLimits& limits,
                                        int64_t now_ms, LoadStats* stats) {
  return Loader(bytes, target, limits, now_ms, stats).Run();
}

std::optional<std::string> LoadSnapshotFile(const std::string& path, LoadTarget& target,
                                            const CollectionLimits& limits, int64_t now_ms, LoadStats* stats) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return path + ": " + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return path + ": " + std::strerror(err);
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return path + ": unexpected end of file at byte offset 0";
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return path + ": " + std::strerror(errno);
  ::madvise(map, size, MADV_SEQUENTIAL);
  auto error = LoadSnapshot(std::string_view(static_cast<const char*>(map), size), target, limits, now_ms, stats);
  ::munmap(map, size);
  if (error) return path + ": " + *error;
  return std::nullopt;
}

}  // namespace lapse::engine::rdb
