// File: engine/stream.h
//
// Streams (XADD, XRANGE, XTRIM, ...): an append-only log of entries, each an id (ms-seq) and
// a list of field/value pairs, as Redis 7.0's.
//
// Layout: a sorted map of nodes keyed by the id of each node's first entry (its "master
// id"), each node one packed buffer of at most kNodeMaxEntries entries or kNodeMaxBytes
// bytes (Redis's stream-node-max-entries / -bytes defaults). Redis keeps a radix tree of
// listpacks; a std::map costs about one pointer-heavy tree node per 100 entries, which is
// noise beside the entries, and the packing is where the bytes go:
//
//   node   | field count | master fields ... | entry | entry | ...
//   entry  | header varint: id delta << 2 | same-fields << 1 | deleted |
//          | seq varint | values (same fields) or count + field/value pairs |
//
// An entry's id is coded against the entry before it in the node (deleted ones included):
// the ms difference in the header, then the seq difference when the ms is the same, else the
// seq itself. Consecutive XADD * ids thus cost two bytes. An entry whose field names are
// the master fields (the node's first entry's) stores only its values. Every field and value
// is a tagged varint: a canonical integer (Redis's string2ll form) as its zigzag value,
// anything else as its length and bytes — "42" costs one byte, where a listpack takes three.
//
// XDEL only flips the deleted bit of an entry in place (the bit sits in the header's first
// byte, so the varint never changes length), as Redis marks listpack entries; a node whose
// entries are all deleted is dropped.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lapse::engine {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;
  std::string ToString() const;
  // The id just after / before this one; false at the ends of the id space.
  bool Increment();
  bool Decrement();
  static constexpr StreamId Min() { return {0, 0}; }
  static constexpr StreamId Max() { return {UINT64_MAX, UINT64_MAX}; }
};

// How XADD and XTRIM cut a stream: Redis 7.0's streamAddTrimArgs.
struct StreamTrim {
  enum class Strategy { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  bool approx = false;  // `~`: drop whole nodes only
  size_t limit = 0;     // at most this many entries dropped (0: no limit)
  uint64_t maxlen = 0;
  StreamId minid;
};

// Consumer groups (XGROUP, XREADGROUP, XACK, ...), as Redis 7.0 keeps them: a group's last
// delivered id and read counter, its pending entries list (PEL: id -> the delivery's
// consumer, time and count), and its consumers, each with the ids of its own pending
// entries. Maps ordered by bytes, as Redis's radix trees are.
struct StreamPending {
  std::string consumer;
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 1;
};

struct StreamConsumer {
  int64_t seen_time_ms = 0;
  std::map<StreamId, std::monostate> pending;  // ids only: the group's PEL holds the rest
};

struct StreamGroup {
  static constexpr int64_t kInvalidEntriesRead = -1;
  StreamId last_id;
  int64_t entries_read = kInvalidEntriesRead;
  std::map<StreamId, StreamPending> pel;
  std::map<std::string, StreamConsumer, std::less<>> consumers;

  // Creates the consumer if absent; true when it was created.
  bool AddConsumer(std::string_view name, int64_t now_ms);
  // Adds `id` to the PEL of `consumer` (taking it from another consumer if pending there),
  // delivered now for the first time.
  void Deliver(StreamId id, std::string_view consumer, int64_t now_ms);
  // Drops `id` from the PEL; false when it was not pending.
  bool Acknowledge(StreamId id);
};

// One entry as a walk reports it: field_values alternates field and value; the views last
// only during the callback. The callback returns false to stop the walk.
using StreamEntryFn = std::function<bool(StreamId id, std::span<const std::string_view> field_values)>;

class Stream {
 public:
  static constexpr size_t kNodeMaxEntries = 100;
  static constexpr size_t kNodeMaxBytes = 4096;

  size_t length() const { return length_; }
  StreamId last_id() const { return last_id_; }
  StreamId max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  // The first live entry's id, {0,0} when empty (Redis's first_id).
  StreamId first_id() const;
  size_t node_count() const { return nodes_.size(); }

  // Appends an entry; requires id > last_id() and an even, non-empty field_values.
  void Append(StreamId id, std::span<const std::string_view> field_values);
  // Marks `id` deleted; false when there is no such live entry. Updates max_deleted_id.
  bool Delete(StreamId id);
  // Drops entries from the head as `trim` says; returns how many (Redis's streamTrim).
  size_t Trim(const StreamTrim& trim);
  // XSETID: the caller has checked the values against the stream.
  void SetLastId(StreamId id) { last_id_ = id; }
  void SetEntriesAdded(uint64_t n) { entries_added_ = n; }
  void SetMaxDeletedId(StreamId id) { max_deleted_id_ = id; }

  // Live entries with start <= id <= end, ascending (or descending when `reverse`), until
  // fn returns false.
  void Range(StreamId start, StreamId end, bool reverse, const StreamEntryFn& fn) const;

  // ---- Consumer groups ----
  using GroupMap = std::map<std::string, StreamGroup, std::less<>>;
  GroupMap& groups() { return groups_; }
  const GroupMap& groups() const { return groups_; }
  StreamGroup* FindGroup(std::string_view name);
  // The live entry `id`, if any: fn gets its fields.
  bool Lookup(StreamId id, const StreamEntryFn& fn) const;
  // The id of the last live entry, 0-0 when empty (Redis's streamLastValidID).
  StreamId LastLiveId() const;
  // Whether a deleted entry may lie in [start, end] (Redis's streamRangeHasTombstones).
  bool RangeHasTombstones(StreamId start, StreamId end) const;
  // How many entries were ever added up to `id`, or kInvalidEntriesRead when that cannot be
  // known (Redis's streamEstimateDistanceFromFirstEverEntry).
  int64_t EstimateDistance(StreamId id) const;
  // A group's read counter and last id after it was delivered `id` (streamReplyWithRange).
  void AdvanceGroup(StreamGroup& group, StreamId id) const;
  // XINFO's `lag` of a group, nullopt when unknown.
  std::optional<int64_t> Lag(const StreamGroup& group) const;

  // Heap bytes owned (MEMORY USAGE), an estimate of the map's nodes included.
  size_t Bytes() const;

 private:
  struct Node {
    std::string bytes;
    uint32_t total = 0;  // entries, deleted ones included
    uint32_t live = 0;
    StreamId last;       // the last entry's id (it may be deleted)
  };
  using NodeMap = std::map<StreamId, Node>;

  void StartNode(StreamId id, std::span<const std::string_view> field_values);
  size_t TrimInsideNode(Node& node, StreamId master, const StreamTrim& trim);
  // Walks one node's entries (deleted ones too when `with_deleted`), ascending or
  // descending; fn gets each entry's id, whether it is deleted, and its header's offset.
  static void WalkNode(const Node& node, StreamId master, bool reverse,
                       const std::function<bool(StreamId, bool deleted, size_t header_offset, const char* body)>& fn);
  static void DecodeBody(const Node& node, const char* body, bool same_fields, std::vector<std::string>* scratch,
                         std::vector<std::string_view>* out);

  NodeMap nodes_;
  size_t length_ = 0;
  StreamId last_id_;
  StreamId max_deleted_id_;
  uint64_t entries_added_ = 0;
  GroupMap groups_;
};

class Entry;
class Db;

// A stream as a key's value: the entry's value bytes are a pointer to its Stream, which the
// entry owns (CollectionEncoding::kTable), as a big sorted set's are to its ZTable.
namespace stream {
// A new, empty stream under `key`.
Entry* Create(Db& db, std::string_view key, int64_t now_ms);
Stream& Of(const Entry* e);
// Entry::Destroy's and ValueCopy's hooks.
void DestroyTable(const Entry* e);
std::string CopyTable(const Entry* e);
}  // namespace stream

// Parses "<ms>" or "<ms>-<seq>" (Redis's streamParseID, without the special forms): `seq`
// is filled with missing_seq when absent. False when not a valid id.
bool ParseStreamId(std::string_view text, uint64_t missing_seq, StreamId* id);

}  // namespace lapse::engine
