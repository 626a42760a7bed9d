// Keyspace operations of one database of one shard (engine::Db), without sockets or
// dispatch: the floor under GET and SET. Keys are memtier-style ("memtier-1234567").
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "engine/db.h"

namespace {

using lapse::engine::Db;
using lapse::engine::kNoDeadline;
using lapse::engine::ValueType;

constexpr int64_t kNow = 1'700'000'000'000;

std::vector<std::string> Keys(size_t n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) keys.push_back("memtier-" + std::to_string(1000000 + i));
  return keys;
}

void Fill(Db* db, const std::vector<std::string>& keys, const std::string& value, int64_t deadline) {
  for (const auto& k : keys) db->Put(k, value, ValueType::kString, deadline, kNow);
}

void BM_DbGetHit(benchmark::State& state) {
  auto keys = Keys(static_cast<size_t>(state.range(0)));
  Db db(kNow);
  Fill(&db, keys, std::string(100, 'v'), kNoDeadline);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.Find(keys[i], kNow));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DbGetHit)->Arg(1000)->Arg(1'000'000);

void BM_DbGetMiss(benchmark::State& state) {
  auto keys = Keys(100000);
  Db db(kNow);
  Fill(&db, keys, "v", kNoDeadline);
  auto missing = Keys(200000);
  size_t i = 100000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.Find(missing[i], kNow));
    if (++i == missing.size()) i = 100000;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DbGetMiss);

// Overwrites of existing keys (the steady state of a SET:GET benchmark).
void BM_DbSetOverwrite(benchmark::State& state) {
  auto keys = Keys(100000);
  Db db(kNow);
  std::string value(static_cast<size_t>(state.range(0)), 'v');
  Fill(&db, keys, value, kNoDeadline);
  size_t i = 0;
  for (auto _ : state) {
    db.Put(keys[i], value, ValueType::kString, kNoDeadline, kNow);
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DbSetOverwrite)->Arg(3)->Arg(100)->Arg(1024);

// Inserting fresh keys with and without a TTL (table growth and wheel filing included).
void BM_DbInsert(benchmark::State& state) {
  const size_t n = 100000;
  auto keys = Keys(n);
  const bool with_ttl = state.range(0) != 0;
  for (auto _ : state) {
    Db db(kNow);
    Fill(&db, keys, "abc", with_ttl ? kNow + 3'600'000 : kNoDeadline);
    benchmark::DoNotOptimize(db.stored());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_DbInsert)->Arg(0)->Arg(1);

// Background reclamation of a mass expiry, in the reclaimer's slices of 1000 records.
void BM_DbReclaimMassExpiry(benchmark::State& state) {
  const size_t n = 100000;
  auto keys = Keys(n);
  for (auto _ : state) {
    state.PauseTiming();
    Db db(kNow);
    Fill(&db, keys, "abc", kNow + 1000);
    state.ResumeTiming();
    while (db.Reclaim(kNow + 1000, 1000)) {
    }
    benchmark::DoNotOptimize(db.stored());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_DbReclaimMassExpiry);

}  // namespace
