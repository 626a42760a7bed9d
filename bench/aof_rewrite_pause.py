#!/usr/bin/python3
"""What BGREWRITEAOF costs clients (issue 17). lapse holds every shard only while it switches
to a new incremental file and starts a point-in-time view, then writes the base in slices
(server/aof.h); before that, it held them all while it serialised the whole base.

Fills N keys (key:<i> -> 16 bytes) into a server with appendonly yes (everysec, RDB base),
then:
  - pause: one client sends GET back to back while one BGREWRITEAOF runs; the longest round
    trip seen is the pause a client meets (median over --rewrites rewrites, and the worst);
  - GET p99 / max: `redis-benchmark -t get -r N -c 20` once without a rewrite and once while a
    thread starts a new BGREWRITEAOF as soon as the previous one ends.
Runs Debian's redis-server (fork) the same way for comparison. `--items M` also fills M
items of a lapse container (lapse alone: Redis has no items), whose base an RDB-preamble
rewrite used to copy while holding every shard.

  bench/aof_rewrite_pause.py --keys 1000000 --requests 300000
  bench/aof_rewrite_pause.py --no-redis --lapse-label "lapse (main)" --lapse /tmp/main/lapse-server
  bench/aof_rewrite_pause.py --no-redis --keys 100000 --items 500000 --requests 100000
"""
import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import redis

from rdb_speed import fill, free_port


def start(binary, data_dir, port):
    argv = [binary, "--port", str(port), "--dir", data_dir, "--save", "", "--appendonly", "yes",
            "--appendfsync", "everysec", "--aof-use-rdb-preamble", "yes", "--logfile", os.path.join(data_dir, "log")]
    if "redis" in os.path.basename(binary):
        argv += ["--bind", "127.0.0.1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port, socket_timeout=600)
    for _ in range(6000):
        try:
            c.ping()
            return proc, c
        except (redis.ConnectionError, redis.BusyLoadingError):
            time.sleep(0.01)
    raise RuntimeError("server did not start")


def fill_items(port, items):
    """Items c<i> of container "bench", each a 40-byte JSON document."""
    batch = 100_000
    for start in range(0, items, batch):
        lines = []
        for i in range(start, min(items, start + batch)):
            doc = f'{{"user":"u{i}","cart":[1,2,3],"n":{i}}}'
            lines.append(f"*4\r\n$4\r\nIPUT\r\n$5\r\nbench\r\n${len(str(i)) + 1}\r\nc{i}\r\n"
                         f"${len(doc)}\r\n{doc}\r\n")
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input="".join(lines).encode(),
                       stdout=subprocess.DEVNULL, check=True)


def rewriting(c):
    return c.info("persistence")["aof_rewrite_in_progress"]


def one_rewrite_pause(port, c):
    """The longest GET round trip of one client while one rewrite runs, in ms."""
    probe = redis.Redis(port=port)
    worst = [0.0]
    done = threading.Event()

    def poll():
        while not done.is_set():
            begin = time.perf_counter()
            probe.get("key:1")
            worst[0] = max(worst[0], time.perf_counter() - begin)

    t = threading.Thread(target=poll)
    t.start()
    time.sleep(0.2)
    c.bgrewriteaof()
    while rewriting(c):
        time.sleep(0.01)
    time.sleep(0.2)
    done.set()
    t.join()
    return worst[0] * 1000


def get_latency(port, keys, requests):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get", "-r", str(keys), "-n", str(requests),
                          "-c", "20", "--csv"], capture_output=True, text=True, check=True).stdout
    row = list(csv.DictReader(io.StringIO(out)))[0]
    return float(row["p99_latency_ms"]), float(row["max_latency_ms"])


def measure(binary, keys, requests, rewrites, items):
    data_dir = tempfile.mkdtemp(prefix="aof-pause-")
    port = free_port()
    proc, c = start(binary, data_dir, port)
    try:
        fill(port, keys)
        if items:
            fill_items(port, items)
        while rewriting(c):  # an automatic rewrite the fill started
            time.sleep(0.01)
        pauses = [one_rewrite_pause(port, c) for _ in range(rewrites)]
        base = get_latency(port, keys, requests)
        stop = threading.Event()
        count = [0]

        def rewriter():
            r = redis.Redis(port=port)
            while not stop.is_set():
                r.bgrewriteaof()
                while rewriting(r) and not stop.is_set():
                    time.sleep(0.005)
                count[0] += 1

        t = threading.Thread(target=rewriter)
        t.start()
        during = get_latency(port, keys, requests)
        stop.set()
        t.join()
        while rewriting(c):
            time.sleep(0.01)
        return pauses, base, during, count[0]
    finally:
        c.shutdown(nosave=True)
        proc.wait()
        shutil.rmtree(data_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=300_000)
    ap.add_argument("--rewrites", type=int, default=3)
    ap.add_argument("--lapse", default="build/lapse-server")
    ap.add_argument("--lapse-label", default="lapse", help="its row's name (to compare two builds)")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--no-redis", action="store_true", help="lapse alone")
    ap.add_argument("--items", type=int, default=0, help="lapse container items to add (needs --no-redis)")
    args = ap.parse_args()
    if args.items and not args.no_redis:
        ap.error("--items needs --no-redis: Redis has no items")
    print("| server | pause ms (median / worst of one client) | GET p99 ms no rewrite | GET p99 ms during | "
          "GET max ms no rewrite | GET max ms during | rewrites during |")
    print("|---|---|---|---|---|---|---|")
    servers = [("redis", args.redis)] if not args.no_redis else []
    for kind, binary in servers + [(args.lapse_label, args.lapse)]:
        pauses, (p99, mx), (p99_during, mx_during), count = measure(binary, args.keys, args.requests, args.rewrites,
                                                                    args.items)
        print(f"| {kind} | {statistics.median(pauses):.1f} / {max(pauses):.1f} | {p99:.3f} | {p99_during:.3f} | "
              f"{mx:.1f} | {mx_during:.1f} | {count} |", flush=True)


if __name__ == "__main__":
    main()
