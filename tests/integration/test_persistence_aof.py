"""The append-only log (issue 17): settings, Redis 7.0's multi-part layout, restarts that keep
every type and every deadline, redis-check-aof and redis-server 7.0.15 on lapse's files and
lapse on Redis's, kill -9 under appendfsync always, torn tails, BGREWRITEAOF.

Each test runs its servers in a temporary `dir`. With LAPSE_TARGET=redis the same tests run
against redis-server 7.0.15 (those marked lapse_only excepted), to show that the replies and
the behaviour expected are Redis's.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest
import redis

from lapse_harness import RespError as E
from lapse_harness import ServerProcess, target_kind, wait_until

MANIFEST = "appendonly.aof.manifest"


def aof_options(tmp_path, **more):
    options = {"dir": str(tmp_path), "appendonly": "yes"}
    options.update(more)
    return options


def up(start_server, **kwargs):
    """A started server that has finished loading (Redis answers LOADING until then)."""
    srv = start_server(**kwargs)

    def answers():
        with srv.client() as c:
            return c.call("PING") == "PONG"

    wait_until(answers, what="the server to load its data")
    return srv


def start_fails(options) -> str:
    """Starts a server that must exit during start-up; returns its log."""
    srv = ServerProcess(options=options)
    try:
        srv.start()
    except RuntimeError as e:  # exited before it answered at all
        return str(e)
    assert srv.wait_exit(30) not in (None, 0), "the server started"
    srv.expected_exit = True
    return srv.log_text()


def client(srv) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=False, socket_timeout=30)


def info_persistence(srv) -> dict:
    return client(srv).info("persistence")


def wait_rewrite_done(srv):
    wait_until(lambda: info_persistence(srv)["aof_rewrite_in_progress"] == 0, what="the AOF rewrite to end")


def state(srv, databases=(0, 1)) -> dict:
    """Every key of `databases` with its type, value and absolute deadline."""
    c = client(srv)
    out = {}
    for db in databases:
        c.execute_command("SELECT", db)
        for key in c.keys("*"):
            kind = c.type(key).decode()
            if kind == "string":
                value = c.get(key)
            elif kind == "list":
                value = c.lrange(key, 0, -1)
            elif kind == "hash":
                value = sorted(c.hgetall(key).items())
            elif kind == "set":
                value = sorted(c.smembers(key))
            elif kind == "zset":
                value = c.zrange(key, 0, -1, withscores=True)
            elif kind == "stream":
                # Redis 7.0's own replay loses a group's entries-read (and so its lag): not compared.
                groups = [dict(zip(g[::2], g[1::2])) for g in c.execute_command("XINFO", "GROUPS", key)]
                groups = [(g[b"name"], g[b"consumers"], g[b"pending"], g[b"last-delivered-id"]) for g in groups]
                value = (c.xrange(key), groups, c.execute_command("XINFO", "STREAM", key)[1::2][:2])
            out[(db, key)] = (kind, value, c.execute_command("PEXPIRETIME", key))
    c.execute_command("SELECT", 0)
    return out


def fill_every_type(c: redis.Redis):
    """Writes of every Redis type, deadlines, and the commands the log must not replay as sent."""
    c.set("str", "v")
    c.set("ex", "v", ex=1000)
    c.setex("setex", 1000, "v")
    c.set("persisted", "v", px=100000)
    c.persist("persisted")
    c.set("num", "10")
    c.incr("num")
    c.incrbyfloat("float", "1.5")
    c.rpush("list", "a", "b", "c")
    c.lpush("list", "z")
    c.hset("hash", mapping={"f1": "1", "f2": "2"})
    c.hincrbyfloat("hash", "f3", "0.25")
    c.sadd("set", *[str(i) for i in range(20)])
    c.spop("set")
    c.spop("set", 3)
    c.zadd("zset", {"a": 1.5, "b": -2, "c": 3.0e10})
    c.zincrby("zset", 0.1, "a")
    c.expire("list", 2000)
    c.getex("str", ex=3000)
    c.xadd("stream", {"f": "v"})
    c.xadd("stream", {"f": "w"})
    c.xgroup_create("stream", "g", id="0")
    c.xreadgroup("g", "alice", {"stream": ">"}, count=1)
    tx = c.pipeline(transaction=True)
    tx.set("tx1", "1").incr("tx1").rpush("txlist", "x")
    tx.execute()
    c.eval("redis.call('set', KEYS[1], 'from-script'); redis.call('expire', KEYS[1], 500); return 1", 1, "scripted")
    c.rpush("popped", "1", "2", "3")
    c.blpop("popped", 1)
    c.execute_command("SELECT", 1)
    c.set("in-db1", "v")
    c.execute_command("SELECT", 0)


# ---- settings ----


def test_aof_settings_and_their_errors(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    c = srv.client()
    for name, value in [("appendonly", b"yes"), ("appendfilename", b"appendonly.aof"),
                        ("appenddirname", b"appendonlydir"), ("appendfsync", b"everysec"),
                        ("aof-load-truncated", b"yes"), ("auto-aof-rewrite-percentage", b"100"),
                        ("auto-aof-rewrite-min-size", b"67108864"), ("no-appendfsync-on-rewrite", b"no"),
                        ("aof-timestamp-enabled", b"no")]:
        assert c.call("CONFIG", "GET", name) == [name.encode(), value]
    assert c.call("CONFIG", "SET", "appendfsync", "sometimes") == E(
        "ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the "
        "following: everysec, always, no")
    for name in ("appendfilename", "appenddirname"):
        assert c.call("CONFIG", "SET", name, "other") == E(
            f"ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config")
    assert c.call("CONFIG", "SET", "dir", str(tmp_path)) == E(
        "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config")
    assert c.call("CONFIG", "SET", "appendfsync", "always") == "OK"
    assert c.call("CONFIG", "GET", "appendfsync") == [b"appendfsync", b"always"]
    assert c.call("CONFIG", "SET", "auto-aof-rewrite-percentage", "-1") == E(
        "ERR CONFIG SET failed (possibly related to argument 'auto-aof-rewrite-percentage') - argument must be "
        "between 0 and 2147483647 inclusive")
    c.close()


@pytest.mark.lapse_only
def test_what_lapse_does_not_implement_is_refused(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    c = srv.client()
    assert c.call("CONFIG", "SET", "aof-timestamp-enabled", "yes") == E(
        "ERR CONFIG SET failed (possibly related to argument 'aof-timestamp-enabled') - lapse does not write AOF "
        "timestamp annotations: aof-timestamp-enabled can only be no")
    assert c.call("CONFIG", "GET", "aof-timestamp-enabled") == [b"aof-timestamp-enabled", b"no"]
    c.close()


def test_aof_use_rdb_preamble_is_yes_by_default_and_settable(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    c = srv.client()
    assert c.call("CONFIG", "GET", "aof-use-rdb-preamble") == [b"aof-use-rdb-preamble", b"yes"]
    assert c.call("CONFIG", "SET", "aof-use-rdb-preamble", "maybe") == E(
        "ERR CONFIG SET failed (possibly related to argument 'aof-use-rdb-preamble') - argument must be 'yes' or 'no'")
    assert c.call("CONFIG", "GET", "aof-use-rdb-preamble") == [b"aof-use-rdb-preamble", b"yes"]
    assert c.call("CONFIG", "SET", "aof-use-rdb-preamble", "no") == "OK"
    assert c.call("CONFIG", "GET", "aof-use-rdb-preamble") == [b"aof-use-rdb-preamble", b"no"]
    # The next rewrite follows the live setting: its base is commands.
    assert c.call("BGREWRITEAOF") == "Background append only file rewriting started"
    c.close()
    wait_rewrite_done(srv)
    srv.stop()
    manifest = (tmp_path / "appendonlydir" / MANIFEST).read_text()
    assert "file appendonly.aof.2.base.aof seq 2 type b\n" in manifest


def test_info_persistence_aof_fields(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    info = info_persistence(srv)
    for field in ("aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_last_rewrite_time_sec",
                  "aof_current_rewrite_time_sec", "aof_last_bgrewrite_status", "aof_rewrites",
                  "aof_rewrites_consecutive_failures", "aof_last_write_status", "aof_current_size", "aof_base_size",
                  "aof_buffer_length"):
        assert field in info, field
    assert info["aof_enabled"] == 1
    assert info["aof_rewrites"] == 0
    assert info["aof_last_rewrite_time_sec"] == -1
    assert info["aof_last_write_status"] == "ok"


# ---- layout, restart ----


def test_layout_is_redis_70_multi_part(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    client(srv).set("k", "v")
    srv.stop()
    folder = tmp_path / "appendonlydir"
    assert (folder / MANIFEST).read_text() == (
        "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    incr = (folder / "appendonly.aof.1.incr.aof").read_bytes()
    assert incr == b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"


def resp_commands(*commands) -> bytes:
    """The commands as an AOF holds them: RESP arrays of bulk strings."""
    out = b""
    for command in commands:
        out += b"*%d\r\n" % len(command)
        for arg in command:
            out += b"$%d\r\n%s\r\n" % (len(arg), arg.encode())
    return out


def test_set_repl_without_repl_aof_keeps_a_scripts_writes_out_of_the_log(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    c = client(srv)
    # Two writes logged: MULTI ... EXEC; the one between REPL_NONE and REPL_ALL is not.
    c.eval("redis.call('SET','a','1'); redis.set_repl(redis.REPL_NONE); redis.call('SET','b','2');"
           "redis.set_repl(redis.REPL_ALL); redis.call('SET','c','3')", 0)
    # REPL_REPLICA leaves out the AOF: nothing logged, not even an empty MULTI ... EXEC.
    c.eval("redis.set_repl(redis.REPL_REPLICA); redis.call('SET','d','4'); redis.call('INCR','n')", 0)
    # One write logged: alone, without MULTI.
    c.eval("redis.set_repl(redis.REPL_AOF); redis.call('SET','e','5'); redis.set_repl(0); redis.call('DEL','e')", 0)
    # Every script starts with REPL_ALL, whatever the last one set.
    c.eval("redis.call('SET','f','6')", 0)
    c.function_load(QUIET_LIBRARY)
    c.fcall("quiet", 1, "g")
    assert c.mget("a", "b", "c", "d", "n", "e", "f", "g") == [b"1", b"2", b"3", b"4", b"1", None, b"6", b"x"]
    srv.stop()
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert incr == resp_commands(["SELECT", "0"], ["MULTI"], ["SET", "a", "1"], ["SET", "c", "3"], ["EXEC"],
                                 ["SET", "e", "5"], ["SET", "f", "6"], ["FUNCTION", "LOAD", QUIET_LIBRARY])
    # The restart replays the log: the writes left out of it are gone.
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    assert client(srv).mget("a", "b", "c", "d", "n", "e", "f", "g") == [
        b"1", None, b"3", None, None, b"5", b"6", None]


def test_restore_and_restore_asking_log_an_absolute_ttl(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    c = client(srv)
    c.set("src", "v")
    payload = c.dump("src")
    before = int(time.time() * 1000)
    c.restore("r1", 100_000, payload)
    c.execute_command("RESTORE-ASKING", "r2", 100_000, payload)
    after = int(time.time() * 1000)
    srv.stop()
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    for name, key in [(b"RESTORE", b"r1"), (b"RESTORE-ASKING", b"r2")]:
        start = incr.index(b"$%d\r\n%s\r\n$2\r\n%s\r\n" % (len(name), name, key))
        fields = incr[start:].split(b"\r\n")
        # name, key, deadline, payload, ABSTTL: a replay never extends the TTL.
        assert fields[1] == name and fields[3] == key
        assert before + 100_000 <= int(fields[5]) <= after + 100_000
        assert fields[8:10] == [b"$6", b"ABSTTL"]


QUIET_LIBRARY = ("#!lua name=repl\nredis.register_function('quiet', function(keys) "
                 "redis.set_repl(redis.REPL_NONE); return redis.call('set', keys[1], 'x') end)")
OTHER_LIBRARY = "#!lua name=other\nredis.register_function('other', function() return 'other' end)"


def test_function_libraries_are_logged_and_kept_by_a_rewrite(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    c = client(srv)
    c.function_load(QUIET_LIBRARY)
    c.function_load(OTHER_LIBRARY)
    c.function_delete("other")
    with pytest.raises(redis.ResponseError, match="Library not found"):
        c.function_delete("other")  # an error changes nothing: not logged
    c.function_flush("SYNC")
    c.function_load(OTHER_LIBRARY)
    dumped = c.function_dump()
    c.function_restore(dumped, "REPLACE")
    srv.stop()
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert incr == resp_commands(["SELECT", "0"], ["FUNCTION", "LOAD", QUIET_LIBRARY], ["FUNCTION", "LOAD", OTHER_LIBRARY],
                                 ["FUNCTION", "DELETE", "other"], ["FUNCTION", "FLUSH", "SYNC"],
                                 ["FUNCTION", "LOAD", OTHER_LIBRARY]) + (
        b"*4\r\n$8\r\nFUNCTION\r\n$7\r\nRESTORE\r\n$%d\r\n%s\r\n$7\r\nREPLACE\r\n" % (len(dumped), dumped))
    # The restart replays it; a rewrite writes each library as FUNCTION LOAD, before the keys.
    srv = up(start_server, options=options)
    c = client(srv)
    assert c.fcall("other", 0) == b"other"
    c.set("k", "v")
    c.bgrewriteaof()
    wait_until(lambda: (tmp_path / "appendonlydir" / "appendonly.aof.2.base.aof").exists()
               and info_persistence(srv)["aof_rewrite_in_progress"] == 0, what="the rewrite")
    base = (tmp_path / "appendonlydir" / "appendonly.aof.2.base.aof").read_bytes()
    assert base == resp_commands(["FUNCTION", "LOAD", OTHER_LIBRARY], ["SELECT", "0"], ["SET", "k", "v"])
    srv.stop()
    srv = up(start_server, options=options)
    assert client(srv).fcall("other", 0) == b"other"
    assert client(srv).get("k") == b"v"


def test_layout_with_an_rdb_preamble(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    client(srv).set("k", "v")
    srv.stop()
    folder = tmp_path / "appendonlydir"
    assert (folder / MANIFEST).read_text() == (
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    base = (folder / "appendonly.aof.1.base.rdb").read_bytes()
    assert base.startswith(b"REDIS0010")
    # The aof-base AUX field (opcode 0xFA, two length-prefixed strings) says what the file is.
    assert b"\xfa\x08aof-base\xc0\x01" in base
    assert (folder / "appendonly.aof.1.incr.aof").read_bytes() == (
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")


def test_restart_with_an_rdb_preamble_keeps_every_type_and_deadline(start_server, tmp_path):
    options = aof_options(tmp_path)
    srv = up(start_server, options=options)
    c = client(srv)
    fill_every_type(c)
    assert c.bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite_done(srv)
    c.rpush("list", "after-rewrite")
    c.set("late", "v", ex=500)
    before = state(srv)
    srv.stop()
    assert (tmp_path / "appendonlydir" / "appendonly.aof.2.base.rdb").exists()
    again = up(start_server, options=options)
    assert state(again) == before


def test_redis_check_aof_accepts_an_rdb_base(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    fill_every_type(client(srv))
    assert client(srv).bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite_done(srv)
    client(srv).set("after-rewrite", "1")
    srv.stop()
    assert (tmp_path / "appendonlydir" / "appendonly.aof.2.base.rdb").exists()
    check = subprocess.run(["redis-check-aof", str(tmp_path / "appendonlydir" / MANIFEST)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All AOF files and manifest are valid" in check.stdout


def test_restart_keeps_every_type_and_deadline(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    fill_every_type(client(srv))
    before = state(srv)
    srv.stop()
    again = up(start_server, options=options)
    assert state(again) == before


def test_redis_check_aof_accepts_the_directory(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    fill_every_type(client(srv))
    assert client(srv).bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite_done(srv)
    client(srv).set("after-rewrite", "1")
    srv.stop()
    check = subprocess.run(["redis-check-aof", str(tmp_path / "appendonlydir" / MANIFEST)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All AOF files and manifest are valid" in check.stdout


def test_a_replay_never_extends_a_deadline(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    c = client(srv)
    c.set("ex", "v", ex=1000)
    c.expire("ex", 900)
    c.set("soon", "v", px=300)
    deadlines = {k: c.execute_command("PEXPIRETIME", k) for k in ("ex", "soon")}
    srv.stop()
    # The server stays down past "soon"'s deadline.
    while time.time() * 1000 <= deadlines["soon"]:
        time.sleep(0.05)
    again = up(start_server, options=options)
    c = client(again)
    assert c.exists("soon") == 0
    assert c.execute_command("PEXPIRETIME", "ex") == deadlines["ex"]


@pytest.mark.lapse_only
def test_redis_loads_lapses_log(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    fill_every_type(client(srv))
    before = state(srv)
    srv.stop()
    redis_srv = up(start_server, kind="redis", options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    assert state(redis_srv) == before
    # And once more after a rewrite by lapse: the base file too.
    redis_srv.stop()
    srv = up(start_server, options=aof_options(tmp_path))
    client(srv).bgrewriteaof()
    wait_rewrite_done(srv)
    srv.stop()
    redis_srv = up(start_server, kind="redis", options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    assert state(redis_srv) == before


@pytest.mark.lapse_only
def test_redis_loads_lapses_log_with_an_rdb_base(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    c = client(srv)
    fill_every_type(c)
    # Containers go into the RDB base as lapse AUX fields, which Redis skips.
    c.execute_command("CSETTTL", "users", "1000")
    c.execute_command("IPUT", "users", "u1", '{"id":"u1"}')
    c.bgrewriteaof()
    wait_rewrite_done(srv)
    c.set("after-rewrite", "1")
    before = state(srv)
    srv.stop()
    assert (tmp_path / "appendonlydir" / "appendonly.aof.2.base.rdb").exists()
    redis_srv = up(start_server, kind="redis", options=aof_options(tmp_path))
    assert state(redis_srv) == before


@pytest.mark.lapse_only
def test_lapse_loads_redis_default_log_with_an_rdb_base(start_server, tmp_path):
    redis_srv = up(start_server, kind="redis", options=aof_options(tmp_path))
    c = client(redis_srv)
    fill_every_type(c)
    c.bgrewriteaof()
    wait_rewrite_done(redis_srv)
    c.rpush("list", "after-rewrite")
    c.set("late", "v", ex=500)
    before = state(redis_srv)
    redis_srv.stop()
    assert (tmp_path / "appendonlydir" / "appendonly.aof.2.base.rdb").read_bytes().startswith(b"REDIS")
    srv = up(start_server, options=aof_options(tmp_path))
    assert state(srv) == before


@pytest.mark.lapse_only
def test_lapse_loads_redis_log(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    redis_srv = up(start_server, kind="redis", options=options)
    c = client(redis_srv)
    fill_every_type(c)
    c.bgrewriteaof()
    wait_rewrite_done(redis_srv)
    c.rpush("list", "after-rewrite")
    c.set("late", "v", ex=500)
    before = state(redis_srv)
    redis_srv.stop()
    srv = up(start_server, options=aof_options(tmp_path))
    assert state(srv) == before


# ---- rewrite ----


def test_bgrewriteaof_compacts_and_keeps_state(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    c = client(srv)
    for i in range(300):
        c.incr("counter")
        c.rpush("list", i)
    fill_every_type(c)
    size_before = info_persistence(srv)["aof_current_size"]
    assert srv.client().call("BGREWRITEAOF") == "Background append only file rewriting started"
    wait_rewrite_done(srv)
    info = info_persistence(srv)
    assert info["aof_rewrites"] == 1
    assert info["aof_last_bgrewrite_status"] == "ok"
    assert info["aof_current_size"] < size_before
    manifest = (tmp_path / "appendonlydir" / MANIFEST).read_text()
    assert manifest == ("file appendonly.aof.2.base.aof seq 2 type b\n"
                        "file appendonly.aof.2.incr.aof seq 2 type i\n")
    assert sorted(os.listdir(tmp_path / "appendonlydir")) == [
        "appendonly.aof.2.base.aof", "appendonly.aof.2.incr.aof", MANIFEST]
    c.incr("counter")
    before = state(srv)
    srv.stop()
    assert state(up(start_server, options=options)) == before


def test_bgrewriteaof_with_appendonly_no_writes_a_base_and_its_manifest(start_server, tmp_path):
    srv = up(start_server, options={"dir": str(tmp_path)})
    c = client(srv)
    fill_every_type(c)
    assert srv.client().call("BGREWRITEAOF") == "Background append only file rewriting started"
    wait_rewrite_done(srv)
    folder = tmp_path / "appendonlydir"
    assert sorted(os.listdir(folder)) == ["appendonly.aof.1.base.rdb", MANIFEST]
    assert (folder / MANIFEST).read_text() == "file appendonly.aof.1.base.rdb seq 1 type b\n"
    info = info_persistence(srv)
    assert (info["aof_enabled"], info["aof_rewrites"], info["aof_last_bgrewrite_status"]) == (0, 1, "ok")
    # The next one follows on, in the base format asked for, and replaces the previous base.
    assert c.config_set("aof-use-rdb-preamble", "no")
    c.set("after", "1")
    assert srv.client().call("BGREWRITEAOF") == "Background append only file rewriting started"
    wait_rewrite_done(srv)
    assert sorted(os.listdir(folder)) == ["appendonly.aof.2.base.aof", MANIFEST]
    assert (folder / MANIFEST).read_text() == "file appendonly.aof.2.base.aof seq 2 type b\n"
    assert info_persistence(srv)["aof_rewrites"] == 2
    before = state(srv)
    srv.stop()
    # The base alone is a log that a start with appendonly yes loads.
    again = up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))
    assert state(again) == before


@pytest.mark.parametrize("preamble, base", [("yes", "base.rdb"), ("no", "base.aof")])
def test_turning_appendonly_on_writes_the_data_set_first(start_server, tmp_path, preamble, base):
    srv = up(start_server, options={"dir": str(tmp_path), "aof-use-rdb-preamble": preamble})
    c = client(srv)
    fill_every_type(c)
    assert c.config_set("appendonly", "yes")
    wait_rewrite_done(srv)
    c.set("after", "1")
    before = state(srv)
    srv.stop()
    assert (tmp_path / "appendonlydir" / f"appendonly.aof.1.{base}").exists()
    assert state(up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": preamble}))) == before


@pytest.mark.lapse_only
def test_kill_during_bgrewriteaof_restarts_with_the_last_complete_state(start_server, tmp_path):
    options = aof_options(tmp_path, appendfsync="always")
    srv = up(start_server, options=options)
    c = client(srv)
    pipe = c.pipeline(transaction=False)
    for i in range(50000):
        pipe.set(f"key:{i}", "x" * 20)
    pipe.execute()
    c.rpush("list", *range(100))
    before = state(srv, databases=(0,))
    srv.client().call("BGREWRITEAOF")
    srv.kill9()
    again = up(start_server, options=options)
    assert state(again, databases=(0,)) == before


# ---- durability ----


def test_kill9_under_appendfsync_always_loses_no_acknowledged_write(start_server, tmp_path):
    options = aof_options(tmp_path, appendfsync="always", **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    acked = {n: [] for n in range(6)}
    stop = threading.Event()

    def writer(n):
        c = client(srv)
        i = 0
        try:
            while not stop.is_set():
                c.rpush(f"list:{n}", i)
                c.set(f"str:{n}:{i}", i)
                c.hset(f"hash:{n}", str(i), i)
                c.sadd(f"set:{n}", i)
                c.zadd(f"zset:{n}", {str(i): i})
                c.incr(f"count:{n}")
                acked[n].append(i)
                i += 1
        except (redis.ConnectionError, redis.TimeoutError):
            pass

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    wait_until(lambda: all(len(a) >= 50 for a in acked.values()), what="every writer to make progress")
    srv.kill9()
    stop.set()
    for t in threads:
        t.join()
    c = client(up(start_server, options=options))
    for n, done in acked.items():
        items = [str(i).encode() for i in done]
        assert c.lrange(f"list:{n}", 0, -1)[:len(items)] == items
        assert all(c.get(f"str:{n}:{i}") == str(i).encode() for i in done)
        assert set(items) <= set(c.hkeys(f"hash:{n}"))
        assert set(items) <= c.smembers(f"set:{n}")
        assert c.zcard(f"zset:{n}") >= len(items)
        assert int(c.get(f"count:{n}")) >= len(items)


def test_kill9_under_appendfsync_everysec_loses_at_most_the_last_two_seconds(start_server, tmp_path):
    # A kill -9 leaves what the server wrote in the kernel's page cache, so this bounds what a
    # crashed process loses (Redis and lapse write the log before they reply, so: nothing);
    # the once-a-second fsync that bounds a power loss is the same thread (README, bench/RESULTS.md).
    options = aof_options(tmp_path, appendfsync="everysec", **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    acked = []  # (monotonic time of the reply, value acknowledged)
    stop = threading.Event()

    def writer():
        c = client(srv)
        try:
            while not stop.is_set():
                value = c.incr("counter")
                acked.append((time.monotonic(), value))
        except (redis.ConnectionError, redis.TimeoutError):
            pass

    thread = threading.Thread(target=writer)
    thread.start()
    # At least three seconds of acknowledged writes before the kill, so that the bound bites.
    wait_until(lambda: acked and acked[-1][0] - acked[0][0] > 3.5, what="three seconds of writes")
    info = info_persistence(srv)
    assert (info["aof_enabled"], info["aof_last_write_status"], info["aof_delayed_fsync"]) == (1, "ok", 0)
    assert info["aof_pending_bio_fsync"] == 0 or info["aof_pending_bio_fsync"] == 1
    killed_at = time.monotonic()
    srv.kill9()
    stop.set()
    thread.join()
    recovered = int(client(up(start_server, options=options)).get("counter"))
    acked_two_seconds_before = max(v for t, v in acked if t <= killed_at - 2)
    assert acked_two_seconds_before <= recovered <= acked[-1][1] + 1


# ---- torn and corrupt files ----


def torn_log(start_server, tmp_path):
    """A log whose last file ends in the middle of a command; returns the data before it."""
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    c = client(srv)
    c.set("a", "1")
    c.rpush("l", "x", "y")
    before = state(srv)
    srv.stop()
    incr = tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof"
    with open(incr, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$5\r\nhal")
    return before, incr


def test_a_torn_tail_is_cut_with_aof_load_truncated_yes(start_server, tmp_path):
    before, incr = torn_log(start_server, tmp_path)
    size = incr.stat().st_size
    srv = up(start_server, options=aof_options(tmp_path, **{"aof-load-truncated": "yes", "aof-use-rdb-preamble": "no"}))
    assert state(srv) == before
    assert incr.stat().st_size < size
    client(srv).set("b", "2")
    srv.stop()
    assert client(up(start_server, options=aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"}))).get("b") == b"2"


def test_a_torn_tail_refuses_to_start_with_aof_load_truncated_no(start_server, tmp_path):
    torn_log(start_server, tmp_path)
    options = aof_options(tmp_path, **{"aof-load-truncated": "no", "aof-use-rdb-preamble": "no"})
    log = start_fails(options)
    if target_kind() == "lapse":
        assert "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof at offset" in log


@pytest.mark.lapse_only
def test_a_corrupt_file_refuses_to_start_naming_file_and_offset(start_server, tmp_path):
    options = aof_options(tmp_path)
    srv = up(start_server, options=options)
    client(srv).set("a", "1")
    client(srv).set("b", "2")
    srv.stop()
    incr = tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof"
    data = incr.read_bytes()
    at = data.index(b"*3\r\n$3\r\nSET\r\n$1\r\nb")
    incr.write_bytes(data[:at] + b"!garbage\r\n" + data[at:])
    log = start_fails(options)
    assert f"Bad file format reading the append only file appendonly.aof.1.incr.aof at offset {at}" in log


@pytest.mark.lapse_only
def test_a_truncated_rdb_base_refuses_to_start_naming_the_file(start_server, tmp_path):
    options = aof_options(tmp_path)
    srv = up(start_server, options=options)
    client(srv).set("a", "1")
    client(srv).bgrewriteaof()
    wait_rewrite_done(srv)
    srv.stop()
    base = tmp_path / "appendonlydir" / "appendonly.aof.2.base.rdb"
    data = base.read_bytes()
    base.write_bytes(data[:len(data) - 12])
    log = start_fails(options)
    assert "appendonly.aof.2.base.rdb" in log
    assert "offset" in log


# ---- containers and items ----


def items_state(c) -> dict:
    out = {}
    for name in c.call("CLIST"):
        name = name.decode()
        out[name] = {"ttl": c.call("CGETTTL", name), "ru": c.call("CGETRU", name)}
        cursor, docs = "0", []
        while True:
            cursor, page = c.call("ISCAN", name, cursor, "COUNT", "100")
            docs += page
            if cursor == b"0":
                break
        out[name]["items"] = sorted(docs)
    return out


@pytest.mark.lapse_only
@pytest.mark.parametrize("preamble", ["yes", "no"], ids=["rdb-base", "command-base"])
@pytest.mark.parametrize("rewrite", [False, True], ids=["log", "rewritten"])
def test_restart_keeps_containers_and_items_with_ts_etag_and_ttl(start_server, tmp_path, rewrite, preamble):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": preamble})
    srv = up(start_server, options=options)
    c = srv.client()
    assert c.call("CSETTTL", "users", "1000") == "OK"
    etag = c.call("IPUT", "users", "u1", '{"id":"u1","name":"ann"}')
    c.call("IPUT", "users", "u2", '{"id":"u2","ttl":5000}')
    c.call("IPUT", "users", "u3", '{"id":"u3"}')
    assert c.call("IPUT", "users", "u2", '{"id":"u2","ttl":6000}', "NX") is None  # not written, not logged
    assert c.call("IDEL", "users", "u3") == 1
    assert c.call("CSETRU", "orders", "500") == "OK"
    # The log's own form is refused from a client.
    assert c.call("IPUT", "users", "u4", '{"id":"u4"}', "REPLAYED", "1", "0000000000000001") == E("ERR syntax error")
    before = items_state(c)
    ttl_before = {i: c.call("IPTTL", "users", i) for i in ("u1", "u2")}
    if rewrite:
        c.call("BGREWRITEAOF")
        wait_rewrite_done(srv)
    c.close()
    srv.stop()
    again = up(start_server, options=options)
    c = again.client()
    # Same documents: the same _ts and _etag.
    assert items_state(c) == before
    # The countdown goes on from _ts: a restart never resets it.
    for i, ttl in ttl_before.items():
        assert 0 < c.call("IPTTL", "users", i) <= ttl
    # A new write gets a new etag.
    assert etag.decode() in before["users"]["items"][0].decode()
    assert c.call("IPUT", "users", "u1", '{"id":"u1"}') != etag
    c.close()


def test_a_blocking_pop_served_later_is_logged_as_its_pop(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=options)
    waiter = srv.client()
    waiter.send("BLPOP", "queue", "0")
    observer = srv.client()
    wait_until(lambda: info_clients_blocked(observer) == 1, what="the waiter to block")
    assert observer.call("RPUSH", "queue", "first", "second") == 2
    assert waiter.read_reply() == [b"queue", b"first"]
    observer.call("RPUSH", "queue", "third")
    before = state(srv)
    waiter.close()
    observer.close()
    srv.stop()
    assert state(up(start_server, options=options)) == before


def info_clients_blocked(c) -> int:
    text = c.call("INFO", "clients").decode()
    return int(text.split("blocked_clients:")[1].split("\r\n")[0])


def test_the_log_is_rewritten_when_it_grows(start_server, tmp_path):
    options = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no", "auto-aof-rewrite-min-size": "10000",
                                       "auto-aof-rewrite-percentage": "100"})
    srv = up(start_server, options=options)
    c = client(srv)
    for _ in range(1000):  # about 30 kB of INCRs
        c.incr("counter")
    wait_until(lambda: info_persistence(srv)["aof_rewrites"] >= 1, what="an automatic rewrite")
    wait_rewrite_done(srv)
    assert info_persistence(srv)["aof_current_size"] < 10000
    srv.stop()
    assert client(up(start_server, options=options)).get("counter") == b"1000"


def test_turning_appendonly_on_over_an_old_log_replaces_it(start_server, tmp_path):
    on = aof_options(tmp_path, **{"aof-use-rdb-preamble": "no"})
    srv = up(start_server, options=on)
    client(srv).set("old", "1")
    srv.stop()
    # Without the log, the old data is not loaded; turning the log on writes today's data.
    srv = up(start_server, options={"dir": str(tmp_path), "aof-use-rdb-preamble": "no"})
    c = client(srv)
    assert c.get("old") is None
    c.set("new", "2")
    assert c.config_set("appendonly", "yes")
    wait_rewrite_done(srv)
    c.rpush("after", "x")
    before = state(srv)
    srv.stop()
    assert state(up(start_server, options=on)) == before
