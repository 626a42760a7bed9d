"""MONITOR: Redis 7.0's line per command, on lapse started with --threads 4, and the same tests
against Debian's redis-server 7.0 (LAPSE_TARGET=redis) to show that every expected line is
Redis's.

A monitor's lines are read up to a sentinel: a `PING <sentinel>` that the test sends last, on a
connection of its own, so that every line before it has been sent. Lines are compared with their
timestamp replaced by TS and each client's address by the name the test gave its connection.
No assertion depends on how fast the machine is.
"""
from __future__ import annotations

import re
import threading

import pytest
import redis

from conftest import single_server
from lapse_harness import RawClient, RespError as E

server = single_server(threads=4)

LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$", re.S)


class Monitor:
    """A MONITOR connection that reads lines and names their clients."""

    def __init__(self, port):
        self.conn = RawClient(port)
        assert self.conn.call("MONITOR") == "OK"
        self.names = {}  # "ip:port" -> the test's name for that client
        self.sentinels = 0

    def name(self, client: RawClient, label: str):
        host, port = client.sock.getsockname()[:2]
        self.names[f"{host}:{port}"] = label
        return client

    def lines_until_sentinel(self, port):
        """Every line up to (not including) a sentinel PING sent now from a fresh connection."""
        self.sentinels += 1
        token = f"sentinel-{self.sentinels}"
        with RawClient(port) as c:
            assert c.call("PING", token) == token.encode()
        out = []
        while True:
            raw = self.conn.read_reply_raw()
            m = LINE.match(raw)
            assert m, raw
            body = m.group(5)
            assert body.endswith(b"\r\n")
            body = body[:-2]
            if body == f'"PING" "{token}"'.encode():
                return out
            origin = m.group(4).decode()
            out.append(f"[{m.group(3).decode()} {self.names.get(origin, origin)}] {body.decode('latin1')}")

    def close(self):
        self.conn.close()


@pytest.fixture
def mon(server, r):
    m = Monitor(server.port)
    yield m
    m.close()


@pytest.fixture
def c(server, mon):
    with RawClient(server.port) as conn:
        yield mon.name(conn, "c")


def test_line_format_quotes_like_sdscatrepr(server, mon, c):
    c.call("SET", "k", b'v"\\\n\r\t\x07\x08\x01\xc3\xa9 ~')
    c.call("SET", "n", 123)
    c.call("set", "Mixed", "")
    assert mon.lines_until_sentinel(server.port) == [
        r'[0 c] "SET" "k" "v\"\\\n\r\t\a\b\x01\xc3\xa9 ~"',
        '[0 c] "SET" "n" "123"',
        '[0 c] "set" "Mixed" ""',
    ]


def test_timestamp_is_wall_clock_seconds_and_micros(server, mon, c):
    sec, _ = c.call("TIME")
    c.call("PING")
    with RawClient(server.port) as s:
        s.call("PING", "sentinel-x")
    raw = mon.conn.read_reply_raw()
    m = LINE.match(raw)
    assert m and m.group(5) == b'"TIME"\r\n'
    # The line's seconds are the server's wall clock, the same clock TIME reads.
    assert abs(int(m.group(1)) - int(sec)) <= 1


def test_select_shows_the_database_it_selected(server, mon, c):
    c.call("SELECT", 3)
    c.call("SET", "x", 1)
    c.call("SELECT", 0)
    assert mon.lines_until_sentinel(server.port) == [
        '[3 c] "SELECT" "3"', '[3 c] "SET" "x" "1"', '[0 c] "SELECT" "0"']


def test_multi_exec_shows_commands_between_multi_and_exec(server, mon, c):
    assert c.pipeline([("MULTI",), ("SET", "a", 1), ("GET", "a"), ("EXEC",)]) == ["OK", "QUEUED", "QUEUED", ["OK", b"1"]]
    c.call("MULTI")
    c.call("DISCARD")
    assert mon.lines_until_sentinel(server.port) == [
        '[0 c] "MULTI"', '[0 c] "SET" "a" "1"', '[0 c] "GET" "a"', '[0 c] "EXEC"',
        '[0 c] "MULTI"', '[0 c] "DISCARD"']


def test_a_refused_command_is_not_shown_but_a_failed_one_is(server, mon, c):
    assert c.call("NOSUCH", "x") == E("ERR unknown command 'NOSUCH', with args beginning with: 'x' ")
    assert c.call("GET") == E("ERR wrong number of arguments for 'get' command")
    assert c.call("SET", "a", "b", "EX", -1) == E("ERR invalid expire time in 'set' command")
    c.call("MULTI")
    c.call("GET")
    assert c.call("EXEC") == E("EXECABORT Transaction discarded because of previous errors.")
    assert mon.lines_until_sentinel(server.port) == [
        '[0 c] "SET" "a" "b" "EX" "-1"', '[0 c] "MULTI"', '[0 c] "EXEC"']


def test_script_commands_show_as_lua_after_their_eval(server, mon, c):
    script = "redis.call('set', KEYS[1], 'x'); return redis.call('get', KEYS[1])"
    assert c.call("EVAL", script, 1, "ek") == b"x"
    c.call("SELECT", 2)
    assert c.call("EVAL", "return redis.call('incr', 'n')", 0) == 1
    c.call("SELECT", 0)
    assert isinstance(c.call("EVAL", "syntax error here", 0), E)
    assert isinstance(c.call("EVAL", "return 1", 5), E)
    assert isinstance(c.call("EVAL", "return redis.call('nosuch')", 0), E)
    assert isinstance(c.call("FCALL", "nofunc", 0), E)
    assert c.pipeline([("MULTI",), ("EVAL", "return redis.call('incr', 'm')", 0), ("EXEC",)]) == ["OK", "QUEUED", [1]]
    assert mon.lines_until_sentinel(server.port) == [
        f'[0 c] "EVAL" "{script}" "1" "ek"', '[0 lua] "set" "ek" "x"', '[0 lua] "get" "ek"',
        '[2 c] "SELECT" "2"',
        '[2 c] "EVAL" "return redis.call(\'incr\', \'n\')" "0"', '[2 lua] "incr" "n"',
        '[0 c] "SELECT" "0"',
        '[0 c] "EVAL" "syntax error here" "0"',
        '[0 c] "EVAL" "return 1" "5"',
        '[0 c] "EVAL" "return redis.call(\'nosuch\')" "0"',
        '[0 c] "FCALL" "nofunc" "0"',
        '[0 c] "MULTI"', '[0 c] "EVAL" "return redis.call(\'incr\', \'m\')" "0"', '[0 lua] "incr" "m"', '[0 c] "EXEC"',
    ]


def test_passwords_are_redacted(server, mon, c):
    assert c.call("AUTH", "secret") == E(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")
    assert c.call("AUTH", "someone", "secret") == E("WRONGPASS invalid username-password pair or user is disabled.")
    assert c.call("HELLO", 2, "AUTH", "someone", "secret", "SETNAME", "x") == E(
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert mon.lines_until_sentinel(server.port) == [
        '[0 c] "AUTH" "(redacted)"',
        '[0 c] "AUTH" "(redacted)" "(redacted)"',
        '[0 c] "HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "x"',
    ]


def test_admin_commands_are_hidden(server, mon, c):
    c.call("CONFIG", "GET", "maxmemory")
    c.call("SLOWLOG", "LEN")
    c.call("CLIENT", "LIST")
    c.call("CLIENT", "ID")
    c.call("INFO", "server")
    c.call("SCRIPT", "EXISTS", "a")
    assert mon.lines_until_sentinel(server.port) == [
        '[0 c] "CLIENT" "ID"', '[0 c] "INFO" "server"', '[0 c] "SCRIPT" "EXISTS" "a"']


def test_a_blocking_command_shows_when_it_starts_to_wait(server, mon, c):
    with RawClient(server.port) as pusher:
        mon.name(pusher, "pusher")
        c.send("BLPOP", "bl", 0)
        # The BLPOP line comes before the push that serves it: read it before pushing.
        raw = mon.conn.read_reply_raw()
        assert LINE.match(raw).group(5) == b'"BLPOP" "bl" "0"\r\n'
        assert pusher.call("RPUSH", "bl", "x") == 1
        assert c.read_reply() == [b"bl", b"x"]
    assert mon.lines_until_sentinel(server.port) == ['[0 pusher] "RPUSH" "bl" "x"']


def test_a_monitor_sees_its_own_commands_after_their_replies(server, mon):
    mon.name(mon.conn, "mon")
    # A second MONITOR gets no reply at all: the PING's reply comes next, then both lines'.
    mon.conn.send_raw(b"MONITOR\r\nPING\r\n")
    assert mon.conn.read_reply_raw() == b"+PONG\r\n"
    assert mon.lines_until_sentinel(server.port) == ['[0 mon] "PING"']


def test_monitor_inside_exec_is_refused(server, c):
    assert c.pipeline([("MULTI",), ("MONITOR",), ("EXEC",)]) == [
        "OK", "QUEUED", [E("ERR MONITOR isn't allowed for DENY BLOCKING client")]]
    assert c.call("CLIENT", "INFO").decode().split(" flags=")[1].startswith("N ")


def test_client_list_shows_flag_o(server, mon, c):
    mon.conn.send("CLIENT", "INFO")
    info = mon.conn.read_reply().decode()
    assert " flags=O " in info and " cmd=client|info " in info


def test_reset_and_quit_stop_monitoring(server, c):
    with RawClient(server.port) as m1, RawClient(server.port) as m2:
        assert m1.call("MONITOR") == "OK"
        # RESET's own line is not sent to m1: it no longer monitors once RESET has run.
        assert m1.call("RESET") == "RESET"
        assert m2.call("MONITOR") == "OK"
        m2.send("QUIT")
        assert m2.read_reply() == "OK"
        assert m2.at_eof()
        c.call("SET", "after", 1)
        # Nothing but m1's own replies reaches it: no line for SET, PING or CLIENT INFO.
        assert m1.call("PING") == "PONG"
        assert m1.call_raw("CLIENT", "INFO").split(b" flags=")[1].startswith(b"N ")
        assert m1.call("PING") == "PONG"


def test_clients_on_every_thread_reach_one_monitor_in_order(server, mon):
    """Several clients, spread over the server's 4 threads, run commands at the same time; the
    monitor gets every line, and each client's lines in the order it ran them."""
    clients = [mon.name(RawClient(server.port), f"w{i}") for i in range(8)]
    per_client = 200

    def work(i, conn):
        for n in range(per_client):
            conn.call("SET", f"w{i}", n)

    threads = [threading.Thread(target=work, args=(i, conn)) for i, conn in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = mon.lines_until_sentinel(server.port)
    for conn in clients:
        conn.close()
    assert len(lines) == len(clients) * per_client
    for i in range(len(clients)):
        mine = [ln for ln in lines if ln.startswith(f"[0 w{i}] ")]
        assert mine == [f'[0 w{i}] "SET" "w{i}" "{n}"' for n in range(per_client)]


def test_redis_py_monitor_parses_the_lines(server, r):
    with r.monitor() as m:
        other = redis.Redis(port=server.port, decode_responses=True)
        other.set("py", "v")
        other.close()
        event = m.next_command()
        assert event["command"] == "SET py v"
        assert event["db"] == 0
        assert event["client_address"] == "127.0.0.1"
        assert isinstance(event["time"], float)
