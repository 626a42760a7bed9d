#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + coverage) into build-fuzz/ and runs
# each for a bounded time from the seed corpus in fuzz/corpus/ (copied, so the repository
# is not changed). `scripts/fuzz.sh [seconds-per-target]`, default 30; run longer by hand.
# A crash, a sanitizer report or a leak fails the run and leaves the input in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
jobs="${LAPSE_JOBS:-2}"
CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 \
  -DLAPSE_FUZZ=ON >/dev/null
ninja -C build-fuzz -j "$jobs" resp_parser_fuzz dispatch_fuzz hll_fuzz
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for target in resp_parser dispatch hll; do
  work=$(mktemp -d)
  cp fuzz/corpus/"$target"/* "$work"/
  echo "fuzzing $target for ${seconds}s"
  "build-fuzz/fuzz/${target}_fuzz" "$work" -dict=fuzz/resp.dict -max_total_time="$seconds" \
    -max_len=4096 -timeout=10 -rss_limit_mb=4096 -artifact_prefix=build-fuzz/ -print_final_stats=1 2>&1 | tail -12
  rm -rf "$work"
done
