"""CLIENT PAUSE / UNPAUSE, CLIENT REPLY, CLIENT NO-EVICT and CLIENT INFO's fields, on lapse with
--threads 4 and against Debian's redis-server 7.0 (LAPSE_TARGET=redis) to show that every
expected reply is Redis's.

A paused command is seen waiting through CLIENT LIST (its client has flag b, as Redis's
postponed clients do) while a WRITE pause lets reads and CLIENT commands through; it is then
released with CLIENT UNPAUSE. Only the ALL pause, which holds CLIENT LIST too, is checked by
how long its commands took, a lower bound the server guarantees whatever the machine's speed.
"""
from __future__ import annotations

import time

import pytest

from conftest import single_server
from lapse_harness import RawClient, RespError as E, wait_until

server = single_server(threads=4)


def fields(line: str) -> dict:
    return dict(part.split("=", 1) for part in line.strip().split(" "))


def flags_of(observer: RawClient, client_id: int) -> str:
    text = observer.call("CLIENT", "LIST", "ID", client_id).decode()
    return fields(text)["flags"] if text else ""


@pytest.fixture
def clients(server, r):
    conns = [RawClient(server.port) for _ in range(3)]
    yield conns
    conns[0].call("CLIENT", "UNPAUSE")
    for c in conns:
        c.close()


def test_write_pause_holds_writes_until_unpause(clients):
    admin, writer, reader = clients
    writer_id = writer.call("CLIENT", "ID")
    assert admin.call("CLIENT", "PAUSE", 100000, "WRITE") == "OK"
    writer.send("SET", "k", "v")
    wait_until(lambda: "b" in flags_of(admin, writer_id), what="the writer to wait")
    # Reads are served meanwhile, and the write has not happened.
    assert reader.call("GET", "k") is None
    assert reader.call("EVAL_RO", "return redis.call('exists', 'k')", 0) == 0
    assert admin.call("CLIENT", "UNPAUSE") == "OK"
    assert writer.read_reply() == "OK"
    assert reader.call("GET", "k") == b"v"
    assert "b" not in flags_of(admin, writer_id)


@pytest.mark.parametrize("command", [
    ("EVAL", "return 1", 0),
    ("PUBLISH", "ch", "m"),
    ("DEL", "k"),
])
def test_write_pause_holds_scripts_and_publish(clients, command):
    admin, writer, _ = clients
    writer_id = writer.call("CLIENT", "ID")
    assert admin.call("CLIENT", "PAUSE", 100000, "WRITE") == "OK"
    writer.send(*command)
    wait_until(lambda: "b" in flags_of(admin, writer_id), what=f"{command[0]} to wait")
    assert admin.call("CLIENT", "UNPAUSE") == "OK"
    assert not isinstance(writer.read_reply(), E)


def test_write_pause_holds_exec_with_a_write_but_not_a_read_only_one(clients):
    admin, writer, reader = clients
    writer_id = writer.call("CLIENT", "ID")
    assert reader.pipeline([("MULTI",), ("GET", "k"), ]) == ["OK", "QUEUED"]
    assert writer.pipeline([("MULTI",), ("GET", "k")]) == ["OK", "QUEUED"]
    assert admin.call("CLIENT", "PAUSE", 100000, "WRITE") == "OK"
    # Queuing a write is held too, as in Redis (it checks the pause before queuing).
    writer.send("INCR", "k")
    wait_until(lambda: "b" in flags_of(admin, writer_id), what="INCR to wait")
    assert reader.call("EXEC") == [None]
    assert admin.call("CLIENT", "UNPAUSE") == "OK"
    assert writer.read_reply() == "QUEUED"
    assert admin.call("CLIENT", "PAUSE", 100000, "WRITE") == "OK"
    writer.send("EXEC")
    wait_until(lambda: "b" in flags_of(admin, writer_id), what="EXEC to wait")
    assert admin.call("CLIENT", "UNPAUSE") == "OK"
    assert writer.read_reply() == [None, 1]


def test_a_client_killed_while_paused_does_not_run_its_command(clients):
    admin, writer, reader = clients
    writer_id = writer.call("CLIENT", "ID")
    assert admin.call("CLIENT", "PAUSE", 100000, "WRITE") == "OK"
    writer.send("SET", "killed", "1")
    wait_until(lambda: "b" in flags_of(admin, writer_id), what="the writer to wait")
    assert admin.call("CLIENT", "KILL", "ID", writer_id) == 1
    assert admin.call("CLIENT", "UNPAUSE") == "OK"
    assert writer.at_eof()
    assert reader.call("EXISTS", "killed") == 0


def test_pause_all_holds_every_command_for_its_timeout(clients):
    admin, writer, reader = clients
    start = time.monotonic()
    assert admin.call("CLIENT", "PAUSE", 300, "ALL") == "OK"
    writer.send("SET", "k", "v")
    reader.send("PING")
    assert writer.read_reply() == "OK"
    assert reader.read_reply() == "PONG"
    # Nothing answered before the pause's end.
    assert time.monotonic() - start >= 0.3


def test_a_later_pause_never_shortens_or_relaxes_an_earlier_one(clients):
    admin, writer, reader = clients
    writer_id = writer.call("CLIENT", "ID")
    assert admin.call("CLIENT", "PAUSE", 100000, "WRITE") == "OK"
    assert admin.call("CLIENT", "PAUSE", 0, "WRITE") == "OK"
    writer.send("SET", "k", "v")
    wait_until(lambda: "b" in flags_of(admin, writer_id), what="the writer to wait")
    assert admin.call("CLIENT", "UNPAUSE") == "OK"
    assert writer.read_reply() == "OK"


@pytest.mark.parametrize("args, error", [
    (("PAUSE", "x"), "ERR timeout is not an integer or out of range"),
    (("PAUSE", "1.5"), "ERR timeout is not an integer or out of range"),
    (("PAUSE", "99999999999999999999"), "ERR timeout is not an integer or out of range"),
    (("PAUSE", -1), "ERR timeout is negative"),
    (("PAUSE", 10, "FOO"), "ERR CLIENT PAUSE mode must be WRITE or ALL"),
    (("PAUSE", "x", "FOO"), "ERR CLIENT PAUSE mode must be WRITE or ALL"),  # the mode is checked first
    (("PAUSE", -1, "FOO"), "ERR CLIENT PAUSE mode must be WRITE or ALL"),
    (("PAUSE", "x", "WRITE"), "ERR timeout is not an integer or out of range"),
    (("PAUSE", 10, "ALL", "x"), "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP."),
    (("PAUSE",), "ERR wrong number of arguments for 'client|pause' command"),
    (("UNPAUSE", "x"), "ERR wrong number of arguments for 'client|unpause' command"),
    (("REPLY",), "ERR wrong number of arguments for 'client|reply' command"),
    (("REPLY", "maybe"), "ERR syntax error"),
    (("NO-EVICT",), "ERR wrong number of arguments for 'client|no-evict' command"),
    (("NO-EVICT", "maybe"), "ERR syntax error"),
])
def test_bad_arguments_get_redis_errors_and_change_nothing(clients, args, error):
    admin, writer, _ = clients
    assert admin.call("CLIENT", *args) == E(error)
    # No pause began: a write is answered at once.
    assert writer.call("SET", "k", "v") == "OK"
    assert "e" not in fields(admin.call("CLIENT", "INFO").decode())["flags"]


def test_a_timeout_past_the_largest_time_pauses_nothing(clients):
    admin, writer, _ = clients
    # Redis 7.0 adds it to its clock unchecked: the end wraps into the past.
    assert admin.call("CLIENT", "PAUSE", "9223372036854775807", "ALL") == "OK"
    assert writer.call("SET", "k", "v") == "OK"


def test_reply_off_drops_every_reply_until_on(clients):
    c = clients[0]
    c.send_raw(b"CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nNOSUCH\r\nGET\r\nCLIENT REPLY ON\r\nGET a\r\n")
    assert c.read_reply_raw() == b"+OK\r\n"
    assert c.read_reply_raw() == b"$1\r\n1\r\n"


def test_reply_skip_drops_the_next_reply_only(clients):
    c = clients[0]
    c.send_raw(b"CLIENT REPLY SKIP\r\nSET a 2\r\nGET a\r\n")
    assert c.read_reply_raw() == b"$1\r\n2\r\n"
    # SKIP while OFF changes nothing: replies stay off until ON.
    c.send_raw(b"CLIENT REPLY OFF\r\nCLIENT REPLY SKIP\r\nGET a\r\nCLIENT REPLY ON\r\nGET a\r\n")
    assert c.read_reply_raw() == b"+OK\r\n"
    assert c.read_reply_raw() == b"$1\r\n2\r\n"


def test_no_evict_shows_as_flag_e(clients):
    c = clients[0]
    assert c.call("CLIENT", "NO-EVICT", "on") == "OK"
    assert fields(c.call("CLIENT", "INFO").decode())["flags"] == "e"
    assert c.call("CLIENT", "NO-EVICT", "OFF") == "OK"
    assert fields(c.call("CLIENT", "INFO").decode())["flags"] == "N"


REDIS_70_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub", "multi",
                   "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
                   "events", "cmd", "user", "redir", "resp"]


def test_client_info_and_list_have_redis_70_fields_in_order(clients):
    c = clients[0]
    info = c.call("CLIENT", "INFO").decode()
    assert info.endswith("\n")
    assert [kv.split("=", 1)[0] for kv in info.strip().split(" ")] == REDIS_70_FIELDS
    for line in c.call("CLIENT", "LIST").decode().splitlines():
        assert [kv.split("=", 1)[0] for kv in line.split(" ")] == REDIS_70_FIELDS
    f = fields(info)
    assert f["cmd"] == "client|info" and f["user"] == "default" and f["resp"] == "2"
    assert int(f["fd"]) > 0
    host, port = c.sock.getsockname()[:2]
    assert f["addr"] == f"{host}:{port}"


def test_help_lists_the_new_subcommands(clients):
    lines = clients[0].call("CLIENT", "HELP")
    for entry in ["UNPAUSE", "PAUSE <timeout> [WRITE|ALL]", "REPLY (ON|OFF|SKIP)", "NO-EVICT (ON|OFF)"]:
        assert entry in lines
