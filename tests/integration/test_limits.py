"""Limits that protect the server from one client (issue 7): maxmemory, protected-mode,
client-query-buffer-limit, client-output-buffer-limit, and the memory a client that does not
read can make the server hold.

Each limit is checked for Redis 7.0's exact wording (the same tests run against redis-server
with LAPSE_TARGET=redis, except those marked lapse_only), for "nothing changed" where a
request is refused, and for the other clients going on undisturbed.
"""
import socket
import time

import pytest

from lapse_harness import RawClient, RespError as E, target_kind

OOM = E("OOM command not allowed when used memory > 'maxmemory'.")
DENIED = E(
    "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the "
    "default user. In this mode connections are only accepted from the loopback interface. If you want to connect "
    "from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode "
    "sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the "
    "same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do "
    "so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode "
    "by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting "
    "the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.")


def info_field(c, section, name):
    for line in c.call("INFO", section).decode().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise KeyError(name)


def wait_until(predicate, timeout=15.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def connected_clients(c):
    return int(info_field(c, "clients", "connected_clients"))


# ---- maxmemory -------------------------------------------------------------------------------


def test_over_maxmemory_writes_are_refused_and_reads_go_on(start_server):
    srv = start_server(options={"threads": 2})
    with srv.client() as c:
        assert c.call("SET", "k", "v") == "OK"
        assert c.call("SET", "n", 5) == "OK"
        assert c.call("CONFIG", "SET", "maxmemory", 1) == "OK"
        # Commands that may grow memory are refused and change nothing.
        for cmd in [("SET", "k", "w"), ("SET", "new", "x"), ("SETNX", "new", "x"), ("SETEX", "new", 10, "x"),
                    ("PSETEX", "new", 10, "x"), ("GETSET", "k", "w"), ("APPEND", "k", "w"), ("SETRANGE", "k", 0, "w"),
                    ("INCR", "n"), ("DECR", "n"), ("INCRBY", "n", 2), ("DECRBY", "n", 2), ("INCRBYFLOAT", "n", 1.5),
                    ("MSET", "a", 1, "b", 2), ("MSETNX", "a", 1), ("COPY", "k", "k2")]:
            assert c.call(*cmd) == OOM, cmd
        assert c.pipeline([("GET", "k"), ("GET", "n"), ("DBSIZE",), ("EXISTS", "new", "a", "k2")]) == [b"v", b"5", 2, 0]
        # Reads, deletions and expiry changes go on, as in Redis.
        assert c.call("EXPIRE", "k", 100) == 1
        assert c.call("PERSIST", "k") == 1
        assert c.call("DEL", "n") == 1
        assert c.call("CONFIG", "SET", "maxmemory", 0) == "OK"
        assert c.call("SET", "new", "x") == "OK"


@pytest.mark.lapse_only
def test_over_maxmemory_item_writes_are_refused(start_server):
    srv = start_server(options={"threads": 2})
    with srv.client() as c:
        etag = c.call("IPUT", "box", "a", '{"v":1}')
        assert c.call("CONFIG", "SET", "maxmemory", 1) == "OK"
        for cmd in [("IPUT", "box", "a", '{"v":2}'), ("IPUT", "box", "b", "{}"), ("IPUT", "new", "a", "{}"),
                    ("CSETTTL", "box", 10), ("CSETTTL", "new", 10), ("CSETRU", "box", 10)]:
            assert c.call(*cmd) == OOM, cmd
        assert c.call("CLIST") == [b"box"]
        assert etag.decode() in c.call("IGET", "box", "a").decode()
        assert c.call("CGETTTL", "box") is None
        assert c.call("IDEL", "box", "a") == 1
        assert c.call("CDROP", "box") == 1


def test_writes_stop_when_memory_reaches_maxmemory(start_server):
    """A realistic limit: 4 MiB above the empty server. Writes of 64 KiB values succeed until
    used memory passes it, then every write is refused while reads still see all of them."""
    srv = start_server(options={"threads": 2})
    with srv.client() as c:
        used = int(info_field(c, "memory", "used_memory"))
        assert c.call("CONFIG", "SET", "maxmemory", used + 4 * 1024 * 1024) == "OK"
        value = b"v" * 65536
        written = 0
        for i in range(1000):
            reply = c.call("SET", f"key:{i}", value)
            if reply == OOM:
                break
            assert reply == "OK"
            written += 1
        else:
            pytest.fail("1000 writes of 64 KiB never reached a 4 MiB maxmemory")
        assert 16 <= written < 1000
        assert c.call("DBSIZE") == written  # the refused write changed nothing
        assert c.call("GET", f"key:{written - 1}") == value
        assert int(info_field(c, "memory", "maxmemory")) == used + 4 * 1024 * 1024


def test_maxmemory_config_errors(raw):
    assert raw.call("CONFIG", "SET", "maxmemory", "-1") == \
        E("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value")
    assert raw.call("CONFIG", "SET", "maxmemory", "lots") == \
        E("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value")
    assert raw.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]
    assert raw.call("CONFIG", "SET", "maxmemory", "1gb") == "OK"
    assert raw.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"1073741824"]
    assert raw.call("CONFIG", "SET", "maxmemory", "0") == "OK"


# ---- protected-mode --------------------------------------------------------------------------


def non_loopback_address():
    """An address of this machine that is not loopback, or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.254", 9))  # no packet is sent: this only picks the outgoing interface
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") else addr


def reply_then_eof(host, port):
    """What the server sends a client that connects and says nothing (sending would risk a
    reset that discards the reply, as the server closes without reading)."""
    with socket.create_connection((host, port), timeout=10) as s:
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


@pytest.fixture
def outside_address():
    addr = non_loopback_address()
    if addr is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    return addr


def test_protected_mode_refuses_outside_clients_without_a_password(start_server, outside_address):
    srv = start_server(options={"bind": "0.0.0.0"})
    data = reply_then_eof(outside_address, srv.port)
    assert data == b"-" + DENIED.message.encode() + b"\r\n"
    # Loopback clients are served, and can switch the protection off.
    with srv.client() as c:
        assert c.call("PING") == "PONG"
        assert c.call("CONFIG", "GET", "protected-mode") == [b"protected-mode", b"yes"]
        assert c.call("CONFIG", "SET", "protected-mode", "no") == "OK"
    with RawClient(srv.port, host=outside_address) as outside:
        assert outside.call("PING") == "PONG"


def test_protected_mode_lets_outside_clients_in_with_a_password(start_server, outside_address):
    srv = start_server(options={"bind": "0.0.0.0", "requirepass": "pw"})
    with RawClient(srv.port, host=outside_address) as outside:
        assert outside.call("PING") == E("NOAUTH Authentication required.")
        assert outside.call("AUTH", "pw") == "OK"
        assert outside.call("PING") == "PONG"


def test_protected_mode_off_at_start(start_server, outside_address):
    srv = start_server(options={"bind": "0.0.0.0", "protected-mode": "no"})
    with RawClient(srv.port, host=outside_address) as outside:
        assert outside.call("PING") == "PONG"


# ---- client-query-buffer-limit ---------------------------------------------------------------


def test_query_buffer_limit_closes_the_client_without_a_reply(start_server):
    srv = start_server(options={"threads": 2})
    with srv.client() as admin, srv.client() as bystander:
        assert admin.call("SET", "k", "v") == "OK"
        assert admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb") == "OK"
        with srv.client() as greedy:
            # One SET whose value (2 MB, under proto-max-bulk-len) cannot fit in 1 MB of query buffer.
            greedy.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n")
            try:
                for _ in range(20):
                    greedy.send_raw(b"x" * 100_000)
            except OSError:
                pass  # closed while sending: that is the point
            assert greedy.at_eof(10.0)
            assert greedy.buf == b""  # no reply at all
        assert bystander.call("GET", "k") == b"v"
        assert admin.call("CONFIG", "SET", "client-query-buffer-limit", "1gb") == "OK"


def test_query_buffer_limit_config_errors(raw):
    for value in ["10", "1048575", "-1", "x"]:
        reply = raw.call("CONFIG", "SET", "client-query-buffer-limit", value)
        reason = ("argument must be a memory value" if value in ("-1", "x")
                  else "argument must be between 1048576 and 9223372036854775807 inclusive")
        assert reply == E("ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - "
                          + reason), value
    assert raw.call("CONFIG", "GET", "client-query-buffer-limit") == [b"client-query-buffer-limit", b"1073741824"]
    assert raw.call("CONFIG", "SET", "proto-max-bulk-len", "1000") == \
        E("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
          "argument must be between 1048576 and 9223372036854775807 inclusive")


# ---- client-output-buffer-limit --------------------------------------------------------------


def test_output_buffer_limit_config(raw):
    assert raw.call("CONFIG", "GET", "client-output-buffer-limit") == \
        [b"client-output-buffer-limit", b"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"]
    prefix = "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
    for value, reason in [("x", "Wrong number of arguments in buffer limit configuration."),
                          ("normal 1 2", "Wrong number of arguments in buffer limit configuration."),
                          ("foo 1 1 1", "Invalid client class specified in buffer limit configuration."),
                          ("normal x 1 1", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
                          ("normal 1mb 2mb x", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
                          ("normal 1mb 1mb 1 pubsub 1 1", "Wrong number of arguments in buffer limit configuration.")]:
        assert raw.call("CONFIG", "SET", "client-output-buffer-limit", value) == E(prefix + reason), value
    assert raw.call("CONFIG", "SET", "client-output-buffer-limit", "normal 2mb 1mb 5 replica 1mb 1mb 1") == "OK"
    assert raw.call("CONFIG", "GET", "client-output-buffer-limit") == \
        [b"client-output-buffer-limit", b"normal 2097152 1048576 5 slave 1048576 1048576 1 pubsub 33554432 8388608 60"]
    assert raw.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 256mb 64mb 60") == "OK"


def test_hard_output_limit_drops_a_client_whose_replies_exceed_it(start_server):
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("SET", "big", b"x" * 2_000_000) == "OK"
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0") == "OK"
        with srv.client() as reader:
            reader.send("GET", "big")
            assert reader.at_eof(10.0)
            assert reader.buf == b""
        # Replies under the limit are unaffected, and the data is intact.
        assert admin.call("STRLEN", "big") == 2_000_000
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0") == "OK"
        assert len(admin.call("GET", "big")) == 2_000_000


def test_hard_output_limit_spares_replies_that_fit_the_first_16kb(start_server):
    # Redis counts only what spills past a client's fixed 16 KiB reply buffer, so even a
    # 1-byte limit leaves small replies alone; a reply past 16 KiB drops the client.
    srv = start_server()
    with srv.client() as admin:
        assert admin.call("SET", "small", b"x" * 10_000) == "OK"
        assert admin.call("SET", "large", b"x" * 40_000) == "OK"
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1 0 0") == "OK"
        try:
            with srv.client() as reader:
                assert reader.call("PING") == "PONG"
                assert len(reader.call("GET", "small")) == 10_000
                reader.send("GET", "large")
                assert reader.at_eof(10.0)
        finally:
            with srv.client() as fresh:
                assert fresh.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0") == "OK"


def test_pubsub_output_limit_spares_messages_that_fit_the_first_16kb(start_server):
    srv = start_server()
    with srv.client() as admin, srv.client() as subscriber:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 0 0") == "OK"
        try:
            subscriber.send("SUBSCRIBE", "ch")
            assert subscriber.read_reply() == [b"subscribe", b"ch", 1]
            assert admin.call("PUBLISH", "ch", "small") == 1
            assert subscriber.read_reply() == [b"message", b"ch", b"small"]
            admin.call("PUBLISH", "ch", b"x" * 40_000)
            assert subscriber.at_eof(10.0)
        finally:
            admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 32mb 8mb 60")


def stalled_reader(srv, key, count):
    """A client that pipelines `count` GETs of `key` and reads nothing."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.sendall(f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode() * count)
    return s


@pytest.mark.lapse_only
def test_soft_output_limit_drops_a_stalled_client_after_its_seconds(start_server):
    """The stalled client's pending write stays above the soft limit; once the limit's seconds
    have passed on the server clock (moved by DEBUG ADVANCE) the watchdog drops it."""
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("SET", "v", b"x" * 1_000_000) == "OK"
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 256kb 10") == "OK"
        s = stalled_reader(srv, "v", 64)
        try:
            time.sleep(0.5)
            assert connected_clients(admin) == 2
            assert admin.call("DEBUG", "ADVANCE", 11_000) == "OK"
            wait_until(lambda: connected_clients(admin) == 1, what="the stalled client to be dropped")
        finally:
            s.close()
        assert admin.call("STRLEN", "v") == 1_000_000


@pytest.mark.lapse_only
def test_a_client_that_does_not_read_cannot_make_the_server_hold_its_replies(start_server):
    """With no output limit (Redis's default for normal clients), a client pipelining 400 GETs
    of a 256 KiB value (100 MiB of replies) and reading nothing makes the server hold only a
    bounded part of them: lapse stops reading a client whose replies it cannot write."""
    srv = start_server(options={"threads": 2})
    with srv.client() as admin:
        assert admin.call("SET", "v", b"x" * 262_144) == "OK"
        before = int(info_field(admin, "memory", "used_memory"))
        s = stalled_reader(srv, "v", 400)
        try:
            time.sleep(1.0)
            grown = int(info_field(admin, "memory", "used_memory")) - before
            assert grown < 48 * 1024 * 1024, f"used memory grew by {grown} bytes"
            assert admin.call("PING") == "PONG"
        finally:
            s.close()
