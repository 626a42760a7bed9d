"""Blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) with several connections,
on lapse started with --threads 1, 2 and 4 (conftest's `server`); against redis-server
(LAPSE_TARGET=redis) the thread count does not apply and every test checks Redis 7.0 itself.

Each blocked client is a raw connection of its own: it sends its command and reads the reply
later. Before another connection acts on a blocked client, the test waits until INFO clients
counts it as blocked, so that the order of events is the test's, not the scheduler's. Timing is
only ever checked with generous bounds: these machines are noisy.
"""
from __future__ import annotations

import select
import threading
import time

import redis

from lapse_harness import RespError as E
from lapse_harness import blocked_clients, wait_blocked

WRONGTYPE = E("WRONGTYPE Operation against a key holding the wrong kind of value")
UNBLOCKED = E("UNBLOCKED client unblocked via CLIENT UNBLOCK")
NULL_ARRAY = b"*-1\r\n"
# Names that land on different shards of a multi-threaded lapse (any few distinct names do).
SPREAD_KEYS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def has_reply(conn, wait: float = 0.0) -> bool:
    """Whether the connection has reply bytes waiting (within `wait` seconds)."""
    if conn.buf:
        return True
    readable, _, _ = select.select([conn.sock], [], [], wait)
    return bool(readable)


def block(conn, observer, n_blocked: int, *command):
    """Sends a blocking command and waits until the server counts n_blocked blocked clients."""
    conn.send(*command)
    wait_blocked(observer, n_blocked)
    assert not has_reply(conn), f"{command} answered at once"


# ---- being served


def test_blpop_served_by_a_later_push(connect):
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert not has_reply(waiter, 0.2)
    assert pusher.call("LPUSH", "q", "x") == 1
    assert waiter.read_reply_raw() == b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n"
    assert pusher.call("EXISTS", "q") == 0
    assert blocked_clients(pusher) == 0
    # BRPOP takes the tail
    block(waiter, pusher, 1, "BRPOP", "q", "0")
    assert pusher.call("RPUSH", "q", "a", "b", "c") == 3
    assert waiter.read_reply() == [b"q", b"c"]
    assert pusher.call("LRANGE", "q", "0", "-1") == [b"a", b"b"]


def test_pusher_sees_the_list_already_served(connect):
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert pusher.call("LPUSH", "q", "x") == 1
    assert pusher.call("LLEN", "q") == 0
    assert waiter.read_reply() == [b"q", b"x"]
    # the same in one pipeline: the waiter is served before the pusher's next command
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert pusher.pipeline([("RPUSH", "q", "y"), ("LLEN", "q"), ("EXISTS", "q")]) == [1, 0, 0]
    assert waiter.read_reply() == [b"q", b"y"]
    # two elements for one waiter: one is left
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert pusher.pipeline([("RPUSH", "q", "1", "2"), ("LRANGE", "q", "0", "-1")]) == [2, [b"2"]]
    assert waiter.read_reply() == [b"q", b"1"]


def test_fairness_first_blocked_first_served(connect):
    a, b, c, pusher = connect(), connect(), connect(), connect()
    block(a, pusher, 1, "BLPOP", "q", "0")
    block(b, pusher, 2, "BLPOP", "q", "0")
    block(c, pusher, 3, "BRPOP", "q", "0")
    assert pusher.call("RPUSH", "q", "1") == 1
    assert a.read_reply() == [b"q", b"1"]
    assert not has_reply(b, 0.1) and not has_reply(c)
    wait_blocked(pusher, 2)
    assert pusher.call("RPUSH", "q", "2", "3") == 2
    assert b.read_reply() == [b"q", b"2"]
    assert c.read_reply() == [b"q", b"3"]
    assert pusher.call("EXISTS", "q") == 0
    # the same with one push that serves all three, in blocking order
    block(c, pusher, 1, "BLPOP", "q", "0")
    block(a, pusher, 2, "BLPOP", "q", "0")
    block(b, pusher, 3, "BLPOP", "q", "0")
    assert pusher.call("RPUSH", "q", "x", "y", "z", "rest") == 4
    assert [c.read_reply(), a.read_reply(), b.read_reply()] == [[b"q", b"x"], [b"q", b"y"], [b"q", b"z"]]
    assert pusher.call("LRANGE", "q", "0", "-1") == [b"rest"]


def test_blocked_on_several_keys(connect):
    waiter, pusher = connect(), connect()
    for i, key in enumerate(SPREAD_KEYS):
        block(waiter, pusher, 1, "BLPOP", *SPREAD_KEYS, "0")
        assert pusher.call("RPUSH", key, f"v{i}") == 1
        assert waiter.read_reply() == [key.encode(), f"v{i}".encode()]
        assert pusher.call("EXISTS", *SPREAD_KEYS) == 0
    # several keys ready at once (one EXEC): Redis 7.0 serves from the key that became ready
    # first, not from the first key the waiter listed
    block(waiter, pusher, 1, "BRPOP", "alpha", "beta", "gamma", "0")
    assert pusher.pipeline([("MULTI",), ("RPUSH", "gamma", "g"), ("RPUSH", "beta", "b"), ("EXEC",)])[-1] == [1, 1]
    assert waiter.read_reply() == [b"gamma", b"g"]
    assert pusher.call("LRANGE", "beta", "0", "-1") == [b"b"]
    pusher.call("DEL", "beta")
    block(waiter, pusher, 1, "BRPOP", "gamma", "beta", "alpha", "0")
    assert pusher.pipeline([("MULTI",), ("RPUSH", "alpha", "a"), ("RPUSH", "gamma", "g"), ("EXEC",)])[-1] == [1, 1]
    assert waiter.read_reply() == [b"alpha", b"a"]
    assert pusher.call("LRANGE", "gamma", "0", "-1") == [b"g"]
    pusher.call("DEL", "gamma")
    # a key listed twice
    block(waiter, pusher, 1, "BLPOP", "delta", "delta", "0")
    assert pusher.call("LPUSH", "delta", "d") == 1
    assert waiter.read_reply() == [b"delta", b"d"]


def test_timeout_with_decimals(connect):
    waiter, observer = connect(), connect()
    for command in (("BLPOP", "q", "0.2"), ("BRPOP", "q", "other", "0.25"), ("BLMOVE", "q", "d", "LEFT", "RIGHT", "0.2"),
                    ("BRPOPLPUSH", "q", "d", "0.2"), ("BLMPOP", "0.2", "2", "q", "other", "LEFT", "COUNT", "2")):
        start = time.monotonic()
        assert waiter.call_raw(*command) == NULL_ARRAY, command
        elapsed = time.monotonic() - start
        assert 0.1 <= elapsed < 5.0, (command, elapsed)
    assert blocked_clients(observer) == 0
    assert observer.call("EXISTS", "q", "other", "d") == 0
    # RESP3: the null of a timed-out blocking command
    assert waiter.call("HELLO", "3")[b"proto"] == 3
    assert waiter.call_raw("BLPOP", "q", "0.1") == b"_\r\n"
    assert waiter.call_raw("BLMOVE", "q", "d", "LEFT", "RIGHT", "0.1") == b"_\r\n"
    # served long before its timeout
    block(waiter, observer, 1, "BLPOP", "q", "30")
    start = time.monotonic()
    assert observer.call("RPUSH", "q", "v") == 1
    assert waiter.read_reply() == [b"q", b"v"]
    assert time.monotonic() - start < 5.0


def test_timeout_zero_waits_until_served(connect):
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert not has_reply(waiter, 1.0)
    assert blocked_clients(pusher) == 1
    assert pusher.call("RPUSH", "q", "late") == 1
    assert waiter.read_reply() == [b"q", b"late"]


def test_blmove_and_brpoplpush_into_a_destination(connect):
    x, pusher = connect(), connect()
    pusher.call("RPUSH", "dst", "old")
    block(x, pusher, 1, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
    assert pusher.call("RPUSH", "src", "a", "b") == 2
    assert x.read_reply_raw() == b"$1\r\nb\r\n"
    assert pusher.call("LRANGE", "dst", "0", "-1") == [b"b", b"old"]
    assert pusher.call("LRANGE", "src", "0", "-1") == [b"a"]
    pusher.call("DEL", "src")
    block(x, pusher, 1, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
    assert pusher.call("LPUSH", "src", "c") == 1
    assert x.read_reply() == b"c"
    assert pusher.call("LRANGE", "dst", "0", "-1") == [b"b", b"old", b"c"]
    block(x, pusher, 1, "BRPOPLPUSH", "src", "fresh", "0")
    assert pusher.call("LPUSH", "src", "d", "e") == 2
    assert x.read_reply() == b"d"
    assert pusher.call("LRANGE", "fresh", "0", "-1") == [b"d"]
    assert pusher.call("LRANGE", "src", "0", "-1") == [b"e"]
    # source and destination the same key
    pusher.call("DEL", "src")
    block(x, pusher, 1, "BLMOVE", "src", "src", "LEFT", "RIGHT", "0")
    assert pusher.call("RPUSH", "src", "1") == 1
    assert x.read_reply() == b"1"
    assert pusher.call("LRANGE", "src", "0", "-1") == [b"1"]


def test_chain_of_blocked_moves(connect):
    x, y, z, pusher = connect(), connect(), connect(), connect()
    block(x, pusher, 1, "BLMOVE", "a", "b", "LEFT", "RIGHT", "0")
    block(y, pusher, 2, "BLPOP", "b", "0")
    assert pusher.call("LPUSH", "a", "x") == 1
    assert x.read_reply() == b"x"
    assert y.read_reply() == [b"b", b"x"]
    assert pusher.call("EXISTS", "a", "b") == 0
    # three links: a -> b -> c, then BRPOP c
    block(x, pusher, 1, "BLMOVE", "a", "b", "RIGHT", "LEFT", "0")
    block(y, pusher, 2, "BRPOPLPUSH", "b", "c", "0")
    block(z, pusher, 3, "BRPOP", "c", "0")
    assert pusher.call("RPUSH", "a", "v") == 1
    assert (x.read_reply(), y.read_reply(), z.read_reply()) == (b"v", b"v", [b"c", b"v"])
    assert pusher.call("EXISTS", "a", "b", "c") == 0


def test_blmpop_with_count(connect):
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BLMPOP", "0", "2", "k1", "k2", "LEFT", "COUNT", "3")
    assert pusher.call("RPUSH", "k2", "a", "b", "c", "d") == 4
    assert waiter.read_reply_raw() == b"*2\r\n$2\r\nk2\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    assert pusher.call("LRANGE", "k2", "0", "-1") == [b"d"]
    block(waiter, pusher, 1, "BLMPOP", "0", "1", "k3", "RIGHT", "COUNT", "10")
    assert pusher.call("RPUSH", "k3", "x", "y") == 2
    assert waiter.read_reply() == [b"k3", [b"y", b"x"]]
    assert pusher.call("EXISTS", "k3") == 0
    block(waiter, pusher, 1, "BLMPOP", "0", "1", "k4", "LEFT")
    assert pusher.call("LPUSH", "k4", "1", "2") == 2
    assert waiter.read_reply() == [b"k4", [b"2"]]


def test_pushes_inside_multi_exec(connect):
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert pusher.call("MULTI") == "OK"
    assert pusher.call("LPUSH", "q", "a") == "QUEUED"
    assert pusher.call("LPUSH", "q", "b") == "QUEUED"
    assert pusher.call("LLEN", "q") == "QUEUED"
    assert not has_reply(waiter, 0.1)
    assert pusher.call("EXEC") == [1, 2, 2]
    # served after the whole EXEC, from the list as EXEC left it
    assert waiter.read_reply() == [b"q", b"b"]
    assert pusher.call("LRANGE", "q", "0", "-1") == [b"a"]
    # pushed and popped again inside one EXEC: nothing is left to serve, the waiter stays
    pusher.call("DEL", "q")
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    assert pusher.pipeline([("MULTI",), ("RPUSH", "q", "gone"), ("LPOP", "q"), ("EXEC",)])[-1] == [1, b"gone"]
    assert not has_reply(waiter, 0.3)
    assert blocked_clients(pusher) == 1
    assert pusher.call("RPUSH", "q", "later") == 1
    assert waiter.read_reply() == [b"q", b"later"]


# ---- leaving the wait


def test_disconnect_while_blocked(connect):
    waiter, other, pusher = connect(), connect(), connect()
    block(waiter, pusher, 1, "BLPOP", "q", "0")
    block(other, pusher, 2, "BLMOVE", "q", "dst", "LEFT", "LEFT", "0")
    waiter.close()
    other.close()
    wait_blocked(pusher, 0)
    assert pusher.call("LPUSH", "q", "x") == 1
    assert pusher.call("LRANGE", "q", "0", "-1") == [b"x"]
    assert pusher.call("EXISTS", "dst") == 0
    # a client that disconnects after it was served changes nothing either
    pusher.call("DEL", "q")
    third = connect()
    block(third, pusher, 1, "BLPOP", "q", "0")
    assert pusher.call("RPUSH", "q", "1", "2") == 2
    third.close()
    assert pusher.call("LRANGE", "q", "0", "-1") == [b"2"]


def test_disconnect_after_pipelining_more_commands(connect):
    # Commands sent behind a blocking one are read while it waits; the end of the connection
    # after them still frees the client, and a later push keeps its element.
    waiter, pusher = connect(), connect()
    waiter.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n*1\r\n$4\r\nPING\r\n")
    wait_blocked(pusher, 1)
    waiter.send("QUIT")
    time.sleep(0.05)
    waiter.close()
    wait_blocked(pusher, 0)
    assert pusher.call("LPUSH", "q", "x") == 1
    assert pusher.call("LLEN", "q") == 1


def test_commands_pipelined_behind_a_served_wait_run_after_it(connect):
    waiter, pusher = connect(), connect()
    waiter.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n*2\r\n$4\r\nECHO\r\n$5\r\nafter\r\n")
    wait_blocked(pusher, 1)
    assert pusher.call("RPUSH", "q", "v") == 1
    assert waiter.read_reply_raw() == b"*2\r\n$1\r\nq\r\n$1\r\nv\r\n"
    assert waiter.read_reply_raw() == b"$5\r\nafter\r\n"


def test_replies_before_a_blocking_command_arrive_while_it_waits(connect):
    # ioredis pipelines `LPUSH done r` and `BRPOP jobs 0` together; the first reply must not
    # wait for a job.
    waiter, pusher = connect(), connect()
    waiter.send_raw(b"*3\r\n$5\r\nLPUSH\r\n$4\r\ndone\r\n$1\r\nr\r\n"
                    b"*3\r\n$5\r\nBRPOP\r\n$4\r\njobs\r\n$1\r\n0\r\n")
    wait_blocked(pusher, 1)
    assert has_reply(waiter, 5.0)
    assert waiter.read_reply_raw() == b":1\r\n"
    assert not has_reply(waiter, 0.1)
    assert pusher.call("LPUSH", "jobs", "j") == 1
    assert waiter.read_reply_raw() == b"*2\r\n$4\r\njobs\r\n$1\r\nj\r\n"


def test_timeout_during_a_busy_script(connect):
    # A blocked client whose timeout passes while a slow script runs answers nil once the
    # script is over; the server stays responsive.
    waiter, runner, admin = connect(), connect(), connect()
    assert admin.call("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    try:
        block(waiter, admin, 1, "BLPOP", "q", "0.2")
        script = ("local t0 = redis.call('TIME') "
                  "local function ms(t) return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 end "
                  "redis.call('RPUSH', 'other', 'x') "
                  "while ms(redis.call('TIME')) - ms(t0) < 800 do end return 1")
        assert runner.call("EVAL", script, "0") == 1
        assert waiter.read_reply_raw() == NULL_ARRAY
        assert admin.call("LLEN", "other") == 1
        wait_blocked(admin, 0)
    finally:
        admin.call("CONFIG", "SET", "busy-reply-threshold", "5000")


def test_client_unblock(connect):
    waiter, admin = connect(), connect()
    wid = waiter.call("CLIENT", "ID")
    block(waiter, admin, 1, "BLPOP", "q", "0")
    assert admin.call("CLIENT", "UNBLOCK", str(wid)) == 1
    assert waiter.read_reply_raw() == NULL_ARRAY
    assert blocked_clients(admin) == 0
    assert admin.call("CLIENT", "UNBLOCK", str(wid)) == 0  # not blocked any more
    assert waiter.call("PING") == "PONG"
    block(waiter, admin, 1, "BLMOVE", "q", "d", "LEFT", "LEFT", "0")
    assert admin.call("CLIENT", "UNBLOCK", str(wid), "TIMEOUT") == 1
    assert waiter.read_reply_raw() == NULL_ARRAY
    block(waiter, admin, 1, "BRPOP", "q", "0")
    assert admin.call("CLIENT", "UNBLOCK", str(wid), "ERROR") == 1
    assert waiter.read_reply() == UNBLOCKED
    block(waiter, admin, 1, "BLMPOP", "0", "1", "q", "LEFT")
    assert admin.call("CLIENT", "UNBLOCK", str(wid), "error") == 1
    assert waiter.read_reply_raw() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    block(waiter, admin, 1, "BLPOP", "q", "0")
    assert admin.call("CLIENT", "UNBLOCK", str(wid), "FOO") == E("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    assert admin.call("CLIENT", "UNBLOCK", "x") == E("ERR value is not an integer or out of range")
    assert admin.call("CLIENT", "UNBLOCK", "999999999") == 0
    assert admin.call("CLIENT", "UNBLOCK", str(admin.call("CLIENT", "ID"))) == 0
    assert blocked_clients(admin) == 1
    assert admin.call("CLIENT", "UNBLOCK", str(wid), "timeout") == 1
    assert waiter.read_reply_raw() == NULL_ARRAY
    # nothing is left behind: a later push stays in the list
    assert admin.call("RPUSH", "q", "kept") == 1
    assert admin.call("LRANGE", "q", "0", "-1") == [b"kept"]
    # RESP3: the null of an unblocked client
    assert waiter.call("HELLO", "3")[b"proto"] == 3
    block(waiter, admin, 1, "BLPOP", "empty", "0")
    assert admin.call("CLIENT", "UNBLOCK", str(wid)) == 1
    assert waiter.read_reply_raw() == b"_\r\n"


def test_client_kill_of_a_blocked_client(connect):
    waiter, admin = connect(), connect()
    wid = waiter.call("CLIENT", "ID")
    block(waiter, admin, 1, "BLPOP", "q", "0")
    assert admin.call("CLIENT", "KILL", "ID", str(wid)) == 1
    assert waiter.at_eof(5.0)
    wait_blocked(admin, 0)
    assert admin.call("LPUSH", "q", "x") == 1
    assert admin.call("LRANGE", "q", "0", "-1") == [b"x"]
    assert admin.call("CLIENT", "KILL", "ID", str(wid)) == 0  # the filter form counts, it does not fail


def test_info_counts_blocked_clients(connect):
    a, b, c, d, admin = connect(), connect(), connect(), connect(), connect()
    assert blocked_clients(admin) == 0
    block(a, admin, 1, "BLPOP", "q1", "0")
    block(b, admin, 2, "BLMOVE", "q2", "d", "LEFT", "LEFT", "0")
    block(c, admin, 3, "BLMPOP", "0", "2", "q3", "q4", "RIGHT")
    block(d, admin, 4, "BRPOP", "q5", "3")
    # a blocking command inside MULTI does not block
    assert admin.pipeline([("MULTI",), ("BLPOP", "q6", "0"), ("EXEC",)]) == ["OK", "QUEUED", [None]]
    assert blocked_clients(admin) == 4
    assert d.read_reply() is None  # timed out
    wait_blocked(admin, 3)
    admin.call("RPUSH", "q1", "x")
    assert a.read_reply() == [b"q1", b"x"]
    wait_blocked(admin, 2)
    admin.call("RPUSH", "q4", "y")
    assert c.read_reply() == [b"q4", [b"y"]]
    wait_blocked(admin, 1)
    assert admin.call("CLIENT", "UNBLOCK", str(0)) == 0
    b.close()
    wait_blocked(admin, 0)
    # a blocking command that finds its element at once never counts
    admin.call("RPUSH", "q1", "z")
    assert a.call("BLPOP", "q1", "0") == [b"q1", b"z"]
    assert blocked_clients(admin) == 0


# ---- the key changes while a client waits


def test_key_set_to_another_type_while_waiting(connect):
    waiter, other = connect(), connect()
    block(waiter, other, 1, "BLPOP", "q", "0")
    assert other.call("SET", "q", "str") == "OK"
    assert not has_reply(waiter, 0.3)
    assert blocked_clients(other) == 1
    assert other.call("LPUSH", "q", "x") == WRONGTYPE
    assert other.call("DEL", "q") == 1
    assert not has_reply(waiter, 0.1)
    assert other.call("LPUSH", "q", "x") == 1
    assert waiter.read_reply() == [b"q", b"x"]
    # waiting on two keys while one becomes a hash: the other still serves
    block(waiter, other, 1, "BLPOP", "h", "l", "0")
    assert other.call("HSET", "h", "f", "v") == 1
    assert not has_reply(waiter, 0.2)
    assert other.call("RPUSH", "l", "from-l") == 1
    assert waiter.read_reply() == [b"l", b"from-l"]


def test_key_created_by_rename_move_or_copy_serves_the_waiter(connect):
    waiter, other = connect(), connect()
    block(waiter, other, 1, "BLPOP", "q", "0")
    other.call("RPUSH", "src", "r1", "r2")
    assert other.call("RENAME", "src", "q") == "OK"
    assert waiter.read_reply() == [b"q", b"r1"]
    assert other.call("LRANGE", "q", "0", "-1") == [b"r2"]
    other.call("DEL", "q")
    block(waiter, other, 1, "BRPOP", "q", "0")
    other.call("RPUSH", "src", "c1", "c2")
    assert other.call("COPY", "src", "q") == 1
    assert waiter.read_reply() == [b"q", b"c2"]
    assert other.call("LRANGE", "q", "0", "-1") == [b"c1"]
    other.call("DEL", "q")
    block(waiter, other, 1, "BLPOP", "q", "0")
    other.call("SELECT", "1")
    other.call("RPUSH", "q", "m1")
    assert other.call("MOVE", "q", "0") == 1
    assert waiter.read_reply() == [b"q", b"m1"]
    other.call("SELECT", "0")
    assert other.call("EXISTS", "q") == 0


def test_blocked_in_another_db(connect):
    waiter, other = connect(), connect()
    waiter.call("SELECT", "3")
    block(waiter, other, 1, "BLPOP", "q", "0")
    assert other.call("RPUSH", "q", "db0") == 1  # database 0: not the waiter's
    assert not has_reply(waiter, 0.2)
    other.call("SELECT", "3")
    assert other.call("RPUSH", "q", "db3") == 1
    assert waiter.read_reply() == [b"q", b"db3"]
    other.call("SELECT", "0")
    assert other.call("LRANGE", "q", "0", "-1") == [b"db0"]


def test_swapdb_serves_a_waiter_whose_key_now_has_elements(connect):
    # Redis 7.0 serves clients blocked in a database that SWAPDB fills.
    waiter, other = connect(), connect()
    waiter.call("SELECT", "2")
    block(waiter, other, 1, "BLPOP", "q", "0")
    assert other.call("RPUSH", "q", "from0") == 1
    assert not has_reply(waiter, 0.2)
    assert other.call("SWAPDB", "0", "2") == "OK"
    assert waiter.read_reply() == [b"q", b"from0"]
    other.call("SELECT", "2")
    assert other.call("EXISTS", "q") == 0


def test_blmove_destination_of_wrong_type(connect):
    waiter, other = connect(), connect()
    block(waiter, other, 1, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
    assert other.call("SET", "dst", "str") == "OK"
    assert other.call("RPUSH", "src", "x") == 1
    # Redis answers the waiter WRONGTYPE and puts the element back
    assert waiter.read_reply() == WRONGTYPE
    assert blocked_clients(other) == 0
    assert other.call("LRANGE", "src", "0", "-1") == [b"x"]
    assert other.call("GET", "dst") == b"str"


# ---- many clients


def test_soak_200_clients_on_20_keys(connect):
    admin = connect()
    keys = [f"soak:{k}" for k in range(20)]
    clients = []
    for i in range(200):
        c = connect()
        cmd = ("BLPOP" if i % 2 else "BRPOP", keys[i % 20], "0")
        if i % 5 == 0:
            cmd = ("BLMPOP", "0", "2", "soak:none", keys[i % 20], "LEFT")
        c.send(*cmd)
        clients.append(c)
    wait_blocked(admin, 200, timeout=30)
    pushed = set()
    pipeline = []
    for k, key in enumerate(keys):
        values = [f"{key}:{n}" for n in range(10)]
        pushed.update(values)
        if k % 2:
            pipeline.append(("RPUSH", key, *values))
        else:
            pipeline.extend(("LPUSH", key, v) for v in values)
    replies = admin.pipeline(pipeline)
    assert all(isinstance(r, int) for r in replies)
    got = []
    for i, c in enumerate(clients):
        reply = c.read_reply()
        if i % 5 == 0:
            key, elements = reply
            assert len(elements) == 1
            value = elements[0]
        else:
            key, value = reply
        assert key == keys[i % 20].encode()
        assert value.decode().startswith(keys[i % 20] + ":")
        got.append(value.decode())
    assert sorted(got) == sorted(pushed)
    assert len(set(got)) == 200
    assert admin.call("EXISTS", *keys) == 0
    assert blocked_clients(admin) == 0


def test_redis_py_blpop_in_threads(clean):
    """redis-py consumers blocked in threads, a producer on its own connection."""
    def client():
        return redis.Redis(host="127.0.0.1", port=clean.port, password=clean.password, decode_responses=True,
                           socket_timeout=30)

    results = []
    lock = threading.Lock()

    def consume():
        c = client()
        try:
            item = c.blpop(["jobs:a", "jobs:b"], timeout=0)
            with lock:
                results.append(item)
        finally:
            c.close()

    threads = [threading.Thread(target=consume) for _ in range(4)]
    for t in threads:
        t.start()
    producer = client()
    with clean.client() as observer:
        wait_blocked(observer, 4)
    assert producer.rpush("jobs:b", "b1", "b2") == 2
    assert producer.rpush("jobs:a", "a1", "a2") == 2
    for t in threads:
        t.join(10)
        assert not t.is_alive()
    assert sorted(results) == [("jobs:a", "a1"), ("jobs:a", "a2"), ("jobs:b", "b1"), ("jobs:b", "b2")]
    assert producer.exists("jobs:a", "jobs:b") == 0
    assert producer.blpop(["jobs:a"], timeout=0.1) is None
    producer.close()


def test_shutdown_with_clients_blocked(start_server):
    # The server exits cleanly (exit code 0; under ASan, no use after free and no leak)
    # while clients wait in blocking commands on several threads.
    srv = start_server(options={"threads": 2})
    waiters = [srv.client() for _ in range(6)]
    with srv.client() as observer:
        for i, w in enumerate(waiters):
            w.send("BLPOP", f"q{i}", "0")
        wait_blocked(observer, len(waiters))
    srv.stop()  # raises unless the exit was clean
    srv.expected_exit = True  # for the fixture's own stop, which finds it gone
    for w in waiters:
        w.close()


# ---- Sorted sets: BZPOPMIN, BZPOPMAX, BZMPOP on the same machinery ----

def test_bzpopmin_and_bzpopmax_served_by_zadd(connect):
    a, b, pusher = connect(), connect(), connect()
    block(a, pusher, 1, "BZPOPMIN", "z1", SPREAD_KEYS[0], "0")
    block(b, pusher, 2, "BZPOPMAX", SPREAD_KEYS[0], "0")
    assert pusher.call("ZADD", SPREAD_KEYS[0], "1", "low", "2", "mid", "3", "high") == 3
    # first come, first served: a takes the minimum, then b the maximum
    assert a.read_reply_raw() == b"*3\r\n$5\r\nalpha\r\n$3\r\nlow\r\n$1\r\n1\r\n"
    assert b.read_reply() == [b"alpha", b"high", b"3"]
    assert pusher.call("ZRANGE", SPREAD_KEYS[0], "0", "-1") == [b"mid"]


def test_bzmpop_with_count_and_timeout(connect):
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BZMPOP", "0", "2", "zz1", "zz2", "MAX", "COUNT", "2")
    assert pusher.call("ZADD", "zz2", "1", "a", "2", "b", "3", "c") == 3
    assert waiter.read_reply() == [b"zz2", [[b"c", b"3"], [b"b", b"2"]]]
    started = time.monotonic()
    waiter.send("BZPOPMIN", "nothing", "0.2")
    assert waiter.read_reply_raw() == NULL_ARRAY
    assert 0.1 <= time.monotonic() - started < 5


def test_blocking_zset_pops_inside_multi_and_wrong_types(connect):
    c = connect()
    assert c.call("MULTI") == "OK"
    c.call("BZPOPMIN", "none", "0")
    c.call("BZMPOP", "0", "1", "none", "MIN")
    assert c.call("EXEC") == [None, None]
    c.call("RPUSH", "alist", "x")
    assert c.call("BZPOPMIN", "alist", "0") == WRONGTYPE
    assert c.call("BZMPOP", "0", "1", "alist", "MIN") == WRONGTYPE
    # a list waiter is not served by a sorted set, nor a sorted-set waiter by a list
    waiter, pusher = connect(), connect()
    block(waiter, pusher, 1, "BZPOPMIN", "shared", "0")
    assert pusher.call("RPUSH", "shared", "x") == 1
    assert not has_reply(waiter, 0.2)
    assert pusher.call("DEL", "shared") == 1
    assert pusher.call("ZADD", "shared", "5", "m") == 1
    assert waiter.read_reply() == [b"shared", b"m", b"5"]
