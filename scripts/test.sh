#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: GoogleTest units (ctest), the
# integration suites against the real binary (redis-py + redis-cli via pytest, ioredis via
# node's test runner), redis-benchmark, and then the unit and integration tests again in
# the AddressSanitizer + UndefinedBehaviorSanitizer build, and a bounded libFuzzer run.
# `LAPSE_SKIP_ASAN=1 scripts/test.sh` skips the sanitizer pass for a quicker local loop.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/install-deps.sh all

step() { printf '\n==== %s ====\n' "$*"; }

run_suites() {
  local dir=$1
  step "unit tests ($dir)"
  ctest --test-dir "$dir" -j2 --output-on-failure
  step "integration tests: redis-py and redis-cli ($dir)"
  LAPSE_SERVER="$root/$dir/lapse-server" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration
  if [ -d tests/integration/node ]; then
    step "integration tests: ioredis ($dir)"
    (cd tests/integration/node && { [ -d node_modules ] || npm ci --no-audit --no-fund --silent; } &&
      LAPSE_SERVER="$root/$dir/lapse-server" npm test --silent)
  fi
}

step "release build"
scripts/build.sh release
run_suites build

step "redis-benchmark against lapse"
# Ports below the kernel's ephemeral range (32768 and up), and another one if the server could
# not listen: redis-benchmark waits forever for a server that is not there.
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 12000))
  build/lapse-server --port "$port" --loglevel warning --save "" &
  pid=$!
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  wait "$pid" || true
done
timeout 120 redis-benchmark -p "$port" -t ping -n 100000 -P 16 -q
redis-cli -p "$port" shutdown >/dev/null 2>&1 || true
wait "$pid"

if [ "${LAPSE_SKIP_ASAN:-0}" != 1 ]; then
  step "sanitizer build (ASan + UBSan)"
  scripts/build.sh asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suites build-asan
  step "fuzzing: RESP parser and parse+dispatch, ${LAPSE_FUZZ_SECONDS:-30} s each (clang, ASan + UBSan)"
  scripts/fuzz.sh "${LAPSE_FUZZ_SECONDS:-30}"
fi
step "all tests passed"
