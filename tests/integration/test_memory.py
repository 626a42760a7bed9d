"""What a key costs in memory, from INFO used_memory (jemalloc's allocated bytes).

A TTL costs the 8-byte deadline stored once in the entry plus one 8-byte record (the key's
hash) in the timing wheel, and nothing else: no expiry dictionary as in Redis (about 40 bytes
per key there). On top of those 16 bytes come two roundings:
  - the allocator rounds each entry up to a multiple of 16 bytes, so the deadline costs the
    entry 0 or 16 bytes by its size, 8 on average;
  - a wheel slot is a vector, grown by doubling, so a record costs between 8 and 16 bytes.
The keys here have values of every length from 1 to 32 bytes, so that the first averages out
as over real data, and the test holds the sum to its design bound of 24 bytes (issue 3's
target is 16; measured here about 19, and 8.4 in bench/compare's scenario 4, whose entries
round favourably). The sanitizer build reports the resident set instead of allocator
figures, so the test runs on the release build only.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import single_server
from lapse_harness import encode_command

pytestmark = [pytest.mark.lapse_only,
              pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-tools not installed")]

server = single_server(threads=2)

KEYS = 200_000


def used_memory(c):
    info = c.call("INFO", "memory").decode()
    if "mem_allocator:libc" in info:
        pytest.skip("no allocator statistics on this build (sanitizers)")
    for line in info.split("\r\n"):
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise AssertionError("no used_memory in INFO memory")


def load(srv, *option):
    payload = b"".join(encode_command("SET", f"key:{i:08d}", "v" * (1 + i % 32), *option) for i in range(KEYS))
    proc = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(srv.port), "--pipe"], input=payload,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0 and b"errors: 0, replies: %d" % KEYS in proc.stdout, proc.stdout + proc.stderr


def bytes_per_key(srv, c, *option):
    assert c.call("FLUSHALL", "SYNC") == "OK"
    before = used_memory(c)
    load(srv, *option)
    assert c.call("DBSIZE") == KEYS
    return (used_memory(c) - before) / KEYS


def test_a_ttl_costs_a_deadline_and_a_wheel_record_and_nothing_more(clean):
    with clean.client() as c:
        plain = bytes_per_key(clean, c)
        with_ttl = bytes_per_key(clean, c, "EX", 100_000)
        assert c.call("INFO", "keyspace").decode().count(f"expires={KEYS}") == 1
        c.call("FLUSHALL", "SYNC")
    assert plain > 0
    assert with_ttl - plain <= 24, f"{plain:.1f} bytes per key, {with_ttl:.1f} with a TTL"
