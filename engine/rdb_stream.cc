#include "engine/rdb_stream.h"

#include <charconv>
#include <span>
#include <vector>

#include "engine/db.h"
#include "engine/rdb_packed.h"
#include "engine/rdb_value.h"
#include "engine/stream.h"

namespace lapse::engine::rdb {

namespace {

constexpr int64_t kFlagDeleted = 1, kFlagSameFields = 2;
// Redis's stream-node-max-entries / -bytes defaults.
constexpr size_t kNodeMaxEntries = 100, kNodeMaxBytes = 4096;

std::string RawId(StreamId id) {
  std::string out(16, '\0');
  for (int k = 0; k < 8; ++k) {
    out[k] = static_cast<char>((id.ms >> (56 - 8 * k)) & 0xff);
    out[8 + k] = static_cast<char>((id.seq >> (56 - 8 * k)) & 0xff);
  }
  return out;
}

StreamId ParseRawId(std::string_view raw) {
  StreamId id;
  for (int k = 0; k < 8; ++k) {
    id.ms = (id.ms << 8) | static_cast<uint8_t>(raw[k]);
    id.seq = (id.seq << 8) | static_cast<uint8_t>(raw[8 + k]);
  }
  return id;
}

void AppendId(std::string& out, StreamId id) {
  AppendLength(out, id.ms);
  AppendLength(out, id.seq);
}

// One node under construction: the entries Range reports, coded against the first.
class NodeBuilder {
 public:
  bool empty() const { return entries_ == 0; }
  bool Full() const { return entries_ >= kNodeMaxEntries || body_.size() >= kNodeMaxBytes; }
  StreamId master() const { return master_; }

  void Add(StreamId id, std::span<const std::string_view> fv) {
    size_t fields = fv.size() / 2;
    if (entries_ == 0) {
      master_ = id;
      master_fields_.clear();
      for (size_t k = 0; k < fv.size(); k += 2) master_fields_.emplace_back(fv[k]);
    }
    bool same = fields == master_fields_.size();
    for (size_t k = 0; same && k < fields; ++k) same = fv[2 * k] == master_fields_[k];
    body_.AppendInteger(same ? kFlagSameFields : 0);
    body_.AppendInteger(static_cast<int64_t>(id.ms - master_.ms));
    body_.AppendInteger(static_cast<int64_t>(id.seq - master_.seq));
    if (same) {
      for (size_t k = 0; k < fields; ++k) body_.Append(fv[2 * k + 1]);
    } else {
      body_.AppendInteger(static_cast<int64_t>(fields));
      for (std::string_view s : fv) body_.Append(s);
    }
    body_.AppendInteger(static_cast<int64_t>(same ? fields + 3 : 2 * fields + 4));
    ++entries_;
  }

  // The node's listpack: the master entry, then the entries already coded.
  std::string Finish() {
    ListpackWriter lp;
    lp.AppendInteger(static_cast<int64_t>(entries_));
    lp.AppendInteger(0);
    lp.AppendInteger(static_cast<int64_t>(master_fields_.size()));
    for (const std::string& f : master_fields_) lp.Append(f);
    lp.AppendInteger(0);
    size_t count = lp.count() + body_.count();
    std::string head = lp.Finish(), body = body_.Finish();
    // Splice: the master's entries followed by the body's, under one header.
    std::string out = head.substr(0, head.size() - 1) + body.substr(6);
    uint32_t total = static_cast<uint32_t>(out.size());
    for (int k = 0; k < 4; ++k) out[k] = static_cast<char>((total >> (8 * k)) & 0xff);
    uint16_t n = count < 65535 ? static_cast<uint16_t>(count) : 65535;
    out[4] = static_cast<char>(n & 0xff);
    out[5] = static_cast<char>(n >> 8);
    *this = NodeBuilder();
    return out;
  }

 private:
  StreamId master_;
  std::vector<std::string> master_fields_;
  ListpackWriter body_;
  size_t entries_ = 0;
};

void AppendGroups(std::string& out, const Stream& s, bool compress) {
  AppendLength(out, s.groups().size());
  for (const auto& [name, group] : s.groups()) {
    AppendStringEncoded(out, name, compress);
    AppendId(out, group.last_id);
    AppendLength(out, static_cast<uint64_t>(group.entries_read));
    AppendLength(out, group.pel.size());
    for (const auto& [id, pending] : group.pel) {
      out.append(RawId(id));
      AppendUint64Le(out, static_cast<uint64_t>(pending.delivery_time_ms));
      AppendLength(out, pending.delivery_count);
    }
    AppendLength(out, group.consumers.size());
    for (const auto& [consumer, state] : group.consumers) {
      AppendStringEncoded(out, consumer, compress);
      AppendUint64Le(out, static_cast<uint64_t>(state.seen_time_ms));
      AppendLength(out, state.pending.size());
      for (const auto& [id, unused] : state.pending) out.append(RawId(id));
    }
  }
}

bool Fail(std::string* error, std::string what) {
  *error = std::move(what);
  return false;
}

bool ToInt(std::string_view s, int64_t* v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size();
}

// Appends the live entries of one node's listpack to `s`.
bool ReadNode(StreamId master, std::string_view listpack, Stream& s, std::string* error) {
  std::vector<std::string> el;
  if (!ForEachListpackElement(listpack, [&](std::string_view e) {
        el.emplace_back(e);
        return true;
      })) {
    return Fail(error, "malformed stream node");
  }
  size_t i = 0;
  auto next_int = [&](int64_t* v) { return i < el.size() && ToInt(el[i++], v); };
  int64_t live = 0, deleted = 0, master_count = 0, zero = 0;
  if (!next_int(&live) || !next_int(&deleted) || !next_int(&master_count) || master_count < 0 ||
      i + master_count >= el.size()) {
    return Fail(error, "malformed stream master entry");
  }
  std::vector<std::string_view> master_fields(el.begin() + i, el.begin() + i + master_count);
  i += master_count;
  if (!next_int(&zero) || zero != 0) return Fail(error, "malformed stream master entry");
  std::vector<std::string_view> fv;
  while (i < el.size()) {
    int64_t flags = 0, ms_diff = 0, seq_diff = 0, fields = master_count, lp_count = 0;
    if (!next_int(&flags) || !next_int(&ms_diff) || !next_int(&seq_diff)) return Fail(error, "malformed stream entry");
    bool same = flags & kFlagSameFields;
    if (!same && (!next_int(&fields) || fields < 0)) return Fail(error, "malformed stream entry");
    size_t take = same ? fields : 2 * fields;
    if (i + take >= el.size()) return Fail(error, "malformed stream entry");
    fv.clear();
    for (size_t k = 0; k < static_cast<size_t>(fields); ++k) {
      fv.push_back(same ? master_fields[k] : std::string_view(el[i + 2 * k]));
      fv.push_back(same ? std::string_view(el[i + k]) : std::string_view(el[i + 2 * k + 1]));
    }
    i += take;
    if (!next_int(&lp_count)) return Fail(error, "malformed stream entry");
    StreamId id{master.ms + static_cast<uint64_t>(ms_diff), master.seq + static_cast<uint64_t>(seq_diff)};
    if (flags & kFlagDeleted) continue;
    if (fv.empty() || (s.length() > 0 && id <= s.last_id())) return Fail(error, "stream entries out of order");
    s.Append(id, fv);
  }
  return true;
}

bool ReadId(Reader& r, StreamId* id) {
  auto ms = r.Length();
  auto seq = ms ? r.Length() : std::nullopt;
  if (!seq) return false;
  *id = {*ms, *seq};
  return true;
}

bool ReadGroups(Reader& r, uint8_t type, Stream& s, int64_t now_ms, std::string* error) {
  auto groups = r.Length();
  if (!groups) return Fail(error, "truncated stream groups");
  for (uint64_t g = 0; g < *groups; ++g) {
    auto name = r.String();
    StreamGroup group;
    if (!name || !ReadId(r, &group.last_id)) return Fail(error, "truncated stream group");
    if (type == kTypeStreamListpacks2) {
      auto read = r.Length();
      if (!read) return Fail(error, "truncated stream group");
      group.entries_read = static_cast<int64_t>(*read);
    } else {
      group.entries_read = s.EstimateDistance(group.last_id);
    }
    auto pel = r.Length();
    if (!pel) return Fail(error, "truncated stream PEL");
    for (uint64_t k = 0; k < *pel; ++k) {
      auto raw = r.Raw(16);
      auto time = raw ? r.Uint64Le() : std::nullopt;
      auto count = time ? r.Length() : std::nullopt;
      if (!count) return Fail(error, "truncated stream PEL");
      group.pel[ParseRawId(*raw)] = StreamPending{{}, static_cast<int64_t>(*time), *count};
    }
    auto consumers = r.Length();
    if (!consumers) return Fail(error, "truncated stream consumers");
    for (uint64_t c = 0; c < *consumers; ++c) {
      auto consumer = r.String();
      auto seen = consumer ? r.Uint64Le() : std::nullopt;
      auto pending = seen ? r.Length() : std::nullopt;
      if (!pending) return Fail(error, "truncated stream consumer");
      StreamConsumer& state = group.consumers[*consumer];
      state.seen_time_ms = static_cast<int64_t>(*seen);
      for (uint64_t k = 0; k < *pending; ++k) {
        auto raw = r.Raw(16);
        if (!raw) return Fail(error, "truncated stream consumer");
        auto it = group.pel.find(ParseRawId(*raw));
        if (it == group.pel.end()) return Fail(error, "stream consumer entry not in its group's PEL");
        it->second.consumer = *consumer;
        state.pending[it->first];
      }
    }
    if (!s.groups().emplace(std::move(*name), std::move(group)).second) return Fail(error, "duplicate stream group");
  }
  return true;
}

}  // namespace

void AppendStream(std::string& out, const Entry* e, bool compress) {
  const Stream& s = stream::Of(e);
  std::vector<std::pair<StreamId, std::string>> nodes;
  NodeBuilder node;
  s.Range(StreamId::Min(), StreamId::Max(), false, [&](StreamId id, std::span<const std::string_view> fv) {
    if (!node.empty() && node.Full()) {
      StreamId master = node.master();
      nodes.emplace_back(master, node.Finish());
    }
    node.Add(id, fv);
    return true;
  });
  if (!node.empty()) {
    StreamId master = node.master();
    nodes.emplace_back(master, node.Finish());
  }
  out.push_back(static_cast<char>(kTypeStreamListpacks2));
  AppendLength(out, nodes.size());
  for (const auto& [master, listpack] : nodes) {
    AppendString(out, RawId(master));
    AppendStringEncoded(out, listpack, compress);
  }
  AppendLength(out, s.length());
  AppendId(out, s.last_id());
  AppendId(out, s.first_id());
  AppendId(out, s.max_deleted_id());
  AppendLength(out, s.entries_added());
  AppendGroups(out, s, compress);
}

Entry* ReadStream(Reader& r, uint8_t type, Db& db, std::string_view key, int64_t now_ms, std::string* error) {
  Entry* e = stream::Create(db, key, now_ms);
  Stream& s = stream::Of(e);
  auto nodes = r.Length();
  if (!nodes) return Fail(error, "truncated stream"), nullptr;
  for (uint64_t k = 0; k < *nodes; ++k) {
    auto master = r.String();
    if (!master || master->size() != 16) return Fail(error, "bad stream node key"), nullptr;
    auto listpack = r.String();
    if (!listpack) return Fail(error, "truncated stream node"), nullptr;
    if (!ReadNode(ParseRawId(*master), *listpack, s, error)) return nullptr;
  }
  StreamId last, first, max_deleted;
  auto length = r.Length();
  if (!length || !ReadId(r, &last)) return Fail(error, "truncated stream"), nullptr;
  uint64_t entries_added = *length;
  if (type == kTypeStreamListpacks2) {
    auto added = ReadId(r, &first) && ReadId(r, &max_deleted) ? r.Length() : std::nullopt;
    if (!added) return Fail(error, "truncated stream"), nullptr;
    entries_added = *added;
  }
  if (*length != s.length()) return Fail(error, "stream length does not match its entries"), nullptr;
  if (s.length() > 0 && last < s.last_id()) return Fail(error, "stream last id below its entries"), nullptr;
  s.SetLastId(last);
  s.SetMaxDeletedId(max_deleted);
  s.SetEntriesAdded(entries_added);
  if (!ReadGroups(r, type, s, now_ms, error)) return nullptr;
  return e;
}

}  // namespace lapse::engine::rdb
