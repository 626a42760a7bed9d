"""Small server-surface commands of issue 18 (RESET, ROLE, WAIT, READONLY/READWRITE, SUBSTR,
LOLWUT, and CLUSTER, ASKING, MODULE, REPLICAOF, FAILOVER and RESTORE-ASKING as a standalone
master without replicas or modules answers them), compared with Debian's redis-server 7.0 byte for byte where the reply is Redis's."""
import shutil
import time

import pytest

from conftest import running_server
from lapse_harness import RawClient, RespError
from lapse_harness import RespError as E

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

SCRIPT = [
    ("ROLE",), ("ROLE", "x"),
    ("WAIT", "0", "0"), ("WAIT", "x", "0"), ("WAIT", "0", "x"), ("WAIT", "x", "y"), ("WAIT", "0", "-1"),
    ("WAIT", "1", "20"), ("WAIT", "0"),
    ("READONLY",), ("READWRITE",), ("READONLY", "x"),
    # a standalone server without modules
    ("CLUSTER", "INFO"), ("CLUSTER", "SLOTS"), ("CLUSTER", "HELP"), ("CLUSTER", "KEYSLOT", "a"),
    ("CLUSTER", "NOSUCH"), ("CLUSTER",), ("CLUSTER", "SLOTS", "x"), ("CLUSTER", "SETSLOT", "1"),
    ("ASKING",), ("ASKING", "x"),
    ("MODULE", "LIST"), ("MODULE", "LIST", "x"), ("MODULE", "HELP"), ("MODULE", "LOAD", "/nonexistent.so"),
    ("MODULE", "LOADEX", "/x.so", "ARGS", "a"), ("MODULE", "UNLOAD", "x"), ("MODULE", "NOSUCH"), ("MODULE",),
    ("COMMAND", "INFO", "asking"), ("COMMAND", "GETKEYS", "cluster", "info"),
    ("MULTI",), ("CLUSTER", "INFO"), ("MODULE", "LIST"), ("EXEC",),
    ("EVAL", "return redis.pcall('cluster', 'info')", "0"), ("EVAL", "return redis.pcall('module', 'list')", "0"),
    ("SET", "s", "Hello World"), ("SUBSTR", "s", "0", "4"), ("SUBSTR", "s", "-5", "-1"), ("SUBSTR", "missing", "0", "1"),
    ("SUBSTR", "s", "x", "1"), ("SUBSTR", "s", "0"),
    ("RESET", "x"), ("LOLWUT", "VERSION", "x"), ("LOLWUT", "VERSION", "5", "x"), ("LOLWUT", "VERSION", "6", "10", "y"),
    ("ECHO", "hi"), ("ECHO",), ("ECHO", "a", "b"), ("SHUTDOWN", "ABORT"), ("SHUTDOWN", "ABORT", "NOW"),
    ("SHUTDOWN", "NOSAVE", "SAVE"), ("SHUTDOWN", "FOO"),
    ("HELLO", "3"), ("ECHO", "hi"), ("ROLE",), ("WAIT", "0", "0"), ("HELLO", "2"),
    # a master without replicas: REPLICAOF NO ONE is what it already is; bad input gets Redis's error
    ("REPLICAOF", "no", "one"), ("REPLICAOF", "NO", "ONE"), ("SLAVEOF", "no", "one"), ("REPLICAOF", "no"),
    ("REPLICAOF", "no", "one", "x"), ("REPLICAOF", "h", "abc"), ("REPLICAOF", "h", "-1"), ("REPLICAOF", "h", "65536"),
    ("SLAVEOF", "h", "1.5"), ("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "ABORT", "x"),
    ("FAILOVER", "TIMEOUT"), ("FAILOVER", "TIMEOUT", "0"), ("FAILOVER", "TIMEOUT", "x"),
    ("FAILOVER", "TIMEOUT", "1", "TIMEOUT", "2"), ("FAILOVER", "TO", "h"), ("FAILOVER", "TO", "h", "x"),
    ("FAILOVER", "TO", "h", "1", "TO", "g", "2"), ("FAILOVER", "FORCE", "FORCE"), ("FAILOVER", "bogus"),
    ("FAILOVER", "FORCE", "TIMEOUT", "5", "TO", "h", "1"), ("SYNC", "x"), ("PSYNC", "x"),
    ("EVAL", "return redis.pcall('replicaof', 'no', 'one')", "0"),
    # Redis's no_multi commands are refused while queuing, and the transaction with them
    ("MULTI",), ("SET", "queued", "1"), ("SAVE",), ("SHUTDOWN",), ("SYNC",), ("PSYNC", "?", "-1"), ("EXEC",),
    ("GET", "queued"), ("MULTI",), ("REPLICAOF", "no", "one"), ("EXEC",),
    # RESTORE-ASKING is RESTORE on a server outside a cluster
    ("SET", "k", "v"), ("RESTORE-ASKING", "k2", "0", b"\x00\x01v\n\x00\x8e\xa7\xf2\xbd\xd6\x9a\xc6="),
    ("GET", "k2"), ("RESTORE-ASKING", "k2", "0", b"\x00\x01v\n\x00\x8e\xa7\xf2\xbd\xd6\x9a\xc6="),
    ("RESTORE-ASKING", "k3"), ("COMMAND", "GETKEYS", "RESTORE-ASKING", "k4", "0", "x"),
    # RESET: a fresh connection's state again
    ("SELECT", "3"), ("CLIENT", "SETNAME", "before"), ("HELLO", "3"), ("RESET",), ("CLIENT", "GETNAME"),
    ("SET", "where", "db0"), ("SELECT", "3"), ("GET", "where"), ("SELECT", "0"), ("GET", "where"),
    ("HELLO", "3"), ("GET", "missing"), ("RESET",), ("GET", "missing"),
    # RESET inside MULTI runs at once and ends the transaction
    ("MULTI",), ("SET", "m", "1"), ("RESET",), ("EXEC",), ("GET", "m"),
    # ... and unwatches
    ("WATCH", "w"), ("SET", "w", "1"), ("RESET",), ("MULTI",), ("PING",), ("EXEC",),
    # WAIT inside MULTI never blocks
    ("MULTI",), ("WAIT", "1", "0"), ("EXEC",),
]


def run(port):
    out = []
    with RawClient(port) as c:
        c.call("FLUSHALL")
        for cmd in SCRIPT:
            reply = c.call_raw(*cmd)
            out.append(reply[:1] if cmd[0] == "HELLO" else reply)
    return out


@pytest.fixture(scope="module")
def redis_server():
    with running_server(kind="redis") as srv:
        yield srv


@needs_redis
def test_same_replies_as_redis(server, redis_server):
    expected, actual = run(redis_server.port), run(server.port)
    diffs = [f"{cmd}\n      redis: {w!r}\n      lapse: {g!r}" for cmd, w, g in zip(SCRIPT, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)


@pytest.mark.lapse_only
def test_following_a_master_is_refused_and_changes_nothing(raw):
    raw.call("SET", "kept", "1")
    for cmd in [("REPLICAOF", "127.0.0.1", "6379"), ("SLAVEOF", "localhost", "0")]:
        assert raw.call(*cmd) == E("ERR lapse does not replicate from a master")
    assert raw.call("ROLE") == [b"master", 0, []]
    assert raw.call("GET", "kept") == b"1"
    assert raw.call("INFO", "replication").splitlines()[1] == b"role:master"


def test_reset_deauthenticates_when_a_password_is_set(start_server):
    srv = start_server(options={"requirepass": "pw"})
    with RawClient(srv.port) as c:
        assert c.call("AUTH", "pw") == "OK"
        assert c.call("SET", "k", "v") == "OK"
        assert c.call("RESET") == "RESET"
        assert c.call("GET", "k") == RespError("NOAUTH Authentication required.")
        assert c.call("AUTH", "pw") == "OK"
        assert c.call("GET", "k") == b"v"


def test_wait_for_replicas_waits_out_its_timeout(raw):
    start = time.monotonic()
    assert raw.call("WAIT", "1", "150") == 0
    assert time.monotonic() - start >= 0.14


@pytest.mark.lapse_only
def test_lolwut_draws_and_names_lapse(raw):
    art = raw.call("LOLWUT")
    assert b"lapse ver. " in art and art.count(b"\n") >= 8


# ---- SLOWLOG ----

SLOWLOG_SCRIPT = [
    ("SET", "k", "v"), ("CLIENT", "SETNAME", "slowpoke"), ("GET", "k"), ("SET", "big", "x" * 300),
    ("ECHO", *["a"] * 40), ("AUTH", "secret"), ("HELLO", "2", "AUTH", "default", "secret"),
    ("MULTI",), ("GET", "k"), ("INCR", "n"), ("EXEC",),
]
SLOWLOG_ERRORS = [("SLOWLOG", "GET", "x"), ("SLOWLOG", "GET", "-5"), ("SLOWLOG", "GET", "1", "2"),
                  ("SLOWLOG", "LEN", "x"), ("SLOWLOG", "NOSUCH"), ("SLOWLOG",), ("SLOWLOG", "HELP")]


def _slowlog(port):
    with RawClient(port) as c:
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        c.call("SLOWLOG", "RESET")
        for cmd in SLOWLOG_SCRIPT:
            c.call(*cmd)
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
        entries = c.call("SLOWLOG", "GET", "-1")
        errors = [c.call_raw(*cmd) for cmd in SLOWLOG_ERRORS]
        length = c.call("SLOWLOG", "LEN")
        c.call("CONFIG", "SET", "slowlog-max-len", "3")
        trimmed = c.call("SLOWLOG", "LEN")
        c.call("CONFIG", "SET", "slowlog-max-len", "128")
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        first_id = entries[-1][0]
        shape = [(e[0] - first_id, isinstance(e[1], int), e[2] >= 0, e[3], e[5]) for e in entries]
        return shape, errors, length, trimmed


@needs_redis
def test_slowlog_as_redis(server, redis_server):
    mine, theirs = _slowlog(server.port), _slowlog(redis_server.port)
    assert mine == theirs


def test_slowlog_threshold_and_reset(raw):
    raw.call("SLOWLOG", "RESET")
    assert raw.call("SLOWLOG", "LEN") == 0
    raw.call("GET", "k")  # far under the default 10 ms
    assert raw.call("SLOWLOG", "LEN") == 0
    assert raw.call("CONFIG", "SET", "slowlog-log-slower-than", "-2") == RespError(
        "ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - "
        "argument must be between -1 and 9223372036854775807 inclusive")
    assert raw.call("CONFIG", "GET", "slowlog-log-slower-than") == [b"slowlog-log-slower-than", b"10000"]


# ---- MEMORY ---------------------------------------------------------------------------------

MEMORY_STEPS = [("SET", "k", "v"), ("MEMORY", "USAGE", "nosuch"), ("MEMORY", "USAGE", "k", "SAMPLES"),
                ("MEMORY", "USAGE", "k", "SAMPLES", "x"), ("MEMORY", "USAGE", "k", "FOO", "1"),
                ("MEMORY", "USAGE", "k", "SAMPLES", "-1"), ("MEMORY", "USAGE", "nosuch", "SAMPLES", "0"),
                ("MEMORY", "USAGE"), ("MEMORY",), ("MEMORY", "PURGE"), ("MEMORY", "PURGE", "x"),
                ("MEMORY", "NOSUCH"), ("MEMORY", "HELP"), ("MEMORY", "HELP", "x"), ("MEMORY", "STATS", "x"),
                ("MEMORY", "DOCTOR", "x")]


@needs_redis
def test_memory_replies_as_redis(server, redis_server):
    replies = []
    for srv in (redis_server, server):
        with RawClient(srv.port) as c:
            c.call("FLUSHALL")
            replies.append([c.call_raw(*step) for step in MEMORY_STEPS])
    diffs = [f"{s}\n  redis: {w!r}\n  lapse: {g!r}" for s, w, g in zip(MEMORY_STEPS, *replies) if w != g]
    assert not diffs, "\n".join(diffs)


@pytest.mark.lapse_only
def test_memory_usage_is_what_the_key_costs(raw):
    raw.call("CONFIG", "RESETSTAT")
    raw.call("SET", "small", "v")
    raw.call("SET", "large", "x" * 10000)
    raw.call("SET", "volatile", "v", "EX", "100")
    small, large, volatile = (raw.call("MEMORY", "USAGE", k) for k in ("small", "large", "volatile"))
    assert 24 <= small <= 64  # a 20-byte header, the key and value, a bucket slot
    assert 10000 < large <= 10000 + 4096  # the allocator's size class rounds up
    assert volatile >= small + 8  # the deadline in the entry and the record in the wheel
    assert raw.call("MEMORY", "USAGE", "small", "SAMPLES", "0") == small
    stats = raw.call("MEMORY", "MALLOC-STATS")
    assert stats and b"jemalloc" in stats or stats == b"Stats not supported for the current allocator"
    assert raw.call("MEMORY", "USAGE", "nosuch") is None
    stats = raw.call("INFO", "stats").decode()  # USAGE is neither a hit nor a miss
    assert "keyspace_hits:0\r\n" in stats and "keyspace_misses:0\r\n" in stats
