"""Client-side caching (CLIENT TRACKING), against Debian's redis-server 7.0, over raw RESP3.

  - Differential scenarios (SCENARIOS): several raw connections (those listed in a scenario's
    `resp3` start with HELLO 3), each step one command on one of them; after every step each
    open connection is sent a sentinel PING and everything it received up to the sentinel's
    reply is recorded: the step's reply, the invalidations it got (pushes, or `message`s on
    `__redis__:invalidate` for a RESP2 subscriber that a tracker redirects to) and the
    sentinel's reply. Lapse's record must equal Redis's byte for byte. A step may name
    another connection's client id as ID(n) (REDIRECT ID(1)); ids in replies are compared
    as ID(n) too, since the two servers number their clients differently.
  - Tests of their own, which also run against Redis (LAPSE_TARGET=redis): expiry by the
    background reclaimer (PX 100), tracking-table-max-keys, CLIENT LIST's flags and redir,
    INFO's tracking fields, redis-py 4.3.4's tracking helpers with a redirect to its PubSub.

Waiting is only ever bounded by generous deadlines; no assertion depends on how fast the
machine is.
"""
from __future__ import annotations

import shutil
import threading
import time

import pytest
import redis

from lapse_harness import RawClient, RespError, RespPush, encode_command, parse_reply, wait_until

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")


def invalidate(*keys):
    """A RESP3 invalidation push as the parser decodes it."""
    return RespPush([b"invalidate", [k.encode() for k in keys]])


def pushes_until_pong(c, token=b"done"):
    """Sends PING token and returns everything c received before the reply to it."""
    c.send("PING", token)
    got = []
    while True:
        value = c.read_reply()
        if value == token:
            return got
        got.append(value)


# ---- the differential runner -----------------------------------------------------------


PIPE = "<pipe>"


def pipe(conn, *commands):
    """A step that sends several commands in one write, before the sentinel: CLIENT CACHING's
    answer lasts one command, and the sentinel PING would otherwise be that command."""
    return (conn, PIPE, *commands)


class ID:
    """A connection's client id in a step's arguments."""

    def __init__(self, conn):
        self.conn = conn


class _Conn:
    def __init__(self, port, resp3):
        self.c = RawClient(port)
        self.in_multi = False
        self.closed = False
        if resp3:
            assert self.c.call("HELLO", "3")[b"proto"] == 3
        self.id = self.c.call("CLIENT", "ID")

    def read_until_sentinel(self, token):
        out = []
        while True:
            raw = self.c.read_reply_raw()
            value = parse_reply(raw)[0]
            out.append(raw)
            if value == token or value == [b"pong", token]:
                return out


def _normalize_ids(raw, conns):
    """Client ids (as RESP integers) named by their connection, so both servers compare."""
    for n, conn in enumerate(conns):
        raw = raw.replace(b":%d\r\n" % conn.id, b":ID(%d)\r\n" % n)
    return raw


def _names_ids(raw, cmd):
    """Whether a reply holds client ids: CLIENT ID, GETREDIR and TRACKINGINFO, and the
    tracking-redir-broken push."""
    asked = [str(a).upper() for a in cmd[:2]] in (["CLIENT", "ID"], ["CLIENT", "GETREDIR"])
    return asked or b"redirect" in raw or b"tracking-redir-broken" in raw


def _wait_gone(port, client_id):
    with RawClient(port) as admin:
        wait_until(lambda: admin.call("CLIENT", "LIST", "ID", str(client_id)) in (b"", ""),
                   what=f"client {client_id} to leave")


def run_steps(port, steps, resp3=()):
    """Runs `steps` (conn index, command...) on fresh connections to `port`. Returns one record
    per step: for each open connection, what it received."""
    n = 1 + max(max([st[0]] + [a.conn for a in st if isinstance(a, ID)]) for st in steps)
    with RawClient(port) as admin:
        assert admin.call("FLUSHALL") == "OK"
        assert admin.call("CONFIG", "SET", "tracking-table-max-keys", "1000000") == "OK"
    conns = [_Conn(port, i in resp3) for i in range(n)]
    records = []
    try:
        for k, (i, *cmd) in enumerate(steps):
            if cmd[0] != PIPE:
                cmd = [str(conns[a.conn].id) if isinstance(a, ID) else a for a in cmd]
            token = f"sentinel-{k}".encode()
            name = cmd[0].upper()
            conn = conns[i]
            got = {}
            if cmd[0] == PIPE:
                conn.c.send_raw(b"".join(encode_command(*c) for c in cmd[1:]) + encode_command("PING", token))
                got[i] = conn.read_until_sentinel(token)
            elif name == "QUIT":
                conn.c.send(*cmd)
                got[i] = [conn.c.read_reply_raw(), b"<EOF>" if conn.c.at_eof(10.0) else b"<OPEN>"]
                conn.closed = True
                _wait_gone(port, conn.id)
            elif (conn.in_multi or name == "MULTI") and name not in ("EXEC", "DISCARD"):
                reply = conn.c.call_raw(*cmd)
                if name == "MULTI" and reply == b"+OK\r\n":
                    conn.in_multi = True
                got[i] = [reply]
            else:
                conn.c.send_raw(encode_command(*cmd) + encode_command("PING", token))
                got[i] = conn.read_until_sentinel(token)
                conn.in_multi = False
                if name == "HELLO":  # its reply names the server's version and the client id
                    got[i][0] = got[i][0][:1]
            for j, other in enumerate(conns):
                if j == i or other.closed or other.in_multi:
                    continue
                other.c.send("PING", token)
                got[j] = other.read_until_sentinel(token)
            records.append({j: [_normalize_ids(r, conns) if _names_ids(r, cmd if j == i else ()) else r for r in raws]
                            for j, raws in got.items()})
    finally:
        for conn in conns:
            conn.c.close()
    return records


def assert_same_tracking(steps, server, redis_server, resp3=()):
    expected = run_steps(redis_server.port, steps, resp3)
    actual = run_steps(server.port, steps, resp3)
    diffs = []
    for step, want, got in zip(steps, expected, actual):
        if want != got:
            diffs.append(f"{step}\n      redis: {want!r:.1500}\n      lapse: {got!r:.1500}")
    assert not diffs, "\n".join(diffs)


def TI(conn):
    return (conn, "CLIENT", "TRACKINGINFO")


# Reads a tracker (connection 0) makes and writes another client (connection 1) makes, for
# every family: each write must invalidate the key the read before it tracked.
READ_WRITE_PAIRS = [
    (("GET", "s"), ("SET", "s", "1")), (("STRLEN", "s"), ("APPEND", "s", "x")), (("GETRANGE", "s", "0", "1"), ("SETRANGE", "s", "0", "y")),
    (("GET", "s"), ("INCR", "n")), (("GET", "n"), ("INCRBY", "n", "2")), (("GET", "n"), ("DECR", "n")),
    (("GET", "n"), ("INCRBYFLOAT", "n", "1.5")), (("MGET", "s", "n"), ("MSET", "s", "2", "n", "3")),
    (("EXISTS", "s"), ("EXPIRE", "s", "100")), (("TTL", "s"), ("PERSIST", "s")), (("TYPE", "s"), ("DEL", "s")),
    (("GET", "n"), ("GETDEL", "n")), (("GET", "e"), ("SET", "e", "v", "EX", "100")), (("GET", "e"), ("GETEX", "e", "PERSIST")),
    (("LRANGE", "l", "0", "-1"), ("RPUSH", "l", "a", "b", "c")), (("LLEN", "l"), ("LPOP", "l")), (("LINDEX", "l", "0"), ("LSET", "l", "0", "z")),
    (("LRANGE", "l", "0", "-1"), ("LMOVE", "l", "l2", "LEFT", "RIGHT")), (("LLEN", "l2"), ("LTRIM", "l2", "1", "0")),
    (("SMEMBERS", "st"), ("SADD", "st", "a", "b")), (("SCARD", "st"), ("SREM", "st", "a")), (("SISMEMBER", "st", "b"), ("SPOP", "st")),
    (("HGETALL", "h"), ("HSET", "h", "f", "v", "g", "w")), (("HGET", "h", "f"), ("HDEL", "h", "f")), (("HLEN", "h"), ("HINCRBY", "h", "c", "1")),
    (("ZRANGE", "z", "0", "-1"), ("ZADD", "z", "1", "a", "2", "b")), (("ZSCORE", "z", "a"), ("ZINCRBY", "z", "1", "a")),
    (("ZCARD", "z"), ("ZREM", "z", "a")), (("ZRANGE", "z", "0", "-1"), ("ZPOPMIN", "z")),
    (("SMEMBERS", "dst"), ("SUNIONSTORE", "dst", "st", "nosuch")), (("GET", "src"), ("SET", "src", "v")),
    (("GET", "dst2"), ("COPY", "src", "dst2")), (("GET", "src"), ("RENAME", "src", "moved")), (("GET", "moved"), ("MOVE", "moved", "1")),
    (("PFCOUNT", "hll"), ("PFADD", "hll", "a", "b")),
    # PFCOUNT writes its cached estimate back, which Redis counts as a change.
    (("GET", "hll"), ("PFCOUNT", "hll")), (("GET", "hll"), ("PFCOUNT", "hll")),
    (("STRLEN", "dense"), ("PFADD", "dense", *[f"e{i}" for i in range(3000)])),
    (("STRLEN", "dense"), ("PFADD", "dense", "one-more")), (("STRLEN", "dense"), ("PFADD", "dense", "one-more")), (("GETBIT", "bits", "3"), ("SETBIT", "bits", "3", "1")),
    (("GEOPOS", "geo", "x"), ("GEOADD", "geo", "13.36", "38.11", "x")), (("GET", "nosuch"), ("DEL", "nosuch")),
    (("GET", "sorted"), ("SORT", "l", "ALPHA", "STORE", "sorted")),
    # Commands that name their keys by count.
    (("ZUNION", "2", "z", "z2"), ("ZADD", "z2", "1", "m")), (("ZINTER", "2", "z", "z2"), ("ZADD", "z", "3", "n")),
    (("ZDIFF", "2", "z2", "z"), ("ZREM", "z2", "m")), (("ZINTERCARD", "2", "z", "z3"), ("ZADD", "z3", "1", "n")),
    (("SINTERCARD", "2", "st", "st2"), ("SADD", "st2", "b")), (("SINTERCARD", "1", "st3"), ("SADD", "st3", "x")),
    (("ZUNION", "3", "z4", "z5"), ("ZADD", "z4", "1", "x")), (("SORT_RO", "l2", "ALPHA"), ("RPUSH", "l2", "q")),
    (("ZUNION", "1", "z6", "z7"), ("ZADD", "z7", "1", "x")), (("GET", "z7"), ("DEL", "z7")),
]


def _read_write_steps():
    steps = [(0, "CLIENT", "TRACKING", "on")]
    for read, write in READ_WRITE_PAIRS:
        steps += [(0, *read), (1, *write)]
    return steps


SCENARIOS = {
    "reads_then_writes_of_every_family": (_read_write_steps(), (0,)),
    "default_mode": ([
        (0, "CLIENT", "TRACKING", "on"), TI(0), (0, "CLIENT", "GETREDIR"), (0, "GET", "k"), (1, "SET", "k", "v"),
        # Told once: the next change goes unreported until the key is read again.
        (1, "SET", "k", "w"), (0, "GET", "k"), (0, "GET", "k"), (1, "DEL", "k"),
        # The client's own change comes after its reply.
        (0, "GET", "k"), (0, "SET", "k", "mine"), (0, "MGET", "a", "b", "c"), (0, "MSET", "a", "1", "c", "3"),
        # Databases do not matter to the table: a write in another database invalidates.
        (0, "GET", "k"), (1, "SELECT", "1"), (1, "SET", "k", "db1"), (1, "SELECT", "0"),
        # A failed read still tracks its key; a rejected command does not.
        (1, "RPUSH", "list", "x"), (0, "GET", "list"), (1, "RPUSH", "list", "y"), (0, "GET", "x", "y"),
        (1, "SET", "x", "1"),
        # Pipelined: each own change is told right after the reply of the command that made it.
        pipe(0, ("GET", "k"), ("SET", "k", "v"), ("GET", "k"), ("SET", "k", "w"), ("GET", "k")),
        pipe(1, ("SET", "k", "x"), ("GET", "k"), ("SET", "k", "y")),
        (0, "CLIENT", "TRACKING", "off"), TI(0), (0, "CLIENT", "GETREDIR"), (0, "GET", "k"),
        (1, "SET", "k", "after-off"),
    ], (0,)),
    "resp2_tracker_without_redirect_hears_nothing": ([
        (0, "CLIENT", "TRACKING", "on"), TI(0), (0, "GET", "k"), (1, "SET", "k", "v"), (0, "SET", "k", "w"),
        (0, "FLUSHALL"),
    ], ()),
    "bcast_prefixes": ([
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b"), TI(0),
        (1, "MSET", "b2", "1", "a1", "2", "zz", "3", "b1", "x"), (1, "SET", "a", "1"), (0, "SET", "a", "2"),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c"), TI(0), (1, "SET", "c1", "x"),
        (1, "MULTI"), (1, "SET", "a9", "1"), (1, "SET", "c9", "1"), (1, "SET", "a0", "2"), (1, "EXEC"),
        # A pipeline's changes go out together, after its replies, as Redis batches them per
        # event-loop turn.
        pipe(1, ("SET", "a5", "1"), ("SET", "b5", "1"), ("SET", "a4", "1"), ("DEL", "a5")),
        pipe(0, ("SET", "a7", "1"), ("SET", "a6", "2"), ("SET", "c7", "2")),
        # Reads track nothing in BCAST mode.
        (0, "GET", "zz"), (1, "SET", "zz", "4"), (1, "DEL", "nosuch"), (0, "CLIENT", "TRACKING", "off"), TI(0),
        (1, "SET", "a1", "x"),
        # With no prefix every key is broadcast.
        (0, "CLIENT", "TRACKING", "on", "BCAST"), TI(0), (1, "MSET", "q", "1", "p", "2"),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x"), (2, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "q"),
        (1, "SET", "q1", "v"), (2, "CLIENT", "TRACKING", "off"), (1, "SET", "q2", "v"),
    ], (0, 2)),
    "noloop": ([
        (0, "CLIENT", "TRACKING", "on", "NOLOOP"), TI(0), (0, "GET", "n1"), (0, "GET", "n2"), (0, "SET", "n1", "x"),
        (1, "SET", "n2", "y"), (0, "GET", "n1"), (0, "FLUSHDB"), (0, "CLIENT", "TRACKING", "off"),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"), TI(0), (0, "MSET", "n1", "x", "n3", "y"),
        (1, "SET", "n2", "y"), (0, "MULTI"), (0, "SET", "n1", "x"), (0, "SET", "n4", "y"), (0, "EXEC"),
        (1, "MSET", "n1", "a", "n5", "b"),
        # Redis credits a script's changes to the script, and expiry to nobody: BCAST's NOLOOP
        # leaves neither out.
        (0, "EVAL", "redis.call('set','n6','1') return 1", "0"),
        (1, "DEBUG", "SET-ACTIVE-EXPIRE", "0"), (0, "SET", "n7", "1", "PX", "1"), (1, "DEBUG", "SLEEP", "0.01"),
        (0, "GET", "n7"), (1, "DEBUG", "SET-ACTIVE-EXPIRE", "1"), (0, "FLUSHALL"),
        # The default mode's NOLOOP goes by the client running the command, scripts included.
        (0, "CLIENT", "TRACKING", "off"), (0, "CLIENT", "TRACKING", "on", "NOLOOP"), (0, "GET", "n6"),
        (0, "EVAL", "redis.call('set','n6','2') return 1", "0"), (1, "SET", "n6", "3"),
    ], (0,)),
    "optin": ([
        (0, "CLIENT", "TRACKING", "on", "OPTIN"), TI(0), (0, "GET", "o1"),
        pipe(0, ("CLIENT", "CACHING", "yes"), ("CLIENT", "TRACKINGINFO"), ("GET", "o2"), ("CLIENT", "TRACKINGINFO"),
             ("GET", "o3")),
        # The answer holds for a whole transaction.
        pipe(0, ("CLIENT", "CACHING", "yes"), ("MULTI",), ("GET", "o4"), ("GET", "o5"), ("EXEC",), ("GET", "o6")),
        # Any other command uses it up, even one refused, except another CLIENT subcommand.
        pipe(0, ("CLIENT", "CACHING", "yes"), ("PING",), ("GET", "o7")),
        pipe(0, ("CLIENT", "CACHING", "yes"), ("FOO",), ("GET", "o8")),
        pipe(0, ("CLIENT", "CACHING", "yes"), ("CLIENT", "GETNAME"), ("GET", "o9")),
        pipe(0, ("CLIENT", "CACHING", "yes"), ("MGET", "o10", "o11")),
        pipe(0, ("CLIENT", "CACHING", "yes"), ("GET", "a", "b"), ("GET", "o12")),
        pipe(0, ("CLIENT", "CACHING", "yes"), ("CLIENT", "NOSUCH"), ("GET", "o13")),
        (1, "MSET", *[x for i in range(1, 14) for x in (f"o{i}", "v")]),
        (0, "CLIENT", "CACHING", "no"), (0, "CLIENT", "CACHING", "maybe"),
    ], (0,)),
    "optout": ([
        (0, "CLIENT", "TRACKING", "on", "OPTOUT"), TI(0), (0, "GET", "p1"),
        pipe(0, ("CLIENT", "CACHING", "no"), ("CLIENT", "TRACKINGINFO"), ("GET", "p2")), (0, "GET", "p3"),
        pipe(0, ("CLIENT", "CACHING", "no"), ("MULTI",), ("GET", "p4"), ("EXEC",)),
        (0, "GET", "p5"), (1, "MSET", "p1", "1", "p2", "2", "p3", "3", "p4", "4", "p5", "5"),
        (0, "CLIENT", "CACHING", "yes"), (0, "CLIENT", "TRACKING", "on", "OPTIN"), (0, "CLIENT", "TRACKING", "on", "OPTOUT"),
        TI(0), (0, "CLIENT", "TRACKING", "on"), TI(0),
    ], (0,)),
    "redirect": ([
        # 1: a RESP2 subscriber; 2: a RESP2 writer; 3: a RESP2 tracker; 4: a RESP3 client.
        (1, "SUBSCRIBE", "__redis__:invalidate"),
        (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1)), TI(0), (0, "CLIENT", "GETREDIR"),
        (0, "GET", "k"), (2, "SET", "k", "1"), (0, "GET", "k"), (0, "SET", "k", "self"),
        # A RESP3 tracker's flush null travels in its own protocol, even to a RESP2 subscriber.
        (0, "GET", "k"), (2, "FLUSHALL"),
        (3, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1)), (3, "GET", "k"), (2, "SET", "k", "2"), (3, "GET", "k"),
        (2, "FLUSHDB"), (3, "CLIENT", "TRACKING", "off"), (3, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1), "BCAST"),
        (2, "MSET", "k", "2", "j", "3"), (3, "CLIENT", "TRACKING", "off"),
        # To a RESP2 client that is not subscribed nothing can be sent.
        (3, "CLIENT", "TRACKING", "on", "REDIRECT", ID(2)), (3, "GET", "k"), (2, "SET", "k", "3"),
        # To a RESP3 client: a push, subscribed or not.
        (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(4)), TI(0), (0, "GET", "k"), (2, "SET", "k", "4"),
        (0, "GET", "k"), (2, "FLUSHDB"), (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(0)), (0, "GET", "k"),
        (2, "SET", "k", "5"), (1, "UNSUBSCRIBE"), (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1)), (0, "GET", "k"),
        (2, "SET", "k", "6"),
    ], (0, 4)),
    "broken_redirect": ([
        (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1)), (3, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1)),
        (1, "QUIT"), (0, "GET", "k"), (3, "GET", "k"), (2, "SET", "k", "1"), TI(0), TI(3), (0, "CLIENT", "GETREDIR"),
        (0, "GET", "k"), (2, "SET", "k", "2"), (0, "GET", "k"), (2, "FLUSHALL"),
        (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(2)), TI(0), (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1)),
        TI(0),
    ], (0,)),
    "flush": ([
        (0, "CLIENT", "TRACKING", "on"), (3, "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"),
        (1, "FLUSHDB"), (0, "FLUSHDB"), (3, "FLUSHALL"), (0, "GET", "k"), (1, "FLUSHALL", "ASYNC"),
        (1, "SET", "k", "v"), (0, "GET", "k"), (1, "SELECT", "2"), (1, "FLUSHDB", "SYNC"), (1, "SET", "k", "w"),
    ], (0, 3)),
    "transactions": ([
        (0, "CLIENT", "TRACKING", "on"), (0, "GET", "t1"), (0, "GET", "t2"),
        (0, "MULTI"), (0, "SET", "t1", "x"), (0, "GET", "t1"), (0, "SET", "t2", "y"), (0, "EXEC"),
        (1, "MULTI"), (1, "SET", "t1", "x"), (1, "INCR", "t3"), (1, "EXEC"),
        (0, "MULTI"), (0, "GET", "t3"), (0, "EXEC"), (1, "MULTI"), (1, "DEL", "t3"), (1, "DISCARD"), (1, "DEL", "t3"),
    ], (0,)),
    "scripts": ([
        (0, "CLIENT", "TRACKING", "on"),
        (0, "EVAL", "return redis.call('get',KEYS[1])", "1", "k1"),
        (0, "EVAL", "return redis.call('get','k2')", "0"),
        (0, "EVAL_RO", "return redis.call('get','k3')", "1", "k4"),
        (0, "EVAL", "return redis.call('set',KEYS[1],'x')", "1", "k6"),
        (1, "MSET", "k1", "1", "k2", "2", "k3", "3", "k4", "4", "k6", "6"),
        (0, "GET", "k5"), (0, "EVAL", "redis.call('set','k5','x') return redis.call('get','k5')", "0"),
        (0, "GET", "k7"), (1, "EVAL", "return redis.call('incr',KEYS[1])", "1", "k7"),
        (0, "MULTI"), (0, "EVAL", "return redis.call('get',KEYS[1])", "1", "k8"), (0, "EXEC"),
        (1, "SET", "k8", "v"),
    ], (0,)),
    "errors_change_nothing": ([
        (1, "CLIENT", "ID"),
        *[(0, *cmd) for cmd in [
            ("CLIENT", "TRACKING"), ("CLIENT", "TRACKING", "maybe"), ("CLIENT", "TRACKING", "on", "foo"),
            ("CLIENT", "TRACKING", "on", "PREFIX", "a"), ("CLIENT", "TRACKING", "on", "PREFIX"),
            ("CLIENT", "TRACKING", "on", "REDIRECT"), ("CLIENT", "TRACKING", "on", "REDIRECT", "abc"),
            ("CLIENT", "TRACKING", "on", "REDIRECT", "999999"), ("CLIENT", "TRACKING", "on", "REDIRECT", "0"),
            ("CLIENT", "TRACKING", "on", "REDIRECT", "-1"), ("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"),
            ("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"), ("CLIENT", "TRACKING", "on", "BCAST", "OPTOUT"),
            ("CLIENT", "TRACKING", "on", "BCAST", "OPTIN", "OPTOUT"), ("CLIENT", "TRACKING", "on", "PREFIX", "a", "OPTIN", "OPTOUT"),
            ("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT", "REDIRECT", "999999"),
            ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
            ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab"),
            ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "x"),
            ("CLIENT", "TRACKING", "off", "foo"), ("CLIENT", "TRACKING", "maybe", "REDIRECT", "999999"),
            ("CLIENT", "CACHING"), ("CLIENT", "CACHING", "yes"), ("CLIENT", "CACHING", "maybe"), ("CLIENT", "CACHING", "yes", "x"),
            ("CLIENT", "GETREDIR", "x"), ("CLIENT", "TRACKINGINFO", "x"), ("CLIENT", "TRACKING", "off", "BCAST", "PREFIX", "a"),
        ]],
        TI(0), (0, "CLIENT", "GETREDIR"), (0, "GET", "k"), (1, "SET", "k", "v"),
        (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1), "REDIRECT", ID(1)),
        (0, "CLIENT", "TRACKING", "on", "REDIRECT", ID(1), "REDIRECT", "999999"), TI(0),
        # Refused while on: switching BCAST or OPTIN/OPTOUT, overlapping an existing prefix.
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b", "NOLOOP"),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab"), (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b"),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", ""), (0, "CLIENT", "TRACKING", "on"), TI(0),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c"), TI(0), (0, "CLIENT", "TRACKING", "off"),
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", ""), (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x"),
        TI(0), (0, "CLIENT", "TRACKING", "off"), (0, "CLIENT", "TRACKING", "on", "noloop", "noloop", "optin", "optin"), TI(0),
        (0, "CLIENT", "TRACKING", "on", "BCAST"), (0, "CLIENT", "TRACKING", "on", "OPTOUT"), TI(0),
        (0, "CLIENT", "CACHING", "no"), (0, "CLIENT", "CACHING", "maybe"), TI(0),
        (0, "CONFIG", "SET", "tracking-table-max-keys", "-1"), (0, "CONFIG", "SET", "tracking-table-max-keys", "abc"),
        (0, "CONFIG", "GET", "tracking-table-max-keys"),
    ], (0,)),
    # Redis 7.0 publishes these stream changes without signalModifiedKey, so a cached XRANGE
    # stays valid through them; XGROUP CREATE ... MKSTREAM that makes the stream does
    # invalidate, and so does XADD.
    "stream_groups_and_xsetid_keep_caches": ([
        (0, "CLIENT", "TRACKING", "on"), (1, "XADD", "x", "1-1", "f", "v"), (1, "XADD", "x", "2-1", "f", "w"),
        (0, "XRANGE", "x", "-", "+"), (0, "XLEN", "x"),
        (1, "XSETID", "x", "5-0"), (1, "XSETID", "x", "9-0", "ENTRIESADDED", "7", "MAXDELETEDID", "3-0"),
        (1, "XGROUP", "CREATE", "x", "g", "0"), (1, "XGROUP", "SETID", "x", "g", "1-1"),
        (1, "XGROUP", "CREATECONSUMER", "x", "g", "c1"), (1, "XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", ">"),
        (1, "XCLAIM", "x", "g", "c3", "0", "2-1"), (1, "XAUTOCLAIM", "x", "g", "c4", "0", "0", "JUSTID"),
        (1, "XACK", "x", "g", "2-1"), (1, "XGROUP", "DELCONSUMER", "x", "g", "c2"), (1, "XGROUP", "DESTROY", "x", "g"),
        (1, "MULTI"), (1, "XGROUP", "CREATE", "x", "g2", "$"), (1, "XSETID", "x", "10-0"), (1, "EXEC"),
        (1, "EVAL", "redis.call('xgroup','create',KEYS[1],'g3','0') return redis.call('xsetid',KEYS[1],'11-0')", "1", "x"),
        (0, "XINFO", "STREAM", "x"),
        (1, "XADD", "x", "12-0", "f", "v"),
        (0, "XLEN", "y"), (1, "XGROUP", "CREATE", "y", "g", "$", "MKSTREAM"),
        (0, "XLEN", "y"), (1, "XGROUP", "CREATE", "y", "g2", "$", "MKSTREAM"), (1, "DEL", "y"),
    ], (0,)),
    "reset_turns_tracking_off": ([
        (0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "r"), (0, "RESET"), (0, "HELLO", "3"), TI(0),
        (1, "SET", "r1", "x"), (0, "CLIENT", "TRACKING", "on"), (0, "GET", "k"), (0, "RESET"), (0, "HELLO", "3"),
        (1, "SET", "k", "v"),
    ], (0,)),
}


@needs_redis
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_redis(server, redis_server, name):
    steps, resp3 = SCENARIOS[name]
    assert_same_tracking(steps, server, redis_server, resp3)


# ---- exact expectations, also run against Redis ------------------------------------------


def resp3_client(srv):
    c = srv.client()
    assert c.call("HELLO", "3")[b"proto"] == 3
    return c


def test_invalidation_push_bytes(clean):
    with resp3_client(clean) as tracker, clean.client() as writer:
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        assert tracker.call_raw("GET", "key") == b"_\r\n"
        assert writer.call("SET", "key", "v") == "OK"
        tracker.send("PING")
        assert tracker.read_reply_raw() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n"
        assert tracker.read_reply_raw() == b"+PONG\r\n"


def test_a_blocked_client_gets_invalidations_at_once(clean):
    """Redis 7.0 writes an invalidation to a client blocked in BLPOP at once."""
    with resp3_client(clean) as tracker, clean.client() as writer:
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        assert tracker.call_raw("GET", "tk") == b"_\r\n"
        tracker.send("BLPOP", "q", "0")
        deadline = time.monotonic() + 20
        while b"blocked_clients:1\r\n" not in writer.call("INFO", "clients"):
            assert time.monotonic() < deadline, "the client never blocked"
            time.sleep(0.01)
        assert writer.call("SET", "tk", "v") == "OK"
        assert tracker.read_reply_raw() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\ntk\r\n"
        assert writer.call("RPUSH", "q", "x") == 1
        assert tracker.read_reply() == [b"q", b"x"]


def test_expiry_by_the_reclaimer_invalidates(clean):
    """A key read while it had PX 100 is invalidated when it expires, with no command naming it."""
    with resp3_client(clean) as tracker, clean.client() as writer:
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        # The read must come before the deadline; a machine too slow for that tries again.
        for attempt in range(10):
            key = f"short{attempt}"
            assert writer.call("SET", key, "v", "PX", "100") == "OK"
            if tracker.call("GET", key) == b"v":
                break
            assert pushes_until_pong(tracker) == []
        else:
            pytest.fail("never read the key before its deadline")
        deadline = time.monotonic() + 20
        got = []
        while not got and time.monotonic() < deadline:
            got = pushes_until_pong(tracker)
            time.sleep(0.02)
        assert got == [invalidate(key)]
        assert writer.call("EXISTS", key) == 0


def test_lazy_expiry_invalidates(clean):
    """With the reclaimer off, a read that meets an expired key deletes it: its trackers are
    told, the reader itself after its reply if it tracked the key before, not at all if not."""
    with resp3_client(clean) as tracker, clean.client() as other:
        assert other.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
        try:
            assert other.call("SET", "lazy", "v", "PX", "50") == "OK"
            assert other.call("SET", "mine", "v", "PX", "50") == "OK"
            assert other.call("SET", "untracked", "v", "PX", "50") == "OK"
            assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
            assert tracker.call("MGET", "lazy", "mine") == [b"v", b"v"]
            time.sleep(0.15)
            assert pushes_until_pong(tracker) == []
            assert other.call("GET", "lazy") is None
            assert pushes_until_pong(tracker) == [invalidate("lazy")]
            tracker.send("GET", "mine")
            assert tracker.read_reply_raw() == b"_\r\n"
            assert pushes_until_pong(tracker) == [invalidate("mine")]
            assert tracker.call("GET", "untracked") is None
            assert pushes_until_pong(tracker) == []
            # Read, even as absent, it is tracked now.
            assert other.call("SET", "untracked", "again") == "OK"
            assert pushes_until_pong(tracker) == [invalidate("untracked")]
        finally:
            assert other.call("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"


@pytest.mark.lapse_only
def test_hash_fields_expiring_invalidate(clean):
    """Redis 7.4's field deadlines (HPEXPIRE): a field that expires by itself changes the hash."""
    with resp3_client(clean) as tracker, clean.client() as writer:
        assert writer.call("HSET", "h", "a", "1", "b", "2") == 2
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        assert tracker.call("HLEN", "h") == 2
        assert writer.call("HPEXPIRE", "h", "500", "FIELDS", "1", "a") == [1]
        assert pushes_until_pong(tracker) == [invalidate("h")]
        assert tracker.call("HLEN", "h") == 2  # read well before the deadline
        deadline = time.monotonic() + 20
        got = []
        while not got and time.monotonic() < deadline:
            got = pushes_until_pong(tracker)
            time.sleep(0.02)
        assert got == [invalidate("h")]
        assert writer.call("HGETALL", "h") == [b"b", b"2"]


@pytest.mark.lapse_only
def test_a_busy_script_still_writes_as_its_client(start_server):
    """A busy script steps aside for the other clients of its thread; its writes afterwards
    are still its client's own: NOLOOP keeps them from it."""
    srv = start_server(options={"threads": 1})
    with resp3_client(srv) as tracker, srv.client() as other:
        assert other.call("CONFIG", "SET", "busy-reply-threshold", "50") == "OK"
        assert tracker.call("CLIENT", "TRACKING", "on", "NOLOOP") == "OK"
        assert tracker.call("GET", "k") is None
        tracker.send("EVAL", "local t = redis.call('TIME') local stop = t[1] * 1000000 + t[2] + 400000 "
                     "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] > stop "
                     "return redis.call('SET', KEYS[1], 'v')", "1", "k")
        # Commands served while the script is busy run as the thread's tracking context too.
        deadline = time.monotonic() + 20
        while other.call("GET", "x") != RespError(BUSY) and time.monotonic() < deadline:
            pass
        for _ in range(20):
            assert other.call("MULTI") == "OK"
            assert other.call("DISCARD") == "OK"
        assert tracker.read_reply() == "OK"
        assert pushes_until_pong(tracker) == []
        assert other.call("SET", "k", "w") == "OK"
        assert pushes_until_pong(tracker) == []  # the script's own write ended the tracking


BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."


@pytest.fixture
def max_keys(clean):
    yield
    with clean.client() as c:
        assert c.call("CONFIG", "SET", "tracking-table-max-keys", "1000000") == "OK"


def tracking_stats(c):
    text = c.call("INFO", "stats").decode()
    fields = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
    return {k: int(fields[k]) for k in ("tracking_total_keys", "tracking_total_items", "tracking_total_prefixes")}


def test_tracking_table_max_keys_evicts_and_invalidates(clean, max_keys):
    with resp3_client(clean) as tracker, clean.client() as admin:
        assert admin.call("CONFIG", "SET", "tracking-table-max-keys", "2") == "OK"
        assert admin.call("CONFIG", "GET", "tracking-table-max-keys") == [b"tracking-table-max-keys", b"2"]
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        assert tracker.call("MGET", "m1", "m2") == [None, None]
        assert pushes_until_pong(tracker) == []
        assert tracking_stats(admin)["tracking_total_keys"] == 2
        # A third key takes the table over its limit: one of the three is evicted, and its
        # reader told, once the command is done.
        assert tracker.call("GET", "m3") is None
        evicted = pushes_until_pong(tracker)
        assert len(evicted) == 1 and evicted[0][0] == b"invalidate"
        assert evicted[0][1][0] in (b"m1", b"m2", b"m3")
        assert tracking_stats(admin)["tracking_total_keys"] == 2
        # 0 means no limit.
        assert admin.call("CONFIG", "SET", "tracking-table-max-keys", "0") == "OK"
        assert tracker.call("MGET", "a", "b", "c", "d") == [None] * 4
        assert pushes_until_pong(tracker) == []
        assert tracking_stats(admin)["tracking_total_keys"] == 6


def test_info_counts_clients_keys_items_and_prefixes(clean):
    with resp3_client(clean) as a, resp3_client(clean) as b, clean.client() as admin:
        assert admin.call("INFO", "clients").decode().count("tracking_clients:0") == 1
        assert a.call("CLIENT", "TRACKING", "on") == "OK"
        assert b.call("CLIENT", "TRACKING", "on") == "OK"
        assert a.call("MGET", "x", "y") == [None, None]
        assert b.call("GET", "x") is None
        assert "tracking_clients:2\r\n" in admin.call("INFO", "clients").decode()
        assert tracking_stats(admin) == {"tracking_total_keys": 2, "tracking_total_items": 3, "tracking_total_prefixes": 0}
        assert a.call("CLIENT", "TRACKING", "off") == "OK"
        assert a.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p", "PREFIX", "q") == "OK"
        assert b.call("CLIENT", "TRACKING", "off") == "OK"
        assert b.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "q") == "OK"
        assert tracking_stats(admin)["tracking_total_prefixes"] == 2
        # The keys stay in the table until they change or a flush drops them, as in Redis.
        assert tracking_stats(admin)["tracking_total_keys"] == 2
        assert admin.call("SET", "x", "1") == "OK"
        assert tracking_stats(admin)["tracking_total_keys"] == 1
        assert admin.call("FLUSHALL") == "OK"
        assert tracking_stats(admin)["tracking_total_keys"] == 0
    with clean.client() as admin:
        wait_until(lambda: "tracking_clients:0\r\n" in admin.call("INFO", "clients").decode(),
                   what="closed trackers to be counted out")
        wait_until(lambda: tracking_stats(admin)["tracking_total_prefixes"] == 0, what="their prefixes to go")


@pytest.mark.lapse_only
def test_items_are_not_tracked(clean):
    """Container items are not keys: reading one records nothing (not even the container's
    name as a key), and a key of the same name stays untracked."""
    with resp3_client(clean) as tracker, clean.client() as admin:
        assert admin.call("IPUT", "box", "item1", '{"a":1}') is not None
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        assert tracker.call("IGET", "box", "item1") is not None
        assert tracking_stats(admin)["tracking_total_keys"] == 0
        assert admin.call("SET", "box", "v") == "OK"
        assert pushes_until_pong(tracker) == []


def client_fields(c, client_id):
    line = c.call("CLIENT", "LIST", "ID", str(client_id)).decode().strip()
    return dict(f.split("=", 1) for f in line.split(" "))


def test_client_list_shows_tracking_flags_and_redirect(clean):
    with resp3_client(clean) as a, clean.client() as target, clean.client() as admin:
        a_id, target_id = a.call("CLIENT", "ID"), target.call("CLIENT", "ID")
        assert client_fields(admin, a_id)["flags"] == "N"
        assert client_fields(admin, a_id)["redir"] == "-1"
        assert a.call("CLIENT", "TRACKING", "on") == "OK"
        assert (client_fields(admin, a_id)["flags"], client_fields(admin, a_id)["redir"]) == ("t", "0")
        assert a.call("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id)) == "OK"
        assert client_fields(admin, a_id)["redir"] == str(target_id)
        assert a.call("GET", "k") is None
        target.close()
        wait_until(lambda: admin.call("CLIENT", "LIST", "ID", str(target_id)) in (b"", ""), what="target to go")
        assert admin.call("SET", "k", "v") == "OK"
        assert pushes_until_pong(a) == [RespPush([b"tracking-redir-broken", target_id])]
        assert client_fields(admin, a_id)["flags"] == "tR"
        assert a.call("CLIENT", "TRACKING", "off") == "OK"
        assert a.call("CLIENT", "TRACKING", "on", "BCAST") == "OK"
        assert client_fields(admin, a_id)["flags"] == "tB"
        assert a.call("CLIENT", "INFO").decode().split(" flags=")[1].startswith("tB ")


def test_delivery_across_threads_reaches_every_tracker(clean):
    """Trackers on every event-loop thread each hear of a write made on another."""
    trackers = [resp3_client(clean) for _ in range(6)]
    try:
        with clean.client() as writer:
            for t in trackers:
                assert t.call("CLIENT", "TRACKING", "on") == "OK"
                assert t.call("GET", "shared") is None
            assert writer.call("SET", "shared", "v") == "OK"
            for t in trackers:
                assert t.read_reply() == invalidate("shared")
    finally:
        for t in trackers:
            t.close()


def test_a_cache_kept_by_the_invalidations_never_stays_stale(clean):
    """A tracker caches what it reads and drops what it is told of, while writers on other
    connections (other threads) keep changing the keys. Once they stop and the tracker has read
    everything sent to it, every cached value must be the stored one: an invalidation may never
    come before the reply it invalidates."""
    keys = [f"hot{i}" for i in range(8)]
    stop = threading.Event()

    def write(n):
        with clean.client() as w:
            i = 0
            while not stop.is_set():
                w.call("SET", keys[(i * 7 + n) % len(keys)], f"{n}:{i}")
                i += 1

    cache = {}

    def absorb(value):
        """Applies a push to the cache; False when `value` is a reply."""
        if not isinstance(value, RespPush):
            return False
        assert value[0] == b"invalidate"
        if value[1] is None:
            cache.clear()
        else:
            for k in value[1]:
                cache.pop(k.decode(), None)
        return True

    with resp3_client(clean) as tracker:
        assert tracker.call("CLIENT", "TRACKING", "on") == "OK"
        writers = [threading.Thread(target=write, args=(n,)) for n in range(3)]
        for t in writers:
            t.start()
        try:
            deadline = time.monotonic() + 1.5
            i = 0
            while time.monotonic() < deadline:
                key = keys[i % len(keys)]
                i += 1
                if key in cache:
                    continue
                tracker.send("GET", key)
                while absorb(value := tracker.read_reply()):
                    pass
                cache[key] = value
        finally:
            stop.set()
            for t in writers:
                t.join()
        tracker.send("PING", "drained")
        while absorb(value := tracker.read_reply()):
            pass
        assert value == b"drained"
        with clean.client() as admin:
            stale = {k: (v, admin.call("GET", k)) for k, v in cache.items() if admin.call("GET", k) != v}
        assert not stale, f"cached values the server no longer holds: {stale}"


def test_redis_py_helpers_with_a_redirect_to_its_pubsub(clean):
    """redis-py 4.3.4 (RESP2 only) has client_tracking_on and client_trackinginfo: tracking that
    redirects to its PubSub connection, subscribed to __redis__:invalidate."""
    r = redis.Redis(host="127.0.0.1", port=clean.port, password=clean.password, single_connection_client=True)
    listener = redis.Redis(host="127.0.0.1", port=clean.port, password=clean.password)
    pubsub = listener.pubsub()
    try:
        pubsub.subscribe("__redis__:invalidate")
        confirmation = pubsub.get_message(timeout=10)
        assert confirmation["type"] == "subscribe"
        # A RESP2 subscriber may not run CLIENT ID: it is the client with flag P.
        subscribers = [line for line in r.client_list() if "P" in line["flags"]]
        assert len(subscribers) == 1
        listener_id = int(subscribers[0]["id"])
        assert r.client_tracking_on(clientid=listener_id) == b"OK"
        info = r.client_trackinginfo()
        assert info == ["flags", [b"on"], "redirect", listener_id, "prefixes", []]
        assert r.client_getredir() == listener_id
        assert r.get("cached") is None
        assert r.set("cached", "v") is True
        message = None
        deadline = time.monotonic() + 20
        while message is None and time.monotonic() < deadline:
            message = pubsub.get_message(timeout=1)
        assert message == {"type": "message", "pattern": None, "channel": b"__redis__:invalidate",
                           "data": [b"cached"]}
        assert r.client_tracking_off() == b"OK"
        assert r.client_getredir() == -1
        with pytest.raises(redis.ResponseError, match="PREFIX option requires BCAST"):
            r.execute_command("CLIENT", "TRACKING", "on", "PREFIX", "a")
    finally:
        pubsub.close()
        listener.close()
        r.close()
