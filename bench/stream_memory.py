#!/usr/bin/python3
"""Bytes per stream entry, lapse against Redis (issue 19): starts build/lapse-server and
redis-server on free ports, XADDs N entries of 3 fields with `*` ids to one stream on each
(pipelined), and reports the growth of INFO memory's used_memory divided by N.

The entries look like an event log's: a small integer user id, a short word, and a growing
counter. Both servers see exactly the same commands.

    /usr/bin/python3 bench/stream_memory.py [--entries 1000000] [--lapse build/lapse-server]
"""
import argparse
import socket
import subprocess
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def used_memory(client):
    return int(client.info("memory")["used_memory"])


def measure(client, entries, batch=10_000):
    client.flushall()
    time.sleep(0.2)
    before = used_memory(client)
    actions = ["view", "click", "buy", "share"]
    for start in range(0, entries, batch):
        pipe = client.pipeline(transaction=False)
        for i in range(start, min(entries, start + batch)):
            pipe.execute_command("XADD", "events", "*", "user", i % 10_000, "action", actions[i % 4], "seq", i)
        pipe.execute()
    assert client.xlen("events") == entries
    after = used_memory(client)
    return (after - before) / entries


def run(argv, name, entries):
    port = free_port()
    proc = subprocess.Popen([*argv, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port, socket_timeout=120)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        per_entry = measure(client, entries)
        print(f"{name}: {per_entry:.2f} bytes per entry ({entries} entries)")
        return per_entry
    finally:
        proc.terminate()
        proc.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--lapse", default="build/lapse-server")
    args = parser.parse_args()
    lapse = run([args.lapse], "lapse", args.entries)
    redis_bytes = run(["redis-server", "--save", "", "--appendonly", "no"], "redis", args.entries)
    print(f"lapse/redis: {lapse / redis_bytes:.2f}x")


if __name__ == "__main__":
    main()
