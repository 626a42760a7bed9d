"""AUTH, SELECT, CONFIG, INFO, idle timeout, maxclients and the config file, against the real
binary. Expected replies are Redis 7.0's (LAPSE_TARGET=redis runs the same file against
redis-server).
"""
import os
import tempfile

import pytest
import redis

from conftest import single_server
from lapse_harness import RawClient
from lapse_harness import RespError as E

server = single_server(threads=2)

NOAUTH = E("NOAUTH Authentication required.")
WRONGPASS = E("WRONGPASS invalid username-password pair or user is disabled.")


# ---- AUTH ------------------------------------------------------------------------------


AUTH_CASES = [
    ("PING",), ("ECHO", "x"), ("GET", "k"), ("SET", "k", "v"), ("DEL", "k"), ("EXISTS", "k"), ("SELECT", "1"),
    ("CLIENT", "ID"), ("CLIENT", "SETNAME", "x"), ("CONFIG", "GET", "port"), ("INFO",), ("COMMAND",),
    ("COMMAND", "COUNT"), ("DBSIZE",), ("KEYS", "*"), ("SCAN", "0"), ("FLUSHALL",), ("TIME",), ("MGET", "a", "b"),
    ("MSET", "a", "1"), ("INCR", "c"), ("EXPIRE", "k", "10"), ("TTL", "k"), ("SWAPDB", "0", "1"),
    ("SHUTDOWN",), ("DEBUG", "ADVANCE", "1"), ("OBJECT", "ENCODING", "k"), ("RANDOMKEY",),
]


def test_auth_required(start_server):
    srv = start_server({"requirepass": "s3cret pass"})
    with RawClient(srv.port) as c:
        for cmd in AUTH_CASES:
            assert c.call(*cmd) == NOAUTH, cmd
        assert c.call("AUTH", "wrong") == WRONGPASS
        assert c.call("AUTH", "default", "wrong") == WRONGPASS
        assert c.call("AUTH", "nosuchuser", "s3cret pass") == WRONGPASS
        assert c.call("GET", "k") == NOAUTH
        assert c.call("HELLO", "3", "AUTH", "default", "wrong") == WRONGPASS
        assert c.call("GET", "k") == NOAUTH
        assert c.call("AUTH", "a", "b", "c") == E("ERR syntax error")
        assert c.call("AUTH") == E("ERR wrong number of arguments for 'auth' command")
        assert c.call_raw("AUTH", "s3cret pass") == b"+OK\r\n"
        assert c.call("PING") == "PONG"
        assert c.call("SET", "k", "v") == "OK"
        # a wrong AUTH later does not log the connection out (as in Redis)
        assert c.call("AUTH", "wrong") == WRONGPASS
        assert c.call("GET", "k") == b"v"
    with RawClient(srv.port) as c:
        assert c.call("AUTH", "default", "s3cret pass") == "OK"
        assert c.call("GET", "k") == b"v"
    with RawClient(srv.port) as c:
        hello = c.call("HELLO", "3", "AUTH", "default", "s3cret pass", "SETNAME", "authed")
        assert hello[b"proto"] == 3
        assert c.call_raw("GET", "nokey") == b"_\r\n"
        assert c.call("CLIENT", "GETNAME") == b"authed"
    with RawClient(srv.port) as c:
        assert c.call_raw("QUIT") == b"+OK\r\n"
        assert c.at_eof()
    good = redis.Redis(port=srv.port, password="s3cret pass", decode_responses=True)
    assert good.get("k") == "v"
    good.close()
    bad = redis.Redis(port=srv.port, password="nope")
    with pytest.raises((redis.AuthenticationError, redis.ResponseError), match="invalid username-password"):
        bad.ping()
    bad.close()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=srv.port).get("k")


def test_hello_before_auth_message(start_server):
    srv = start_server({"requirepass": "pw"})
    with RawClient(srv.port) as c:
        assert c.call("HELLO", "3") == E(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH "
            "<user> <pass> option can be used to authenticate the client and select the RESP protocol "
            "version at the same time")
        assert c.call("GET", "k") == NOAUTH


def test_arity_and_unknown_command_checked_before_auth(start_server):
    """Redis 7.0 checks that the command exists and its arity before authentication."""
    srv = start_server({"requirepass": "pw"})
    with RawClient(srv.port) as c:
        assert c.call("NOSUCH", "x") == E("ERR unknown command 'NOSUCH', with args beginning with: 'x' ")
        assert c.call("GET") == E("ERR wrong number of arguments for 'get' command")
        assert c.call("SET", "k") == E("ERR wrong number of arguments for 'set' command")
        assert c.call("GET", "k") == NOAUTH


def test_auth_without_requirepass(raw):
    assert raw.call("AUTH", "x") == E(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")
    assert raw.call("AUTH", "default", "anything") == "OK"  # the default user has nopass
    assert raw.call("AUTH", "someone", "x") == WRONGPASS


# ---- SELECT ----------------------------------------------------------------------------


def test_select_range(raw):
    for db in range(16):
        assert raw.call_raw("SELECT", db) == b"+OK\r\n"
    assert raw.call("SELECT", 16) == E("ERR DB index is out of range")
    assert raw.call("SELECT", -1) == E("ERR DB index is out of range")
    assert raw.call("SELECT", "x") == E("ERR value is not an integer or out of range")


def test_databases_option(start_server):
    srv = start_server({"databases": 4})
    with srv.client() as c:
        assert c.call("SELECT", 3) == "OK"
        assert c.call("SELECT", 4) == E("ERR DB index is out of range")
        assert c.call("CONFIG", "GET", "databases") == [b"databases", b"4"]
        assert c.call("MOVE", "k", 4) == E("ERR DB index is out of range")
    r = redis.Redis(port=srv.port, db=3, decode_responses=True)
    r.set("in3", "x")
    assert r.get("in3") == "x"
    r.close()


# ---- CONFIG ----------------------------------------------------------------------------


@pytest.mark.lapse_only
def test_persistence_settings_lapse_lacks_are_refused_not_answered_ok(raw, start_server):
    # lapse writes no AOF timestamp annotations: asking for them is an error, never an OK that
    # changes nothing; the value lapse has is accepted, and CONFIG GET is unchanged.
    assert raw.call("CONFIG", "SET", "aof-timestamp-enabled", "yes") == E(
        "ERR CONFIG SET failed (possibly related to argument 'aof-timestamp-enabled') - "
        "lapse does not write AOF timestamp annotations: aof-timestamp-enabled can only be no")
    assert raw.call("CONFIG", "GET", "aof-timestamp-enabled") == [b"aof-timestamp-enabled", b"no"]
    assert raw.call("CONFIG", "SET", "aof-timestamp-enabled", "no") == "OK"
    with pytest.raises(Exception):
        start_server(options={"aof-timestamp-enabled": "yes"})


def test_config_get(server, r, raw):
    assert r.config_get("port") == {"port": str(server.port)}
    assert r.config_get("maxclients") == {"maxclients": "10000"}
    assert r.config_get("save") == {"save": ""}  # the harness's, as it starts Redis
    assert r.config_get("appendonly") == {"appendonly": "no"}
    assert r.config_get("databases") == {"databases": "16"}
    assert r.config_get("timeout") == {"timeout": "0"}
    assert raw.call_raw("CONFIG", "GET", "save") == b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"
    assert raw.call("CONFIG", "GET", "nosuchoption") == []
    reply = raw.call("CONFIG", "GET", "port", "appendonly")
    assert dict(zip(reply[::2], reply[1::2])) == {b"port": str(server.port).encode(), b"appendonly": b"no"}
    assert raw.call("CONFIG", "GET") == E("ERR wrong number of arguments for 'config|get' command")
    assert raw.call("CONFIG", "FOO") == E("ERR unknown subcommand 'FOO'. Try CONFIG HELP.")


def test_config_set_timeout(raw):
    try:
        assert raw.call("CONFIG", "SET", "timeout", "300") == "OK"
        assert raw.call("CONFIG", "GET", "timeout") == [b"timeout", b"300"]
        assert raw.call("CONFIG", "SET", "timeout", "abc") == E(
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer")
        assert raw.call("CONFIG", "SET", "nosuch", "1") == E(
            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")
        assert raw.call("CONFIG", "GET", "timeout") == [b"timeout", b"300"]
    finally:
        assert raw.call("CONFIG", "SET", "timeout", "0") == "OK"


@pytest.mark.lapse_only
def test_idle_timeout_applies_via_debug_advance(start_server):
    srv = start_server({"timeout": 2})
    with srv.client() as admin, srv.client() as idle:
        assert idle.call("PING") == "PONG"
        assert admin.call("CONFIG", "GET", "timeout") == [b"timeout", b"2"]
        admin.call("DEBUG", "ADVANCE", 10_000)
        assert idle.at_eof(timeout=5), "an idle client was not closed"


@pytest.mark.lapse_only
def test_config_set_timeout_applies_to_open_connections(start_server):
    # In Redis CONFIG SET timeout applies at once to every connected client.
    srv = start_server()
    with srv.client() as admin, srv.client() as idle:
        assert idle.call("PING") == "PONG"
        assert admin.call("CONFIG", "SET", "timeout", "1") == "OK"
        admin.call("DEBUG", "ADVANCE", 10_000)
        assert idle.at_eof(timeout=5), "a client connected before CONFIG SET timeout was never closed"


def test_maxclients(start_server):
    srv = start_server({"maxclients": 3})
    held = [srv.client() for _ in range(3)]
    try:
        for c in held:
            assert c.call("PING") == "PONG"
        with RawClient(srv.port) as extra:
            assert extra.read_reply_raw() == b"-ERR max number of clients reached\r\n"
            assert extra.at_eof()
    finally:
        for c in held:
            c.close()


def test_config_file_and_flag_override(start_server):
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write("# lapse test config\nport 1\ndatabases 5\nrequirepass \"file pass\"\nmaxclients 77\n")
        path = f.name
    try:
        srv = start_server({"requirepass": "file pass"}, config_file=path)  # --port from the harness wins
        with srv.client() as c:
            assert c.call("CONFIG", "GET", "databases") == [b"databases", b"5"]
            assert c.call("CONFIG", "GET", "maxclients") == [b"maxclients", b"77"]
            assert c.call("CONFIG", "GET", "port") == [b"port", str(srv.port).encode()]
            server_info = c.call("INFO", "server").decode()
            assert f"config_file:{os.path.realpath(path)}\r\n" in server_info
    finally:
        os.unlink(path)


def test_info_server_names_the_process(r, server):
    info = r.info("server")
    run_id = info["run_id"]
    assert len(run_id) == 40 and set(run_id) <= set("0123456789abcdef")
    assert r.info("server")["run_id"] == run_id  # fixed for the life of the process
    assert os.path.realpath(info["executable"]) == os.path.realpath(server.command_line(server.port)[0])
    assert info["config_file"] == ""  # the harness passes flags only
    assert info["os"].startswith("Linux ")
    assert info["configured_hz"] == info["hz"]


# ---- INFO ------------------------------------------------------------------------------


def test_info_parsing(r):
    r.set("a", "1")
    r.set("b", "2", ex=1000)
    info = r.info()
    assert info["redis_version"].startswith("7.")
    assert info["connected_clients"] >= 1
    assert isinstance(info["used_memory"], int) and info["used_memory"] > 0
    assert info["db0"]["keys"] == 2
    assert info["db0"]["expires"] == 1
    for field in ["uptime_in_seconds", "tcp_port", "total_commands_processed", "expired_keys", "evicted_keys",
                  "used_memory_rss", "maxmemory", "mem_fragmentation_ratio", "total_connections_received"]:
        assert field in info, field
    assert isinstance(info["expired_stale_perc"], float)
    keyspace = r.info("keyspace")
    assert list(keyspace) == ["db0"] and set(keyspace["db0"]) == {"keys", "expires", "avg_ttl"}
    assert (keyspace["db0"]["keys"], keyspace["db0"]["expires"]) == (2, 1)
    assert 0 <= keyspace["db0"]["avg_ttl"] <= 1_000_000  # Redis estimates it lazily, from 0
    assert set(r.info("server")) >= {"redis_version", "tcp_port", "process_id", "uptime_in_seconds"}
    assert "used_memory" in r.info("memory") and "redis_version" not in r.info("memory")
    assert "expired_keys" in r.info("stats")
    assert "connected_clients" in r.info("clients")
    assert r.info("nosuchsection") == {}


def test_info_raw_format(raw):
    text = raw.call("INFO")
    assert text.startswith(b"# Server\r\n")
    sections = [line for line in text.split(b"\r\n") if line.startswith(b"# ")]
    assert {b"# Server", b"# Clients", b"# Memory", b"# Stats", b"# Keyspace"} <= set(sections)
    for line in text.split(b"\r\n"):
        assert line == b"" or line.startswith(b"# ") or b":" in line, line
    assert raw.call("INFO", "nosuch") == b""
