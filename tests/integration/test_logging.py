"""--logfile and --loglevel: the log goes to the named file, and the level filters it, at
start-up and after CONFIG SET loglevel.

Three events of known levels are used: the start-up line (notice), a client's protocol error
(debug, as in Redis) and the notice of a SIGTERM (warning). The file is read once the server
has exited, so that everything it logged has been flushed.
"""
import os
import re
import signal
import subprocess
import tempfile

import pytest

from lapse_harness import RawClient, lapse_binary
from lapse_harness import RespError as E

pytestmark = pytest.mark.lapse_only  # lapse's log format

PROTOCOL_ERROR = E("ERR Protocol error: invalid bulk length")
LINE = r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[lapse\] "


@pytest.fixture
def logfile():
    fd, path = tempfile.mkstemp(prefix="lapse-logging-", suffix=".log")
    os.close(fd)
    yield path
    os.unlink(path)


def start(start_server, logfile, level):
    return start_server({"threads": 2, "logfile": logfile, "loglevel": level})


def open_clients(srv, n):
    """n connections open at once, so that each has its own address in the log."""
    clients = [RawClient(srv.port) for _ in range(n)]
    for c in clients:
        assert c.call("PING") == "PONG"
    return clients


def protocol_error(client) -> str:
    """Makes the server log a protocol error for `client` (at debug level); returns the
    client's address as the server names it."""
    addr = "%s:%d" % client.sock.getsockname()[:2]
    client.send_raw(b"*1\r\n$x\r\n")
    assert client.read_reply() == PROTOCOL_ERROR
    assert client.at_eof()
    client.close()
    return addr


def debug_line(addr):
    return re.compile(LINE + re.escape(f"[debug] client {addr} protocol error: Protocol error: invalid bulk length"))


def sigterm_and_read(srv, path) -> list[str]:
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.wait_exit(20) == 0
    srv.expected_exit = True
    with open(path) as f:
        return f.read().splitlines()


def count(lines, pattern):
    return sum(1 for line in lines if pattern.fullmatch(line))


SIGTERM_LINE = re.compile(LINE + re.escape("[warning] received signal 15, shutting down"))


def ready_line(srv):
    return re.compile(LINE + r"\[info\] lapse \d+\.\d+\.\d+ ready on 127\.0\.0\.1:" + str(srv.port) +
                      r" with 2 threads")


# level -> (start-up line logged, debug event logged, SIGTERM warning logged)
LEVELS = {
    "debug": (True, True, True),
    "verbose": (True, False, True),
    "notice": (True, False, True),
    "warning": (False, False, True),
    "nothing": (False, False, False),
}


@pytest.mark.parametrize("level", list(LEVELS))
def test_logfile_and_loglevel(start_server, logfile, level):
    srv = start(start_server, logfile, level)
    (c,) = open_clients(srv, 1)
    with srv.client() as admin:
        assert admin.call("CONFIG", "GET", "loglevel") == [b"loglevel", level.encode()]
        assert admin.call("CONFIG", "GET", "logfile") == [b"logfile", logfile.encode()]
    addr = protocol_error(c)
    lines = sigterm_and_read(srv, logfile)
    ready, debug, warning = LEVELS[level]
    assert count(lines, ready_line(srv)) == int(ready)
    assert count(lines, debug_line(addr)) == int(debug)
    assert count(lines, SIGTERM_LINE) == int(warning)
    if level == "nothing":
        assert lines == []
    if not debug:
        assert [line for line in lines if "[debug]" in line] == []
    assert srv.log_text() == ""  # nothing went to standard output


def test_config_set_loglevel_applies_to_later_events(start_server, logfile):
    srv = start(start_server, logfile, "warning")
    before, during, after = open_clients(srv, 3)
    with srv.client() as admin:
        addr_before = protocol_error(before)
        assert admin.call("CONFIG", "SET", "loglevel", "debug") == "OK"
        assert admin.call("CONFIG", "GET", "loglevel") == [b"loglevel", b"debug"]
        addr_during = protocol_error(during)
        assert admin.call("CONFIG", "SET", "loglevel", "WARNING") == "OK"
        assert admin.call("CONFIG", "GET", "loglevel") == [b"loglevel", b"warning"]
        addr_after = protocol_error(after)
        assert admin.call("CONFIG", "SET", "loglevel", "loud") == E(
            "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the "
            "following: debug, verbose, notice, warning, nothing")
        assert admin.call("CONFIG", "GET", "loglevel") == [b"loglevel", b"warning"]
    lines = sigterm_and_read(srv, logfile)
    assert count(lines, debug_line(addr_before)) == 0
    assert count(lines, debug_line(addr_during)) == 1
    assert count(lines, debug_line(addr_after)) == 0
    assert count(lines, ready_line(srv)) == 0  # logged at start-up, under warning
    assert count(lines, SIGTERM_LINE) == 1


def test_config_set_loglevel_nothing_silences_warnings(start_server, logfile):
    srv = start(start_server, logfile, "notice")
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "loglevel", "nothing") == "OK"
    lines = sigterm_and_read(srv, logfile)
    assert count(lines, ready_line(srv)) == 1
    assert count(lines, SIGTERM_LINE) == 0


def test_logfile_is_fixed_at_startup(start_server, logfile):
    srv = start(start_server, logfile, "notice")
    with srv.client() as admin:
        assert admin.call("CONFIG", "SET", "logfile", "/tmp/elsewhere.log") == E(
            "ERR CONFIG SET failed (possibly related to argument 'logfile') - can't set immutable config")
        assert admin.call("CONFIG", "GET", "logfile") == [b"logfile", logfile.encode()]


def test_unwritable_logfile_refuses_to_start(tmp_path):
    (tmp_path / "file").write_text("")
    path = tmp_path / "file" / "lapse.log"  # under a regular file: cannot be created
    proc = subprocess.run([lapse_binary(), "--port", "0", "--logfile", str(path)], capture_output=True, timeout=20,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("lapse-server: cannot open log file: ")
    assert str(path) in proc.stderr.decode()
