#!/bin/bash
# XADD and XREADGROUP throughput, lapse (its default thread count) against redis-server, through
# redis-benchmark (lapse-bench has no stream scenario yet): 50 connections, no pipelining.
# XREADGROUP reads one new entry per call (COUNT 1, `>`), so its PEL grows as in a real queue.
# Run from the repository root after building lapse-server: bench/stream_throughput.sh
LP=27501; RP=27502
${LAPSE:-build/lapse-server} --port $LP >/dev/null 2>&1 & L=$!
redis-server --port $RP --save '' --appendonly no >/dev/null 2>&1 & R=$!
sleep 1
for round in 1 2; do
for P in $LP $RP; do
  redis-cli -p $P flushall >/dev/null
  x=$(redis-benchmark -p $P -n 200000 -c 50 -q XADD bench '*' user 42 action view seq 7 | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1)
  redis-cli -p $P xgroup create bench g 0 >/dev/null
  y=$(redis-benchmark -p $P -n 150000 -c 50 -q XREADGROUP GROUP g c COUNT 1 STREAMS bench '>' | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1)
  echo "round $round port $P xadd: $x | xreadgroup: $y"
done
done
kill $L $R
