"""Differential test: the same ~200 deterministic commands go to lapse and to Debian's
redis-server (7.0) over raw sockets, and the reply bytes must be identical.

Nothing here depends on timing: TTLs are far in the future and TTL/PTTL replies are only
compared as -2 / -1 / positive; KEYS is compared as a sorted list and SCAN is compared
by the set of keys a full iteration returns (the order is the server's own business).
Skipped when redis-server is not on PATH.
"""
import shutil

import pytest

from lapse_harness import parse_reply
from conftest import running_server

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

FAR = "4102444800"  # 2100-01-01, as seconds
FAR_MS = "4102444800123"

SCRIPT = [
    # connection basics
    ("PING",), ("PING", "hello"), ("ECHO", "a b c"), ("ECHO", b"\x00\r\n"), ("PING", "a", "b"),
    ("SELECT", "0"), ("SELECT", "15"), ("SELECT", "16"), ("SELECT", "-1"), ("SELECT", "x"), ("SELECT", "0"),
    ("nosuchcommand",), ("nosuchcommand", "a", "b"), ("GET",), ("SET", "k"), ("TIME", "x"), ("DBSIZE", "x"),
    ("CONFIG", "GET", "save"), ("CONFIG", "GET", "appendonly"), ("CONFIG", "GET", "maxclients"),
    ("CONFIG", "GET", "databases"), ("CONFIG", "GET", "nosuch"), ("CONFIG", "SET", "nosuch", "1"),
    ("CONFIG", "SET", "timeout", "abc"), ("CONFIG", "GET", "timeout"), ("CLIENT", "GETNAME"),
    ("CLIENT", "SETNAME", "diff"), ("CLIENT", "GETNAME"), ("CLIENT", "SETNAME", "a b"), ("CLIENT", "nosuch"),
    ("AUTH", "pw"), ("HELLO", "4"), ("HELLO", "x"), ("INFO", "nosuchsection"),
    # SET and its options
    ("SET", "s", "v"), ("GET", "s"), ("SET", "s", "v2", "GET"), ("SET", "s", "v3", "NX"), ("SET", "s", "v4", "XX"),
    ("SET", "new", "x", "XX"), ("SET", "s", "v", "NX", "XX"), ("SET", "s", "v", "EX", "10", "PX", "10"),
    ("SET", "s", "v", "KEEPTTL", "EX", "10"), ("SET", "s", "v", "EX", "0"), ("SET", "s", "v", "EX", "-1"),
    ("SET", "s", "v", "EX", "x"), ("SET", "s", "v", "PXAT", "0"), ("SET", "s", "v", "FOO"),
    ("SET", "s", "v", "EX", "9223372036854775807"), ("SET", "t", "v", "EXAT", FAR), ("TTL", "t"),
    ("EXPIRETIME", "t"), ("SET", "t", "w", "KEEPTTL"), ("EXPIRETIME", "t"), ("SET", "t", "x"), ("TTL", "t"),
    ("SET", "u", "v", "PXAT", FAR_MS), ("PEXPIRETIME", "u"), ("SET", "u", "v", "NX", "GET"),
    ("SET", "u2", "v", "XX", "GET"), ("GET", "u"), ("GET", "nosuch"),
    # SETNX / SETEX / PSETEX / GETSET / GETDEL / GETEX
    ("SETNX", "nx", "1"), ("SETNX", "nx", "2"), ("GET", "nx"), ("SETEX", "ex", "100000", "v"), ("TTL", "ex"),
    ("SETEX", "ex", "0", "v"), ("SETEX", "ex", "x", "v"), ("PSETEX", "px", "100000000", "v"), ("PTTL", "px"),
    ("PSETEX", "px", "-1", "v"), ("GETSET", "gs", "a"), ("GETSET", "gs", "b"), ("GETDEL", "gs"), ("GETDEL", "gs"),
    ("GETEX", "nx"), ("GETEX", "nx", "EX", "100000"), ("TTL", "nx"), ("GETEX", "nx", "PERSIST"), ("TTL", "nx"),
    ("GETEX", "nx", "EXAT", FAR), ("EXPIRETIME", "nx"), ("GETEX", "nx", "PXAT", FAR_MS), ("PEXPIRETIME", "nx"),
    ("GETEX", "nx", "EX", "0"), ("GETEX", "nx", "EX", "1", "PX", "1"), ("GETEX", "nx", "FOO"),
    ("GETEX", "missing", "EX", "10"),
    # MGET / MSET / MSETNX
    ("MSET", "m1", "1", "m2", "2", "m3", "3"), ("MGET", "m1", "m2", "m3", "missing"), ("MSET", "m1"),
    ("MSET", "m1", "1", "m2"), ("MSETNX", "m3", "x", "m4", "4"), ("MSETNX", "m4", "4", "m5", "5"),
    ("MGET", "m4", "m5"), ("MGET", "m1", "m1"),
    # APPEND / STRLEN / GETRANGE / SETRANGE
    ("APPEND", "ap", "Hello"), ("APPEND", "ap", " World"), ("STRLEN", "ap"), ("STRLEN", "missing"),
    ("GETRANGE", "ap", "0", "4"), ("GETRANGE", "ap", "-5", "-1"), ("GETRANGE", "ap", "5", "1"),
    ("GETRANGE", "ap", "-100", "100"), ("GETRANGE", "missing", "0", "1"), ("GETRANGE", "ap", "x", "1"),
    ("SETRANGE", "ap", "6", "Redis"), ("GET", "ap"), ("SETRANGE", "sr", "3", "x"), ("GET", "sr"),
    ("SETRANGE", "sr2", "0", ""), ("EXISTS", "sr2"), ("SETRANGE", "ap", "-1", "x"),
    ("SETRANGE", "ap", "536870912", "x"),
    # counters
    ("INCR", "c"), ("INCRBY", "c", "10"), ("DECR", "c"), ("DECRBY", "c", "5"), ("INCRBY", "c", "x"),
    ("INCR", "ap"), ("SET", "c", "9223372036854775807"), ("INCR", "c"), ("DECRBY", "c", "-9223372036854775808"),
    ("SET", "c", " 1"), ("INCR", "c"), ("INCRBYFLOAT", "f", "1.1"), ("INCRBYFLOAT", "f", "2.2"),
    ("INCRBYFLOAT", "f", "1e3"), ("INCRBYFLOAT", "f", "-1003.3"), ("INCRBYFLOAT", "f", "x"),
    ("INCRBYFLOAT", "f", "inf"), ("INCRBYFLOAT", "ap", "1"), ("INCRBYFLOAT", "g", "5.0e-1"), ("GET", "g"),
    # key space
    ("EXISTS", "m1", "m1", "missing"), ("TYPE", "m1"), ("TYPE", "missing"), ("DEL", "m1", "missing", "m2"),
    ("UNLINK", "m3", "m3"), ("TOUCH", "m4", "m5", "missing"), ("RENAME", "m4", "r1"), ("RENAME", "missing", "x"),
    ("RENAME", "r1", "r1"), ("RENAMENX", "r1", "m5"), ("RENAMENX", "r1", "r2"), ("GET", "r2"),
    ("COPY", "r2", "r3"), ("COPY", "r2", "r3"), ("COPY", "r2", "r3", "REPLACE"), ("COPY", "r2", "r2"),
    ("COPY", "r2", "r3", "DB", "1"), ("COPY", "r2", "r3", "DB", "16"), ("COPY", "r2", "r3", "DB", "x"),
    ("COPY", "missing", "r4"), ("MOVE", "r3", "2"), ("MOVE", "r3", "2"), ("MOVE", "r2", "0"), ("MOVE", "r2", "99"),
    ("SELECT", "2"), ("KEYS", "*"), ("SELECT", "0"),
    # expiry family (far deadlines only)
    ("SET", "e", "v"), ("TTL", "e"), ("PTTL", "e"), ("EXPIRETIME", "e"), ("TTL", "missing"),
    ("EXPIRE", "e", "100000", "XX"), ("EXPIRE", "e", "100000", "GT"), ("EXPIRE", "e", "100000", "LT"),
    ("TTL", "e"), ("EXPIRE", "e", "200000", "NX"), ("EXPIRE", "e", "200000", "GT"), ("EXPIRE", "e", "1000", "GT"),
    ("PEXPIRE", "e", "100000000", "LT"), ("PTTL", "e"), ("EXPIREAT", "e", FAR), ("EXPIRETIME", "e"),
    ("PEXPIREAT", "e", FAR_MS), ("PEXPIRETIME", "e"), ("EXPIRE", "e", "10", "NX", "XX"),
    ("EXPIRE", "e", "10", "GT", "LT"), ("EXPIRE", "e", "10", "FOO"), ("EXPIRE", "e", "x"),
    ("EXPIRE", "e", "9223372036854775807"), ("PERSIST", "e"), ("PERSIST", "e"), ("TTL", "e"),
    ("EXPIRE", "missing", "10"), ("EXPIRE", "e", "0"), ("EXISTS", "e"), ("SET", "e", "v"),
    ("EXPIREAT", "e", "1"), ("GET", "e"), ("SET", "e", "v"), ("PEXPIRE", "e", "-1"), ("TYPE", "e"),
    # KEYS / SCAN / DBSIZE / RANDOMKEY
    ("KEYS", "*"), ("KEYS", "m?"), ("KEYS", "r[0-9]"), ("KEYS", "nomatch*"), ("SCANALL",),
    ("SCANALL", "MATCH", "r*"), ("SCANALL", "TYPE", "string"), ("SCANALL", "TYPE", "hash"),
    ("SCAN", "x"), ("SCAN", "0", "COUNT", "0"), ("SCAN", "0", "MATCH"), ("DBSIZE",),
    ("SELECT", "9"), ("RANDOMKEY",), ("SET", "only", "1"), ("RANDOMKEY",), ("DBSIZE",),
    # SWAPDB / FLUSHDB / FLUSHALL
    ("SWAPDB", "9", "10"), ("DBSIZE",), ("SELECT", "10"), ("GET", "only"), ("SWAPDB", "0", "16"),
    ("SWAPDB", "x", "1"), ("SWAPDB", "1", "x"), ("FLUSHDB",), ("DBSIZE",), ("FLUSHDB", "ASYNC"),
    ("FLUSHDB", "FOO"), ("SELECT", "0"), ("OBJECT", "ENCODING", "c"), ("OBJECT", "ENCODING", "r2"),
    ("SET", "longstr", "x" * 100), ("OBJECT", "ENCODING", "longstr"), ("OBJECT", "ENCODING", "missing"),
    ("OBJECT", "FOO", "x"), ("OBJECT", "IDLETIME", "missing"), ("FLUSHALL", "SYNC"), ("DBSIZE",),
    ("FLUSHALL", "ASYNC"), ("FLUSHALL", "FOO"),
    # binary safety
    ("SET", b"bin\x00key", b"val\r\n\x00\xff"), ("GET", b"bin\x00key"), ("STRLEN", b"bin\x00key"),
    ("APPEND", b"bin\x00key", b"\r\n"), ("GETRANGE", b"bin\x00key", "3", "-1"), ("KEYS", "bin*"),
    # RESP3
    ("HELLO", "3"), ("GET", "missing"), ("SET", "r3", "v"), ("MGET", "r3", "missing"), ("SET", "r3", "w", "NX"),
    ("CONFIG", "GET", "appendonly"), ("CLIENT", "GETNAME"), ("INCRBYFLOAT", "r3f", "2.5"), ("TTL", "r3"),
    ("EXISTS", "r3"), ("GETDEL", "missing"), ("OBJECT", "ENCODING", "missing"), ("SCANALL",), ("KEYS", "r3*"),
    ("HELLO", "2"), ("GET", "missing"),
]


def normalize(cmd, raw_reply):
    name = cmd[0].upper() if isinstance(cmd[0], str) else cmd[0]
    value, _ = parse_reply(raw_reply)
    if name in ("TTL", "PTTL") and isinstance(value, int) and value > 0:
        return ("positive",)
    if name == "KEYS" and isinstance(value, list):
        return ("keys", sorted(value))
    if name == "HELLO" and isinstance(value, (dict, list)):
        fields = value if isinstance(value, dict) else dict(zip(value[::2], value[1::2]))
        return ("hello", raw_reply[:1], {k: v for k, v in fields.items() if k not in (b"version", b"id")})
    return raw_reply


def run_script(port):
    from lapse_harness import RawClient

    out = []
    with RawClient(port) as c:
        assert c.call("FLUSHALL") == "OK"
        for cmd in SCRIPT:
            if cmd[0] == "SCANALL":
                cursor, keys = b"0", set()
                while True:
                    reply = c.call("SCAN", cursor, *cmd[1:])
                    cursor, page = reply
                    keys |= set(page)
                    if cursor == b"0":
                        break
                out.append(("scan", sorted(keys)))
                continue
            out.append(normalize(cmd, c.call_raw(*cmd)))
    return out


@pytest.fixture(scope="module")
def redis_server():
    with running_server(kind="redis") as srv:
        yield srv


def test_script_is_deterministic_and_long_enough():
    assert len(SCRIPT) >= 200


def test_same_bytes_as_redis(server, redis_server):
    expected = run_script(redis_server.port)
    actual = run_script(server.port)
    mismatches = []
    for cmd, want, got in zip(SCRIPT, expected, actual):
        if want != got:
            mismatches.append(f"{' '.join(repr(a) if isinstance(a, bytes) else a for a in cmd)}\n"
                              f"      redis: {want!r}\n      lapse: {got!r}")
    assert not mismatches, f"{len(mismatches)} of {len(SCRIPT)} replies differ:\n" + "\n".join(mismatches)
