// Timing wheel costs per record: filing a deadline (every SET with a TTL), cancelling one
// (free by design: the owner forgets, and the stale record is dropped when it comes up, so
// the cost shows in Advance), and advancing through a mass expiry in 1 ms-bounded slices.
#include <benchmark/benchmark.h>

#include <optional>
#include <random>
#include <vector>

#include "engine/timing_wheel.h"

namespace {

using lapse::engine::TimingWheel;

constexpr int64_t kStart = 1'700'000'000'000;

std::vector<int64_t> RandomDeadlines(size_t n, int64_t spread_ms) {
  std::mt19937_64 rng(42);
  std::vector<int64_t> d(n);
  for (auto& x : d) x = kStart + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread_ms));
  return d;
}

void BM_WheelSchedule(benchmark::State& state) {
  const size_t n = 100000;
  std::vector<int64_t> deadlines = RandomDeadlines(n, state.range(0));
  for (auto _ : state) {
    TimingWheel wheel(kStart);
    for (size_t i = 0; i < n; ++i) wheel.Schedule(i, deadlines[i]);
    benchmark::DoNotOptimize(wheel.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
// Deadlines within 1 s, 1 h, 30 days.
BENCHMARK(BM_WheelSchedule)->Arg(1000)->Arg(3'600'000)->Arg(2'592'000'000);

// Schedules n records, then advances past all of them. With `cancelled` = 1 every record is
// stale (its owner deleted the key): what a cancel really costs.
void BM_WheelAdvanceAll(benchmark::State& state) {
  const size_t n = 100000;
  const bool cancelled = state.range(1) != 0;
  std::vector<int64_t> deadlines = RandomDeadlines(n, state.range(0));
  size_t fired = 0;
  for (auto _ : state) {
    state.PauseTiming();
    TimingWheel wheel(kStart);
    for (size_t i = 0; i < n; ++i) wheel.Schedule(i, deadlines[i]);
    state.ResumeTiming();
    auto deadline_of = [&](uint64_t p, int64_t, int64_t) -> std::optional<int64_t> {
      if (cancelled) return std::nullopt;
      return deadlines[p];
    };
    auto on_due = [&](uint64_t) { ++fired; };
    while (wheel.Advance(kStart + state.range(0) + 1, 1000, deadline_of, on_due)) {
    }
  }
  benchmark::DoNotOptimize(fired);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_WheelAdvanceAll)->Args({1000, 0})->Args({3'600'000, 0})->Args({3'600'000, 1});

// Time moving forward 1 ms at a time over a steady population: the reclaimer's idle tick.
void BM_WheelAdvanceEmptyTicks(benchmark::State& state) {
  TimingWheel wheel(kStart);
  std::vector<int64_t> deadlines = RandomDeadlines(100000, 3'600'000'000);
  for (size_t i = 0; i < deadlines.size(); ++i) wheel.Schedule(i, deadlines[i] + 3'600'000);
  int64_t now = kStart;
  auto deadline_of = [&](uint64_t p, int64_t, int64_t) -> std::optional<int64_t> { return deadlines[p] + 3'600'000; };
  auto on_due = [](uint64_t) {};
  for (auto _ : state) wheel.Advance(++now, 1000, deadline_of, on_due);
}
BENCHMARK(BM_WheelAdvanceEmptyTicks);

}  // namespace
