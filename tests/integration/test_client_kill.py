"""CLIENT KILL with every filter of Redis 7.0 (the old `ip:port` form, ID, TYPE, USER, ADDR,
LADDR, SKIPME, several at once) and MAXAGE (Redis 7.4's, lapse only), with Redis's replies and
errors. Expected replies are Redis 7.0's: LAPSE_TARGET=redis runs this file against
redis-server.

The module has its own server, so that a filter matching every client touches only this
file's connections; each test first waits until the server lists exactly the clients it
opened, since a connection closed by an earlier test may not be gone yet.
"""
import time

import pytest

from conftest import single_server
from lapse_harness import RawClient
from lapse_harness import RespError as E
from redis_errors import arity

server = single_server(threads=2)


def listed_ids(observer):
    lines = observer.call("CLIENT", "LIST").decode().splitlines()
    return {int(dict(f.split("=", 1) for f in line.split(" "))["id"]) for line in lines}


@pytest.fixture
def clients(server):
    """Opens connections, returns them once the server lists exactly those."""
    opened = []

    def open_clients(count):
        conns = [RawClient(server.port) for _ in range(count)]
        opened.extend(conns)
        ids = {c.call("CLIENT", "ID") for c in conns}
        deadline = time.monotonic() + 20
        while listed_ids(conns[0]) != ids:
            assert time.monotonic() < deadline, "the clients of earlier tests never went"
            time.sleep(0.01)
        return conns

    yield open_clients
    for c in opened:
        c.close()


def addr(conn):
    return "%s:%d" % conn.sock.getsockname()


def laddr(conn):
    return "%s:%d" % conn.sock.getpeername()


def alive(conn):
    return conn.call("PING") == "PONG"


# ---- the old form: CLIENT KILL <ip:port> ----------------------------------------------


def test_old_form_kills_the_client_at_that_address(clients):
    admin, victim, bystander = clients(3)
    assert admin.call("CLIENT", "KILL", addr(victim)) == "OK"
    assert victim.at_eof(10.0)
    assert alive(bystander) and alive(admin)


def test_old_form_without_a_match_is_an_error(clients):
    (admin,) = clients(1)
    assert admin.call("CLIENT", "KILL", "1.2.3.4:5") == E("ERR No such client")
    assert admin.call("CLIENT", "KILL", "ID") == E("ERR No such client")  # an address, in this form
    assert alive(admin)


def test_old_form_may_kill_the_caller_after_its_reply(clients):
    (admin,) = clients(1)
    admin.send("CLIENT", "KILL", addr(admin))
    admin.send("PING")  # never answered: the connection closes after the kill's reply
    assert admin.read_reply_raw() == b"+OK\r\n"
    assert admin.at_eof(10.0)
    assert admin.buf == b""


# ---- filters ---------------------------------------------------------------------------


def test_id(clients):
    admin, victim, bystander = clients(3)
    assert admin.call("CLIENT", "KILL", "ID", victim.call("CLIENT", "ID")) == 1
    assert victim.at_eof(10.0)
    assert admin.call("CLIENT", "KILL", "ID", 999999) == 0
    assert alive(bystander)


def test_type_normal_and_pubsub(clients):
    admin, normal1, normal2, sub, psub = clients(5)
    sub.call("SUBSCRIBE", "a")
    psub.call("PSUBSCRIBE", "p*")
    assert admin.call("CLIENT", "KILL", "TYPE", "NoRmAl") == 2  # the caller is spared
    assert normal1.at_eof(10.0) and normal2.at_eof(10.0)
    assert sub.call("PING") == [b"pong", b""]
    assert admin.call("CLIENT", "KILL", "TYPE", "pubsub") == 2
    assert sub.at_eof(10.0) and psub.at_eof(10.0)
    assert alive(admin)


def test_resp3_subscriber_is_of_type_pubsub(clients):
    admin, sub3 = clients(2)
    sub3.call("HELLO", "3")
    sub3.call("SSUBSCRIBE", "s")
    assert admin.call("CLIENT", "KILL", "TYPE", "normal") == 0
    assert admin.call("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert sub3.at_eof(10.0)


@pytest.mark.parametrize("kind", ["master", "replica", "slave", "MASTER"])
def test_replication_types_match_no_client(clients, kind):
    admin, other = clients(2)
    assert admin.call("CLIENT", "KILL", "TYPE", kind) == 0
    assert alive(other)


def test_user_default_is_every_client(clients):
    admin, a, b = clients(3)
    assert admin.call("CLIENT", "KILL", "USER", "default") == 2
    assert a.at_eof(10.0) and b.at_eof(10.0)
    assert alive(admin)


def test_user_kills_only_that_users_clients(clients):
    admin, alice, bystander = clients(3)
    assert admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*") == "OK"
    try:
        assert alice.call("AUTH", "alice", "pw") == "OK"
        assert admin.call("CLIENT", "KILL", "USER", "alice") == 1
        assert alice.at_eof(10.0)
        assert alive(bystander) and alive(admin)
        assert admin.call("CLIENT", "KILL", "USER", "alice") == 0
    finally:
        admin.call("ACL", "DELUSER", "alice")


def test_addr(clients):
    admin, victim, bystander = clients(3)
    assert admin.call("CLIENT", "KILL", "ADDR", addr(victim)) == 1
    assert victim.at_eof(10.0)
    assert admin.call("CLIENT", "KILL", "ADDR", addr(victim)) == 0
    assert admin.call("CLIENT", "KILL", "ADDR", "1.2.3.4:5") == 0
    assert alive(bystander)


def test_laddr(clients):
    admin, a, b = clients(3)
    assert admin.call("CLIENT", "KILL", "LADDR", "127.0.0.1:1") == 0
    assert alive(a) and alive(b)
    assert admin.call("CLIENT", "KILL", "LADDR", laddr(admin)) == 2
    assert a.at_eof(10.0) and b.at_eof(10.0)


def test_skipme(clients):
    admin, other = clients(2)
    me = admin.call("CLIENT", "ID")
    assert admin.call("CLIENT", "KILL", "ID", me) == 0
    assert admin.call("CLIENT", "KILL", "ID", me, "SKIPME", "YES") == 0
    assert alive(admin)
    admin.send("CLIENT", "KILL", "ID", me, "skipme", "no")
    admin.send("PING")
    assert admin.read_reply_raw() == b":1\r\n"
    assert admin.at_eof(10.0)
    assert admin.buf == b""
    assert alive(other)


def test_skipme_no_with_a_filter_that_matches_everyone(clients):
    admin, other = clients(2)
    assert admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no") == 2
    assert admin.at_eof(10.0) and other.at_eof(10.0)


def test_filters_together_must_all_match(clients):
    admin, normal, sub = clients(3)
    normal_id = normal.call("CLIENT", "ID")
    sub.call("SUBSCRIBE", "a")
    assert admin.call("CLIENT", "KILL", "TYPE", "pubsub", "ADDR", addr(normal)) == 0
    assert admin.call("CLIENT", "KILL", "TYPE", "normal", "ADDR", addr(sub)) == 0
    assert admin.call("CLIENT", "KILL", "ID", normal_id, "ADDR", addr(sub)) == 0
    assert admin.call("CLIENT", "KILL", "ID", normal_id, "TYPE", "pubsub") == 0
    assert alive(normal)
    assert admin.call("CLIENT", "KILL", "TYPE", "pubsub", "ADDR", addr(sub), "USER", "default",
                      "LADDR", laddr(sub), "SKIPME", "yes") == 1
    assert sub.at_eof(10.0)
    assert alive(normal)


# ---- errors: Redis's text, and nothing killed ---------------------------------------------


@pytest.mark.parametrize("filters, error", [
    (["BOGUS", "1"], E("ERR syntax error")),
    (["TYPE", "normal", "BOGUS", "1"], E("ERR syntax error")),
    (["TYPE", "normal", "ID"], E("ERR syntax error")),
    (["ID", "x"], E("ERR client-id should be greater than 0")),
    (["ID", "0"], E("ERR client-id should be greater than 0")),
    (["ID", "-1"], E("ERR client-id should be greater than 0")),
    (["ID", "1.5"], E("ERR client-id should be greater than 0")),
    (["TYPE", "x"], E("ERR Unknown client type 'x'")),
    (["TYPE", "a\0b"], E("ERR Unknown client type 'a'")),
    (["USER", "nobody"], E("ERR No such user 'nobody'")),
    (["USER", "Default"], E("ERR No such user 'Default'")),
    (["SKIPME", "maybe"], E("ERR syntax error")),
    (["SKIPME", "1"], E("ERR syntax error")),
    # Filters are read in order: the first bad one answers.
    (["ID", "x", "TYPE", "y"], E("ERR client-id should be greater than 0")),
    (["TYPE", "y", "ID", "x"], E("ERR Unknown client type 'y'")),
    (["TYPE", "normal", "TYPE", "y"], E("ERR Unknown client type 'y'")),
], ids=lambda v: "-".join(v).replace("\0", "NUL") if isinstance(v, list) else None)
def test_bad_filters_kill_nobody(clients, filters, error):
    admin, victim = clients(2)
    victim_id = victim.call("CLIENT", "ID")
    # Behind a filter that matches the victim: a bad filter skipped would kill it.
    assert admin.call("CLIENT", "KILL", "ADDR", addr(victim), *filters) == error
    assert alive(victim)
    assert victim_id in listed_ids(admin)


def test_arity(clients):
    (admin,) = clients(1)
    assert admin.call("CLIENT", "KILL") == arity("client|kill")


# ---- MAXAGE (Redis 7.4's filter; Redis 7.0 answers a syntax error) --------------------


@pytest.mark.lapse_only
def test_maxage_kills_the_clients_connected_that_long(server, clients):
    (old,) = clients(1)
    assert old.call("DEBUG", "ADVANCE", 10_000) == "OK"
    admin = RawClient(server.port)
    try:
        assert admin.call("CLIENT", "KILL", "MAXAGE", 100) == 0
        assert admin.call("CLIENT", "KILL", "MAXAGE", 5) == 1
        assert old.at_eof(10.0)
        assert alive(admin)
    finally:
        admin.close()


@pytest.mark.lapse_only
@pytest.mark.parametrize("value", ["x", "-1", "1.5"])
def test_maxage_errors(clients, value):
    admin, other = clients(2)
    assert admin.call("CLIENT", "KILL", "MAXAGE", value) == E("ERR maxage is not an integer or out of range")
    assert alive(other)


CLIENT_HELP = [
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME", "    Return the name of the current connection.",
    "ID", "    Return the ID of the current connection.",
    "INFO", "    Return information about the current client connection.",
    "KILL <ip:port>", "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Kill connections by type.",
    "    * USER <username>", "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)", "      Skip killing current connection (default: yes).",
    "LIST [options ...]", "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Return clients of specified type.",
    "UNPAUSE", "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
    "SETNAME <name>", "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO", "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
    "HELP", "    Prints this help.",
]


def test_client_help_is_redis_7_0_line_for_line(clients):
    (c,) = clients(1)
    assert c.call("CLIENT", "HELP") == CLIENT_HELP
