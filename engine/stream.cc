// File: engine/stream.cc
//
// The packed stream nodes of engine/stream.h. A node is only ever walked from its start (ids
// are deltas), so a reverse walk first indexes the node's entries in one forward pass; nodes
// are small (<= 100 entries), so that costs one short vector per node visited.
#include "engine/stream.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>

#include "engine/collection.h"
#include "engine/db.h"
#include "engine/entry.h"
#include "engine/packed.h"

namespace lapse::engine {

namespace {

constexpr uint64_t kDeletedBit = 1;
constexpr uint64_t kSameFieldsBit = 2;
// The header keeps two flag bits below the ms delta, so a delta of 2^62 or more (ids may jump
// anywhere in 64 bits) is written as this escape followed by the whole delta.
constexpr uint64_t kWideMsDelta = (uint64_t{1} << 62) - 1;

uint64_t ReadVarint(const char*& p) {
  uint64_t v = 0;
  int shift = 0;
  for (;;) {
    auto byte = static_cast<uint8_t>(*p++);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
    shift += 7;
  }
}

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// A field or value: a canonical integer whose zigzag fits 63 bits as (zigzag << 1) | 1,
// anything else as (length << 1) then the bytes.
void AppendTagged(std::string* out, std::string_view s) {
  int64_t v;
  if (ParseCanonicalInt(s, &v)) {
    uint64_t z = ZigZag(v);
    if (z < (uint64_t{1} << 63)) return AppendVarint(out, (z << 1) | 1);
  }
  AppendVarint(out, s.size() << 1);
  out->append(s);
}

// Reads a tagged string; an integer is written out as text into *scratch.
std::string_view ReadTagged(const char*& p, std::string* scratch) {
  uint64_t h = ReadVarint(p);
  if (h & 1) {
    *scratch = std::to_string(UnZigZag(h >> 1));
    return *scratch;
  }
  std::string_view s(p, h >> 1);
  p += h >> 1;
  return s;
}

void SkipTagged(const char*& p) {
  uint64_t h = ReadVarint(p);
  if (!(h & 1)) p += h >> 1;
}

// Appends one entry coded against `prev`, the id of the entry before it in its node.
void AppendEntry(std::string* out, StreamId prev, StreamId id, bool same_fields,
                 std::span<const std::string_view> field_values) {
  uint64_t ms_delta = id.ms - prev.ms;
  AppendVarint(out, (std::min(ms_delta, kWideMsDelta) << 2) | (same_fields ? kSameFieldsBit : 0));
  if (ms_delta >= kWideMsDelta) AppendVarint(out, ms_delta);
  AppendVarint(out, ms_delta == 0 ? id.seq - prev.seq : id.seq);
  if (same_fields) {
    for (size_t i = 1; i < field_values.size(); i += 2) AppendTagged(out, field_values[i]);
    return;
  }
  AppendVarint(out, field_values.size() / 2);
  for (std::string_view s : field_values) AppendTagged(out, s);
}

// Whether the node's master fields are exactly the entry's field names.
bool MatchesMasterFields(const std::string& node, std::span<const std::string_view> field_values) {
  const char* p = node.data();
  if (ReadVarint(p) != field_values.size() / 2) return false;
  std::string scratch;
  for (size_t i = 0; i < field_values.size(); i += 2) {
    if (ReadTagged(p, &scratch) != field_values[i]) return false;
  }
  return true;
}

// Redis's string2ull: a canonical integer, or else what strtoull accepts whole (leading
// spaces, a sign — a minus wraps around — and leading zeros), without overflow.
bool ParseULongLong(std::string_view s, uint64_t* out) {
  int64_t v;
  if (ParseCanonicalInt(s, &v)) {
    if (v < 0) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return false;
  uint64_t u = 0;
  auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), u);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  *out = negative ? uint64_t{0} - u : u;
  return true;
}

}  // namespace

std::string StreamId::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

bool StreamId::Increment() {
  if (seq != UINT64_MAX) return ++seq, true;
  if (ms == UINT64_MAX) return false;
  ++ms, seq = 0;
  return true;
}

bool StreamId::Decrement() {
  if (seq != 0) return --seq, true;
  if (ms == 0) return false;
  --ms, seq = UINT64_MAX;
  return true;
}

bool ParseStreamId(std::string_view text, uint64_t missing_seq, StreamId* id) {
  if (text.size() > 127) return false;
  size_t dash = text.find('-');
  if (!ParseULongLong(text.substr(0, dash), &id->ms)) return false;
  if (dash == std::string_view::npos) return id->seq = missing_seq, true;
  return ParseULongLong(text.substr(dash + 1), &id->seq);
}

StreamId Stream::first_id() const {
  StreamId first;
  for (const auto& [master, node] : nodes_) {
    bool found = false;
    WalkNode(node, master, false, [&](StreamId id, bool deleted, size_t, const char*) {
      if (deleted) return true;
      first = id, found = true;
      return false;
    });
    if (found) break;
  }
  return first;
}

void Stream::StartNode(StreamId id, std::span<const std::string_view> field_values) {
  // The node before is complete: give back the slack its buffer grew with.
  if (!nodes_.empty()) nodes_.rbegin()->second.bytes.shrink_to_fit();
  Node& node = nodes_[id];
  AppendVarint(&node.bytes, field_values.size() / 2);
  for (size_t i = 0; i < field_values.size(); i += 2) AppendTagged(&node.bytes, field_values[i]);
  node.last = id;
}

void Stream::Append(StreamId id, std::span<const std::string_view> field_values) {
  bool fresh = nodes_.empty();
  if (!fresh) {
    const Node& tail = nodes_.rbegin()->second;
    fresh = tail.total >= kNodeMaxEntries || tail.bytes.size() >= kNodeMaxBytes;
  }
  if (fresh) StartNode(id, field_values);
  Node& node = nodes_.rbegin()->second;
  StreamId prev = node.total == 0 ? id : node.last;
  AppendEntry(&node.bytes, prev, id, MatchesMasterFields(node.bytes, field_values), field_values);
  node.last = id;
  ++node.total, ++node.live;
  ++length_, ++entries_added_;
  last_id_ = id;
}

void Stream::WalkNode(const Node& node, StreamId master, bool reverse,
                      const std::function<bool(StreamId, bool, size_t, const char*)>& fn) {
  const char* begin = node.bytes.data();
  const char* p = begin;
  uint64_t master_fields = ReadVarint(p);
  for (uint64_t i = 0; i < master_fields; ++i) SkipTagged(p);
  struct Item {
    StreamId id;
    bool deleted;
    size_t header;
    const char* body;
  };
  std::vector<Item> items;
  if (reverse) items.reserve(node.total);
  StreamId prev = master;
  for (uint32_t n = 0; n < node.total; ++n) {
    size_t header_offset = static_cast<size_t>(p - begin);
    uint64_t header = ReadVarint(p);
    uint64_t ms_delta = header >> 2;
    if (ms_delta == kWideMsDelta) ms_delta = ReadVarint(p);
    uint64_t seq = ReadVarint(p);
    StreamId id{prev.ms + ms_delta, ms_delta == 0 ? prev.seq + seq : seq};
    const char* body = p;
    if (header & kSameFieldsBit) {
      for (uint64_t i = 0; i < master_fields; ++i) SkipTagged(p);
    } else {
      uint64_t pairs = ReadVarint(p);
      for (uint64_t i = 0; i < 2 * pairs; ++i) SkipTagged(p);
    }
    prev = id;
    bool deleted = header & kDeletedBit;
    if (reverse) {
      items.push_back({id, deleted, header_offset, body});
    } else if (!fn(id, deleted, header_offset, body)) {
      return;
    }
  }
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (!fn(it->id, it->deleted, it->header, it->body)) return;
  }
}

void Stream::DecodeBody(const Node& node, const char* body, bool same_fields, std::vector<std::string>* scratch,
                        std::vector<std::string_view>* out) {
  out->clear();
  const char* p = body;
  if (!same_fields) {
    uint64_t pairs = ReadVarint(p);
    scratch->resize(std::max<size_t>(scratch->size(), 2 * pairs));
    for (uint64_t i = 0; i < 2 * pairs; ++i) out->push_back(ReadTagged(p, &(*scratch)[i]));
    return;
  }
  const char* fields = node.bytes.data();
  uint64_t n = ReadVarint(fields);
  scratch->resize(std::max<size_t>(scratch->size(), 2 * n));
  for (uint64_t i = 0; i < n; ++i) {
    out->push_back(ReadTagged(fields, &(*scratch)[2 * i]));
    out->push_back(ReadTagged(p, &(*scratch)[2 * i + 1]));
  }
}

void Stream::Range(StreamId start, StreamId end, bool reverse, const StreamEntryFn& fn) const {
  if (start > end || nodes_.empty()) return;
  std::vector<std::string> scratch;
  std::vector<std::string_view> field_values;
  bool stop = false;
  auto visit = [&](const Node& node, StreamId master) {
    WalkNode(node, master, reverse, [&](StreamId id, bool deleted, size_t header, const char* body) {
      // A deleted entry may lie out of order (XSETID can move the last id back below it), so
      // it is skipped before it can end the walk, as Redis's iterator does.
      if (deleted) return true;
      if (reverse ? id < start : id > end) return !(stop = true);
      if (id < start || id > end) return true;
      DecodeBody(node, body, static_cast<uint8_t>(node.bytes[header]) & kSameFieldsBit, &scratch, &field_values);
      if (!fn(id, field_values)) stop = true;
      return !stop;
    });
  };
  if (!reverse) {
    // The node holding `start` is the last one whose master id is <= start.
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end() && !stop; ++it) visit(it->second, it->first);
    return;
  }
  auto it = nodes_.upper_bound(end);
  while (it != nodes_.begin() && !stop) {
    --it;
    visit(it->second, it->first);
  }
}

bool Stream::Delete(StreamId id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  Node& node = it->second;
  if (id > node.last) return false;
  bool found = false;
  WalkNode(node, it->first, false, [&](StreamId at, bool deleted, size_t header, const char*) {
    if (deleted || at < id) return true;
    if (at == id) {
      node.bytes[header] = static_cast<char>(node.bytes[header] | kDeletedBit);
      found = true;
    }
    return false;
  });
  if (!found) return false;
  --length_;
  if (--node.live == 0) nodes_.erase(it);
  if (id > max_deleted_id_) max_deleted_id_ = id;
  return true;
}

size_t Stream::TrimInsideNode(Node& node, StreamId master, const StreamTrim& trim) {
  size_t dropped = 0;
  WalkNode(node, master, false, [&](StreamId id, bool deleted, size_t header, const char*) {
    // Redis's streamTrim stops at the first id >= MINID even when that entry is deleted.
    if (trim.strategy == StreamTrim::Strategy::kMaxLen ? length_ <= trim.maxlen : id >= trim.minid) return false;
    if (deleted) return true;
    node.bytes[header] = static_cast<char>(node.bytes[header] | kDeletedBit);
    --node.live, --length_, ++dropped;
    return true;
  });
  return dropped;
}

size_t Stream::Trim(const StreamTrim& trim) {
  if (trim.strategy == StreamTrim::Strategy::kNone) return 0;
  size_t dropped = 0;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (trim.strategy == StreamTrim::Strategy::kMaxLen && length_ <= trim.maxlen) break;
    Node& node = it->second;
    if (trim.limit != 0 && dropped + node.live > trim.limit) break;
    bool whole = trim.strategy == StreamTrim::Strategy::kMaxLen ? length_ - node.live >= trim.maxlen
                                                                : node.last < trim.minid;
    if (whole) {
      length_ -= node.live, dropped += node.live;
      it = nodes_.erase(it);
      continue;
    }
    // A node only partly due stays whole under `~`; exactly, its due head is marked.
    if (!trim.approx) dropped += TrimInsideNode(node, it->first, trim);
    break;
  }
  return dropped;
}

// ---- Consumer groups ----

bool StreamGroup::AddConsumer(std::string_view name, int64_t now_ms) {
  auto [it, created] = consumers.try_emplace(std::string(name));
  if (created) it->second.seen_time_ms = now_ms;
  return created;
}

void StreamGroup::Deliver(StreamId id, std::string_view consumer, int64_t now_ms) {
  auto [it, fresh] = pel.try_emplace(id);
  if (!fresh) {
    auto owner = consumers.find(it->second.consumer);
    if (owner != consumers.end()) owner->second.pending.erase(id);
  }
  it->second = StreamPending{std::string(consumer), now_ms, 1};
  consumers.find(consumer)->second.pending.emplace(id, std::monostate{});
}

bool StreamGroup::Acknowledge(StreamId id) {
  auto it = pel.find(id);
  if (it == pel.end()) return false;
  auto owner = consumers.find(it->second.consumer);
  if (owner != consumers.end()) owner->second.pending.erase(id);
  pel.erase(it);
  return true;
}

StreamGroup* Stream::FindGroup(std::string_view name) {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : &it->second;
}

bool Stream::Lookup(StreamId id, const StreamEntryFn& fn) const {
  bool found = false;
  Range(id, id, false, [&](StreamId at, std::span<const std::string_view> fv) {
    found = true;
    return fn(at, fv);
  });
  return found;
}

StreamId Stream::LastLiveId() const {
  StreamId last;
  Range(StreamId::Min(), StreamId::Max(), true, [&](StreamId id, std::span<const std::string_view>) {
    last = id;
    return false;
  });
  return last;
}

bool Stream::RangeHasTombstones(StreamId start, StreamId end) const {
  if (length_ == 0 || max_deleted_id_ == StreamId::Min()) return false;
  if (first_id() > max_deleted_id_) return false;
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

int64_t Stream::EstimateDistance(StreamId id) const {
  if (entries_added_ == 0) return 0;
  auto added = static_cast<int64_t>(entries_added_);
  if (length_ == 0 && id <= last_id_) return added;
  if (id == last_id_) return added;
  if (id > last_id_) return StreamGroup::kInvalidEntriesRead;
  StreamId first = first_id();
  if (max_deleted_id_ == StreamId::Min() || max_deleted_id_ < first) {
    // No deletion ahead of the first entry: the counter follows from the length.
    if (id < first) return added - static_cast<int64_t>(length_);
    if (id == first) return added - static_cast<int64_t>(length_) + 1;
  }
  return StreamGroup::kInvalidEntriesRead;
}

void Stream::AdvanceGroup(StreamGroup& group, StreamId id) const {
  if (id <= group.last_id) return;
  if (group.entries_read != StreamGroup::kInvalidEntriesRead && !RangeHasTombstones(id, StreamId::Max())) {
    ++group.entries_read;
  } else if (entries_added_ != 0) {
    group.entries_read = EstimateDistance(id);
  }
  group.last_id = id;
}

std::optional<int64_t> Stream::Lag(const StreamGroup& group) const {
  if (entries_added_ == 0) return 0;
  auto added = static_cast<int64_t>(entries_added_);
  if (group.entries_read != StreamGroup::kInvalidEntriesRead && !RangeHasTombstones(group.last_id, StreamId::Max())) {
    return added - group.entries_read;
  }
  int64_t read = EstimateDistance(group.last_id);
  if (read == StreamGroup::kInvalidEntriesRead) return std::nullopt;
  return added - read;
}

size_t Stream::Bytes() const {
  // A std::map node: three pointers, a colour word, and the key and value it holds.
  constexpr size_t kTreeNodeBytes = 4 * sizeof(void*) + sizeof(StreamId) + sizeof(Node);
  size_t bytes = sizeof(Stream);
  for (const auto& [master, node] : nodes_) bytes += kTreeNodeBytes + node.bytes.capacity();
  // Groups: a tree node per group, per consumer, and per pending entry (twice: the group's
  // PEL and its consumer's).
  constexpr size_t kMapNode = 4 * sizeof(void*);
  for (const auto& [name, group] : groups_) {
    bytes += kMapNode + sizeof(std::string) + sizeof(StreamGroup) + name.capacity();
    for (const auto& [id, nack] : group.pel) bytes += 2 * (kMapNode + sizeof(StreamId)) + sizeof(nack);
    for (const auto& [consumer, state] : group.consumers) {
      bytes += kMapNode + sizeof(std::string) + sizeof(StreamConsumer) + consumer.capacity();
    }
  }
  return bytes;
}

namespace stream {

Entry* Create(Db& db, std::string_view key, int64_t now_ms) {
  Entry* e = db.Put(key, {}, ValueType::kStream, kNoDeadline, now_ms);
  auto* s = new Stream;
  e = db.ReserveValue(e, sizeof s);
  std::memcpy(e->mutable_value(), &s, sizeof s);
  e->set_value_len(sizeof s);
  e->set_collection_encoding(CollectionEncoding::kTable);
  return e;
}

Stream& Of(const Entry* e) {
  Stream* s;
  std::memcpy(&s, e->value().data(), sizeof s);
  return *s;
}

void DestroyTable(const Entry* e) { delete &Of(e); }

std::string CopyTable(const Entry* e) {
  auto* copy = new Stream(Of(e));
  return std::string(reinterpret_cast<const char*>(&copy), sizeof copy);
}

}  // namespace stream

}  // namespace lapse::engine
