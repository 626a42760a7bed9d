#!/bin/sh
# The write throughput cost of the append-only log, lapse against Redis with the same
# settings: SET through redis-benchmark (50 clients, no pipelining) with appendonly no, and
# yes under appendfsync everysec and always, each server in a fresh temporary dir.
# Usage: bench/aof_fsync.sh [path/to/lapse-server] [requests]
set -eu
LAPSE=${1:-build/lapse-server}
REQUESTS=${2:-100000}
PORT=7399

run() {  # kind mode -> prints requests per second
  dir=$(mktemp -d)
  if [ "$2" = off ]; then aof="--appendonly no"; else aof="--appendonly yes --appendfsync $2"; fi
  if [ "$1" = lapse ]; then
    "$LAPSE" --port $PORT --dir "$dir" $aof --loglevel warning >/dev/null 2>&1 &
  else
    redis-server --port $PORT --dir "$dir" --save '' $aof --aof-use-rdb-preamble no --loglevel warning >/dev/null 2>&1 &
  fi
  pid=$!
  until redis-cli -p $PORT ping >/dev/null 2>&1; do sleep 0.05; done
  redis-benchmark -p $PORT -t set -n "$REQUESTS" -c 50 -r 100000 -q | tr '\r' '\n' | awk '/requests per second/ {print $2}'
  kill $pid; wait $pid 2>/dev/null || true
  rm -rf "$dir"
}

printf '%-10s %12s %12s %8s\n' appendfsync lapse redis ratio
for mode in off no everysec always; do
  l=$(run lapse $mode); r=$(run redis $mode)
  printf '%-10s %12s %12s %8.2f\n' "$mode" "$l" "$r" "$(echo "$l / $r" | bc -l)"
done
