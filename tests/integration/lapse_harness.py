"""Starts a real server binary on a free loopback port and talks raw RESP to it.

Used by conftest.py and the tests. Nothing here depends on pytest.

  - ServerProcess: runs lapse-server (or, with kind="redis", Debian's redis-server, so that
    the expectations in the tests can be checked against Redis 7.0 itself), waits until it
    answers, stops it with SHUTDOWN and reports how it exited.
  - RawClient: a blocking socket client that sends commands and returns either the exact
    reply bytes or the reply decoded into plain Python values (RESP2 and RESP3).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def lapse_binary() -> str:
    """The server under test: $LAPSE_SERVER (relative paths are taken from the repo root),
    else <repo>/build/lapse-server."""
    value = os.environ.get("LAPSE_SERVER")
    path = Path(value) if value else Path("build/lapse-server")
    if not path.is_absolute():
        path = REPO_ROOT / path
    return str(path)


def target_kind() -> str:
    """`lapse` normally; `redis` when LAPSE_TARGET=redis asks to run the suite against
    redis-server to validate the expected replies."""
    return os.environ.get("LAPSE_TARGET", "lapse")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------
# RESP encoding and decoding


class RespError:
    """An error reply; equal to another RespError with the same full message ("ERR ...")."""

    def __init__(self, message: str):
        self.message = message

    def __eq__(self, other):
        if isinstance(other, RespError):
            return self.message == other.message
        return NotImplemented

    def __hash__(self):
        return hash(self.message)

    def __repr__(self):
        return f"RespError({self.message!r})"


class RespSet(list):
    """A RESP3 set (~), kept as a list so that unhashable members still fit."""


class RespPush(list):
    """A RESP3 push (>)."""


class Verbatim(bytes):
    """A RESP3 verbatim string (=); the value without its 3-letter format prefix."""


def _arg_bytes(a) -> bytes:
    if isinstance(a, bytes):
        return a
    if isinstance(a, str):
        return a.encode()
    if isinstance(a, (int, float)):
        return str(a).encode()
    raise TypeError(f"cannot send {type(a)}")


def encode_command(*args) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        b = _arg_bytes(a)
        parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(parts)


class NeedMore(Exception):
    pass


def parse_reply(buf: bytes, pos: int = 0):
    """Decodes one reply starting at buf[pos]. Returns (value, end). Raises NeedMore when
    the buffer does not yet hold a whole reply."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        raise NeedMore()
    kind = buf[pos:pos + 1]
    line = buf[pos + 1:nl]
    end = nl + 2
    if kind == b"+":
        return line.decode(), end
    if kind == b"-":
        return RespError(line.decode(errors="replace")), end
    if kind == b":":
        return int(line), end
    if kind == b"(":
        return int(line), end
    if kind == b"_":
        return None, end
    if kind == b"#":
        return line == b"t", end
    if kind == b",":
        text = line.decode()
        return {"inf": float("inf"), "-inf": float("-inf")}.get(text, None) or float(text), end
    if kind in (b"$", b"=", b"!"):
        n = int(line)
        if n < 0:
            return None, end
        if len(buf) < end + n + 2:
            raise NeedMore()
        data = buf[end:end + n]
        if buf[end + n:end + n + 2] != b"\r\n":
            raise ValueError(f"bulk not terminated by CRLF at {end + n}")
        if kind == b"=":
            return Verbatim(data[4:]), end + n + 2
        if kind == b"!":
            return RespError(data.decode(errors="replace")), end + n + 2
        return data, end + n + 2
    if kind in (b"*", b"~", b">"):
        n = int(line)
        if n < 0:
            return None, end
        items = []
        for _ in range(n):
            v, end = parse_reply(buf, end)
            items.append(v)
        if kind == b"~":
            return RespSet(items), end
        if kind == b">":
            return RespPush(items), end
        return items, end
    if kind in (b"%", b"|"):
        n = int(line)
        out = {}
        for _ in range(n):
            k, end = parse_reply(buf, end)
            v, end = parse_reply(buf, end)
            out[k if not isinstance(k, list) else tuple(k)] = v
        if kind == b"|":  # an attribute precedes the real reply
            return parse_reply(buf, end)
        return out, end
    raise ValueError(f"unknown RESP type byte {kind!r} at {pos}: {buf[pos:pos + 40]!r}")


class RawClient:
    """One blocking connection. call() returns decoded replies, call_raw() exact bytes."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 20.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, data: bytes):
        self.sock.sendall(data)

    def send(self, *args):
        self.sock.sendall(encode_command(*args))

    def _fill(self) -> bool:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def read_reply_raw(self) -> bytes:
        while True:
            try:
                _, end = parse_reply(self.buf, 0)
                out, self.buf = self.buf[:end], self.buf[end:]
                return out
            except NeedMore:
                if not self._fill():
                    raise ConnectionError(f"connection closed; unparsed bytes {self.buf[:80]!r}")

    def read_reply(self):
        return parse_reply(self.read_reply_raw())[0]

    def call(self, *args):
        self.send(*args)
        return self.read_reply()

    def call_raw(self, *args) -> bytes:
        self.send(*args)
        return self.read_reply_raw()

    def pipeline(self, commands):
        """Sends every command in one write, then reads one decoded reply per command."""
        self.send_raw(b"".join(encode_command(*c) for c in commands))
        return [self.read_reply() for _ in commands]

    def pipeline_raw(self, commands):
        self.send_raw(b"".join(encode_command(*c) for c in commands))
        return [self.read_reply_raw() for _ in commands]

    def at_eof(self, timeout: float = 5.0) -> bool:
        """True when the server closes the connection (after consuming pending replies)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(4096)
                if not chunk:
                    return True
                self.buf += chunk
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True


def server_ms(client: RawClient) -> int:
    """The server's clock in milliseconds (TIME includes any DEBUG ADVANCE offset)."""
    sec, usec = client.call("TIME")
    return int(sec) * 1000 + int(usec) // 1000


# ---------------------------------------------------------------------------------------
# Server process


def wait_until(predicate, timeout: float = 20.0, what: str = "condition"):
    """Polls predicate() until it holds; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def blocked_clients(conn: RawClient) -> int:
    """INFO clients' blocked_clients."""
    info = conn.call("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":", 1)[1])
    raise AssertionError(f"no blocked_clients in INFO clients: {info!r}")


def wait_blocked(conn: RawClient, n: int, timeout: float = 10.0):
    """Waits until INFO clients counts exactly n blocked clients."""
    deadline = time.monotonic() + timeout
    while True:
        count = blocked_clients(conn)
        if count == n:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"blocked_clients is {count}, expected {n}")
        time.sleep(0.005)


class ServerCrashed(AssertionError):
    pass


class ServerProcess:
    """A server on a free loopback port.

    `options` are `--name value` pairs as lapse takes them (threads, requirepass,
    databases, timeout, ...). For kind="redis" the same options are passed to redis-server
    except `threads`, which Redis does not have.
    """

    def __init__(self, kind: str | None = None, options: dict | None = None,
                 config_file: str | None = None, debug: bool = True, binary: str | None = None):
        self.kind = kind or target_kind()
        self.options = dict(options or {})
        self.config_file = config_file
        self.debug = debug
        self.binary = binary
        self.password = self.options.get("requirepass")
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.log_path: str | None = None
        self.expected_exit = False  # set when a test shuts the server down itself
        self.stopped_by_signal = None
        self._data_dir: str | None = None

    # -- start

    def data_dir(self) -> str:
        """A temporary directory of this server's own, for its snapshot files."""
        if self._data_dir is None:
            self._data_dir = tempfile.mkdtemp(prefix=f"{self.kind}-data-")
        return self._data_dir

    def command_line(self, port: int) -> list[str]:
        if self.kind == "redis":
            exe = self.binary or shutil.which("redis-server") or "redis-server"
            argv = [exe]
            if self.config_file:
                argv.append(self.config_file)
            argv += ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                     "--loglevel", "warning"]
            if "dir" not in self.options:
                argv += ["--dir", self.data_dir()]
            if self.debug:
                argv += ["--enable-debug-command", "yes"]
            for k, v in self.options.items():
                if k == "threads":
                    continue
                argv += [f"--{k}", str(v)]
            return argv
        argv = [self.binary or lapse_binary()]
        if self.config_file:
            argv.append(self.config_file)
        argv += ["--port", str(port), "--loglevel", "warning"]
        # Snapshots go to a directory of the server's own and are off unless a test asks:
        # tests must never write into the repository or share a dump.rdb.
        if "dir" not in self.options:
            argv += ["--dir", self.data_dir()]
        if "save" not in self.options and not self.config_file:
            argv += ["--save", ""]
        if self.debug:
            argv += ["--enable-debug-command", "yes"]
        for k, v in self.options.items():
            argv += [f"--{k}", str(v)]
        return argv

    def start(self, timeout: float = 30.0):
        binary = self.command_line(0)[0]
        if not (os.path.isfile(binary) or shutil.which(binary)):
            raise FileNotFoundError(f"server binary not found: {binary} (set LAPSE_SERVER)")
        last_error = None
        for _ in range(5):  # a free port can be taken by someone else before we bind it
            self.port = free_port()
            fd, self.log_path = tempfile.mkstemp(prefix=f"{self.kind}-{self.port}-", suffix=".log")
            log = os.fdopen(fd, "wb")
            self.proc = subprocess.Popen(self.command_line(self.port), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir())
            log.close()
            try:
                self._wait_ready(timeout)
                return self
            except _PortBusy as e:
                last_error = e
                continue
        raise RuntimeError(f"could not start {self.kind}: {last_error}")

    def _wait_ready(self, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                text = self.log_text()
                if "in use" in text.lower():
                    raise _PortBusy(text)
                raise RuntimeError(f"{self.kind} exited with {code} during start-up:\n{text}")
            try:
                with RawClient(self.port, timeout=2.0) as c:
                    reply = c.call("PING")
                    if reply == "PONG" or isinstance(reply, RespError):  # NOAUTH also means it is up
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError(f"{self.kind} did not answer PING within {timeout}s:\n{self.log_text()}")
            time.sleep(0.02)

    # -- state

    def log_text(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-8000:].decode(errors="replace")
        except (OSError, TypeError):
            return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def assert_alive(self):
        if not self.alive():
            raise ServerCrashed(f"{self.kind} on port {self.port} died with exit code "
                                f"{self.proc.returncode}:\n{self.log_text()}")

    def client(self, **kw) -> RawClient:
        c = RawClient(self.port, **kw)
        if self.password:
            c.call("AUTH", self.password)
        return c

    def wait_exit(self, timeout: float = 20.0) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    # -- stop

    def kill9(self):
        """SIGKILL, as a crash: nothing is flushed on the way out."""
        self.expected_exit = True
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        """Stops the server (SHUTDOWN, then SIGTERM as a fallback). Raises ServerCrashed if it
        had died on its own or exits with a non-zero code."""
        if self.proc is None:
            return
        if self.proc.poll() is not None:
            code = self.proc.returncode
            if not self.expected_exit:
                raise ServerCrashed(f"{self.kind} on port {self.port} had exited on its own with code "
                                    f"{code}:\n{self.log_text()}")
            self._cleanup_log(code == 0)
            return
        try:
            with self.client(timeout=5.0) as c:
                c.send("SHUTDOWN", "NOSAVE")
                c.at_eof(5.0)
        except OSError:
            pass
        code = self.wait_exit(20.0)
        how = "SHUTDOWN"
        if code is None:
            how = "SIGTERM (SHUTDOWN did not stop it)"
            self.proc.send_signal(signal.SIGTERM)
            code = self.wait_exit(20.0)
        if code is None:
            self.proc.kill()
            self.proc.wait()
            raise ServerCrashed(f"{self.kind} on port {self.port} ignored SHUTDOWN and SIGTERM:\n{self.log_text()}")
        if code != 0:
            raise ServerCrashed(f"{self.kind} on port {self.port} exited with code {code} after {how}:\n"
                                f"{self.log_text()}")
        self.expected_exit = True  # stopped here: stopping it again (a fixture's) is a no-op
        self._cleanup_log(True)

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()

    def _cleanup_log(self, ok: bool):
        if ok and self.log_path:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass


class _PortBusy(Exception):
    pass
