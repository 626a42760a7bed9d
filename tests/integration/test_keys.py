"""Key-space commands against the real server on 1, 2 and 4 threads: DEL/UNLINK/EXISTS/TYPE,
RENAME, COPY, the EXPIRE family, KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHDB/FLUSHALL, SELECT,
SWAPDB, MOVE, TOUCH and OBJECT. Expected replies are Redis 7.0's (LAPSE_TARGET=redis).
"""
import pytest

from lapse_harness import RespError as E
from redis_errors import NOT_INT, SYNTAX, invalid_expire
from lapse_harness import server_ms

NO_SUCH_KEY = E("ERR no such key")
SAME_OBJECT = E("ERR source and destination objects are the same")
DB_RANGE = E("ERR DB index is out of range")


def fill(raw, n, prefix="key:"):
    args = []
    for i in range(n):
        args += [f"{prefix}{i}", str(i)]
    assert raw.call("MSET", *args) == "OK"
    return {f"{prefix}{i}" for i in range(n)}


# ---- DEL / UNLINK / EXISTS / TYPE / TOUCH ----------------------------------------------


def test_del_unlink_counts(raw):
    fill(raw, 50)
    assert raw.call("DEL", "key:0", "key:1", "nokey", "key:0") == 2
    assert raw.call("UNLINK", *[f"key:{i}" for i in range(2, 50)], "nokey") == 48
    assert raw.call("DBSIZE") == 0
    assert raw.call("DEL", "nokey") == 0
    assert raw.call("UNLINK", "nokey") == 0


def test_exists_counts_repeats(raw):
    raw.call("MSET", "a", "1", "b", "2")
    assert raw.call("EXISTS", "a") == 1
    assert raw.call("EXISTS", "nokey") == 0
    assert raw.call("EXISTS", "a", "a", "b", "nokey", "a") == 4


def test_type(raw):
    raw.call("SET", "s", "v")
    assert raw.call_raw("TYPE", "s") == b"+string\r\n"
    assert raw.call_raw("TYPE", "nokey") == b"+none\r\n"


def test_touch(raw):
    raw.call("MSET", "a", "1", "b", "2")
    assert raw.call("TOUCH", "a", "b", "nokey", "a") == 3
    assert raw.call("TOUCH", "nokey") == 0


# ---- RENAME / RENAMENX -----------------------------------------------------------------


def test_rename(raw):
    raw.call("SET", "a", "1", "EX", 100)
    raw.call("SET", "b", "2")
    assert raw.call("RENAME", "a", "b") == "OK"
    assert raw.call("GET", "b") == b"1"
    assert raw.call("TTL", "b") == 100  # the TTL moves with the value
    assert raw.call("EXISTS", "a") == 0
    assert raw.call("RENAME", "nokey", "x") == NO_SUCH_KEY
    assert raw.call("RENAME", "b", "b") == "OK"
    assert raw.call("GET", "b") == b"1"
    assert raw.call("RENAME", "nokey", "nokey") == NO_SUCH_KEY


def test_rename_across_shards(raw):
    keys = fill(raw, 64, prefix="src:")
    for k in keys:
        assert raw.call("RENAME", k, "dst:" + k) == "OK"
    assert set(raw.call("KEYS", "*")) == {("dst:" + k).encode() for k in keys}
    assert raw.call("GET", "dst:src:7") == b"7"


def test_rename_target_ttl_is_replaced(raw):
    raw.call("SET", "a", "1")
    raw.call("SET", "b", "2", "EX", 100)
    assert raw.call("RENAME", "a", "b") == "OK"
    assert raw.call("TTL", "b") == -1


def test_renamenx(raw):
    raw.call("MSET", "a", "1", "b", "2")
    assert raw.call("RENAMENX", "a", "b") == 0
    assert raw.call("MGET", "a", "b") == [b"1", b"2"]
    assert raw.call("RENAMENX", "a", "c") == 1
    assert raw.call("MGET", "a", "c") == [None, b"1"]
    assert raw.call("RENAMENX", "c", "c") == 0
    assert raw.call("RENAMENX", "nokey", "d") == NO_SUCH_KEY


# ---- COPY ------------------------------------------------------------------------------


def test_copy(raw):
    raw.call("SET", "src", "v", "EX", 100)
    assert raw.call("COPY", "src", "dst") == 1
    assert raw.call("GET", "dst") == b"v"
    assert raw.call("TTL", "dst") == 100
    raw.call("SET", "src", "w")
    assert raw.call("COPY", "src", "dst") == 0
    assert raw.call("GET", "dst") == b"v"
    assert raw.call("COPY", "src", "dst", "REPLACE") == 1
    assert raw.call("GET", "dst") == b"w"
    assert raw.call("TTL", "dst") == -1
    assert raw.call("COPY", "nokey", "dst") == 0
    assert raw.call("COPY", "nokey", "dst", "REPLACE") == 0
    assert raw.call("GET", "dst") == b"w"


def test_copy_to_other_db(raw):
    raw.call("SET", "src", "v")
    assert raw.call("COPY", "src", "src", "DB", 3) == 1
    assert raw.call("COPY", "src", "src", "DB", 3) == 0
    assert raw.call("COPY", "src", "other", "db", "3", "replace") == 1
    assert raw.call("SELECT", 3) == "OK"
    assert sorted(raw.call("KEYS", "*")) == [b"other", b"src"]
    raw.call("SET", "src", "changed")
    assert raw.call("SELECT", 0) == "OK"
    assert raw.call("GET", "src") == b"v"
    # the copy is independent: changing it does not change the original
    assert raw.call("COPY", "src", "src", "DB", 3, "REPLACE") == 1
    raw.call("APPEND", "src", "x")
    raw.call("SELECT", 3)
    assert raw.call("GET", "src") == b"v"


@pytest.mark.parametrize("args, error", [
    (["src", "src"], SAME_OBJECT),
    (["src", "src", "DB", "0"], SAME_OBJECT),
    (["src", "dst", "DB", "16"], DB_RANGE),
    (["src", "dst", "DB", "-1"], DB_RANGE),
    (["src", "dst", "DB", "abc"], NOT_INT),
    (["src", "dst", "DB"], SYNTAX),
    (["src", "dst", "FOO"], SYNTAX),
])
def test_copy_errors(raw, args, error):
    raw.call("SET", "src", "v")
    assert raw.call("COPY", *args) == error
    assert raw.call("EXISTS", "dst") == 0


# ---- EXPIRE family ---------------------------------------------------------------------


def test_expire_ttl_pttl_persist(raw):
    raw.call("SET", "k", "v")
    assert raw.call("TTL", "k") == -1
    assert raw.call("PTTL", "k") == -1
    assert raw.call("TTL", "nokey") == -2
    assert raw.call("PTTL", "nokey") == -2
    assert raw.call("EXPIRE", "k", 100) == 1
    assert raw.call("TTL", "k") == 100
    assert 99000 < raw.call("PTTL", "k") <= 100000
    assert raw.call("PEXPIRE", "k", 5000) == 1
    assert 4000 < raw.call("PTTL", "k") <= 5000
    assert raw.call("TTL", "k") == 5
    assert raw.call("PERSIST", "k") == 1
    assert raw.call("PERSIST", "k") == 0
    assert raw.call("PERSIST", "nokey") == 0
    assert raw.call("TTL", "k") == -1
    assert raw.call("EXPIRE", "nokey", 10) == 0
    assert raw.call("PEXPIRE", "nokey", 10) == 0


def test_expireat_expiretime(raw):
    raw.call("SET", "k", "v")
    assert raw.call("EXPIRETIME", "k") == -1
    assert raw.call("PEXPIRETIME", "k") == -1
    assert raw.call("EXPIRETIME", "nokey") == -2
    assert raw.call("PEXPIRETIME", "nokey") == -2
    now = server_ms(raw)
    at = now // 1000 + 1000
    assert raw.call("EXPIREAT", "k", at) == 1
    assert raw.call("EXPIRETIME", "k") == at
    assert raw.call("PEXPIRETIME", "k") == at * 1000
    assert raw.call("PEXPIREAT", "k", at * 1000 + 123) == 1
    assert raw.call("PEXPIRETIME", "k") == at * 1000 + 123
    assert raw.call("EXPIRETIME", "k") == at
    assert raw.call("EXPIREAT", "nokey", at) == 0


def test_expiretime_and_ttl_round_to_nearest_second(raw):
    # Redis answers seconds as (ms + 500) / 1000 for TTL and EXPIRETIME alike
    base = (server_ms(raw) // 1000 + 10000) * 1000
    raw.call("SET", "k", "v")
    assert raw.call("PEXPIREAT", "k", base + 499) == 1
    assert raw.call("EXPIRETIME", "k") == base // 1000
    assert raw.call("PEXPIREAT", "k", base + 500) == 1
    assert raw.call("EXPIRETIME", "k") == base // 1000 + 1
    assert raw.call("PEXPIREAT", "k", base + 999) == 1
    assert raw.call("EXPIRETIME", "k") == base // 1000 + 1
    assert raw.call("PEXPIRE", "k", 100400) == 1
    assert raw.call("TTL", "k") == 100
    assert raw.call("PEXPIRE", "k", 100600) == 1
    assert raw.call("TTL", "k") == 101


def test_expire_zero_negative_and_past_delete(raw):
    cases = [("EXPIRE", 0), ("EXPIRE", -1), ("PEXPIRE", 0), ("PEXPIRE", -100),
             ("EXPIREAT", 1), ("PEXPIREAT", 1), ("EXPIREAT", 0)]
    for cmd, arg in cases:
        raw.call("SET", "k", "v")
        assert raw.call(cmd, "k", arg) == 1, (cmd, arg)
        assert raw.call("EXISTS", "k") == 0, (cmd, arg)
        assert raw.call("GET", "k") is None
    raw.call("SET", "k", "v", "EX", 100)
    now = server_ms(raw)
    assert raw.call("PEXPIREAT", "k", now - 1) == 1
    assert raw.call("TTL", "k") == -2


def test_expire_nx_xx_gt_lt(raw):
    raw.call("SET", "k", "v")
    # a key without TTL counts as an infinite TTL for GT and LT
    assert raw.call("EXPIRE", "k", 100, "XX") == 0
    assert raw.call("EXPIRE", "k", 100, "GT") == 0
    assert raw.call("TTL", "k") == -1
    assert raw.call("EXPIRE", "k", 100, "LT") == 1
    assert raw.call("TTL", "k") == 100
    assert raw.call("EXPIRE", "k", 200, "NX") == 0
    assert raw.call("EXPIRE", "k", 200, "XX") == 1
    assert raw.call("TTL", "k") == 200
    assert raw.call("EXPIRE", "k", 100, "GT") == 0
    assert raw.call("EXPIRE", "k", 300, "GT") == 1
    assert raw.call("EXPIRE", "k", 400, "LT") == 0
    assert raw.call("EXPIRE", "k", 150, "LT") == 1
    assert raw.call("TTL", "k") == 150
    # (not "equal": the wall clock may tick between the two calls)
    assert raw.call("PEXPIRE", "k", 149000, "GT") == 0  # smaller is not greater
    assert raw.call("PEXPIRE", "k", 150000, "LT") == 0
    assert raw.call("EXPIRE", "k", 100, "xx", "lt") == 1
    assert raw.call("TTL", "k") == 100
    raw.call("PERSIST", "k")
    assert raw.call("EXPIRE", "k", 50, "NX") == 1
    now = server_ms(raw)
    assert raw.call("EXPIREAT", "k", now // 1000 + 10, "GT") == 0
    assert raw.call("PEXPIREAT", "k", now + 10000, "LT") == 1
    assert raw.call("PEXPIRETIME", "k") == now + 10000
    assert raw.call("EXPIRE", "nokey", 10, "NX") == 0


def test_expire_option_with_past_time_deletes(raw):
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call("EXPIRE", "k", 0, "LT") == 1
    assert raw.call("EXISTS", "k") == 0
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call("EXPIRE", "k", -5, "GT") == 0  # GT with a past time does nothing
    assert raw.call("TTL", "k") == 100


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
@pytest.mark.parametrize("opts, error", [
    (["NX", "XX"], E("ERR NX and XX, GT or LT options at the same time are not compatible")),
    (["NX", "GT"], E("ERR NX and XX, GT or LT options at the same time are not compatible")),
    (["LT", "NX"], E("ERR NX and XX, GT or LT options at the same time are not compatible")),
    (["GT", "LT"], E("ERR GT and LT options at the same time are not compatible")),
    (["FOO"], E("ERR Unsupported option FOO")),
    (["XX", "bar"], E("ERR Unsupported option bar")),
])
def test_expire_incompatible_options(raw, cmd, opts, error):
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call(cmd, "k", 2000000000, *opts) == error
    assert raw.call("TTL", "k") == 100


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_expire_bad_numbers(raw, cmd):
    raw.call("SET", "k", "v")
    assert raw.call(cmd, "k", "abc") == NOT_INT
    assert raw.call(cmd, "k", "1.5") == NOT_INT
    assert raw.call(cmd, "k", "") == NOT_INT
    assert raw.call(cmd, "k") == E(f"ERR wrong number of arguments for '{cmd.lower()}' command")
    assert raw.call("TTL", "k") == -1


@pytest.mark.parametrize("cmd, arg, reply, exists", [
    # seconds are converted to milliseconds and the base time added, with overflow checks
    ("EXPIRE", "9223372036854775807", invalid_expire("expire"), True),
    ("EXPIRE", "9223372036854774", invalid_expire("expire"), True),
    ("EXPIRE", "-9223372036854775808", invalid_expire("expire"), True),
    ("EXPIRE", "-9223372036854775", 1, False),
    ("PEXPIRE", "9223372036854775807", invalid_expire("pexpire"), True),
    ("PEXPIRE", "-9223372036854775808", 1, False),
    ("PEXPIRE", "9223370000000000000", 1, True),
    ("EXPIREAT", "9223372036854775807", invalid_expire("expireat"), True),
    ("EXPIREAT", "-9223372036854775808", invalid_expire("expireat"), True),
    ("EXPIREAT", "9223372036854775", 1, True),
    ("PEXPIREAT", "9223372036854775807", 1, True),
    ("PEXPIREAT", "-9223372036854775808", 1, False),
])
def test_expire_extreme_values(raw, cmd, arg, reply, exists):
    raw.call("SET", "k", "v")
    assert raw.call(cmd, "k", arg) == reply
    assert raw.call("EXISTS", "k") == int(exists)


def test_far_expire_times_are_kept_exactly(raw):
    raw.call("SET", "k", "v")
    assert raw.call("PEXPIREAT", "k", "9223372036854775807") == 1
    assert raw.call("PEXPIRETIME", "k") == 9223372036854775807
    assert raw.call("EXPIREAT", "k", "9223372036854774") == 1
    assert raw.call("EXPIRETIME", "k") == 9223372036854774
    assert raw.call("PEXPIRETIME", "k") == 9223372036854774000
    # 2^31 seconds and more from now
    now = server_ms(raw)
    assert raw.call("EXPIRE", "k", 2 ** 31 + 5) == 1
    assert raw.call("TTL", "k") == 2 ** 31 + 5
    assert raw.call("EXPIRE", "k", 10 ** 12) == 1
    assert raw.call("TTL", "k") == 10 ** 12
    assert raw.call("EXPIRETIME", "k") - now // 1000 in (10 ** 12, 10 ** 12 + 1)


def test_ttl_after_set_and_rename_and_persist_replies_exact(raw):
    raw.call("SET", "k", "v", "PX", 100000)
    assert raw.call_raw("PERSIST", "k") == b":1\r\n"
    assert raw.call_raw("TTL", "k") == b":-1\r\n"
    assert raw.call_raw("TTL", "nokey") == b":-2\r\n"


# ---- KEYS / SCAN -----------------------------------------------------------------------


def test_keys_patterns(raw):
    names = ["hello", "hallo", "hxllo", "hllo", "heeeello", "hillo", "h*llo", "h?llo", "a[b]c", "abc",
             "user:1", "user:2", "user:10", "x\\y"]
    for n in names:
        raw.call("SET", n, "v")

    def keys(p):
        return sorted(k.decode() for k in raw.call("KEYS", p))

    assert keys("*") == sorted(names)
    assert keys("h?llo") == sorted(["hello", "hallo", "hxllo", "hillo", "h*llo", "h?llo"])
    assert keys("h*llo") == sorted(["hello", "hallo", "hxllo", "hllo", "heeeello", "hillo", "h*llo", "h?llo"])
    assert keys("h[ae]llo") == ["hallo", "hello"]
    assert keys("h[^e]llo") == sorted(["hallo", "hxllo", "hillo", "h*llo", "h?llo"])
    assert keys("h[a-f]llo") == ["hallo", "hello"]
    assert keys("h\\*llo") == ["h*llo"]
    assert keys("h\\?llo") == ["h?llo"]
    assert keys("a\\[b\\]c") == ["a[b]c"]
    assert keys("user:?") == ["user:1", "user:2"]
    assert keys("user:*") == ["user:1", "user:10", "user:2"]
    assert keys("nomatch*") == []
    assert keys("x\\\\y") == ["x\\y"]
    assert raw.call_raw("KEYS", "nomatch") == b"*0\r\n"


def scan_all(raw, *opts, count=None):
    cursor = b"0"
    seen = []
    calls = 0
    while True:
        args = ["SCAN", cursor, *opts]
        if count is not None:
            args += ["COUNT", count]
        reply = raw.call(*args)
        assert isinstance(reply, list) and len(reply) == 2, reply
        cursor, page = reply
        assert isinstance(cursor, bytes)
        seen += page
        calls += 1
        assert calls < 100000
        if cursor == b"0":
            return seen, calls


@pytest.mark.parametrize("count", [None, 1, 7, 100, 10000])
def test_scan_full_iteration_returns_every_key(raw, count):
    keys = fill(raw, 1000)
    seen, calls = scan_all(raw, count=count)
    assert {k.decode() for k in seen} == keys
    assert len(seen) >= len(keys)
    if count == 1:
        assert calls > 10


def test_scan_match_and_type(raw):
    keys = fill(raw, 300, prefix="a:") | fill(raw, 300, prefix="b:")
    seen, _ = scan_all(raw, "MATCH", "a:*")
    assert {k.decode() for k in seen} == {k for k in keys if k.startswith("a:")}
    seen, _ = scan_all(raw, "MATCH", "b:1?", "COUNT", 50)
    assert {k.decode() for k in seen} == {f"b:1{i}" for i in range(10)}
    seen, _ = scan_all(raw, "TYPE", "string")
    assert {k.decode() for k in seen} == keys
    seen, _ = scan_all(raw, "TYPE", "list")
    assert seen == []
    seen, _ = scan_all(raw, "type", "STRING", "match", "*:29?")
    assert {k.decode() for k in seen} == {f"{p}:29{i}" for p in "ab" for i in range(10)}


def test_scan_empty_db_ends_at_once(raw):
    # Redis answers cursor 0 and no keys for an empty database in one call
    assert raw.call_raw("SCAN", 0) == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_errors(raw):
    assert raw.call("SCAN", "abc") == E("ERR invalid cursor")
    assert raw.call("SCAN", "1.5") == E("ERR invalid cursor")
    assert raw.call("SCAN", " 1") == E("ERR invalid cursor")
    assert raw.call("SCAN", "99999999999999999999") == E("ERR invalid cursor")
    assert raw.call("SCAN", "18446744073709551616") == E("ERR invalid cursor")
    assert raw.call("SCAN", "-") == E("ERR invalid cursor")
    assert raw.call("SCAN", "+") == E("ERR invalid cursor")
    assert raw.call("SCAN", "--1") == E("ERR invalid cursor")


@pytest.mark.parametrize("cursor", ["-1", "", "+0", "-18446744073709551615", "18446744073709551615"])
def test_scan_reads_the_cursor_as_strtoul_does(raw, cursor):
    # Redis parses the cursor with strtoul: a sign is allowed, a minus wraps around, and an
    # empty text is 0. On an empty database every such cursor ends the scan at once.
    assert raw.call_raw("SCAN", cursor) == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_from_an_empty_cursor_starts_over(raw):
    raw.call("SET", "k", "v")
    assert raw.call_raw("SCAN", "") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"
    assert raw.call("SCAN", 0, "COUNT", 0) == SYNTAX
    assert raw.call("SCAN", 0, "COUNT", "abc") == NOT_INT
    assert raw.call("SCAN", 0, "MATCH") == SYNTAX
    assert raw.call("SCAN", 0, "FOO", "bar") == SYNTAX


def test_scan_with_redis_py_iter(r):
    keys = {f"k{i}" for i in range(777)}
    r.mset({k: "v" for k in keys})
    assert set(r.scan_iter()) == keys
    assert set(r.scan_iter(match="k1*", count=50)) == {k for k in keys if k.startswith("k1")}


# ---- RANDOMKEY / DBSIZE / FLUSHDB / FLUSHALL -------------------------------------------


def test_randomkey_dbsize(raw):
    assert raw.call("RANDOMKEY") is None
    assert raw.call("DBSIZE") == 0
    keys = fill(raw, 200)
    assert raw.call("DBSIZE") == 200
    for _ in range(50):
        assert raw.call("RANDOMKEY").decode() in keys
    raw.call("SET", "only", "x", "EX", 100)
    raw.call("DEL", *keys)
    assert raw.call("RANDOMKEY") == b"only"
    assert raw.call("DBSIZE") == 1


def test_flushdb_flushall(raw):
    fill(raw, 20)
    raw.call("SELECT", 1)
    fill(raw, 30)
    assert raw.call("DBSIZE") == 30
    assert raw.call("FLUSHDB") == "OK"
    assert raw.call("DBSIZE") == 0
    raw.call("SELECT", 0)
    assert raw.call("DBSIZE") == 20
    raw.call("SELECT", 2)
    fill(raw, 5)
    assert raw.call("FLUSHALL") == "OK"
    assert raw.call("DBSIZE") == 0
    raw.call("SELECT", 0)
    assert raw.call("DBSIZE") == 0


@pytest.mark.parametrize("cmd", ["FLUSHDB", "FLUSHALL"])
def test_flush_async_sync_and_errors(raw, cmd):
    for mode in ["ASYNC", "SYNC", "async", "sync"]:
        fill(raw, 10)
        assert raw.call(cmd, mode) == "OK"
        assert raw.call("DBSIZE") == 0
        assert raw.call("GET", "key:1") is None
    assert raw.call(cmd, "FOO") == SYNTAX
    assert raw.call(cmd, "SYNC", "ASYNC") == SYNTAX


# ---- SELECT / SWAPDB / MOVE ------------------------------------------------------------


def test_select_isolates_databases(raw):
    for db in range(16):
        assert raw.call("SELECT", db) == "OK"
        raw.call("SET", "k", f"db{db}")
    for db in range(16):
        raw.call("SELECT", db)
        assert raw.call("GET", "k") == f"db{db}".encode()
        assert raw.call("DBSIZE") == 1
    for bad in ["16", "-1", "100"]:
        assert raw.call("SELECT", bad) == DB_RANGE
    assert raw.call("SELECT", "abc") == NOT_INT
    assert raw.call("GET", "k") == b"db15"  # a failed SELECT keeps the current db


def test_swapdb(raw):
    raw.call("SET", "a", "in0", "EX", 100)
    raw.call("SELECT", 1)
    raw.call("SET", "b", "in1")
    assert raw.call("SWAPDB", 0, 1) == "OK"
    # this connection still uses db 1, which now holds what db 0 held
    assert raw.call("KEYS", "*") == [b"a"]
    assert raw.call("TTL", "a") == 100
    raw.call("SELECT", 0)
    assert raw.call("KEYS", "*") == [b"b"]
    assert raw.call("SWAPDB", 0, 0) == "OK"
    assert raw.call("KEYS", "*") == [b"b"]
    assert raw.call("SWAPDB", 0, 16) == E("ERR DB index is out of range")
    assert raw.call("SWAPDB", "abc", 1) == E("ERR invalid first DB index")
    assert raw.call("SWAPDB", 0, "abc") == E("ERR invalid second DB index")
    assert raw.call("KEYS", "*") == [b"b"]


def test_swapdb_seen_by_other_connections(raw, raw2):
    raw.call("SET", "k", "zero")
    raw2.call("SELECT", 5)
    assert raw2.call("GET", "k") is None
    assert raw.call("SWAPDB", 0, 5) == "OK"
    assert raw2.call("GET", "k") == b"zero"
    assert raw.call("GET", "k") is None


def test_move(raw):
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call("MOVE", "k", 1) == 1
    assert raw.call("EXISTS", "k") == 0
    assert raw.call("MOVE", "k", 1) == 0
    raw.call("SELECT", 1)
    assert raw.call("GET", "k") == b"v"
    assert raw.call("TTL", "k") == 100
    raw.call("SELECT", 0)
    raw.call("SET", "k", "other")
    assert raw.call("MOVE", "k", 1) == 0  # target exists: nothing moves
    assert raw.call("GET", "k") == b"other"
    assert raw.call("MOVE", "nokey", 1) == 0
    assert raw.call("MOVE", "k", 0) == SAME_OBJECT
    assert raw.call("MOVE", "k", 16) == DB_RANGE
    assert raw.call("MOVE", "k", -1) == DB_RANGE
    assert raw.call("MOVE", "k", "abc") == NOT_INT


# ---- OBJECT ----------------------------------------------------------------------------


def test_object_encoding(raw):
    raw.call("SET", "int", "12345")
    raw.call("SET", "neg", "-5")
    raw.call("SET", "big", "12345678901234567890")
    raw.call("SET", "emb", "x" * 44)
    raw.call("SET", "raw", "x" * 45)
    raw.call("SET", "lead0", "0123")
    assert raw.call("OBJECT", "ENCODING", "int") == b"int"
    assert raw.call("OBJECT", "ENCODING", "neg") == b"int"
    assert raw.call("OBJECT", "ENCODING", "big") == b"embstr"
    assert raw.call("OBJECT", "ENCODING", "emb") == b"embstr"
    assert raw.call("OBJECT", "ENCODING", "raw") == b"raw"
    assert raw.call("OBJECT", "ENCODING", "lead0") == b"embstr"
    assert raw.call("OBJECT", "ENCODING", "nokey") is None
    raw.call("INCR", "counter")
    assert raw.call("OBJECT", "encoding", "counter") == b"int"


def test_object_encoding_after_in_place_edit(raw):
    # Redis turns a value edited in place (APPEND, SETRANGE) into a raw string
    raw.call("SET", "a", "12345")
    raw.call("APPEND", "a", "6")
    assert raw.call("OBJECT", "ENCODING", "a") == b"raw"
    raw.call("SET", "b", "12345")
    raw.call("SETRANGE", "b", 0, "9")
    assert raw.call("OBJECT", "ENCODING", "b") == b"raw"
    raw.call("SET", "c", "short")
    raw.call("APPEND", "c", "x")
    assert raw.call("OBJECT", "ENCODING", "c") == b"raw"


def test_object_idletime_freq_and_errors(raw):
    raw.call("SET", "k", "v")
    # The LRU clock counts whole seconds: a second that turns in between reads 1.
    assert raw.call("OBJECT", "IDLETIME", "k") in (0, 1)
    assert raw.call("OBJECT", "IDLETIME", "nokey") is None
    assert raw.call("OBJECT", "FREQ", "k") == E(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.")
    assert raw.call("OBJECT", "FOO", "k") == E("ERR unknown subcommand 'FOO'. Try OBJECT HELP.")
    assert raw.call("OBJECT") == E("ERR wrong number of arguments for 'object' command")
    # OBJECT HELP's exact text is checked in test_client_introspection.py.


def test_object_refcount_of_shared_small_integers(raw):
    # Redis keeps one shared object for each integer from 0 to 9999 (refcount INT_MAX), unless a
    # maxmemory with an LRU or LFU policy needs a stamp per key; every other value has its own.
    shared = 2147483647
    raw.pipeline([("SET", "zero", "0"), ("SET", "small", "9999"), ("SET", "big", "10000"), ("SET", "neg", "-1"),
                  ("SET", "padded", "010"), ("SET", "word", "v"), ("RPUSH", "list", "1"), ("SET", "n", "9998")])
    assert raw.call("INCR", "n") == 9999
    expected = {"zero": shared, "small": shared, "n": shared, "big": 1, "neg": 1, "padded": 1, "word": 1, "list": 1}
    for key, refcount in expected.items():
        assert raw.call("OBJECT", "REFCOUNT", key) == refcount, key
    assert raw.call("INCR", "n") == 10000
    assert raw.call("OBJECT", "REFCOUNT", "n") == 1
    try:
        for policy, refcount in (("allkeys-lru", 1), ("volatile-lfu", 1), ("allkeys-random", shared)):
            assert raw.call("CONFIG", "SET", "maxmemory", "1gb", "maxmemory-policy", policy) == "OK"
            assert raw.call("SET", "k", "10") == "OK"
            assert raw.call("OBJECT", "REFCOUNT", "k") == refcount, policy
    finally:
        raw.call("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")


@pytest.mark.lapse_only
def test_object_idletime_with_debug_advance(raw):
    raw.call("SET", "k", "v")
    assert raw.call("DEBUG", "ADVANCE", 5000) == "OK"
    assert 5 <= raw.call("OBJECT", "IDLETIME", "k") <= 6
    raw.call("GET", "k")
    assert raw.call("OBJECT", "IDLETIME", "k") in (0, 1)


@pytest.mark.lapse_only
def test_randomkey_finds_the_one_live_key_among_expired_ones_on_other_shards(raw):
    # Every other shard holds only expired keys: RANDOMKEY must reclaim them and move on to
    # the shard that has the live one, whichever shard it starts from.
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(64):
        raw.call("SET", f"gone{i}", "v", "PX", 100)
    raw.call("SET", "forever", "v")
    raw.call("DEBUG", "ADVANCE", 100)
    for _ in range(20):
        assert raw.call("RANDOMKEY") == b"forever"
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
