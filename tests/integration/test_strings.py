"""String commands against the real server with redis-py and raw RESP, on 1, 2 and 4 threads.

Every expected reply and error text is Redis 7.0's (checked with LAPSE_TARGET=redis).
"""
import pytest

from lapse_harness import RespError as E
from redis_errors import NAN_INF, NOT_FLOAT, NOT_INT, OVERFLOW, SYNTAX, arity, invalid_expire
from lapse_harness import server_ms


# ---- GET / SET ------------------------------------------------------------------------


def test_set_get_overwrite_and_missing(r):
    assert r.get("k") is None
    assert r.set("k", "v1") is True
    assert r.get("k") == "v1"
    assert r.set("k", "v2") is True
    assert r.get("k") == "v2"


def test_set_replies_exact_bytes(raw):
    assert raw.call_raw("SET", "k", "v") == b"+OK\r\n"
    assert raw.call_raw("GET", "k") == b"$1\r\nv\r\n"
    assert raw.call_raw("GET", "missing") == b"$-1\r\n"
    assert raw.call_raw("SET", "k", "v", "NX") == b"$-1\r\n"


def test_set_ex_px_exat_pxat_set_ttl(raw):
    assert raw.call("SET", "a", "1", "EX", 100) == "OK"
    assert raw.call("TTL", "a") == 100
    assert raw.call("SET", "b", "1", "PX", 100000) == "OK"
    assert 99000 < raw.call("PTTL", "b") <= 100000
    now = server_ms(raw)
    assert raw.call("SET", "c", "1", "EXAT", now // 1000 + 100) == "OK"
    assert raw.call("EXPIRETIME", "c") == now // 1000 + 100
    assert raw.call("SET", "d", "1", "PXAT", now + 100000) == "OK"
    assert raw.call("PEXPIRETIME", "d") == now + 100000
    # lower-case options are accepted
    assert raw.call("set", "e", "1", "ex", "50") == "OK"
    assert raw.call("TTL", "e") == 50


def test_set_getex_repeated_option_last_wins(raw):
    # Redis parses options left to right and accepts the same option twice (last value wins)
    assert raw.call("SET", "f", "1", "EX", "50", "EX", "60") == "OK"
    assert raw.call("TTL", "f") == 60
    assert raw.call("SET", "g", "1", "PX", "50000", "PX", "60000", "NX", "NX") == "OK"
    assert 59000 < raw.call("PTTL", "g") <= 60000
    assert raw.call("SET", "g", "2", "KEEPTTL", "KEEPTTL", "GET", "GET") == b"1"
    assert 59000 < raw.call("PTTL", "g") <= 60000
    assert raw.call("GETEX", "f", "EX", "10", "EX", "20") == b"1"
    assert raw.call("TTL", "f") == 20
    assert raw.call("GETEX", "f", "PERSIST", "PERSIST") == b"1"
    assert raw.call("TTL", "f") == -1


def test_set_without_ttl_option_clears_ttl(raw):
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call("SET", "k", "w") == "OK"
    assert raw.call("TTL", "k") == -1


def test_set_nx_xx(raw):
    assert raw.call("SET", "k", "v", "XX") is None
    assert raw.call("EXISTS", "k") == 0
    assert raw.call("SET", "k", "v", "NX") == "OK"
    assert raw.call("SET", "k", "w", "NX") is None
    assert raw.call("GET", "k") == b"v"
    assert raw.call("SET", "k", "w", "XX") == "OK"
    assert raw.call("GET", "k") == b"w"


def test_set_keepttl(raw):
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call("SET", "k", "w", "KEEPTTL") == "OK"
    assert raw.call("GET", "k") == b"w"
    assert raw.call("TTL", "k") == 100
    assert raw.call("SET", "fresh", "v", "KEEPTTL") == "OK"
    assert raw.call("TTL", "fresh") == -1


def test_set_get_option(raw):
    assert raw.call("SET", "k", "v1", "GET") is None
    assert raw.call("GET", "k") == b"v1"
    assert raw.call("SET", "k", "v2", "GET") == b"v1"
    assert raw.call("GET", "k") == b"v2"
    # NX GET on an existing key: the old value comes back and nothing is written
    assert raw.call("SET", "k", "v3", "NX", "GET") == b"v2"
    assert raw.call("GET", "k") == b"v2"
    # XX GET on a missing key: nil and nothing written
    assert raw.call("SET", "nokey", "v", "XX", "GET") is None
    assert raw.call("EXISTS", "nokey") == 0
    assert raw.call("SET", "k", "v4", "XX", "GET", "EX", 100) == b"v2"
    assert raw.call("TTL", "k") == 100


@pytest.mark.parametrize("args, error", [
    (["NX", "XX"], SYNTAX),
    (["XX", "NX"], SYNTAX),
    (["EX", "10", "PX", "10000"], SYNTAX),
    (["EX", "10", "EXAT", "2000000000"], SYNTAX),
    (["PX", "10", "PXAT", "2000000000000"], SYNTAX),
    (["KEEPTTL", "EX", "10"], SYNTAX),
    (["PX", "10", "KEEPTTL"], SYNTAX),
    (["EX"], SYNTAX),
    (["FOO"], SYNTAX),
    (["EX", "abc"], NOT_INT),
    (["PX", "1.5"], NOT_INT),
    (["EX", "0"], invalid_expire("set")),
    (["EX", "-1"], invalid_expire("set")),
    (["PX", "0"], invalid_expire("set")),
    (["EXAT", "0"], invalid_expire("set")),
    (["PXAT", "-5"], invalid_expire("set")),
    (["EX", "9223372036854775807"], invalid_expire("set")),
    (["EXAT", "9223372036854775807"], invalid_expire("set")),
])
def test_set_invalid_options(raw, args, error):
    raw.call("SET", "k", "orig")
    assert raw.call("SET", "k", "new", *args) == error
    assert raw.call("GET", "k") == b"orig"
    assert raw.call("TTL", "k") == -1


def test_set_arity(raw):
    assert raw.call("SET", "k") == arity("set")
    assert raw.call("GET") == arity("get")
    assert raw.call("GET", "a", "b") == arity("get")


# ---- SETNX / SETEX / PSETEX / GETSET / GETDEL ------------------------------------------


def test_setnx(raw):
    assert raw.call("SETNX", "k", "v") == 1
    assert raw.call("SETNX", "k", "w") == 0
    assert raw.call("GET", "k") == b"v"


def test_setex_psetex(raw):
    assert raw.call("SETEX", "k", 100, "v") == "OK"
    assert raw.call("GET", "k") == b"v"
    assert raw.call("TTL", "k") == 100
    assert raw.call("PSETEX", "p", 100000, "v") == "OK"
    assert 99000 < raw.call("PTTL", "p") <= 100000
    assert raw.call("SETEX", "k", 0, "v") == invalid_expire("setex")
    assert raw.call("SETEX", "k", -5, "v") == invalid_expire("setex")
    assert raw.call("PSETEX", "k", 0, "v") == invalid_expire("psetex")
    assert raw.call("SETEX", "k", "abc", "v") == NOT_INT
    assert raw.call("SETEX", "k", 10) == arity("setex")
    assert raw.call("TTL", "k") == 100


def test_getset(raw):
    assert raw.call("GETSET", "k", "a") is None
    assert raw.call("GETSET", "k", "b") == b"a"
    raw.call("EXPIRE", "k", 100)
    assert raw.call("GETSET", "k", "c") == b"b"
    assert raw.call("TTL", "k") == -1  # GETSET clears the TTL like SET


def test_getdel(raw):
    raw.call("SET", "k", "v")
    assert raw.call("GETDEL", "k") == b"v"
    assert raw.call("GETDEL", "k") is None
    assert raw.call("EXISTS", "k") == 0


# ---- GETEX -----------------------------------------------------------------------------


def test_getex_options(raw):
    raw.call("SET", "k", "v")
    assert raw.call("GETEX", "k") == b"v"
    assert raw.call("TTL", "k") == -1
    assert raw.call("GETEX", "k", "EX", 100) == b"v"
    assert raw.call("TTL", "k") == 100
    assert raw.call("GETEX", "k", "PX", 50000) == b"v"
    assert 49000 < raw.call("PTTL", "k") <= 50000
    now = server_ms(raw)
    assert raw.call("GETEX", "k", "EXAT", now // 1000 + 200) == b"v"
    assert raw.call("EXPIRETIME", "k") == now // 1000 + 200
    assert raw.call("GETEX", "k", "PXAT", now + 300000) == b"v"
    assert raw.call("PEXPIRETIME", "k") == now + 300000
    assert raw.call("GETEX", "k", "PERSIST") == b"v"
    assert raw.call("TTL", "k") == -1
    assert raw.call("GETEX", "missing", "EX", 10) is None
    assert raw.call("EXISTS", "missing") == 0


@pytest.mark.parametrize("args, error", [
    (["EX", "10", "PX", "100"], SYNTAX),
    (["PERSIST", "EX", "10"], SYNTAX),
    (["EX", "10", "PERSIST"], SYNTAX),
    (["FOO"], SYNTAX),
    (["EX"], SYNTAX),
    (["EX", "abc"], NOT_INT),
    (["EX", "0"], invalid_expire("getex")),
    (["PX", "-1"], invalid_expire("getex")),
    (["EXAT", "0"], invalid_expire("getex")),
])
def test_getex_invalid(raw, args, error):
    raw.call("SET", "k", "v", "EX", 100)
    assert raw.call("GETEX", "k", *args) == error
    assert raw.call("TTL", "k") == 100


def test_getex_past_time_deletes(raw):
    raw.call("SET", "k", "v")
    assert raw.call("GETEX", "k", "EXAT", 1) == b"v"
    assert raw.call("EXISTS", "k") == 0
    raw.call("SET", "k", "v")
    assert raw.call("GETEX", "k", "PXAT", 1) == b"v"
    assert raw.call("GET", "k") is None


# ---- MGET / MSET / MSETNX --------------------------------------------------------------


def test_mset_mget_many_keys(r):
    mapping = {f"key:{i}": f"value:{i}" for i in range(500)}
    assert r.mset(mapping) is True
    keys = list(mapping) + ["missing:1", "missing:2"]
    assert r.mget(keys) == list(mapping.values()) + [None, None]


def test_mget_duplicates_and_order(raw):
    raw.call("MSET", "a", "1", "b", "2")
    assert raw.call("MGET", "b", "nokey", "a", "b") == [b"2", None, b"1", b"2"]
    assert raw.call_raw("MGET", "a", "nokey") == b"*2\r\n$1\r\n1\r\n$-1\r\n"


def test_mset_last_wins_and_clears_ttl(raw):
    raw.call("SET", "a", "old", "EX", 100)
    assert raw.call("MSET", "a", "1", "a", "2") == "OK"
    assert raw.call("GET", "a") == b"2"
    assert raw.call("TTL", "a") == -1


def test_mset_msetnx_arity(raw):
    assert raw.call("MSET", "a", "1", "b") == arity("mset")
    assert raw.call("MSETNX", "a", "1", "b") == arity("msetnx")
    assert raw.call("MSET", "a") == arity("mset")
    assert raw.call("EXISTS", "a", "b") == 0


def test_msetnx(raw):
    assert raw.call("MSETNX", "a", "1", "b", "2") == 1
    assert raw.call("MSETNX", "b", "x", "c", "3") == 0
    assert raw.call("MGET", "a", "b", "c") == [b"1", b"2", None]
    # many keys, spread over every shard
    args = []
    for i in range(100):
        args += [f"n{i}", str(i)]
    assert raw.call("MSETNX", *args) == 1
    assert raw.call("MSETNX", "n99", "x", "fresh", "y") == 0
    assert raw.call("EXISTS", "fresh") == 0


# ---- APPEND / STRLEN / GETRANGE / SETRANGE ---------------------------------------------


def test_append_strlen(raw):
    assert raw.call("APPEND", "k", "Hello") == 5
    assert raw.call("APPEND", "k", " World") == 11
    assert raw.call("GET", "k") == b"Hello World"
    assert raw.call("STRLEN", "k") == 11
    assert raw.call("STRLEN", "missing") == 0
    assert raw.call("APPEND", "empty", "") == 0
    assert raw.call("EXISTS", "empty") == 1
    raw.call("SET", "n", 12345)
    assert raw.call("STRLEN", "n") == 5
    assert raw.call("APPEND", "n", 6) == 6
    assert raw.call("INCR", "n") == 123457


def test_append_keeps_ttl(raw):
    raw.call("SET", "k", "a", "EX", 100)
    raw.call("APPEND", "k", "b")
    assert raw.call("TTL", "k") == 100


@pytest.mark.parametrize("start, end, expected", [
    (0, 3, b"This"), (-3, -1, b"ing"), (0, -1, b"This is a string"), (10, 100, b"string"),
    (5, 3, b""), (-1, -2, b""), (-100, 3, b"This"), (100, 200, b""),
    (0, 9223372036854775807, b"This is a string"), (-9223372036854775808, 0, b"T"),
])
def test_getrange(raw, start, end, expected):
    raw.call("SET", "k", "This is a string")
    assert raw.call("GETRANGE", "k", start, end) == expected


def test_getrange_missing_and_errors(raw):
    assert raw.call_raw("GETRANGE", "missing", 0, 10) == b"$0\r\n\r\n"
    raw.call("SET", "k", "abc")
    assert raw.call("GETRANGE", "k", "a", 1) == NOT_INT
    assert raw.call("GETRANGE", "k", 0) == arity("getrange")
    raw.call("SET", "n", 12345)
    assert raw.call("GETRANGE", "n", 1, 2) == b"23"


def test_setrange(raw):
    raw.call("SET", "k", "Hello World")
    assert raw.call("SETRANGE", "k", 6, "Redis") == 11
    assert raw.call("GET", "k") == b"Hello Redis"
    assert raw.call("SETRANGE", "pad", 5, "x") == 6
    assert raw.call("GET", "pad") == b"\x00" * 5 + b"x"
    assert raw.call("SETRANGE", "k", 20, "") == 11  # empty value changes nothing
    assert raw.call("GET", "k") == b"Hello Redis"
    assert raw.call("SETRANGE", "missing", 0, "") == 0
    assert raw.call("SETRANGE", "missing", 10, "") == 0
    assert raw.call("EXISTS", "missing") == 0
    assert raw.call("SETRANGE", "k", -1, "x") == E("ERR offset is out of range")
    assert raw.call("SETRANGE", "k", 536870912, "x") == E("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    assert raw.call("SETRANGE", "k", 536870911, "") == 11
    assert raw.call("SETRANGE", "k", "abc", "x") == NOT_INT
    raw.call("SET", "n", 12345)
    assert raw.call("SETRANGE", "n", 0, "9") == 5
    assert raw.call("INCR", "n") == 92346


# ---- INCR family -----------------------------------------------------------------------


def test_incr_decr(raw):
    assert raw.call("INCR", "c") == 1
    assert raw.call("INCR", "c") == 2
    assert raw.call("INCRBY", "c", 10) == 12
    assert raw.call("DECR", "c") == 11
    assert raw.call("DECRBY", "c", 20) == -9
    assert raw.call("INCRBY", "c", -1) == -10
    assert raw.call("DECRBY", "c", -10) == 0
    assert raw.call("GET", "c") == b"0"
    assert raw.call("DECR", "new") == -1


def test_incr_keeps_ttl(raw):
    raw.call("SET", "c", 5, "EX", 100)
    assert raw.call("INCR", "c") == 6
    assert raw.call("TTL", "c") == 100


@pytest.mark.parametrize("value", ["abc", "1.5", " 1", "1 ", "01", "+1", "", "12345678901234567890",
                                   "0x10", "1e3"])
def test_incr_not_an_integer(raw, value):
    raw.call("SET", "c", value)
    assert raw.call("INCR", "c") == NOT_INT
    assert raw.call("GET", "c") == value.encode()


@pytest.mark.parametrize("increment", ["abc", "1.5", "", " 5", "9223372036854775808"])
def test_incrby_bad_increment(raw, increment):
    raw.call("SET", "c", 5)
    assert raw.call("INCRBY", "c", increment) == NOT_INT
    assert raw.call("DECRBY", "c", increment) == NOT_INT
    assert raw.call("GET", "c") == b"5"


def test_incr_overflow(raw):
    raw.call("SET", "c", "9223372036854775806")
    assert raw.call("INCR", "c") == 9223372036854775807
    assert raw.call("INCR", "c") == OVERFLOW
    assert raw.call("INCRBY", "c", 1) == OVERFLOW
    assert raw.call("GET", "c") == b"9223372036854775807"
    raw.call("SET", "m", "-9223372036854775808")
    assert raw.call("DECR", "m") == OVERFLOW
    assert raw.call("INCRBY", "m", -1) == OVERFLOW
    assert raw.call("DECRBY", "m", "-9223372036854775807") == -1
    assert raw.call("INCRBY", "m", "-9223372036854775808") == OVERFLOW


def test_decrby_most_negative(raw):
    raw.call("SET", "c", 0)
    assert raw.call("DECRBY", "c", "-9223372036854775808") == E("ERR decrement would overflow")
    assert raw.call("GET", "c") == b"0"


@pytest.mark.parametrize("steps, expected", [
    (["1.1", "2.2"], b"3.3"),
    (["0.1", "0.2"], b"0.3"),
    (["3.0e3"], b"3000"),
    (["10.5", "-10.5"], b"0"),
    (["1e17", "1"], b"100000000000000001"),
    (["-1e-10"], b"-0.0000000001"),
    (["5"], b"5"),
    ([".5"], b"0.5"),
    (["+5"], b"5"),
    (["1."], b"1"),
])
def test_incrbyfloat_formatting(raw, steps, expected):
    for s in steps:
        reply = raw.call("INCRBYFLOAT", "f", s)
    assert reply == expected
    assert raw.call("GET", "f") == expected


def test_incrbyfloat_on_integer_and_errors(raw):
    raw.call("SET", "f", 10)
    assert raw.call("INCRBYFLOAT", "f", "0.5") == b"10.5"
    assert raw.call("INCRBYFLOAT", "f", "abc") == NOT_FLOAT
    assert raw.call("INCRBYFLOAT", "f", "") == NOT_FLOAT
    assert raw.call("INCRBYFLOAT", "f", " 1") == NOT_FLOAT
    assert raw.call("INCRBYFLOAT", "f", "nan") == NOT_FLOAT
    assert raw.call("INCRBYFLOAT", "f", "inf") == NAN_INF
    assert raw.call("INCRBYFLOAT", "f", "-inf") == NAN_INF
    assert raw.call("INCRBYFLOAT", "f", "1e5000") == NOT_FLOAT  # beyond long double
    raw.call("SET", "big", "1e4932")  # Redis computes in long double: 2e4932 overflows it
    assert raw.call("INCRBYFLOAT", "big", "1e4932") == NAN_INF
    raw.call("SET", "dbl", "1.7976931348623157e308")  # ... but twice DBL_MAX does not
    assert raw.call("INCRBYFLOAT", "dbl", "1.7976931348623157e308").startswith(b"35953862697246313999")
    raw.call("SET", "s", "hello")
    assert raw.call("INCRBYFLOAT", "s", 1) == NOT_FLOAT
    raw.call("SET", "e", "1e3")
    assert raw.call("INCRBYFLOAT", "e", 1) == b"1001"
    assert raw.call("GET", "f") == b"10.5"


def test_incrbyfloat_keeps_ttl(raw):
    raw.call("SET", "f", "1", "EX", 100)
    raw.call("INCRBYFLOAT", "f", "0.5")
    assert raw.call("TTL", "f") == 100


# ---- binary safety ---------------------------------------------------------------------


BINARY_VALUES = [
    b"\x00",
    b"a\x00b\x00c",
    b"line1\r\nline2\r\n",
    b"\r\n$5\r\nfake\r\n",
    bytes(range(256)),
    b"",
    b"\xff\xfe\xfd" * 1000,
]


@pytest.mark.parametrize("value", BINARY_VALUES, ids=lambda v: f"{len(v)}bytes")
def test_binary_values(rb, value):
    assert rb.set(b"bin", value) is True
    assert rb.get(b"bin") == value
    assert rb.strlen(b"bin") == len(value)
    assert rb.append(b"bin", b"\x00\r\n") == len(value) + 3
    assert rb.getrange(b"bin", 0, -1) == value + b"\x00\r\n"


def test_binary_keys(rb):
    keys = [b"k\x00ey", b"k\r\ney", b"\x00", bytes(range(1, 256)), b"\xff" * 100]
    for i, k in enumerate(keys):
        assert rb.set(k, str(i)) is True
    assert rb.mget(keys) == [str(i).encode() for i in range(len(keys))]
    assert rb.exists(*keys) == len(keys)
    assert set(rb.keys("*")) == set(keys)
    assert set(rb.scan_iter(count=1000)) == set(keys)
    assert rb.delete(*keys) == len(keys)


def test_large_value(rb):
    value = bytes(range(256)) * 16384  # 4 MiB
    assert rb.set(b"big", value) is True
    assert rb.get(b"big") == value
    assert rb.setrange(b"big", len(value), b"tail") == len(value) + 4
    assert rb.getrange(b"big", len(value) - 2, -1) == value[-2:] + b"tail"
