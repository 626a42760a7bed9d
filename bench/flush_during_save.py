#!/usr/bin/python3
"""What a FLUSHDB costs while a background save runs (issue 17), for Debian's redis-server
7.0.15 and one or two lapse builds.

N keys (key:<i> -> 16 bytes) are filled, BGSAVE starts, and FLUSHDB follows it after
--after-ms, well before the save ends. Reported per round: how long FLUSHDB took to reply
(seen by the client), how long until INFO used_memory fell below half of what it was before
the flush (polled every 5 ms), how long the save took in all (BGSAVE until INFO says it ended, polled
every 5 ms), and INFO's rdb_last_cow_size (lapse: the peak of its buffer of keys written
ahead of its walk; Redis: what copy-on-write duplicated in the child). Redis's child keeps
its copy and the parent frees the keys; lapse's save keeps the keys its walk has not reached
and frees them as it goes (since bfd5e7f; before, the flush first wrote every such key into
the buffer).

  bench/flush_during_save.py --keys 1000000 --rounds 3
  bench/flush_during_save.py --no-redis --lapse build/lapse-server --lapse-b /tmp/old/lapse-server
"""
import argparse
import shutil
import tempfile
import time

from rdb_speed import fill, free_port, start


def one_round(kind, binary, keys, after_ms):
    data_dir = tempfile.mkdtemp(prefix=f"flush-{kind}-")
    port = free_port()
    proc, c = start(kind, binary, data_dir, port, f"{data_dir}/log")
    try:
        fill(port, keys)
        begun = time.perf_counter()
        c.bgsave()
        time.sleep(after_ms / 1000)
        used_before = c.info("memory")["used_memory"]
        flush_start = time.perf_counter()
        c.flushdb()
        flush_ms = (time.perf_counter() - flush_start) * 1000
        was_running = c.info("persistence")["rdb_bgsave_in_progress"] == 1
        freed_ms = None
        while True:
            now = time.perf_counter()
            if freed_ms is None and c.info("memory")["used_memory"] < used_before / 2:
                freed_ms = (now - flush_start) * 1000
            if c.info("persistence")["rdb_bgsave_in_progress"] != 1 and freed_ms is not None:
                break
            if now - flush_start > 60:
                raise RuntimeError("the save or the freeing did not end")
            time.sleep(0.005)
        save_s = time.perf_counter() - begun
        info = c.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok"
        return flush_ms, freed_ms, save_s, info["rdb_last_cow_size"] / 1e6, was_running
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--after-ms", type=int, default=100, help="pause between BGSAVE and FLUSHDB")
    ap.add_argument("--lapse", default="build/lapse-server")
    ap.add_argument("--lapse-b", help="a second lapse build, measured in turn with the first")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--no-redis", action="store_true")
    args = ap.parse_args()
    servers = [] if args.no_redis else [("redis", args.redis)]
    servers.append(("lapse", args.lapse))
    if args.lapse_b:
        servers.append(("lapse-b", args.lapse_b))
    print(f"{args.keys} keys, FLUSHDB {args.after_ms} ms after BGSAVE; rounds alternate the servers")
    print("| server | round | FLUSHDB ms | used_memory halved after, ms | save s | rdb_last_cow_size MB |"
          " save still running after FLUSHDB |")
    print("|---|---|---|---|---|---|---|")
    for r in range(1, args.rounds + 1):
        for kind, binary in servers:
            kind_base = "redis" if kind == "redis" else "lapse"
            flush_ms, freed_ms, save_s, cow_mb, running = one_round(kind_base, binary, args.keys, args.after_ms)
            print(f"| {kind} | {r} | {flush_ms:.1f} | {freed_ms:.0f} | {save_s:.2f} | {cow_mb:.2f} | "
                  f"{'yes' if running else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
