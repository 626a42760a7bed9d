"""redis-cli's hints and HELP in a real terminal: redis-cli 7.0 builds both from COMMAND DOCS
when it connects, so what it shows on lapse must be what it shows on redis-server. redis-cli
runs under tmux; the test types without Enter and reads the screen."""
import itertools
import os
import shutil
import subprocess

import pytest

from conftest import single_server
from lapse_harness import target_kind, wait_until

server = single_server(threads=2)
_terminal_ids = itertools.count()

pytestmark = pytest.mark.skipif(not shutil.which("tmux") or not shutil.which("redis-cli"),
                                reason="needs tmux and redis-cli")


class Terminal:
    """redis-cli -p PORT in a detached tmux session of 200x50 on a tmux server of its own."""

    def __init__(self, port):
        self.socket = f"lapse-hints-{os.getpid()}-{next(_terminal_ids)}"
        self._tmux("new-session", "-d", "-s", "cli", "-x", "200", "-y", "50", f"redis-cli -p {port}")
        wait_until(lambda: f"{port}>" in self.screen(), what="the redis-cli prompt")

    def _tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True).stdout

    def screen(self):
        return self._tmux("capture-pane", "-p", "-t", "cli")

    def type(self, text, enter=False):
        self._tmux("send-keys", "-t", "cli", "C-u", "C-l")
        self._tmux("send-keys", "-t", "cli", "-l", text)
        if enter:
            self._tmux("send-keys", "-t", "cli", "Enter")

    def prompt_line(self):
        return next(line for line in self.screen().splitlines() if ">" in line).split(">", 1)[1]

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def terminals(server, redis_server):
    made = []

    def open_(port):
        made.append(Terminal(port))
        return made[-1]

    yield lambda: (open_(server.port), open_(redis_server.port))
    for t in made:
        t.close()


def hint(terminal, typed):
    terminal.type(typed)
    wait_until(lambda: terminal.prompt_line().startswith(" " + typed) and len(terminal.prompt_line()) > len(typed) + 1,
               what=f"a hint after {typed!r}")
    return terminal.prompt_line().rstrip()


@pytest.mark.parametrize("typed", ["SET k v ", "ZADD z ", "CLIENT KILL ", "XADD s ", "GEOSEARCH k "])
def test_hint_same_as_redis(terminals, typed):
    ours, theirs = terminals()
    expected = hint(theirs, typed)
    assert hint(ours, typed) == expected


def test_set_hint_text(terminals):
    ours, _ = terminals()
    assert hint(ours, "SET k v ") == (" SET k v [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|"
                                      "PXAT unix-time-milliseconds|KEEPTTL]")


def help_text(terminal, topic):
    terminal.type(f"HELP {topic}", enter=True)
    wait_until(lambda: "since:" in terminal.screen(), what=f"HELP {topic}")
    wait_until(lambda: terminal.screen().rstrip().endswith(">"), what="the next prompt")
    return terminal.screen().rstrip()


def test_help_set_same_as_redis(terminals):
    ours, theirs = terminals()
    expected = help_text(theirs, "SET")
    got = help_text(ours, "SET")
    # Between the prompt lines, which name the port.
    assert got.split("\n")[1:-1] == expected.split("\n")[1:-1]
    assert "SET key value [NX|XX] [GET]" in got


@pytest.mark.skipif(target_kind() == "redis", reason="lapse's own commands")
def test_iput_hint(terminals):
    ours, _ = terminals()
    assert hint(ours, "IPUT c id ") == " IPUT c id json [NX|XX] [IFMATCH etag]"
    assert hint(ours, "IPUT c id {} ") == " IPUT c id {} [NX|XX] [IFMATCH etag]"


@pytest.mark.skipif(target_kind() == "redis", reason="lapse's own commands")
def test_help_container_group(terminals):
    ours, _ = terminals()
    text = help_text(ours, "@container")
    assert "IPUT container id json [NX|XX] [IFMATCH etag]" in text
    assert "ICHANGES container [FROM BEGINNING|NOW|token] [COUNT count] [BLOCK milliseconds]" in text
