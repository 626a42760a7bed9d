#!/usr/bin/python3
"""What a background save costs clients (issue 17): GET p99 and process RSS while BGSAVE runs
back to back, against the same load without a save, for lapse and Debian's redis-server.

Fills N keys (key:<i> -> 16 bytes), runs `redis-benchmark -t get -r N` once with no save
(baseline) and once while a thread starts a new BGSAVE as soon as the previous one ends;
meanwhile samples the RSS of the server and, for Redis, of its fork child (VmRSS from
/proc, every 10 ms). Reports p99 during / p99 baseline and peak RSS over RSS before.

  bench/rdb_bgsave_impact.py --keys 1000000 --requests 300000
"""
import argparse
import csv
import io
import os
import shutil
import subprocess
import tempfile
import threading
import time

import redis

from rdb_speed import fill, free_port, start


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def tree_rss_kb(pid):
    total = rss_kb(pid)
    try:
        for child in open(f"/proc/{pid}/task/{pid}/children").read().split():
            total += rss_kb(int(child))
    except OSError:
        pass
    return total


def get_p99(port, keys, requests):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get", "-r", str(keys), "-n", str(requests),
                          "-c", "20", "--csv"], capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    return float(rows[0]["p99_latency_ms"])


def measure(kind, binary, keys, requests):
    data_dir = tempfile.mkdtemp(prefix=f"rdb-impact-{kind}-")
    port = free_port()
    proc, c = start(kind, binary, data_dir, port, os.path.join(data_dir, "server.log"))
    try:
        fill(port, keys)
        base = get_p99(port, keys, requests)
        before = tree_rss_kb(proc.pid)
        stop = threading.Event()
        saves = [0]
        peak = [before]

        def saver():
            s = redis.Redis(port=port)
            while not stop.is_set():
                s.bgsave()
                while s.info("persistence")["rdb_bgsave_in_progress"] and not stop.is_set():
                    time.sleep(0.005)
                saves[0] += 1

        def sampler():
            while not stop.is_set():
                peak[0] = max(peak[0], tree_rss_kb(proc.pid))
                time.sleep(0.01)

        threads = [threading.Thread(target=saver), threading.Thread(target=sampler)]
        for t in threads:
            t.start()
        during = get_p99(port, keys, requests)
        stop.set()
        for t in threads:
            t.join()
        while c.info("persistence")["rdb_bgsave_in_progress"]:
            time.sleep(0.01)
        return base, during, before, peak[0], saves[0]
    finally:
        c.shutdown(nosave=True)
        proc.wait()
        shutil.rmtree(data_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=300_000)
    ap.add_argument("--lapse", default="build/lapse-server")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    args = ap.parse_args()
    print("| server | GET p99 ms, no save | GET p99 ms, during BGSAVE | ratio | RSS MB before | peak RSS MB during | overhead | saves |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, binary in (("redis", args.redis), ("lapse", args.lapse)):
        base, during, before, peak, saves = measure(kind, binary, args.keys, args.requests)
        print(f"| {kind} | {base:.3f} | {during:.3f} | {during / base:.2f}x | {before / 1024:.0f} | {peak / 1024:.0f} | "
              f"{(peak - before) / before * 100:.1f}% | {saves} |", flush=True)


if __name__ == "__main__":
    main()
