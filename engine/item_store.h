// File: engine/item_store.h
//
// One shard's part of every container: the items whose (container, id) hash to this shard,
// and the structures that find expired ones without scanning.
//
// Three kinds of item, three places:
//  - no own "ttl": they expire `default_ttl` seconds after their last write, so they sit in
//    one list per container in last-write order (a write moves the item to the tail). The
//    expired ones are always a prefix of that list, whatever the container's current
//    setting, so changing DefaultTimeToLive costs O(1): nothing is re-filed.
//  - own ttl > 0: the deadline is fixed at write time, so it is filed in this shard's timing
//    wheel. When it comes due the wheel moves the item to its container's `fired` list
//    (deadline order). Whether a fired item is expired still depends on the container: OFF
//    suspends all expiry, so fired items simply wait there until the container is on again.
//  - ttl -1: never expires; in no list.
// Reads do not depend on any of this: they evaluate the rule against the container's current
// setting inline. The lists only let the reclaimer and the counters find expired items in
// time proportional to their number.
//
// Containers belong to a database (engine/container.h): parts are found by (database, name),
// cached here per database so that the hot path takes no catalog mutex.
//
// Change feed: every create, replace and delete is appended to its container's feed
// (engine/change_feed.h) while this shard is held, so that the feed's order is the commit
// order. A deletion by time to live enters it when the item is physically deleted (by the
// reclaimer, or by a command that meets the expired item), not at its deadline, as in Cosmos
// DB; the deadline is recorded with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/container.h"
#include "engine/item_json.h"
#include "engine/key_events.h"
#include "engine/kv_table.h"
#include "engine/timing_wheel.h"

namespace lapse::engine {

struct ContainerPart;

struct Item {
  enum class List : uint8_t { kNone, kInherit, kFired };
  std::string id;
  std::string members;  // raw JSON members as stored (see item_json.h)
  int64_t last_write_ms = 0;
  int64_t ttl = kNoItemTtl;
  uint64_t etag = 0;
  uint64_t serial = 0;  // nonzero while filed in the wheel
  uint64_t feed_lsn = 0;  // the lsn of its last change in the container's feed (previousImageLSN)
  ContainerPart* part = nullptr;
  Item* prev = nullptr;
  Item* next = nullptr;
  List list = List::kNone;

  // The item's size for request-unit charges: the document IGET returns, so that a read, a
  // replace, a delete and its reclamation all charge for the same bytes.
  size_t Bytes() const { return RenderedItemBytes(id, members.size(), last_write_ms / 1000); }
  // The deadline under the container's current default, or nullopt if it never expires.
  std::optional<int64_t> Deadline(int64_t default_ttl) const {
    auto ttl_s = EffectiveTtl(default_ttl, ttl);
    if (!ttl_s) return std::nullopt;
    return last_write_ms + *ttl_s * 1000;
  }
  bool Expired(int64_t default_ttl, int64_t now_ms) const {
    auto d = Deadline(default_ttl);
    return d && now_ms >= *d;
  }
};

// Intrusive doubly linked list of items; O(1) append and unlink.
class ItemList {
 public:
  void PushBack(Item* item, Item::List kind);
  void Remove(Item* item);
  Item* front() const { return head_; }
  size_t size() const { return size_; }

 private:
  Item* head_ = nullptr;
  Item* tail_ = nullptr;
  size_t size_ = 0;
};

struct ContainerCounters {
  uint64_t reclaimed_background = 0;
  uint64_t reclaimed_lazy = 0;
  uint64_t reclaim_lag_max_ms = 0;
};

struct ContainerPart {
  explicit ContainerPart(std::shared_ptr<ContainerInfo> i) : info(std::move(i)) {}
  std::shared_ptr<ContainerInfo> info;
  KvTable index;  // id -> Entry whose value is the Item pointer
  ItemList inherit;
  ItemList fired;
  ContainerCounters counters;
  int64_t default_ttl() const { return info->default_ttl.load(std::memory_order_acquire); }
};

// What CINFO and ICOUNT report for one shard's part.
struct ContainerFigures {
  uint64_t live = 0;
  uint64_t stored = 0;
  uint64_t expired_unreclaimed = 0;
  int64_t oldest_expired_deadline_ms = 0;  // 0 when nothing is expired
  uint64_t reclaimed_background = 0;
  uint64_t reclaimed_lazy = 0;
};

enum class PutCondition { kAlways, kIfAbsent, kIfPresent };

struct ItemStamp {
  int64_t last_write_ms = 0;
  uint64_t etag = 0;
};

struct PutOutcome {
  bool written = false;
  bool replaced = false;  // overwrote a live item
  uint64_t etag = 0;
};

class ItemStore {
 public:
  using PartsByName = std::unordered_map<std::string, std::unique_ptr<ContainerPart>>;

  ItemStore(uint32_t shard_id, ContainerCatalog& catalog, int64_t now_ms);
  ~ItemStore();

  ContainerCatalog& catalog() { return catalog_; }
  // Who hears of items deleted by expiry (item events); nullptr: nobody.
  void SetKeyEventListener(KeyEventListener* listener) { listener_ = listener; }
  ItemJsonParser& json() { return json_; }
  // The live change-feed retention in bytes per container (server config); nullptr: the
  // default. The pointee must outlive the store.
  void SetChangeFeedRetention(const std::atomic<uint64_t>* bytes) { feed_retention_ = bytes; }
  static constexpr uint64_t kDefaultChangeFeedRetention = 16 * 1024 * 1024;

  // This shard's part of live container `container` of database `db`, or nullptr if the
  // container does not exist there.
  ContainerPart* Find(uint32_t db, std::string_view container);
  // As Find, creating the container (TTL off) when it does not exist.
  ContainerPart* FindOrCreate(uint32_t db, std::string_view container);
  // SWAPDB and CMOVE, in the atomic step that re-keys the catalog (ContainerCatalog::SwapDbs,
  // ::Move): this shard's cached parts follow their containers to the other database.
  void SwapDbs(uint32_t a, uint32_t b);
  void MoveToDb(std::string_view container, uint32_t from, uint32_t to);

  // Writes a validated item under the condition (NX / XX / IFMATCH); an expired item counts
  // as absent. Reclaims such an expired item on the spot.
  // `replayed`, when given, is the write's original last-write time and etag: a replay of the
  // append-only log keeps both (and so a TTL counting from _ts).
  PutOutcome Put(ContainerPart& part, std::string_view id, ParsedItem&& body, PutCondition condition,
                 const std::optional<uint64_t>& if_match, int64_t now_ms, const ItemStamp* replayed = nullptr);
  // Loading a snapshot: adds item `id` (absent) as it was saved, with its own last write and
  // etag, recording nothing in the change feed. Items of one part must come in ascending
  // last-write order (the inherit list's order). Later etags of this store exceed `etag`.
  void Restore(ContainerPart& part, std::string_view id, std::string members, int64_t ttl, int64_t last_write_ms,
               uint64_t etag, int64_t now_ms);
  // The live item, or nullptr; an expired item met here is reclaimed (lazily).
  const Item* Get(ContainerPart& part, std::string_view id, int64_t now_ms);
  // Deletes a live item; false if there was none.
  bool Delete(ContainerPart& part, std::string_view id, int64_t now_ms);

  ContainerFigures Figures(ContainerPart& part, int64_t now_ms);
  // One ISCAN step over this shard's part (Redis-style reverse-binary cursor); returns the
  // next cursor, 0 when done. fn receives live items only.
  uint64_t Scan(ContainerPart& part, uint64_t cursor, int64_t now_ms, size_t buckets,
                const std::function<void(const Item&)>& fn);

  // Eviction (maxmemory-policy allkeys-*) of the live items of containers that opted in
  // (ContainerInfo::evictable). Samples up to `count` live items of each such container of
  // database `db`; fn receives the item's index entry, whose access stamp (engine/access.h)
  // ranks it the way a key's ranks a key, so that items and keys compete on one score.
  void SampleEvictable(uint32_t db, uint64_t* seed, size_t count, int64_t now_ms,
                       const std::function<void(const Entry& stamp, const ContainerPart&, const Item&)>& fn);
  // Deletes live item `id` of an evictable container to free memory: the change feed records
  // the delete (evicted), the listener hears of it, and `bill` is told of it first. Returns the
  // bytes freed, 0 when the item is gone, expired or its container no longer evictable.
  size_t Evict(uint32_t db, std::string_view container, std::string_view id, int64_t now_ms,
               const std::function<void(const Item&)>& bill);

  // Background reclamation: deletes expired items oldest deadline first and frees dropped
  // containers, at most `max_items` per call. `admit(item)` is asked before each deletion
  // and may refuse (request-unit budget); refusing stops the call. Returns true while more
  // work is due now and admitted.
  bool Reclaim(int64_t now_ms, size_t max_items, const std::function<bool(const Item&)>& admit);
  // Expired items still stored, over all containers of this shard (INFO reclaim_backlog).
  uint64_t Backlog(int64_t now_ms);

  // Point-in-time saves (engine/snapshot.h), holding the shard: every part cached by name,
  // dropped or not. A save observes a part's index, whose pre-write hook then sees every
  // change to an item before it happens (Put, Delete, Evict and expiry all find the item
  // through the index; a dropped part is drained through it).
  void ForEachCachedPart(const std::function<void(ContainerPart&)>& fn);
  // The item an index entry stands for.
  static const Item& ItemIn(const Entry* e);

  size_t items_stored() const { return items_stored_; }
  // Whether the last Reclaim stopped because admit() refused.
  bool reclaim_blocked() const { return blocked_; }

 private:
  // The stored item (live or not) and, in `entry`, its index entry, which holds its access stamp.
  Item* Lookup(ContainerPart& part, std::string_view id, uint64_t* hash, Entry** entry = nullptr);
  void Destroy(ContainerPart& part, Item* item);
  // Destroy for an item whose time to live ran out: reported to the listener and the change
  // feed first.
  void DestroyExpired(ContainerPart& part, Item* item, int64_t now_ms);
  void CountLazy(ContainerPart& part);
  // Appends the item's create or replace (as just written) to its container's feed.
  void RecordWrite(ContainerPart& part, Item* item, bool replaced, int64_t now_ms);
  // Appends the deletion of an item about to be destroyed.
  void RecordDelete(ContainerPart& part, const Item& item, int64_t now_ms, const DeleteCause& cause);
  uint64_t FeedRetention() const {
    return feed_retention_ ? feed_retention_->load(std::memory_order_relaxed) : kDefaultChangeFeedRetention;
  }
  void File(Item* item);
  void Unfile(Item* item);
  // Moves own-ttl items whose deadline passed into their container's fired list.
  void AdvanceWheel(int64_t now_ms, size_t max_records);
  // The oldest expired item of a part, or nullptr.
  Item* OldestExpired(ContainerPart& part, int64_t now_ms, int64_t* deadline);
  size_t FreeDropped(size_t max_items);
  ContainerPart* Attach(std::shared_ptr<ContainerInfo> info);
  // The parts cached for database `db` (created empty on first use).
  PartsByName& PartsOf(uint32_t db);
  // Moves the cached parts of dropped containers to dropped_, to be freed in slices.
  void CollectDropped();

  ContainerCatalog& catalog_;
  ItemJsonParser json_;
  // Cached parts by database index, then by name: the catalog's key, so that a part is found
  // without the catalog's mutex, and SWAPDB swaps two maps.
  std::vector<PartsByName> parts_;
  std::vector<std::unique_ptr<ContainerPart>> dropped_;
  TimingWheel wheel_;
  std::unordered_map<uint64_t, Item*> filed_;  // wheel serial -> item
  uint64_t next_serial_ = 1;
  uint64_t next_etag_;
  size_t items_stored_ = 0;
  bool blocked_ = false;
  KeyEventListener* listener_ = nullptr;
  const std::atomic<uint64_t>* feed_retention_ = nullptr;
  std::string feed_doc_;  // scratch for rendering the item of a change
};

}  // namespace lapse::engine
