"""Where the server listens and how it runs as a service, as Redis 7.0 does it: `bind` with
several addresses (optional ones with a `-` prefix, `*`, `::*`, host names) at start-up and
through CONFIG SET, `tcp-backlog`, `unixsocket` and `unixsocketperm`, `daemonize` with
`pidfile` and `logfile`, `tcp-keepalive`, `supervised systemd` (sd_notify datagrams), and
config-file lines of several words.

Listeners are checked with real connections and with `ss -ltn` (the Send-Q of a LISTEN socket
is its backlog); keepalive with `ss -tno` (the server side socket's `timer:(keepalive,...)`).
Every test also passes against Debian's redis-server 7.0 (LAPSE_TARGET=redis).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest
import redis

from lapse_harness import RawClient, ServerProcess, free_port
from lapse_harness import RespError as E


def _have_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


HAVE_IPV6 = _have_ipv6_loopback()
needs_ipv6 = pytest.mark.skipif(not HAVE_IPV6, reason="no IPv6 loopback (::1) on this machine")

BIND_FAILED = E("ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.")
TOO_MANY = E("ERR CONFIG SET failed (possibly related to argument 'bind') - Too many bind addresses specified.")
SEVENTEEN = " ".join(["127.0.0.1"] * 17)
# "999.1.1.1" is no address, so the server asks the resolver for it: on a machine whose DNS
# servers cannot be reached, one quick try instead of glibc's 5 s timeouts.
QUICK_DNS = {**os.environ, "RES_OPTIONS": "timeout:1 attempts:1"}


def immutable(name):
    return E(f"ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config")


# ---------------------------------------------------------------------------------------
# Servers reached over any address or a unix socket


class UnixClient(RawClient):
    """A RawClient over a unix socket."""

    def __init__(self, path: str, timeout: float = 20.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buf = b""


class Server(ServerProcess):
    """A ServerProcess that is reached at `host` (TCP), or through its unix socket `unix` when
    host is None; started with environment `env` and, when `port` is given, on that port (0:
    no TCP port). With a config file that has its own `bind` line (own_bind=True), the
    harness's `--bind 127.0.0.1` for Redis is left out so that the file's line counts."""

    def __init__(self, options=None, host="127.0.0.1", unix=None, env=None, port=None, own_bind=False, **kw):
        super().__init__(options=options, **kw)
        self.host = host
        self.unix = unix
        self.env = env
        self.fixed_port = port
        self.own_bind = own_bind

    def command_line(self, port):
        argv = super().command_line(port)
        if self.own_bind and self.kind == "redis":
            i = argv.index("--bind")
            del argv[i:i + 2]
        return argv

    def client(self, timeout: float = 20.0, **kw):
        if self.host is None:
            return UnixClient(self.unix, timeout=timeout)
        return RawClient(self.port, host=self.host, timeout=timeout)

    def start(self, timeout: float = 30.0):
        for _ in range(5):  # a free port can be taken by someone else before the server binds it
            self.port = free_port() if self.fixed_port is None else self.fixed_port
            fd, self.log_path = tempfile.mkstemp(prefix=f"{self.kind}-{self.port}-", suffix=".log")
            with os.fdopen(fd, "wb") as log:
                self.proc = subprocess.Popen(self.command_line(self.port), stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir(), env=self.env)
            deadline = time.monotonic() + timeout
            while True:
                code = self.proc.poll()
                if code is not None:
                    text = self.log_text()
                    if "in use" in text.lower() and self.fixed_port is None:
                        break
                    raise RuntimeError(f"{self.kind} exited with {code} during start-up:\n{text}")
                try:
                    with self.client(timeout=2.0) as c:
                        if c.call("PING") == "PONG":
                            return self
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    self.proc.kill()
                    raise RuntimeError(f"{self.kind} did not answer PING within {timeout}s:\n{self.log_text()}")
                time.sleep(0.02)
        raise RuntimeError(f"could not start {self.kind}: port in use five times")


@pytest.fixture
def tmpdir_short():
    """A short temporary directory (unix socket paths are limited to 107 bytes)."""
    path = tempfile.mkdtemp(prefix="lst")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def launch(tmpdir_short):
    """Starts Servers (arguments as Server's); each is stopped after the test and must exit 0.
    (Stopped before tmpdir_short goes, so that a server reached through a socket in it still
    can be.)"""
    started = []

    def start(options=None, **kw):
        srv = Server(options=options, **kw)
        started.append(srv)
        return srv.start()

    yield start
    errors = []
    for srv in started:
        try:
            srv.stop()
        except AssertionError as e:
            errors.append(str(e))
    if errors:
        pytest.fail("\n".join(errors))


def config_get(client, name) -> str:
    reply = client.call("CONFIG", "GET", name)
    assert len(reply) == 2, reply
    return reply[1].decode()


def info_field(client, section, name) -> str:
    for line in client.call("INFO", section).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise AssertionError(f"no {name} in INFO {section}")


def accepts(host, port) -> bool:
    """True when a server answers PING at host:port; False when the connection is refused."""
    try:
        s = socket.create_connection((host, port), timeout=5)
    except ConnectionRefusedError:
        return False
    with s:
        s.sendall(b"PING\r\n")
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = s.recv(100)
            if not chunk:
                break
            data += chunk
        assert data == b"+PONG\r\n", data
        return True


def need_ss():
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) is not installed")


def listeners(port) -> dict:
    """Local address -> backlog (Send-Q) of each TCP socket listening on `port`, from `ss -ltn`;
    addresses as ss prints them ("127.0.0.1", "[::1]", "0.0.0.0", "[::]")."""
    need_ss()
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, timeout=10,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if not fields or fields[0] != "LISTEN":
            continue
        addr, _, p = fields[3].rpartition(":")
        assert p == str(port), line
        found[addr] = int(fields[2])
    return found


def tcp_listeners_of(pid) -> list:
    """The TCP sockets in LISTEN state that process `pid` holds (from /proc)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            m = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                found.append(fields[1])
    return found


def assert_not_local(addr):
    """The tests take `addr` to be an address this machine does not have."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((addr, 0))
        except OSError:
            return
    pytest.skip(f"{addr} is an address of this machine")


def client_fields(line: str) -> dict:
    return dict(kv.split("=", 1) for kv in line.strip().split(" "))


def process_gone(pid) -> bool:
    """True when `pid` has exited (a zombie left to a parent that does not reap counts)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def poll(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# ---------------------------------------------------------------------------------------
# bind


@pytest.mark.parametrize("bind, reached, refused", [
    ("127.0.0.1 127.0.0.2", ["127.0.0.1", "127.0.0.2"], ["127.0.0.3"]),
    pytest.param("127.0.0.1 ::1", ["127.0.0.1", "::1"], ["127.0.0.2"], marks=needs_ipv6),
    pytest.param("::1 127.0.0.2", ["::1", "127.0.0.2"], ["127.0.0.1"], marks=needs_ipv6),
])
def test_bind_several_addresses(launch, bind, reached, refused):
    srv = launch({"bind": bind}, host=reached[0])
    for host in reached:
        assert accepts(host, srv.port), host
    for host in refused:
        assert not accepts(host, srv.port), host
    with srv.client() as c:
        assert config_get(c, "bind") == bind


@needs_ipv6
def test_bind_several_addresses_listens_on_each(launch):
    srv = launch({"bind": "127.0.0.1 ::1"})
    assert set(listeners(srv.port)) == {"127.0.0.1", "[::1]"}


def test_an_optional_address_that_is_not_available_is_skipped(launch):
    assert_not_local("1.2.3.4")
    srv = launch({"bind": "-1.2.3.4 127.0.0.1"})
    assert accepts("127.0.0.1", srv.port)
    with srv.client() as c:
        assert config_get(c, "bind") == "-1.2.3.4 127.0.0.1"
    assert set(listeners(srv.port)) == {"127.0.0.1"}


@needs_ipv6
def test_an_optional_address_that_is_available_is_bound(launch):
    srv = launch({"bind": "127.0.0.1 -::1"})
    assert accepts("127.0.0.1", srv.port)
    assert accepts("::1", srv.port)
    with srv.client() as c:
        assert config_get(c, "bind") == "127.0.0.1 -::1"


def test_bind_star_is_every_ipv4_address(launch):
    srv = launch({"bind": "*"})
    assert accepts("127.0.0.1", srv.port)
    assert accepts("127.0.0.2", srv.port)
    if HAVE_IPV6:
        assert not accepts("::1", srv.port)
    with srv.client() as c:
        assert config_get(c, "bind") == "*"
    assert set(listeners(srv.port)) == {"0.0.0.0"}


def test_bind_star_and_optional_ipv6_any(launch):
    srv = launch({"bind": "* -::*"})
    assert accepts("127.0.0.1", srv.port)
    if HAVE_IPV6:
        assert accepts("::1", srv.port)
        assert set(listeners(srv.port)) == {"0.0.0.0", "[::]"}
    else:
        assert set(listeners(srv.port)) == {"0.0.0.0"}
    with srv.client() as c:
        assert config_get(c, "bind") == "* -::*"


@needs_ipv6
def test_ipv6_any_alone_does_not_take_ipv4(launch):
    # Redis sets IPV6_V6ONLY: `::*` serves IPv6 only.
    srv = launch({"bind": "-::*"}, host="::1")
    assert accepts("::1", srv.port)
    assert not accepts("127.0.0.1", srv.port)
    assert set(listeners(srv.port)) == {"[::]"}


def test_bind_a_host_name(launch):
    srv = launch({"bind": "localhost"})
    assert accepts("127.0.0.1", srv.port)
    with srv.client() as c:
        assert config_get(c, "bind") == "localhost"
    # A name without ':' is looked up as IPv4 only.
    assert set(listeners(srv.port)) == {"127.0.0.1"}


def test_bind_lines_of_several_words_in_a_config_file(launch, tmpdir_short):
    conf = os.path.join(tmpdir_short, "lapse.conf")
    with open(conf, "w") as f:
        f.write("bind 127.0.0.1 -::1\n")
    srv = launch(config_file=conf, own_bind=True)
    assert accepts("127.0.0.1", srv.port)
    if HAVE_IPV6:
        assert accepts("::1", srv.port)
    with srv.client() as c:
        assert config_get(c, "bind") == "127.0.0.1 -::1"


@pytest.mark.parametrize("bind", ["1.2.3.4", "127.0.0.1 1.2.3.4", "999.1.1.1", "-1.2.3.4", SEVENTEEN])
def test_start_up_fails_when_an_address_cannot_be_bound(bind):
    assert_not_local("1.2.3.4")
    argv = Server({"bind": bind}).command_line(free_port())
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            cwd=tempfile.gettempdir(), env=QUICK_DNS)
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code is not None, f"the server started with bind {bind!r}"
    assert code != 0


def test_config_set_bind_moves_the_listeners(launch):
    srv = launch({"bind": "127.0.0.1"})
    with srv.client() as c:
        assert c.call("CONFIG", "SET", "bind", "127.0.0.2") == "OK"
        srv.host = "127.0.0.2"
        assert accepts("127.0.0.2", srv.port)
        assert not accepts("127.0.0.1", srv.port)
        # The connection that asked is still served.
        assert c.call("PING") == "PONG"
        assert config_get(c, "bind") == "127.0.0.2"
        assert set(listeners(srv.port)) == {"127.0.0.2"}

        assert c.call("CONFIG", "SET", "bind", "-1.2.3.4 127.0.0.1 127.0.0.2") == "OK"
        assert accepts("127.0.0.1", srv.port)
        assert accepts("127.0.0.2", srv.port)
        assert config_get(c, "bind") == "-1.2.3.4 127.0.0.1 127.0.0.2"
        assert set(listeners(srv.port)) == {"127.0.0.1", "127.0.0.2"}


@needs_ipv6
def test_config_set_bind_to_ipv6(launch):
    srv = launch({"bind": "127.0.0.1"})
    with srv.client() as c:
        assert c.call("CONFIG", "SET", "bind", "::1") == "OK"
        srv.host = "::1"
        assert accepts("::1", srv.port)
        assert not accepts("127.0.0.1", srv.port)
        assert c.call("PING") == "PONG"
    with srv.client() as c:
        assert config_get(c, "bind") == "::1"
        assert c.call("CONFIG", "SET", "bind", "127.0.0.1 ::1") == "OK"
    assert accepts("127.0.0.1", srv.port)
    assert accepts("::1", srv.port)


@pytest.mark.parametrize("value, error", [
    ("127.0.0.1 1.2.3.4", BIND_FAILED),
    ("127.0.0.1 999.1.1.1", BIND_FAILED),
    ("127.0.0.3 127.0.0.3", BIND_FAILED),
    (SEVENTEEN, TOO_MANY),
])
def test_a_failing_config_set_bind_keeps_the_old_listeners(launch, value, error):
    assert_not_local("1.2.3.4")
    srv = launch({"bind": "127.0.0.1 127.0.0.2"}, env=QUICK_DNS)
    with srv.client() as c:
        assert c.call("CONFIG", "SET", "bind", value) == error
        assert c.call("PING") == "PONG"
        assert config_get(c, "bind") == "127.0.0.1 127.0.0.2"
    assert accepts("127.0.0.1", srv.port)
    assert accepts("127.0.0.2", srv.port)
    assert not accepts("127.0.0.3", srv.port)
    assert set(listeners(srv.port)) == {"127.0.0.1", "127.0.0.2"}


# ---------------------------------------------------------------------------------------
# tcp-backlog


def somaxconn() -> int:
    with open("/proc/sys/net/core/somaxconn") as f:
        return int(f.read())


@pytest.mark.parametrize("backlog", [None, 100, 1000, 65535])
def test_tcp_backlog_is_the_listen_backlog(launch, backlog):
    options = {"bind": "127.0.0.1"}
    if backlog is not None:
        options["tcp-backlog"] = backlog
    srv = launch(options)
    expected = 511 if backlog is None else backlog
    with srv.client() as c:
        assert config_get(c, "tcp-backlog") == str(expected)
    assert listeners(srv.port) == {"127.0.0.1": min(expected, somaxconn())}


def test_tcp_backlog_applies_to_every_address(launch):
    srv = launch({"bind": "127.0.0.1 127.0.0.2", "tcp-backlog": 77})
    assert listeners(srv.port) == {"127.0.0.1": min(77, somaxconn()), "127.0.0.2": min(77, somaxconn())}


def test_config_set_tcp_backlog_is_refused(launch):
    srv = launch({"tcp-backlog": 100})
    with srv.client() as c:
        assert c.call("CONFIG", "SET", "tcp-backlog", "10") == immutable("tcp-backlog")
        assert config_get(c, "tcp-backlog") == "100"


# ---------------------------------------------------------------------------------------
# unixsocket


@pytest.mark.parametrize("perm, mode, shown", [("700", 0o700, "700"), ("0700", 0o700, "700"),
                                               ("755", 0o755, "755"), ("777", 0o777, "777")])
def test_unixsocket_file_and_its_permissions(launch, tmpdir_short, perm, mode, shown):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": perm})
    st = os.stat(path)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == mode
    with UnixClient(path) as u:
        assert u.call("PING") == "PONG"
    with srv.client() as c:
        assert config_get(c, "unixsocket") == path
        assert config_get(c, "unixsocketperm") == shown


def test_unixsocket_serves_the_same_data_as_tcp(launch, tmpdir_short):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700"})
    with UnixClient(path) as u, srv.client() as c:
        assert u.call("SET", "k", "over unix") == "OK"
        assert c.call("GET", "k") == b"over unix"


def test_redis_py_over_the_unix_socket(launch, tmpdir_short):
    path = os.path.join(tmpdir_short, "s.sock")
    launch({"unixsocket": path, "unixsocketperm": "700"})
    r = redis.Redis(unix_socket_path=path, socket_timeout=10)
    try:
        assert r.ping() is True
        assert r.set("k", "v") is True
        assert r.get("k") == b"v"
        assert r.client_info()["flags"] == "U"
    finally:
        r.close()


def test_redis_cli_over_the_unix_socket(launch, tmpdir_short):
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not installed")
    path = os.path.join(tmpdir_short, "s.sock")
    launch({"unixsocket": path, "unixsocketperm": "700"})
    out = subprocess.run([cli, "-s", path, "ping"], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0
    assert out.stdout == "PONG\n"


def test_client_info_and_list_name_the_socket_path(launch, tmpdir_short):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700"})
    with UnixClient(path) as u, srv.client() as c:
        assert u.call("CLIENT", "SETNAME", "unixy") == "OK"
        info = client_fields(u.call("CLIENT", "INFO").decode())
        assert (info["addr"], info["laddr"], info["flags"], info["name"]) == (f"{path}:0", f"{path}:0", "U", "unixy")
        listed = [client_fields(line) for line in c.call("CLIENT", "LIST").decode().splitlines()]
        mine = [f for f in listed if f["name"] == "unixy"]
        assert len(mine) == 1
        assert (mine[0]["addr"], mine[0]["laddr"], mine[0]["flags"]) == (f"{path}:0", f"{path}:0", "U")
        tcp = client_fields(c.call("CLIENT", "INFO").decode())
        assert tcp["flags"] == "N"
        assert tcp["laddr"] == f"127.0.0.1:{srv.port}"


def test_client_kill_addr_kills_the_unix_clients(launch, tmpdir_short):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700"})
    u1, u2 = UnixClient(path), UnixClient(path)
    try:
        assert u1.call("PING") == "PONG"
        assert u2.call("PING") == "PONG"
        with srv.client() as c:
            assert c.call("CLIENT", "KILL", "ADDR", f"{path}:0") == 2
            assert u1.at_eof()
            assert u2.at_eof()
            assert c.call("PING") == "PONG"
            assert c.call("CLIENT", "KILL", "ADDR", f"{path}:0") == 0
    finally:
        u1.close()
        u2.close()


def test_a_unix_client_counts_as_local_for_protected_mode(launch, tmpdir_short):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700", "protected-mode": "yes", "bind": "*"})
    with UnixClient(path) as u:
        assert u.call("PING") == "PONG"
        assert u.call("SET", "k", "v") == "OK"
    with srv.client() as c:
        assert config_get(c, "protected-mode") == "yes"


@pytest.mark.parametrize("stale", ["regular file", "leftover socket"])
def test_a_stale_file_at_the_path_is_replaced(launch, tmpdir_short, stale):
    path = os.path.join(tmpdir_short, "s.sock")
    if stale == "regular file":
        with open(path, "w") as f:
            f.write("stale")
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()  # the file stays, with nothing listening behind it
    launch({"unixsocket": path, "unixsocketperm": "700"})
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    with UnixClient(path) as u:
        assert u.call("PING") == "PONG"


@pytest.mark.parametrize("how", ["SHUTDOWN", "SIGTERM"])
def test_the_socket_file_is_removed_at_shutdown(launch, tmpdir_short, how):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700"})
    assert os.path.exists(path)
    if how == "SHUTDOWN":
        with srv.client() as c:
            c.send("SHUTDOWN", "NOSAVE")
            assert c.at_eof()
    else:
        srv.proc.send_signal(signal.SIGTERM)
    assert srv.wait_exit(20) == 0
    srv.expected_exit = True
    assert not os.path.exists(path)


def test_port_0_with_a_unixsocket_serves_only_the_unix_socket(launch, tmpdir_short):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700"}, host=None, unix=path, port=0)
    with srv.client() as u:
        assert u.call("PING") == "PONG"
        assert config_get(u, "port") == "0"
        assert info_field(u, "server", "tcp_port") == "0"
    assert tcp_listeners_of(srv.proc.pid) == []


@pytest.mark.parametrize("name, value", [("unixsocket", "/tmp/other.sock"), ("unixsocketperm", "777")])
def test_config_set_unixsocket_is_refused(launch, tmpdir_short, name, value):
    path = os.path.join(tmpdir_short, "s.sock")
    srv = launch({"unixsocket": path, "unixsocketperm": "700"})
    with srv.client() as c:
        assert c.call("CONFIG", "SET", name, value) == immutable(name)
        assert config_get(c, "unixsocket") == path
        assert config_get(c, "unixsocketperm") == "700"


# ---------------------------------------------------------------------------------------
# daemonize, pidfile, logfile


def read_pid(path):
    """The pid in a pidfile once it is whole ("<pid>\\n"), else None."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    return int(text) if re.fullmatch(r"\d+\n", text) else None


def test_daemonize_with_pidfile_and_logfile(tmpdir_short):
    pidfile = os.path.join(tmpdir_short, "server.pid")
    logfile = os.path.join(tmpdir_short, "server.log")
    port = free_port()
    argv = Server({"daemonize": "yes", "pidfile": pidfile, "logfile": logfile, "loglevel": "notice",
                   "bind": "127.0.0.1"}).command_line(port)
    out_path = os.path.join(tmpdir_short, "launcher.out")
    pid = None
    try:
        with open(out_path, "wb") as out:
            launcher = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      cwd=tempfile.gettempdir(), timeout=20)
        assert launcher.returncode == 0
        pid = poll(lambda: read_pid(pidfile), what="the pidfile")
        assert not process_gone(pid)

        def ping():
            try:
                with RawClient(port, timeout=2) as c:
                    return c.call("PING") == "PONG"
            except OSError:
                return False

        poll(ping, what="the daemon to answer PING")
        with RawClient(port) as c:
            assert info_field(c, "server", "process_id") == str(pid)
            assert config_get(c, "daemonize") == "yes"
            assert config_get(c, "pidfile") == pidfile
            assert config_get(c, "logfile") == logfile
            c.send("SHUTDOWN", "NOSAVE")
            assert c.at_eof()
        poll(lambda: process_gone(pid), what="the daemon to exit")
        assert not os.path.exists(pidfile)
        # Daemonized, the log still goes to the logfile.
        assert os.path.getsize(logfile) > 0
    finally:
        if pid is None:
            pid = read_pid(pidfile)
        if pid is not None and not process_gone(pid):
            os.kill(pid, signal.SIGKILL)


def test_pidfile_without_daemonize(launch, tmpdir_short):
    pidfile = os.path.join(tmpdir_short, "server.pid")
    srv = launch({"pidfile": pidfile})
    assert poll(lambda: read_pid(pidfile), what="the pidfile") == srv.proc.pid
    with srv.client() as c:
        assert config_get(c, "daemonize") == "no"
        assert config_get(c, "pidfile") == pidfile
    srv.stop()
    assert not os.path.exists(pidfile)


def test_config_set_daemonize_and_pidfile_are_refused(launch):
    srv = launch()
    with srv.client() as c:
        assert c.call("CONFIG", "SET", "daemonize", "yes") == immutable("daemonize")
        assert c.call("CONFIG", "SET", "pidfile", "/tmp/x.pid") == immutable("pidfile")
        assert config_get(c, "daemonize") == "no"


# ---------------------------------------------------------------------------------------
# tcp-keepalive


def _seconds(text):
    # ss prints timers as e.g. "59sec", "1min39sec", "10min", "5.123ms", "200ms".
    m = re.fullmatch(r"(?:(\d+)min)?(?:(\d+)(?:sec|\.))?(?:(\d+)ms)?", text)
    assert m and text, text
    minutes, secs, ms = (int(g) if g else 0 for g in m.groups())
    return minutes * 60 + secs + ms / 1000


def server_side_keepalive(port, client: RawClient):
    """The keepalive timer (seconds) of the server's end of `client`'s connection, None when it
    has no keepalive timer. Waits while another timer (a retransmission) is running."""
    need_ss()
    cport = client.sock.getsockname()[1]
    deadline = time.monotonic() + 10
    while True:
        out = subprocess.run(["ss", "-Htno", "state", "established", f"( sport = :{port} and dport = :{cport} )"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        lines = [line for line in out.splitlines() if line.strip()]
        if len(lines) == 1 and "timer:(on" not in lines[0]:
            m = re.search(r"timer:\(keepalive,([^,]+),", lines[0])
            return _seconds(m.group(1)) if m else None
        if time.monotonic() > deadline:
            raise AssertionError(f"ss did not show one idle connection: {out!r}")
        time.sleep(0.02)


@pytest.mark.parametrize("seconds", [60, 300])
def test_tcp_keepalive_sets_a_keepalive_timer(launch, seconds):
    srv = launch({"tcp-keepalive": seconds})
    with srv.client() as c:
        assert c.call("PING") == "PONG"
        timer = server_side_keepalive(srv.port, c)
        assert timer is not None
        assert 0 < timer <= seconds
        assert config_get(c, "tcp-keepalive") == str(seconds)


def test_tcp_keepalive_0_sets_none(launch):
    srv = launch({"tcp-keepalive": 0})
    with srv.client() as c:
        assert c.call("PING") == "PONG"
        assert server_side_keepalive(srv.port, c) is None
        assert config_get(c, "tcp-keepalive") == "0"


def test_config_set_tcp_keepalive_applies_to_new_connections(launch):
    srv = launch({"tcp-keepalive": 0})
    with srv.client() as c:
        assert c.call("CONFIG", "SET", "tcp-keepalive", "100") == "OK"
        assert config_get(c, "tcp-keepalive") == "100"
    with srv.client() as c:
        assert c.call("PING") == "PONG"
        timer = server_side_keepalive(srv.port, c)
        assert timer is not None
        assert 0 < timer <= 100


# ---------------------------------------------------------------------------------------
# supervised systemd


class NotifySocket:
    """An AF_UNIX datagram socket standing in for systemd's notification socket."""

    def __init__(self, directory, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"lapse-notify-{os.getpid()}-{time.monotonic_ns()}"
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            self.address = os.path.join(directory, "notify")
            self.sock.bind(self.address)
        self.received = []

    def wait_for(self, datagram: bytes, timeout=20.0):
        deadline = time.monotonic() + timeout
        while datagram not in self.received:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {datagram!r} among {self.received!r}")
            self.sock.settimeout(left)
            try:
                self.received.append(self.sock.recv(4096))
            except socket.timeout:
                pass

    def drain(self):
        self.sock.setblocking(False)
        try:
            while True:
                self.received.append(self.sock.recv(4096))
        except BlockingIOError:
            pass
        return self.received

    def close(self):
        self.sock.close()


def env_with(**changes):
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "UPSTART_JOB")}
    env.update(changes)
    return env


@pytest.mark.parametrize("mode", ["systemd", "auto"])
@pytest.mark.parametrize("abstract", [False, True], ids=["path", "abstract"])
def test_supervised_systemd_notifies_ready_and_stopping(launch, tmpdir_short, mode, abstract):
    notify = NotifySocket(tmpdir_short, abstract=abstract)
    try:
        srv = launch({"supervised": mode}, env=env_with(NOTIFY_SOCKET=notify.address))
        notify.wait_for(b"READY=1\n")
        ready = notify.received.index(b"READY=1\n")
        assert ready >= 1
        assert notify.received[ready - 1] == b"STATUS=Ready to accept connections\n"
        with srv.client() as c:
            assert info_field(c, "server", "process_supervised") == "systemd"
            # `auto` with NOTIFY_SOCKET set reads back as the mode it chose.
            assert config_get(c, "supervised") == "systemd"
            assert c.call("CONFIG", "SET", "supervised", "no") == immutable("supervised")
        srv.stop()
        assert b"STOPPING=1\n" in notify.drain()
        assert notify.received.count(b"READY=1\n") == 1
    finally:
        notify.close()


@pytest.mark.parametrize("mode", ["systemd", "auto"])
def test_supervised_without_notify_socket_still_starts(launch, mode):
    srv = launch({"supervised": mode}, env=env_with())
    with srv.client() as c:
        assert info_field(c, "server", "process_supervised") == "no"
        assert config_get(c, "supervised") == mode


def test_not_supervised_sends_nothing(launch, tmpdir_short):
    notify = NotifySocket(tmpdir_short)
    try:
        srv = launch({"supervised": "no"}, env=env_with(NOTIFY_SOCKET=notify.address))
        with srv.client() as c:
            assert info_field(c, "server", "process_supervised") == "no"
        srv.stop()
        assert notify.drain() == []
    finally:
        notify.close()


# ---------------------------------------------------------------------------------------
# config-file lines of several words


def test_config_file_lines_of_several_words(launch, tmpdir_short):
    conf = os.path.join(tmpdir_short, "lapse.conf")
    with open(conf, "w") as f:
        f.write("oom-score-adj-values 0 200 800\n"
                "latency-tracking-info-percentiles 50 99 99.9\n")
    srv = launch(config_file=conf)
    with srv.client() as c:
        assert config_get(c, "oom-score-adj-values") == "0 200 800"
        assert config_get(c, "latency-tracking-info-percentiles") == "50 99 99.9"


# ---------------------------------------------------------------------------------------
# Debian's own redis.conf


DEBIAN_CONF = "/etc/redis/redis.conf"


def debian_conf_copy(directory, port):
    """Debian's redis.conf with only its paths and port moved into `directory`: (path to
    the copy, its pidfile)."""
    pidfile = os.path.join(directory, "redis-server.pid")
    moved = {"port": str(port), "pidfile": pidfile, "logfile": os.path.join(directory, "redis-server.log"),
             "dir": directory}
    lines = []
    with open(DEBIAN_CONF) as f:
        for line in f:
            words = line.split()
            if words and words[0] in moved:
                line = f"{words[0]} {moved.pop(words[0])}\n"
            lines.append(line)
    lines += [f"{name} {value}\n" for name, value in moved.items()]
    conf = os.path.join(directory, "redis.conf")
    with open(conf, "w") as f:
        f.writelines(lines)
    return conf, pidfile


@pytest.mark.skipif(not os.path.exists(DEBIAN_CONF), reason="no Debian redis.conf (package redis-server)")
def test_debians_stock_redis_conf_starts_the_server_as_a_daemon(tmpdir_short):
    # The file a Redis user already has: daemonize yes, bind 127.0.0.1 -::1, a pidfile, a
    # logfile, oom-score-adj-values of three words, comments with lone quotes. Every line but
    # the paths and the port is used as Debian ships it.
    port = free_port()
    conf, pidfile = debian_conf_copy(tmpdir_short, port)
    binary = Server().command_line(port)[0]
    pid = None
    try:
        launcher = subprocess.run([binary, conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, cwd=tmpdir_short, timeout=20)
        assert launcher.returncode == 0, launcher.stdout
        pid = poll(lambda: read_pid(pidfile), what="the pidfile")

        def ping(host):
            try:
                with RawClient(port, host=host, timeout=2) as c:
                    return c.call("PING") == "PONG"
            except OSError:
                return False

        poll(lambda: ping("127.0.0.1"), what="the daemon to answer PING")
        if HAVE_IPV6:
            assert ping("::1")
        with RawClient(port) as c:
            assert info_field(c, "server", "process_id") == str(pid)
            assert config_get(c, "bind") == "127.0.0.1 -::1"
            assert config_get(c, "daemonize") == "yes"
            assert config_get(c, "tcp-keepalive") == "300"
            assert config_get(c, "oom-score-adj-values") == "0 200 800"
            c.send("SHUTDOWN", "NOSAVE")
            assert c.at_eof()
        poll(lambda: process_gone(pid), what="the daemon to exit")
        assert not os.path.exists(pidfile)
    finally:
        if pid is None:
            pid = read_pid(pidfile)
        if pid is not None and not process_gone(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not os.path.exists(DEBIAN_CONF), reason="no Debian redis.conf (package redis-server)")
def test_debians_systemd_command_line_notifies_and_stays_in_the_foreground(tmpdir_short):
    # Debian's redis-server.service: Type=notify, PIDFile=, and
    # ExecStart=... /etc/redis/redis.conf --supervised systemd --daemonize no
    port = free_port()
    conf, pidfile = debian_conf_copy(tmpdir_short, port)
    binary = Server().command_line(port)[0]
    notify = NotifySocket(tmpdir_short)
    proc = subprocess.Popen([binary, conf, "--supervised", "systemd", "--daemonize", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            cwd=tmpdir_short, env=env_with(NOTIFY_SOCKET=notify.address))
    try:
        notify.wait_for(b"READY=1\n")
        assert proc.poll() is None  # not forked away: systemd watches this very process
        assert read_pid(pidfile) == proc.pid
        with RawClient(port) as c:
            assert c.call("PING") == "PONG"
            assert config_get(c, "daemonize") == "no"
            assert info_field(c, "server", "process_supervised") == "systemd"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert b"STOPPING=1\n" in notify.drain()
        assert not os.path.exists(pidfile)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()


def test_a_unix_socket_path_too_long_stops_start_up_with_redis_message(tmpdir_short):
    path = os.path.join(tmpdir_short, "s" * (120 - len(tmpdir_short) - 1))
    assert len(path) == 120
    argv = Server({"unixsocket": path}).command_line(free_port())
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                          cwd=tmpdir_short, timeout=20)
    assert proc.returncode == 1
    assert b"Failed opening Unix socket: unix socket path too long (120), must be under 108" in proc.stdout
    assert not os.path.exists(path)


def process_state(pid) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def test_supervised_upstart_stops_itself_once_then_serves(tmpdir_short):
    # upstart's "expect stop": the server raises SIGSTOP once; upstart sends SIGCONT.
    port = free_port()
    argv = Server({"supervised": "upstart"}).command_line(port)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            cwd=tmpdir_short, env=env_with(UPSTART_JOB="lapse-test"))
    try:
        poll(lambda: process_state(proc.pid) == "T", what="the server to stop itself")
        os.kill(proc.pid, signal.SIGCONT)

        def ping():
            try:
                with RawClient(port, timeout=2) as c:
                    return c.call("PING") == "PONG"
            except OSError:
                return False

        poll(ping, what="the server to answer PING")
        with RawClient(port) as c:
            assert info_field(c, "server", "process_supervised") == "upstart"
            c.send("SHUTDOWN", "NOSAVE")
            assert c.at_eof()
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
