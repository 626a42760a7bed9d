"""lapse-server's command line: --help lists every setting README.md's configuration table
documents, --version prints the version, bad options stop start-up with a message naming
them; a config file with flags overriding it."""
import os
import re
import subprocess
import tempfile

import pytest

from lapse_harness import REPO_ROOT, RawClient, ServerProcess, lapse_binary
from lapse_harness import RespError as E

WRONGPASS = E("WRONGPASS invalid username-password pair or user is disabled.")
OUT_OF_RANGE = E("ERR DB index is out of range")


def run(*args):
    return subprocess.run([lapse_binary(), *args], capture_output=True, timeout=20, stdin=subprocess.DEVNULL)


def readme_settings():
    """(name, config-file-only) for each row of README.md's table under '## Configuration'."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\|\s*`([a-z-]+)`\s*\|", line)
        if m:
            rows.append((m.group(1), "config file only" in line))
    return rows


def test_readme_table_is_parsed():
    names = [name for name, _ in readme_settings()]
    assert names[:2] == ["port", "bind"]
    assert "rename-command" in names and "requirepass" in names
    assert len(names) == len(set(names))


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_documented_option(flag):
    proc = run(flag)
    assert proc.returncode == 0
    assert proc.stderr == b""
    out = proc.stdout.decode()
    assert out.startswith("Usage: lapse-server [/path/to/lapse.conf] [--option value ...]\n")
    lines = out.splitlines()
    missing = []
    for name, file_only in readme_settings():
        if file_only:  # no flag: listed as a config-file line, `  name ...`
            found = any(re.match(rf"\s+{re.escape(name)} ", line) for line in lines)
        else:
            found = any(re.match(rf"\s+--{re.escape(name)} ", line) for line in lines)
        if not found:
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize("flag", ["--version", "-v"])
def test_version(flag):
    proc = run(flag)
    assert proc.returncode == 0
    assert proc.stderr == b""
    assert re.fullmatch(rb"lapse-server v=\d+\.\d+\.\d+\n", proc.stdout), proc.stdout


def test_version_matches_info(start_server):
    version = run("--version").stdout.decode().strip().removeprefix("lapse-server v=")
    srv = start_server()
    if srv.kind != "lapse":
        pytest.skip("lapse_version is lapse's")
    with srv.client() as c:
        info = c.call("INFO", "server").decode()
    assert f"\r\nlapse_version:{version}\r\n" in info


def config_set_failed(name, reason):
    return f"ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}"


@pytest.mark.parametrize("args, message", [
    (["--nosuch", "1"], "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"),
    (["--port", "abc"], config_set_failed("port", "argument couldn't be parsed into an integer")),
    (["--port", "70000"], config_set_failed("port", "argument must be between 0 and 65535 inclusive")),
    (["--databases", "0"], config_set_failed("databases", "argument must be between 1 and 65536 inclusive")),
    (["--loglevel", "loud"], config_set_failed(
        "loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning, nothing")),
    (["--enable-debug-command", "maybe"], config_set_failed("enable-debug-command", "argument(s) must be one of the following: no, yes, local")),
    (["--maxmemory", "lots"], config_set_failed("maxmemory", "argument must be a memory value")),
    (["--port"], "missing value for '--port'"),
    (["--port", "0", "stray"], "'port' takes one argument"),
    (["/nonexistent/lapse.conf"], "cannot open config file '/nonexistent/lapse.conf'"),
], ids=["unknown-option", "port-not-int", "port-range", "databases-range", "loglevel", "bool", "memory",
        "missing-value", "stray-argument", "missing-file"])
def test_bad_option_exits_2_naming_it(args, message):
    proc = run(*args)
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert err.splitlines()[0] == f"lapse-server: {message}"
    assert "\nUsage: lapse-server " in err


def test_bad_config_file_line_names_file_and_line():
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write("# ok\nport 0\ntimeout soon\n")
        path = f.name
    try:
        proc = run(path)
    finally:
        os.unlink(path)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines()[0] == (
        f"lapse-server: config file '{path}', line 3: "
        + config_set_failed("timeout", "argument couldn't be parsed into an integer"))


# ---- config file and flags ---------------------------------------------------------------


class FileServer(ServerProcess):
    """A server whose port comes from its config file alone (no --port flag): the file is
    written for each port start() tries, with `body` after the port line; `extra` flags come
    last on the command line, as a user would type them."""

    def __init__(self, body: str, extra: list[str] | None = None, **kwargs):
        super().__init__(**kwargs)
        self.body = body
        self.extra = extra or []
        fd, self.config_file = tempfile.mkstemp(prefix="lapse-cmdline-", suffix=".conf")
        os.close(fd)

    def command_line(self, port):
        with open(self.config_file, "w") as f:
            f.write(f"port {port}\n{self.body}")
        argv = super().command_line(port)
        i = argv.index("--port")
        return argv[:i] + argv[i + 2:] + self.extra


@pytest.fixture
def file_server():
    started = []

    def start(body, options=None, password=None, extra=None):
        srv = FileServer(body, extra, options=options)
        srv.password = password  # for stop()'s SHUTDOWN
        started.append(srv)
        return srv.start()

    yield start
    for srv in started:
        try:
            srv.stop()
        finally:
            os.unlink(srv.config_file)


FILE = '# lapse test config\ndatabases 5\nrequirepass "file pass"\n'


def test_file_port_databases_requirepass(file_server):
    srv = file_server(FILE, password="file pass")
    with RawClient(srv.port) as c:  # the port the file named
        assert c.call("AUTH", "file pass") == "OK"
        assert c.call("CONFIG", "GET", "port") == [b"port", str(srv.port).encode()]
        assert c.call("CONFIG", "GET", "databases") == [b"databases", b"5"]
        assert c.call("CONFIG", "GET", "requirepass") == [b"requirepass", b"file pass"]
        assert c.call("SELECT", 4) == "OK"
        assert c.call("SELECT", 5) == OUT_OF_RANGE


def test_flag_overrides_file_requirepass(file_server):
    srv = file_server(FILE, {"requirepass": "flag pass"}, password="flag pass")
    with RawClient(srv.port) as c:
        assert c.call("GET", "k") == E("NOAUTH Authentication required.")
        assert c.call("AUTH", "file pass") == WRONGPASS
        assert c.call("AUTH", "flag pass") == "OK"
        assert c.call("CONFIG", "GET", "requirepass") == [b"requirepass", b"flag pass"]
        assert c.call("CONFIG", "GET", "databases") == [b"databases", b"5"]  # the file's still holds
        assert c.call("SELECT", 4) == "OK"
        assert c.call("SELECT", 5) == OUT_OF_RANGE


def test_flag_overrides_file_databases(file_server):
    srv = file_server(FILE, {"databases": 3}, password="file pass")
    with RawClient(srv.port) as c:
        assert c.call("SELECT", 0) == E("NOAUTH Authentication required.")
        assert c.call("AUTH", "file pass") == "OK"
        assert c.call("CONFIG", "GET", "databases") == [b"databases", b"3"]
        assert c.call("SELECT", 2) == "OK"
        assert c.call("SELECT", 3) == OUT_OF_RANGE
        assert c.call("SELECT", 4) == OUT_OF_RANGE


@pytest.mark.parametrize("extra", [["--save"], ["--save", "--maxclients", "77"]], ids=["last", "before-a-flag"])
def test_a_bare_save_flag_means_no_save_rules(file_server, extra):
    # Redis 7.0.1+: `--save` with no value, last or followed by another flag, is `save ""`.
    srv = file_server("save 900 1\n", extra=extra)
    with RawClient(srv.port) as c:
        assert c.call("CONFIG", "GET", "save") == [b"save", b""]
        if "--maxclients" in extra:
            assert c.call("CONFIG", "GET", "maxclients") == [b"maxclients", b"77"]


def test_flags_take_the_words_up_to_the_next_flag(file_server):
    # Each flag and its words make one configuration line: several words for `save`, a
    # quoted `bind` split as Redis splits it, `rename-command` with its two names.
    srv = file_server("", extra=["--save", "900", "1", "300", "10", "--bind", "127.0.0.1  127.0.0.2",
                                 "--rename-command", "FLUSHALL", ""])
    with RawClient(srv.port) as c:
        assert c.call("CONFIG", "GET", "save") == [b"save", b"900 1 300 10"]
        assert c.call("CONFIG", "GET", "bind") == [b"bind", b"127.0.0.1 127.0.0.2"]
        assert c.call("FLUSHALL") == E("ERR unknown command 'FLUSHALL', with args beginning with: ")
    with RawClient(srv.port, host="127.0.0.2") as c:
        assert c.call("PING") == "PONG"
