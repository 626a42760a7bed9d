"""redis-cli and redis-benchmark (Debian redis-tools) against the real server, as subprocesses."""
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
