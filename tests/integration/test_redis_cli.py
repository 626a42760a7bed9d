"""redis-cli and redis-benchmark (Debian redis-tools) against the real server, as subprocesses."""
import json
import re
import shutil
import subprocess

import pytest

from conftest import single_server
from lapse_harness import RawClient, encode_command

pytestmark = pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-tools not installed")


server = single_server(threads=4)  # one server for this module, instead of one per thread count


def cli(server, *args, stdin=None, timeout=60, check=True):
    proc = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(server.port), *args], input=stdin,
                          capture_output=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc


def out(server, *args, **kw):
    return cli(server, *args, **kw).stdout.decode()


def test_ping_set_get(clean):
    assert out(clean, "PING") == "PONG\n"
    assert out(clean, "SET", "greeting", "hello world") == "OK\n"
    assert out(clean, "GET", "greeting") == "hello world\n"
    assert out(clean, "GET", "missing") == "\n"
    assert out(clean, "INCR", "n") == "1\n"
    assert out(clean, "MGET", "greeting", "missing", "n") == "hello world\n\n1\n"
    assert out(clean, "DEL", "greeting", "n") == "2\n"
    assert out(clean, "EXISTS", "greeting") == "0\n"


def test_errors_are_printed(clean):
    assert out(clean, "foo", "a", "b") == "ERR unknown command 'foo', with args beginning with: 'a' 'b' \n\n"
    assert out(clean, "GET") == "ERR wrong number of arguments for 'get' command\n\n"
    assert out(clean, "SET", "k", "v", "NX", "XX") == "ERR syntax error\n\n"


def test_commands_from_stdin(clean):
    script = b"SET a 1\nGET a\nINCR a\nEXPIRE a 100\nTTL a\nTYPE a\nFOO\nDBSIZE\n"
    assert out(clean, stdin=script) == ("OK\n1\n2\n1\n100\nstring\n"
                                        "ERR unknown command 'FOO', with args beginning with: \n\n1\n")


def test_repeat_and_db_selection(clean):
    assert out(clean, "-r", "5", "INCR", "counter") == "1\n2\n3\n4\n5\n"
    assert out(clean, "-n", "3", "SET", "in3", "x") == "OK\n"
    assert out(clean, "-n", "3", "GET", "in3") == "x\n"
    assert out(clean, "GET", "in3") == "\n"
    assert out(clean, "-n", "3", "DBSIZE") == "1\n"


def test_raw_binary_value(clean):
    with clean.client() as c:
        c.call("SET", "bin", b"a\x00b\r\nc\xff")
    assert cli(clean, "--raw", "GET", "bin").stdout == b"a\x00b\r\nc\xff\n"
    assert cli(clean, "--no-raw", "GET", "bin").stdout == b'"a\\x00b\\r\\nc\\xff"\n'


def test_scan_mode(clean):
    with clean.client() as c:
        c.pipeline([("SET", f"user:{i}", i) for i in range(300)] + [("SET", f"other:{i}", i) for i in range(50)])
    keys = out(clean, "--scan", "--pattern", "user:*").split()
    assert sorted(keys) == sorted(f"user:{i}" for i in range(300))
    assert len(out(clean, "--scan").split()) == 350


def test_pipe_mode_10000_commands(clean):
    payload = b"".join(encode_command("SET", f"pipe:{i}", f"value:{i}") if i % 2 == 0 else
                       encode_command("INCR", f"counter:{(i // 2) % 100}") for i in range(10000))
    proc = cli(clean, "--pipe", stdin=payload)
    text = proc.stdout.decode()
    assert "errors: 0, replies: 10000" in text, text + proc.stderr.decode()
    assert "All data transferred" in text
    with clean.client() as c:
        assert c.call("DBSIZE") == 5000 + 100
        assert c.call("GET", "pipe:9998") == b"value:9998"
        assert c.call("GET", "counter:1") == b"50"


def test_pipe_mode_counts_errors(clean):
    payload = b"".join([encode_command("SET", "x", "1"), encode_command("NOSUCH"), encode_command("GET"),
                        encode_command("GET", "x")] * 250)
    proc = cli(clean, "--pipe", stdin=payload, check=False)
    assert "errors: 500, replies: 1000" in proc.stdout.decode()


def test_resp3_hello(clean):
    text = out(clean, "-3", "HELLO", "3")
    lines = text.splitlines()
    assert lines[0] == "server redis"
    assert "proto 3" in lines
    assert "mode standalone" in lines
    assert "role master" in lines
    assert out(clean, "-3", "GET", "missing") == "\n"
    assert out(clean, "-3", "CONFIG", "GET", "appendonly") == "appendonly no\n"
    assert out(clean, "-2", "HELLO", "2").splitlines()[0:2] == ["server", "redis"]


def test_info(clean):
    text = out(clean, "INFO")
    assert text.startswith("# Server\r\n") or text.startswith("# Server\n")
    fields = dict(line.split(":", 1) for line in text.replace("\r", "").splitlines() if ":" in line)
    assert fields["redis_version"].startswith("7.")
    assert fields["tcp_port"] == str(clean.port)
    assert int(fields["connected_clients"]) >= 1
    assert int(fields["used_memory"]) > 0
    keyspace = out(clean, "INFO", "keyspace")
    assert keyspace.replace("\r", "").strip() == "# Keyspace"
    out(clean, "SET", "k", "v", "EX", "1000")
    assert "db0:keys=1,expires=1,avg_ttl=" in out(clean, "INFO", "keyspace")


def test_auth_with_cli(start_server):
    srv = start_server({"requirepass": "cli-pass"})
    assert out(srv, "PING") == "NOAUTH Authentication required.\n\n"
    assert out(srv, "-a", "cli-pass", "--no-auth-warning", "PING") == "PONG\n"
    assert "WRONGPASS" in out(srv, "-a", "bad", "--no-auth-warning", "PING", check=False) + \
        cli(srv, "-a", "bad", "--no-auth-warning", "PING", check=False).stderr.decode()


def test_benchmark_ping_pipelined(clean):
    proc = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(clean.port), "-t", "ping", "-n", "100000",
                           "-P", "16", "-q"], capture_output=True, timeout=120)
    text = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, text + proc.stderr.decode(errors="replace")
    assert "requests per second" in text
    assert "PING_INLINE" in text and "PING_MBULK" in text
    clean.assert_alive()


def test_benchmark_set_get(clean):
    proc = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(clean.port), "-t", "set,get", "-n", "20000",
                           "-q"], capture_output=True, timeout=120)
    text = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, text + proc.stderr.decode(errors="replace")
    assert "SET:" in text and "GET:" in text
    assert text.count("requests per second") == 2
    with RawClient(clean.port) as c:
        assert len(c.call("GET", "key:__rand_int__")) == 3  # redis-benchmark's default key, 3-byte value


# ---- containers and items (issue 4) ---------------------------------------------------------
# redis-cli as a user would type them: JSON bodies as single arguments (from argv and, quoted,
# from stdin), replies in raw mode (not a tty) and --no-raw, CINFO under RESP2 and RESP3.

TTL_ERROR_TAIL = ("' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', "
                  "or '-1' which means never expire.")


def etag_line(text):
    assert re.fullmatch(r"[0-9a-f]{16}\n", text), text
    return text[:-1]


@pytest.fixture
def frozen_cli(clean):
    """The server clock stopped (DEBUG ADVANCE still moves it); thawed even when the test fails."""
    assert out(clean, "DEBUG", "FREEZE-CLOCK", "1") == "OK\n"
    yield clean
    assert out(clean, "DEBUG", "FREEZE-CLOCK", "0") == "OK\n"


@pytest.mark.lapse_only
def test_containers_readme_walkthrough(frozen_cli):
    srv = frozen_cli
    ts = out(srv, "TIME").split()[0]
    assert out(srv, "CSETTTL", "sessions", "3600") == "OK\n"
    e1 = etag_line(out(srv, "IPUT", "sessions", "u1", '{"user":"ann"}'))
    e2 = etag_line(out(srv, "IPUT", "sessions", "u2", '{"user":"bob","ttl":60}'))
    u1 = f'{{"id":"u1","user":"ann","_ts":{ts},"_etag":"{e1}"}}'
    assert out(srv, "IGET", "sessions", "u1") == u1 + "\n"
    assert out(srv, "--no-raw", "IGET", "sessions", "u1") == '"' + u1.replace('"', '\\"') + '"\n'
    assert out(srv, "IGET", "sessions", "nobody") == "\n"
    assert out(srv, "--no-raw", "IGET", "sessions", "nobody") == "(nil)\n"
    assert out(srv, "ITTL", "sessions", "u2") == "60\n"
    assert out(srv, "IPTTL", "sessions", "u1") == "3600000\n"
    assert out(srv, "--no-raw", "ITTL", "sessions", "u1") == "(integer) 3600\n"
    assert out(srv, "CGETTTL", "sessions") == "3600\n"
    assert out(srv, "--no-raw", "CGETTTL", "nothing") == "(nil)\n"
    assert out(srv, "CLIST") == "sessions\n"
    assert out(srv, "ICOUNT", "sessions") == "2\n"
    lines = out(srv, "ISCAN", "sessions", "0", "COUNT", "100").splitlines()
    assert lines[0] == "0"
    assert sorted(lines[1:]) == sorted([u1, f'{{"id":"u2","user":"bob","ttl":60,"_ts":{ts},"_etag":"{e2}"}}'])
    assert out(srv, "--no-raw", "ISCAN", "sessions", "0", "MATCH", "u1") == \
        '1) "0"\n2) 1) "' + u1.replace('"', '\\"') + '"\n'
    assert out(srv, "CSETTTL", "sessions", "OFF") == "OK\n"
    assert out(srv, "ITTL", "sessions", "u2") == "-1\n"
    assert out(srv, "CSETTTL", "sessions", "10") == "OK\n"
    assert out(srv, "DEBUG", "ADVANCE", "10000") == "OK\n"
    assert out(srv, "IGET", "sessions", "u1") == "\n"  # expired 10 s after its write
    assert out(srv, "ITTL", "sessions", "u1") == "-2\n"
    assert out(srv, "ITTL", "sessions", "u2") == "50\n"  # its own ttl wins over the default
    assert out(srv, "ICOUNT", "sessions") == "1\n"
    assert out(srv, "IDEL", "sessions", "u1", "u2") == "1\n"
    assert out(srv, "CDROP", "sessions") == "1\n"
    assert out(srv, "CDROP", "sessions") == "0\n"
    assert out(srv, "CLIST") == "\n"


@pytest.mark.lapse_only
def test_container_errors_are_printed_and_change_nothing(clean):
    etag = etag_line(out(clean, "IPUT", "c", "a", '{"v":1}'))
    doc = out(clean, "IGET", "c", "a")
    for value in ("0", "-2", "null", "1.5", '"10"', "true", "2147483648"):
        expected = "ERR The input ttl '" + value + TTL_ERROR_TAIL + "\n\n"
        assert out(clean, "IPUT", "c", "a", '{"ttl":' + value + "}") == expected
    for value in ("0", "-2", "1.5", '"10"', "true", "2147483648"):
        assert out(clean, "CSETTTL", "c", value) == "ERR The input ttl '" + value + TTL_ERROR_TAIL + "\n\n"
    assert out(clean, "--no-raw", "CSETTTL", "c", "0") == "(error) ERR The input ttl '0" + TTL_ERROR_TAIL + "\n"
    assert out(clean, "IPUT", "c", "a", "{") == (
        "ERR the item is not valid JSON: The JSON document has an improper structure: missing or superfluous "
        "commas, braces, missing keys, etc.\n\n")
    assert out(clean, "IPUT", "c", "a", "[1]") == "ERR the item must be a JSON object\n\n"
    assert out(clean, "IPUT", "c", "a", '{"id":"b"}') == \
        "ERR the item's \"id\" property must be a string equal to the id argument\n\n"
    assert out(clean, "IPUT", "c", "a/b", "{}") == \
        "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'\n\n"
    assert out(clean, "IPUT", "c", "a", "{}", "NX", "XX") == "ERR syntax error\n\n"
    assert out(clean, "IPUT", "c", "a", "{}", "IFMATCH") == "ERR syntax error\n\n"
    assert out(clean, "IPUT", "c", "a") == "ERR wrong number of arguments for 'iput' command\n\n"
    assert out(clean, "IGET", "c") == "ERR wrong number of arguments for 'iget' command\n\n"
    assert out(clean, "CLIST", "x") == "ERR wrong number of arguments for 'clist' command\n\n"
    assert out(clean, "ISCAN", "c", "x") == "ERR invalid cursor\n\n"
    assert out(clean, "ISCAN", "c", "0", "COUNT", "0") == "ERR syntax error\n\n"
    assert out(clean, "ISCAN", "c", "0", "COUNT", "x") == "ERR value is not an integer or out of range\n\n"
    # Conditions that fail are not errors: nil.
    assert out(clean, "--no-raw", "IPUT", "c", "a", "{}", "NX") == "(nil)\n"
    assert out(clean, "--no-raw", "IPUT", "c", "a", "{}", "IFMATCH", "0" * 16) == "(nil)\n"
    assert out(clean, "IGET", "c", "a") == doc
    assert etag in doc
    assert out(clean, "CLIST") == "c\n"
    assert out(clean, "CGETTTL", "c") == "\n"
    assert out(clean, "ICOUNT", "c") == "1\n"


@pytest.mark.lapse_only
def test_container_commands_from_stdin_with_quoted_json(clean):
    script = (b"CSETTTL s 100\n"
              b"IPUT s a '{\"v\": 1, \"s\": \"x y\"}'\n"
              b"IPUT s b \"{\\\"q\\\":2}\"\n"
              b"CSETTTL s 0\n"
              b"ICOUNT s\n"
              b"CGETTTL s\n")
    lines = out(clean, stdin=script).split("\n")
    assert lines[0] == "OK"
    etag_line(lines[1] + "\n")
    etag_line(lines[2] + "\n")
    assert lines[3:] == ["ERR The input ttl '0" + TTL_ERROR_TAIL, "", "2", "100", ""]
    a = out(clean, "IGET", "s", "a")
    assert a.startswith('{"id":"a","v": 1,"s": "x y","_ts":')  # members exactly as typed
    assert out(clean, "IGET", "s", "b").startswith('{"id":"b","q":2,"_ts":')


@pytest.mark.lapse_only
def test_cinfo_with_cli_in_resp2_and_resp3(clean):
    assert out(clean, "CSETTTL", "c", "-1") == "OK\n"
    etag_line(out(clean, "IPUT", "c", "a", "{}"))
    resp2 = out(clean, "CINFO", "c").split("\n")
    fields = dict(zip(resp2[0:-1:2], resp2[1::2]))
    assert (fields["default_ttl"], fields["live_items"], fields["stored_items"], fields["ru_per_second"]) == \
        ("-1", "1", "1", "")
    resp3 = out(clean, "-3", "CINFO", "c").splitlines()
    assert len(resp3) == 18
    assert "default_ttl -1" in resp3 and "live_items 1" in resp3 and "expired_unreclaimed 0" in resp3
    pretty = out(clean, "--no-raw", "-3", "CINFO", "c")
    assert '"default_ttl" => (integer) -1' in pretty
    assert '"ru_per_second" => (nil)' in pretty
    assert '"ru_user_total" => (double) ' in pretty
    assert out(clean, "--no-raw", "-3", "CINFO", "missing") == "(nil)\n"
    assert out(clean, "--no-raw", "CINFO", "missing") == "(nil)\n"


@pytest.mark.lapse_only
def test_containers_are_not_keys_for_cli(clean):
    etag_line(out(clean, "IPUT", "c", "a", "{}"))
    assert out(clean, "DBSIZE") == "0\n"
    assert out(clean, "KEYS", "*") == "\n"  # redis-cli's raw rendering of an empty array
    assert out(clean, "--scan") == ""
    assert out(clean, "GET", "c") == "\n"
    assert out(clean, "FLUSHALL") == "OK\n"
    assert out(clean, "CLIST") == "\n"
    assert out(clean, "--no-raw", "CLIST") == "(empty array)\n"
    assert out(clean, "IGET", "c", "a") == "\n"


@pytest.mark.lapse_only
def test_iscan_pages_with_cli(clean):
    with clean.client() as c:
        assert c.pipeline([("IPUT", "c", f"i{i}", "{}") for i in range(100)])[-1] is not None
    seen, cursor = [], "0"
    while True:
        lines = out(clean, "ISCAN", "c", cursor, "COUNT", "7").splitlines()
        cursor = lines[0]
        seen += [json.loads(d)["id"] for d in lines[1:]]
        if cursor == "0":
            break
    assert sorted(seen) == sorted(f"i{i}" for i in range(100))
