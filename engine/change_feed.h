// File: engine/change_feed.h
//
// A container's change feed, modelled on Cosmos DB's "all versions and deletes" mode: every
// create, replace and delete of one of its items, as a JSON document, in commit order, each
// with a logical sequence number (lsn) 1, 2, 3, ... that has no gaps.
//
// One feed per container, owned by its ContainerInfo, so that it lives and dies with the
// container (CDROP, FLUSHALL) wherever the container itself is kept.
//
// Order across shards. A container's items are spread over the shards, and writers on
// different threads change them at once. The feed is the one place they meet: a change is
// appended, and gets its lsn, while the writer still holds the item's shard. So the changes of
// one item enter in the order its shard ran them, and the lsn order is an order in which all
// the container's changes could have happened one by one (each is appended at a moment the
// write had taken effect and nobody else could see or undo it). Readers see a prefix of that
// order and nothing else: an append is whole or absent.
//
// Lock order. `mu_` is the innermost lock of the server: it is taken holding a shard (or
// nothing), and nothing else is locked or called while holding it. Waiters are told of new
// changes after it is released.
//
// Retention. The feed keeps its newest changes while the documents it keeps come to at most
// `retention_bytes` (the bytes ICHANGES returns for them), dropping the oldest first when an
// append goes past it; the newest change is always kept, whatever its size. A reader whose
// position is older than what is kept is told so (kTooOld) with the oldest position still
// readable, rather than silently skipping changes.
//
// Positions. A reader's position is the lsn of the last change it has seen (0 before any):
// reading returns the changes after it. The oldest readable position is the lsn before the
// oldest kept change.
//
// Cost: an append is O(1) under the lock (the document is rendered before, only the lsn's
// digits are spliced in); a read copies the documents it returns.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::engine {

// A change's document before it has an lsn: the document is head + lsn digits + tail.
struct ChangeDraft {
  std::string head;
  std::string tail;
};

// The draft of a create (`replaced` false) or replace: `item_doc` is the item as IGET returns
// it. previous_lsn is the lsn of the item's change before this one (0: none, omitted).
ChangeDraft DraftWrite(bool replaced, std::string_view item_doc, int64_t crts_ms, uint64_t previous_lsn);

// Why an item was deleted; `expired_at_ms` (the logical expiry, deadline) is set only for a
// deletion by time to live, which happens when the item is physically reclaimed.
struct DeleteCause {
  std::optional<int64_t> expired_at_ms;
  bool evicted = false;  // deleted to free memory (maxmemory-policy, CSETEVICT on)
};

// The draft of a delete of item `id` whose last write (_ts) was at `ts_ms`.
ChangeDraft DraftDelete(std::string_view id, int64_t ts_ms, int64_t crts_ms, uint64_t previous_lsn,
                        const DeleteCause& cause);

// Told that changes arrived after the position it waits at, or that the feed was closed.
// Called from whatever thread appended (a command's, or the reclaimer's), holding no lock of
// the feed's; it must be quick and must not block.
class ChangeFeedWaiter {
 public:
  virtual ~ChangeFeedWaiter() = default;
  virtual void ChangesArrived() = 0;
};

// Where a read starts.
struct FeedStart {
  enum class Kind { kBeginning, kNow, kAfter };
  Kind kind = Kind::kBeginning;
  uint64_t after = 0;  // kAfter: the position (lsn of the last change seen)
};

struct FeedRead {
  enum class Status { kOk, kTooOld, kAhead, kClosed };
  Status status = Status::kOk;
  uint64_t position = 0;  // kOk: the position after the returned changes (the next token)
  uint64_t oldest = 0;    // the oldest position still readable
  uint64_t newest = 0;    // the lsn of the newest change (0: none yet)
  std::vector<std::string> docs;
  size_t bytes = 0;  // of `docs`
};

class ChangeFeed {
 public:
  // Appends a change and returns its lsn; drops the oldest changes past `retention_bytes`.
  // A closed feed takes nothing and returns 0. Wakes every waiter.
  uint64_t Append(ChangeDraft&& draft, uint64_t retention_bytes);

  // Reads at most `max_count` changes from `start`. When none is there and `waiter` is given,
  // registers it, in the same step, to be told of the next change: no change can slip in
  // between. The feed keeps only a weak reference; a waiter that goes away simply drops out.
  FeedRead Read(const FeedStart& start, size_t max_count, const std::shared_ptr<ChangeFeedWaiter>& waiter = nullptr);

  // Forgets a waiter that no longer waits (timed out, unblocked); harmless if already told.
  void StopWaiting(const ChangeFeedWaiter* waiter);

  // The container was dropped: no more changes, every waiter is told.
  void Close();

  // Figures for tests and introspection.
  size_t kept() const;
  size_t kept_bytes() const;
  uint64_t newest() const;

 private:
  struct Change {
    uint64_t lsn;
    std::string doc;
  };
  uint64_t OldestLocked() const { return changes_.empty() ? last_lsn_ : changes_.front().lsn - 1; }
  void TrimLocked(uint64_t retention_bytes);
  std::vector<std::shared_ptr<ChangeFeedWaiter>> TakeWaitersLocked();

  mutable std::mutex mu_;
  std::deque<Change> changes_;  // consecutive lsns, oldest first
  size_t bytes_ = 0;            // of changes_' documents
  uint64_t last_lsn_ = 0;
  bool closed_ = false;
  std::vector<std::weak_ptr<ChangeFeedWaiter>> waiters_;
};

}  // namespace lapse::engine
