"""Scripts that cross each other's shards after writing (issue 12, server/script_undo.h).

A script seen keeping to its KEYS holds only their shards and takes any other shard it
touches with try_lock. Two such scripts that each write their declared key and then touch the
other's key, at the same moment on two threads, find each other's shard busy: each must take
its write back and start over holding every shard. These tests run that crossing many times
and check that every run completes with the results of some serial order, and that the
world saw each script once: one keyspace event, one commandstats call and one MONITOR line
per INCR, the charge of one run, and an append-only file that replays to the serial result.
(Measured once with a gdb breakpoint: 24 rounds took about 38 rollbacks.)

Each round uses a fresh script text (a new SHA1, so a fresh footprint), run once without
straying so that lapse learns it keeps to its KEYS, then twice at once, crossing. The two
connections are made one after the other, so lapse's round-robin puts them on different
threads; each script spins in Lua between its write and its stray so that both hold their
own shard when they reach for the other's. Fresh random key names each round put the two
keys on different shards in all but about one round in 32 (which then crosses nothing and
still must give a serial result). Before the undo log, a crossing waited for ever: the
clients' socket timeout turns such a hang into a failure.

Against LAPSE_TARGET=redis the same rounds check that the expected results are Redis's.
"""
from __future__ import annotations

import os
import threading

import pytest
import redis

from conftest import single_server
from lapse_harness import ServerProcess, wait_until

server = single_server(threads=2)

ROUNDS = 24
# Enough Lua work (a few tens of milliseconds) that both scripts hold their own shard before
# either reaches for the other's; the result does not depend on it.
SPIN = 1_500_000

SCRIPT = """-- round {round} {token}
local mine = redis.call('INCR', KEYS[1])
if ARGV[1] == '' then return {{mine}} end
local n = 0
for i = 1, tonumber(ARGV[2]) do n = n + 1 end
local theirs = redis.call('INCR', ARGV[1])
return {{mine, theirs}}
"""


def client(srv) -> redis.Redis:
    # A generous timeout: a deadlocked crossing fails the test instead of hanging it.
    return redis.Redis(host="127.0.0.1", port=srv.port, password=srv.password, socket_timeout=60)


# The same crossing over hashes too big to copy (a table of their own): the script takes
# every shard before it writes one, instead of keeping its pre-image.
BIG_HASH_SCRIPT = SCRIPT.replace("redis.call('INCR', KEYS[1])", "redis.call('HINCRBY', KEYS[1], 'n', 1)").replace(
    "redis.call('INCR', ARGV[1])", "redis.call('HINCRBY', ARGV[1], 'n', 1)")


def crossing_round(first: redis.Redis, second: redis.Redis, round_no: int, script: str = SCRIPT, prepare=None):
    """One round: both scripts learned, then run at once; returns their replies and keys."""
    token = os.urandom(6).hex()
    a, b = f"undo:{token}:a", f"undo:{token}:b"
    if prepare is not None:
        prepare(first, a, b)
    sha = first.script_load(script.format(round=round_no, token=token))
    # Learning runs keep to KEYS: a = 1, b = 1.
    assert first.evalsha(sha, 1, a, "", 0) == [1]
    assert second.evalsha(sha, 1, b, "", 0) == [1]
    replies = {}
    barrier = threading.Barrier(2)

    def run(name, conn, mine, theirs):
        barrier.wait()
        try:
            replies[name] = conn.evalsha(sha, 1, mine, theirs, SPIN)
        except Exception as e:  # noqa: BLE001 - reported below
            replies[name] = e

    threads = [threading.Thread(target=run, args=("x", first, a, b)),
               threading.Thread(target=run, args=("y", second, b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return replies, a, b


def assert_serial(replies, a_value, b_value):
    # Either order, run one at a time: the first sees 2 and 2, the second 3 and 3.
    assert sorted(replies.values()) == [[2, 2], [3, 3]], replies
    assert (a_value, b_value) == (b"3", b"3")


def test_crossing_scripts_complete_in_a_serial_order(clean):
    first, second = client(clean), client(clean)
    try:
        for round_no in range(ROUNDS):
            replies, a, b = crossing_round(first, second, round_no)
            assert_serial(replies, first.get(a), first.get(b))
    finally:
        first.close()
        second.close()


def test_crossing_scripts_on_values_too_big_to_copy_complete_in_a_serial_order(clean):
    def big_hashes(conn, a, b):
        fields = {f"f{i}": "x" * 10 for i in range(300)}
        conn.hset(a, mapping=fields)
        conn.hset(b, mapping=fields)

    first, second = client(clean), client(clean)
    try:
        for round_no in range(ROUNDS // 2):
            replies, a, b = crossing_round(first, second, round_no, BIG_HASH_SCRIPT, big_hashes)
            assert_serial(replies, first.hget(a, "n"), first.hget(b, "n"))
            assert first.hlen(a) == first.hlen(b) == 301
    finally:
        first.close()
        second.close()


def test_a_taken_back_write_is_neither_notified_nor_counted_twice(clean):
    admin = client(clean)
    listener = client(clean).pubsub()
    admin.config_set("notify-keyspace-events", "E$")
    admin.config_resetstat()
    listener.subscribe("__keyevent@0__:incrby", "undo-test-end")
    assert listener.get_message(timeout=10)["type"] == "subscribe"
    assert listener.get_message(timeout=10)["type"] == "subscribe"
    first, second = client(clean), client(clean)
    try:
        for round_no in range(ROUNDS):
            replies, a, b = crossing_round(first, second, round_no)
            assert_serial(replies, first.get(a), first.get(b))
        # Published after every script replied: the last message the listener gets.
        admin.publish("undo-test-end", "done")
        events = []
        while True:
            message = listener.get_message(timeout=30)
            assert message is not None, f"the end marker never came; {len(events)} events"
            if message["channel"] == b"undo-test-end":
                break
            events.append(message["data"])
        # Per round: two learning INCRs and four crossing ones, each notified once.
        assert len(events) == ROUNDS * 6
        stats = admin.info("commandstats")
        assert stats["cmdstat_incr"]["calls"] == ROUNDS * 6
        assert stats["cmdstat_incr"].get("failed_calls", 0) == 0
    finally:
        admin.config_set("notify-keyspace-events", "")
        listener.close()
        for c in (admin, first, second):
            c.close()


def test_monitor_shows_each_command_of_the_run_that_counts(clean):
    monitor = clean.client(timeout=60)
    assert monitor.call("MONITOR") == "OK"
    first, second = client(clean), client(clean)
    try:
        for round_no in range(ROUNDS):
            replies, a, b = crossing_round(first, second, round_no)
            assert_serial(replies, first.get(a), first.get(b))
        first.echo("undo-test-end")
        incr_lines = 0
        while True:
            line = monitor.read_reply()
            if '"undo-test-end"' in line:
                break
            if '"INCR"' in line:
                assert "lua]" in line, line
                incr_lines += 1
        assert incr_lines == ROUNDS * 6
    finally:
        monitor.close()
        first.close()
        second.close()


def test_the_append_only_file_replays_to_the_serial_result(tmp_path):
    options = {"threads": 2, "dir": str(tmp_path), "appendonly": "yes", "appendfsync": "always"}
    srv = ServerProcess(options=options).start()
    keys = []
    try:
        first, second = client(srv), client(srv)
        for round_no in range(ROUNDS):
            replies, a, b = crossing_round(first, second, round_no)
            assert_serial(replies, first.get(a), first.get(b))
            keys += [a, b]
        first.close()
        second.close()
    finally:
        srv.stop()
    again = ServerProcess(options=options).start()
    try:
        c = client(again)
        wait_until(lambda: c.info("persistence")["loading"] == 0, what="the log to be loaded")
        assert c.mget(keys) == [b"3"] * len(keys)
        c.close()
    finally:
        again.stop()


@pytest.mark.lapse_only
def test_lastcharge_counts_the_run_that_counts(clean):
    first, second = client(clean), client(clean)
    try:
        for round_no in range(ROUNDS):
            replies, a, b = crossing_round(first, second, round_no)
            crossing_charge = float(second.execute_command("LASTCHARGE"))
            assert_serial(replies, first.get(a), first.get(b))
            # The same two INCRs (on values of the same length) in a script that ran alone:
            # a run taken back costs nothing.
            solo = first.script_load(SCRIPT.format(round="solo", token=os.urandom(6).hex()))
            first.evalsha(solo, 1, a, b, 0)
            assert float(first.execute_command("LASTCHARGE")) == crossing_charge
    finally:
        first.close()
        second.close()


# The crossing script with a command ACL refuses between the write and the stray.
REFUSING_SCRIPT = SCRIPT.replace("local n = 0\n", "redis.pcall('ECHO', 'refused')\nlocal n = 0\n")


def test_an_acl_refusal_in_a_taken_back_run_is_logged_once(clean):
    admin = client(clean)
    assert admin.execute_command("ACL", "SETUSER", "undo", "on", ">pw", "~*", "&*", "+@all", "-echo") == b"OK"
    admin.execute_command("ACL", "LOG", "RESET")

    def as_user() -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=clean.port, username="undo", password="pw", socket_timeout=60)

    first, second = as_user(), as_user()
    try:
        for round_no in range(ROUNDS):
            replies, a, b = crossing_round(first, second, round_no, REFUSING_SCRIPT)
            assert_serial(replies, first.get(a), first.get(b))
        # Alike refusals are one entry with a count: one per crossing run that counted.
        entries = [dict(zip(e[::2], e[1::2])) for e in admin.execute_command("ACL", "LOG")]
        assert [(e[b"object"], e[b"context"], e[b"count"]) for e in entries] == [(b"echo", b"lua", ROUNDS * 2)]
    finally:
        admin.execute_command("ACL", "DELUSER", "undo")
        for c in (admin, first, second):
            c.close()
