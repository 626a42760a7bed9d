#!/usr/bin/python3
"""Snapshot speed, lapse against Debian's redis-server on this machine (issue 17).

For each key count: fills a fresh server with N small string keys (key:<i> -> 16 bytes,
through redis-cli --pipe), times BGSAVE from the command until INFO says it is done
(polling every 5 ms), then restarts the server on that file and takes the load time from
the server's own log line ("DB loaded from disk: X seconds", which both print). Reports the
median of --rounds runs and lapse/redis ratios (> 1 means lapse is faster).

  bench/rdb_speed.py                      # 1 M keys, 3 rounds
  bench/rdb_speed.py --keys 1000000 10000000 --rounds 1
  bench/rdb_speed.py --lapse build/lapse-server
  bench/rdb_speed.py --items 1000000      # lapse alone: N items against N keys

With --items, lapse alone saves and loads N Cosmos-style items (IPUT into one container,
item ids i<i>, body {"v":"<16 bytes>"}) and, in turn, N keys, to show what items cost a save.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(kind, binary, data_dir, port, log):
    argv = [binary, "--port", str(port), "--dir", data_dir, "--save", "", "--loglevel", "notice",
            "--logfile", log]
    if kind == "redis":
        argv += ["--appendonly", "no", "--bind", "127.0.0.1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port, socket_timeout=600)
    deadline = time.monotonic() + 600
    while True:
        try:
            c.ping()
            return proc, c
        except (redis.ConnectionError, redis.BusyLoadingError):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{kind} did not start: {open(log).read()[-2000:]}")
            time.sleep(0.01)


def pipe(port, count, command):
    """Sends command(i) for i in range(count) through redis-cli --pipe, in batches; command
    gives a list of arguments."""
    batch = 100_000
    for first in range(0, count, batch):
        lines = []
        for i in range(first, min(count, first + batch)):
            args = command(i)
            lines.append(f"*{len(args)}\r\n" + "".join(f"${len(a)}\r\n{a}\r\n" for a in args))
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input="".join(lines).encode(),
                       stdout=subprocess.DEVNULL, check=True)


def fill(port, keys):
    value = "v" * 16
    pipe(port, keys, lambda i: ["SET", f"key:{i}", value])


def fill_items(port, items):
    body = '{"v":"' + "v" * 16 + '"}'
    subprocess.run(["redis-cli", "-p", str(port), "CSETTTL", "c", "-1"], stdout=subprocess.DEVNULL, check=True)
    pipe(port, items, lambda i: ["IPUT", "c", f"i{i}", body])


def timed_bgsave(c):
    begin = time.monotonic()
    c.bgsave()
    while c.info("persistence")["rdb_bgsave_in_progress"]:
        time.sleep(0.005)
    elapsed = time.monotonic() - begin
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    return elapsed


def load_seconds(log):
    text = open(log).read()
    found = re.findall(r"DB loaded from disk: ([0-9.]+) seconds", text)
    if not found:
        raise RuntimeError("no load time in log:\n" + text[-2000:])
    return float(found[-1])


def stored(c, items):
    return int(c.execute_command("ICOUNT", "c")) if items else c.dbsize()


def run_once(kind, binary, keys, items=False):
    """With `items`, `keys` items of one container instead of keys."""
    data_dir = tempfile.mkdtemp(prefix=f"rdb-bench-{kind}-")
    log = os.path.join(data_dir, "server.log")
    port = free_port()
    proc, c = start(kind, binary, data_dir, port, log)
    try:
        (fill_items if items else fill)(port, keys)
        assert stored(c, items) == keys
        save = timed_bgsave(c)
        size = os.path.getsize(os.path.join(data_dir, "dump.rdb"))
    finally:
        c.shutdown(nosave=True) if proc.poll() is None else None
        proc.wait()
    port = free_port()
    proc, c = start(kind, binary, data_dir, port, log)
    try:
        assert stored(c, items) == keys
        load = load_seconds(log)
    finally:
        c.shutdown(nosave=True)
        proc.wait()
    shutil.rmtree(data_dir)
    return save, load, size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lapse", default="build/lapse-server")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--items", type=int, nargs="+", help="lapse alone: N items against N keys")
    args = ap.parse_args()
    if args.items:
        print("| count | lapse stores | BGSAVE s | load s | file MB |")
        print("|---|---|---|---|---|")
        for count in args.items:
            med = {}
            for what in ("keys", "items"):
                runs = [run_once("lapse", args.lapse, count, what == "items") for _ in range(args.rounds)]
                med[what] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
                print(f"| {count:,} | {what} | {med[what][0]:.3f} | {med[what][1]:.3f} | {runs[0][2] / 1e6:.1f} |",
                      flush=True)
            print(f"| {count:,} | items / keys | {med['items'][0] / med['keys'][0]:.2f}x | "
                  f"{med['items'][1] / med['keys'][1]:.2f}x | |", flush=True)
        return
    print("| keys | server | BGSAVE s | load s | file MB |")
    print("|---|---|---|---|---|")
    for keys in args.keys:
        med = {}
        for kind, binary in (("redis", args.redis), ("lapse", args.lapse)):
            runs = [run_once(kind, binary, keys) for _ in range(args.rounds)]
            save = statistics.median(r[0] for r in runs)
            load = statistics.median(r[1] for r in runs)
            med[kind] = (save, load)
            print(f"| {keys:,} | {kind} | {save:.3f} | {load:.3f} | {runs[0][2] / 1e6:.1f} |", flush=True)
        print(f"| {keys:,} | lapse speed / redis | {med['redis'][0] / med['lapse'][0]:.2f}x | "
              f"{med['redis'][1] / med['lapse'][1]:.2f}x | |", flush=True)


if __name__ == "__main__":
    main()
