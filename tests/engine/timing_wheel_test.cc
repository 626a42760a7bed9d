// File: tests/engine/timing_wheel_test.cc
//
// The wheel is driven through a Harness that plays the owner (a keyspace in miniature that
// knows each payload's live deadline) and keeps a reference model of every record the wheel
// holds, updated from inside the callbacks. That lets every callback be checked as it happens:
// a cascade must only hand out records that lie in its span, a fire must match a record whose
// deadline is exactly now, and a caught-up Advance must leave nothing due behind. No test
// sleeps or measures time; "fast" is asserted as a bound on records touched.

#include "engine/timing_wheel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lapse::engine {
namespace {

constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kEpochMs = int64_t{1} << 42;
constexpr int64_t kMaxTtlMs = (int64_t{1} << 31) * 1000;  // 2^31 seconds
constexpr int64_t kYearMs = int64_t{365} * 24 * 3600 * 1000;
constexpr int64_t kRealisticNow = 1'700'000'000'000;
// Records cascade through at most the six upper levels and one overflow bucket.
constexpr int kMaxCascadesPerRecord = TimingWheel::kLevels;

struct Expiry {
  uint64_t payload;
  int64_t deadline;  // the owner's deadline
  int64_t at;        // wheel.current() when it fired
  size_t call;       // index of the Advance call that fired it
};

class Harness {
 public:
  explicit Harness(int64_t start_ms) : wheel_(start_ms) {}

  const TimingWheel& wheel() const { return wheel_; }
  TimingWheel& mutable_wheel() { return wheel_; }

  // Arms or re-arms `payload`: the owner's deadline becomes `deadline` and a fresh record is
  // filed; an older record of the same payload becomes stale.
  void Arm(uint64_t payload, int64_t deadline) {
    Forget(payload);
    wheel_.Schedule(payload, deadline);
    if (deadline != kNever) {
      live_[payload] = deadline;
      live_by_deadline_.insert({deadline, payload});
      // A deadline already passed is due at once, i.e. at current().
      filed_.insert({std::max(deadline, wheel_.current()), payload});
    }
    EXPECT_EQ(wheel_.size(), RecordCount());
  }

  // Cancel: the owner forgets; the wheel keeps a stale record until it meets it.
  void Forget(uint64_t payload) {
    auto it = live_.find(payload);
    if (it == live_.end()) return;
    live_by_deadline_.erase({it->second, payload});
    live_.erase(it);
  }

  bool Advance(int64_t now, size_t max_records = kUnbounded) {
    const int64_t target = std::max(now, wheel_.current());
    const size_t call = call_nows_.size();
    call_nows_.push_back(target);
    size_t ops = 0;
    int64_t last_at = wheel_.current();

    auto deadline_of = [&](uint64_t payload, int64_t lo, int64_t hi) -> std::optional<int64_t> {
      ++ops;
      ++cascaded_;
      EXPECT_EQ(lo, wheel_.current()) << "a cascade runs at its span start";
      EXPECT_LE(lo, target) << "cascaded a slot after now";
      CheckSpan(lo, hi);
      if (!flight_lo_.has_value() || *flight_lo_ != lo) StartFlight(lo, hi);
      auto rec = in_flight_.find(payload);
      if (rec == in_flight_.end()) {
        ADD_FAILURE() << "cascaded payload " << payload << " with no record in [" << lo << ", "
                      << hi << ")";
      } else {
        in_flight_.erase(rec);
      }
      ++cascades_of_[payload];
      auto live = live_.find(payload);
      if (live != live_.end() && live->second >= lo && live->second < hi) {
        filed_.insert({live->second, payload});
        return live->second;
      }
      ++dropped_;
      return std::nullopt;
    };

    auto on_due = [&](uint64_t payload) {
      ++ops;
      ++fired_;
      const int64_t at = wheel_.current();
      EXPECT_LE(at, target) << "fired after now";
      EXPECT_GE(at, last_at) << "fired out of order";
      last_at = at;
      // Every record the wheel hands out must be due exactly now: the model puts a deadline
      // that was already past when filed at the current() of that moment.
      auto rec = filed_.find({at, payload});
      if (rec == filed_.end()) {
        ADD_FAILURE() << "fired payload " << payload << " at " << at
                      << " without a record due then (early or phantom fire)";
      } else {
        filed_.erase(rec);
      }
      auto live = live_.find(payload);
      if (live != live_.end() && live->second <= at) {
        expiries_.push_back({payload, live->second, at, call});
        live_by_deadline_.erase({live->second, payload});
        live_.erase(live);
      } else {
        ++ignored_;  // stale record of a forgotten or re-armed payload
      }
      if (on_due_hook_) on_due_hook_(payload);
    };

    const bool more = wheel_.Advance(now, max_records, deadline_of, on_due);
    last_ops_ = ops;
    EXPECT_LE(ops, max_records);
    if (more) {
      EXPECT_EQ(ops, max_records) << "stopped early with budget left";
    }
    const std::optional<int64_t> next = wheel_.NextEventTime();
    EXPECT_EQ(more, next.has_value() && *next <= target)
        << "true must mean work at or before now is left";
    if (!more) {
      EXPECT_EQ(wheel_.current(), target);
      EXPECT_TRUE(in_flight_.empty()) << "a cascade was left unfinished";
      if (!filed_.empty()) {
        EXPECT_GT(filed_.begin()->first, target) << "a due record was left behind";
      }
      if (!live_by_deadline_.empty()) {
        EXPECT_GT(live_by_deadline_.begin()->first, target) << "a due payload did not expire";
      }
    }
    EXPECT_EQ(wheel_.size(), RecordCount());
    CheckNextEventTime();
    return more;
  }

  // Calls Advance(now, max_records) until it reports caught up; returns the number of calls.
  size_t AdvanceFully(int64_t now, size_t max_records) {
    size_t calls = 1;
    while (Advance(now, max_records)) ++calls;
    return calls;
  }

  size_t RecordCount() const { return filed_.size() + in_flight_.size(); }
  size_t live_count() const { return live_.size(); }
  bool is_live(uint64_t payload) const { return live_.count(payload) != 0; }
  const std::vector<Expiry>& expiries() const { return expiries_; }
  const std::vector<int64_t>& call_nows() const { return call_nows_; }
  size_t cascaded() const { return cascaded_; }
  size_t dropped() const { return dropped_; }
  size_t fired() const { return fired_; }
  size_t ignored() const { return ignored_; }
  size_t last_ops() const { return last_ops_; }
  int max_cascades_of_one_record() const {
    int most = 0;
    for (const auto& [payload, n] : cascades_of_) most = std::max(most, n);
    return most;
  }
  void set_on_due_hook(std::function<void(uint64_t)> hook) { on_due_hook_ = std::move(hook); }

 private:
  // A cascade covers exactly one slot: a power-of-64 (or epoch) wide, aligned span.
  static void CheckSpan(int64_t lo, int64_t hi) {
    ASSERT_LT(lo, hi);
    if (hi == kNever) return;  // saturated at the top of the time range
    const uint64_t width = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    bool valid = false;
    for (int level = 1; level <= TimingWheel::kLevels; ++level) {
      valid |= width == uint64_t{1} << (level * TimingWheel::kSlotBits);
    }
    EXPECT_TRUE(valid) << "span width " << width;
    EXPECT_EQ(static_cast<uint64_t>(lo) & (width - 1), 0u) << "unaligned span";
  }

  // The first call of a cascade: the slot being emptied holds exactly the records whose
  // deadline lies in its span, because a record's place is a function of its deadline and
  // current() (and nothing in the span could be due before current() reached its start).
  void StartFlight(int64_t lo, int64_t hi) {
    EXPECT_TRUE(in_flight_.empty()) << "a new cascade began before the last one finished";
    flight_lo_ = lo;
    auto it = filed_.lower_bound({lo, 0});
    while (it != filed_.end() && it->first < hi) {
      in_flight_.insert(it->second);
      it = filed_.erase(it);
    }
  }

  void CheckNextEventTime() const {
    const std::optional<int64_t> next = wheel_.NextEventTime();
    ASSERT_EQ(next.has_value(), wheel_.size() > 0);
    if (!next.has_value()) return;
    EXPECT_GE(*next, wheel_.current());
    if (!filed_.empty()) {
      EXPECT_LE(*next, filed_.begin()->first) << "next event is too late";
    }
    if (!in_flight_.empty()) {
      EXPECT_EQ(*next, wheel_.current());
    }
  }

  TimingWheel wheel_;
  // Owner state.
  std::unordered_map<uint64_t, int64_t> live_;
  std::set<std::pair<int64_t, uint64_t>> live_by_deadline_;
  // Reference model: (deadline, payload) of every record filed, stale ones included, and the
  // payloads of the slot being cascaded.
  std::multiset<std::pair<int64_t, uint64_t>> filed_;
  std::multiset<uint64_t> in_flight_;
  std::optional<int64_t> flight_lo_;
  // Observations.
  std::vector<Expiry> expiries_;
  std::vector<int64_t> call_nows_;
  std::unordered_map<uint64_t, int> cascades_of_;
  size_t cascaded_ = 0, dropped_ = 0, fired_ = 0, ignored_ = 0, last_ops_ = 0;
  std::function<void(uint64_t)> on_due_hook_;
};

// Expiries came in deadline order, each exactly at its deadline (all were armed ahead).
void ExpectOrderedAtDeadline(const Harness& h) {
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const Expiry& e : h.expiries()) {
    EXPECT_EQ(e.at, e.deadline) << "payload " << e.payload;
    EXPECT_GE(e.deadline, last) << "payload " << e.payload << " fired out of order";
    last = e.deadline;
  }
}

// With unbounded calls: each expiry happened in the first Advance whose now reached it.
void ExpectPromptAndOrdered(const Harness& h) {
  ExpectOrderedAtDeadline(h);
  const auto& nows = h.call_nows();
  for (const Expiry& e : h.expiries()) {
    EXPECT_GE(nows[e.call], e.deadline);
    if (e.call > 0) {
      EXPECT_LT(nows[e.call - 1], e.deadline) << "payload " << e.payload;
    }
  }
}

TEST(TimingWheelTest, EmptyWheelJumpsAndIgnoresBackwardTime) {
  Harness h(1000);
  EXPECT_EQ(h.wheel().size(), 0u);
  EXPECT_FALSE(h.wheel().NextEventTime().has_value());
  EXPECT_FALSE(h.Advance(5000));
  EXPECT_EQ(h.wheel().current(), 5000);
  EXPECT_FALSE(h.Advance(10));
  EXPECT_EQ(h.wheel().current(), 5000);
  EXPECT_FALSE(h.Advance(5000 + 100 * kYearMs));
  EXPECT_EQ(h.last_ops(), 0u);
}

TEST(TimingWheelTest, PastDeadlinesFireOnNextAdvanceEvenWithoutTimeMoving) {
  Harness h(1000);
  h.Arm(1, 1000);
  h.Arm(2, 5);
  h.Arm(3, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(h.wheel().NextEventTime(), 1000);
  EXPECT_FALSE(h.Advance(1000));
  ASSERT_EQ(h.expiries().size(), 3u);
  EXPECT_EQ(h.expiries()[0].payload, 1u);  // due list keeps schedule order
  EXPECT_EQ(h.expiries()[1].payload, 2u);
  EXPECT_EQ(h.expiries()[2].payload, 3u);
  // An Advance into the past still delivers what is due, without moving time back.
  h.Arm(4, 10);
  EXPECT_FALSE(h.Advance(0));
  EXPECT_EQ(h.wheel().current(), 1000);
  EXPECT_EQ(h.expiries().size(), 4u);
}

TEST(TimingWheelTest, NeverDeadlineIsNotFiled) {
  Harness h(0);
  h.Arm(1, kNever);
  EXPECT_EQ(h.wheel().size(), 0u);
  EXPECT_FALSE(h.Advance(kNever));
  EXPECT_TRUE(h.expiries().empty());
}

// Every boundary of every level, from aligned, unaligned, end-of-epoch and negative starts:
// nothing fires one millisecond early and the record fires exactly at its deadline.
TEST(TimingWheelTest, FiresExactlyAtDeadlineAcrossLevelBoundaries) {
  std::vector<int64_t> offsets = {
      1, 2, 63, 64, 65, kMaxTtlMs, kEpochMs - 1, kEpochMs, kEpochMs + 1, kEpochMs * 3 + 17};
  for (int bits = 6; bits <= 42; bits += 6) {
    const int64_t p = int64_t{1} << bits;
    offsets.insert(offsets.end(), {p - 1, p, p + 1, 2 * p + 1});
  }
  const int64_t starts[] = {
      0,     kRealisticNow + 123, kEpochMs - 1, kEpochMs - 64, (int64_t{1} << 36) - 1,
      -5000, -kEpochMs - 1};
  for (int64_t start : starts) {
    for (int64_t offset : offsets) {
      SCOPED_TRACE(testing::Message() << "start " << start << " offset " << offset);
      Harness h(start);
      const int64_t deadline = start + offset;
      h.Arm(7, deadline);
      EXPECT_FALSE(h.Advance(deadline - 1));
      EXPECT_TRUE(h.expiries().empty());
      EXPECT_EQ(h.wheel().size(), 1u);
      EXPECT_FALSE(h.Advance(deadline));
      ASSERT_EQ(h.expiries().size(), 1u);
      EXPECT_EQ(h.expiries()[0].at, deadline);
      EXPECT_EQ(h.wheel().size(), 0u);
      EXPECT_LE(h.cascaded(), static_cast<size_t>(kMaxCascadesPerRecord));
    }
  }
}

TEST(TimingWheelTest, RandomDeadlinesAcrossLevelsFireInOrderAtFirstCoveringAdvance) {
  std::mt19937_64 rng(42);
  for (int64_t start : {int64_t{0}, kRealisticNow, kEpochMs - 100'000}) {
    SCOPED_TRACE(start);
    Harness h(start);
    constexpr int kRecords = 5000;
    for (uint64_t p = 0; p < kRecords; ++p) {
      // Log-uniform offsets exercise every level (and overflow for the late start).
      const int bits = std::uniform_int_distribution<int>(0, 41)(rng);
      const int64_t offset =
          1 + std::uniform_int_distribution<int64_t>(0, (int64_t{1} << bits) - 1)(rng);
      h.Arm(p, start + offset);
    }
    int64_t now = start;
    while (h.wheel().size() > 0) {
      const int bits = std::uniform_int_distribution<int>(0, 40)(rng);
      now += std::uniform_int_distribution<int64_t>(0, int64_t{1} << bits)(rng);
      EXPECT_FALSE(h.Advance(now));
    }
    EXPECT_EQ(h.expiries().size(), static_cast<size_t>(kRecords));
    EXPECT_EQ(h.ignored(), 0u);
    EXPECT_LE(h.max_cascades_of_one_record(), kMaxCascadesPerRecord);
    ExpectPromptAndOrdered(h);
  }
}

TEST(TimingWheelTest, ForgottenRecordsAreDroppedOnCascade) {
  Harness h(0);
  // [4160, 8192) lies in level 2, slot 1 (span [4096, 8192)), clear of level 0 at 4096.
  constexpr int kRecords = 1000;
  for (uint64_t p = 0; p < kRecords; ++p) h.Arm(p, 4160 + static_cast<int64_t>(p));
  for (uint64_t p = 0; p < kRecords; p += 2) h.Forget(p);
  EXPECT_EQ(h.wheel().size(), static_cast<size_t>(kRecords));
  EXPECT_FALSE(h.Advance(4095));
  EXPECT_EQ(h.wheel().size(), static_cast<size_t>(kRecords));
  EXPECT_FALSE(h.Advance(4096));  // the cascade point: stale records go, none fire
  EXPECT_EQ(h.dropped(), static_cast<size_t>(kRecords / 2));
  EXPECT_EQ(h.wheel().size(), static_cast<size_t>(kRecords / 2));
  EXPECT_EQ(h.fired(), 0u);
  EXPECT_FALSE(h.Advance(8192));
  EXPECT_EQ(h.expiries().size(), static_cast<size_t>(kRecords / 2));
  EXPECT_EQ(h.ignored(), 0u);  // none of the forgotten reached on_due
  EXPECT_EQ(h.wheel().size(), 0u);
  for (const Expiry& e : h.expiries()) EXPECT_EQ(e.payload % 2, 1u);
}

TEST(TimingWheelTest, ForgottenLevelZeroRecordReachesOwnerWhoIgnoresIt) {
  Harness h(0);
  h.Arm(1, 10);  // level 0: no cascade, so the wheel cannot tell it is stale
  h.Forget(1);
  EXPECT_FALSE(h.Advance(10));
  EXPECT_EQ(h.fired(), 1u);
  EXPECT_EQ(h.ignored(), 1u);
  EXPECT_TRUE(h.expiries().empty());
  EXPECT_EQ(h.wheel().size(), 0u);
}

TEST(TimingWheelTest, RearmLaterOnlyTheLiveDeadlineExpires) {
  Harness h(kRealisticNow);
  const int64_t first = kRealisticNow + 10'000;
  const int64_t second = kRealisticNow + 5 * kYearMs;
  h.Arm(9, first);
  h.Arm(9, second);
  EXPECT_EQ(h.wheel().size(), 2u);
  EXPECT_FALSE(h.Advance(second - 1));
  EXPECT_TRUE(h.expiries().empty());
  EXPECT_EQ(h.wheel().size(), 1u);  // the stale record was dropped when it cascaded
  EXPECT_FALSE(h.Advance(second));
  ASSERT_EQ(h.expiries().size(), 1u);
  EXPECT_EQ(h.expiries()[0].deadline, second);
  EXPECT_EQ(h.wheel().size(), 0u);
}

TEST(TimingWheelTest, RearmEarlierExpiresEarlyAndOldRecordIsDropped) {
  Harness h(0);
  h.Arm(9, 50'000);
  h.Arm(9, 100);
  EXPECT_FALSE(h.Advance(100));
  ASSERT_EQ(h.expiries().size(), 1u);
  EXPECT_EQ(h.expiries()[0].at, 100);
  EXPECT_FALSE(h.Advance(60'000));
  EXPECT_EQ(h.expiries().size(), 1u);
  EXPECT_EQ(h.wheel().size(), 0u);
}

TEST(TimingWheelTest, RearmWithinOneSpanExpiresOnce) {
  Harness h(0);
  // Both in level 1, slot 1: the stale record is re-filed at the live deadline on cascade,
  // so the owner sees the payload twice and expires it once.
  h.Arm(9, 100);
  h.Arm(9, 70);
  EXPECT_FALSE(h.Advance(1000));
  ASSERT_EQ(h.expiries().size(), 1u);
  EXPECT_EQ(h.expiries()[0].at, 70);
  EXPECT_EQ(h.fired(), 2u);
  EXPECT_EQ(h.ignored(), 1u);
}

TEST(TimingWheelTest, ManyRearmsOfOnePayloadExpireOnceAndDrain) {
  Harness h(kRealisticNow);
  std::mt19937_64 rng(7);
  int64_t live = 0;
  for (int i = 0; i < 1000; ++i) {
    live = kRealisticNow + std::uniform_int_distribution<int64_t>(1, 10 * kYearMs)(rng);
    h.Arm(5, live);
  }
  EXPECT_EQ(h.wheel().size(), 1000u);
  EXPECT_FALSE(h.Advance(kRealisticNow + 11 * kYearMs));
  ASSERT_EQ(h.expiries().size(), 1u);
  EXPECT_EQ(h.expiries()[0].at, live);
  EXPECT_EQ(h.wheel().size(), 0u);
  EXPECT_LE(h.cascaded() + h.fired(), 1000u * (kMaxCascadesPerRecord + 1));
}

TEST(TimingWheelTest, FarDeadlinesUpToMaxTtlAndBeyond) {
  for (int64_t start : {kRealisticNow, kEpochMs - 10, int64_t{0}, int64_t{-1}}) {
    SCOPED_TRACE(start);
    Harness h(start);
    const std::vector<int64_t> deadlines = {
        start + 20,  // crosses an epoch boundary from kEpochMs - 10
        start + kMaxTtlMs - 1,
        start + kMaxTtlMs,
        start + kMaxTtlMs + 1,
        start + kEpochMs,
        start + 2 * kMaxTtlMs,
        start + (int64_t{1} << 45) + 12345,
        start + (int64_t{1} << 50),
        int64_t{1} << 61,
        kNever - (int64_t{1} << 30),
        kNever - 1,
    };
    for (size_t i = 0; i < deadlines.size(); ++i) h.Arm(i, deadlines[i]);
    EXPECT_EQ(h.wheel().size(), deadlines.size());
    std::vector<int64_t> sorted = deadlines;
    std::sort(sorted.begin(), sorted.end());
    size_t fired = 0;
    for (int64_t d : sorted) {
      EXPECT_FALSE(h.Advance(d - 1));
      EXPECT_EQ(h.expiries().size(), fired) << "fired before " << d;
      EXPECT_FALSE(h.Advance(d));
      EXPECT_EQ(h.expiries().size(), ++fired);
      EXPECT_EQ(h.expiries().back().at, d);
    }
    EXPECT_EQ(h.wheel().size(), 0u);
    EXPECT_LE(h.max_cascades_of_one_record(), kMaxCascadesPerRecord);
    // The top of the range: spans saturate, time can still reach and pass everything.
    h.Arm(100, kNever - 5);
    EXPECT_FALSE(h.Advance(kNever));
    EXPECT_EQ(h.expiries().size(), fired + 1);
    h.Arm(101, kNever - 1);  // now in the past: due at once
    EXPECT_FALSE(h.Advance(kNever));
    EXPECT_EQ(h.expiries().size(), fired + 2);
  }
}

TEST(TimingWheelTest, JumpOfCenturiesCostsRecordsNotTime) {
  Harness h(kRealisticNow);
  std::mt19937_64 rng(11);
  constexpr int kRecords = 10'000;
  for (uint64_t p = 0; p < kRecords; ++p) {
    h.Arm(p, kRealisticNow + std::uniform_int_distribution<int64_t>(1, 100 * kYearMs)(rng));
  }
  EXPECT_FALSE(h.Advance(kRealisticNow + 200 * kYearMs));
  EXPECT_EQ(h.expiries().size(), static_cast<size_t>(kRecords));
  EXPECT_LE(h.cascaded(), static_cast<size_t>(kRecords) * kMaxCascadesPerRecord);
  ExpectPromptAndOrdered(h);

  // Ten thousand jumps of a year each over one far record touch it a handful of times.
  h.Arm(1'000'000, h.wheel().current() + 20'000 * kYearMs);
  const size_t before = h.cascaded();
  for (int i = 0; i < 10'000; ++i) {
    EXPECT_FALSE(h.Advance(h.wheel().current() + kYearMs));
  }
  EXPECT_LE(h.cascaded() - before, static_cast<size_t>(kMaxCascadesPerRecord));
  EXPECT_EQ(h.wheel().size(), 1u);
  EXPECT_FALSE(h.Advance(h.wheel().current() + 20'000 * kYearMs));
  EXPECT_EQ(h.wheel().size(), 0u);
}

TEST(TimingWheelTest, MassExpiryDrainsOneRecordPerCall) {
  Harness h(0);
  constexpr int kRecords = 100'000;
  const int64_t deadline = 1'000'000;  // level 3: cascades down twice before firing
  for (uint64_t p = 0; p < kRecords; ++p) h.Arm(p, deadline);
  // Before the deadline the bounded calls only cascade.
  size_t size = h.wheel().size();
  while (h.Advance(deadline - 1, 1)) {
    EXPECT_EQ(h.last_ops(), 1u);
  }
  EXPECT_EQ(h.fired(), 0u);
  EXPECT_EQ(h.wheel().size(), size);
  size_t calls = 0;
  while (true) {
    const bool more = h.Advance(deadline, 1);
    ++calls;
    EXPECT_LE(h.wheel().size(), size);
    size = h.wheel().size();
    if (!more) break;
    EXPECT_EQ(h.last_ops(), 1u);
  }
  EXPECT_EQ(h.expiries().size(), static_cast<size_t>(kRecords));
  EXPECT_EQ(h.wheel().size(), 0u);
  EXPECT_GE(calls, static_cast<size_t>(kRecords));
  EXPECT_LE(calls, static_cast<size_t>(kRecords) * (kMaxCascadesPerRecord + 1) + 1);
}

TEST(TimingWheelTest, SliceBudgetCountsCascadesAndFires) {
  Harness h(0);
  for (uint64_t p = 0; p < 1000; ++p) h.Arm(p, 100'000 + static_cast<int64_t>(p % 7));
  const size_t calls = h.AdvanceFully(200'000, 37);
  EXPECT_EQ(h.expiries().size(), 1000u);
  EXPECT_GE(calls, (1000u + h.cascaded()) / 37);
  ExpectOrderedAtDeadline(h);
}

TEST(TimingWheelTest, ZeroBudgetReportsPendingWorkWithoutMovingTime) {
  Harness h(0);
  h.Arm(1, 50);                    // level 0
  EXPECT_FALSE(h.Advance(49, 0));  // nothing at or before 49: time moves for free
  EXPECT_EQ(h.wheel().current(), 49);
  EXPECT_TRUE(h.Advance(50, 0));
  EXPECT_EQ(h.wheel().current(), 49);
  EXPECT_FALSE(h.Advance(50, 1));
  EXPECT_EQ(h.expiries().size(), 1u);
  // A cascade due before now is pending work too, even though its record is not due yet.
  h.Arm(2, 200);  // level 1, slot 3: cascades at 192
  EXPECT_TRUE(h.Advance(195, 0));
  EXPECT_EQ(h.wheel().current(), 50);
  EXPECT_FALSE(h.Advance(195, 1));
  EXPECT_EQ(h.wheel().current(), 195);
  EXPECT_EQ(h.expiries().size(), 1u);
}

TEST(TimingWheelTest, ScheduleWhileStoppedMidCascadeAndMidDueList) {
  Harness h(0);
  for (uint64_t p = 0; p < 100; ++p) h.Arm(p, 5000 + static_cast<int64_t>(p));  // level 2
  EXPECT_TRUE(h.Advance(6000, 10));  // stopped inside the cascade
  const int64_t cur = h.wheel().current();
  EXPECT_EQ(cur, 4096);
  h.Arm(1000, cur - 50);  // already past: due at once
  h.Arm(1001, cur + 1);   // between current() and now
  h.Arm(1002, 5050);      // inside the span being cascaded
  h.Arm(50, 5999);        // re-arm a record still in the cascade
  h.Arm(1003, 7000);      // after now
  h.AdvanceFully(6000, 3);
  EXPECT_EQ(h.expiries().size(), 103u);
  EXPECT_TRUE(h.is_live(1003));
  EXPECT_FALSE(h.is_live(50));
  // 200 records at one millisecond (level 1 from 6000), three per call: stop after the
  // first slice, with the slot at 6464 partly cascaded.
  for (uint64_t p = 2000; p < 2200; ++p) h.Arm(p, 6500);
  EXPECT_TRUE(h.Advance(6600, 3));
  EXPECT_EQ(h.wheel().current(), 6464);
  h.Arm(3000, 6400);  // already past current(): due at once, ahead of the 6500 batch
  h.Arm(3001, 6550);  // after the batch, before now
  // 1 past-due + 197 cascaded into level 0 + 102 of the 200 now due at 6500.
  EXPECT_TRUE(h.Advance(6600, 300));
  EXPECT_EQ(h.wheel().current(), 6500);
  h.Arm(3002, 6500);  // due now: joins the tail of the due list
  h.AdvanceFully(6600, 3);
  ASSERT_GE(h.expiries().size(), 3u);
  EXPECT_EQ(h.expiries().back().payload, 3001u);
  EXPECT_EQ(h.live_count(), 1u);  // 1003 only
  EXPECT_FALSE(h.Advance(7000));
  EXPECT_EQ(h.live_count(), 0u);
}

TEST(TimingWheelTest, OnDueMayScheduleMore) {
  Harness h(0);
  h.Arm(1, 10);
  int chained = 0;
  h.set_on_due_hook([&](uint64_t payload) {
    // Chain: each expiry arms the next payload one millisecond later, plus one due at once.
    if (payload < 100 && chained < 200) {
      ++chained;
      h.Arm(payload + 1, h.wheel().current() + 1);
      h.Arm(payload + 1000, h.wheel().current());
    }
  });
  EXPECT_FALSE(h.Advance(60));
  EXPECT_EQ(h.wheel().current(), 60);
  // Payloads 1..51 fired at 10..60, each with its companion due at once.
  EXPECT_EQ(h.expiries().size(), 51u + 51u);
  h.set_on_due_hook(nullptr);
}

TEST(TimingWheelTest, NextEventTimeIsTightLowerBound) {
  Harness h(kRealisticNow);
  EXPECT_FALSE(h.wheel().NextEventTime().has_value());
  h.Arm(1, kRealisticNow + 3);  // level 0: exact
  EXPECT_EQ(h.wheel().NextEventTime(), kRealisticNow + 3);
  h.Arm(2, kRealisticNow + 2);
  EXPECT_EQ(h.wheel().NextEventTime(), kRealisticNow + 2);
  h.Arm(3, kRealisticNow - 2);  // past: due now
  EXPECT_EQ(h.wheel().NextEventTime(), kRealisticNow);
  EXPECT_FALSE(h.Advance(kRealisticNow + 3));
  EXPECT_FALSE(h.wheel().NextEventTime().has_value());

  // Stepping from event to event always makes progress, and every record is reached within
  // a bounded number of steps.
  std::mt19937_64 rng(3);
  constexpr int kRecords = 2000;
  for (uint64_t p = 0; p < kRecords; ++p) {
    const int bits = std::uniform_int_distribution<int>(0, 41)(rng);
    h.Arm(100 + p, h.wheel().current() + 1 +
                       std::uniform_int_distribution<int64_t>(0, int64_t{1} << bits)(rng));
  }
  size_t steps = 0;
  while (std::optional<int64_t> next = h.wheel().NextEventTime()) {
    EXPECT_GT(*next, h.wheel().current());
    EXPECT_FALSE(h.Advance(*next));
    EXPECT_GT(h.last_ops(), 0u) << "NextEventTime pointed at nothing";
    ++steps;
  }
  EXPECT_EQ(h.expiries().size(), 3u + kRecords);
  EXPECT_LE(steps, static_cast<size_t>(kRecords) * (kMaxCascadesPerRecord + 1));

  // While a cascade is pending, the next event is now.
  h.Arm(5000, h.wheel().current() + 100'000);
  h.Arm(5001, h.wheel().current() + 100'001);
  EXPECT_TRUE(h.Advance(h.wheel().current() + 200'000, 1));
  EXPECT_EQ(h.wheel().NextEventTime(), h.wheel().current());
}

// An owner that ignores the span and always answers with its live deadline must still never
// see an early fire: the wheel files the answer wherever it belongs.
TEST(TimingWheelTest, OutOfSpanAnswerIsRefiledNotFiredEarly) {
  TimingWheel wheel(0);
  const int64_t live = 5000;
  wheel.Schedule(1, 100);  // stale record, level 1
  wheel.Schedule(1, live);
  std::vector<int64_t> fired_at;
  auto deadline_of = [&](uint64_t, int64_t, int64_t) -> std::optional<int64_t> { return live; };
  auto on_due = [&](uint64_t) { fired_at.push_back(wheel.current()); };
  EXPECT_FALSE(wheel.Advance(live - 1, kUnbounded, deadline_of, on_due));
  EXPECT_TRUE(fired_at.empty());
  EXPECT_EQ(wheel.size(), 2u);
  EXPECT_FALSE(wheel.Advance(live, kUnbounded, deadline_of, on_due));
  EXPECT_EQ(fired_at, (std::vector<int64_t>{live, live}));
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(TimingWheelTest, ClearDropsEverythingAndKeepsTime) {
  TimingWheel wheel(500);
  for (uint64_t p = 0; p < 100; ++p) wheel.Schedule(p, 400 + static_cast<int64_t>(p) * 997);
  wheel.Schedule(1000, kRealisticNow * 3);  // overflow
  wheel.Clear();
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_EQ(wheel.current(), 500);
  EXPECT_FALSE(wheel.NextEventTime().has_value());
  int fired = 0;
  auto deadline_of = [](uint64_t, int64_t, int64_t) -> std::optional<int64_t> {
    ADD_FAILURE() << "cascade after Clear";
    return std::nullopt;
  };
  auto on_due = [&](uint64_t payload) {
    EXPECT_EQ(payload, 7u);
    ++fired;
  };
  EXPECT_FALSE(wheel.Advance(kRealisticNow * 4, kUnbounded, deadline_of, on_due));
  wheel.Schedule(7, wheel.current() + 1);
  EXPECT_FALSE(wheel.Advance(wheel.current() + 1, kUnbounded, deadline_of, on_due));
  EXPECT_EQ(fired, 1);
}

// Random arms, re-arms, cancels and advances of every size and budget against the reference
// model; the Harness checks each callback and each return.
void RunRandomModel(int64_t start, uint64_t seed, int operations) {
  Harness h(start);
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  constexpr uint64_t kPayloads = 256;  // small, so re-arms and cancels meet live records
  auto random_offset = [&]() -> int64_t {
    const int64_t pick = uniform(0, 99);
    if (pick < 8) return -uniform(0, 5000);
    if (pick < 38) return uniform(0, 200);
    if (pick < 63) return uniform(0, int64_t{1} << 16);
    if (pick < 83) return uniform(0, int64_t{1} << 26);
    if (pick < 95) return uniform(0, kEpochMs);
    return uniform(0, int64_t{1} << 52);
  };
  auto random_step = [&]() -> int64_t {
    const int64_t pick = uniform(0, 999);
    if (pick < 100) return -uniform(1, 1000);  // ignored
    if (pick < 250) return 0;
    if (pick < 650) return uniform(1, 64);
    if (pick < 920) return uniform(1, int64_t{1} << 14);
    if (pick < 995) return uniform(1, int64_t{1} << 26);
    return uniform(1, int64_t{1} << 43);  // jumps of up to ~280 years
  };
  for (int op = 0; op < operations; ++op) {
    const int64_t pick = uniform(0, 99);
    if (pick < 35) {
      h.Arm(static_cast<uint64_t>(uniform(0, kPayloads - 1)),
            h.wheel().current() + random_offset());
    } else if (pick < 45) {
      h.Forget(static_cast<uint64_t>(uniform(0, kPayloads - 1)));
    } else {
      const int64_t now = h.wheel().current() + random_step();
      const size_t budget = uniform(0, 99) < 60 ? kUnbounded : static_cast<size_t>(uniform(0, 20));
      // Half of the interrupted advances are left pending so later arms meet a partial state.
      if (h.Advance(now, budget) && uniform(0, 1) == 0) {
        h.AdvanceFully(now, static_cast<size_t>(uniform(1, 20)));
      }
    }
    if (testing::Test::HasFailure()) FAIL() << "after operation " << op;
  }
  // Drain everything that can ever fire.
  h.AdvanceFully(kNever, 1000);
  EXPECT_EQ(h.wheel().size(), 0u);
  EXPECT_EQ(h.live_count(), 0u);
}

TEST(TimingWheelTest, RandomizedAgainstReferenceModel) {
  const int64_t starts[] = {0, kRealisticNow, kEpochMs - 1000, -(int64_t{1} << 20)};
  uint64_t seed = 20240601;
  for (int64_t start : starts) {
    SCOPED_TRACE(testing::Message() << "start " << start);
    RunRandomModel(start, seed++, 25'000);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace lapse::engine
