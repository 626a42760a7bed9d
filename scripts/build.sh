#!/usr/bin/env bash
# Builds lapse: `scripts/build.sh [release|asan]` into build/ or build-asan/.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
jobs="${LAPSE_JOBS:-2}"
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DLAPSE_SANITIZE=ON -DLAPSE_BENCH=OFF -DCMAKE_CXX_FLAGS=-O1) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" -j "$jobs"
