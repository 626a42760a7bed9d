#!/bin/sh
# Replication, lapse as the master against Redis as the master, each with one Redis 7.0
# replica on the same machine:
#  1. full resynchronisation: seconds from REPLICAOF until the replica's link is up, after
#     loading KEYS keys of 100 bytes (Redis with repl-diskless-sync-delay 0, so that neither
#     waits for more replicas);
#  2. the cost of the stream: SET through redis-benchmark (50 clients, pipeline 1 and 16),
#     without a replica and with one attached; then WAIT 1 for the replica to have it all.
# Usage: bench/replication.sh [path/to/lapse-server] [keys] [requests]
set -eu
LAPSE=${1:-build/lapse-server}
KEYS=${2:-1000000}
REQUESTS=${3:-200000}
MASTER=7398
REPLICA=7397

start_master() {  # kind
  dir=$(mktemp -d)
  if [ "$1" = lapse ]; then
    "$LAPSE" --port $MASTER --dir "$dir" --save '' --loglevel warning >/dev/null 2>&1 &
  else
    redis-server --port $MASTER --dir "$dir" --save '' --repl-diskless-sync-delay 0 --loglevel warning >/dev/null 2>&1 &
  fi
  master_pid=$!
  until redis-cli -p $MASTER ping >/dev/null 2>&1; do sleep 0.05; done
}

start_replica() {
  rdir=$(mktemp -d)
  redis-server --port $REPLICA --dir "$rdir" --save '' --loglevel warning >/dev/null 2>&1 &
  replica_pid=$!
  until redis-cli -p $REPLICA ping >/dev/null 2>&1; do sleep 0.05; done
}

link_up() {
  redis-cli -p $REPLICA info replication | tr -d '\r' | grep -q '^master_link_status:up'
}

stop_all() {
  kill $master_pid $replica_pid 2>/dev/null || true
  wait $master_pid $replica_pid 2>/dev/null || true
  rm -rf "$dir" "$rdir"
}

sets() {  # pipeline -> requests per second
  redis-benchmark -p $MASTER -t set -n "$REQUESTS" -c 50 -P "$1" -r 100000 -d 100 -q | tr '\r' '\n' |
    awk '/requests per second/ {print $2}'
}

printf '%-32s %12s %12s %8s\n' figure lapse redis lapse/redis
for kind in lapse redis; do
  start_master $kind
  start_replica
  redis-benchmark -p $MASTER -t set -n "$KEYS" -r "$KEYS" -d 100 -c 50 -P 32 -q >/dev/null
  t0=$(date +%s.%N)
  redis-cli -p $REPLICA replicaof 127.0.0.1 $MASTER >/dev/null
  until link_up; do sleep 0.01; done
  t1=$(date +%s.%N)
  eval "sync_$kind=$(echo "$t1 - $t0" | bc -l)"
  redis-cli -p $REPLICA replicaof no one >/dev/null
  redis-cli -p $MASTER flushall >/dev/null
  eval "p1_alone_$kind=$(sets 1)"
  eval "p16_alone_$kind=$(sets 16)"
  redis-cli -p $REPLICA replicaof 127.0.0.1 $MASTER >/dev/null
  until link_up; do sleep 0.01; done
  eval "p1_replica_$kind=$(sets 1)"
  eval "p16_replica_$kind=$(sets 16)"
  redis-cli -p $MASTER wait 1 60000 >/dev/null
  stop_all
done
row() {  # label lapse redis
  printf '%-32s %12s %12s %8.2f\n' "$1" "$2" "$3" "$(echo "$2 / $3" | bc -l)"
}
row "full sync of $KEYS keys, s" "$sync_lapse" "$sync_redis"
row "SET/s p1, no replica" "$p1_alone_lapse" "$p1_alone_redis"
row "SET/s p1, one replica" "$p1_replica_lapse" "$p1_replica_redis"
row "SET/s p16, no replica" "$p16_alone_lapse" "$p16_alone_redis"
row "SET/s p16, one replica" "$p16_replica_lapse" "$p16_replica_redis"
