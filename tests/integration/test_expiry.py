"""Millisecond expiry on the real server, driven by DEBUG ADVANCE instead of sleeping.

The rule under test (issue 3, DESIGN §1): a key whose deadline (PEXPIRETIME) is d is expired
from server time d on, so SET k v PX 1500 at time t is visible at t + 1499 and gone at
t + 1500, for every read surface. NOTE: Redis 7.0.15 itself is one millisecond later: its
reads treat a key as expired when now > d (keyIsExpired), so at t + 1500 it still answers
GET with the value and PTTL with 0. LAST_VISIBLE below holds that one choice; set it to 0 to
test Redis's read rule instead. (Both agree that setting a deadline <= now deletes at once:
`EXPIRE k 0`, `PEXPIREAT k <now>`.)

The server clock is the system clock plus the DEBUG ADVANCE offset. The boundary tests
stop it (DEBUG FREEZE-CLOCK 1) so that each read runs at the millisecond the test chose; one
test lets it run and brackets each pipeline of reads by two TIMEs (which include the offset):
a read at t must see a key whose deadline is d iff t <= d + LAST_VISIBLE, for every t the
bracket allows.

Runs with 1, 2 and 4 threads, with background expiry on and paused
(DEBUG SET-ACTIVE-EXPIRE 0).
"""
import time

import pytest

from lapse_harness import RespError as E
from lapse_harness import server_ms

pytestmark = pytest.mark.lapse_only

# The last millisecond, relative to the deadline, at which a key is still visible.
LAST_VISIBLE = -1


def ms_of(time_reply):
    sec, usec = time_reply
    return int(sec) * 1000 + int(usec) // 1000


def full_scan(raw, first_reply):
    cursor, keys = first_reply
    keys = list(keys)
    while cursor != b"0":
        cursor, page = raw.call("SCAN", cursor, "COUNT", 1000)
        keys += page
    return keys


def bracketed_reads(raw, key):
    """Every read surface for `key` in one pipeline between two TIMEs.
    Returns (t_before, t_after, reads)."""
    names = ["GET", "EXISTS", "TTL", "PTTL", "TYPE", "KEYS", "DBSIZE", "MGET", "RANDOMKEY", "STRLEN"]
    replies = raw.pipeline([
        ("TIME",),
        ("GET", key), ("EXISTS", key), ("TTL", key), ("PTTL", key), ("TYPE", key),
        ("KEYS", "*"), ("DBSIZE",), ("MGET", key, key), ("RANDOMKEY",), ("STRLEN", key),
        ("TIME",),
    ])
    return ms_of(replies[0]), ms_of(replies[-1]), dict(zip(names, replies[1:-1]))


def bracketed_scan(raw):
    """A full SCAN iteration between two TIMEs (several round trips when there are shards)."""
    replies = raw.pipeline([("TIME",), ("SCAN", 0, "COUNT", 1000)])
    keys = full_scan(raw, replies[1])
    return ms_of(replies[0]), server_ms(raw), keys


def expect_visible(key, value, deadline, t):
    k = key.encode()
    return {"GET": value, "EXISTS": 1, "TTL": (deadline - t + 500) // 1000, "PTTL": deadline - t,
            "TYPE": "string", "KEYS": [k], "DBSIZE": 1, "MGET": [value, value], "RANDOMKEY": k,
            "STRLEN": len(value)}


GONE = {"GET": None, "EXISTS": 0, "TTL": -2, "PTTL": -2, "TYPE": "none", "KEYS": [], "DBSIZE": 0,
        "MGET": [None, None], "RANDOMKEY": None, "STRLEN": 0}


def without_ttls(reads):
    return {k: v for k, v in reads.items() if k not in ("TTL", "PTTL")}


def at(t, deadline):
    return f"deadline{t - deadline:+d} ms"


def check_reads(key, value, deadline, t0, t1, reads):
    """Asserts what the bracket [t0, t1] allows; returns the exact ms when t0 == t1."""
    last = deadline + LAST_VISIBLE
    if t1 <= last:  # every read ran while the key was live
        if t0 == t1:
            assert reads == expect_visible(key, value, deadline, t0), f"at {at(t0, deadline)}"
        else:
            assert without_ttls(reads) == without_ttls(expect_visible(key, value, deadline, t0)), \
                f"between {at(t0, deadline)} and {at(t1, deadline)}"
            assert deadline - t1 <= reads["PTTL"] <= deadline - t0
    elif t0 > last:  # every read ran after the key expired
        assert reads == GONE, f"at {at(t0, deadline)}"
    return t0 if t0 == t1 else None


def check_scan(key, deadline, t0, t1, keys):
    last = deadline + LAST_VISIBLE
    if t1 <= last:
        assert keys == [key.encode()], f"SCAN at {at(t1, deadline)}"
    elif t0 > last:
        assert keys == [], f"SCAN at {at(t0, deadline)}"


def set_active_expire(raw, on):
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1 if on else 0) == "OK"


@pytest.fixture(params=[True, False], ids=["active-expire", "lazy-only"])
def active(request, raw):
    set_active_expire(raw, request.param)
    return request.param


@pytest.fixture
def frozen(raw):
    """The server clock stands still for the test (DEBUG ADVANCE still moves it), so a read
    runs at exactly the millisecond the test chose."""
    assert raw.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
    yield
    assert raw.call("DEBUG", "FREEZE-CLOCK", 0) == "OK"


def set_with_px_1500(raw, value):
    """SET k value PX 1500 on a frozen clock; returns the deadline, which is exactly now + 1500."""
    raw.call("FLUSHALL")
    now = server_ms(raw)
    assert raw.call("SET", "k", value, "PX", 1500) == "OK"
    deadline = raw.call("PEXPIRETIME", "k")
    assert deadline == now + 1500
    return deadline


def test_px_1500_visible_at_1499_and_gone_at_1500(raw, active, frozen):
    """Every read surface at the last visible millisecond, then one millisecond later."""
    value = b"v" * 7
    deadline = set_with_px_1500(raw, value)
    last = deadline + LAST_VISIBLE
    raw.call("DEBUG", "ADVANCE", last - server_ms(raw))
    t0, t1, reads = bracketed_reads(raw, "k")
    assert t0 == t1 == last
    assert reads == expect_visible("k", value, deadline, last)
    assert bracketed_scan(raw)[2] == [b"k"]
    raw.call("DEBUG", "ADVANCE", 1)
    t0, t1, reads = bracketed_reads(raw, "k")
    assert t0 == t1 == last + 1
    assert reads == GONE
    assert bracketed_scan(raw)[2] == []


SURFACES = {
    # read: (command, reply while visible (None: depends on t), reply once gone)
    "GET": (("GET", "k"), b"v", None),
    "EXISTS": (("EXISTS", "k"), 1, 0),
    "TTL": (("TTL", "k"), None, -2),
    "PTTL": (("PTTL", "k"), None, -2),
    "TYPE": (("TYPE", "k"), "string", "none"),
    "KEYS": (("KEYS", "*"), [b"k"], []),
    "DBSIZE": (("DBSIZE",), 1, 0),
    "MGET": (("MGET", "k"), [b"v"], [None]),
    "RANDOMKEY": (("RANDOMKEY",), b"k", None),
    "STRLEN": (("STRLEN", "k"), 1, 0),
    "SCAN": (None, [b"k"], []),
}



@pytest.mark.parametrize("surface", list(SURFACES))
def test_each_read_surface_alone_at_the_deadline(raw, active, frozen, surface):
    """Each read surface on its own (no other read deletes the key lazily first): the key is
    seen at its last visible millisecond and not one millisecond later."""
    cmd, visible, gone = SURFACES[surface]

    def read():
        return full_scan(raw, raw.call("SCAN", 0, "COUNT", 1000)) if cmd is None else raw.call(*cmd)

    deadline = set_with_px_1500(raw, "v")
    raw.call("DEBUG", "ADVANCE", deadline + LAST_VISIBLE - server_ms(raw))
    expected = {"TTL": 0, "PTTL": -LAST_VISIBLE}.get(surface, visible)
    assert read() == expected, f"{surface} at the last visible millisecond"
    raw.call("DEBUG", "ADVANCE", 1)
    assert read() == gone, f"{surface} one millisecond later"


def test_reads_agree_with_a_running_clock(raw, active):
    """With the clock running, reads are polled while real time crosses the deadline. Each
    pipeline is bracketed by two TIMEs and must agree with every millisecond it may have run
    at; the test goes on until it has seen brackets wholly before and wholly after the deadline."""
    value = b"v" * 7
    raw.call("FLUSHALL")
    t_before = server_ms(raw)
    assert raw.call("SET", "k", value, "PX", 1500) == "OK"
    t_after = server_ms(raw)
    deadline = raw.call("PEXPIRETIME", "k")
    assert t_before + 1500 <= deadline <= t_after + 1500
    last = deadline + LAST_VISIBLE
    now = server_ms(raw)
    if last - 200 > now:
        raw.call("DEBUG", "ADVANCE", last - 200 - now)
    before = after = 0
    # Bounded by time, not by a count of rounds: on a fast machine 2,000 rounds can all fit in
    # the 200 ms before the deadline.
    give_up = time.monotonic() + 10
    while time.monotonic() < give_up:
        t0, t1, reads = bracketed_reads(raw, "k")
        check_reads("k", value, deadline, t0, t1, reads)
        check_scan("k", deadline, *bracketed_scan(raw))
        before += t1 <= last
        after += t0 > last
        if after >= 3:
            break
    assert before > 0 and after >= 3, f"brackets before the deadline: {before}, after: {after}"


def test_px_1500_with_advance_steps(raw, active):
    """The plain version: visible after +1000 ms, gone after +1501 ms, whichever rule of the
    module docstring holds (the deadline is fixed at SET time, so the real time that passes in
    between can only make the key older)."""
    raw.call("SET", "k", "v", "PX", 1500)
    raw.call("DEBUG", "ADVANCE", 1000)
    assert raw.call("GET", "k") == b"v"
    assert 0 < raw.call("PTTL", "k") <= 500
    assert raw.call("DEBUG", "ADVANCE", 501) == "OK"
    assert raw.call("GET", "k") is None
    assert raw.pipeline([("EXISTS", "k"), ("TTL", "k"), ("PTTL", "k"), ("TYPE", "k"), ("KEYS", "*"),
                         ("DBSIZE",), ("MGET", "k"), ("RANDOMKEY",)]) == \
        [0, -2, -2, "none", [], 0, [None], None]


def test_redis_py_expiry(r, active):
    r.set("a", "1", px=1500)
    r.set("b", "2", ex=10)
    r.set("c", "3")
    r.execute_command("DEBUG", "ADVANCE", 1000)
    assert r.mget("a", "b", "c") == ["1", "2", "3"]
    r.execute_command("DEBUG", "ADVANCE", 501)
    assert r.mget("a", "b", "c") == [None, "2", "3"]
    assert r.exists("a", "b", "c") == 2
    assert sorted(r.keys()) == ["b", "c"]
    assert sorted(r.scan_iter()) == ["b", "c"]
    assert r.dbsize() == 2
    assert r.ttl("a") == -2
    assert 0 < r.ttl("b") <= 9
    r.execute_command("DEBUG", "ADVANCE", 8600)
    assert r.mget("a", "b", "c") == [None, None, "3"]
    assert r.randomkey() == "c"


def test_many_keys_each_expire_at_their_millisecond(raw, active, frozen):
    """400 keys spread over every shard with deadlines 1 ms apart; the frozen clock is stepped
    one millisecond at a time across them and after every step each key's visibility must
    match its deadline exactly."""
    n = 400
    cmds = [("SET", f"key:{i}", f"v{i}", "PX", 1000 + i) for i in range(n)]
    assert raw.pipeline(cmds) == ["OK"] * n
    deadlines = raw.pipeline([("PEXPIRETIME", f"key:{i}") for i in range(n)])
    assert all(isinstance(d, int) and d > 0 for d in deadlines)
    keys = [f"key:{i}" for i in range(n)]
    now = server_ms(raw)
    raw.call("DEBUG", "ADVANCE", min(deadlines) - 5 - now)
    while True:
        # DBSIZE and KEYS first: MGET deletes expired keys lazily, they must not need it
        replies = raw.pipeline([("TIME",), ("DBSIZE",), ("KEYS", "*"), ("MGET", *keys), ("TIME",)])
        t0, dbsize, live_keys, values, t1 = ms_of(replies[0]), replies[1], replies[2], replies[3], ms_of(replies[4])
        assert t0 == t1
        for i, (v, d) in enumerate(zip(values, deadlines)):
            if t1 <= d + LAST_VISIBLE:
                assert v == f"v{i}".encode(), f"key:{i} missing at {at(t1, d)}"
            elif t0 > d + LAST_VISIBLE:
                assert v is None, f"key:{i} still visible at {at(t0, d)}"
        surely_alive = {f"key:{i}" for i, d in enumerate(deadlines) if t1 <= d + LAST_VISIBLE}
        maybe_alive = {f"key:{i}" for i, d in enumerate(deadlines) if t0 <= d + LAST_VISIBLE}
        assert len(surely_alive) <= dbsize <= len(maybe_alive)
        live = {k.decode() for k in live_keys}
        assert surely_alive <= live <= maybe_alive
        if t0 > max(deadlines):
            break
        raw.call("DEBUG", "ADVANCE", 1)
    assert raw.call("DBSIZE") == 0
    assert full_scan(raw, raw.call("SCAN", 0)) == []


def test_expired_keys_stat_grows_lazy_and_active(r):
    def expired():
        return r.info("stats")["expired_keys"]

    start = expired()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.set("lazy", "v", px=100)
    r.execute_command("DEBUG", "ADVANCE", 101)
    assert r.get("lazy") is None  # a lazy deletion counts
    assert expired() == start + 1
    with r.pipeline(transaction=False) as p:
        for i in range(1000):
            p.set(f"bg:{i}", "v", px=50 + i % 100)
        p.execute()
    r.execute_command("DEBUG", "ADVANCE", 200)
    assert r.dbsize() == 0  # hidden at once although nothing was reclaimed yet
    assert r.keys() == []
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    deadline = time.monotonic() + 20
    while expired() < start + 1001:  # reclaimed in the background
        assert time.monotonic() < deadline, f"background expiry stalled at {expired() - start}"
        time.sleep(0.01)
    assert expired() == start + 1001
    info = r.info("keyspace")
    assert "db0" not in info or info["db0"]["keys"] == 0


def test_keyspace_info_counts_expires(r):
    r.set("a", "1")
    r.set("b", "2", ex=100)
    r.set("c", "3", px=100000)
    info = r.info("keyspace")
    assert info["db0"]["keys"] == 3
    assert info["db0"]["expires"] == 2
    assert 0 < info["db0"]["avg_ttl"] <= 100000
    r.execute_command("DEBUG", "ADVANCE", 100001)
    r.get("b"), r.get("c")
    info = r.info("keyspace")
    assert info["db0"] == {"keys": 1, "expires": 0, "avg_ttl": 0}


def test_expire_zero_and_past_expireat_delete_without_advance(raw):
    raw.call("SET", "a", "1")
    assert raw.call("EXPIRE", "a", 0) == 1
    assert raw.call("EXISTS", "a") == 0
    raw.call("SET", "b", "1")
    now = server_ms(raw)
    assert raw.call("EXPIREAT", "b", now // 1000 - 1) == 1
    assert raw.call("GET", "b") is None
    raw.call("SET", "c", "1")
    assert raw.call("PEXPIREAT", "c", now) == 1  # a deadline equal to now is already past
    assert raw.call("EXISTS", "c") == 0


def test_advance_moves_time_and_relative_expiry(raw):
    t = server_ms(raw)
    assert raw.call("DEBUG", "ADVANCE", 3_600_000) == "OK"
    assert server_ms(raw) - t >= 3_600_000
    before = server_ms(raw)
    raw.call("SET", "k", "v", "EX", 10)
    after = server_ms(raw)
    assert raw.call("TTL", "k") == 10  # deadlines are relative to the advanced clock
    assert before + 10_000 <= raw.call("PEXPIRETIME", "k") <= after + 10_000
    raw.call("DEBUG", "ADVANCE", 9_000)
    assert raw.call("EXISTS", "k") == 1
    raw.call("DEBUG", "ADVANCE", 1_001)
    assert raw.call("EXISTS", "k") == 0


def test_set_keepttl_getex_persist_and_rename_around_deadline(raw, active):
    raw.call("SET", "a", "1", "PX", 1000)
    raw.call("SET", "a", "2", "KEEPTTL")
    raw.call("SET", "b", "1", "PX", 1000)
    raw.call("GETEX", "b", "PERSIST")
    raw.call("SET", "c", "1", "PX", 1000)
    raw.call("RENAME", "c", "d")
    raw.call("SET", "e", "1", "PX", 1000)
    raw.call("COPY", "e", "f")
    raw.call("SET", "g", "1", "PX", 1000)
    raw.call("MOVE", "g", 1)
    raw.call("DEBUG", "ADVANCE", 1001)
    assert raw.call("MGET", "a", "b", "c", "d", "e", "f") == [None, b"1", None, None, None, None]
    raw.call("SELECT", 1)
    assert raw.call("GET", "g") is None
    assert raw.call("DBSIZE") == 0


def test_expired_key_is_absent_for_writes(raw, active):
    raw.call("SET", "k", "old", "PX", 100)
    raw.call("DEBUG", "ADVANCE", 101)
    assert raw.call("SET", "k", "new", "NX") == "OK"
    assert raw.call("TTL", "k") == -1
    raw.call("SET", "x", "old", "PX", 100)
    raw.call("DEBUG", "ADVANCE", 101)
    assert raw.call("SET", "x", "new", "XX") is None
    raw.call("SET", "c", "41", "PX", 100)
    raw.call("DEBUG", "ADVANCE", 101)
    assert raw.call("INCR", "c") == 1
    raw.call("SET", "r", "v", "PX", 100)
    raw.call("DEBUG", "ADVANCE", 101)
    assert raw.call("RENAME", "r", "r2") == E("ERR no such key")
    assert raw.call("SETNX", "r", "fresh") == 1
    raw.call("SET", "m", "v", "PX", 100)
    raw.call("DEBUG", "ADVANCE", 101)
    assert raw.call("MSETNX", "m", "1", "m2", "2") == 1
    assert raw.call("GETSET", "gone", "x") is None
