// File: engine/timing_wheel.h
//
// Hierarchical timing wheel (Varghese & Lauck) that files 64-bit payloads by a millisecond
// deadline. Seven levels of 64 slots cover 2^42 ms (~139 years), so any deadline up to
// 2^31 seconds away is filed in O(1). Each level keeps a 64-bit occupancy mask, so Advance
// jumps straight to the next occupied slot: a jump of years costs as much as a jump of a
// millisecond, and work is proportional to the records moved, never to the time elapsed.
//
// Records are 8 bytes: the payload only. The wheel does not keep the deadline; when a slot of
// an upper level comes due and its records must be re-filed lower down (cascade), the wheel
// asks the owner for each record's current deadline. The owner answers with the deadline if
// it still lies inside the slot's span, or nullopt when the record is stale (the key was
// deleted or its deadline moved: a fresh record was filed for the new deadline). This makes
// cancel free (the owner just forgets) and keeps the cost of a TTL to the 8 bytes of the
// record plus the 8-byte deadline the owner keeps in its entry.
//
// Records fire in deadline order at slot granularity of 1 ms, never before their deadline.
// Advance is bounded by `max_records` moved or fired per call so that a mass expiry is
// reclaimed in slices; a partially processed slot is resumed by the next call.
//
// Placement. A record with deadline d > current() lives at level L = (highest bit in which d
// and current() differ) / 6, slot (d >> 6L) & 63. So every record at level L agrees with
// current() above bit group L and its slot lies strictly after current()'s group-L digit; the
// slot's event time is current() with group L replaced by the slot and lower bits zero, and
// its span is [event time, event time + 2^6L). Lower levels always come due before upper
// ones, which is why the next event is "lowest non-empty level, first set bit of its mask".
//
// Beyond the top level. The seven levels only hold deadlines that agree with current() in bits
// 42 and up (the same 2^42 ms "epoch"). That is not "within 2^42 ms": near the end of an epoch
// even a deadline a few ms away crosses into the next one. Such records go to a sparse
// overflow bucket per epoch (the 8th level, kept in a small ordered map: in practice only the
// next epoch is ever used, since 2^31 s < 2^42 ms). When current() reaches an epoch's start
// the bucket cascades like any slot, with span [epoch start, epoch start + 2^42), so each
// record passes through overflow at most once and is never re-filed before its time.
//
// Threading: not thread-safe; one owner (a shard) drives it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace lapse::engine {

class TimingWheel {
 public:
  static constexpr int kLevels = 7;
  static constexpr int kSlotBits = 6;
  static constexpr int kSlots = 1 << kSlotBits;

  // `now_ms` is the wheel's starting time; deadlines at or before it are due at once.
  explicit TimingWheel(int64_t now_ms = 0);

  // Files `payload` to fire at `deadline_ms`. O(1). Deadlines at or before current() go
  // to the due list and fire on the next Advance. INT64_MAX means "never" and files nothing:
  // no cascade span can contain it (spans are half-open), so it could never be re-filed.
  // May be called from inside Advance's callbacks.
  void Schedule(uint64_t payload, int64_t deadline_ms);

  // Moves time forward to `now_ms` (never backward; an earlier value is ignored).
  // For each record whose deadline <= now_ms calls `on_due(payload)`, oldest slot first.
  // While cascading calls `deadline_of(payload, span_start, span_end)`, which must return the
  // record's deadline if it lies in [span_start, span_end), else nullopt to drop it.
  // Processes at most `max_records` records; returns true when it stopped early (more records
  // are due or pending cascade at or before now_ms), false when caught up.
  //
  // on_due may see stale records (a deleted key, or one whose deadline moved) and payloads
  // twice (a stale record whose owner's deadline lies in the same span is re-filed at that
  // deadline); the owner checks its own deadline against current() and ignores the rest.
  // A deadline returned outside the span is still honoured (re-filed where it belongs).
  // The callbacks may call Schedule but not Advance or Clear.
  template <class DeadlineOf, class OnDue>
  bool Advance(int64_t now_ms, size_t max_records, DeadlineOf&& deadline_of, OnDue&& on_due);

  // Records currently filed (including stale ones not yet dropped).
  size_t size() const { return size_; }
  int64_t current() const { return current_; }
  // Earliest time at which some record may come due, or nullopt if the wheel is empty.
  // This is a lower bound (an upper level slot's span start); current() while due records
  // or a partial cascade are pending.
  std::optional<int64_t> NextEventTime() const;
  // Drops every record. current() is kept.
  void Clear();

 private:
  // level == kLevels names the first overflow bucket.
  struct SlotRef {
    int level;
    int slot;
  };
  // Vectors that grew past this many records during a mass expiry are released once drained,
  // so a one-off burst does not pin its peak memory in a slot forever.
  static constexpr size_t kRetainedCapacity = 4096;
  static constexpr int kEpochBits = kLevels * kSlotBits;  // 42

  void File(uint64_t payload, int64_t deadline_ms);
  std::optional<SlotRef> NextOccupied(int64_t* event_time) const;
  // Sets current_ to `event_time` and moves the slot's records to due_ (level 0) or to
  // cascading_ with the slot's span (upper levels and overflow).
  void TakeSlot(SlotRef ref, int64_t event_time);
  // Empties a drained due_ / cascading_ so it can take the next slot by swap.
  static void Recycle(std::vector<uint64_t>* records);

  int64_t current_;
  size_t size_ = 0;
  std::array<std::array<std::vector<uint64_t>, kSlots>, kLevels> slots_;
  std::array<uint64_t, kLevels> occupied_{};
  // Deadlines outside current_'s 2^42 ms epoch, bucketed by epoch start (always > current_).
  std::map<int64_t, std::vector<uint64_t>> overflow_;
  std::vector<uint64_t> due_;  // deadline <= current_, waiting for on_due
  size_t due_pos_ = 0;         // next record of due_ to hand out
  // A cascading slot that Advance stopped in the middle of: its records were taken out.
  // current_ stays at the span start until it is finished, so re-filing is relative to it.
  std::vector<uint64_t> cascading_;
  int64_t cascade_span_start_ = 0;
  int64_t cascade_span_end_ = 0;
};

}  // namespace lapse::engine

#include "engine/timing_wheel_inl.h"
