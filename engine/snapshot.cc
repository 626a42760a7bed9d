#include "engine/snapshot.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "engine/item_store.h"
#include "engine/shard.h"

namespace lapse::engine {

// One observed table and how far the walk got in it.
class ShardSnapshot::WalkedTable : public PreWriteObserver {
 public:
  explicit WalkedTable(ShardSnapshot& owner) : owner_(owner) {}
  // The walk always finishes, but a retired table must never call back into a view that is
  // going away.
  ~WalkedTable() override {
    if (retired_) retired_->EndSnapshot();
  }

  void Retire(KvTable&& entries) override {
    if (owner_.discarded()) {
      // Nothing more is written: the flush frees the entries itself, at once, as with no
      // save (it clears the table as soon as this returns), and the view has nothing left.
      entries.EndSnapshot();
      table = nullptr;
      return;
    }
    retired_ = std::make_unique<KvTable>(std::move(entries));
    owner_.retired_pending_.fetch_add(1, std::memory_order_relaxed);
  }
  bool has_retired() const { return retired_ != nullptr; }

  // One walk step; true when this table is done.
  bool Step(size_t* visited) {
    if (done_) return true;
    if (retired_) return StepRetired(visited);
    if (table == nullptr) return done_ = true;  // freed, after writing every entry it had
    cursor_ = table->SnapshotScan(cursor_, visited);
    if (cursor_ == 0) {
      table->EndSnapshot();
      done_ = true;
    }
    return done_;
  }
  bool done() const { return done_; }

 protected:
  ShardSnapshot& owner_;

 private:
  // Entries of a flushed table a step writes (those not written yet) and frees.
  static constexpr size_t kRetiredStep = 16;

  // A flushed table's entries no longer need a cursor: none is added or changed any more, so
  // the step drains them, and the table is done once they are all gone.
  bool StepRetired(size_t* visited) {
    *visited += retired_->DrainSome(kRetiredStep, [](Entry*) {});
    if (retired_->size() > 0) return false;
    retired_->EndSnapshot();
    retired_.reset();
    table = nullptr;
    owner_.retired_pending_.fetch_sub(1, std::memory_order_relaxed);
    return done_ = true;
  }

  uint64_t cursor_ = 0;
  bool done_ = false;
  std::unique_ptr<KvTable> retired_;  // what a FLUSHDB took out of the table, while unwalked
};

// The hold on one database's table: writes what the hook hands it. It follows its table, not
// its database slot: SWAPDB moves tables between slots, and the keys are still written under
// the database number they had at the start.
class ShardSnapshot::DbView final : public WalkedTable {
 public:
  DbView(ShardSnapshot& owner, uint32_t db) : WalkedTable(owner), db_(db) {}

  void SaveBeforeChange(const Entry* e) override {
    if (Db::IsExpired(e, owner_.start_ms_)) return;  // already gone at the start
    owner_.Append(db_, e);
  }

 private:
  uint32_t db_;
};

// The hold on one container part's item index. Like DbView, it keeps the database and name
// the container had at the start (SWAPDB and CMOVE move parts), and the container's default
// time to live of that instant (SavedContainer), which decides the items already expired then.
class ShardSnapshot::ItemView final : public WalkedTable {
 public:
  ItemView(ShardSnapshot& owner, const SavedContainer& saved)
      : WalkedTable(owner), db(saved.db), container(saved.info->name), default_ttl_(saved.default_ttl) {}

  void SaveBeforeChange(const Entry* e) override {
    const Item& item = ItemStore::ItemIn(e);
    if (item.Expired(default_ttl_, owner_.start_ms_)) return;
    owner_.AppendItem(*this, item);
  }

  const uint32_t db;
  const std::string container;

 private:
  int64_t default_ttl_;
};

ShardSnapshot::ShardSnapshot(Shard& shard, rdb::SnapshotOptions options, int64_t start_ms,
                             std::shared_ptr<const RecordEncoder> encoder,
                             const std::vector<SavedContainer>& containers)
    : options_(options), start_ms_(start_ms), encoder_(std::move(encoder)) {
  for (size_t db = 0; db < shard.database_count(); ++db) {
    views_.push_back(std::make_unique<DbView>(*this, static_cast<uint32_t>(db)));
    shard.db(db).BeginSnapshot(views_.back().get());
  }
  if (!options_.lapse_data || encoder_) return;
  // A part dropped since the capture is still cached (the shard is held, so nothing collected
  // it); once freed, its items are written as it is drained.
  // Every shard is held meanwhile: a lookup per part, not a search of every container, and
  // the index only built for a shard that has parts.
  std::unordered_map<const ContainerInfo*, const SavedContainer*> saved_by_info;
  shard.items().ForEachCachedPart([&](ContainerPart& part) {
    if (saved_by_info.empty()) {
      saved_by_info.reserve(containers.size());
      for (const SavedContainer& c : containers) saved_by_info.emplace(c.info.get(), &c);
    }
    auto saved = saved_by_info.find(part.info.get());
    if (saved == saved_by_info.end()) return;
    views_.push_back(std::make_unique<ItemView>(*this, *saved->second));
    part.index.BeginSnapshot(views_.back().get());
  });
}

// The saving thread always finishes the walk before letting go (Discard on failure): a view
// destroyed while still attached would leave its table pointing at freed memory.
ShardSnapshot::~ShardSnapshot() = default;

// Entries a slice walks before it gives way to a waiting thread: a slice that ended after one
// bucket, often an empty one, would cost its lock and its drain for almost no progress, and
// a client waits for these few anyway (about 6 us).
constexpr size_t kEntriesBeforeGivingWay = 16;

bool ShardSnapshot::WalkSlice(size_t max_entries, size_t* visited, const std::atomic<uint32_t>* waiters) {
  size_t count = 0;
  auto wanted = [&] {
    return waiters != nullptr && count >= kEntriesBeforeGivingWay && waiters->load(std::memory_order_relaxed) > 0;
  };
  // At least one step per slice, so that the walk ends however busy the shard is. Flushed
  // tables go first, so that their memory is freed soon; then views are finished in order,
  // so the slice resumes at the first unfinished one.
  bool stepped = false;
  for (size_t i = next_view_; i < views_.size() && retired_pending(); ++i) {
    while (views_[i]->has_retired()) {
      if (stepped && (count >= max_entries || wanted())) break;
      stepped = true;
      views_[i]->Step(&count);
    }
  }
  while (next_view_ < views_.size()) {
    if (stepped && (count >= max_entries || wanted())) break;
    stepped = true;
    if (views_[next_view_]->Step(&count)) ++next_view_;
  }
  if (visited != nullptr) *visited += count;
  return done();
}

bool ShardSnapshot::done() const { return next_view_ == views_.size(); }

void ShardSnapshot::Append(uint32_t db, const Entry* e) {
  std::lock_guard lock(mu_);
  if (discard_) return;
  if (current_db_ != static_cast<int64_t>(db)) {
    if (encoder_) {
      encoder_->SelectDb(records_, db);
    } else {
      rdb::AppendSelectDb(records_, db);
    }
    current_db_ = db;
  }
  if (encoder_) {
    encoder_->Key(records_, e);
  } else {
    rdb::AppendKeyRecord(records_, e, options_);
  }
  ++keys_written_;
  peak_buffer_bytes_ = std::max(peak_buffer_bytes_, records_.size());
}

void ShardSnapshot::AppendItem(const ItemView& view, const Item& item) {
  std::lock_guard lock(mu_);
  if (discard_) return;
  if (batch_view_ != &view) {
    FlushItemBatchLocked();
    batch_view_ = &view;
  }
  rdb::AppendItem(item_batch_, item.id, item.members, item.ttl, item.last_write_ms, item.etag);
  ++item_batch_count_;
  ++items_written_;
  peak_buffer_bytes_ = std::max(peak_buffer_bytes_, records_.size() + item_batch_.size());
}

void ShardSnapshot::FlushItemBatchLocked() {
  if (item_batch_count_ > 0) {
    rdb::AppendAux(records_, rdb::kAuxItems,
                   rdb::EncodeItemsHeader(batch_view_->db, batch_view_->container, item_batch_count_) + item_batch_,
                   options_.compress);
  }
  item_batch_.clear();
  item_batch_count_ = 0;
  batch_view_ = nullptr;
}

void ShardSnapshot::TakeRecords(std::string* out) {
  std::lock_guard lock(mu_);
  FlushItemBatchLocked();
  out->append(records_);
  records_.clear();
  // The next records may follow another shard's in the file: name their database again.
  current_db_ = -1;
}

void ShardSnapshot::Discard() {
  std::lock_guard lock(mu_);
  discard_ = true;
  records_.clear();
  records_.shrink_to_fit();
  item_batch_.clear();
  item_batch_.shrink_to_fit();
  item_batch_count_ = 0;
}

bool ShardSnapshot::discarded() const {
  std::lock_guard lock(mu_);
  return discard_;
}

uint64_t ShardSnapshot::keys_written() const {
  std::lock_guard lock(mu_);
  return keys_written_;
}

uint64_t ShardSnapshot::items_written() const {
  std::lock_guard lock(mu_);
  return items_written_;
}

size_t ShardSnapshot::peak_buffer_bytes() const {
  std::lock_guard lock(mu_);
  return peak_buffer_bytes_;
}

}  // namespace lapse::engine
