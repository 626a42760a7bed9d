"""Pub/Sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB,
RESP2 subscribed mode and RESP3 pushes, on lapse started with --threads 1, 2 and 4 (conftest's
`server`), against Debian's redis-server 7.0 where the replies are compared byte for byte.

  - Differential scenarios (SCENARIOS): several raw connections, each step one command on one of
    them; after every step each open connection is sent a sentinel PING and everything it
    received up to the sentinel's reply is recorded (the step's replies, the messages it got,
    and the sentinel's own reply, which shows whether it is in RESP2 subscribed mode). Lapse's
    record must equal Redis's byte for byte, except for steps marked `sorted`, whose replies
    come in a hash table's order and are compared sorted.
  - Tests with exact bytes of their own, which also run against Redis (LAPSE_TARGET=redis).
  - Delivery across threads, two publishers, the pubsub output-buffer limit, the idle timeout.
  - redis-py's PubSub object (get_message, listen, run_in_thread, pattern handlers).
  - Former differences from Redis 7.0 (a RESP3 subscriber blocked in BLPOP, publishing to
    itself inside EXEC, CLIENT KILL TYPE pubsub, ...): tests of Redis's behaviour.

Waiting is only ever bounded by generous deadlines; no assertion depends on how fast the
machine is.
"""
from __future__ import annotations

import select
import shutil
import socket
import threading
import time

import pytest
import redis

from lapse_harness import (RawClient, RespError as E, RespPush, blocked_clients, encode_command, parse_reply, target_kind,
                           wait_blocked, wait_until)
from redis_errors import arity

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

NOT_ALLOWED = ("ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
               "are allowed in this context")


def not_allowed(name):
    return E(NOT_ALLOWED.format(name))


def info_field(c, section, name):
    text = c.call("INFO", section).decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise AssertionError(f"no {name} in INFO {section}")


def client_fields(line):
    return dict(f.split("=", 1) for f in line.split(" "))


def client_list(c):
    return [client_fields(line) for line in c.call("CLIENT", "LIST").decode().splitlines()]


def has_data(conn, wait=0.0):
    if conn.buf:
        return True
    readable, _, _ = select.select([conn.sock], [], [], wait)
    return bool(readable)


def pubsub_idle(c):
    """No channel, pattern or shard channel has a subscriber."""
    return (c.call("PUBSUB", "CHANNELS") == [] and c.call("PUBSUB", "NUMPAT") == 0
            and c.call("PUBSUB", "SHARDCHANNELS") == [])


def wait_pubsub_idle(port):
    with RawClient(port) as c:
        wait_until(lambda: pubsub_idle(c), what="every subscription to be gone")


@pytest.fixture
def connect(clean):
    """Makes raw connections; closes them after the test and waits until the server has no
    subscriptions left, so that no test sees another's subscribers."""
    made = []

    def make(resp3=False):
        c = clean.client()
        made.append(c)
        if resp3:
            assert c.call("HELLO", "3")[b"proto"] == 3
        return c

    yield make
    for c in made:
        c.close()
    wait_pubsub_idle(clean.port)


@pytest.fixture
def rp(r, clean):
    """redis-py on a clean server; waits afterwards until its PubSub connections are gone."""
    yield r
    wait_pubsub_idle(clean.port)


def msg(channel, message):
    return [b"message", channel, message]


def pmsg(pattern, channel, message):
    return [b"pmessage", pattern, channel, message]


# ---- the differential runner -----------------------------------------------------------


SORTED = "sorted"


def srt(*step):
    """A step whose replies (and the messages it makes others receive) are compared sorted."""
    return (SORTED, *step)


class _Conn:
    def __init__(self, port, resp3):
        self.c = RawClient(port)
        self.in_multi = False
        self.closed = False
        if resp3:
            assert self.c.call("HELLO", "3")[b"proto"] == 3

    def read_until_sentinel(self, token):
        out = []
        while True:
            raw = self.c.read_reply_raw()
            value = parse_reply(raw)[0]
            out.append(raw)
            if value == token or value == [b"pong", token]:
                return out


def normalize_unordered(replies):
    """Replies whose order is a hash table's: sorted, but a run of (un)subscribe confirmations
    keeps its counts in the order they came (each one's count depends on those before it)."""
    values = [parse_reply(r)[0] for r in replies]
    counts = []
    for k, v in enumerate(values):
        if not isinstance(v, list) or not v:
            continue
        if isinstance(v[0], bytes) and v[0].endswith(b"subscribe") and len(v) == 3:
            counts.append(v[2])
            v[2] = None
        elif v[0] not in (b"message", b"pmessage", b"smessage", b"pong"):
            values[k] = sorted(v, key=repr)  # PUBSUB CHANNELS and the like
    return sorted(repr(v) for v in values), counts


def run_steps(port, steps, resp3=()):
    """Runs `steps` (conn index, command...) on fresh connections to `port`; connections whose
    index is in `resp3` start with HELLO 3. Returns one record per step: for each open
    connection, what it received."""
    n = 1 + max(st[1] if st[0] == SORTED else st[0] for st in steps)
    with RawClient(port) as admin:
        assert admin.call("FLUSHALL") == "OK"
    conns = [_Conn(port, i in resp3) for i in range(n)]
    records = []
    try:
        for k, step in enumerate(steps):
            is_sorted = step[0] == SORTED
            if is_sorted:
                step = step[1:]
            i, cmd = step[0], step[1:]
            token = f"sentinel-{k}".encode()
            name = cmd[0].upper()
            conn = conns[i]
            got = {}
            if name == "QUIT":
                conn.c.send(*cmd)
                got[i] = [conn.c.read_reply_raw(), b"<EOF>" if conn.c.at_eof(10.0) else b"<OPEN>"]
                conn.closed = True
            elif (conn.in_multi or name == "MULTI") and name not in ("EXEC", "DISCARD", "RESET"):
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
            if is_sorted:
                got = {j: normalize_unordered(replies) for j, replies in got.items()}
            records.append(got)
    finally:
        for conn in conns:
            conn.c.close()
    wait_pubsub_idle(port)
    return records


def assert_same_pubsub(steps, server, redis_server, resp3=()):
    expected = run_steps(redis_server.port, steps, resp3)
    actual = run_steps(server.port, steps, resp3)
    diffs = []
    for step, want, got in zip(steps, expected, actual):
        if want != got:
            diffs.append(f"{step}\n      redis: {want!r:.1500}\n      lapse: {got!r:.1500}")
    assert not diffs, "\n".join(diffs)


# Glob patterns with every special and channels that do or do not match them.
GLOB_PATTERNS = ["h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-c]llo", "h\\*llo", "*", "h[!e]llo",
                 "news.*", "news.[0-9]", "[", "a\\", "*\\?"]
GLOB_CHANNELS = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "hbllo", "news.1", "news.art",
                 "news", "[", "a\\", "x?", "HELLO", "h"]

BINARY_CHANNEL = b"ch\x00an\r\nnel\xff"
BINARY_MESSAGE = b"\x00\x01\r\n$3\r\n*2\r\n\xfe\xff" + bytes(range(256))

SCENARIOS = {
    "confirmations_and_counts": [
        (0, "SUBSCRIBE", "a"), (0, "SUBSCRIBE", "b", "c"), (0, "PSUBSCRIBE", "p*"), (0, "PSUBSCRIBE", "q?", "r[xy]"),
        (0, "SSUBSCRIBE", "s1"), (0, "SSUBSCRIBE", "s2", "s3"), (0, "UNSUBSCRIBE", "b"), (0, "PUNSUBSCRIBE", "q?"),
        (0, "SUNSUBSCRIBE", "s2"), (0, "UNSUBSCRIBE", "nosuch"), (0, "PUNSUBSCRIBE", "nosuch"),
        (0, "SUNSUBSCRIBE", "nosuch"), srt(0, "UNSUBSCRIBE"), srt(0, "SUNSUBSCRIBE"), srt(0, "PUNSUBSCRIBE"),
        (0, "GET", "k")],
    "unsubscribe_with_nothing_subscribed": [
        (0, "UNSUBSCRIBE"), (0, "PUNSUBSCRIBE"), (0, "SUNSUBSCRIBE"), (0, "GET", "k"),
        (0, "UNSUBSCRIBE", "a", "b"), (0, "PUNSUBSCRIBE", "x*"), (0, "SUNSUBSCRIBE", "s"),
        (0, "SUBSCRIBE", "a"), (0, "PUNSUBSCRIBE"), (0, "SUNSUBSCRIBE"), (0, "UNSUBSCRIBE"), (0, "UNSUBSCRIBE"),
        (1, "UNSUBSCRIBE"), (1, "PUNSUBSCRIBE"), (1, "SUNSUBSCRIBE"), (1, "PSUBSCRIBE", "x"), (1, "UNSUBSCRIBE"),
        (1, "SUNSUBSCRIBE")],
    "duplicates": [
        (0, "SUBSCRIBE", "a", "a", "b", "a"), (0, "PSUBSCRIBE", "a", "a"), (0, "SSUBSCRIBE", "a", "a"),
        (1, "PUBLISH", "a", "m"), (1, "SPUBLISH", "a", "s"), (1, "PUBSUB", "NUMSUB", "a", "a"),
        (1, "PUBSUB", "NUMPAT"), (1, "PUBSUB", "SHARDNUMSUB", "a"), (0, "UNSUBSCRIBE", "a", "a"),
        (0, "PUNSUBSCRIBE", "a", "a"), (0, "SUNSUBSCRIBE", "a", "a"), (1, "PUBLISH", "a", "m"),
        (1, "PUBLISH", "b", "m"), (0, "UNSUBSCRIBE")],
    "publish_counts_and_formats": [
        (0, "SUBSCRIBE", "news"), (1, "SUBSCRIBE", "news", "other"), (2, "PSUBSCRIBE", "n*"), (3, "SSUBSCRIBE", "news"),
        (4, "PUBLISH", "news", "hello"), (4, "PUBLISH", "other", "x"), (4, "PUBLISH", "nothing", "y"),
        (4, "PUBLISH", "nobody", "z"), (4, "SPUBLISH", "news", "shard"), (4, "SPUBLISH", "other", "x"),
        (4, "PUBLISH", "news", ""), (4, "PUBLISH", "news", "x" * 5000),
        (1, "UNSUBSCRIBE", "news"), (4, "PUBLISH", "news", "after"), (2, "PUNSUBSCRIBE"), (4, "PUBLISH", "news", "last"),
        (4, "PUBSUB", "NUMSUB", "news", "other", "nothing"), (4, "PUBSUB", "SHARDNUMSUB", "news", "other")],
    "a_subscriber_with_channel_and_pattern_gets_both": [
        (0, "SUBSCRIBE", "ch"), (0, "PSUBSCRIBE", "c*"), (1, "PUBLISH", "ch", "one"), (0, "PSUBSCRIBE", "*h"),
        srt(1, "PUBLISH", "ch", "two"), (1, "PUBLISH", "cx", "three"), (0, "SSUBSCRIBE", "ch"),
        (1, "SPUBLISH", "ch", "four"), srt(1, "PUBLISH", "ch", "five")],
    "glob_patterns": [(0, "PSUBSCRIBE", *GLOB_PATTERNS)] + [srt(1, "PUBLISH", ch, "m") for ch in GLOB_CHANNELS] + [
        (1, "PUBSUB", "NUMPAT"), srt(1, "PUBSUB", "CHANNELS")],
    "pubsub_channels_with_patterns": [
        (0, "SUBSCRIBE", *GLOB_CHANNELS[:-2]), (1, "SSUBSCRIBE", *GLOB_CHANNELS[:-2])] + [
        srt(2, "PUBSUB", "CHANNELS", p) for p in GLOB_PATTERNS] + [
        srt(2, "PUBSUB", "SHARDCHANNELS", p) for p in GLOB_PATTERNS] + [
        srt(2, "PUBSUB", "CHANNELS"), srt(2, "PUBSUB", "SHARDCHANNELS"), srt(2, "PUBSUB", "channels", "*"),
        (2, "PUBSUB", "NUMSUB", *GLOB_CHANNELS), (2, "PUBSUB", "SHARDNUMSUB", *GLOB_CHANNELS)],
    "binary_safe": [
        (0, "SUBSCRIBE", BINARY_CHANNEL, ""), (0, "PSUBSCRIBE", b"ch\x00*"), (1, "SSUBSCRIBE", BINARY_CHANNEL),
        srt(2, "PUBLISH", BINARY_CHANNEL, BINARY_MESSAGE), (2, "PUBLISH", "", BINARY_MESSAGE),
        (2, "SPUBLISH", BINARY_CHANNEL, BINARY_MESSAGE), (2, "PUBLISH", "ch\x00", "\r\n"),
        (2, "PUBSUB", "NUMSUB", BINARY_CHANNEL, ""), srt(2, "PUBSUB", "CHANNELS"), (2, "PUBSUB", "SHARDCHANNELS"),
        (2, "PUBSUB", "CHANNELS", b"ch\x00*"), (2, "PUBSUB", "CHANNELS", b"*\xff"), (2, "PUBLISH", b"ch\x00", "x"),
        srt(0, "UNSUBSCRIBE"), (0, "PUNSUBSCRIBE")],
    "large_messages": [(0, "SUBSCRIBE", "big"), (1, "PUBLISH", "big", "v" * 200_000),
                       (1, "PUBLISH", "big", b"\x00" * 70_000)],
    "sharded_channels_count_apart": [
        (0, "SSUBSCRIBE", "s"), (0, "SUBSCRIBE", "c"), (0, "PSUBSCRIBE", "*"), (0, "SSUBSCRIBE", "t"),
        (1, "PUBLISH", "s", "to-channel"), (1, "SPUBLISH", "s", "to-shard"), (1, "SPUBLISH", "c", "no-one"),
        (1, "PUBLISH", "t", "pattern-only"), (0, "SUNSUBSCRIBE", "s"), (0, "UNSUBSCRIBE", "c"),
        (0, "PUNSUBSCRIBE", "*"), (0, "GET", "k"), (0, "SUNSUBSCRIBE", "t"), (0, "GET", "k")],
    "subscribed_mode_refuses_other_commands": [(0, "SUBSCRIBE", "a")] + [(0, *cmd) for cmd in [
        ("GET", "k"), ("SET", "k", "v"), ("set", "k", "v"), ("CLIENT", "LIST"), ("client", "id"), ("CLIENT", "SETNAME", "n"),
        ("CONFIG", "GET", "timeout"), ("config", "set", "timeout", "0"), ("PUBLISH", "a", "m"), ("SPUBLISH", "a", "m"),
        ("PUBSUB", "NUMSUB", "a"), ("PUBSUB", "CHANNELS"), ("pubsub", "numpat"), ("PUBSUB", "HELP"), ("MULTI",),
        ("EXEC",), ("DISCARD",), ("WATCH", "k"), ("UNWATCH",), ("SELECT", "1"), ("HELLO",), ("HELLO", "3"),
        ("HELLO", "2"), ("AUTH", "pw"), ("ECHO", "x"), ("INFO",), ("DBSIZE",), ("EVAL", "return 1", "0"),
        ("COMMAND", "COUNT"), ("COMMAND",), ("OBJECT", "ENCODING", "k"), ("DEL", "k"), ("BLPOP", "q", "0"),
        ("FLUSHALL",),
        # what is checked before the subscribed-mode rule: unknown commands, arity
        ("NOSUCH",), ("nosuch", "a"), ("GET",), ("GET", "a", "b"), ("CLIENT", "NOSUCH"), ("PING", "a", "b"),
        ("PUBLISH", "a"), ("SUBSCRIBE",),
        # and what stays allowed
        ("PING",), ("ping", "hi"), ("PSUBSCRIBE", "x"), ("PUNSUBSCRIBE", "x"), ("SSUBSCRIBE", "x"),
        ("SUNSUBSCRIBE", "x"), ("UNSUBSCRIBE", "zz")]] + [(1, "EXISTS", "k"), (0, "RESET"), (0, "GET", "k"),
                                                          (0, "PING"), (0, "PING", "x")],
    "ping_while_subscribed": [
        (0, "PING"), (0, "PING", "x"), (0, "SSUBSCRIBE", "s"), (0, "PING"), (0, "PING", ""), (0, "PING", "a b"),
        (0, "SUNSUBSCRIBE"), (0, "PING"), (0, "PSUBSCRIBE", "p"), (0, "PING", b"\x00\r\n"), (0, "PUNSUBSCRIBE"),
        (0, "PING", "x")],
    "reset_leaves_subscribed_mode": [
        (0, "SUBSCRIBE", "a", "b"), (0, "PSUBSCRIBE", "p*"), (0, "SSUBSCRIBE", "s"), (1, "PUBSUB", "NUMSUB", "a", "b"),
        (1, "PUBSUB", "NUMPAT"), (1, "PUBSUB", "SHARDNUMSUB", "s"), (0, "RESET"), (1, "PUBSUB", "NUMSUB", "a", "b"),
        (1, "PUBSUB", "NUMPAT"), (1, "PUBSUB", "SHARDNUMSUB", "s"), (1, "PUBSUB", "CHANNELS"),
        (1, "PUBLISH", "a", "gone"), (1, "PUBLISH", "px", "gone"), (1, "SPUBLISH", "s", "gone"), (0, "GET", "k"),
        (0, "UNSUBSCRIBE"), (0, "SUBSCRIBE", "a"), (1, "PUBLISH", "a", "back")],
    "quit_while_subscribed": [(0, "SUBSCRIBE", "a"), (1, "PUBLISH", "a", "m"), (0, "QUIT")],
    "resp3_pushes": [
        (0, "SUBSCRIBE", "a", "b"), (0, "PSUBSCRIBE", "a*"), (0, "SSUBSCRIBE", "a"), (1, "SUBSCRIBE", "a"),
        (2, "PUBLISH", "a", "hi"), (2, "PUBLISH", "ab", "pat"), (2, "SPUBLISH", "a", "shard"),
        (0, "UNSUBSCRIBE", "b"), (0, "PUNSUBSCRIBE", "none"), (0, "SUNSUBSCRIBE"), (0, "SUNSUBSCRIBE"),
        (0, "UNSUBSCRIBE"), (0, "PUNSUBSCRIBE"), (0, "UNSUBSCRIBE"), (0, "PUNSUBSCRIBE")],
    "resp3_normal_commands_while_subscribed": [
        (0, "SUBSCRIBE", "a"), (0, "SET", "k", "v"), (0, "GET", "k"), (0, "PING"), (0, "PING", "x"),
        (0, "PUBSUB", "NUMSUB", "a"), (0, "ECHO", "e"), (0, "MULTI"), (0, "INCR", "n"), (0, "GET", "k"),
        (0, "EXEC"), (0, "CLIENT", "GETNAME"), (0, "SELECT", "1"), (0, "GET", "k"), (0, "SELECT", "0"),
        (1, "PUBLISH", "a", "from-other"), (0, "HGETALL", "nokey")],
    "resp3_own_publish_before_reply": [
        (0, "SUBSCRIBE", "a"), (0, "PSUBSCRIBE", "*"), srt(0, "PUBLISH", "a", "self"), (0, "PUBLISH", "b", "pat"),
        (0, "SSUBSCRIBE", "s"), (0, "SPUBLISH", "s", "shard"), (0, "EVAL", "return redis.call('publish','a','lua')", "0"),
        (0, "UNSUBSCRIBE"), (0, "PUNSUBSCRIBE"), (0, "PUBLISH", "a", "none")],
    "hello_switches_protocol_while_subscribed": [
        (0, "HELLO", "3"), (0, "SUBSCRIBE", "a"), (1, "PUBLISH", "a", "resp3"), (0, "HELLO", "2"), (0, "GET", "k"),
        (1, "PUBLISH", "a", "resp2"), (0, "PING"), (0, "UNSUBSCRIBE"), (0, "GET", "k")],
    "subscribe_inside_multi": [
        (0, "MULTI"), (0, "SUBSCRIBE", "a"), (0, "SET", "k", "v"), (0, "GET", "k"), (0, "EXEC"), (0, "GET", "k"),
        (1, "PUBLISH", "a", "m"), (0, "UNSUBSCRIBE"), (0, "MULTI"), (0, "PSUBSCRIBE", "p"), (0, "PUNSUBSCRIBE"),
        (0, "SUNSUBSCRIBE"), (0, "UNSUBSCRIBE"), (0, "EXEC"), (0, "MULTI"), (0, "SSUBSCRIBE", "s"), (0, "EXEC"),
        (1, "PUBSUB", "SHARDNUMSUB", "s"), (0, "GET", "k"), (0, "MULTI"), (0, "PUBLISH", "x", "y"),
        (0, "SPUBLISH", "x", "y"), (0, "PUBSUB", "NUMPAT"), (0, "EXEC"), (0, "MULTI"), (0, "SUBSCRIBE", "b"),
        (0, "SSUBSCRIBE", "t"), (0, "EXEC"), (1, "PUBSUB", "NUMSUB", "b"), (0, "RESET")],
    "publish_inside_multi_is_delivered_at_exec": [
        (0, "SUBSCRIBE", "a"), (1, "PSUBSCRIBE", "*"), (2, "MULTI"), (2, "PUBLISH", "a", "1"), (2, "SPUBLISH", "a", "2"),
        (2, "PUBLISH", "b", "3"), (2, "EXEC"), (2, "MULTI"), (2, "PUBLISH", "a", "discarded"), (2, "DISCARD"),
        (2, "MULTI"), (2, "PUBLISH", "a"), (2, "PUBLISH", "a", "aborted"), (2, "EXEC"), (2, "WATCH", "w"),
        (3, "SET", "w", "1"), (2, "MULTI"), (2, "PUBLISH", "a", "watched"), (2, "EXEC")],
    "multi_refused_in_subscribed_mode": [
        (0, "SUBSCRIBE", "a"), (0, "MULTI"), (0, "EXEC"), (0, "UNSUBSCRIBE"), (0, "MULTI"), (0, "SUBSCRIBE", "a"),
        (0, "DISCARD"), (0, "GET", "k"), (1, "PUBSUB", "NUMSUB", "a")],
    "scripts": [
        (0, "SUBSCRIBE", "a"), (1, "EVAL", "return redis.call('publish', 'a', 'from-lua')", "0"),
        (1, "EVAL", "return redis.call('spublish', KEYS[1], 'from-lua')", "1", "a"),
        (1, "EVAL", "return redis.call('pubsub', 'numsub', 'a')", "0"),
        (1, "EVAL", "return redis.call('pubsub', 'numpat')", "0"),
        (1, "EVAL", "return redis.call('spublish', 'undeclared', 'm')", "0"),
        (1, "EVAL", "return redis.call('publish', ARGV[1], 'argv')", "0", "a"),
        (1, "EVAL", "return redis.pcall('subscribe', 'x')", "0"),
        (1, "EVAL", "return redis.pcall('unsubscribe')", "0"),
        (1, "EVAL", "return redis.pcall('psubscribe', 'x')", "0"),
        (1, "EVAL", "return redis.pcall('punsubscribe')", "0"),
        (1, "EVAL", "return redis.pcall('ssubscribe', KEYS[1])", "1", "x"),
        (1, "EVAL", "return redis.pcall('sunsubscribe')", "0"),
        (1, "PUBSUB", "NUMSUB", "x"), (1, "GET", "k"),
        (1, "FUNCTION", "LOAD", "#!lua name=pslib\n"
                                "redis.register_function('ps_sub', function() return redis.call('subscribe', 'x') end)\n"
                                "redis.register_function('ps_pub', function(k, a) return redis.call('publish', a[1], a[2]) end)"),
        (1, "FCALL", "ps_sub", "0"), (1, "FCALL", "ps_pub", "0", "a", "from-function"), (1, "FUNCTION", "DELETE", "pslib")],
    "pubsub_introspection": [
        (0, "SUBSCRIBE", "a", "b"), (1, "SUBSCRIBE", "b"), (1, "PSUBSCRIBE", "p1", "p2"), (0, "PSUBSCRIBE", "p1"),
        (2, "SSUBSCRIBE", "s", "t"), (3, "PUBSUB", "NUMSUB", "a", "b", "c"), (3, "PUBSUB", "NUMSUB"),
        (3, "PUBSUB", "NUMPAT"), (3, "PUBSUB", "SHARDNUMSUB", "s", "t", "a"), (3, "PUBSUB", "SHARDNUMSUB"),
        srt(3, "PUBSUB", "CHANNELS"), (3, "PUBSUB", "CHANNELS", "a"), srt(3, "PUBSUB", "SHARDCHANNELS"),
        (3, "PUBSUB", "SHARDCHANNELS", "[s]"), (3, "pubsub", "numsub", "A"), (0, "UNSUBSCRIBE", "b"),
        (3, "PUBSUB", "NUMSUB", "a", "b"), (1, "UNSUBSCRIBE"), (3, "PUBSUB", "NUMSUB", "a", "b"),
        (3, "PUBSUB", "CHANNELS"), (1, "PUNSUBSCRIBE", "p1"), (3, "PUBSUB", "NUMPAT"), (0, "PUNSUBSCRIBE"),
        (3, "PUBSUB", "NUMPAT"), (1, "PUNSUBSCRIBE"), (3, "PUBSUB", "NUMPAT"), (2, "SUNSUBSCRIBE", "s"),
        (3, "PUBSUB", "SHARDCHANNELS"), (3, "PUBSUB", "SHARDNUMSUB", "s", "t")],
    "pubsub_errors_and_help": [(0, *cmd) for cmd in [
        ("PUBSUB",), ("PUBSUB", "HELP"), ("pubsub", "help"), ("PUBSUB", "HELP", "x"), ("PUBSUB", "FOO"),
        ("PUBSUB", "foo", "bar"), ("PUBSUB", "NUMPAT", "x"), ("PUBSUB", "CHANNELS", "a", "b"),
        ("PUBSUB", "SHARDCHANNELS", "a", "b"), ("PUBSUB", "channels", "a", "b", "c"), ("PUBSUB", "NUMSUB"),
        ("PUBSUB", "SHARDNUMSUB"), ("PUBSUB", "CHANNELS"), ("PUBSUB", "SHARDCHANNELS"), ("PUBLISH",), ("PUBLISH", "a"),
        ("PUBLISH", "a", "b", "c"), ("SPUBLISH", "a"), ("SPUBLISH", "a", "b", "c"), ("SUBSCRIBE",), ("PSUBSCRIBE",),
        ("SSUBSCRIBE",), ("publish", "a", "b"), ("spublish", "a", "b")]],
}


@needs_redis
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_redis(server, redis_server, name):
    assert_same_pubsub(SCENARIOS[name], server, redis_server)


RESP3_SCENARIOS = ["resp3_pushes", "resp3_normal_commands_while_subscribed", "resp3_own_publish_before_reply",
                   "publish_counts_and_formats", "binary_safe", "glob_patterns", "sharded_channels_count_apart",
                   "unsubscribe_with_nothing_subscribed", "subscribe_inside_multi", "scripts", "pubsub_errors_and_help",
                   "a_subscriber_with_channel_and_pattern_gets_both"]


@needs_redis
@pytest.mark.parametrize("name", RESP3_SCENARIOS)
def test_same_as_redis_resp3(server, redis_server, name):
    """The same scenarios with every connection on RESP3 (HELLO 3 first)."""
    assert_same_pubsub(SCENARIOS[name], server, redis_server, resp3=range(8))


@needs_redis
def test_mixed_protocols_same_as_redis(server, redis_server):
    """A RESP2 and a RESP3 subscriber on the same channel and pattern: each gets its own
    encoding of the same message."""
    steps = [(0, "SUBSCRIBE", "c"), (1, "SUBSCRIBE", "c"), (0, "PSUBSCRIBE", "c*"), (1, "PSUBSCRIBE", "c*"),
             (2, "SSUBSCRIBE", "c"), (3, "SSUBSCRIBE", "c"), (4, "PUBLISH", "c", "m1"), (4, "SPUBLISH", "c", "m2"),
             (4, "PUBLISH", "cc", "m3"), (1, "PUBLISH", "c", "m4"), (0, "UNSUBSCRIBE"), (1, "UNSUBSCRIBE")]
    assert_same_pubsub(steps, server, redis_server, resp3=(1, 3))


@needs_redis
def test_pipelined_mode_changes_same_as_redis(server, redis_server):
    """Subscribed mode starts and ends between two commands of one pipeline."""
    commands = [("SUBSCRIBE", "a"), ("GET", "k"), ("PING",), ("UNSUBSCRIBE",), ("GET", "k"), ("SUBSCRIBE", "b"),
                ("RESET",), ("GET", "k"), ("PSUBSCRIBE", "x", "y"), ("SET", "k", "v"), ("PUNSUBSCRIBE", "x"),
                ("PUNSUBSCRIBE", "y"), ("SET", "k", "v"), ("SSUBSCRIBE", "s"), ("PING", "p"), ("SUNSUBSCRIBE",),
                ("HELLO", "3"), ("SUBSCRIBE", "c"), ("GET", "k"), ("PING",), ("HELLO", "2"), ("GET", "k"), ("PING",),
                ("RESET",), ("GET", "k"), ("SUBSCRIBE", "d"), ("QUIT",)]

    def run(port):
        with RawClient(port) as c:
            c.call("FLUSHALL")
            c.send_raw(b"".join(encode_command(*cmd) for cmd in commands))
            assert c.at_eof(10.0)  # QUIT, at the end
            stream = c.buf
        replies, pos = [], 0
        while pos < len(stream):
            value, end = parse_reply(stream, pos)
            # HELLO's reply names the server's version and the client id
            hello = (isinstance(value, dict) and b"server" in value) or (isinstance(value, list) and value[:1] == [b"server"])
            replies.append(stream[pos:pos + 1] + b"<hello>" if hello else stream[pos:end])
            pos = end
        return replies

    want, got = run(redis_server.port), run(server.port)
    wait_pubsub_idle(server.port)
    wait_pubsub_idle(redis_server.port)
    assert got == want


def test_many_channels_in_one_command(connect):
    c, observer = connect(), connect()
    names = [f"ch:{i}" for i in range(3000)]
    c.send("SUBSCRIBE", *names)
    assert [c.read_reply() for _ in names] == [[b"subscribe", n.encode(), k + 1] for k, n in enumerate(names)]
    assert int(info_field(observer, "stats", "pubsub_channels")) == len(names)
    assert len(observer.call("PUBSUB", "CHANNELS", "ch:1*")) == 1111
    assert observer.call("PUBLISH", "ch:2999", "last") == 1
    assert c.read_reply() == msg(b"ch:2999", b"last")
    c.send("UNSUBSCRIBE")
    got = [c.read_reply() for _ in names]
    assert sorted(g[1] for g in got) == sorted(n.encode() for n in names)
    assert [g[2] for g in got] == list(range(len(names) - 1, -1, -1))
    assert observer.call("PUBSUB", "CHANNELS") == []
    assert c.call("GET", "k") is None


def test_client_kill_removes_the_subscriptions(connect):
    c, observer = connect(), connect()
    cid = c.call("CLIENT", "ID")
    c.call("SUBSCRIBE", "a")
    c.call("PSUBSCRIBE", "a*")
    c.call("SSUBSCRIBE", "a")
    assert observer.call("PUBLISH", "a", "m") == 2
    assert observer.call("CLIENT", "KILL", "ID", cid) == 1
    assert c.at_eof(10.0)
    wait_until(lambda: pubsub_idle(observer), what="the killed client's subscriptions to go")
    assert observer.call("PUBLISH", "a", "m") == 0
    assert observer.call("SPUBLISH", "a", "m") == 0
    assert info_field(observer, "stats", "pubsub_channels") == "0"


# ---- exact bytes ---------------------------------------------------------------------------


def test_confirmation_bytes(connect):
    c = connect()
    assert c.call_raw("UNSUBSCRIBE") == b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
    assert c.call_raw("PUNSUBSCRIBE") == b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n"
    assert c.call_raw("SUNSUBSCRIBE") == b"*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n"
    c.send("SUBSCRIBE", "a", "b", "a")
    assert [c.read_reply_raw() for _ in range(3)] == [
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n", b"*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n"]
    assert c.call_raw("PSUBSCRIBE", "p*") == b"*3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:3\r\n"
    assert c.call_raw("SSUBSCRIBE", "s") == b"*3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n"
    assert c.call_raw("SUNSUBSCRIBE", "s") == b"*3\r\n$12\r\nsunsubscribe\r\n$1\r\ns\r\n:0\r\n"
    assert c.call_raw("PUNSUBSCRIBE", "p*") == b"*3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:2\r\n"
    c.send("UNSUBSCRIBE")
    got = sorted(c.read_reply_raw() for _ in range(2))
    assert got in ([b"*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n", b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:1\r\n"],
                   [b"*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n", b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n"])
    assert c.call_raw("UNSUBSCRIBE") == b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
    assert c.call_raw("GET", "k") == b"$-1\r\n"


def test_resp3_confirmation_and_message_bytes(connect):
    c, pub = connect(resp3=True), connect()
    assert c.call_raw("UNSUBSCRIBE") == b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"
    assert c.call_raw("SUBSCRIBE", "a") == b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    assert c.call_raw("PSUBSCRIBE", "a*") == b">3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:2\r\n"
    assert c.call_raw("SSUBSCRIBE", "a") == b">3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n"
    assert pub.call("PUBLISH", "a", "hi") == 2
    assert c.read_reply_raw() == b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n"
    assert c.read_reply_raw() == b">4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$2\r\nhi\r\n"
    assert pub.call("SPUBLISH", "a", "sh") == 1
    assert c.read_reply_raw() == b">3\r\n$8\r\nsmessage\r\n$1\r\na\r\n$2\r\nsh\r\n"
    # its own PUBLISH: the pushes come before the reply
    assert c.call_raw("GET", "k") == b"_\r\n"
    c.send("PUBLISH", "a", "me")
    assert [c.read_reply_raw() for _ in range(3)] == [
        b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nme\r\n", b">4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$2\r\nme\r\n",
        b":2\r\n"]
    assert c.call_raw("PING") == b"+PONG\r\n"


def test_message_bytes_resp2(connect):
    sub, psub, ssub, pub = connect(), connect(), connect(), connect()
    sub.call("SUBSCRIBE", "chan")
    psub.call("PSUBSCRIBE", "ch*")
    ssub.call("SSUBSCRIBE", "chan")
    assert pub.call_raw("PUBLISH", "chan", "hello") == b":2\r\n"
    assert sub.read_reply_raw() == b"*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n"
    assert psub.read_reply_raw() == b"*4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$4\r\nchan\r\n$5\r\nhello\r\n"
    assert pub.call_raw("SPUBLISH", "chan", "x") == b":1\r\n"
    assert ssub.read_reply_raw() == b"*3\r\n$8\r\nsmessage\r\n$4\r\nchan\r\n$1\r\nx\r\n"
    assert pub.call_raw("PUBLISH", "nobody", "x") == b":0\r\n"
    assert pub.call_raw("SPUBLISH", "nobody", "x") == b":0\r\n"
    # binary payloads come back byte for byte
    sub.call("SUBSCRIBE", BINARY_CHANNEL)
    assert pub.call("PUBLISH", BINARY_CHANNEL, BINARY_MESSAGE) == 2
    assert sub.read_reply() == msg(BINARY_CHANNEL, BINARY_MESSAGE)
    assert psub.read_reply() == pmsg(b"ch*", BINARY_CHANNEL, BINARY_MESSAGE)
    assert not has_data(psub, 0.2) and not has_data(ssub) and not has_data(sub)


def test_subscribed_mode_errors(connect):
    c = connect()
    c.call("SUBSCRIBE", "a")
    for cmd, name in [(("GET", "k"), "get"), (("CLIENT", "LIST"), "client|list"), (("config", "get", "x"), "config|get"),
                      (("PUBLISH", "a", "b"), "publish"), (("PUBSUB", "NUMSUB"), "pubsub|numsub"),
                      (("MULTI",), "multi"), (("HELLO", "3"), "hello")]:
        assert c.call(*cmd) == not_allowed(name), cmd
    assert c.call_raw("GET", "k") == (b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT"
                                      b" / RESET are allowed in this context\r\n")
    assert c.call("GET") == arity("get")
    assert c.call_raw("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    assert c.call_raw("PING", "hey") == b"*2\r\n$4\r\npong\r\n$3\r\nhey\r\n"
    assert c.call_raw("RESET") == b"+RESET\r\n"
    assert c.call_raw("PING") == b"+PONG\r\n"
    assert c.call("GET", "k") is None


def test_reset_makes_the_client_no_subscriber(connect):
    c, other = connect(), connect()
    c.send("SUBSCRIBE", "a", "b")
    c.read_reply(), c.read_reply()
    c.call("PSUBSCRIBE", "p*")
    c.call("SSUBSCRIBE", "s")
    assert other.call("PUBSUB", "NUMSUB", "a", "b") == [b"a", 1, b"b", 1]
    assert c.call("RESET") == "RESET"
    assert other.call("PUBSUB", "NUMSUB", "a", "b") == [b"a", 0, b"b", 0]
    assert other.call("PUBSUB", "NUMPAT") == 0
    assert other.call("PUBSUB", "SHARDNUMSUB", "s") == [b"s", 0]
    assert other.call("PUBLISH", "a", "x") == 0
    cid = c.call("CLIENT", "ID")
    (line,) = other.call("CLIENT", "LIST", "ID", cid).decode().splitlines()
    f = client_fields(line)
    assert (f["flags"], f["sub"], f["psub"], f["ssub"]) == ("N", "0", "0", "0")
    assert not has_data(c, 0.2)


def test_quit_while_subscribed(connect):
    c, other = connect(), connect()
    c.call("SUBSCRIBE", "a")
    assert c.call_raw("QUIT") == b"+OK\r\n"
    assert c.at_eof(10.0)
    wait_until(lambda: other.call("PUBSUB", "NUMSUB", "a") == [b"a", 0], what="the quitting client to leave")


def test_channels_disappear_when_the_last_subscriber_leaves_or_disconnects(connect):
    a, b, observer = connect(), connect(), connect()
    a.call("SUBSCRIBE", "x")
    a.call("PSUBSCRIBE", "p")
    a.call("SSUBSCRIBE", "s")
    b.call("SUBSCRIBE", "x")
    b.call("SSUBSCRIBE", "s")
    assert observer.call("PUBSUB", "CHANNELS") == [b"x"]
    assert observer.call("PUBSUB", "SHARDCHANNELS") == [b"s"]
    assert observer.call("PUBSUB", "NUMSUB", "x") == [b"x", 2]
    assert observer.call("PUBSUB", "NUMPAT") == 1
    a.call("UNSUBSCRIBE", "x")
    assert observer.call("PUBSUB", "CHANNELS") == [b"x"]
    assert observer.call("PUBSUB", "NUMSUB", "x") == [b"x", 1]
    b.close()  # the last subscriber of x goes away without unsubscribing
    wait_until(lambda: observer.call("PUBSUB", "CHANNELS") == [], what="channel x to disappear")
    assert observer.call("PUBSUB", "SHARDNUMSUB", "s") == [b"s", 1]
    assert observer.call("PUBSUB", "NUMSUB", "x") == [b"x", 0]
    a.close()
    wait_until(lambda: pubsub_idle(observer), what="a's pattern and shard channel to disappear")
    assert observer.call("PUBLISH", "p", "m") == 0
    assert observer.call("SPUBLISH", "s", "m") == 0


def test_numpat_counts_distinct_patterns(connect):
    a, b, observer = connect(), connect(), connect()
    a.call("PSUBSCRIBE", "p*")
    b.call("PSUBSCRIBE", "p*")
    assert observer.call("PUBSUB", "NUMPAT") == 1
    b.call("PSUBSCRIBE", "q*")
    assert observer.call("PUBSUB", "NUMPAT") == 2
    assert info_field(observer, "stats", "pubsub_patterns") == "2"
    assert observer.call("PUBLISH", "px", "m") == 2
    assert a.read_reply() == b.read_reply() == pmsg(b"p*", b"px", b"m")
    assert a.call("PUNSUBSCRIBE") == [b"punsubscribe", b"p*", 0]
    assert observer.call("PUBSUB", "NUMPAT") == 2
    assert b.call("PUNSUBSCRIBE", "p*") == [b"punsubscribe", b"p*", 1]
    assert observer.call("PUBSUB", "NUMPAT") == 1


def test_info_stats_counts(connect):
    a, b, observer = connect(), connect(), connect()

    def counts():
        return tuple(int(info_field(observer, "stats", f))
                     for f in ("pubsub_channels", "pubsub_patterns", "pubsubshard_channels"))

    assert counts() == (0, 0, 0)
    a.send("SUBSCRIBE", "c1", "c2")
    a.read_reply(), a.read_reply()
    b.call("SUBSCRIBE", "c2")
    b.send("PSUBSCRIBE", "p1", "p2", "p3")
    for _ in range(3):
        b.read_reply()
    a.call("PSUBSCRIBE", "p1")
    a.send("SSUBSCRIBE", "s1", "s2", "s3", "s4")
    for _ in range(4):
        a.read_reply()
    b.call("SSUBSCRIBE", "s1")
    assert counts() == (2, 3, 4)
    a.call("UNSUBSCRIBE", "c1")
    assert counts() == (1, 3, 4)
    b.call("PUNSUBSCRIBE", "p1")
    assert counts() == (1, 3, 4)
    a.call("RESET")
    assert counts() == (1, 2, 1)
    b.close()
    wait_until(lambda: counts() == (0, 0, 0), what="INFO to count no subscriptions")


def test_client_list_flags_and_counts(connect):
    c, observer = connect(), connect()
    cid = c.call("CLIENT", "ID")

    def fields():
        (line,) = observer.call("CLIENT", "LIST", "ID", cid).decode().splitlines()
        f = client_fields(line)
        return f["flags"], f["sub"], f["psub"], f["ssub"], f["cmd"]

    assert fields() == ("N", "0", "0", "0", "client|id")
    c.send("SUBSCRIBE", "a", "b")
    c.read_reply(), c.read_reply()
    assert fields() == ("P", "2", "0", "0", "subscribe")
    c.call("PSUBSCRIBE", "p*")
    c.send("SSUBSCRIBE", "s", "t", "u")
    for _ in range(3):
        c.read_reply()
    assert fields() == ("P", "2", "1", "3", "ssubscribe")
    c.call("UNSUBSCRIBE", "a")
    c.call("PUNSUBSCRIBE")
    assert fields() == ("P", "1", "0", "3", "punsubscribe")
    c.call("PING")
    assert fields() == ("P", "1", "0", "3", "ping")
    c.send("SUNSUBSCRIBE")
    for _ in range(3):
        c.read_reply()
    c.call("UNSUBSCRIBE")
    assert fields() == ("N", "0", "0", "0", "unsubscribe")
    # CLIENT INFO of a RESP3 subscriber shows its own flags
    assert c.call("HELLO", "3")[b"proto"] == 3
    c.call("SSUBSCRIBE", "only-shard")
    f = client_fields(c.call("CLIENT", "INFO").decode().strip())
    assert (f["flags"], f["sub"], f["psub"], f["ssub"], f["resp"]) == ("P", "0", "0", "1", "3")


def test_eval_cannot_subscribe(connect):
    """Redis's error names the script's SHA-1 and its line."""
    c = connect()
    script = "return redis.call('subscribe', 'x')"
    sha = c.call("SCRIPT", "LOAD", script).decode()
    assert c.call("EVAL", script, "0") == E(
        f"ERR This Redis command is not allowed from script script: {sha}, on @user_script:1.")
    assert c.call("EVAL", "return redis.pcall('subscribe', 'x')", "0") == E(
        "ERR This Redis command is not allowed from script")
    for name in ("psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe"):
        script = f"return redis.call('{name}', 'x')"
        sha = c.call("SCRIPT", "LOAD", script).decode()
        assert c.call("EVAL", script, "0") == E(
            f"ERR This Redis command is not allowed from script script: {sha}, on @user_script:1."), name
    assert c.call("PUBSUB", "NUMSUB", "x") == [b"x", 0]
    assert c.call("PING") == "PONG"


def test_publish_from_eval_reaches_subscribers(connect):
    sub, c = connect(), connect()
    sub.call("SUBSCRIBE", "a")
    sub.call("SSUBSCRIBE", "s")
    assert c.call("EVAL", "return {redis.call('publish', 'a', 'one'), redis.call('publish', 'a', 'two'),"
                          " redis.call('spublish', KEYS[1], 'three')}", "1", "s") == [1, 1, 1]
    assert [sub.read_reply() for _ in range(3)] == [msg(b"a", b"one"), msg(b"a", b"two"),
                                                    [b"smessage", b"s", b"three"]]


def test_exec_with_ssubscribe_is_refused_but_subscribe_is_not(connect):
    c, observer = connect(), connect()
    assert c.pipeline([("MULTI",), ("SSUBSCRIBE", "s"), ("EXEC",)]) == [
        "OK", "QUEUED", [E("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")]]
    assert observer.call("PUBSUB", "SHARDNUMSUB", "s") == [b"s", 0]
    assert c.call("GET", "k") is None
    assert c.pipeline([("MULTI",), ("SUBSCRIBE", "a"), ("EXEC",)]) == ["OK", "QUEUED", [[b"subscribe", b"a", 1]]]
    assert observer.call("PUBSUB", "NUMSUB", "a") == [b"a", 1]
    assert c.call("GET", "k") == not_allowed("get")
    assert observer.call("PUBLISH", "a", "m") == 1
    assert c.read_reply() == msg(b"a", b"m")


# ---- COMMAND INFO ------------------------------------------------------------------------------

PUBSUB_COMMANDS = ["subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "publish",
                   "spublish", "pubsub"]
# The flags lapse's COMMAND INFO reports for any command; Redis's others (noscript, loading,
# stale, ...) it reports for none.
MODELED_FLAGS = {"write", "denyoom", "readonly", "admin", "pubsub", "blocking", "fast", "no_auth"}


def _command_info(port, names):
    with RawClient(port) as c:
        return c.call("COMMAND", "INFO", *names)


@needs_redis
def test_command_info_as_redis(server, redis_server):
    """Arity, the flags lapse models, key positions and categories, as Redis 7.0 reports them."""
    want = _command_info(redis_server.port, PUBSUB_COMMANDS)
    got = _command_info(server.port, PUBSUB_COMMANDS)

    def modeled(info):
        return [info[0], info[1], [f for f in info[2] if f in MODELED_FLAGS], info[3], info[4], info[5], info[6]]

    assert [modeled(i) for i in got] == [modeled(i) for i in want]
    assert [modeled(i) for i in got] == [
        [b"subscribe", -2, ["pubsub"], 0, 0, 0, ["@pubsub", "@slow"]],
        [b"unsubscribe", -1, ["pubsub"], 0, 0, 0, ["@pubsub", "@slow"]],
        [b"psubscribe", -2, ["pubsub"], 0, 0, 0, ["@pubsub", "@slow"]],
        [b"punsubscribe", -1, ["pubsub"], 0, 0, 0, ["@pubsub", "@slow"]],
        [b"ssubscribe", -2, ["pubsub"], 1, -1, 1, ["@pubsub", "@slow"]],
        [b"sunsubscribe", -1, ["pubsub"], 1, -1, 1, ["@pubsub", "@slow"]],
        [b"publish", 3, ["pubsub", "fast"], 0, 0, 0, ["@pubsub", "@fast"]],
        [b"spublish", 3, ["pubsub", "fast"], 1, 1, 1, ["@pubsub", "@fast"]],
        [b"pubsub", -2, [], 0, 0, 0, ["@slow"]],
    ]


@needs_redis
def test_command_info_identical_to_redis(server, redis_server):
    names = PUBSUB_COMMANDS + ["pubsub|channels", "pubsub|numsub", "pubsub|numpat", "pubsub|shardchannels",
                               "pubsub|shardnumsub", "pubsub|help"]
    def normalized(infos):  # a container's subcommands come in a hash table's order
        return [info[:9] + [sorted(info[9], key=repr)] if info else info for info in infos]

    assert normalized(_command_info(server.port, names)) == normalized(_command_info(redis_server.port, names))


def test_resp3_publish_to_self_inside_exec(connect):
    """Redis 7.0 writes the push inside EXEC's array, right before the PUBLISH's own reply."""
    c = connect(resp3=True)
    assert c.call("SUBSCRIBE", "a") == RespPush([b"subscribe", b"a", 1])
    assert c.call("MULTI") == "OK"
    assert c.call("INCR", "n") == "QUEUED"
    assert c.call("PUBLISH", "a", "in-multi") == "QUEUED"
    assert c.call("INCR", "n") == "QUEUED"
    c.send("EXEC")
    expected = b"*3\r\n:1\r\n>3\r\n$7\r\nmessage\r\n$1\r\na\r\n$8\r\nin-multi\r\n:1\r\n:2\r\n"
    got = b""
    c.sock.settimeout(10)
    while len(got) < len(expected):
        chunk = c.sock.recv(4096)
        if not chunk:
            break
        got += chunk
    assert got == expected


def test_resp3_subscriber_blocked_in_blpop_still_gets_messages(connect):
    """Redis 7.0 writes the pushes of a blocked RESP3 client at once, not when the block ends."""
    c, other = connect(resp3=True), connect()
    assert c.call("SUBSCRIBE", "x") == RespPush([b"subscribe", b"x", 1])
    c.send("BLPOP", "q", "0")
    wait_blocked(other, 1)
    assert other.call("PUBLISH", "x", "while-blocked") == 1
    try:
        assert has_data(c, 3.0), "no push while blocked"
        assert c.read_reply_raw() == b">3\r\n$7\r\nmessage\r\n$1\r\nx\r\n$13\r\nwhile-blocked\r\n"
    finally:
        assert other.call("RPUSH", "q", "v") == 1
    replies = [c.read_reply()]
    if replies[0] != [b"q", b"v"]:
        replies.append(c.read_reply())
    assert replies[-1] == [b"q", b"v"]


def test_resp3_blocked_client_messages_keep_the_timeout(connect):
    """A message wakes the blocked client only to be written: its BLPOP still times out."""
    c, other = connect(resp3=True), connect()
    assert c.call("SUBSCRIBE", "x") == RespPush([b"subscribe", b"x", 1])
    c.send("BLPOP", "q", "0.5")
    wait_blocked(other, 1)
    assert other.call("PUBLISH", "x", "m1") == 1
    assert c.read_reply_raw() == b">3\r\n$7\r\nmessage\r\n$1\r\nx\r\n$2\r\nm1\r\n"
    assert c.read_reply_raw() == b"_\r\n"
    assert blocked_clients(other) == 0


def test_resp3_blocked_client_gets_every_kind_of_message_in_order(connect):
    c, other = connect(resp3=True), connect()
    c.call("SUBSCRIBE", "x")
    c.call("PSUBSCRIBE", "p*")
    c.call("SSUBSCRIBE", "s")
    c.send("BLPOP", "q", "0")
    c.send("PING")  # pipelined behind the blocking command: answered after it
    wait_blocked(other, 1)
    assert other.call("PUBLISH", "x", "1") == 1
    assert other.call("PUBLISH", "p1", "2") == 1
    assert other.call("SPUBLISH", "s", "3") == 1
    assert c.read_reply() == RespPush(msg(b"x", b"1"))
    assert c.read_reply() == RespPush(pmsg(b"p*", b"p1", b"2"))
    assert c.read_reply() == RespPush([b"smessage", b"s", b"3"])
    assert other.call("RPUSH", "q", "v") == 1
    assert c.read_reply() == [b"q", b"v"]
    assert c.read_reply() == "PONG"


def test_client_kill_type_pubsub(connect):
    sub, observer = connect(), connect()
    sub.call("SUBSCRIBE", "a")
    assert observer.call("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert sub.at_eof(10.0)


def test_resp3_blocked_client_gets_a_burst_of_messages(connect):
    """Messages that come while the blocked client writes earlier ones are written too."""
    c, other = connect(resp3=True), connect()
    c.call("SUBSCRIBE", "x")
    c.send("BLPOP", "q", "0")
    wait_blocked(other, 1)
    count = 2000
    for i in range(count):
        other.send("PUBLISH", "x", f"m{i}")
    assert [other.read_reply() for _ in range(count)] == [1] * count
    assert [c.read_reply() for _ in range(count)] == [RespPush(msg(b"x", f"m{i}".encode())) for i in range(count)]
    assert other.call("RPUSH", "q", "v") == 1
    assert c.read_reply() == [b"q", b"v"]


@pytest.mark.lapse_only
def test_resp3_client_waiting_in_ichanges_block_gets_messages(connect):
    """ICHANGES ... BLOCK waits as BLPOP does: its messages are written at once too."""
    c, other = connect(resp3=True), connect()
    assert other.call("IPUT", "feed", "a", "{}") is not None
    c.call("SUBSCRIBE", "x")
    c.send("ICHANGES", "feed", "FROM", "NOW", "BLOCK", "0")
    wait_blocked(other, 1)
    assert other.call("PUBLISH", "x", "m") == 1
    assert c.read_reply() == RespPush(msg(b"x", b"m"))
    assert other.call("IPUT", "feed", "b", "{}") is not None
    token, changes = c.read_reply()
    assert len(changes) == 1 and b'"id":"b"' in changes[0]


# ---- former differences from Redis 7.0 ----------------------------------------------------
# Each test states a Redis 7.0 behaviour lapse once lacked; it passes against both.


def test_punsubscribe_all_in_subscription_order(connect):
    """Redis 7.0 keeps a client's patterns in a list and goes in subscription order."""
    c = connect()
    patterns = ["z", "a", "m", "b", "y", "c"]
    c.send("PSUBSCRIBE", *patterns)
    assert [c.read_reply() for _ in patterns] == [[b"psubscribe", p.encode(), k + 1] for k, p in enumerate(patterns)]
    assert c.call("PUNSUBSCRIBE", "m") == [b"punsubscribe", b"m", 5]
    assert c.call("PSUBSCRIBE", "m") == [b"psubscribe", b"m", 6]
    c.send("PUNSUBSCRIBE")
    order = ["z", "a", "b", "y", "c", "m"]
    assert [c.read_reply() for _ in order] == [[b"punsubscribe", p.encode(), 5 - k] for k, p in enumerate(order)]


def test_patterns_never_match_the_empty_channel(connect):
    """Redis's stringmatchlen never matches an empty string with a non-empty pattern."""
    sub, pub = connect(), connect()
    sub.send("PSUBSCRIBE", "*", "**", "*?*")
    for _ in range(3):
        sub.read_reply()
    sub2 = connect()
    assert sub2.call("SUBSCRIBE", "") == [b"subscribe", b"", 1]
    assert pub.call_raw("PUBLISH", "", "m") == b":1\r\n"
    assert sub2.read_reply() == msg(b"", b"m")
    assert pub.call("PUBSUB", "CHANNELS") == [b""]
    assert pub.call_raw("PUBSUB", "CHANNELS", "*") == b"*0\r\n"
    assert not has_data(sub, 0.2)


def test_command_getkeys_for_shard_commands(raw):
    """Redis 7.0 flags the key specs of the shard commands not_key."""
    for cmd in (("SPUBLISH", "ch", "msg"), ("SSUBSCRIBE", "a", "b"), ("SUNSUBSCRIBE", "a"), ("PUBLISH", "a", "b"),
                ("SUBSCRIBE", "a")):
        assert raw.call("COMMAND", "GETKEYS", *cmd) == E("ERR The command has no key arguments"), cmd


def test_client_list_type_pubsub(connect):
    sub, sub3, observer = connect(), connect(resp3=True), connect()
    ids = {sub.call("CLIENT", "ID"), sub3.call("CLIENT", "ID")}
    sub.call("SUBSCRIBE", "a")
    sub3.call("SSUBSCRIBE", "s")
    listed = {int(client_fields(line)["id"])
              for line in observer.call("CLIENT", "LIST", "TYPE", "pubsub").decode().splitlines()}
    assert listed == ids
    normal = {int(client_fields(line)["id"])
              for line in observer.call("CLIENT", "LIST", "TYPE", "normal").decode().splitlines()}
    assert not normal & ids


# ---- delivery across threads ---------------------------------------------------------------


def read_messages(conn, count, timeout=60.0):
    """Reads `count` replies (the caller knows they are messages)."""
    conn.sock.settimeout(timeout)
    return [conn.read_reply() for _ in range(count)]


def _pipeline_publish(pub, channel, messages, batch=500):
    """Publishes in pipelined batches; returns every PUBLISH reply."""
    replies = []
    for start in range(0, len(messages), batch):
        chunk = messages[start:start + batch]
        pub.send_raw(b"".join(encode_command("PUBLISH", channel, m) for m in chunk))
        replies += [pub.read_reply() for _ in chunk]
    return replies


@pytest.mark.parametrize("threads", [2, 4])
def test_every_subscriber_gets_every_message_in_order(start_server, threads):
    srv = start_server(options={"threads": threads})
    subs = []
    try:
        for i in range(20):
            c = srv.client()
            if i % 4 == 3:
                assert c.call("PSUBSCRIBE", "feed*") == [b"psubscribe", b"feed*", 1]
            else:
                assert c.call("SUBSCRIBE", "feed") == [b"subscribe", b"feed", 1]
            subs.append(c)
        messages = [f"msg-{n:05d}".encode() for n in range(2000)]
        results = [None] * len(subs)

        def reader(k):
            try:
                results[k] = read_messages(subs[k], len(messages))
            except Exception as e:  # reported below
                results[k] = e

        readers = [threading.Thread(target=reader, args=(k,)) for k in range(len(subs))]
        for t in readers:
            t.start()
        with srv.client() as pub:
            assert pub.call("PUBSUB", "NUMSUB", "feed") == [b"feed", 15]
            # one pipeline of 2000 PUBLISHes, sent in one write
            pub.send_raw(b"".join(encode_command("PUBLISH", "feed", m) for m in messages))
            assert [pub.read_reply() for _ in messages] == [20] * len(messages)
        for t in readers:
            t.join(120)
        for k, got in enumerate(results):
            assert not isinstance(got, Exception), f"subscriber {k}: {got!r}"
            if k % 4 == 3:
                assert got == [pmsg(b"feed*", b"feed", m) for m in messages], f"subscriber {k}"
            else:
                assert got == [msg(b"feed", m) for m in messages], f"subscriber {k}"
        for c in subs:
            assert not has_data(c)
    finally:
        for c in subs:
            c.close()


@pytest.mark.parametrize("threads", [2, 4])
def test_two_publishers_each_in_order(start_server, threads):
    srv = start_server(options={"threads": threads})
    subs = [srv.client() for _ in range(6)]
    try:
        for i, c in enumerate(subs):
            if i % 2:
                c.send("SUBSCRIBE", "x")
            else:
                assert c.call("HELLO", "3")[b"proto"] == 3
                c.send("SUBSCRIBE", "x")
            c.read_reply()
        per_publisher = 1500
        results = [None] * len(subs)

        def reader(k):
            try:
                results[k] = read_messages(subs[k], 2 * per_publisher)
            except Exception as e:
                results[k] = e

        readers = [threading.Thread(target=reader, args=(k,)) for k in range(len(subs))]
        for t in readers:
            t.start()
        errors = []

        def publisher(name):
            try:
                with srv.client() as pub:
                    replies = _pipeline_publish(pub, "x", [f"{name}:{n}".encode() for n in range(per_publisher)],
                                                batch=300)
                    assert replies == [len(subs)] * per_publisher
            except Exception as e:
                errors.append(e)

        pubs = [threading.Thread(target=publisher, args=(name,)) for name in ("A", "B")]
        for t in pubs:
            t.start()
        for t in pubs:
            t.join(120)
        for t in readers:
            t.join(120)
        assert not errors, errors
        for k, got in enumerate(results):
            assert not isinstance(got, Exception), f"subscriber {k}: {got!r}"
            assert all(isinstance(m, RespPush) == (k % 2 == 0) for m in got)
            assert all(m[0] == b"message" and m[1] == b"x" for m in got)
            payloads = [m[2].decode() for m in got]
            for name in ("A", "B"):
                mine = [int(p.split(":")[1]) for p in payloads if p.startswith(name + ":")]
                assert mine == list(range(per_publisher)), f"subscriber {k}, publisher {name}"
    finally:
        for c in subs:
            c.close()


@pytest.mark.parametrize("threads", [1, 4])
def test_subscribers_on_many_channels_and_patterns(start_server, threads):
    """Each subscriber listens to its own channel and a shared pattern; a publisher sends to
    every channel in turn. Each gets its own channel's messages and every pattern match."""
    srv = start_server(options={"threads": threads})
    n_subs, rounds = 8, 200
    subs = [srv.client() for _ in range(n_subs)]
    try:
        for i, c in enumerate(subs):
            assert c.call("SUBSCRIBE", f"room:{i}") == [b"subscribe", f"room:{i}".encode(), 1]
            assert c.call("PSUBSCRIBE", "room:[0-3]") == [b"psubscribe", b"room:[0-3]", 2]
        with srv.client() as pub:
            commands = [("PUBLISH", f"room:{i}", f"{r}") for r in range(rounds) for i in range(n_subs)]
            replies = []
            for start in range(0, len(commands), 400):
                replies += pub.pipeline(commands[start:start + 400])
            assert replies == [n_subs + 1 if i < 4 else 1 for _ in range(rounds) for i in range(n_subs)]
        for i, c in enumerate(subs):
            expected = []
            for r in range(rounds):
                for j in range(n_subs):
                    if j == i:
                        expected.append(msg(f"room:{j}".encode(), str(r).encode()))
                    if j < 4:
                        expected.append(pmsg(b"room:[0-3]", f"room:{j}".encode(), str(r).encode()))
            assert read_messages(c, len(expected)) == expected, f"subscriber {i}"
            assert not has_data(c, 0.05)
    finally:
        for c in subs:
            c.close()


def test_subscribers_come_and_go_while_messages_flow(start_server):
    """Subscribers connect, subscribe, read a little and disconnect (some without reading
    anything, some killed, some by RESET) on every thread while two publishers publish without
    pause; the server stays up and a steady subscriber gets every message in order."""
    srv = start_server(options={"threads": 4})
    steady = srv.client(timeout=60)
    assert steady.call("SUBSCRIBE", "storm") == [b"subscribe", b"storm", 1]
    stop = threading.Event()
    errors = []
    published = {"A": 0, "B": 0}

    def publisher(name):
        try:
            with srv.client(timeout=60) as pub:
                n = 0
                while not stop.is_set() and n < 20000:
                    pub.send_raw(b"".join(encode_command("PUBLISH", "storm", f"{name}:{n + k}") for k in range(50)))
                    for _ in range(50):
                        pub.read_reply()
                    n += 50
                published[name] = n
        except Exception as e:
            errors.append(e)

    def churn(seed):
        try:
            for round_ in range(30):
                with srv.client(timeout=60) as c:
                    kind = (seed + round_) % 4
                    if kind == 0:
                        c.call("SUBSCRIBE", "storm")
                        c.read_reply()  # one message, then gone
                    elif kind == 1:
                        c.send("PSUBSCRIBE", "st*")  # gone without reading anything
                    elif kind == 2:
                        c.call("SUBSCRIBE", "storm")
                        c.send("RESET")
                        while c.read_reply() != "RESET":  # messages may come first
                            pass
                        assert c.call("GET", "k") is None
                    else:
                        cid = c.call("CLIENT", "ID")
                        c.call("SUBSCRIBE", "storm")
                        with srv.client() as killer:
                            killer.call("CLIENT", "KILL", "ID", cid)
        except Exception as e:
            errors.append(e)

    pubs = [threading.Thread(target=publisher, args=(n,)) for n in ("A", "B")]
    churners = [threading.Thread(target=churn, args=(k,)) for k in range(4)]
    for t in pubs + churners:
        t.start()
    for t in churners:
        t.join(120)
    stop.set()
    for t in pubs:
        t.join(120)
    try:
        assert not errors, errors
        srv.assert_alive()
        total = published["A"] + published["B"]
        got = read_messages(steady, total)
        for name in ("A", "B"):
            mine = [int(m[2].split(b":")[1]) for m in got if m[2].startswith(name.encode() + b":")]
            assert mine == list(range(published[name])), name
        with srv.client() as c:
            wait_until(lambda: c.call("PUBSUB", "NUMSUB", "storm") == [b"storm", 1] and c.call("PUBSUB", "NUMPAT") == 0,
                       what="the churned subscribers to be gone")
    finally:
        steady.close()


# ---- the pubsub output-buffer limit ---------------------------------------------------------


def stalled_subscriber(srv, channel):
    """A subscriber whose socket has a small receive buffer and which then reads nothing."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
    s.settimeout(20)
    s.connect(("127.0.0.1", srv.port))
    if srv.password:
        s.sendall(encode_command("AUTH", srv.password))
        assert s.recv(64) == b"+OK\r\n"
    s.sendall(encode_command("CLIENT", "ID") + encode_command("SUBSCRIBE", channel))
    buf = b""
    while True:
        buf += s.recv(4096)
        try:
            cid, end = parse_reply(buf)
            confirmation, end2 = parse_reply(buf, end)
            break
        except Exception:
            continue
    assert confirmation == [b"subscribe", channel.encode(), 1]
    return s, cid


def socket_closed(s, timeout):
    """Drains the socket until the server closes it (True) or `timeout` passes (False)."""
    deadline = time.monotonic() + timeout
    s.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(1 << 20)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
        if not chunk:
            return True
    return False


def client_ids(c):
    return {int(f["id"]) for f in client_list(c)}


@pytest.mark.parametrize("threads", [1, 4])
def test_output_limit_drops_a_subscriber_that_does_not_read(start_server, threads):
    srv = start_server(options={"threads": threads})
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 256kb 60") == "OK"
        assert admin.call("CONFIG", "GET", "client-output-buffer-limit")[1].decode().endswith(
            "pubsub 1048576 262144 60")
        stalled, stalled_id = stalled_subscriber(srv, "firehose")
        reader = srv.client()
        try:
            assert reader.call("SUBSCRIBE", "firehose") == [b"subscribe", b"firehose", 1]
            payload = b"p" * 10_000
            count = 2000  # 20 MB in all
            got = []
            failure = []

            def read_all():
                try:
                    reader.sock.settimeout(60)
                    for _ in range(count):
                        got.append(reader.read_reply())
                except Exception as e:
                    failure.append(e)

            t = threading.Thread(target=read_all)
            t.start()
            with srv.client(timeout=60) as pub:
                replies = []
                batch = 20
                for start in range(0, count, batch):
                    # the reading subscriber is kept within a batch or two of the publisher (a
                    # reader slower than the publisher would pass the limit too, on Redis as well)
                    wait_until(lambda: len(got) >= start - batch or failure, timeout=60, what="the reader")
                    pub.send_raw(b"".join(encode_command("PUBLISH", "firehose", b"%06d" % (start + k) + payload)
                                          for k in range(batch)))
                    replies += [pub.read_reply() for _ in range(batch)]
            t.join(120)
            assert not failure, failure
            # the stalled subscriber counted as a receiver until it was dropped, then not
            assert replies[0] == 2 and replies[-1] == 1
            assert all(r in (1, 2) for r in replies)
            assert replies == sorted(replies, reverse=True)
            assert [m[2] for m in got] == [b"%06d" % k + payload for k in range(count)]
            assert all(m[:2] == [b"message", b"firehose"] for m in got)
            assert socket_closed(stalled, 30), "the stalled subscriber was not disconnected"
            wait_until(lambda: stalled_id not in client_ids(admin), what="the stalled subscriber to leave CLIENT LIST")
            assert admin.call("PUBSUB", "NUMSUB", "firehose") == [b"firehose", 1]
            assert admin.call("PUBLISH", "firehose", "after") == 1
            assert reader.read_reply() == msg(b"firehose", b"after")
        finally:
            stalled.close()
            reader.close()


def test_output_limit_soft_limit_after_its_seconds(start_server):
    """Over the soft limit (and under the hard one) for longer than its seconds: the next
    message drops the subscriber. Real time, so it runs against Redis too."""
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 256kb 1") == "OK"
        stalled, stalled_id = stalled_subscriber(srv, "slow")
        try:
            with srv.client(timeout=60) as pub:
                payload = b"s" * 65536
                # well over the socket buffers and the soft limit, nowhere near a hard one
                replies = _pipeline_publish(pub, "slow", [payload] * 160, batch=40)
                assert replies == [1] * 160
                assert stalled_id in client_ids(admin)
                time.sleep(2.5)
                # the soft limit's seconds have passed: the next message drops it (Redis checks
                # on append; lapse also on its watchdog)
                pub.call("PUBLISH", "slow", payload)
                wait_until(lambda: stalled_id not in client_ids(admin), what="the stalled subscriber to be dropped")
                assert pub.call("PUBLISH", "slow", "x") == 0
            assert socket_closed(stalled, 30)
        finally:
            stalled.close()


def test_output_limit_soft_limit_spares_a_client_that_catches_up(start_server):
    """A subscriber above the soft limit only briefly, which then reads, is kept."""
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 256kb 60") == "OK"
        sub = srv.client(timeout=60)
        try:
            assert sub.call("SUBSCRIBE", "c") == [b"subscribe", b"c", 1]
            with srv.client(timeout=60) as pub:
                replies = _pipeline_publish(pub, "c", [b"%04d" % k + b"y" * 65536 for k in range(100)], batch=50)
                assert replies == [1] * 100
            got = read_messages(sub, 100)
            assert [m[2][:4] for m in got] == [b"%04d" % k for k in range(100)]
            assert admin.call("PUBLISH", "c", "still") == 1
            assert sub.read_reply() == msg(b"c", b"still")
        finally:
            sub.close()


@pytest.mark.lapse_only
def test_output_limit_soft_seconds_on_the_server_clock(start_server):
    """With lapse's DEBUG ADVANCE moving its clock past the soft limit's seconds, a subscriber
    that has stayed above the soft limit is dropped without waiting a minute."""
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 256kb 60") == "OK"
        stalled, stalled_id = stalled_subscriber(srv, "slow")
        try:
            with srv.client(timeout=60) as pub:
                payload = b"s" * 65536
                assert _pipeline_publish(pub, "slow", [payload] * 160, batch=40) == [1] * 160
                time.sleep(0.5)
                assert stalled_id in client_ids(admin)
                assert admin.call("DEBUG", "ADVANCE", 61_000) == "OK"
                pub.call("PUBLISH", "slow", payload)
                wait_until(lambda: stalled_id not in client_ids(admin), what="the stalled subscriber to be dropped")
            assert socket_closed(stalled, 30)
        finally:
            stalled.close()


def test_output_limit_normal_class_does_not_apply_to_subscribers(start_server):
    """A subscriber is in the pubsub class: a tight normal limit leaves it alone."""
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 64kb 64kb 1 pubsub 0 0 0") == "OK"
        stalled, stalled_id = stalled_subscriber(srv, "c")
        try:
            with srv.client(timeout=60) as pub:
                assert _pipeline_publish(pub, "c", [b"n" * 65536] * 64, batch=32) == [1] * 64
                time.sleep(1.5)
                assert pub.call("PUBLISH", "c", "x") == 1
            assert stalled_id in client_ids(admin)
        finally:
            stalled.close()
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 pubsub 32mb 8mb 60") == "OK"


# ---- the idle timeout ----------------------------------------------------------------------


def test_subscriber_is_exempt_from_the_idle_timeout(start_server):
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "timeout", "1") == "OK"
        sub, psub, ssub, idle = srv.client(), srv.client(), srv.client(), srv.client()
        try:
            sub.call("SUBSCRIBE", "c")
            psub.call("PSUBSCRIBE", "c*")
            ssub.call("SSUBSCRIBE", "c")
            assert idle.call("PING") == "PONG"
            time.sleep(2.5)
            assert idle.at_eof(15.0), "the idle non-subscriber was not closed"
            assert admin.at_eof(15.0), "the idle admin connection was not closed"
            with srv.client() as pub:
                assert pub.call("PUBLISH", "c", "still-here") == 2
                assert pub.call("SPUBLISH", "c", "shard") == 1
            assert sub.read_reply() == msg(b"c", b"still-here")
            assert psub.read_reply() == pmsg(b"c*", b"c", b"still-here")
            assert ssub.read_reply() == [b"smessage", b"c", b"shard"]
            # once it unsubscribes, the timeout applies again
            assert sub.call("UNSUBSCRIBE") == [b"unsubscribe", b"c", 0]
            assert sub.at_eof(15.0), "the former subscriber was not closed when idle"
        finally:
            for c in (sub, psub, ssub, idle):
                c.close()
            if srv.alive():
                with srv.client() as c:
                    c.call("CONFIG", "SET", "timeout", "0")


# ---- redis-py --------------------------------------------------------------------------------


def test_redis_py_subscribe_and_get_message(rp):
    r = rp
    p = r.pubsub()
    try:
        p.subscribe("news", "sport")
        assert p.get_message(timeout=10) == {"type": "subscribe", "pattern": None, "channel": "news", "data": 1}
        assert p.get_message(timeout=10) == {"type": "subscribe", "pattern": None, "channel": "sport", "data": 2}
        assert p.get_message(timeout=0.1) is None
        assert r.publish("news", "hello") == 1
        assert p.get_message(timeout=10) == {"type": "message", "pattern": None, "channel": "news", "data": "hello"}
        assert r.pubsub_numsub("news", "sport", "none") == [("news", 1), ("sport", 1), ("none", 0)]
        assert sorted(r.pubsub_channels()) == ["news", "sport"]
        assert r.pubsub_numpat() == 0
        p.unsubscribe("news")
        assert p.get_message(timeout=10) == {"type": "unsubscribe", "pattern": None, "channel": "news", "data": 1}
        assert r.publish("news", "x") == 0
        p.ping()  # a PING on the subscribed connection: its reply comes as a message
        pong = p.get_message(timeout=10)
        assert (pong["type"], pong["data"]) == ("pong", "")
    finally:
        p.close()


def test_redis_py_psubscribe_and_listen(rp):
    r = rp
    p = r.pubsub()
    try:
        p.psubscribe("ev:*")
        p.subscribe("ev:1")
        # the subscriptions are sent without waiting for their confirmations
        wait_until(lambda: r.pubsub_numsub("ev:1") == [("ev:1", 1)] and r.pubsub_numpat() == 1, what="subscriptions")
        assert r.publish("ev:1", "a") == 2
        assert r.publish("ev:2", "b") == 1
        p.unsubscribe()
        p.punsubscribe()
        got = []
        for m in p.listen():
            got.append(m)
            if m["type"] == "punsubscribe":
                break
        assert got == [
            {"type": "psubscribe", "pattern": None, "channel": "ev:*", "data": 1},
            {"type": "subscribe", "pattern": None, "channel": "ev:1", "data": 2},
            {"type": "message", "pattern": None, "channel": "ev:1", "data": "a"},
            {"type": "pmessage", "pattern": "ev:*", "channel": "ev:1", "data": "a"},
            {"type": "pmessage", "pattern": "ev:*", "channel": "ev:2", "data": "b"},
            {"type": "unsubscribe", "pattern": None, "channel": "ev:1", "data": 1},
            {"type": "punsubscribe", "pattern": None, "channel": "ev:*", "data": 0},
        ]
    finally:
        p.close()


def test_redis_py_ignore_subscribe_messages(rp):
    r = rp
    p = r.pubsub(ignore_subscribe_messages=True)
    try:
        p.subscribe("q")
        p.psubscribe("q*")
        # the confirmations are read and dropped
        assert p.get_message(timeout=0.5) is None
        wait_until(lambda: r.pubsub_numsub("q") == [("q", 1)] and r.pubsub_numpat() == 1, what="subscriptions")
        assert r.publish("q", "1") == 2
        got = []
        deadline = time.monotonic() + 20
        while len(got) < 2 and time.monotonic() < deadline:
            m = p.get_message(timeout=1)
            if m:
                got.append(m)
        assert got == [{"type": "message", "pattern": None, "channel": "q", "data": "1"},
                       {"type": "pmessage", "pattern": "q*", "channel": "q", "data": "1"}]
    finally:
        p.close()


def test_redis_py_run_in_thread_with_handlers(rp):
    r = rp
    received, patterned = [], []
    done = threading.Event()

    def on_message(m):
        received.append(m["data"])
        if len(received) == 100 and len(patterned) == 100:
            done.set()

    def on_pattern(m):
        patterned.append((m["pattern"], m["channel"], m["data"]))
        if len(received) == 100 and len(patterned) == 100:
            done.set()

    p = r.pubsub(ignore_subscribe_messages=True)
    p.subscribe(**{"jobs": on_message})
    p.psubscribe(**{"jobs.*": on_pattern})
    worker = p.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        wait_until(lambda: r.pubsub_numsub("jobs") == [("jobs", 1)] and r.pubsub_numpat() == 1, what="subscriptions")
        with r.pipeline(transaction=False) as pipe:
            for i in range(100):
                pipe.publish("jobs", f"job-{i}")
                pipe.publish(f"jobs.{i % 3}", f"sub-{i}")
            assert pipe.execute() == [1] * 200
        assert done.wait(30), (len(received), len(patterned))
        assert received == [f"job-{i}" for i in range(100)]
        assert patterned == [("jobs.*", f"jobs.{i % 3}", f"sub-{i}") for i in range(100)]
    finally:
        worker.stop()
        worker.join(10)
        p.close()


def test_redis_py_resp2_connection_refuses_commands_while_subscribed(rp):
    r = rp
    p = r.pubsub()
    try:
        p.subscribe("c")
        assert p.get_message(timeout=10)["type"] == "subscribe"
        p.execute_command("GET", "k")
        m = None
        with pytest.raises(redis.ResponseError, match=r"Can't execute 'get': only \(P\|S\)SUBSCRIBE"):
            m = p.get_message(timeout=10)
        assert m is None
    finally:
        p.close()
