#include "engine/snapshot.h"

#include <algorithm>
#include <utility>

#include "engine/shard.h"

namespace lapse::engine {

// The hold on one database's table: writes what the hook hands it, and remembers how far the
// walk got. It follows its table, not its database slot: SWAPDB moves tables between slots,
// and the keys are still written under the database number they had at the start.
class ShardSnapshot::DbView final : public PreWriteObserver {
 public:
  DbView(ShardSnapshot& owner, uint32_t db) : owner_(owner), db_(db) {}

  void SaveBeforeChange(const Entry* e) override {
    if (Db::IsExpired(e, owner_.start_ms_)) return;  // already gone at the start
    owner_.Append(db_, e);
  }

  // One walk step; true when this table is done.
  bool Step(size_t* visited) {
    if (done_) return true;
    cursor_ = table->SnapshotScan(cursor_, visited);
    if (cursor_ == 0) {
      table->EndSnapshot();
      done_ = true;
    }
    return done_;
  }
  bool done() const { return done_; }

 private:
  ShardSnapshot& owner_;
  uint32_t db_;
  uint64_t cursor_ = 0;
  bool done_ = false;
};

ShardSnapshot::ShardSnapshot(Shard& shard, rdb::SnapshotOptions options, int64_t start_ms,
                             std::shared_ptr<const RecordEncoder> encoder)
    : options_(options), start_ms_(start_ms), encoder_(std::move(encoder)) {
  for (size_t db = 0; db < shard.database_count(); ++db) {
    views_.push_back(std::make_unique<DbView>(*this, static_cast<uint32_t>(db)));
    shard.db(db).BeginSnapshot(views_.back().get());
  }
}

// The saving thread always finishes the walk before letting go (Discard on failure): a view
// destroyed while still attached would leave its table pointing at freed memory.
ShardSnapshot::~ShardSnapshot() = default;

bool ShardSnapshot::WalkSlice(size_t max_entries, size_t* visited) {
  size_t count = 0;
  for (auto& view : views_) {
    while (count < max_entries && !view->Step(&count)) {
    }
    if (count >= max_entries) break;
  }
  if (visited != nullptr) *visited += count;
  return done();
}

bool ShardSnapshot::done() const {
  return std::all_of(views_.begin(), views_.end(), [](const auto& v) { return v->done(); });
}

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

void ShardSnapshot::TakeRecords(std::string* out) {
  std::lock_guard lock(mu_);
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
}

uint64_t ShardSnapshot::keys_written() const {
  std::lock_guard lock(mu_);
  return keys_written_;
}

size_t ShardSnapshot::peak_buffer_bytes() const {
  std::lock_guard lock(mu_);
  return peak_buffer_bytes_;
}

}  // namespace lapse::engine
