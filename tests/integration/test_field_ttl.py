"""Per-field TTL on hashes (issue 13): Redis 7.4's HEXPIRE family on a frozen server clock.

Redis 7.0 has no field TTLs, so these replies are checked against Redis 7.4's documented
behaviour rather than a running server. The model: a field is visible on every read surface
at its deadline - 1 ms and gone at its deadline; a hash whose last field expires is gone.
"""
import pytest

from lapse_harness import RespError as E
from lapse_harness import server_ms


@pytest.fixture
def frozen(raw):
    assert raw.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
    yield
    assert raw.call("DEBUG", "FREEZE-CLOCK", 0) == "OK"


@pytest.fixture(params=[True, False], ids=["active-expire", "lazy-only"])
def active(request, raw):
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1 if request.param else 0) == "OK"
    yield request.param
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def advance_to(raw, t):
    raw.call("DEBUG", "ADVANCE", t - server_ms(raw))
    assert server_ms(raw) == t


# read: (command, reply while field `a` is visible, reply once it is gone)
SURFACES = {
    "HGET": (("HGET", "h", "a"), b"1", None),
    "HMGET": (("HMGET", "h", "a", "b"), [b"1", b"2"], [None, b"2"]),
    "HGETALL": (("HGETALL", "h"), [b"a", b"1", b"b", b"2"], [b"b", b"2"]),
    "HKEYS": (("HKEYS", "h"), [b"a", b"b"], [b"b"]),
    "HVALS": (("HVALS", "h"), [b"1", b"2"], [b"2"]),
    "HLEN": (("HLEN", "h"), 2, 1),
    "HEXISTS": (("HEXISTS", "h", "a"), 1, 0),
    "HSTRLEN": (("HSTRLEN", "h", "a"), 1, 0),
    "HSCAN": (("HSCAN", "h", "0"), [b"0", [b"a", b"1", b"b", b"2"]], [b"0", [b"b", b"2"]]),
    "HRANDFIELD": (("HRANDFIELD", "h", "10"), [b"a", b"b"], [b"b"]),
    "HTTL": (("HPTTL", "h", "FIELDS", "1", "a"), [1], [-2]),
    "HINCRBY": (("HINCRBY", "h", "a", "0"), 1, 0),
}


def sort_pairs(reply):
    if isinstance(reply, list) and len(reply) == 4 and all(isinstance(x, bytes) for x in reply):
        pairs = sorted(zip(reply[::2], reply[1::2]))
        return [x for p in pairs for x in p]
    return reply


@pytest.mark.parametrize("surface", list(SURFACES))
def test_each_surface_sees_a_field_until_its_deadline(raw, frozen, active, surface):
    cmd, visible, gone = SURFACES[surface]
    raw.call("FLUSHALL")
    assert raw.call("HSET", "h", "a", "1", "b", "2") == 2
    now = server_ms(raw)
    assert raw.call("HPEXPIRE", "h", 1500, "FIELDS", 1, "a") == [1]
    deadline = now + 1500
    assert raw.call("HPEXPIRETIME", "h", "FIELDS", 1, "a") == [deadline]
    advance_to(raw, deadline - 1)
    got = raw.call(*cmd)
    if surface in ("HKEYS", "HVALS", "HRANDFIELD"):
        got = sorted(got)
    elif surface == "HSCAN":
        got = [got[0], sort_pairs(got[1])]
    assert sort_pairs(got) == visible
    advance_to(raw, deadline)
    got = raw.call(*cmd)
    if surface in ("HKEYS", "HVALS", "HRANDFIELD"):
        got = sorted(got)
    assert got == gone


KEY_SURFACES = {
    "EXISTS": (("EXISTS", "h"), 1, 0),
    "TYPE": (("TYPE", "h"), "hash", "none"),
    "DBSIZE": (("DBSIZE",), 1, 0),
    "KEYS": (("KEYS", "*"), [b"h"], []),
    "SCAN": (("SCAN", "0"), [b"0", [b"h"]], [b"0", []]),
    "HLEN": (("HLEN", "h"), 2, 0),
    "HGETALL": (("HGETALL", "h"), [b"a", b"1", b"b", b"2"], []),
    "RANDOMKEY": (("RANDOMKEY",), b"h", None),
}


@pytest.mark.parametrize("surface", list(KEY_SURFACES))
def test_a_hash_whose_last_field_expires_is_gone(raw, frozen, active, surface):
    cmd, visible, gone = KEY_SURFACES[surface]
    raw.call("FLUSHALL")
    raw.call("HSET", "h", "a", "1", "b", "2")
    now = server_ms(raw)
    assert raw.call("HPEXPIRE", "h", 1000, "FIELDS", 1, "a") == [1]
    assert raw.call("HPEXPIRE", "h", 2000, "FIELDS", 1, "b") == [1]
    advance_to(raw, now + 1999)
    got = raw.call(*cmd)
    assert (sort_pairs(got) if surface == "HGETALL" else got) == (visible if surface != "HLEN" and surface != "HGETALL"
                                                                  else {"HLEN": 1, "HGETALL": [b"b", b"2"]}[surface])
    advance_to(raw, now + 2000)
    assert raw.call(*cmd) == gone


def test_background_reclaim_deletes_due_fields_and_empty_hashes(raw, frozen):
    raw.call("FLUSHALL")
    raw.call("CONFIG", "RESETSTAT")
    for n in range(50):
        raw.call("HSET", f"h{n}", "keep", "1", "gone", "2")
        raw.call("HPEXPIRE", f"h{n}", 100, "FIELDS", 1, "gone")
        raw.call("HSET", f"all{n}", "x", "1")
        raw.call("HPEXPIRE", f"all{n}", 100, "FIELDS", 1, "x")
    raw.call("DEBUG", "ADVANCE", 100)
    # DBSIZE is exact: it runs the background reclaim to the end first.
    assert raw.call("DBSIZE") == 50
    assert raw.call("HGETALL", "h7") == [b"keep", b"1"]
    info = raw.call("INFO", "stats").decode()
    assert "expired_keys:50" in info


def test_hexpire_conditions_and_replies(raw):
    raw.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert raw.call("HEXPIRE", "h", 100, "FIELDS", 2, "a", "zz") == [1, -2]
    assert raw.call("HEXPIRE", "h", 200, "NX", "FIELDS", 2, "a", "b") == [0, 1]
    assert raw.call("HEXPIRE", "h", 300, "XX", "FIELDS", 2, "a", "c") == [1, 0]
    assert raw.call("HEXPIRE", "h", 50, "GT", "FIELDS", 2, "a", "c") == [0, 0]
    assert raw.call("HEXPIRE", "h", 50, "LT", "FIELDS", 2, "a", "c") == [1, 1]
    assert raw.call("HTTL", "h", "FIELDS", 3, "a", "b", "c") == [50, 200, 50]
    assert raw.call("HPERSIST", "h", "FIELDS", 3, "a", "b", "zz") == [1, 1, -2]
    assert raw.call("HPERSIST", "h", "FIELDS", 1, "a") == [-1]
    assert raw.call("HTTL", "h", "FIELDS", 2, "a", "c") == [-1, 50]
    # a time in the past deletes the field (2); the last one deletes the hash
    assert raw.call("HEXPIRE", "h", 0, "FIELDS", 2, "a", "b") == [2, 2]
    assert raw.call("HPEXPIREAT", "h", 1, "FIELDS", 1, "c") == [2]
    assert raw.call("EXISTS", "h") == 0
    assert raw.call("HEXPIRE", "nokey", 10, "FIELDS", 2, "a", "b") == [-2, -2]
    assert raw.call("HTTL", "nokey", "FIELDS", 1, "a") == [-2]


def test_hexpiretime_rounds_up(raw):
    raw.call("HSET", "h", "f", "v")
    assert raw.call("HPEXPIREAT", "h", 4102444800500, "FIELDS", 1, "f") == [1]
    assert raw.call("HEXPIRETIME", "h", "FIELDS", 1, "f") == [4102444801]
    assert raw.call("HPEXPIRETIME", "h", "FIELDS", 1, "f") == [4102444800500]


def test_a_field_ttl_set_again_after_persist_is_reclaimed_in_the_background(raw, frozen):
    raw.call("FLUSHALL")
    raw.call("HSET", "h", "f", "v")
    raw.call("HPEXPIRE", "h", 100, "FIELDS", 1, "f")
    raw.call("HPERSIST", "h", "FIELDS", 1, "f")
    raw.call("DEBUG", "ADVANCE", 300)
    assert raw.call("DBSIZE") == 1
    raw.call("HPEXPIRE", "h", 100, "FIELDS", 1, "f")
    raw.call("DEBUG", "ADVANCE", 500)
    assert raw.call("DBSIZE") == 0


def test_hset_clears_a_field_ttl_and_hincrby_keeps_it(raw):
    raw.call("HSET", "h", "n", "1", "s", "x")
    raw.call("HEXPIRE", "h", 100, "FIELDS", 2, "n", "s")
    assert raw.call("HINCRBY", "h", "n", 5) == 6
    assert raw.call("HTTL", "h", "FIELDS", 1, "n") == [100]
    assert raw.call("HSET", "h", "s", "y") == 0
    assert raw.call("HTTL", "h", "FIELDS", 1, "s") == [-1]


def test_field_ttls_travel_with_copy_rename_and_move(raw, frozen):
    raw.call("HSET", "h", "a", "1", "b", "2")
    now = server_ms(raw)
    raw.call("HPEXPIRE", "h", 500, "FIELDS", 1, "a")
    assert raw.call("COPY", "h", "c") == 1
    assert raw.call("RENAME", "h", "r") == "OK"
    assert raw.call("MOVE", "c", 1) == 1
    assert raw.call("HPEXPIRETIME", "r", "FIELDS", 1, "a") == [now + 500]
    raw.call("DEBUG", "ADVANCE", 500)
    assert raw.call("HGETALL", "r") == [b"b", b"2"]
    raw.call("SELECT", 1)
    assert raw.call("HGETALL", "c") == [b"b", b"2"]
    raw.call("SELECT", 0)


def test_bad_input_gets_the_error_and_changes_nothing(raw):
    raw.call("HSET", "h", "a", "1")
    raw.call("SET", "s", "x")
    bad = {
        ("HEXPIRE", "h", "x", "FIELDS", 1, "a"): "ERR value is not an integer or out of range",
        ("HEXPIRE", "h", -1, "FIELDS", 1, "a"): "ERR invalid expire time, must be >= 0",
        ("HEXPIRE", "h", 281474976710656, "FIELDS", 1, "a"): "ERR invalid expire time in 'hexpire' command",
        ("HPEXPIREAT", "h", 281474976710656, "FIELDS", 1, "a"): "ERR invalid expire time in 'hpexpireat' command",
        ("HEXPIRE", "h", 10, "FIELDS", 0, "a"): "ERR Parameter `numFields` should be greater than 0",
        ("HEXPIRE", "h", 10, "FIELDS", "x", "a"): "ERR Parameter `numFields` should be greater than 0",
        ("HEXPIRE", "h", 10, "FIELDS", 2, "a"): "ERR The `numfields` parameter must match the number of arguments",
        ("HEXPIRE", "h", 10, "FIELDS", 1, "a", "b"): "ERR The `numfields` parameter must match the number of arguments",
        ("HEXPIRE", "h", 10, "XY", 1, "a"): "ERR Mandatory argument FIELDS is missing or not at the right position",
        ("HEXPIRE", "h", 10, "NX", "XX", "FIELDS"): "ERR Mandatory argument FIELDS is missing or not at the right position",
        ("HTTL", "h", "FIELD", 1, "a"): "ERR Mandatory argument FIELDS is missing or not at the right position",
        ("HPERSIST", "h", "FIELDS", 2, "a"): "ERR The `numfields` parameter must match the number of arguments",
        ("HEXPIRE", "s", 10, "FIELDS", 1, "a"): "WRONGTYPE Operation against a key holding the wrong kind of value",
        ("HTTL", "s", "FIELDS", 1, "a"): "WRONGTYPE Operation against a key holding the wrong kind of value",
        ("HEXPIRE", "h", 10, "FIELDS", 1): "ERR wrong number of arguments for 'hexpire' command",
        ("HTTL", "h", "FIELDS", 1): "ERR wrong number of arguments for 'httl' command",
    }
    for cmd, error in bad.items():
        reply = raw.call(*cmd)
        assert reply == E(error), (cmd, reply)
    assert raw.call("HTTL", "h", "FIELDS", 1, "a") == [-1]
    assert raw.call("HGETALL", "h") == [b"a", b"1"]
    assert raw.call("GET", "s") == b"x"
