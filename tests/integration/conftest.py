"""Fixtures that run the real lapse-server binary on a free loopback port.

  server        module-scoped, parametrized over --threads 1, 2 and 4 (the keyspace tests);
                a module may replace it with `server = single_server(threads=N)`.
  r / rb        redis-py clients on `server` (decoded str / raw bytes); each test starts
                from FLUSHALL, database 0 and active expiry on, and fails if the server died.
  raw           a RawClient (exact RESP bytes) on `server`.
  start_server  a factory for servers with their own options; stopped after the test.

The binary is $LAPSE_SERVER (relative to the repo root) or <repo>/build/lapse-server.
LAPSE_TARGET=redis runs the same tests against Debian's redis-server instead, to check
that the expected replies are Redis 7.0's; tests marked `lapse_only` are then skipped.
"""
from __future__ import annotations

import contextlib

import pytest
import redis

from lapse_harness import RawClient, ServerProcess, target_kind, wait_blocked

THREAD_COUNTS = [1, 2, 4]


def pytest_configure(config):
    config.addinivalue_line("markers", "lapse_only: needs lapse itself (DEBUG ADVANCE, lapse flags)")


def pytest_collection_modifyitems(config, items):
    if target_kind() != "redis":
        return
    skip = pytest.mark.skip(reason="LAPSE_TARGET=redis: lapse-only test")
    for item in items:
        if "lapse_only" in item.keywords:
            item.add_marker(skip)


@contextlib.contextmanager
def running_server(**kwargs):
    """A ServerProcess for a with-block; stopping it fails if it crashed or exits non-zero."""
    srv = ServerProcess(**kwargs).start()
    try:
        yield srv
    finally:
        srv.stop()


def single_server(threads):
    """A module-scoped `server` fixture with one thread count, for modules that do not need to
    run once per thread count: `server = single_server(threads=2)` in the module."""

    @pytest.fixture(scope="module")
    def server():
        with running_server(options={"threads": threads}) as srv:
            yield srv

    return server


@pytest.fixture(scope="module", params=THREAD_COUNTS, ids=lambda n: f"threads{n}")
def server(request):
    with running_server(options={"threads": request.param}) as srv:
        yield srv


@pytest.fixture
def start_server():
    started = []

    def start(options=None, **kwargs):
        srv = ServerProcess(options=options, **kwargs).start()
        started.append(srv)
        return srv

    yield start
    errors = []
    for srv in started:
        try:
            srv.stop()
        except AssertionError as e:
            errors.append(str(e))
    if errors:
        pytest.fail("\n".join(errors))


def _reset(srv: ServerProcess):
    with srv.client() as c:
        assert c.call("FLUSHALL") == "OK"
        if srv.kind == "lapse":
            assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"


@pytest.fixture
def clean(server):
    """A flushed server; fails the test if the server is not alive afterwards."""
    server.assert_alive()
    _reset(server)
    yield server
    server.assert_alive()


def _redis_client(srv, decode):
    return redis.Redis(host="127.0.0.1", port=srv.port, password=srv.password, decode_responses=decode,
                       socket_timeout=30)


@pytest.fixture
def r(clean):
    client = _redis_client(clean, True)
    yield client
    client.close()


@pytest.fixture
def rb(clean):
    client = _redis_client(clean, False)
    yield client
    client.close()


@pytest.fixture
def connect(clean):
    """Makes raw connections to the server; closes them after the test and checks that no
    client is left blocked."""
    made = []

    def make():
        c = clean.client()
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
    with clean.client() as observer:
        wait_blocked(observer, 0)


@pytest.fixture
def raw(clean):
    c = clean.client()
    yield c
    c.close()


@pytest.fixture
def raw2(clean):
    c = clean.client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def redis_server():
    """Debian's redis-server for a module's differential tests (a module may define its own)."""
    with running_server(kind="redis") as srv:
        yield srv


@pytest.fixture
def admin(clean):
    """ACL tests' connection as the default user. Afterwards users other than `default` are
    gone, and the default user, acl-pubsub-default and ACL LOG are as a fresh server has them."""
    c = RawClient(clean.port)
    c.call("ACL", "LOG", "RESET")
    yield c
    c.close()
    with RawClient(clean.port) as c:
        users = [u.decode() for u in c.call("ACL", "USERS") if u != b"default"]
        if users:
            c.call("ACL", "DELUSER", *users)
        assert c.call("ACL", "SETUSER", "default", "on", "nopass", "resetkeys", "~*", "resetchannels", "&*",
                      "+@all") == "OK"
        assert c.call("CONFIG", "SET", "acl-pubsub-default", "resetchannels") == "OK"
        c.call("ACL", "LOG", "RESET")
