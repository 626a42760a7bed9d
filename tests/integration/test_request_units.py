"""Request units (issue 5) on the real binary: what each command costs, budgets, throttling,
and reclamation of expired items paced by the budget.

Why these tests exist: the in-process tests (tests/server/request_units_commands_test.cc,
tests/engine/request_units_test.cc) drive a ManualClock and a reclaimer called by hand. Here
the reclaimer runs on the server's own threads and time comes from the server clock, which
the tests stop (DEBUG FREEZE-CLOCK 1) and move exactly (DEBUG ADVANCE ms). With the clock
stopped, the per-second budget is a fixed amount per simulated second, so the number of items
the reclaimer may delete is exact: 400 RU/s buys exactly 80 deletions of a 1 KiB item (5 RU
each) per simulated second, however fast or slow the real threads are. The tests wait for the
threads by polling INFO with a generous real-time deadline and never assert on real time.

Charges (README "Request units"): point read 1 RU per started KiB (at least 1); insert 5 and
replace 10 per started KiB; delete 5 per started KiB; KEYS/SCAN/ISCAN/ICOUNT/DBSIZE
max(1 RU per started KiB returned, 1 RU per started 100 entries visited); rejected request 1;
admin and connection commands 0. LASTCHARGE answers the previous command's charge: a bulk
string in RESP2, a double in RESP3.
"""
from __future__ import annotations

import contextlib
import math
import subprocess
import time

import pytest
import redis

from conftest import single_server
from lapse_harness import RespError as E
from lapse_harness import lapse_binary, server_ms

pytestmark = pytest.mark.lapse_only

server = single_server(threads=2)

# Polling bound for work done by the server's background threads (real seconds).
DEADLINE_S = 10.0

# 1,000 items of about 1 KiB: id "i0000" and members '"v":"x…x"' (905 bytes) make a
# 964-byte document as IGET returns it, the size every item operation charges for, so every
# insert and every reclamation costs 5.
N_ITEMS = 1000
ITEM_BODY = '{"v":"' + "x" * 900 + '"}'


def throttled(retry_ms):
    return E(f"THROTTLED Request rate is large. Retry after {retry_ms} ms")


def bad_ru(value):
    return E(f"ERR invalid request units per second '{value}': give a positive integer, or OFF to use "
             "the server-wide budget")


SERVERLESS_CSETRU = E("ERR setting a container's request units per second is not supported with serverless "
                      "billing, which has no provisioned throughput: use CONFIG SET billing provisioned first")


def config_error(name, reason):
    return E(f"ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")


# ---- helpers ---------------------------------------------------------------------------


def charge_of(c, *cmd):
    """Runs cmd and returns (reply, LASTCHARGE as RESP2 bytes)."""
    reply = c.call(*cmd)
    return reply, c.call("LASTCHARGE")


def cost(c, *cmd):
    return charge_of(c, *cmd)[1]


def info(c, section):
    """INFO <section> as a dict of str -> str (raw client; INFO is free of charge)."""
    text = c.call("INFO", section)
    text = bytes(text).decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def cinfo(c, container):
    reply = c.call("CINFO", container)
    if isinstance(reply, list):  # RESP2: flat key/value list
        reply = dict(zip(reply[::2], reply[1::2]))
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}


def as_float(v):
    return float(v.decode() if isinstance(v, bytes) else v)


def wait_until(read, done, what, timeout=DEADLINE_S):
    """Polls read() until done(value); fails with the last value after `timeout` real seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"{what}: still {value!r} after {timeout} s"
        time.sleep(0.005)


def reclaimed(c):
    return int(info(c, "reclaim")["reclaimed_background_total"])


def barrier(c):
    """INFO runs on every shard thread, so once it answers every reclaim slice that started
    before it has finished (slices run on the shard threads, between client work)."""
    info(c, "reclaim")


@contextlib.contextmanager
def frozen_clock(c):
    """The server clock stands still (DEBUG ADVANCE still moves it); always thawed after."""
    assert c.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
    try:
        yield
    finally:
        c.call("DEBUG", "FREEZE-CLOCK", 0)


@pytest.fixture
def frozen(raw):
    with frozen_clock(raw):
        yield


def advance_to_next_second(c):
    """Moves a frozen clock to the first millisecond of the next second; returns that time."""
    now = server_ms(c)
    assert c.call("DEBUG", "ADVANCE", 1000 - now % 1000) == "OK"
    now = server_ms(c)
    assert now % 1000 == 0
    return now


def put_items(c, container, n=N_ITEMS, body=ITEM_BODY):
    ids = [f"i{i:04d}" for i in range(n)]
    replies = c.pipeline([("IPUT", container, i, body) for i in ids])
    assert all(isinstance(r, bytes) and len(r) == 16 for r in replies), replies[:3]
    return ids


def expired_backlog(c, container, n=N_ITEMS):
    """Stores n 1 KiB items that never expire, then makes them all expired at once
    (CSETTTL 1, retroactive, then two simulated seconds). Needs a frozen clock. Returns the
    deadline shared by every item."""
    assert c.call("CSETTTL", container, "OFF") == "OK"
    written_at = server_ms(c)
    put_items(c, container, n)
    assert c.call("CSETTTL", container, 1) == "OK"
    assert c.call("DEBUG", "ADVANCE", 2000) == "OK"
    return written_at + 1000


def start(start_server, **options):
    srv = start_server(options={"threads": 2, **options})
    c = srv.client()
    return srv, c


# ---- LASTCHARGE per command class (server-wide budget, unlimited) -----------------------


def test_lastcharge_starts_at_zero_and_is_not_itself_a_command(raw):
    assert raw.call("LASTCHARGE") == b"0"
    raw.call("SET", "k", "v")
    assert raw.call("LASTCHARGE") == b"5"
    assert raw.call("LASTCHARGE") == b"5"  # LASTCHARGE leaves the last charge alone
    assert raw.call_raw("LASTCHARGE") == b"$1\r\n5\r\n"  # a bulk string in RESP2


def test_lastcharge_is_per_connection(server, raw, raw2):
    raw.call("SET", "k", "x" * 3000)
    raw2.call("GET", "k")
    assert raw.call("LASTCHARGE") == b"15"
    assert raw2.call("LASTCHARGE") == b"3"


def test_key_point_reads_cost_1_per_started_kib(raw):
    raw.call("SET", "k", "v")
    assert cost(raw, "GET", "k") == b"1"
    assert cost(raw, "GET", "missing") == b"1"  # at least 1
    assert cost(raw, "EXISTS", "k") == b"1"
    assert cost(raw, "TTL", "k") == b"1"
    assert cost(raw, "STRLEN", "k") == b"1"
    assert cost(raw, "TYPE", "k") == b"1"
    raw.call("SET", "b", "x" * 1023)  # key + value = 1024 bytes: one KiB
    assert cost(raw, "GET", "b") == b"1"
    raw.call("SET", "c", "x" * 1024)  # 1025 bytes: two started KiB
    assert cost(raw, "GET", "c") == b"2"
    raw.call("SET", "big", "x" * 3000)
    assert cost(raw, "GET", "big") == b"3"
    assert cost(raw, "MGET", "k", "big", "missing") == b"5"  # 1 + 3 + 1


def test_key_insert_replace_and_delete(raw):
    assert charge_of(raw, "SET", "k", "v") == ("OK", b"5")  # insert
    assert charge_of(raw, "SET", "k", "w") == ("OK", b"10")  # replace of a live key
    assert charge_of(raw, "SET", "b", "x" * 1023) == ("OK", b"5")  # exactly 1 KiB
    assert charge_of(raw, "SET", "c", "x" * 1024) == ("OK", b"10")  # 2 started KiB
    assert charge_of(raw, "SET", "big", "x" * 3000) == ("OK", b"15")
    assert charge_of(raw, "SET", "big", "y" * 3000) == ("OK", b"30")
    assert charge_of(raw, "EXPIRE", "k", 100) == (1, b"10")  # EXPIRE is a replace
    assert charge_of(raw, "PERSIST", "k") == (1, b"10")
    assert charge_of(raw, "PERSIST", "k") == (0, b"1")  # nothing to change: a read
    assert charge_of(raw, "DEL", "big") == (1, b"15")  # 5 per started KiB
    assert charge_of(raw, "DEL", "missing") == (0, b"1")
    assert charge_of(raw, "GETDEL", "k") == (b"w", b"5")


def test_expired_key_is_written_as_an_insert(raw, frozen):
    raw.call("SET", "k", "v", "PX", 100)
    raw.call("DEBUG", "ADVANCE", 100)
    assert charge_of(raw, "SET", "k", "w") == ("OK", b"5")


def test_item_point_read_insert_replace_delete(raw):
    assert isinstance(raw.call("IPUT", "c", "a", '{"v":1}'), bytes)
    assert raw.call("LASTCHARGE") == b"5"  # insert (and the container is created)
    raw.call("IPUT", "c", "a", '{"v":2}')
    assert raw.call("LASTCHARGE") == b"10"  # replace
    assert charge_of(raw, "IPUT", "c", "a", '{"v":3}', "NX") == (None, b"1")  # condition failed: a read
    assert charge_of(raw, "IGET", "c", "a")[1] == b"1"
    assert charge_of(raw, "IGET", "c", "nope") == (None, b"1")
    assert charge_of(raw, "IGET", "nocontainer", "a") == (None, b"1")
    assert charge_of(raw, "ITTL", "c", "a") == (-1, b"1")
    assert charge_of(raw, "IPTTL", "c", "a") == (-1, b"1")
    raw.call("IPUT", "c", "b", '{"v":1}')
    assert charge_of(raw, "IDEL", "c", "a", "nope", "b") == (2, b"11")  # 5 + 1 + 5
    assert charge_of(raw, "IDEL", "c", "a") == (0, b"1")


def test_large_item_charges_per_started_kib(raw):
    body = '{"v":"' + "x" * 2500 + '"}'  # about 2.5 KiB however it is measured
    raw.call("IPUT", "c", "big", body)
    assert raw.call("LASTCHARGE") == b"15"
    doc, charge = charge_of(raw, "IGET", "c", "big")
    assert 2048 < len(doc) <= 3072 and charge == b"3"
    raw.call("IPUT", "c", "big", body)
    assert raw.call("LASTCHARGE") == b"30"
    assert charge_of(raw, "IDEL", "c", "big") == (1, b"15")


def test_expired_item_reads_as_absent_and_is_written_as_an_insert(raw, frozen):
    raw.call("CSETTTL", "c", 10)
    raw.call("IPUT", "c", "a", '{"v":1}')
    raw.call("IPUT", "c", "b", '{"v":1}')
    raw.call("DEBUG", "ADVANCE", 10_000)
    assert charge_of(raw, "IGET", "c", "a") == (None, b"1")
    raw.call("IPUT", "c", "b", '{"v":2}')
    assert raw.call("LASTCHARGE") == b"5"


def test_rejected_requests_cost_1(raw):
    raw.call("SET", "s", "text")
    for cmd in [("GET",), ("NOSUCHCOMMAND", "x"), ("INCR", "s"), ("SET", "k", "v", "EX", 0),
                ("IPUT", "c", "a", '{"ttl":0}'), ("IPUT", "c", "a", "{not json"),
                ("IPUT", "c", "a", '{"id":"b"}'), ("ISCAN", "c", "nope"), ("CSETTTL", "c", 0),
                ("CSETRU", "c", 0), ("CONFIG", "SET", "ru-per-second", "x")]:
        raw.call("SET", "big", "x" * 5000)  # something dear before each
        reply = raw.call(*cmd)
        assert isinstance(reply, E), (cmd, reply)
        assert raw.call("LASTCHARGE") == b"1", cmd
    assert raw.call("CLIST") == []  # and nothing was created


def test_connection_and_admin_commands_are_free(raw):
    for cmd in [("PING",), ("ECHO", "x"), ("INFO", "ru"), ("CONFIG", "GET", "ru-per-second"), ("TIME",),
                ("CLIST",), ("CGETTTL", "c"), ("CSETTTL", "c", 5), ("CGETRU", "c"), ("CINFO", "c"),
                ("CSETRU", "c", 1000), ("CSETRU", "c", "OFF"), ("CDROP", "c"), ("CLIENT", "ID"),
                ("SELECT", 0), ("DEBUG", "ADVANCE", 0)]:
        raw.call("SET", "big", "x" * 5000)
        assert not isinstance(raw.call(*cmd), E), cmd
        assert raw.call("LASTCHARGE") == b"0", cmd


# ---- queries: max(started KiB returned, started 100 entries visited) ---------------------


def fill_keys(raw, n, prefix="s:"):
    args = []
    for i in range(n):
        args += [f"{prefix}{i:03d}", "v"]
    assert raw.call("MSET", *args) == "OK"


def test_keys_and_dbsize_visited_against_returned(raw):
    fill_keys(raw, 250)  # 250 keys of 5 bytes: 1,250 bytes returned, 250 visited
    keys, charge = charge_of(raw, "KEYS", "*")
    assert len(keys) == 250 and charge == b"3"  # 250 visited: 3 beats 2 KiB
    assert charge_of(raw, "KEYS", "nomatch*") == ([], b"3")  # nothing returned, 250 visited
    assert charge_of(raw, "DBSIZE") == (250, b"3")
    raw.call("FLUSHALL")
    long_names = [f"L{i}" + "x" * 998 for i in range(5)]  # 5 x 1,000 bytes
    assert raw.call("MSET", *[a for k in long_names for a in (k, "v")]) == "OK"
    fill_keys(raw, 50)
    keys, charge = charge_of(raw, "KEYS", "L*")
    assert len(keys) == 5 and charge == b"5"  # 5 KiB returned beats 55 visited
    assert charge_of(raw, "KEYS", "s:000") == ([b"s:000"], b"1")
    raw.call("FLUSHALL")
    assert charge_of(raw, "KEYS", "*") == ([], b"1")  # at least 1
    assert charge_of(raw, "DBSIZE") == (0, b"1")


def test_scan_visited_against_returned(raw):
    fill_keys(raw, 250)
    (cursor, keys), charge = charge_of(raw, "SCAN", 0, "COUNT", 1000)
    assert cursor == b"0" and len(keys) == 250 and charge == b"3"
    (cursor, keys), charge = charge_of(raw, "SCAN", 0, "COUNT", 1000, "MATCH", "nomatch*")
    assert cursor == b"0" and keys == [] and charge == b"3"
    long_names = [f"L{i}" + "x" * 998 for i in range(5)]
    raw.call("MSET", *[a for k in long_names for a in (k, "v")])
    (cursor, keys), charge = charge_of(raw, "SCAN", 0, "COUNT", 1000, "MATCH", "L*")
    assert cursor == b"0" and len(keys) == 5 and charge == b"5"  # 255 visited: 3 < 5 KiB


def test_iscan_and_icount_visited_against_returned(raw):
    put_items(raw, "c", 250, '{"v":1}')
    assert charge_of(raw, "ICOUNT", "c") == (250, b"3")
    (cursor, docs), charge = charge_of(raw, "ISCAN", "c", 0, "COUNT", 1000)
    assert cursor == b"0" and len(docs) == 250
    returned_kib = math.ceil(sum(len(d) for d in docs) / 1024)
    assert returned_kib > 3
    assert charge == str(returned_kib).encode()  # returned bytes win
    (cursor, docs), charge = charge_of(raw, "ISCAN", "c", 0, "COUNT", 1000, "MATCH", "i0007")
    assert cursor == b"0" and len(docs) == 1 and charge == b"3"  # 250 visited win
    assert charge_of(raw, "ICOUNT", "nocontainer") == (0, b"1")
    assert charge_of(raw, "ISCAN", "nocontainer", 0) == ([b"0", []], b"1")


# ---- RESP3: LASTCHARGE is a double -------------------------------------------------------


def test_lastcharge_is_a_double_in_resp3(raw):
    assert isinstance(raw.call("HELLO", 3), dict)
    assert raw.call_raw("LASTCHARGE") == b",0\r\n"
    raw.call("SET", "k", "v")
    assert raw.call_raw("LASTCHARGE") == b",5\r\n"
    raw.call("SET", "k", "x" * 3000)
    assert raw.call_raw("LASTCHARGE") == b",30\r\n"
    raw.call("GET", "k")
    assert raw.call_raw("LASTCHARGE") == b",3\r\n"
    raw.call("IPUT", "c", "a", '{"v":1}')
    assert raw.call("LASTCHARGE") == 5.0
    raw.call("IGET", "c", "a")
    assert raw.call("LASTCHARGE") == 1.0
    raw.call("GET")
    assert raw.call_raw("LASTCHARGE") == b",1\r\n"
    raw.call("PING")
    assert raw.call_raw("LASTCHARGE") == b",0\r\n"
    assert isinstance(raw.call("HELLO", 2), list)
    assert raw.call_raw("LASTCHARGE") == b"$1\r\n0\r\n"


def test_lastcharge_with_redis_py(r):
    r.set("k", "v")
    assert r.execute_command("LASTCHARGE") == "5"
    r.execute_command("IPUT", "c", "a", '{"v":1}')
    r.execute_command("IPUT", "c", "a", '{"v":2}')
    assert r.execute_command("LASTCHARGE") == "10"
    with pytest.raises(redis.ResponseError):
        r.execute_command("IPUT", "c", "a", '{"ttl":-2}')
    assert r.execute_command("LASTCHARGE") == "1"


def test_lastcharge_in_a_pipeline(raw):
    """Each LASTCHARGE in a pipeline reports the command just before it, whichever shard that
    command ran on (keys spread over both shards)."""
    cmds = []
    for i in range(16):
        cmds += [("SET", f"p{i}", "v"), ("LASTCHARGE",), ("SET", f"p{i}", "x" * 2000), ("LASTCHARGE",),
                 ("GET", f"p{i}"), ("LASTCHARGE",)]
    replies = raw.pipeline(cmds)
    assert replies[1::2] == [b"5", b"20", b"2"] * 16


def test_lastcharge_of_a_refused_command_after_queued_ones_in_a_pipeline(raw):
    # 32 inserts: some surely go to the shard that is not this connection's own, and are queued.
    cmds = [("SET", f"q{i}", "v") for i in range(32)] + [("NOSUCHCOMMAND",), ("LASTCHARGE",)]
    replies = raw.pipeline(cmds)
    assert replies[-2] == E("ERR unknown command 'NOSUCHCOMMAND', with args beginning with: ")
    assert replies[-1] == b"1"


# ---- CSETRU / CGETRU ----------------------------------------------------------------------


def test_csetru_cgetru_replies(raw):
    assert raw.call("CGETRU", "c") is None  # no container
    assert raw.call("CSETRU", "c", 100) == "OK"
    assert raw.call("CLIST") == [b"c"]  # CSETRU creates the container
    assert raw.call("CGETRU", "c") == 100
    assert cinfo(raw, "c")["ru_per_second"] == 100
    assert raw.call("CSETRU", "c", 1) == "OK"
    assert raw.call("CGETRU", "c") == 1
    assert raw.call("CSETRU", "c", "off") == "OK"
    assert raw.call("CGETRU", "c") is None  # back on the server-wide budget
    assert cinfo(raw, "c")["ru_per_second"] is None
    assert raw.call("CSETRU", "d", "OFF") == "OK"
    assert raw.call("CGETRU", "d") is None
    assert raw.call("CSETTTL", "e", 10) == "OK"
    assert raw.call("CGETRU", "e") is None


def test_csetru_rejects_bad_values_and_changes_nothing(raw):
    for value in ["0", "-1", "-100", "abc", "1.5", "", " 10", "10 ", "1e3", "OFFF", "99999999999999999999"]:
        assert raw.call("CSETRU", "c", value) == bad_ru(value), value
    assert raw.call("CLIST") == []  # a rejected CSETRU does not create the container
    raw.call("CSETRU", "c", 50)
    assert raw.call("CSETRU", "c", 0) == bad_ru("0")
    assert raw.call("CGETRU", "c") == 50
    assert raw.call("CSETRU", "c") == E("ERR wrong number of arguments for 'csetru' command")
    assert raw.call("CGETRU") == E("ERR wrong number of arguments for 'cgetru' command")
    assert raw.call("CSETRU", "c", 1, 2) == E("ERR wrong number of arguments for 'csetru' command")


def test_csetru_large_values_round_trip(raw):
    for value in [2**53 + 1, 2**63 - 1]:
        assert raw.call("CSETRU", "c", value) == "OK"
        assert raw.call("CGETRU", "c") == value


# ---- THROTTLED: a container with its own budget -------------------------------------------


def test_over_budget_container_is_throttled_and_nothing_changes(raw, frozen):
    now = advance_to_next_second(raw) + 250
    raw.call("DEBUG", "ADVANCE", 250)
    assert raw.call("CSETRU", "c", 10) == "OK"
    etag1 = raw.call("IPUT", "c", "a", '{"v":1}')  # 5 RU
    etag2 = raw.call("IPUT", "c", "a", '{"v":2}')  # 10 RU: 15 of 10 spent
    assert isinstance(etag1, bytes) and isinstance(etag2, bytes)
    before = cinfo(raw, "c")
    server_throttled = int(info(raw, "ru")["ru_throttled_requests"])
    refused = [("IPUT", "c", "a", '{"v":3}'), ("IPUT", "c", "b", '{"v":3}'), ("IGET", "c", "a"),
               ("ITTL", "c", "a"), ("IPTTL", "c", "a"), ("IDEL", "c", "a"), ("ICOUNT", "c"),
               ("ISCAN", "c", 0)]
    for cmd in refused:
        assert raw.call(*cmd) == throttled(750), cmd
        assert raw.call("LASTCHARGE") == b"0", cmd  # a throttled request costs nothing
    after = cinfo(raw, "c")
    assert after["ru_throttled_requests"] == before["ru_throttled_requests"] + len(refused)
    assert as_float(after["ru_user_total"]) == as_float(before["ru_user_total"]) == 15
    assert int(info(raw, "ru")["ru_throttled_requests"]) == server_throttled + len(refused)
    assert after["stored_items"] == 1 and after["live_items"] == 1
    raw.call("DEBUG", "ADVANCE", 749)
    assert server_ms(raw) == now + 749
    assert raw.call("IGET", "c", "a") == throttled(1)  # the last millisecond of the second
    raw.call("DEBUG", "ADVANCE", 1)  # a new second, a fresh budget
    doc = raw.call("IGET", "c", "a")
    assert b'"v":2' in doc and etag2 in doc  # the refused IPUT changed nothing
    assert raw.call("IGET", "c", "b") is None
    assert raw.call("ICOUNT", "c") == 1


def test_throttled_container_does_not_hold_back_others(raw, frozen):
    advance_to_next_second(raw)
    raw.call("CSETRU", "c", 5)
    raw.call("IPUT", "c", "a", '{"v":1}')
    assert raw.call("IGET", "c", "a") == throttled(1000)
    for i in range(50):  # other containers and plain keys share the unlimited server budget
        assert isinstance(raw.call("IPUT", "other", f"a{i}", '{"v":1}'), bytes)
        assert raw.call("SET", f"k{i}", "v") == "OK"
    assert raw.call("CSETRU", "c", "OFF") == "OK"  # back on the server-wide budget: never throttled
    for i in range(20):
        assert isinstance(raw.call("IPUT", "c", "a", '{"v":1}'), bytes)
    assert cinfo(raw, "other")["ru_throttled_requests"] == 0


def test_server_wide_budget_never_throttles(start_server):
    srv, c = start(start_server, **{"ru-per-second": 10})
    with c, frozen_clock(c):
        advance_to_next_second(c)
        for i in range(100):  # 500 RU and more in one second of a 10 RU/s budget
            assert isinstance(c.call("IPUT", "c", f"a{i}", '{"v":1}'), bytes)
            assert c.call("IGET", "c", f"a{i}") is not None
            assert c.call("SET", f"k{i}", "v") == "OK"
        assert c.call("ICOUNT", "c") == 100
        assert c.call("LASTCHARGE") == b"1"
        assert info(c, "ru")["ru_throttled_requests"] == "0"
        assert cinfo(c, "c")["ru_throttled_requests"] == 0


# ---- Serverless billing: nothing is throttled, and there is no budget to set ----------------


def test_serverless_never_throttles_a_container_with_its_own_budget(start_server):
    srv, c = start(start_server)
    with c, frozen_clock(c):
        advance_to_next_second(c)
        assert c.call("CSETRU", "c", 10) == "OK"
        c.call("IPUT", "c", "a", '{"v":1}')  # 5 RU
        c.call("IPUT", "c", "a", '{"v":2}')  # 10 RU: 15 of 10 spent
        assert c.call("IGET", "c", "a") == throttled(1000)  # provisioned: over its own budget
        refused_before = cinfo(c, "c")["ru_throttled_requests"]
        server_refused_before = info(c, "ru")["ru_throttled_requests"]
        user_before = as_float(cinfo(c, "c")["ru_user_total"])
        assert c.call("CONFIG", "SET", "billing", "serverless") == "OK"
        # Hundreds of RU in the same second of a 10 RU/s budget: every command is served.
        for i in range(50):
            assert isinstance(c.call("IPUT", "c", f"a{i}", '{"v":1}'), bytes)
            assert c.call("IGET", "c", f"a{i}") is not None
            assert c.call("ITTL", "c", f"a{i}") == -1
            assert c.call("IPTTL", "c", f"a{i}") == -1
        assert c.call("ICOUNT", "c") == 51
        assert isinstance(c.call("ISCAN", "c", 0, "COUNT", 1000), list)
        assert c.call("IDEL", "c", "a0", "a1") == 2
        assert c.call("EVAL", "return redis.call('IGET', 'c', 'a')", 0) is not None  # scripts too
        after = cinfo(c, "c")
        assert after["ru_throttled_requests"] == refused_before
        assert info(c, "ru")["ru_throttled_requests"] == server_refused_before
        assert as_float(after["ru_user_total"]) >= user_before + 400  # still charged, never refused
        # The budget set while provisioned sleeps, and is in force again once billing is.
        assert c.call("CGETRU", "c") == 10
        assert after["ru_per_second"] == 10
        assert c.call("CONFIG", "SET", "billing", "provisioned") == "OK"
        assert c.call("IGET", "c", "a") == throttled(1000)


def test_csetru_is_refused_under_serverless_and_changes_nothing(start_server):
    srv, c = start(start_server, billing="serverless")
    with c:
        for value in [10, "OFF", "off", "abc", 0, -5, ""]:
            assert c.call("CSETRU", "c", value) == SERVERLESS_CSETRU, value
            assert c.call("LASTCHARGE") == b"1"  # a rejected request
            assert c.call("CLIST") == []  # not even created
            assert c.call("CGETRU", "c") is None
        # The dispatcher's checks come first, as for every command.
        assert c.call("CSETRU", "c") == E("ERR wrong number of arguments for 'csetru' command")
        assert c.call("CSETRU", "a/b", 10) == E(
            "ERR invalid container name: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'")
        assert c.call("CLIST") == []
        # A budget set while provisioned is neither changed nor removed under serverless.
        assert c.call("CONFIG", "SET", "billing", "provisioned") == "OK"
        assert c.call("CSETRU", "c", 10) == "OK"
        assert c.call("CONFIG", "SET", "billing", "serverless") == "OK"
        for value in [20, "OFF"]:
            assert c.call("CSETRU", "c", value) == SERVERLESS_CSETRU, value
            assert c.call("CGETRU", "c") == 10
            assert cinfo(c, "c")["ru_per_second"] == 10
        assert c.call("CONFIG", "SET", "billing", "provisioned") == "OK"
        assert c.call("CSETRU", "c", "OFF") == "OK"
        assert c.call("CGETRU", "c") is None


# ---- CONFIG ru-per-second and billing -----------------------------------------------------


def test_config_ru_per_second_and_billing(start_server):
    srv, c = start(start_server)
    with c:
        assert c.call("CONFIG", "GET", "ru-per-second") == [b"ru-per-second", b"0"]
        assert c.call("CONFIG", "GET", "billing") == [b"billing", b"provisioned"]
        assert c.call("CONFIG", "SET", "ru-per-second", 400) == "OK"
        assert c.call("CONFIG", "GET", "ru-per-second") == [b"ru-per-second", b"400"]
        assert c.call("CONFIG", "SET", "billing", "serverless") == "OK"
        assert c.call("CONFIG", "GET", "billing") == [b"billing", b"serverless"]
        ru = info(c, "ru")
        assert (ru["ru_per_second"], ru["billing"]) == ("400", "serverless")
        assert c.call("CONFIG", "SET", "billing", "PROVISIONED", "ru-per-second", 0) == "OK"
        assert c.call("CONFIG", "GET", "billing") == [b"billing", b"provisioned"]
        ru = info(c, "ru")
        assert (ru["ru_per_second"], ru["billing"]) == ("0", "provisioned")
        with redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True) as r:
            assert r.config_set("ru-per-second", 1000)
            assert r.config_get("ru-*") == {"ru-per-second": "1000"}
            assert r.info("ru")["ru_per_second"] == 1000


def test_config_set_rejects_bad_values_and_changes_nothing(start_server):
    srv, c = start(start_server, **{"ru-per-second": 400})
    with c:
        not_int = "argument couldn't be parsed into an integer"
        for value, reason in [("abc", not_int), ("1.5", not_int), ("", not_int), ("10k", not_int),
                              ("-1", "argument must be between 0 and 9223372036854775 inclusive"),
                              ("9223372036854776", "argument must be between 0 and 9223372036854775 inclusive")]:
            assert c.call("CONFIG", "SET", "ru-per-second", value) == config_error("ru-per-second", reason), value
        for value in ["", "free", "serverless2", "0"]:
            assert c.call("CONFIG", "SET", "billing", value) == config_error(
                "billing", "argument(s) must be one of the following: provisioned, serverless"), value
        assert c.call("CONFIG", "GET", "ru-per-second") == [b"ru-per-second", b"400"]
        assert c.call("CONFIG", "GET", "billing") == [b"billing", b"provisioned"]
        assert c.call("CONFIG", "SET", "ru-per-second") == E("ERR wrong number of arguments for 'config|set' command")


def test_config_set_several_pairs_is_all_or_nothing(start_server):
    srv, c = start(start_server)
    with c:
        reply = c.call("CONFIG", "SET", "ru-per-second", 400, "billing", "bogus")
        assert reply == config_error("billing", "argument(s) must be one of the following: provisioned, serverless")
        assert c.call("CONFIG", "GET", "ru-per-second") == [b"ru-per-second", b"0"]
        assert info(c, "ru")["ru_per_second"] == "0"


def test_bad_startup_flags_are_refused():
    for flag, value, reason in [
            ("--billing", "free", "argument(s) must be one of the following: provisioned, serverless"),
            ("--ru-per-second", "-5", "argument must be between 0 and 9223372036854775 inclusive"),
            ("--ru-per-second", "lots", "argument couldn't be parsed into an integer")]:
        proc = subprocess.run([lapse_binary(), "--port", "0", flag, value], capture_output=True, timeout=20)
        assert proc.returncode == 2, (flag, value)
        first = proc.stderr.decode(errors="replace").splitlines()[0]
        assert first == f"lapse-server: {config_error(flag[2:], reason).message}"


def test_startup_flags_are_in_force(start_server):
    srv, c = start(start_server, **{"ru-per-second": 250, "billing": "serverless"})
    with c:
        assert c.call("CONFIG", "GET", "ru-per-second") == [b"ru-per-second", b"250"]
        assert c.call("CONFIG", "GET", "billing") == [b"billing", b"serverless"]


# ---- INFO ru / INFO reclaim / CINFO --------------------------------------------------------

RU_FIELDS = {"ru_per_second", "billing", "ru_user_total", "ru_reclaim_total", "ru_billed_reclaim_total",
             "ru_throttled_requests"}
RECLAIM_FIELDS = {"containers", "items_stored", "reclaim_backlog", "reclaimed_background_total",
                  "reclaimed_lazy_total", "reclaim_lag_p50_ms", "reclaim_lag_p99_ms", "reclaim_lag_max_ms"}
CINFO_FIELDS = {"ru_per_second", "ru_user_total", "ru_reclaim_total", "ru_throttled_requests", "reclaim_backlog",
                "reclaim_lag_p50_ms", "reclaim_lag_p99_ms", "reclaim_lag_max_ms", "default_ttl", "live_items",
                "stored_items", "expired_unreclaimed", "reclaimed_total", "reclaimed_background_total",
                "reclaimed_lazy_total", "oldest_unreclaimed_ms", "evictable", "evicted_items_total"}


def test_info_sections_on_a_fresh_server(start_server):
    srv, c = start(start_server)
    with c:
        ru, rec = info(c, "ru"), info(c, "reclaim")
        assert RU_FIELDS <= set(ru) and RECLAIM_FIELDS <= set(rec)
        assert ru["ru_per_second"] == "0" and ru["billing"] == "provisioned"
        for k in ("ru_user_total", "ru_reclaim_total", "ru_billed_reclaim_total"):
            assert float(ru[k]) == 0, k
        assert ru["ru_throttled_requests"] == "0"
        assert all(rec[k] == "0" for k in RECLAIM_FIELDS), rec
        everything = info(c, "everything")
        assert RU_FIELDS | RECLAIM_FIELDS <= set(everything)
        text = bytes(c.call("INFO", "ru")).decode()
        assert text.startswith("# RU\r\n")
        assert bytes(c.call("INFO", "reclaim")).decode().startswith("# Reclaim\r\n")


def test_ru_user_total_adds_up_the_charges(start_server):
    srv, c = start(start_server)
    with c:
        total = 0.0
        for cmd in [("SET", "k", "v"), ("SET", "k", "x" * 3000), ("GET", "k"), ("IPUT", "c", "a", '{"v":1}'),
                    ("IGET", "c", "a"), ("GET",), ("PING",), ("KEYS", "*"), ("IDEL", "c", "a")]:
            c.call(*cmd)
            total += float(c.call("LASTCHARGE"))
        assert total == 5 + 30 + 3 + 5 + 1 + 1 + 0 + 1 + 5
        assert float(info(c, "ru")["ru_user_total"]) == total
        assert as_float(cinfo(c, "c")["ru_user_total"]) == 5 + 1 + 5  # only the item commands
        assert float(info(c, "ru")["ru_reclaim_total"]) == 0


def test_counters_move_with_lazy_and_background_reclamation(raw, frozen):
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    barrier(raw)
    base = info(raw, "reclaim")
    raw.call("CSETTTL", "c", "OFF")
    written = server_ms(raw)
    put_items(raw, "c", 10, '{"v":1}')
    rec = info(raw, "reclaim")
    assert int(rec["items_stored"]) == int(base["items_stored"]) + 10
    assert rec["reclaim_backlog"] == base["reclaim_backlog"]
    raw.call("CSETTTL", "c", 1)
    raw.call("DEBUG", "ADVANCE", 1500)  # every item expired 500 ms ago
    ci = cinfo(raw, "c")
    assert set(ci) == CINFO_FIELDS
    assert (ci["live_items"], ci["stored_items"], ci["expired_unreclaimed"], ci["reclaim_backlog"]) == (0, 10, 10, 10)
    assert ci["oldest_unreclaimed_ms"] == server_ms(raw) - (written + 1000) == 500
    assert int(info(raw, "reclaim")["reclaim_backlog"]) == int(base["reclaim_backlog"]) + 10
    assert raw.call("ICOUNT", "c") == 0  # invisible before they are reclaimed
    # A read that meets an expired item reclaims it inline: lazy, not background.
    assert raw.call("IGET", "c", "i0003") is None
    assert raw.call("IPUT", "c", "i0004", '{"v":2}', "NX") is not None  # an expired item counts as absent
    ci = cinfo(raw, "c")
    assert (ci["reclaimed_lazy_total"], ci["reclaimed_background_total"]) == (2, 0)
    assert (ci["stored_items"], ci["expired_unreclaimed"], ci["live_items"]) == (9, 8, 1)
    rec = info(raw, "reclaim")
    assert int(rec["reclaimed_lazy_total"]) == int(base["reclaimed_lazy_total"]) + 2
    assert rec["reclaimed_background_total"] == base["reclaimed_background_total"]
    # The reclaimer takes the other 8.
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    wait_until(lambda: cinfo(raw, "c")["reclaimed_background_total"], lambda v: v >= 8, "background reclamation")
    ci = cinfo(raw, "c")
    assert (ci["reclaimed_background_total"], ci["reclaimed_lazy_total"], ci["reclaimed_total"]) == (8, 2, 10)
    assert (ci["stored_items"], ci["expired_unreclaimed"], ci["live_items"], ci["oldest_unreclaimed_ms"]) == (1, 0, 1, 0)
    assert ci["reclaim_lag_max_ms"] == 500  # deleted at the frozen millisecond, 500 ms after the deadline
    assert ci["reclaim_lag_p50_ms"] == ci["reclaim_lag_p99_ms"] == 500
    assert as_float(ci["ru_reclaim_total"]) == 8 * 5
    rec = info(raw, "reclaim")
    assert int(rec["reclaimed_background_total"]) == int(base["reclaimed_background_total"]) + 8
    assert rec["reclaim_backlog"] == base["reclaim_backlog"]


# ---- reclamation paced by the budget --------------------------------------------------------


def test_provisioned_400_reclaims_80_items_per_simulated_second(start_server):
    """1,000 expired 1 KiB items at 400 RU/s: exactly 80 deletions (5 RU each) per simulated
    second, so the backlog is gone after 13 seconds; an idle stretch of time buys no more
    than one second's budget."""
    srv, c = start(start_server, **{"ru-per-second": 400})
    with c, frozen_clock(c):
        advance_to_next_second(c)
        deadline = expired_backlog(c, "c")  # the inserts spent this second's budget many times over
        seconds = 1
        done = 0
        while done < N_ITEMS:
            target = min(N_ITEMS, done + 80)
            got = wait_until(lambda: reclaimed(c), lambda v: v >= target, f"second {seconds}")
            time.sleep(0.05)  # the budget is checked per item: it must stop exactly there
            rec, ru = info(c, "reclaim"), info(c, "ru")
            assert got == int(rec["reclaimed_background_total"]) == target, f"second {seconds}"
            assert int(rec["reclaim_backlog"]) == N_ITEMS - target
            assert float(ru["ru_reclaim_total"]) == 5 * target
            if seconds == 1:
                lag = server_ms(c) - deadline
                assert rec["reclaim_lag_max_ms"] == rec["reclaim_lag_p99_ms"] == rec["reclaim_lag_p50_ms"] == str(lag)
            done = target
            if done < N_ITEMS:
                # One step is a long idle stretch: unspent budget does not pile up.
                c.call("DEBUG", "ADVANCE", 5000 if seconds == 3 else 1000)
                seconds += 1
        assert seconds == 13
        ci = cinfo(c, "c")
        assert (ci["stored_items"], ci["expired_unreclaimed"], ci["reclaimed_background_total"]) == (0, 0, 1000)
        assert as_float(ci["ru_reclaim_total"]) == 5000
        assert float(info(c, "ru")["ru_billed_reclaim_total"]) == 0  # billed only when serverless
        assert int(info(c, "reclaim")["reclaim_lag_max_ms"]) == server_ms(c) - deadline


def test_users_spending_the_budget_hold_reclamation_back(start_server):
    srv, c = start(start_server, **{"ru-per-second": 400})
    with c, frozen_clock(c):
        advance_to_next_second(c)
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", 0) == "OK"
        barrier(c)
        expired_backlog(c, "c")
        for second in range(2):  # users spend all 400 RU: 80 inserts of plain keys
            c.call("DEBUG", "ADVANCE", 1000)
            assert c.pipeline([("SET", f"u{second}:{i}", "v") for i in range(80)]) == ["OK"] * 80
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
            time.sleep(0.3)  # the reclaimer gets every chance; it must not move
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
            barrier(c)
            rec = info(c, "reclaim")
            assert (rec["reclaimed_background_total"], rec["reclaim_backlog"]) == ("0", "1000"), second
            assert c.call("ICOUNT", "c") == 0  # reads never show the expired items meanwhile
        c.call("DEBUG", "ADVANCE", 1000)  # users leave half the budget: 40 items
        assert c.pipeline([("SET", f"h{i}", "v") for i in range(40)]) == ["OK"] * 40
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        wait_until(lambda: reclaimed(c), lambda v: v >= 40, "reclamation with half the budget left")
        time.sleep(0.05)
        assert reclaimed(c) == 40
        c.call("DEBUG", "ADVANCE", 1000)  # users stop: the whole budget again
        wait_until(lambda: reclaimed(c), lambda v: v >= 120, "reclamation once users stop")
        time.sleep(0.05)
        assert reclaimed(c) == 120
        assert float(info(c, "ru")["ru_reclaim_total"]) == 120 * 5


def test_serverless_is_not_held_back_and_bills_5_per_1kib_item(start_server):
    srv, c = start(start_server, **{"ru-per-second": 400, "billing": "serverless"})
    with c, frozen_clock(c):
        advance_to_next_second(c)
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        barrier(c)
        expired_backlog(c, "c")
        assert c.pipeline([("SET", f"u{i}", "v") for i in range(100)]) == ["OK"] * 100  # 500 of 400 RU
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        # All of it within this one simulated second although users spent the whole budget.
        wait_until(lambda: reclaimed(c), lambda v: v >= N_ITEMS, "serverless reclamation")
        ru, rec = info(c, "ru"), info(c, "reclaim")
        assert rec["reclaimed_background_total"] == "1000" and rec["reclaim_backlog"] == "0"
        assert float(ru["ru_reclaim_total"]) == 5000
        assert float(ru["ru_billed_reclaim_total"]) == 5000
        assert as_float(cinfo(c, "c")["ru_reclaim_total"]) == 5000


def test_unlimited_budget_reclaims_at_once_and_counts_the_ru(start_server):
    srv, c = start(start_server)
    with c, frozen_clock(c):
        expired_backlog(c, "c")
        wait_until(lambda: reclaimed(c), lambda v: v >= N_ITEMS, "unlimited reclamation")
        ru = info(c, "ru")
        assert float(ru["ru_reclaim_total"]) == 5000
        assert float(ru["ru_billed_reclaim_total"]) == 0


def test_switching_to_serverless_at_run_time_releases_held_back_reclamation(start_server):
    srv, c = start(start_server, **{"ru-per-second": 400})
    with c, frozen_clock(c):
        advance_to_next_second(c)
        expired_backlog(c, "c")
        wait_until(lambda: reclaimed(c), lambda v: v >= 80, "provisioned reclamation")
        time.sleep(0.05)
        assert reclaimed(c) == 80
        assert c.call("CONFIG", "SET", "billing", "serverless") == "OK"
        wait_until(lambda: reclaimed(c), lambda v: v >= N_ITEMS, "serverless reclamation")
        ru = info(c, "ru")
        assert float(ru["ru_reclaim_total"]) == 5000
        assert float(ru["ru_billed_reclaim_total"]) == 920 * 5


def test_container_budget_paces_its_own_reclamation(start_server):
    """A container with its own budget (CSETRU 100: 20 items of 5 RU a second) is reclaimed at
    that pace although the server-wide budget is unlimited."""
    srv, c = start(start_server)
    with c, frozen_clock(c):
        advance_to_next_second(c)
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        barrier(c)
        expired_backlog(c, "own", 200)  # the inserts were on the server-wide budget
        assert c.call("CSETRU", "own", 100) == "OK"
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        for second in range(1, 4):
            wait_until(lambda: cinfo(c, "own")["reclaimed_background_total"], lambda v: v >= 20 * second,
                       f"own budget, second {second}")
            time.sleep(0.05)
            own = cinfo(c, "own")
            assert own["reclaimed_background_total"] == 20 * second
            assert own["expired_unreclaimed"] == 200 - 20 * second
            assert as_float(own["ru_reclaim_total"]) == 100 * second
            if second < 3:
                c.call("DEBUG", "ADVANCE", 1000)
        assert float(info(c, "ru")["ru_reclaim_total"]) == 60 * 5  # the server-wide total includes it


def two_containers_one_over_its_budget(c):
    """'own' (CSETRU 100) holds 200 expired items whose deadlines come 1 ms before those of
    'shared' (200 items on the unlimited server-wide budget)."""
    advance_to_next_second(c)
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    barrier(c)
    c.call("CSETTTL", "own", "OFF")
    c.call("CSETTTL", "shared", "OFF")
    put_items(c, "own", 200)
    c.call("DEBUG", "ADVANCE", 1)
    put_items(c, "shared", 200)
    assert c.call("CSETRU", "own", 100) == "OK"
    c.call("CSETTTL", "own", 1)
    c.call("CSETTTL", "shared", 1)
    c.call("DEBUG", "ADVANCE", 2000)
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def test_container_over_its_budget_does_not_hold_back_the_others(start_server):
    srv, c = start(start_server)
    with c, frozen_clock(c):
        two_containers_one_over_its_budget(c)
        wait_until(lambda: cinfo(c, "own")["reclaimed_background_total"], lambda v: v >= 20, "own budget")
        wait_until(lambda: cinfo(c, "shared")["reclaimed_background_total"], lambda v: v >= 200,
                   "the container on the server-wide budget", timeout=3)


def test_cdrop_frees_without_charge_even_when_the_budget_is_spent(start_server):
    srv, c = start(start_server, **{"ru-per-second": 400})
    with c, frozen_clock(c):
        advance_to_next_second(c)
        put_items(c, "c", 500)  # 2,500 RU: this second's budget is gone
        assert int(info(c, "reclaim")["items_stored"]) == 500
        assert c.call("CDROP", "c") == 1
        assert c.call("LASTCHARGE") == b"0"
        assert c.call("ICOUNT", "c") == 0 and c.call("CLIST") == []
        wait_until(lambda: info(c, "reclaim")["items_stored"], lambda v: v == "0", "freeing a dropped container")
        ru, rec = info(c, "ru"), info(c, "reclaim")
        assert float(ru["ru_reclaim_total"]) == 0
        assert float(ru["ru_user_total"]) == 2500 + 1  # the IPUTs and the ICOUNT
        assert rec["reclaimed_background_total"] == "0" and rec["containers"] == "0"
