// File: engine/timing_wheel.cc

#include "engine/timing_wheel.h"

#include <bit>
#include <cassert>
#include <limits>
#include <utility>

namespace lapse::engine {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Span ends of the last epoch would pass INT64_MAX; saturating keeps them representable, and
// INT64_MAX itself is never filed, so no deadline is lost by the clamp.
int64_t SaturatingAdd(int64_t base, int64_t delta) {
  return base > kNever - delta ? kNever : base + delta;
}

}  // namespace

TimingWheel::TimingWheel(int64_t now_ms) : current_(now_ms) {}

void TimingWheel::Schedule(uint64_t payload, int64_t deadline_ms) {
  if (deadline_ms == kNever) return;
  ++size_;
  File(payload, deadline_ms);
}

void TimingWheel::File(uint64_t payload, int64_t deadline_ms) {
  if (deadline_ms <= current_) {
    due_.push_back(payload);
    return;
  }
  // Bit patterns are compared as unsigned: for two values of the same sign the highest
  // differing bit orders them like the signed values do; across signs it is bit 63, which
  // sends the record to overflow, where epochs are computed with signed (floor) shifts.
  const uint64_t diff = static_cast<uint64_t>(deadline_ms) ^ static_cast<uint64_t>(current_);
  const int level = (63 - std::countl_zero(diff)) / kSlotBits;
  if (level >= kLevels) {
    // The epoch start is > current_ (d > current_ and they differ at bit 42 or above), so the
    // bucket comes due no earlier than any slot and never before the record's deadline.
    overflow_[(deadline_ms >> kEpochBits) << kEpochBits].push_back(payload);
    return;
  }
  const int slot =
      static_cast<int>((static_cast<uint64_t>(deadline_ms) >> (level * kSlotBits)) & (kSlots - 1));
  slots_[level][slot].push_back(payload);
  occupied_[level] |= uint64_t{1} << slot;
}

std::optional<TimingWheel::SlotRef> TimingWheel::NextOccupied(int64_t* event_time) const {
  const uint64_t cur = static_cast<uint64_t>(current_);
  for (int level = 0; level < kLevels; ++level) {
    const int shift = level * kSlotBits;
    const int digit = static_cast<int>((cur >> shift) & (kSlots - 1));
    // The placement invariant keeps every occupied slot after current_'s digit; masking is
    // only belt and braces (~1 << 63 == 0, so digit 63 needs no special case).
    const uint64_t ahead = occupied_[level] & (~uint64_t{1} << digit);
    assert(ahead == occupied_[level]);
    if (ahead == 0) continue;
    // Level L's event times all lie inside current_'s group-(L+1) block and every higher
    // level's lie after it, so the first non-empty level holds the earliest event.
    const int slot = std::countr_zero(ahead);
    const int above = shift + kSlotBits;  // <= 42, shift is well defined
    *event_time =
        static_cast<int64_t>(((cur >> above) << above) | (static_cast<uint64_t>(slot) << shift));
    return SlotRef{level, slot};
  }
  if (!overflow_.empty()) {
    *event_time = overflow_.begin()->first;
    return SlotRef{kLevels, 0};
  }
  return std::nullopt;
}

void TimingWheel::TakeSlot(SlotRef ref, int64_t event_time) {
  assert(event_time > current_);
  assert(due_pos_ == 0 && due_.empty() && cascading_.empty());
  current_ = event_time;
  if (ref.level == kLevels) {
    auto bucket = overflow_.begin();
    cascading_.swap(bucket->second);
    overflow_.erase(bucket);
    cascade_span_start_ = event_time;
    cascade_span_end_ = SaturatingAdd(event_time, int64_t{1} << kEpochBits);
    return;
  }
  std::vector<uint64_t>& slot = slots_[ref.level][ref.slot];
  occupied_[ref.level] &= ~(uint64_t{1} << ref.slot);
  if (ref.level == 0) {
    // A level-0 slot spans one millisecond: every record in it is due exactly now.
    due_.swap(slot);
    return;
  }
  cascading_.swap(slot);
  cascade_span_start_ = event_time;
  cascade_span_end_ = SaturatingAdd(event_time, int64_t{1} << (ref.level * kSlotBits));
}

void TimingWheel::Recycle(std::vector<uint64_t>* records) {
  if (records->capacity() > kRetainedCapacity) {
    std::vector<uint64_t>().swap(*records);
  } else {
    records->clear();
  }
}

std::optional<int64_t> TimingWheel::NextEventTime() const {
  if (due_pos_ < due_.size() || !cascading_.empty()) return current_;
  int64_t event_time = 0;
  if (NextOccupied(&event_time).has_value()) return event_time;
  return std::nullopt;
}

void TimingWheel::Clear() {
  for (auto& level : slots_) {
    for (auto& slot : level) std::vector<uint64_t>().swap(slot);
  }
  occupied_.fill(0);
  overflow_.clear();
  std::vector<uint64_t>().swap(due_);
  due_pos_ = 0;
  std::vector<uint64_t>().swap(cascading_);
  size_ = 0;
}

}  // namespace lapse::engine
