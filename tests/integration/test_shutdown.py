"""Clean shutdown of the real binary: SHUTDOWN and SIGTERM/SIGINT make it exit with code 0,
also with clients connected and work in flight."""
import signal

import pytest

from conftest import single_server
from lapse_harness import encode_command
from lapse_harness import RespError as E

server = single_server(threads=2)


def commands(*cmds):
    return b"".join(encode_command(*c) for c in cmds)


def test_shutdown_command_exits_zero(start_server):
    srv = start_server({"threads": 4})
    with srv.client() as c:
        c.call("SET", "k", "v")
        c.send("SHUTDOWN")
        assert c.at_eof(), "SHUTDOWN did not close the connection"
    assert srv.wait_exit(20) == 0
    srv.expected_exit = True


def test_shutdown_with_open_clients_and_pending_work(start_server):
    srv = start_server({"threads": 2})
    clients = [srv.client() for _ in range(20)]
    for c in clients:
        c.send_raw(commands(*[("INCR", "n")] * 100))
    with srv.client() as c:
        c.send("SHUTDOWN", "NOSAVE")
        c.at_eof()
    assert srv.wait_exit(20) == 0
    srv.expected_exit = True
    for c in clients:
        c.close()


def test_shutdown_bad_option(raw):
    assert raw.call("SHUTDOWN", "BOGUS") == E("ERR syntax error")


@pytest.mark.parametrize("args", [("SAVE", "NOSAVE"), ("NOW", "ABORT"), ("ABORT", "FORCE"), ("NOSAVE", "ABORT")])
def test_shutdown_conflicting_options_are_a_syntax_error(raw, args):
    assert raw.call("SHUTDOWN", *args) == E("ERR syntax error")
    assert raw.call("PING") == "PONG"


def test_shutdown_abort_finds_no_shutdown_in_progress(raw):
    assert raw.call("SHUTDOWN", "ABORT") == E("ERR No shutdown in progress.")
    assert raw.call("shutdown", "abort") == E("ERR No shutdown in progress.")
    assert raw.call("PING") == "PONG"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_exits_zero(start_server, sig):
    srv = start_server({"threads": 2})
    with srv.client() as c:
        assert c.call("SET", "k", "v") == "OK"
        srv.proc.send_signal(sig)
        assert c.at_eof(timeout=20)
    assert srv.wait_exit(20) == 0
    srv.expected_exit = True
