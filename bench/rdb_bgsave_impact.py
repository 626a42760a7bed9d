#!/usr/bin/python3
"""What a background save costs (issue 17), for lapse and Debian's redis-server 7.0.15:

(a) memory during a BGSAVE under a write load. N keys are filled (key:<012d i> -> 16 bytes,
    the names `redis-benchmark -r N` draws, so its writes overwrite them), then
    `redis-benchmark -t set -r N -d 16` runs without pause. With that load on, RSS and
    used_memory are sampled every 10 ms for a few seconds without a save (the load's own
    peak), then during --saves back-to-back BGSAVEs. Overhead = peak during the saves minus
    peak without, as % of the data set (used_memory after the fill minus before it). For
    Redis the fork child's private pages (Private_Clean + Private_Dirty from
    /proc/<child>/smaps_rollup: the pages copy-on-write duplicated, plus the child's own
    buffers) are added to the server's RSS; the child's full RSS, which counts pages still
    shared with the parent, is reported too (parent+child RSS, the naive figure). INFO's
    rdb_last_cow_size is shown as each reports it (lapse: its pre-write buffer's peak).
(b) GET p99 of `redis-benchmark -t get -r N` without a save (after one warm-up run), then while a thread starts a new
    BGSAVE as soon as the last one ends; the number of saves and their mean duration are
    reported, so that a different count of saves is explained by their speed.

  bench/rdb_bgsave_impact.py --keys 1000000 --requests 300000
  bench/rdb_bgsave_impact.py --no-redis --lapse /tmp/other/lapse-server   # another lapse build alone
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

from rdb_speed import free_port, pipe, start


def status_kb(pid, field="VmRSS:"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def private_kb(pid):
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1])
    except OSError:
        return 0
    return total


def children(pid):
    try:
        return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def fill(port, keys):
    value = "v" * 16
    pipe(port, keys, lambda i: ["SET", f"key:{i:012d}", value])


def get_p99(port, keys, requests, clients):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get", "-r", str(keys), "-n", str(requests),
                          "-c", str(clients), "--csv"], capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    return float(rows[0]["p99_latency_ms"])


class Sampler:
    """Peaks of the server's RSS, of RSS plus its children's private pages, of RSS plus their
    full RSS, and of used_memory, every 10 ms while running."""

    def __init__(self, pid, port):
        self.pid, self.c = pid, redis.Redis(port=port)
        self.reset()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def reset(self):
        self.rss = self.private = self.tree = self.used = 0

    def run(self):
        while not self.stop.is_set():
            rss = status_kb(self.pid)
            kids = children(self.pid)
            self.rss = max(self.rss, rss)
            self.private = max(self.private, rss + sum(private_kb(k) for k in kids))
            self.tree = max(self.tree, rss + sum(status_kb(k) for k in kids))
            self.used = max(self.used, self.c.info("memory")["used_memory"] // 1024)
            time.sleep(0.01)

    def close(self):
        self.stop.set()
        self.thread.join()


def wait_save(c):
    while c.info("persistence")["rdb_bgsave_in_progress"]:
        time.sleep(0.005)


def timed_save(c):
    t = time.monotonic()
    c.bgsave()
    wait_save(c)
    return time.monotonic() - t


def memory_under_writes(proc, port, keys, saves, dataset_kb):
    c = redis.Redis(port=port, socket_timeout=600)
    load = subprocess.Popen(["redis-benchmark", "-p", str(port), "-t", "set", "-r", str(keys), "-d", "16",
                             "-n", "1000000000", "-c", "20", "-q"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    sampler = Sampler(proc.pid, port)
    try:
        time.sleep(1)  # the load settles
        sampler.reset()
        time.sleep(3)
        quiet = (sampler.rss, sampler.private, sampler.tree, sampler.used)
        sampler.reset()
        durations = [timed_save(c) for _ in range(saves)]
        during = (sampler.rss, sampler.private, sampler.tree, sampler.used)
    finally:
        sampler.close()
        load.terminate()  # not SIGINT: a job started in the background ignores it
        load.wait()
    cow = c.info("persistence")["rdb_last_cow_size"]
    pct = lambda i: (during[i] - quiet[i]) / dataset_kb * 100
    return {"rss": pct(0), "private": pct(1), "tree": pct(2), "used": pct(3), "cow_mb": cow / 2**20,
            "save_s": sum(durations) / len(durations), "quiet_rss_mb": quiet[0] / 1024,
            "peak_mb": during[1] / 1024}


def get_latency(port, keys, requests, clients):
    c = redis.Redis(port=port, socket_timeout=600)
    get_p99(port, keys, requests, clients)  # warm-up: the first run after the fill is slower for both
    base = get_p99(port, keys, requests, clients)
    stop = threading.Event()
    durations = []

    def saver():
        s = redis.Redis(port=port, socket_timeout=600)
        while not stop.is_set():
            durations.append(timed_save(s))

    thread = threading.Thread(target=saver)
    thread.start()
    t = time.monotonic()
    during = get_p99(port, keys, requests, clients)
    window = time.monotonic() - t
    stop.set()
    thread.join()
    wait_save(c)
    return base, during, len(durations), sum(durations) / max(1, len(durations)), window


def measure(kind, binary, keys, requests, saves, clients):
    data_dir = tempfile.mkdtemp(prefix=f"rdb-impact-{kind}-")
    port = free_port()
    proc, c = start(kind, binary, data_dir, port, os.path.join(data_dir, "server.log"))
    try:
        empty = c.info("memory")["used_memory"]
        fill(port, keys)
        assert c.dbsize() == keys
        dataset_kb = (c.info("memory")["used_memory"] - empty) / 1024
        latency = get_latency(port, keys, requests, clients)
        memory = memory_under_writes(proc, port, keys, saves, dataset_kb)
        return dataset_kb, latency, memory
    finally:
        c.shutdown(nosave=True)
        proc.wait()
        shutil.rmtree(data_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=300_000)
    ap.add_argument("--saves", type=int, default=3, help="BGSAVEs under the write load")
    ap.add_argument("--lapse", default="build/lapse-server")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--no-redis", action="store_true", help="measure lapse alone (to compare two lapse builds)")
    ap.add_argument("--clients", type=int, default=20, help="redis-benchmark's connections for the GET p99 run")
    args = ap.parse_args()
    servers = [("lapse", args.lapse)] if args.no_redis else [("redis", args.redis), ("lapse", args.lapse)]
    rows = [(kind, *measure(kind, binary, args.keys, args.requests, args.saves, args.clients)) for kind, binary in servers]
    print("(a) memory during BGSAVE under a SET load, % of the data set over the same load without a save")
    print("| server | data set MB | mean save s | RSS | RSS + child private | RSS + child RSS | used_memory | rdb_last_cow_size MB |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, dataset_kb, _, m in rows:
        print(f"| {kind} | {dataset_kb / 1024:.0f} | {m['save_s']:.2f} | {m['rss']:.1f}% | {m['private']:.1f}% | "
              f"{m['tree']:.1f}% | {m['used']:.1f}% | {m['cow_mb']:.2f} |")
    print()
    print(f"(b) GET p99 (redis-benchmark -c {args.clients}), back-to-back BGSAVEs during the second run")
    print("| server | p99 ms, no save | p99 ms, during BGSAVE | ratio | saves | mean save s | run s |")
    print("|---|---|---|---|---|---|---|")
    for kind, _, (base, during, count, mean, window), _ in rows:
        print(f"| {kind} | {base:.3f} | {during:.3f} | {during / base:.2f}x | {count} | {mean:.2f} | {window:.1f} |")


if __name__ == "__main__":
    main()
