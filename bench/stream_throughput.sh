#!/bin/bash
# XADD and XREADGROUP throughput, lapse (its default thread count) against redis-server, through
# redis-benchmark (lapse-bench has no stream scenario yet): 50 connections, no pipelining.
# XREADGROUP reads one new entry per call (COUNT 1, `>`), so its PEL grows as in a real queue.
# Besides ops/s it prints each server's CPU time per op (user + system, from /proc/PID/stat).
# Run from the repository root after building lapse-server: bench/stream_throughput.sh
LP=${LAPSE_PORT:-27501}; RP=${REDIS_PORT:-27502}
${LAPSE:-build/lapse-server} --port $LP >/dev/null 2>&1 & L=$!
redis-server --port $RP --save '' --appendonly no >/dev/null 2>&1 & R=$!
sleep 1
TICK=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }

# bench PID PORT N COMMAND...: "<ops/s> ops/s, <us> us CPU/op"
bench() {
  local pid=$1 port=$2 n=$3; shift 3
  local before=$(cpu_ticks $pid)
  local rps=$(redis-benchmark -p $port -n $n -c 50 -q "$@" | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
  local after=$(cpu_ticks $pid)
  echo "$rps ops/s, $(echo "scale=2; ($after - $before) * 1000000 / $TICK / $n" | bc) us CPU/op"
}

for round in 1 2; do
  for target in "lapse $L $LP" "redis $R $RP"; do
    set -- $target
    redis-cli -p $3 flushall >/dev/null
    x=$(bench $2 $3 200000 XADD bench '*' user 42 action view seq 7)
    redis-cli -p $3 xgroup create bench g 0 >/dev/null
    y=$(bench $2 $3 150000 XREADGROUP GROUP g c COUNT 1 STREAMS bench '>')
    echo "round $round $1: XADD $x | XREADGROUP $y"
  done
done
kill $L $R
