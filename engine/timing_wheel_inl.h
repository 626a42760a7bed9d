// File: engine/timing_wheel_inl.h
//
// Template part of TimingWheel; included at the end of engine/timing_wheel.h only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace lapse::engine {

template <class DeadlineOf, class OnDue>
bool TimingWheel::Advance(int64_t now_ms, size_t max_records, DeadlineOf&& deadline_of,
                          OnDue&& on_due) {
  if (now_ms < current_) now_ms = current_;
  size_t budget = max_records;
  // Pending work is finished before time moves: due_ holds deadlines <= current_ and a
  // partial cascade holds deadlines >= current_ (its span start), while every filed slot lies
  // after current_. Draining in this order is what keeps delivery in deadline order.
  while (true) {
    if (due_pos_ < due_.size()) {
      if (budget == 0) return true;
      --budget;
      // Copied out and indexed, never referenced: on_due may Schedule into due_ and grow it.
      const uint64_t payload = due_[due_pos_++];
      --size_;
      on_due(payload);
      continue;
    }
    if (due_pos_ != 0) {
      Recycle(&due_);
      due_pos_ = 0;
    }

    if (!cascading_.empty()) {
      if (budget == 0) return true;
      --budget;
      const uint64_t payload = cascading_.back();
      cascading_.pop_back();
      const std::optional<int64_t> deadline =
          deadline_of(payload, cascade_span_start_, cascade_span_end_);
      // current_ == span start here, so an in-span deadline lands in due_ or a strictly
      // lower level: a record cannot bounce back into the slot being emptied.
      if (deadline.has_value() && *deadline != INT64_MAX) {
        File(payload, *deadline);
      } else {
        --size_;  // stale: the owner forgot it or filed a fresh record elsewhere
      }
      if (cascading_.empty()) Recycle(&cascading_);
      continue;
    }

    int64_t event_time = 0;
    const std::optional<SlotRef> next = NextOccupied(&event_time);
    if (!next.has_value() || event_time > now_ms) {
      // Safe jump: for any filed slot, current_ < now_ms < its event time, so now_ms shares
      // the slot's prefix above its group and has a smaller digit there; the placement
      // invariant holds for the new current_ without touching a record.
      current_ = now_ms;
      return false;
    }
    // Taking a slot moves time, so do it only with budget left to process some of it:
    // a true return then always means work at or before now_ms that was left undone.
    if (budget == 0) return true;
    TakeSlot(*next, event_time);
  }
}

}  // namespace lapse::engine
