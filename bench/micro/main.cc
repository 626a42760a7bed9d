// lapse-micro: Google Benchmark's main. Each *_micro.cc file registers the benchmarks of one
// module; run `lapse-micro --benchmark_filter=Resp` to pick some.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
