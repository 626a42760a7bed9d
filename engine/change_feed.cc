// File: engine/change_feed.cc
//
// The change documents and the feed that orders them (design in change_feed.h). Documents
// are rendered before the feed's lock is taken, split around the lsn, which only the feed can
// give; under the lock only its digits are spliced in.
#include "engine/change_feed.h"

#include <algorithm>

#include "engine/item_json.h"

namespace lapse::engine {

namespace {

// Whole seconds since the epoch, as _ts and Cosmos DB's crts are shown.
std::string Seconds(int64_t ms) { return std::to_string(ms / 1000); }

// Everything of the metadata object up to the lsn's digits.
void AppendMetadataHead(std::string_view operation, std::string* out) {
  out->append("\"metadata\":{\"operationType\":\"");
  out->append(operation);
  out->append("\",\"lsn\":");
}

}  // namespace

ChangeDraft DraftWrite(bool replaced, std::string_view item_doc, int64_t crts_ms, uint64_t previous_lsn) {
  ChangeDraft d;
  // The head carries the whole item; room for the lsn and the tail is made now, so that the
  // splice under the feed's lock does not reallocate.
  d.head.reserve(item_doc.size() + 128);
  d.head.append("{\"current\":");
  d.head.append(item_doc);
  d.head.push_back(',');
  AppendMetadataHead(replaced ? "replace" : "create", &d.head);
  d.tail.append(",\"crts\":");
  d.tail.append(Seconds(crts_ms));
  if (previous_lsn != 0) {
    d.tail.append(",\"previousImageLSN\":");
    d.tail.append(std::to_string(previous_lsn));
  }
  d.tail.append("}}");
  return d;
}

ChangeDraft DraftDelete(std::string_view id, int64_t ts_ms, int64_t crts_ms, uint64_t previous_lsn,
                        const DeleteCause& cause) {
  ChangeDraft d;
  d.head.reserve(id.size() * 2 + 160);
  d.head.append("{\"previous\":{\"id\":");
  AppendJsonString(id, &d.head);
  d.head.append(",\"_ts\":");
  d.head.append(Seconds(ts_ms));
  d.head.append("},");
  AppendMetadataHead("delete", &d.head);
  d.tail.append(",\"crts\":");
  d.tail.append(Seconds(crts_ms));
  if (previous_lsn != 0) {
    d.tail.append(",\"previousImageLSN\":");
    d.tail.append(std::to_string(previous_lsn));
  }
  d.tail.append(cause.expired_at_ms ? ",\"timeToLiveExpired\":true" : ",\"timeToLiveExpired\":false");
  // Cosmos DB's current documentation names the deleted item in the metadata too.
  d.tail.append(",\"id\":");
  AppendJsonString(id, &d.tail);
  if (cause.expired_at_ms) {
    // lapse's own: when the item logically expired, and how long its reclamation lagged.
    d.tail.append(",\"expiredAt\":");
    d.tail.append(Seconds(*cause.expired_at_ms));
    d.tail.append(",\"reclaimLagMs\":");
    d.tail.append(std::to_string(std::max<int64_t>(0, crts_ms - *cause.expired_at_ms)));
  }
  // lapse's own: Cosmos DB never evicts, so a reader must be told this delete was no one's.
  if (cause.evicted) d.tail.append(",\"evicted\":true");
  d.tail.append("}}");
  return d;
}

uint64_t ChangeFeed::Append(ChangeDraft&& draft, uint64_t retention_bytes) {
  std::vector<std::shared_ptr<ChangeFeedWaiter>> woken;
  uint64_t lsn = 0;
  {
    std::lock_guard lock(mu_);
    if (closed_) return 0;
    lsn = ++last_lsn_;
    std::string doc = std::move(draft.head);
    doc.append(std::to_string(lsn));
    doc.append(draft.tail);
    bytes_ += doc.size();
    changes_.push_back(Change{lsn, std::move(doc)});
    TrimLocked(retention_bytes);
    if (!waiters_.empty()) woken = TakeWaitersLocked();
  }
  for (const auto& w : woken) w->ChangesArrived();
  return lsn;
}

void ChangeFeed::TrimLocked(uint64_t retention_bytes) {
  while (changes_.size() > 1 && bytes_ > retention_bytes) {
    bytes_ -= changes_.front().doc.size();
    changes_.pop_front();
  }
}

std::vector<std::shared_ptr<ChangeFeedWaiter>> ChangeFeed::TakeWaitersLocked() {
  std::vector<std::shared_ptr<ChangeFeedWaiter>> live;
  live.reserve(waiters_.size());
  for (const auto& weak : waiters_) {
    if (auto w = weak.lock()) live.push_back(std::move(w));
  }
  waiters_.clear();
  return live;
}

FeedRead ChangeFeed::Read(const FeedStart& start, size_t max_count, const std::shared_ptr<ChangeFeedWaiter>& waiter) {
  FeedRead r;
  std::lock_guard lock(mu_);
  r.oldest = OldestLocked();
  r.newest = last_lsn_;
  if (closed_) {
    r.status = FeedRead::Status::kClosed;
    return r;
  }
  uint64_t after = start.kind == FeedStart::Kind::kBeginning ? r.oldest
                   : start.kind == FeedStart::Kind::kNow     ? last_lsn_
                                                             : start.after;
  if (after < r.oldest) {
    r.status = FeedRead::Status::kTooOld;
    return r;
  }
  if (after > last_lsn_) {
    r.status = FeedRead::Status::kAhead;
    return r;
  }
  // Lsns are consecutive, so the first change after `after` sits at a known index.
  size_t first = changes_.empty() ? 0 : static_cast<size_t>(after + 1 - changes_.front().lsn);
  size_t end = first + std::min(max_count, changes_.size() - first);
  for (size_t i = first; i < end; ++i) {
    r.bytes += changes_[i].doc.size();
    r.docs.push_back(changes_[i].doc);
  }
  r.position = after + r.docs.size();
  if (r.docs.empty() && waiter) {
    // Drop waiters that went away without saying so, so that the list stays short.
    std::erase_if(waiters_, [](const std::weak_ptr<ChangeFeedWaiter>& w) { return w.expired(); });
    waiters_.push_back(waiter);
  }
  return r;
}

void ChangeFeed::StopWaiting(const ChangeFeedWaiter* waiter) {
  std::lock_guard lock(mu_);
  std::erase_if(waiters_, [&](const std::weak_ptr<ChangeFeedWaiter>& weak) {
    auto w = weak.lock();
    return !w || w.get() == waiter;
  });
}

void ChangeFeed::Close() {
  std::vector<std::shared_ptr<ChangeFeedWaiter>> woken;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    changes_.clear();
    bytes_ = 0;
    woken = TakeWaitersLocked();
  }
  for (const auto& w : woken) w->ChangesArrived();
}

size_t ChangeFeed::kept() const {
  std::lock_guard lock(mu_);
  return changes_.size();
}

size_t ChangeFeed::kept_bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

uint64_t ChangeFeed::newest() const {
  std::lock_guard lock(mu_);
  return last_lsn_;
}

}  // namespace lapse::engine
