"""Snapshots in Redis's RDB format (issue 17, the RDB half): DUMP / RESTORE payloads and
whole files exchanged with Debian's redis-server 7.0.15 in both directions, every type and
encoding; RESTORE's errors byte for byte; SAVE / BGSAVE / LASTSAVE / INFO persistence;
restarts that keep deadlines absolute; truncated and corrupt files refused at start-up with
the file and offset named; kill -9 during BGSAVE leaving the previous snapshot whole.

Tests that only use `server` / `raw` run against Redis too (LAPSE_TARGET=redis) to prove the
expected replies are Redis's.
"""
import os
import shutil
import signal
import subprocess
import time

import pytest
import redis

from conftest import running_server
from lapse_harness import RespError as E, ServerProcess, wait_until

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")


# ---- A dataset with every type and the encodings Redis 7.0 gives each ----------------------

def populate(c: redis.Redis):
    """Every type lapse and Redis share, small and big, in three databases, some expiring."""
    c.select(0)
    c.set("str:int", "12345")
    c.set("str:neg", "-70000")
    c.set("str:text", "hello world")
    c.set("str:long", "a" * 300)  # LZF-compressed in files and payloads
    c.set("str:bin", bytes(range(256)) * 3)
    c.pfadd("hll", *[f"e{i}" for i in range(500)])
    c.hset("hash:small", mapping={"a": "1", "b": "two", "n": "-5"})
    c.hset("hash:big", mapping={f"f{i}": f"v{i}" * (i % 5) for i in range(700)})
    c.hset("hash:longvalue", mapping={"k": "x" * 100})
    c.sadd("set:ints", 1, 2, 3, -40000, 9000000000)
    c.sadd("set:strings", "a", "b", "c")
    c.sadd("set:bigints", *range(1000))
    c.sadd("set:bigstrings", *[f"m{i}" for i in range(300)])
    c.rpush("list:small", "a", "1", "b", "-2")
    c.rpush("list:big", *[f"element-{i}" if i % 3 else str(i) for i in range(5000)])
    c.rpush("list:long", "y" * 10000, "z")
    c.zadd("zset:small", {"a": 1, "b": 2.5, "c": -3, "inf": float("inf"), "ninf": float("-inf")})
    c.zadd("zset:big", {f"m{i}": i / 7 for i in range(300)})
    c.zadd("zset:longmember", {"q" * 100: 1})
    for i in range(1, 400):
        c.xadd("stream", {"f": i, "g": "text"} if i % 5 else {"other": i}, id=f"{1000 + i}-{i % 3}")
    c.xdel("stream", "1002-2")
    c.xgroup_create("stream", "g1", id="0")
    c.xgroup_create("stream", "g2", id="$")
    c.xreadgroup("g1", "alice", {"stream": ">"}, count=3)
    c.xreadgroup("g1", "bob", {"stream": ">"}, count=2)
    c.xack("stream", "g1", "1001-1")
    c.xadd("stream:empty", {"a": 1}, id="5-5")
    c.xdel("stream:empty", "5-5")
    c.set("ttl:string", "v", px=500_000)
    c.hset("ttl:hash", "f", "v")
    c.pexpire("ttl:hash", 800_000)
    c.select(1)
    c.set("db1:key", "one")
    c.rpush("db1:list", "x")
    c.select(5)
    c.sadd("db5:set", "s")
    c.select(0)


def contents(c: redis.Redis, databases=(0, 1, 5)):
    """Every key of `databases` as (type, value), with whether it has a TTL."""
    out = {}
    for db in databases:
        c.select(db)
        for key in c.keys("*"):
            kind = c.type(key)
            if kind == b"string":
                value = c.get(key)
            elif kind == b"hash":
                value = sorted(c.hgetall(key).items())
            elif kind == b"set":
                value = sorted(c.smembers(key))
            elif kind == b"list":
                value = c.lrange(key, 0, -1)
            elif kind == b"zset":
                value = c.zrange(key, 0, -1, withscores=True)
            else:
                groups = sorted((g["name"], g["last-delivered-id"], g["pending"], g["consumers"])
                                for g in c.xinfo_groups(key))
                pending = [(g[0], c.xpending_range(key, g[0], "-", "+", 100)) for g in groups]
                pending = [(g, [(p["message_id"], p["consumer"], p["times_delivered"]) for p in ps])
                           for g, ps in pending]
                info = c.xinfo_stream(key)
                value = (c.xrange(key), groups, pending, info["last-generated-id"], info["length"])
            out[(db, key)] = (kind, value, c.pttl(key) > 0)
    c.select(0)
    return out


def client(srv: ServerProcess) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=60)


# ---- DUMP / RESTORE ------------------------------------------------------------------------

@needs_redis
@pytest.mark.lapse_only
def test_restore_of_redis_payloads_and_redis_restore_of_lapse_payloads(server, redis_server):
    lapse, red = client(server), client(redis_server)
    for c in (lapse, red):
        c.flushall()
    populate(red)
    populate(lapse)
    expected = contents(red, databases=(0,))
    assert contents(lapse, databases=(0,)) == expected
    for source, target in ((red, lapse), (lapse, red)):
        payloads = {key: source.dump(key) for (_, key) in expected}
        target.flushall()
        for key, payload in payloads.items():
            ttl = source.pttl(key)
            assert target.restore(key, max(ttl, 0), payload) in (True, b"OK"), key
        assert contents(target, databases=(0,)) == expected
    lapse.flushall()
    red.flushall()


@needs_redis
@pytest.mark.lapse_only
def test_payload_bytes_equal_redis_for_simple_values(server, redis_server):
    lapse, red = client(server), client(redis_server)
    for c in (lapse, red):
        c.flushall()
        c.set("i", "12345")
        c.set("s", "hello")
        c.sadd("ints", 3, 1, 2)
        c.hset("h", mapping={"a": "1", "b": "x"})
        c.zadd("z", {"a": 1, "b": 2.5})
        c.rpush("l", "a", "1")
    # LZF-compressed strings are left out: any valid LZF stream decompresses the same, and
    # lapse's compressor (not liblzf) finds other matches than Redis's.
    for key in ("i", "s", "ints", "h", "z", "l"):
        assert lapse.dump(key) == red.dump(key), key
    lapse.flushall()
    red.flushall()


def test_restore_errors_change_nothing(raw):
    raw.call("SET", "src", "value")
    payload = raw.call("DUMP", "src")
    raw.call("SET", "taken", "old")
    assert raw.call("DUMP", "nosuchkey") is None
    assert raw.call("RESTORE", "taken", "0", payload) == E("BUSYKEY Target key name already exists.")
    assert raw.call("RESTORE", "new", "-1", payload) == E("ERR Invalid TTL value, must be >= 0")
    assert raw.call("RESTORE", "new", "x", payload) == E("ERR value is not an integer or out of range")
    assert raw.call("RESTORE", "new", "0", payload[:-1] + b"X") == E("ERR DUMP payload version or checksum are wrong")
    assert raw.call("RESTORE", "new", "0", b"short") == E("ERR DUMP payload version or checksum are wrong")
    assert raw.call("RESTORE", "new", "0", payload, "BOGUS") == E("ERR syntax error")
    assert raw.call("RESTORE", "new", "0", payload, "IDLETIME") == E("ERR syntax error")
    assert raw.call("RESTORE", "new", "0", payload, "IDLETIME", "-1") == E("ERR Invalid IDLETIME value, must be >= 0")
    assert raw.call("RESTORE", "new", "0", payload, "IDLETIME", "x") == E("ERR value is not an integer or out of range")
    assert raw.call("RESTORE", "new", "0", payload, "FREQ", "256") == E("ERR Invalid FREQ value, must be >= 0 and <= 255")
    assert raw.call("RESTORE", "new", "0", payload, "FREQ", "1", "IDLETIME", "1") == E("ERR syntax error")
    assert raw.call("RESTORE", "new", "0", payload, "IDLETIME", "1", "FREQ", "1") == E("ERR syntax error")
    assert raw.call("RESTORE", "new") == E("ERR wrong number of arguments for 'restore' command")
    # A checksum that holds over a payload whose value is malformed: Bad data format.
    assert raw.call("RESTORE", "new", "0", bad_data_payload()) == E("ERR Bad data format")
    assert raw.call("RESTORE", "taken", "0", bad_data_payload(), "REPLACE") == E("ERR Bad data format")
    assert raw.call("GET", "taken") == b"old"
    assert raw.call("EXISTS", "new") == 0


def crc64(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x95AC9329AC4BC9B5 if crc & 1 else crc >> 1
    return crc


def bad_data_payload() -> bytes:
    body = b"\x04\x05\x01a" + b"\x0a\x00"  # a hash of 5 pairs holding half of one, RDB 10
    return body + crc64(body).to_bytes(8, "little")


def test_restore_options(raw):
    raw.call("SET", "src", "value")
    payload = raw.call("DUMP", "src")
    raw.call("SET", "taken", "old")
    assert raw.call("RESTORE", "taken", "0", payload, "REPLACE") == "OK"
    assert raw.call("GET", "taken") == b"value"
    assert raw.call("RESTORE", "ttl", "100000", payload) == "OK"
    assert 0 < raw.call("PTTL", "ttl") <= 100000
    now_ms = int(raw.call("TIME")[0]) * 1000
    assert raw.call("RESTORE", "abs", str(now_ms + 500_000), payload, "ABSTTL") == "OK"
    assert 400_000 < raw.call("PTTL", "abs") <= 501_000
    # A deadline already past: OK, and nothing is created (REPLACE deletes the old value).
    assert raw.call("RESTORE", "gone", "1", payload, "ABSTTL") == "OK"
    assert raw.call("EXISTS", "gone") == 0
    assert raw.call("RESTORE", "taken", "1", payload, "ABSTTL", "REPLACE") == "OK"
    assert raw.call("EXISTS", "taken") == 0
    assert raw.call("RESTORE", "idle", "0", payload, "IDLETIME", "1000") == "OK"
    assert raw.call("OBJECT", "IDLETIME", "idle") >= 1000
    assert raw.call("RESTORE", "freq", "0", payload, "FREQ", "100") == "OK"  # ignored under LRU


def test_restore_notifies_and_touches_watchers(connect):
    a, b = connect(), connect()
    a.call("SET", "src", "value")
    payload = a.call("DUMP", "src")
    a.call("CONFIG", "SET", "notify-keyspace-events", "KEg")
    try:
        b.call("SUBSCRIBE", "__keyevent@0__:restore")
        a.call("RESTORE", "k", "0", payload)
        assert b.read_reply() == [b"message", b"__keyevent@0__:restore", b"k"]
        a.call("WATCH", "k")
        connect().call("RESTORE", "k", "0", payload, "REPLACE")
        a.call("MULTI")
        a.call("PING")
        assert a.call("EXEC") is None
    finally:
        a.call("CONFIG", "SET", "notify-keyspace-events", "")


# ---- SAVE / BGSAVE / LASTSAVE / INFO ---------------------------------------------------------

def info_persistence(raw) -> dict:
    text = raw.call("INFO", "persistence").decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def test_save_bgsave_lastsave_and_info(raw):
    before = info_persistence(raw)
    for field in ("loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
                  "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec", "rdb_current_bgsave_time_sec", "rdb_saves",
                  "aof_enabled"):
        assert field in before, field
    raw.call("SET", "a", "1")
    raw.call("SET", "b", "2")
    assert int(info_persistence(raw)["rdb_changes_since_last_save"]) >= 2
    assert raw.call("SAVE") == "OK"
    after = info_persistence(raw)
    assert after["rdb_changes_since_last_save"] == "0"
    assert int(after["rdb_saves"]) == int(before["rdb_saves"]) + 1
    assert raw.call("LASTSAVE") == int(after["rdb_last_save_time"])
    assert raw.call("BGSAVE", "NOW") == E("ERR syntax error")
    assert raw.call("BGSAVE") == "Background saving started"
    wait_until(lambda: info_persistence(raw)["rdb_bgsave_in_progress"] == "0", what="BGSAVE to finish")
    assert info_persistence(raw)["rdb_last_bgsave_status"] == "ok"
    assert raw.call("BGSAVE", "SCHEDULE") in ("Background saving started", "Background saving scheduled")
    wait_until(lambda: info_persistence(raw)["rdb_bgsave_in_progress"] == "0", what="BGSAVE to finish")


@pytest.mark.lapse_only
def test_persistence_config(raw):
    assert raw.call("CONFIG", "SET", "save", "900 1 300 10") == "OK"
    assert raw.call("CONFIG", "GET", "save") == [b"save", b"900 1 300 10"]
    assert raw.call("CONFIG", "SET", "save", "900") == E(
        "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters")
    # Redis 7.0 protects dbfilename as it protects dir (enable-protected-configs no).
    assert raw.call("CONFIG", "SET", "dbfilename", "a/b.rdb") == E(
        "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config")
    assert raw.call("CONFIG", "SET", "dbfilename", "other.rdb") == E(
        "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config")
    assert raw.call("CONFIG", "SET", "dir", "/tmp") == E(
        "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config")
    assert raw.call("CONFIG", "SET", "rdbchecksum", "no") == E(
        "ERR CONFIG SET failed (possibly related to argument 'rdbchecksum') - can't set immutable config")
    assert raw.call("CONFIG", "GET", "save") == [b"save", b"900 1 300 10"]
    assert raw.call("CONFIG", "SET", "save", "") == "OK"


def test_a_save_rule_whose_changes_wrapped_negative_saves_without_changes(raw):
    # Redis keeps a rule's changes in a C int and compares it signed: 4294967295 is -1, met
    # by no change at all, so the rule saves once its seconds have passed.
    saves = int(info_persistence(raw)["rdb_saves"])
    try:
        assert raw.call("CONFIG", "SET", "save", "1 4294967295") == "OK"
        assert raw.call("CONFIG", "GET", "save") == [b"save", b"1 -1"]
        wait_until(lambda: int(info_persistence(raw)["rdb_saves"]) > saves, what="the rule's save")
    finally:
        raw.call("CONFIG", "SET", "save", "")


@pytest.mark.lapse_only
def test_default_save_rules_apply_without_a_config_file(tmp_path):
    # The harness turns save rules off; started bare, lapse has Redis's defaults.
    from lapse_harness import free_port, lapse_binary, RawClient
    port = free_port()
    proc = subprocess.Popen([lapse_binary(), "--port", str(port), "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: subprocess.run(["redis-cli", "-p", str(port), "PING"], capture_output=True).stdout
                   == b"PONG\n", what="lapse to start")
        with RawClient(port) as c:
            assert c.call("CONFIG", "GET", "save") == [b"save", b"3600 1 300 100 60 10000"]
            c.send("SHUTDOWN", "NOSAVE")
            assert c.at_eof()
    finally:
        proc.wait(20)
    assert not os.path.exists(tmp_path / "dump.rdb")


@needs_redis
def test_used_mem_aux_field_is_used_memory_at_the_save(start_server):
    srv = start_server()
    c = client(srv)
    pipe = c.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"key:{i}", "x" * 100)
    pipe.execute()
    before = c.info("memory")["used_memory"]
    assert c.save() is True
    after = c.info("memory")["used_memory"]
    check = subprocess.run(["redis-check-rdb", os.path.join(srv.data_dir(), "dump.rdb")], capture_output=True,
                           text=True, errors="replace")
    assert check.returncode == 0, check.stdout + check.stderr
    field = [line for line in check.stdout.splitlines() if "AUX FIELD used-mem = " in line]
    assert len(field) == 1, check.stdout
    used_mem = int(field[0].split("'")[1])
    # 20000 keys of 100 bytes hold at least 2 MB; SAVE itself allocates a little around it.
    assert used_mem > 2_000_000
    assert 0.8 * min(before, after) <= used_mem <= 1.2 * max(before, after)


# ---- Whole files across servers --------------------------------------------------------------

@needs_redis
@pytest.mark.lapse_only
def test_lapse_snapshot_loads_in_redis_and_passes_redis_check_rdb(start_server):
    lapse = start_server(options={"threads": 2})
    lc = client(lapse)
    populate(lc)
    expected = contents(lc)
    assert lc.save() is True
    path = os.path.join(lapse.data_dir(), "dump.rdb")
    check = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True, errors="replace")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "RDB looks OK" in check.stdout
    with running_server(kind="redis", options={"dir": lapse.data_dir()}) as red:
        assert contents(client(red)) == expected


@needs_redis
@pytest.mark.lapse_only
def test_redis_snapshot_loads_in_lapse(start_server):
    with running_server(kind="redis") as red:
        rc = client(red)
        populate(rc)
        expected = contents(rc)
        assert rc.save() is True
        data_dir = red.data_dir()
    lapse = start_server(options={"dir": data_dir, "threads": 2})
    assert contents(client(lapse)) == expected


@pytest.mark.lapse_only
def test_restart_keeps_values_and_absolute_deadlines(start_server):
    first = start_server(options={"threads": 2})
    c = client(first)
    populate(c)
    c.set("short", "v", px=300)
    c.set("long", "v", px=600_000)
    deadline = c.pexpiretime("long")
    expected = contents(c)
    assert c.save() is True
    first.stop()
    first.expected_exit = True
    time.sleep(0.4)  # the short key's deadline passes while the server is down
    second = start_server(options={"dir": first.data_dir(), "threads": 3})
    c2 = client(second)
    assert c2.exists("short") == 0
    assert c2.pexpiretime("long") == deadline
    del expected[(0, b"short")]
    assert contents(c2) == expected
    info = c2.info("persistence")
    assert info["rdb_last_load_keys_expired"] >= 1
    assert c2.execute_command("DEBUG", "RELOAD") == b"OK"
    assert contents(c2) == expected


@pytest.mark.lapse_only
def test_shutdown_saves_when_rules_exist_and_nosave_does_not(start_server):
    srv = start_server(options={"save": "3600 1"})
    with srv.client() as c:
        c.call("SET", "k", "v")
        c.send("SHUTDOWN")
        assert c.at_eof()
    srv.expected_exit = True
    assert srv.wait_exit() == 0
    assert os.path.exists(os.path.join(srv.data_dir(), "dump.rdb"))
    again = start_server(options={"dir": srv.data_dir()})
    with again.client() as c:
        assert c.call("GET", "k") == b"v"
        c.call("SET", "k", "changed")
        c.send("SHUTDOWN", "NOSAVE")
        assert c.at_eof()
    again.expected_exit = True
    again.wait_exit()
    third = start_server(options={"dir": srv.data_dir()})
    with third.client() as c:
        assert c.call("GET", "k") == b"v"


def corrupt_start(start_server, data_dir):
    srv = ServerProcess(options={"dir": data_dir})
    with pytest.raises(RuntimeError) as failure:
        srv.start(timeout=20)
    return str(failure.value)


@pytest.mark.lapse_only
def test_truncated_and_corrupt_files_fail_start_up_naming_file_and_offset(start_server):
    srv = start_server()
    c = client(srv)
    populate(c)
    assert c.save() is True
    srv.stop()
    srv.expected_exit = True
    path = os.path.join(srv.data_dir(), "dump.rdb")
    whole = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(whole[: len(whole) // 2])
    message = corrupt_start(start_server, srv.data_dir())
    assert path in message and f"unexpected end of file at byte offset {len(whole) // 2}" in message
    damaged = bytearray(whole)
    damaged[len(whole) // 3] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(damaged))
    message = corrupt_start(start_server, srv.data_dir())
    assert path in message and "byte offset" in message


@pytest.mark.lapse_only
def test_kill_during_bgsave_leaves_the_previous_snapshot(start_server):
    srv = start_server(options={"threads": 2})
    c = client(srv)
    c.set("before", "1")
    assert c.save() is True
    pipe = c.pipeline(transaction=False)
    for i in range(200_000):
        pipe.set(f"k{i}", "x" * 20)
    pipe.execute()
    assert c.bgsave()
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait()
    srv.expected_exit = True
    leftovers = [n for n in os.listdir(srv.data_dir()) if n.startswith("temp-")]
    again = start_server(options={"dir": srv.data_dir()})
    c2 = client(again)
    # Either the previous snapshot, or the new one if it completed before the kill: never half.
    assert c2.get("before") == b"1"
    assert c2.dbsize() in (1, 200_001), leftovers


# ---- lapse-only data: containers, items, hash-field TTLs -------------------------------------

def lapse_data(c: redis.Redis):
    """Containers with every setting, items with and without their own ttl, field TTLs."""
    c.execute_command("CSETTTL", "sessions", 3600)
    c.execute_command("CSETRU", "sessions", 1_000_000)
    c.execute_command("CSETEVICT", "sessions", "ON")
    c.execute_command("CSETTTL", "paused", 60)
    c.execute_command("CSETTTL", "paused", "OFF")
    for i in range(300):
        body = f'{{"user":"u{i}","n":{i}}}' if i % 2 else f'{{"user":"u{i}","ttl":{1000 + i}}}'
        c.execute_command("IPUT", "sessions", f"id{i}", body)
    c.execute_command("IPUT", "paused", "p", '{"x":[1,2,{"y":null}]}')
    c.select(2)
    c.execute_command("CSETTTL", "other", -1)
    c.execute_command("IPUT", "other", "o", '{"z":true}')
    c.select(0)
    c.hset("fields", mapping={"keep": "1", "short": "2", "long": "3"})
    c.execute_command("HPEXPIRE", "fields", 300, "FIELDS", 1, "short")
    c.execute_command("HPEXPIRE", "fields", 900_000, "FIELDS", 1, "long")


def lapse_view(c: redis.Redis):
    out = {}
    for db in (0, 2):
        c.select(db)
        for name in c.execute_command("CLIST"):
            info = c.execute_command("CINFO", name)
            settings = dict(zip(info[::2], info[1::2]))
            items = {}
            cursor = b"0"
            while True:
                cursor, docs = c.execute_command("ISCAN", name, cursor, "COUNT", 1000)
                for doc in docs:
                    items[doc] = c.execute_command("IPTTL", name, __import__("json").loads(doc)["id"]) > 0
                if cursor in (b"0", 0, "0"):
                    break
            out[(db, name)] = ({k: settings[k] for k in (b"default_ttl", b"ru_per_second", b"evictable")
                                if k in settings}, items)
    c.select(0)
    out["fields"] = sorted(c.hgetall("fields").items())
    out["field_deadline"] = c.execute_command("HPEXPIRETIME", "fields", "FIELDS", 1, "long")
    return out


@pytest.mark.lapse_only
def test_containers_items_and_field_ttls_survive_a_restart(start_server):
    first = start_server(options={"threads": 2})
    c = client(first)
    lapse_data(c)
    expected = lapse_view(c)
    assert c.save() is True
    first.stop()
    first.expected_exit = True
    time.sleep(0.4)  # the short field's deadline passes while the server is down
    second = start_server(options={"dir": first.data_dir(), "threads": 3})
    c2 = client(second)
    got = lapse_view(c2)
    expected["fields"] = [(b"keep", b"1"), (b"long", b"3")]
    assert got == expected
    assert c2.execute_command("CGETRU", "sessions") == 1_000_000
    # _ts and _etag are the saved ones (the ISCAN documents above carry both), and a new write
    # gets an etag none of the restored items has.
    etag = c2.execute_command("IPUT", "sessions", "fresh", "{}")
    assert all(__import__("json").loads(doc)["_etag"] != etag.decode() for (_, items) in
               [got[(0, b"sessions")]] for doc in items)


@pytest.mark.lapse_only
def test_a_change_feed_is_not_saved_a_restart_starts_it_afresh(start_server):
    first = start_server()
    c = client(first)
    assert c.execute_command("CSETTTL", "feed", "-1") == b"OK"
    c.execute_command("IPUT", "feed", "a", '{"v":1}')
    c.execute_command("IPUT", "feed", "a", '{"v":2}')
    assert len(c.execute_command("ICHANGES", "feed")[1]) == 2
    assert c.save() is True
    first.stop()
    first.expected_exit = True
    c2 = client(start_server(options={"dir": first.data_dir()}))
    assert __import__("json").loads(c2.execute_command("IGET", "feed", "a"))["v"] == 2
    # The items are back; their history is not: the feed holds only changes made since.
    assert c2.execute_command("ICHANGES", "feed", "FROM", "BEGINNING")[1] == []
    c2.execute_command("IDEL", "feed", "a")
    changes = c2.execute_command("ICHANGES", "feed", "FROM", "BEGINNING")[1]
    assert [__import__("json").loads(x)["metadata"]["operationType"] for x in changes] == ["delete"]


@needs_redis
@pytest.mark.lapse_only
def test_redis_opens_files_with_and_without_lapse_data(start_server):
    lapse = start_server()
    c = client(lapse)
    populate(c)
    lapse_data(c)
    c.hdel("fields", "short")  # Redis would keep it for good: no field TTLs there
    assert c.save() is True
    path = os.path.join(lapse.data_dir(), "dump.rdb")
    check = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True, errors="replace")
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout
    with running_server(kind="redis", options={"dir": lapse.data_dir()}) as red:
        rc = client(red)
        assert rc.hgetall("fields") == {b"keep": b"1", b"long": b"3"}
        assert rc.pttl("fields") == -1  # field TTLs are lapse data: Redis skips them
        assert rc.exists("sessions") == 0
    assert c.config_set("rdb-lapse-data", "no")
    assert c.save() is True
    assert b"lapse-" not in open(path, "rb").read()
    with running_server(kind="redis", options={"dir": lapse.data_dir()}) as red:
        assert client(red).hgetall("fields") == {b"keep": b"1", b"long": b"3"}


LIBRARY = "#!lua name=snaplib\nredis.register_function('snapfn', function(keys, args) return 'hi' end)"


@needs_redis
@pytest.mark.lapse_only
def test_function_libraries_travel_in_snapshots_both_ways(start_server):
    with running_server(kind="redis") as red:
        rc = client(red)
        rc.function_load(LIBRARY)
        rc.set("k", "v")
        assert rc.save() is True
        redis_dir = red.data_dir()
    lapse = start_server(options={"dir": redis_dir})
    lc = client(lapse)
    assert lc.fcall("snapfn", 0) == b"hi"
    assert lc.get("k") == b"v"
    assert lc.save() is True
    check = subprocess.run(["redis-check-rdb", os.path.join(redis_dir, "dump.rdb")], capture_output=True, text=True,
                           errors="replace")
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout
    with running_server(kind="redis", options={"dir": redis_dir}) as red:
        assert client(red).fcall("snapfn", 0) == b"hi"
