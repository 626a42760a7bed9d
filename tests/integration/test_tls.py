"""TLS (tls-port and the tls-* settings) with redis-cli --tls, redis-py ssl=True and Python's
ssl module, against a server that serves its plain port and its TLS port at once.

The certificates are made here, at test time, with the openssl command: a CA, a server
certificate and a client certificate it signs, a second CA ("stranger") whose client
certificate the server must refuse, a second server certificate for CONFIG SET reloads, and
a passphrase-protected key. LAPSE_TARGET=redis runs the same tests against Debian's
redis-server 7.0 (built with TLS) to show that every reply and refusal is Redis's.
"""
from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import time

import pytest
import redis

from lapse_harness import (RawClient, ServerProcess, encode_command, free_port, lapse_binary, target_kind,
                           wait_blocked, wait_until)

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("redis-cli") is None,
                                reason="needs the openssl command and redis-tools")

PASSPHRASE = "open sesame"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(d, name):
    openssl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", f"{name}.key", "-out",
            f"{name}.crt", "-days", "2", "-subj", f"/CN={name}", cwd=d)


def make_cert(d, name, ca, extra=()):
    """A certificate for `name` signed by `ca`, for 127.0.0.1 and localhost."""
    (d / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj",
            f"/CN={name}", cwd=d)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", *extra, cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    make_ca(d, "ca")
    make_ca(d, "stranger-ca")
    make_cert(d, "server", "ca")
    make_cert(d, "server2", "ca")
    make_cert(d, "client", "ca")
    make_cert(d, "stranger", "stranger-ca")
    openssl("pkey", "-in", "server.key", "-aes256", "-passout", f"pass:{PASSPHRASE}", "-out", "server-locked.key",
            cwd=d)
    return {name: str(d / name) for name in (
        "ca.crt", "server.crt", "server.key", "server2.crt", "server2.key", "client.crt", "client.key",
        "stranger.crt", "stranger.key", "server-locked.key")} | {"dir": str(d)}


def tls_options(certs, port, **extra):
    options = {"tls-port": port, "tls-cert-file": certs["server.crt"], "tls-key-file": certs["server.key"],
               "tls-ca-cert-file": certs["ca.crt"]}
    options.update(extra)
    return options


def start_tls_server(certs, **extra):
    """A server on a free plain port (the harness's) and a free TLS port (`srv.tls_port`)."""
    last = None
    for _ in range(5):  # the free TLS port may be taken before the server binds it
        port = free_port()
        options = tls_options(certs, port, **extra)
        if target_kind() == "lapse":
            options["threads"] = 2
        try:
            srv = ServerProcess(options=options).start()
        except RuntimeError as e:
            last = e
            continue
        srv.tls_port = port
        return srv
    raise RuntimeError(f"could not start a TLS server: {last}")


@pytest.fixture(scope="module")
def server(certs):
    srv = start_tls_server(certs)
    yield srv
    srv.stop()


@pytest.fixture
def tls(server):
    """The module's TLS server, flushed, with tls-auth-clients back to yes afterwards."""
    server.assert_alive()
    with server.client() as c:
        assert c.call("FLUSHALL") == "OK"
    yield server
    server.assert_alive()
    with server.client() as c:
        assert c.call("CONFIG", "SET", "tls-auth-clients", "yes") == "OK"


def client_context(certs, cert="client", ca="ca.crt", **versions):
    ctx = ssl.create_default_context(cafile=certs[ca])
    if cert:
        ctx.load_cert_chain(certs[f"{cert}.crt"], certs[f"{cert}.key"])
    for k, v in versions.items():
        setattr(ctx, k, v)
    return ctx


class TlsRawClient(RawClient):
    """RawClient's exact RESP bytes, over TLS."""

    def __init__(self, port, context, timeout=20.0):  # noqa: super().__init__ would connect in clear
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.buf = b""


def tls_raw(srv, certs, **kw):
    return TlsRawClient(srv.tls_port, client_context(certs, **kw))


def py_client(srv, certs, cert="client", **kw):
    args = dict(host="127.0.0.1", port=srv.tls_port, ssl=True, ssl_ca_certs=certs["ca.crt"], socket_timeout=20,
                decode_responses=True)
    if cert:
        args.update(ssl_certfile=certs[f"{cert}.crt"], ssl_keyfile=certs[f"{cert}.key"])
    args.update(kw)
    return redis.Redis(**args)


def cli(srv, certs, *args, cert="client", check=True):
    argv = ["redis-cli", "-h", "127.0.0.1", "-p", str(srv.tls_port), "--tls", "--cacert", certs["ca.crt"]]
    if cert:
        argv += ["--cert", certs[f"{cert}.crt"], "--key", certs[f"{cert}.key"]]
    proc = subprocess.run(argv + list(args), capture_output=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc


def refused(ctx, port):
    """True when a TLS client with `ctx` cannot get a PING answered: the handshake fails, or
    (TLS 1.3, where the server checks the client's certificate after the client thinks the
    handshake is done) the connection ends before any reply."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(encode_command("PING"))
                return s.recv(64) == b""
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
        return True


# ---- clients over TLS


def test_redis_cli_set_get(tls, certs):
    assert cli(tls, certs, "SET", "greeting", "hello over tls").stdout == b"OK\n"
    assert cli(tls, certs, "GET", "greeting").stdout == b"hello over tls\n"
    assert cli(tls, certs, "INCR", "n").stdout == b"1\n"
    assert cli(tls, certs, "GET", "missing").stdout == b"\n"


def test_redis_py_ssl(tls, certs):
    r = py_client(tls, certs)
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.ping() is True
    assert r.mget("k", "missing") == ["v", None]
    r.close()


def test_pipelining_over_tls(tls, certs):
    with tls_raw(tls, certs) as c:
        batch = b"".join(encode_command("INCR", "counter") for _ in range(2000))
        c.sock.sendall(batch + encode_command("GET", "counter"))
        replies = [c.read_reply() for _ in range(2001)]
    assert replies[:2000] == list(range(1, 2001))
    assert replies[2000] == b"2000"
    r = py_client(tls, certs)
    with r.pipeline(transaction=True) as p:
        for i in range(100):
            p.rpush("list", i)
        p.lrange("list", 0, 2)
        results = p.execute()
    assert results[-1] == ["0", "1", "2"]
    r.close()


@pytest.mark.parametrize("size", [16 * 1024 + 1, 1024 * 1024, 8 * 1024 * 1024 + 7])
def test_big_values_span_many_records(tls, certs, size):
    value = bytes((i * 31 + 7) % 256 for i in range(size))
    r = py_client(tls, certs, decode_responses=False)
    assert r.set(b"big", value) is True
    assert r.strlen(b"big") == size
    assert r.get(b"big") == value
    # Several at once: replies much larger than one TLS record, written in one go.
    assert r.mget([b"big"] * 3) == [value] * 3
    r.close()


def test_pubsub_over_tls(tls, certs):
    sub = py_client(tls, certs)
    p = sub.pubsub()
    p.subscribe("news")
    assert p.get_message(timeout=10)["type"] == "subscribe"
    with tls.client() as plain:
        assert plain.call("PUBLISH", "news", "from the plain port") == 1
    msg = p.get_message(timeout=10)
    assert msg["channel"] == "news" and msg["data"] == "from the plain port"
    pub = py_client(tls, certs)
    assert pub.publish("news", "x" * 40000) == 1
    assert p.get_message(timeout=10)["data"] == "x" * 40000
    p.close()
    sub.close()
    pub.close()


def test_blocking_command_and_pipelined_command_after_it(tls, certs):
    with tls_raw(tls, certs) as c, tls.client() as plain:
        c.sock.sendall(encode_command("BLPOP", "queue", "0") + encode_command("PING"))
        wait_blocked(plain, 1)
        assert plain.call("LPUSH", "queue", "job") == 1
        assert c.read_reply() == [b"queue", b"job"]
        assert c.read_reply() == "PONG"


def test_disconnect_while_blocked_over_tls(tls, certs):
    with tls.client() as plain:
        c = tls_raw(tls, certs)
        c.sock.sendall(encode_command("BLPOP", "queue", "0"))
        wait_blocked(plain, 1)
        c.close()
        wait_blocked(plain, 0)
        # The element is not handed to the client that left.
        assert plain.call("LPUSH", "queue", "job") == 1
        assert plain.call("LLEN", "queue") == 1


def test_plain_and_tls_ports_at_once(tls, certs):
    r = py_client(tls, certs)
    with tls.client() as plain:
        assert plain.call("SET", "shared", "plain") == "OK"
        assert r.get("shared") == "plain"
        assert r.set("shared", "tls") is True
        assert plain.call("GET", "shared") == b"tls"
        addrs = plain.call("CLIENT", "LIST").decode()
    assert f"laddr=127.0.0.1:{tls.tls_port}" in addrs
    assert f"laddr=127.0.0.1:{tls.port}" in addrs
    r.close()


# ---- who may connect


def test_plain_client_on_tls_port_is_closed_cleanly(tls, certs):
    with RawClient(tls.tls_port) as c:
        c.sock.sendall(encode_command("PING"))
        try:
            data = c.sock.recv(64)
        except ConnectionResetError:
            data = b""
    assert not data.startswith(b"+PONG")
    assert cli(tls, certs, "PING").stdout == b"PONG\n"
    with tls.client() as plain:
        assert plain.call("PING") == "PONG"


def test_auth_clients_yes_refuses_clients_without_certificate(tls, certs):
    assert refused(client_context(certs, cert=None), tls.tls_port)
    assert refused(client_context(certs, cert="stranger"), tls.tls_port)
    assert cli(tls, certs, "PING", cert=None, check=False).returncode != 0
    assert not refused(client_context(certs), tls.tls_port)


def test_auth_clients_optional(tls, certs):
    with tls.client() as plain:
        assert plain.call("CONFIG", "SET", "tls-auth-clients", "optional") == "OK"
        assert plain.call("CONFIG", "GET", "tls-auth-clients") == [b"tls-auth-clients", b"optional"]
    assert not refused(client_context(certs, cert=None), tls.tls_port)
    assert not refused(client_context(certs), tls.tls_port)
    # A certificate that is given is still checked.
    assert refused(client_context(certs, cert="stranger"), tls.tls_port)
    assert cli(tls, certs, "PING", cert=None).stdout == b"PONG\n"


def test_auth_clients_no(tls, certs):
    with tls.client() as plain:
        assert plain.call("CONFIG", "SET", "tls-auth-clients", "no") == "OK"
    assert not refused(client_context(certs, cert=None), tls.tls_port)
    assert not refused(client_context(certs, cert="stranger"), tls.tls_port)
    r = py_client(tls, certs, cert=None)
    assert r.ping() is True
    r.close()


def test_auth_clients_bad_value_changes_nothing(tls, certs):
    with tls.client() as plain:
        err = plain.call("CONFIG", "SET", "tls-auth-clients", "maybe")
        assert err.message == ("ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - argument(s) "
                            "must be one of the following: no, yes, optional")
        assert plain.call("CONFIG", "GET", "tls-auth-clients") == [b"tls-auth-clients", b"yes"]
    assert refused(client_context(certs, cert=None), tls.tls_port)


def test_tls_protocols(certs, start_server):
    srv = start_tls_server(certs, **{"tls-protocols": "TLSv1.3"})
    try:
        assert refused(client_context(certs, maximum_version=ssl.TLSVersion.TLSv1_2), srv.tls_port)
        assert not refused(client_context(certs), srv.tls_port)
    finally:
        srv.stop()
    srv = start_tls_server(certs, **{"tls-protocols": "TLSv1.2"})
    try:
        assert refused(client_context(certs, minimum_version=ssl.TLSVersion.TLSv1_3), srv.tls_port)
        with TlsRawClient(srv.tls_port, client_context(certs)) as c:
            assert c.sock.version() == "TLSv1.2"
            assert c.call("PING") == "PONG"
    finally:
        srv.stop()


# ---- CONFIG GET / SET


def test_config_get_tls(tls, certs):
    with tls.client() as plain:
        got = plain.call("CONFIG", "GET", "tls-*")
    values = dict(zip(got[::2], got[1::2]))
    assert values == {
        b"tls-port": str(tls.tls_port).encode(),
        b"tls-cert-file": certs["server.crt"].encode(),
        b"tls-key-file": certs["server.key"].encode(),
        b"tls-key-file-pass": b"",
        b"tls-ca-cert-file": certs["ca.crt"].encode(),
        b"tls-ca-cert-dir": b"",
        b"tls-auth-clients": b"yes",
        b"tls-protocols": b"",
        b"tls-ciphers": b"",
        b"tls-ciphersuites": b"",
        b"tls-prefer-server-ciphers": b"no",
        b"tls-session-caching": b"yes",
        b"tls-session-cache-size": b"20480",
        b"tls-session-cache-timeout": b"300",
        b"tls-replication": b"no",
        b"tls-cluster": b"no",
        b"tls-client-cert-file": b"",
        b"tls-client-key-file": b"",
        b"tls-client-key-file-pass": b"",
        b"tls-dh-params-file": b"",
    }


def peer_common_name(port, certs):
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
        with client_context(certs).wrap_socket(raw, server_hostname="localhost") as s:
            subject = dict(x[0] for x in s.getpeercert()["subject"])
            return subject["commonName"]


def test_config_set_cert_reloads_context(tls, certs):
    assert peer_common_name(tls.tls_port, certs) == "server"
    kept = py_client(tls, certs)
    assert kept.ping() is True
    with tls.client() as plain:
        assert plain.call("CONFIG", "SET", "tls-cert-file", certs["server2.crt"], "tls-key-file",
                          certs["server2.key"]) == "OK"
    try:
        assert peer_common_name(tls.tls_port, certs) == "server2"
        assert kept.ping() is True  # connections made before the reload go on
    finally:
        with tls.client() as plain:
            assert plain.call("CONFIG", "SET", "tls-cert-file", certs["server.crt"], "tls-key-file",
                              certs["server.key"]) == "OK"
    assert peer_common_name(tls.tls_port, certs) == "server"
    kept.close()


@pytest.mark.parametrize("name,value", [
    ("tls-cert-file", "/nonexistent/server.crt"),
    ("tls-key-file", "/nonexistent/server.key"),
    ("tls-ca-cert-file", "/nonexistent/ca.crt"),
    ("tls-protocols", "TLSv1.4"),
    ("tls-ciphers", "NO-SUCH-CIPHER"),
    ("tls-ciphersuites", "NO_SUCH_SUITE"),
])
def test_config_set_bad_tls_file_changes_nothing(tls, certs, name, value):
    with tls.client() as plain:
        before = plain.call("CONFIG", "GET", name)
        err = plain.call("CONFIG", "SET", name, value)
        assert err.message == (f"ERR CONFIG SET failed (possibly related to argument '{name}') - Unable to update TLS "
                            "configuration. Check server logs.")
        assert plain.call("CONFIG", "GET", name) == before
    assert cli(tls, certs, "PING").stdout == b"PONG\n"


def test_config_set_key_mismatch_refused(tls, certs):
    with tls.client() as plain:
        err = plain.call("CONFIG", "SET", "tls-key-file", certs["server2.key"])
        assert err.message.startswith("ERR CONFIG SET failed (possibly related to argument 'tls-key-file') - Unable to "
                                   "update TLS configuration.")
        assert plain.call("CONFIG", "GET", "tls-key-file") == [b"tls-key-file", certs["server.key"].encode()]
    assert peer_common_name(tls.tls_port, certs) == "server"


def test_config_set_bad_yes_no(tls):
    with tls.client() as plain:
        err = plain.call("CONFIG", "SET", "tls-session-caching", "maybe")
        assert err.message == ("ERR CONFIG SET failed (possibly related to argument 'tls-session-caching') - argument "
                            "must be 'yes' or 'no'")
        assert plain.call("CONFIG", "SET", "tls-session-caching", "no") == "OK"
        assert plain.call("CONFIG", "SET", "tls-session-caching", "yes") == "OK"


def connection_refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except ConnectionRefusedError:
        return True


def test_config_set_tls_port_moves_and_stops_tls(certs):
    srv = start_tls_server(certs)
    try:
        old = srv.tls_port
        new = free_port()
        with srv.client() as plain:
            assert plain.call("CONFIG", "SET", "tls-port", str(new)) == "OK"
            assert plain.call("CONFIG", "GET", "tls-port") == [b"tls-port", str(new).encode()]
        with TlsRawClient(new, client_context(certs)) as c:
            assert c.call("PING") == "PONG"
        wait_until(lambda: connection_refused(old), what="the old TLS port closed")
        with srv.client() as plain:
            err = plain.call("CONFIG", "SET", "tls-port", str(srv.port))  # taken: the plain port
            assert err.message == ("ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to "
                                   "listen on this port. Check server logs.")
            assert plain.call("CONFIG", "GET", "tls-port") == [b"tls-port", str(new).encode()]
            assert plain.call("CONFIG", "SET", "tls-port", "0") == "OK"
        wait_until(lambda: connection_refused(new), what="TLS stopped")
    finally:
        srv.stop()


def test_config_set_tls_port_starts_tls(certs):
    options = tls_options(certs, 0)
    if target_kind() == "lapse":
        options["threads"] = 1
    srv = ServerProcess(options=options).start()
    try:
        port = free_port()
        with srv.client() as plain:
            err = plain.call("CONFIG", "SET", "tls-port", str(port), "tls-cert-file", "/nonexistent.crt")
            assert err.message == ("ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable "
                                   "to update TLS configuration. Check server logs.")
            assert plain.call("CONFIG", "GET", "tls-port") == [b"tls-port", b"0"]
            assert plain.call("CONFIG", "SET", "tls-port", str(port)) == "OK"
        with TlsRawClient(port, client_context(certs)) as c:
            assert c.call("PING") == "PONG"
    finally:
        srv.stop()


# ---- start-up


def test_settings_from_a_configuration_file(certs, tmp_path):
    last = None
    for _ in range(5):
        port = free_port()
        conf = tmp_path / "tls.conf"
        conf.write_text(f"tls-port {port}\n"
                        f"tls-cert-file \"{certs['server.crt']}\"\n"
                        f"tls-key-file {certs['server.key']}\n"
                        f"tls-ca-cert-file {certs['ca.crt']}\n"
                        "tls-auth-clients optional\n"
                        "tls-protocols \"TLSv1.2 TLSv1.3\"\n"
                        "tls-session-caching no\n")
        try:
            srv = ServerProcess(config_file=str(conf)).start()
            break
        except RuntimeError as e:
            last = e
    else:
        raise RuntimeError(f"could not start: {last}")
    srv.tls_port = port
    try:
        with TlsRawClient(port, client_context(certs, cert=None)) as c:
            got = c.call("CONFIG", "GET", "tls-auth-clients", "tls-protocols", "tls-session-caching")
            assert dict(zip(got[::2], got[1::2])) == {b"tls-auth-clients": b"optional",
                                                      b"tls-protocols": b"TLSv1.2 TLSv1.3",
                                                      b"tls-session-caching": b"no"}
    finally:
        srv.stop()


def run_server(args, timeout=20):
    if target_kind() == "redis":
        argv = ["redis-server", "--save", "", "--appendonly", "no", *args]
    else:
        argv = [lapse_binary(), *args]
    return subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("missing", ["tls-cert-file", "tls-key-file", "tls-ca-cert-file"])
def test_startup_with_missing_file_fails_clearly(certs, missing):
    options = tls_options(certs, free_port())
    options[missing] = "/nonexistent/file.pem"
    args = ["--port", str(free_port())]
    for k, v in options.items():
        args += [f"--{k}", str(v)]
    proc = run_server(args)
    assert proc.returncode != 0
    log = (proc.stdout + proc.stderr).decode(errors="replace")
    expected = {"tls-cert-file": "Failed to load certificate: /nonexistent/file.pem: ",
                "tls-key-file": "Failed to load private key: /nonexistent/file.pem: ",
                "tls-ca-cert-file": "Failed to configure CA certificate(s) file/directory: "}[missing]
    assert expected in log
    assert "No such file or directory" in log
    assert "Failed to configure TLS. Check logs for more info." in log


def start_process(args):
    if target_kind() == "redis":
        argv = ["redis-server", "--save", "", "--appendonly", "no", *args]
    else:
        argv = [lapse_binary(), *args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def serve_until_ping(port, ctx, proc):
    def answers():
        assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
        try:
            with TlsRawClient(port, ctx, timeout=2) as c:
                return c.call("PING") == "PONG"
        except OSError:
            return False
    wait_until(answers, timeout=30)


def test_tls_only_with_port_0(certs):
    tls_port = free_port()
    args = ["--port", "0"]
    for k, v in tls_options(certs, tls_port).items():
        args += [f"--{k}", str(v)]
    proc = start_process(args)
    try:
        serve_until_ping(tls_port, client_context(certs), proc)
        with TlsRawClient(tls_port, client_context(certs)) as c:
            assert c.call("CONFIG", "GET", "port") == [b"port", b"0"]
            assert c.call("SET", "k", "v") == "OK"
            c.sock.sendall(encode_command("SHUTDOWN", "NOSAVE"))
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_key_file_pass(certs):
    tls_port = free_port()
    base = ["--port", "0"]
    for k, v in tls_options(certs, tls_port, **{"tls-key-file": certs["server-locked.key"]}).items():
        base += [f"--{k}", str(v)]
    proc = run_server(base + ["--tls-key-file-pass", "wrong"])
    assert proc.returncode != 0
    assert b"Failed to load private key: " + certs["server-locked.key"].encode() in proc.stdout + proc.stderr
    proc = start_process(base + ["--tls-key-file-pass", PASSPHRASE])
    try:
        serve_until_ping(tls_port, client_context(certs), proc)
        with TlsRawClient(tls_port, client_context(certs)) as c:
            assert c.call("CONFIG", "GET", "tls-key-file-pass") == [b"tls-key-file-pass", PASSPHRASE.encode()]
            c.sock.sendall(encode_command("SHUTDOWN", "NOSAVE"))
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
