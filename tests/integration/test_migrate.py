"""MIGRATE: keys moved to another server (redis-server 7.0.15 or lapse) as RESTORE commands,
with their TTLs, COPY, REPLACE, AUTH/AUTH2 and KEYS; the keys moved are deleted here, logged
as DEL and announced as `del` events; cached connections, as INFO's migrate_cached_sockets
shows them. The error cases are compared with redis-server byte for byte, each source
migrating into the same kind of target.

With LAPSE_TARGET=redis the same tests run with redis-server as the source."""
import shutil
import socket
import time

import pytest
import redis

from conftest import running_server
from lapse_harness import RawClient, wait_until

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module", params=["redis", "lapse"])
def target(request):
    """The server keys are migrated to."""
    if request.param == "redis" and shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    with running_server(kind=request.param) as srv:
        yield srv


@pytest.fixture
def dest(target):
    c = redis.Redis(host="127.0.0.1", port=target.port, decode_responses=True)
    c.flushall()
    yield c
    c.close()


def migrate(r, target, key, db=0, *options, timeout=5000):
    return r.execute_command("MIGRATE", "127.0.0.1", target.port, key, db, timeout, *options)


def test_moves_every_type_with_its_ttl(r, target, dest):
    r.set("s", "v")
    r.pexpire("s", 100_000)
    r.rpush("l", "a", "b", 1)
    r.hset("h", mapping={"f": "v", "n": 1})
    r.sadd("set", "x", "y")
    r.zadd("z", {"m": 1.5, "n": -2})
    r.xadd("x", {"f": "v"}, id="1-1")
    r.pfadd("hll", "a", "b")
    assert migrate(r, target, "", 0, "KEYS", "s", "l", "h", "set", "z", "x", "hll") == "OK"
    assert r.exists("s", "l", "h", "set", "z", "x", "hll") == 0
    assert dest.get("s") == "v" and 99_000 < dest.pttl("s") <= 100_000
    assert dest.lrange("l", 0, -1) == ["a", "b", "1"]
    assert dest.hgetall("h") == {"f": "v", "n": "1"}
    assert dest.smembers("set") == {"x", "y"}
    assert dest.zrange("z", 0, -1, withscores=True) == [("n", -2.0), ("m", 1.5)]
    assert dest.xrange("x") == [("1-1", {"f": "v"})]
    assert dest.pfcount("hll") == 2
    assert dest.ttl("l") == -1


def test_copy_replace_nokey_and_the_targets_errors(r, target, dest):
    r.set("k", "here")
    dest.set("k", "there")
    with pytest.raises(redis.ResponseError, match="^Target instance replied with error: BUSYKEY Target key name"):
        migrate(r, target, "k")
    assert r.get("k") == "here" and dest.get("k") == "there"  # nothing moved, nothing deleted
    assert migrate(r, target, "k", 0, "COPY", "REPLACE") == "OK"
    assert r.get("k") == "here" and dest.get("k") == "here"
    assert migrate(r, target, "k", 0, "REPLACE") == "OK"
    assert r.exists("k") == 0
    assert migrate(r, target, "k") == "NOKEY"
    assert migrate(r, target, "", 0, "KEYS", "nosuch", "other") == "NOKEY"


def test_keys_go_to_the_database_asked_for(r, target, dest):
    r.set("a", "1")
    r.set("b", "2")
    assert migrate(r, target, "a", 3) == "OK"
    assert migrate(r, target, "b", 0) == "OK"
    dest.execute_command("SELECT", 3)
    assert dest.get("a") == "1" and dest.get("b") is None
    dest.execute_command("SELECT", 0)
    assert dest.get("b") == "2"


def test_auth_and_auth2(r, start_server, target):
    secured = start_server(kind=target.kind, options={"requirepass": "pw"})
    c = redis.Redis(host="127.0.0.1", port=secured.port, password="pw")
    c.execute_command("ACL", "SETUSER", "mover", "on", ">mpw", "~*", "+@all")
    r.set("a", "1")
    with pytest.raises(redis.ResponseError, match="^Target instance replied with error: NOAUTH"):
        migrate(r, secured, "a")
    with pytest.raises(redis.ResponseError, match="^Target instance replied with error: WRONGPASS"):
        migrate(r, secured, "a", 0, "AUTH", "wrong")
    assert r.get("a") == "1"
    assert migrate(r, secured, "a", 0, "AUTH", "pw") == "OK"
    r.set("b", "2")
    assert migrate(r, secured, "b", 0, "AUTH2", "mover", "mpw") == "OK"
    assert c.mget("a", "b") == [b"1", b"2"]
    assert r.exists("a", "b") == 0


def test_an_unreachable_target_is_an_ioerr_and_changes_nothing(r):
    r.set("a", "1")
    port = free_port()
    with pytest.raises(redis.ResponseError, match="^IOERR error or timeout writing to target instance$"):
        r.execute_command("MIGRATE", "127.0.0.1", port, "a", 0, 200)
    with pytest.raises(redis.ResponseError, match="^IOERR error or timeout connecting to the client$"):
        r.execute_command("MIGRATE", "nosuchhost.invalid", port, "a", 0, 200)
    assert r.get("a") == "1"


def test_a_silent_target_times_out(r):
    with socket.socket() as listener:  # accepts, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        r.set("a", "1")
        started = time.monotonic()
        with pytest.raises(redis.ResponseError, match="^IOERR error or timeout reading to target instance$"):
            r.execute_command("MIGRATE", "127.0.0.1", listener.getsockname()[1], "a", 0, 300)
        assert time.monotonic() - started < 5  # no retry after a timeout
    assert r.get("a") == "1"


def test_events_dirty_count_and_cached_connections(r, target, dest):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyspace@0__:*")
    p.get_message(timeout=1)
    r.set("a", "1")
    r.set("b", "2")
    p.get_message(timeout=1)
    p.get_message(timeout=1)
    before = r.info("persistence")["rdb_changes_since_last_save"]
    assert migrate(r, target, "", 0, "KEYS", "a", "b") == "OK"
    events = [p.get_message(timeout=1) for _ in range(2)]
    assert [(e["channel"], e["data"]) for e in events] == [("__keyspace@0__:a", "del"), ("__keyspace@0__:b", "del")]
    assert r.info("persistence")["rdb_changes_since_last_save"] - before == 2
    p.close()
    r.config_set("notify-keyspace-events", "")
    cached = r.info("stats")["migrate_cached_sockets"]
    assert cached >= 1  # earlier tests' targets may still be cached too
    # The same connection again (one cached per target), until 10 s idle close it.
    r.set("c", "3")
    assert migrate(r, target, "c") == "OK"
    assert r.info("stats")["migrate_cached_sockets"] == cached


def test_an_idle_cached_connection_closes_after_10_s(start_server):
    source, target = start_server(), start_server()
    r = redis.Redis(host="127.0.0.1", port=source.port, decode_responses=True)
    r.set("a", "1")
    assert migrate(r, target, "a") == "OK"
    assert r.info("stats")["migrate_cached_sockets"] == 1
    clients = redis.Redis(host="127.0.0.1", port=target.port).client_list
    assert len(clients()) == 2  # MIGRATE's and this one
    wait_until(lambda: r.info("stats")["migrate_cached_sockets"] == 0, timeout=15, what="the idle connection to close")
    wait_until(lambda: len(clients()) == 1, timeout=5, what="the target to see it closed")


def test_inside_multi_and_a_script(r, target, dest):
    r.set("t", "1")
    tx = r.pipeline(transaction=True)
    tx.execute_command("MIGRATE", "127.0.0.1", target.port, "t", 0, 5000)
    tx.exists("t")
    assert tx.execute() == ["OK", 0]
    r.set("u", "2")
    assert r.eval("return redis.call('MIGRATE', '127.0.0.1', ARGV[1], KEYS[1], 0, 5000)", 1, "u", target.port) == "OK"
    assert dest.mget("t", "u") == ["1", "2"]


@pytest.mark.lapse_only
def test_the_aof_logs_the_del_of_what_moved(start_server, target, dest, tmp_path):
    srv = start_server(options={"dir": str(tmp_path), "appendonly": "yes", "aof-use-rdb-preamble": "no"})
    c = redis.Redis(host="127.0.0.1", port=srv.port)
    c.set("a", "1")
    c.set("b", "2")
    c.set("kept", "3")
    assert migrate(c, target, "", 0, "KEYS", "a", "nosuch", "b") == b"OK"
    assert migrate(c, target, "kept", 0, "COPY") == b"OK"
    srv.stop()
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert incr.endswith(b"*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n")
    assert b"MIGRATE" not in incr.upper()


# ---- the same replies as redis-server, byte for byte ----

ERRORS = [
    ("MIGRATE",), ("MIGRATE", "h", "1", "a", "0"),
    ("MIGRATE", "{host}", "{port}", "a", "0", "1000", "bogus"),
    ("MIGRATE", "{host}", "{port}", "a", "0", "1000", "AUTH"),
    ("MIGRATE", "{host}", "{port}", "a", "0", "1000", "AUTH2", "u"),
    ("MIGRATE", "{host}", "{port}", "a", "0", "1000", "KEYS", "b"),
    ("MIGRATE", "{host}", "{port}", "", "0", "1000", "KEYS"),
    ("MIGRATE", "{host}", "{port}", "a", "x", "1000"), ("MIGRATE", "{host}", "{port}", "a", "0", "x"),
    ("MIGRATE", "{host}", "{port}", "a", "99999999999999999999", "1000"),
    ("MIGRATE", "{host}", "{port}", "missing", "0", "1000"), ("MIGRATE", "{host}", "{port}", "missing", "0", "-5"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "a", "0", "1000"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "1000", "KEYS", "a", "b"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "1000", "AUTH", "x", "KEYS", "a"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "1000", "KEYS", "a"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "1000", "AUTH", "keys", "KEYS", "a"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "1000", "AUTH2", "keys", "keys", "KEYS", "b"),
    ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "1000", "AUTH", "keys"),
    ("COMMAND", "GETKEYSANDFLAGS", "MIGRATE", "h", "1", "k", "0", "1000"),
    ("COMMAND", "INFO", "MIGRATE"),
    ("SET", "a", "1"), ("MIGRATE", "{host}", "{port}", "a", "0", "1000", "COPY", "COPY", "REPLACE"), ("EXISTS", "a"),
    ("SET", "s1", "v"), ("MIGRATE", "{host}", "{port}", "", "5", "1000", "REPLACE", "KEYS", "s1", "nosuch"),
    ("EXISTS", "s1"), ("SET", "s2", "v"),
    ("MIGRATE", "{host}", "{port}", "s2", "0", "1000", "REPLACE", "AUTH2", "nouser", "nopass"), ("EXISTS", "s2"),
    ("MULTI",), ("MIGRATE", "{host}", "{port}", "a", "0", "1000", "REPLACE"), ("EXEC",),
]


def test_passwords_are_hidden_from_slowlog_and_monitor(r, target, dest):
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    r.set("a", "1")
    with pytest.raises(redis.ResponseError):
        migrate(r, target, "a", 0, "COPY", "AUTH", "secret1")
    with pytest.raises(redis.ResponseError):
        migrate(r, target, "a", 0, "AUTH2", "user", "secret2", "REPLACE")
    with pytest.raises(redis.ResponseError):
        migrate(r, target, "a", 0, "bogus", "AUTH", "shown")
    logged = [e["command"].decode() for e in r.slowlog_get(10) if e["command"].startswith(b"MIGRATE")]
    r.config_set("slowlog-log-slower-than", 10000)
    port = str(target.port)
    assert logged == [
        f"MIGRATE 127.0.0.1 {port} a 0 5000 bogus AUTH shown",  # refused before AUTH was read
        f"MIGRATE 127.0.0.1 {port} a 0 5000 AUTH2 (redacted) (redacted) REPLACE",
        f"MIGRATE 127.0.0.1 {port} a 0 5000 COPY AUTH (redacted)"]


def run_errors(port, target):
    out = []
    with RawClient(port) as c, RawClient(target.port) as t:
        c.call("FLUSHALL")
        t.call("FLUSHALL")
        for cmd in ERRORS:
            cmd = tuple(a.format(host="127.0.0.1", port=target.port) for a in cmd)
            out.append(c.call_raw(*cmd))
    return out


@needs_redis
def test_same_replies_as_redis(server, redis_server, target):
    expected, actual = run_errors(redis_server.port, target), run_errors(server.port, target)
    diffs = [f"{cmd}\n      redis: {w!r}\n      lapse: {g!r}" for cmd, w, g in zip(ERRORS, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)
