"""Differential scenarios: a list of commands run on lapse and on Debian's redis-server, whose
raw replies must match byte for byte (test_hashes_sets.py, test_lists.py, test_zsets.py,
test_sort.py, test_geo.py).

A step is a command tuple, or ("sorted", *command) for a reply whose order is a hash table's
and not part of the contract: it is compared as a sorted decoded reply. HELLO's reply is
compared by its type only, since it names each server's version and the client id.
"""
from __future__ import annotations

from lapse_harness import RawClient, parse_reply

SORTED = "sorted"


def s(*cmd):
    """A step compared as a sorted decoded reply."""
    return (SORTED, *cmd)


def sort_deep(value):
    if isinstance(value, list):
        return sorted((sort_deep(v) for v in value), key=repr)
    return value


def run_scenario(port, steps, defaults=()):
    """The raw replies of `steps` on a fresh FLUSHALL; `defaults` are (setting, value) pairs
    put back afterwards, for scenarios that change them."""
    conn = RawClient(port)
    try:
        assert conn.call("FLUSHALL") == "OK"
        out = []
        for step in steps:
            cmd = step[1:] if step[0] == SORTED else step
            reply = conn.call_raw(*cmd)
            if cmd[0] == "HELLO":
                reply = reply[:1]
            elif step[0] == SORTED:
                reply = sort_deep(parse_reply(reply)[0])
            out.append(reply)
        return out
    finally:
        try:
            for name, value in defaults:
                conn.call("CONFIG", "SET", name, value)
            conn.call("SELECT", "0")
        finally:
            conn.close()


def assert_same_replies(steps, server, redis_server, defaults=(), width=400):
    expected = run_scenario(redis_server.port, steps, defaults)
    actual = run_scenario(server.port, steps, defaults)
    diffs = [f"{st[:8]}\n      redis: {w!r:.{width}}\n      lapse: {g!r:.{width}}"
             for st, w, g in zip(steps, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)
