"""A million keys expiring at the same millisecond (issue 3's closing condition).

The keys are loaded with redis-cli --pipe on a frozen server clock, then the clock jumps past
their common deadline. From that instant every read must treat them as absent, while the
background deletes them in slices between client commands: the test counts the replies it
gets while keys are still stored, which a reclaimer that held its thread until done would
not give. No timing is asserted (the benchmark in bench/compare measures latencies).
"""
from __future__ import annotations

import select
import shutil
import subprocess

import pytest

from conftest import single_server
from lapse_harness import encode_command

pytestmark = [pytest.mark.lapse_only,
              pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-tools not installed")]

server = single_server(threads=2)

KEYS = 1_000_000


def info_field(c, section, name):
    for line in c.call("INFO", section).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return None


def stored_keys(c):
    line = info_field(c, "keyspace", "db0")
    return 0 if line is None else int(dict(kv.split("=") for kv in line.split(","))["keys"])


def load_and_expire(srv, c):
    """Loads KEYS keys sharing one deadline on the frozen clock, then moves the clock past it.
    Returns expired_keys before the jump."""
    now = int(c.call("TIME")[0]) * 1000
    deadline = now + 60_000
    payload = b"".join(encode_command("SET", f"mass:{i}", "v", "PXAT", deadline) for i in range(KEYS))
    proc = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(srv.port), "--pipe"], input=payload,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert b"errors: 0, replies: %d" % KEYS in proc.stdout
    assert stored_keys(c) == KEYS
    expired_before = int(info_field(c, "stats", "expired_keys"))
    assert c.call("DEBUG", "ADVANCE", 60_000) == "OK"
    return expired_before


@pytest.fixture
def frozen(clean):
    with clean.client() as c:
        assert c.call("DEBUG", "FREEZE-CLOCK", "1") == "OK"
        yield clean
        c.call("DEBUG", "FREEZE-CLOCK", "0")


def test_a_million_keys_expiring_together_vanish_at_once_and_are_deleted_in_slices(frozen):
    with frozen.client() as c:
        expired_before = load_and_expire(frozen, c)
        # At the deadline every read surface already treats all of them as absent.
        assert c.call("GET", "mass:0") is None
        assert c.call("EXISTS", "mass:1", "mass:999999") == 0
        assert c.call("SCAN", 0, "COUNT", 1000)[1] == []
        # Meanwhile the background deletes them a slice at a time: client commands keep being
        # answered while most keys are still stored.
        answered_while_stored = 0
        while stored_keys(c) > 0:
            assert c.call("GET", f"mass:{answered_while_stored}") is None
            answered_while_stored += 1
        assert answered_while_stored >= 5, "reclamation held the thread until it was done"
        assert int(info_field(c, "stats", "expired_keys")) - expired_before == KEYS
        assert c.call("DBSIZE") == 0


def test_dbsize_during_a_mass_expiry_waits_alone(frozen):
    # DBSIZE is exact, so it must see the million keys deleted first; it does so a slice at a
    # time, and other clients' commands on the same shards are answered meanwhile.
    with frozen.client() as c, frozen.client() as other:
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"  # leave all the work to DBSIZE
        load_and_expire(frozen, c)
        c.send("DBSIZE")
        answered = 0
        while not readable(c):
            assert other.call("GET", f"mass:{answered}") is None
            answered += 1
        assert c.read_reply() == 0
        assert answered >= 5, "DBSIZE held the shards until it was done"
        assert stored_keys(c) == 0
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"


def readable(client):
    return bool(client.buf) or bool(select.select([client.sock], [], [], 0)[0])
