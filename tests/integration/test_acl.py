"""Access control (ACL users), against the real binary. Every expected reply is Redis 7.0's:
LAPSE_TARGET=redis runs the same file against redis-server. Each test starts from Redis's
initial users (only `default`, on, nopass, all permissions) and an empty ACL LOG.

Redis walks its commands in hash order, which changes from run to run, when it describes a
user's command rules: tests compare such descriptions only where one single command differs
from the categories.
"""
import os
import tempfile

import pytest

from conftest import single_server
from lapse_harness import RawClient, RespSet
from lapse_harness import RespError as E
from redis_errors import NOPERM_CHANNEL, NOPERM_KEY, noperm_command
from redis_errors import acl_password_hash as sha

server = single_server(threads=2)

WRONGPASS = E("WRONGPASS invalid username-password pair or user is disabled.")
EXECABORT = E("EXECABORT Transaction discarded because of previous errors.")


def login(srv, user, password):
    c = RawClient(srv.port)
    assert c.call("AUTH", user, password) == "OK"
    return c


# ---- users, GETUSER, LIST, USERS, WHOAMI ----------------------------------------------


def test_default_user(admin):
    assert admin.call("ACL", "LIST") == [b"user default on nopass ~* &* +@all"]
    assert admin.call("ACL", "USERS") == [b"default"]
    assert admin.call("ACL", "WHOAMI") == b"default"
    assert admin.call_raw("ACL", "GETUSER", "default") == (
        b"*12\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$6\r\nnopass\r\n$9\r\npasswords\r\n*0\r\n"
        b"$8\r\ncommands\r\n$5\r\n+@all\r\n$4\r\nkeys\r\n$2\r\n~*\r\n$8\r\nchannels\r\n$2\r\n&*\r\n"
        b"$9\r\nselectors\r\n*0\r\n")
    assert admin.call("ACL", "GETUSER", "nosuch") is None


def test_getuser_resp3_flags_are_a_set(admin):
    admin.call("HELLO", "3")
    reply = admin.call("ACL", "GETUSER", "default")
    assert isinstance(reply[b"flags"], RespSet) and reply[b"flags"] == [b"on", b"nopass"]
    assert admin.call_raw("ACL", "GETUSER", "default").startswith(b"%6\r\n$5\r\nflags\r\n~2\r\n")


def test_new_user_starts_off_with_nothing(admin):
    assert admin.call("ACL", "SETUSER", "alice") == "OK"
    assert admin.call("ACL", "GETUSER", "alice") == [
        b"flags", [b"off"], b"passwords", [], b"commands", b"-@all", b"keys", b"", b"channels", b"",
        b"selectors", []]
    assert admin.call("ACL", "LIST") == [b"user alice off resetchannels -@all", b"user default on nopass ~* &* +@all"]
    assert admin.call("ACL", "USERS") == [b"alice", b"default"]
    assert admin.call("AUTH", "alice", "x") == WRONGPASS


def test_whoami_and_client_list_show_the_user(admin):
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    with login(admin_server(admin), "alice", "pw") as c:
        assert c.call("ACL", "WHOAMI") == b"alice"
        assert b" user=alice " in c.call("CLIENT", "INFO")
        assert c.call("RESET") == "RESET"
        assert c.call("ACL", "WHOAMI") == b"default"


def admin_server(admin):
    """The server an `admin` connection is on (its port is all RawClient needs)."""
    class Srv:
        port = admin.sock.getpeername()[1]
    return Srv


# ---- passwords -------------------------------------------------------------------------


def test_passwords_by_text_and_by_hash(admin):
    srv = admin_server(admin)
    assert admin.call("ACL", "SETUSER", "alice", "on", ">one", "#" + sha("two"), "+@all", "~*") == "OK"
    assert admin.call("ACL", "GETUSER", "alice")[3] == [sha("one").encode(), sha("two").encode()]
    for password in ("one", "two"):
        login(srv, "alice", password).close()
    with RawClient(srv.port) as c:
        assert c.call("AUTH", "alice", "three") == WRONGPASS
        assert c.call("HELLO", "3", "AUTH", "alice", "three") == WRONGPASS
        assert c.call("HELLO", "3", "AUTH", "alice", "one")[b"proto"] == 3
    assert admin.call("ACL", "SETUSER", "alice", "<one", "!" + sha("two"), ">three") == "OK"
    assert admin.call("ACL", "GETUSER", "alice")[3] == [sha("three").encode()]
    with RawClient(srv.port) as c:
        assert c.call("AUTH", "alice", "one") == WRONGPASS
        assert c.call("AUTH", "alice", "three") == "OK"


def test_nopass_and_resetpass(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "nopass", "+@all", "~*")
    assert admin.call("ACL", "GETUSER", "alice")[1:4] == [[b"on", b"nopass"], b"passwords", []]
    login(srv, "alice", "anything").close()
    # a password after nopass ends nopass; resetpass leaves no way in
    admin.call("ACL", "SETUSER", "alice", ">pw")
    assert admin.call("ACL", "GETUSER", "alice")[1] == [b"on"]
    admin.call("ACL", "SETUSER", "alice", "resetpass")
    assert admin.call("ACL", "GETUSER", "alice")[1:4] == [[b"on"], b"passwords", []]
    with RawClient(srv.port) as c:
        assert c.call("AUTH", "alice", "pw") == WRONGPASS
        assert c.call("AUTH", "alice", "") == WRONGPASS


def test_on_off(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    c = login(srv, "alice", "pw")
    admin.call("ACL", "SETUSER", "alice", "off")
    with RawClient(srv.port) as other:
        assert other.call("AUTH", "alice", "pw") == WRONGPASS
    # Like Redis 7.0, a connection already logged in stays, and keeps its permissions.
    assert c.call("PING") == "PONG"
    c.close()
    admin.call("ACL", "SETUSER", "alice", "on")
    login(srv, "alice", "pw").close()


def test_requirepass_is_the_default_users_password(admin):
    srv = admin_server(admin)
    assert admin.call("CONFIG", "SET", "requirepass", "s3cret") == "OK"
    try:
        assert admin.call("ACL", "GETUSER", "default")[1:4] == [[b"on"], b"passwords", [sha("s3cret").encode()]]
        with RawClient(srv.port) as c:
            assert c.call("GET", "k") == E("NOAUTH Authentication required.")
            assert c.call("AUTH", "s3cret") == "OK"
            assert c.call("ACL", "WHOAMI") == b"default"
        # a password set with ACL SETUSER counts as well
        admin.call("ACL", "SETUSER", "default", ">other")
        with RawClient(srv.port) as c:
            assert c.call("AUTH", "default", "other") == "OK"
    finally:
        assert admin.call("CONFIG", "SET", "requirepass", "") == "OK"
    assert admin.call("ACL", "GETUSER", "default")[1:4] == [[b"on", b"nopass"], b"passwords", []]
    assert admin.call("AUTH", "x") == E(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")


# ---- command rules ---------------------------------------------------------------------


def test_command_rules(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+get", "+@hash", "-hdel", "+client|id")
    assert admin.call("ACL", "GETUSER", "alice")[5] in (
        b"-@all +@hash +client|id +get -hdel", b"-@all +@hash +get +client|id -hdel",
        b"-@all +@hash -hdel +client|id +get", b"-@all +@hash +client|id -hdel +get",
        b"-@all +@hash +get -hdel +client|id", b"-@all +@hash -hdel +get +client|id")
    with login(srv, "alice", "pw") as c:
        assert c.call("GET", "k") is None
        assert c.call("HSET", "h", "f", "v") == 1
        assert c.call("HDEL", "h", "f") == noperm_command("hdel")
        assert c.call("SET", "k", "v") == noperm_command("set")
        assert c.call("CLIENT", "ID") > 0
        assert c.call("CLIENT", "KILL", "ID", "1") == noperm_command("client|kill")
        assert c.call("CLIENT", "LIST") == noperm_command("client|list")
        # the commands a client sends before AUTH are never refused
        assert c.call("AUTH", "alice", "pw") == "OK"
        assert c.call("PING") == noperm_command("ping")
    assert admin.call("HGET", "h", "f") == b"v"
    assert admin.call("EXISTS", "k") == 0


def test_all_and_no_commands(admin):
    admin.call("ACL", "SETUSER", "alice", "allcommands")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all"
    admin.call("ACL", "SETUSER", "alice", "-get")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all -get"
    admin.call("ACL", "SETUSER", "alice", "nocommands")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"-@all"
    admin.call("ACL", "SETUSER", "alice", "+@all", "-@hash", "+@string", "-@hash")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all -@hash"
    admin.call("ACL", "SETUSER", "alice", "-@all", "+@read", "-@write")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"-@all +@read"
    admin.call("ACL", "SETUSER", "alice", "-@all", "+@all")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all"


# Redis 7.0 describes a selector by the categories that fit it best, one at a time, then
# single commands; these come out the same whatever order it walks its commands in, and
# hold with LAPSE_TARGET=redis.
@pytest.mark.parametrize("rules, described", [
    ("+@all -@dangerous +config|get", b"+@all -@dangerous +config|get"),
    ("+@read +get -@read", b"-@all"),
    ("+@read -get", b"-@all +@read -get"),
    ("+@all -@read +get", b"+@all -@read +get"),
    ("+@all -config +config|get", b"+@all -config +config|get"),
    ("+@read +@write -@read", b"-@all +@write"),
    ("+@all -@admin", b"+@all -@admin"),
    ("-@all +@admin +@fast", b"-@all +@fast +@admin"),
    ("+@all -@pubsub -@scripting -@transaction", b"+@all -@scripting -@pubsub -@transaction"),
])
def test_command_rules_are_described_by_the_best_fitting_categories(admin, rules, described):
    admin.call("ACL", "SETUSER", "alice", "reset", *rules.split())
    assert admin.call("ACL", "GETUSER", "alice")[5] == described


def test_subcommand_rules(admin):
    admin.call("ACL", "SETUSER", "alice", "+@all", "-client|kill", "+client")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all"
    admin.call("ACL", "SETUSER", "alice", "+@all", "-client|kill", "-client")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all -client"
    admin.call("ACL", "SETUSER", "alice", "+@all", "-config|set")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"+@all -config|set"
    admin.call("ACL", "SETUSER", "alice", "-@all", "+config|get")
    assert admin.call("ACL", "GETUSER", "alice")[5] == b"-@all +config|get"


def test_default_user_narrowed(admin):
    srv = admin_server(admin)
    assert admin.call("ACL", "SETUSER", "default", "-flushall", "resetkeys", "~k*") == "OK"
    with RawClient(srv.port) as c:
        assert c.call("FLUSHALL") == noperm_command("flushall")
        assert c.call("SET", "x", "v") == NOPERM_KEY
        assert c.call("SET", "k", "v") == "OK"
    assert admin.call("FLUSHALL") == noperm_command("flushall")
    assert admin.call("ACL", "SETUSER", "default", "+@all", "allkeys") == "OK"
    assert admin.call("FLUSHALL") == "OK"


def test_category_rules_enforced(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all", "-@dangerous")
    with login(srv, "alice", "pw") as c:
        assert c.call("SET", "k", "v") == "OK"
        assert c.call("FLUSHALL") == noperm_command("flushall")
        assert c.call("CONFIG", "GET", "port") == noperm_command("config|get")
        assert c.call("ACL", "WHOAMI") == b"alice"  # @slow only, as in Redis
        assert c.call("ACL", "LIST") == noperm_command("acl|list")
    admin.call("ACL", "SETUSER", "alice", "-@all", "+@read")
    with login(srv, "alice", "pw") as c:
        assert c.call("GET", "k") == b"v"
        assert c.call("SET", "k", "w") == noperm_command("set")
    assert admin.call("GET", "k") == b"v"


# ---- key patterns ----------------------------------------------------------------------


def test_key_patterns(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~k*", "%R~r*", "%W~w*", "%RW~both*")
    assert admin.call("ACL", "GETUSER", "alice")[7] == b"~k* %R~r* %W~w* ~both*"
    admin.call("SET", "r1", "x")
    with login(srv, "alice", "pw") as c:
        assert c.call("SET", "k1", "v") == "OK"
        assert c.call("GET", "k1") == b"v"
        assert c.call("GET", "x") == NOPERM_KEY
        assert c.call("MGET", "k1", "x") == NOPERM_KEY
        assert c.call("GET", "r1") == b"x"
        assert c.call("SET", "r1", "v") == NOPERM_KEY
        assert c.call("SET", "w1", "v") == "OK"
        assert c.call("GET", "w1") == NOPERM_KEY
        assert c.call("DEL", "w1") == 1
        assert c.call("INCR", "both1") == 1
        assert c.call("INCR", "w2") == NOPERM_KEY  # reads and writes
        assert c.call("MSET", "k2", "a", "x", "b") == NOPERM_KEY
    assert admin.call("GET", "r1") == b"x"
    assert admin.call("EXISTS", "k2", "x") == 0


def test_key_permissions_follow_each_keys_spec(admin):
    # Redis derives what each key needs from its key spec: read for ACCESS, write for
    # INSERT/DELETE/UPDATE. So COPY reads its source and writes its destination, LMOVE both
    # reads and writes its source, EXISTS neither reads nor writes (any matching pattern),
    # and SET without GET only writes.
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "%R~r*", "%W~w*")
    admin.call("SET", "r1", "x")
    admin.call("RPUSH", "rl", "a")
    with login(srv, "alice", "pw") as c:
        assert c.call("COPY", "r1", "w1") == 1
        assert c.call("COPY", "w1", "r2") == NOPERM_KEY
        assert c.call("LMOVE", "rl", "wl", "LEFT", "RIGHT") == NOPERM_KEY
        assert c.call("EXISTS", "w1", "r1") == 2
        assert c.call("SET", "w2", "v") == "OK"
        assert c.call("SET", "w2", "v", "GET") == NOPERM_KEY
        assert c.call("GET", "w2") == NOPERM_KEY
        assert c.call("SORT", "rl", "ALPHA", "STORE", "w3") == 1
        assert c.call("SORT", "rl", "ALPHA", "STORE", "r3") == NOPERM_KEY
    assert admin.call("GET", "w1") == b"x"
    assert admin.call("LRANGE", "rl", "0", "-1") == [b"a"]
    assert admin.call("EXISTS", "r2", "wl", "r3") == 0


def test_allkeys_and_resetkeys(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "allkeys")
    assert admin.call("ACL", "GETUSER", "alice")[7] == b"~*"
    admin.call("ACL", "SETUSER", "alice", "resetkeys", "~k", "%RW~q")
    assert admin.call("ACL", "LIST")[0] == f"user alice on #{sha('pw')} ~k ~q resetchannels +@all".encode()
    admin.call("ACL", "SETUSER", "alice", "resetkeys")
    assert admin.call("ACL", "GETUSER", "alice")[7] == b""
    with login(srv, "alice", "pw") as c:
        assert c.call("GET", "k") == NOPERM_KEY
        assert c.call("PING") == "PONG"


# ---- channels --------------------------------------------------------------------------


def test_channel_patterns(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*", "&news.*", "&alerts")
    assert admin.call("ACL", "GETUSER", "alice")[9] == b"&news.* &alerts"
    with login(srv, "alice", "pw") as c:
        assert c.call("PUBLISH", "news.today", "m") == 0
        assert c.call("PUBLISH", "alerts", "m") == 0
        assert c.call("PUBLISH", "other", "m") == NOPERM_CHANNEL
        assert c.call("SUBSCRIBE", "news.a", "other") == NOPERM_CHANNEL
        # a pattern subscription must be one of the user's patterns, literally
        assert c.call("PSUBSCRIBE", "news.?") == NOPERM_CHANNEL
        assert c.call("PSUBSCRIBE", "news.*") == [b"psubscribe", b"news.*", 1]


def test_subscribers_losing_a_channel_are_disconnected(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*", "&a", "&b", "&p*")
    keeps, loses, patterned = (login(srv, "alice", "pw") for _ in range(3))
    assert keeps.call("SUBSCRIBE", "a") == [b"subscribe", b"a", 1]
    assert loses.call("SUBSCRIBE", "b") == [b"subscribe", b"b", 1]
    assert patterned.call("PSUBSCRIBE", "p*") == [b"psubscribe", b"p*", 1]
    assert admin.call("ACL", "SETUSER", "alice", "resetchannels", "&a", "&p*") == "OK"
    assert loses.at_eof()
    assert admin.call("ACL", "SETUSER", "alice", "resetchannels", "&a", "&p1") == "OK"
    assert patterned.at_eof()
    assert keeps.call("PING") == [b"pong", b""]
    for c in (keeps, loses, patterned):
        c.close()


def test_allchannels_resetchannels_and_the_default(admin):
    admin.call("ACL", "SETUSER", "alice", "allchannels")
    assert admin.call("ACL", "LIST")[0] == b"user alice off &* -@all"
    admin.call("ACL", "SETUSER", "alice", "resetchannels", "&a")
    assert admin.call("ACL", "LIST")[0] == b"user alice off resetchannels &a -@all"
    assert admin.call("CONFIG", "GET", "acl-pubsub-default") == [b"acl-pubsub-default", b"resetchannels"]
    assert admin.call("CONFIG", "SET", "acl-pubsub-default", "allchannels") == "OK"
    admin.call("ACL", "SETUSER", "bob")
    assert admin.call("ACL", "GETUSER", "bob")[9] == b"&*"
    admin.call("ACL", "SETUSER", "alice", "reset")
    assert admin.call("ACL", "LIST")[0] == b"user alice off sanitize-payload &* -@all"


def test_setuser_is_redacted_in_the_slowlog(admin):
    assert admin.call("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    try:
        admin.call("SLOWLOG", "RESET")
        assert admin.call("ACL", "SETUSER", "alice", ">secret", "on") == "OK"
        entry = admin.call("SLOWLOG", "GET", "1")[0]
        assert entry[3] == [b"ACL", b"SETUSER", b"(redacted)", b"(redacted)", b"(redacted)"]
    finally:
        assert admin.call("CONFIG", "SET", "slowlog-log-slower-than", "10000") == "OK"


# ---- SETUSER errors: each changes nothing ----------------------------------------------


SETUSER_ERRORS = [
    (["+nosuch"], "Unknown command or category name in ACL"),
    (["+@nosuch"], "Unknown command or category name in ACL"),
    (["-client|nosuch"], "Unknown command or category name in ACL"),
    (["-get|x"], "Unknown command or category name in ACL"),
    (["~*", "~k"], "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
                   "any effect. Try 'resetkeys' to start with an empty list of patterns"),
    (["&*", "&c"], "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "
                   "have any effect. Try 'resetchannels' to start with an empty list of channels"),
    (["<nopw"], "The password you are trying to remove from the user does not exist"),
    (["#abc"], "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"),
    (["!" + "A" * 64], "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
                       "characters"),
    (["%X~k"], "Syntax error"),
    (["%~k"], "Syntax error"),
    (["%RR~k"], "Syntax error"),
    (["bogus"], "Syntax error"),
    # With all keys, any pattern is refused before its permissions are read.
    (["~*", "%X~k"], "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
                     "any effect. Try 'resetkeys' to start with an empty list of patterns"),
    # "+a|b|c" splits at its last bar: what precedes must be a command, and what follows is never empty.
    (["+acl|cat|x"], "Allowing first-arg of a subcommand is not supported"),
    (["+config|get|x"], "Allowing first-arg of a subcommand is not supported"),
    (["+acl|nosuch|x"], "Unknown command or category name in ACL"),
    (["+get|"], "Syntax error"),
    (["+config|"], "Syntax error"),
    (["-config|get|x"], "Unknown command or category name in ACL"),
    # Patterns may hold no white space or NUL (an ACL file splits on white space).
    (["~a b"], "Syntax error"),
    (["%R~a\tb"], "Syntax error"),
    (["&a\x00b"], "Syntax error"),
]


@pytest.mark.parametrize("rules,reason", SETUSER_ERRORS, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_setuser_errors_change_nothing(admin, rules, reason):
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "+get")
    before = admin.call("ACL", "LIST")
    bad = rules[-1].split("\x00")[0]  # quoted as a C string, up to a NUL
    assert admin.call("ACL", "SETUSER", "alice", "resetkeys", *rules) == E(
        f"ERR Error in ACL SETUSER modifier '{bad}': {reason}")
    assert admin.call("ACL", "LIST") == before
    assert admin.call("ACL", "SETUSER", "newuser", *rules) == E(f"ERR Error in ACL SETUSER modifier '{bad}': {reason}")
    assert admin.call("ACL", "GETUSER", "newuser") is None


# ---- first-argument rules (+select|0) --------------------------------------------------


# Redis 7.0 (deprecated there, but accepted): a command without subcommands may be allowed
# with given first arguments while its bit stays off. Any rule that sets or clears the
# command's bit forgets them, and they are shown only while the bit is off.
FIRST_ARG_RULES = [
    (["+select|0"], b"-@all +select|0"),
    (["+select|0", "+select|1", "+SELECT|0"], b"-@all +select|0 +select|1"),
    (["+select|Ab", "+select|aB"], b"-@all +select|Ab"),
    (["+select|0", "+@connection"], b"-@all +@connection"),
    (["+select|0", "+@connection", "-@connection"], b"-@all"),
    (["+select|0", "+select"], b"-@all +select"),
    (["+select|0", "-select"], b"-@all"),
    (["+select|0", "+@all"], b"+@all"),
    (["+@all", "+select|0"], b"+@all"),
    (["+@all", "-select", "+select|0"], b"+@all -select +select|0"),
    (["+select|0", "-@all"], b"-@all"),
    (["+select|0", "-@keyspace"], b"-@all +select|0"),
    (["+get|x", "-get"], b"-@all"),
]


@pytest.mark.parametrize("rules,described", FIRST_ARG_RULES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_first_argument_rules_are_kept_as_redis_keeps_them(admin, rules, described):
    assert admin.call("ACL", "SETUSER", "alice", "reset", *rules) == "OK"
    reply = admin.call("ACL", "GETUSER", "alice")
    assert dict(zip(reply[::2], reply[1::2]))[b"commands"] == described
    assert admin.call("ACL", "LIST")[0] == b"user alice off sanitize-payload resetchannels " + described


def test_a_first_argument_rule_lets_just_that_argument_through(admin):
    srv = admin_server(admin)
    assert admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+select|0", "+ping|Hello", "(+select|2)") == "OK"
    with login(srv, "alice", "pw") as c:
        assert c.call("SELECT", "0") == "OK"
        assert c.call("SELECT", "2") == "OK"  # by the selector
        assert c.call("SELECT", "1") == noperm_command("select")
        assert c.call("PING", "hELLO") == b"hELLO"  # compared without case
        assert c.call("PING") == noperm_command("ping")
    assert admin.call("ACL", "DRYRUN", "alice", "SELECT", "0") == "OK"
    assert admin.call("ACL", "DRYRUN", "alice", "SELECT", "1") == b"This user has no permissions to run the 'select' command"
    log = admin.call("ACL", "LOG", "1")
    assert dict(zip(log[0][::2], log[0][1::2]))[b"object"] == b"ping"


# ---- transactions and scripts ----------------------------------------------------------


def test_multi_refusal_at_queue_time(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "&ch", "+multi", "+exec", "+set", "+get", "+publish")
    with login(srv, "alice", "pw") as c:
        assert c.pipeline([("MULTI",), ("SET", "k1", "v"), ("GET", "x"), ("HGET", "k", "f"), ("PUBLISH", "zz", "m"),
                           ("EXEC",)]) == ["OK", "QUEUED", NOPERM_KEY, noperm_command("hget"), NOPERM_CHANNEL,
                                           EXECABORT]
    assert admin.call("EXISTS", "k1") == 0
    log = admin.call("ACL", "LOG")
    assert [(e[3], e[5], e[7]) for e in log] == [
        (b"channel", b"multi", b"zz"), (b"command", b"multi", b"hget"), (b"key", b"multi", b"x")]


def test_exec_checks_again(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@all")
    why = ("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
           "This command is no longer allowed for the following reason: ")
    with login(srv, "alice", "pw") as c:
        assert c.pipeline([("MULTI",), ("GET", "k"), ("SET", "k1", "v"), ("PUBLISH", "c", "m"), ("SET", "z", "v")]) == [
            "OK", "QUEUED", "QUEUED", "QUEUED", "QUEUED"]
        admin.call("ACL", "SETUSER", "alice", "-get", "resetkeys", "~z", "resetchannels")
        assert c.call("EXEC") == [E(why + "no permission to execute the command or subcommand"),
                                  E(why + "no permission to touch the specified keys"),
                                  E(why + "no permission to access one of the channels used as arguments"), "OK"]
    assert admin.call("EXISTS", "k1") == 0
    assert admin.call("GET", "z") == b"v"


def test_scripts_are_checked(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "&ch", "+eval", "+get", "+publish")
    with login(srv, "alice", "pw") as c:
        assert c.call("EVAL", "return redis.call('get', 'k1')", "0") is None
        err = c.call("EVAL", "return redis.call('hget', 'k', 'f')", "0")
        assert err.message.startswith("ERR The user executing the script can't run this command or subcommand script:")
        err = c.call("EVAL", "return redis.call('get', 'x')", "0")
        assert err.message.startswith("ERR The user executing the script can't access at least one of the keys "
                                      "mentioned in the command arguments script:")
        err = c.call("EVAL", "return redis.call('publish', 'zz', 'm')", "0")
        assert err.message.startswith("ERR The user executing the script can't publish to the channel mentioned in "
                                      "the command script:")
        assert c.call("EVAL", "return redis.pcall('get', 'x')", "0") == E(
            "ERR The user executing the script can't access at least one of the keys mentioned in the command "
            "arguments")
        # the keys a script declares are checked before it runs
        assert c.call("EVAL", "return 1", "1", "x") == NOPERM_KEY
    log = admin.call("ACL", "LOG")
    assert [(e[3], e[5], e[7]) for e in log] == [
        (b"key", b"toplevel", b"x"), (b"key", b"lua", b"x"), (b"channel", b"lua", b"zz"), (b"command", b"lua", b"hget")]


# ---- ACL LOG ---------------------------------------------------------------------------


def test_acl_log(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "+get")
    with login(srv, "alice", "pw") as c:
        for _ in range(3):
            assert c.call("GET", "x") == NOPERM_KEY
        assert c.call("SET", "k", "v") == noperm_command("set")
        assert c.call("AUTH", "nosuch", "pw") == WRONGPASS
        client_id = c.call("CLIENT", "ID")
    log = admin.call("ACL", "LOG")
    assert [e[0::2] for e in log] == [[b"count", b"reason", b"context", b"object", b"username", b"age-seconds",
                                       b"client-info"]] * 4
    assert [(e[1], e[3], e[5], e[7], e[9]) for e in log] == [
        (1, b"command", b"toplevel", b"client|id", b"alice"),
        (1, b"auth", b"toplevel", b"AUTH", b"nosuch"),
        (1, b"command", b"toplevel", b"set", b"alice"),
        (3, b"key", b"toplevel", b"x", b"alice")]
    assert all(float(e[11]) >= 0 for e in log)
    assert log[2][13].startswith(b"id=") and b" user=alice " in log[2][13] and b" cmd=set " in log[2][13]
    assert client_id == noperm_command("client|id")
    assert len(admin.call("ACL", "LOG", "2")) == 2
    assert admin.call("ACL", "LOG", "0") == []
    assert admin.call("ACL", "LOG", "-1") == []
    assert admin.call("ACL", "LOG", "x") == E("ERR value is not an integer or out of range")
    assert admin.call("ACL", "LOG", "RESET") == "OK"
    assert admin.call("ACL", "LOG") == []


def test_acl_log_max_len(admin):
    srv = admin_server(admin)
    admin.call("ACL", "LOG", "RESET")
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "+get")
    assert admin.call("CONFIG", "SET", "acllog-max-len", "2") == "OK"
    try:
        assert admin.call("CONFIG", "GET", "acllog-max-len") == [b"acllog-max-len", b"2"]
        with login(srv, "alice", "pw") as c:
            for key in ("x", "y", "z"):
                assert c.call("GET", key) == NOPERM_KEY
        assert [e[7] for e in admin.call("ACL", "LOG")] == [b"z", b"y"]
        assert admin.call("CONFIG", "SET", "acllog-max-len", "-1") == E(
            "ERR CONFIG SET failed (possibly related to argument 'acllog-max-len') - argument must be between 0 and "
            "9223372036854775807 inclusive")
        assert admin.call("CONFIG", "GET", "acllog-max-len") == [b"acllog-max-len", b"2"]
        assert admin.call("CONFIG", "SET", "acllog-max-len", "0") == "OK"
        with login(srv, "alice", "pw") as c:
            assert c.call("GET", "w") == NOPERM_KEY
        assert admin.call("ACL", "LOG") == []
    finally:
        admin.call("CONFIG", "SET", "acllog-max-len", "128")
        admin.call("ACL", "LOG", "RESET")


# ---- CAT, GENPASS, DRYRUN, DELUSER, HELP -----------------------------------------------


REDIS_CATEGORIES = [b"keyspace", b"read", b"write", b"set", b"sortedset", b"list", b"hash", b"string", b"bitmap",
                    b"hyperloglog", b"geo", b"stream", b"pubsub", b"admin", b"fast", b"slow", b"blocking",
                    b"dangerous", b"connection", b"transaction", b"scripting"]


def test_cat(server, admin):
    categories = admin.call("ACL", "CAT")
    if server.kind == "lapse":
        assert categories == REDIS_CATEGORIES + [b"container"]
    else:
        assert categories == REDIS_CATEGORIES
    assert sorted(admin.call("ACL", "CAT", "geo")) == [
        b"geoadd", b"geodist", b"geohash", b"geopos", b"georadius", b"georadius_ro", b"georadiusbymember",
        b"georadiusbymember_ro", b"geosearch", b"geosearchstore"]
    assert sorted(admin.call("ACL", "CAT", "GEO")) == sorted(admin.call("ACL", "CAT", "geo"))
    assert b"config|set" in admin.call("ACL", "CAT", "dangerous")
    assert b"acl|whoami" not in admin.call("ACL", "CAT", "admin")
    assert admin.call("ACL", "CAT", "nosuch") == E("ERR Unknown category 'nosuch'")


@pytest.mark.lapse_only
def test_container_category_and_key_patterns_on_containers(admin):
    srv = admin_server(admin)
    cat = admin.call("ACL", "CAT", "container")
    assert b"iput" in cat and b"iget" in cat and b"get" not in cat
    admin.call("ACL", "SETUSER", "tenant", "on", ">pw", "+@container", "~app-*")
    with login(srv, "tenant", "pw") as c:
        assert c.call("IPUT", "app-1", "i1", '{"a":1}') is not None
        assert c.call("IGET", "app-1", "i1") is not None
        assert c.call("IPUT", "other", "i1", '{"a":1}') == NOPERM_KEY
        assert c.call("ICOUNT", "other") == NOPERM_KEY
        assert c.call("GET", "app-1") == noperm_command("get")
    assert admin.call("ICOUNT", "other") == 0


def test_genpass(admin):
    password = admin.call("ACL", "GENPASS")
    assert len(password) == 64 and all(ch in b"0123456789abcdef" for ch in password)
    assert password != admin.call("ACL", "GENPASS")
    assert len(admin.call("ACL", "GENPASS", "5")) == 2
    assert len(admin.call("ACL", "GENPASS", "4096")) == 1024
    bits_error = E("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number "
                   "up to 4096")
    assert admin.call("ACL", "GENPASS", "0") == bits_error
    assert admin.call("ACL", "GENPASS", "4097") == bits_error
    assert admin.call("ACL", "GENPASS", "x") == E("ERR value is not an integer or out of range")


@pytest.mark.parametrize("name", ["a b", "a\tb", "a\nb", "a\x00b", " "])
def test_a_username_with_spaces_or_nul_is_refused_before_its_rules(admin, name):
    before = admin.call("ACL", "LIST")
    assert admin.call("ACL", "SETUSER", name, "on", "+nosuch") == E(
        "ERR Usernames can't contain spaces or null characters")
    assert admin.call("ACL", "LIST") == before


def test_dryrun(admin):
    admin.call("ACL", "SETUSER", "alice", "on", "~k*", "&ch", "+get", "+publish")
    assert admin.call_raw("ACL", "DRYRUN", "alice", "get", "k") == b"+OK\r\n"
    assert admin.call("ACL", "DRYRUN", "alice", "get", "x") == b"This user has no permissions to access the 'x' key"
    assert admin.call("ACL", "DRYRUN", "alice", "hget", "k", "f") == (
        b"This user has no permissions to run the 'hget' command")
    assert admin.call("ACL", "DRYRUN", "alice", "publish", "zz", "m") == (
        b"This user has no permissions to access the 'zz' channel")
    assert admin.call("ACL", "DRYRUN", "alice", "get") == E("ERR wrong number of arguments for 'get' command")
    assert admin.call("ACL", "DRYRUN", "nope", "get", "k") == E("ERR User 'nope' not found")
    assert admin.call("ACL", "DRYRUN", "alice", "foo") == E("ERR Command 'foo' not found")
    # A command with subcommands must name one of them.
    assert admin.call("ACL", "DRYRUN", "alice", "OBJECT", "nosuch") == E("ERR Command 'OBJECT' not found")
    assert admin.call("ACL", "DRYRUN", "alice", "object") == E("ERR wrong number of arguments for 'object' command")
    assert admin.call("ACL", "DRYRUN", "alice", "config", "get") == E(
        "ERR wrong number of arguments for 'config|get' command")
    assert admin.call("ACL", "LOG") == []  # a dry run logs nothing


def test_deluser(admin):
    srv = admin_server(admin)
    admin.call("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    admin.call("ACL", "SETUSER", "bob")
    c = login(srv, "alice", "pw")
    assert admin.call("ACL", "DELUSER", "default", "alice") == E("ERR The 'default' user cannot be removed")
    assert admin.call("ACL", "USERS") == [b"alice", b"bob", b"default"]
    assert admin.call("ACL", "DELUSER", "alice", "bob", "nosuch") == 2
    assert admin.call("ACL", "USERS") == [b"default"]
    # a deleted user's connections are closed
    assert c.at_eof()
    c.close()


def test_help_and_arity(admin):
    help_lines = admin.call("ACL", "HELP")
    assert help_lines[0] == "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_lines[-2:] == ["HELP", "    Prints this help."]
    assert len(help_lines) == 29
    assert admin.call("ACL", "NOSUCH") == E(
        "ERR unknown subcommand 'NOSUCH'. Try ACL HELP.")
    assert admin.call("ACL", "SETUSER") == E("ERR wrong number of arguments for 'acl|setuser' command")
    assert admin.call("ACL", "WHOAMI", "x") == E("ERR wrong number of arguments for 'acl|whoami' command")
    assert admin.call("ACL", "SAVE") == E(
        "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
        "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in "
        "order to store users in the Redis configuration.")


# ---- aclfile and `user` lines ----------------------------------------------------------


def test_aclfile_save_and_load(start_server):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "users.acl")
        with open(path, "w") as f:
            f.write(f"user alice on #{sha('pw')} ~k* +get\nuser default on nopass ~* &* +@all\n")
        srv = start_server({"aclfile": path})
        with RawClient(srv.port) as c:
            assert c.call("ACL", "LIST") == [f"user alice on #{sha('pw')} ~k* resetchannels -@all +get".encode(),
                                             b"user default on nopass ~* &* +@all"]
            assert c.call("ACL", "SETUSER", "bob", "on", "nopass", "+set") == "OK"
            assert c.call("ACL", "SAVE") == "OK"
            with open(path) as f:
                saved = f.read()
            assert saved == (f"user alice on #{sha('pw')} ~k* resetchannels -@all +get\n"
                             "user bob on nopass resetchannels -@all +set\n"
                             "user default on nopass ~* &* +@all\n")
            with open(path, "w") as f:
                f.write("user carol on nopass +@all ~*\n")
            assert c.call("ACL", "LOAD") == "OK"
            assert c.call("ACL", "USERS") == [b"carol", b"default"]
            unchanged = ". WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
            for text, error in [
                    ("user dave on +nosuch\n", f"{path}:1: Error in applying operation '+nosuch': Unknown command "
                                               "or category name in ACL"),
                    ("\nfoo bar\n", f"{path}:2 should start with user keyword followed by the username"),
                    ("user a on\nuser a off\n", "WARNING: Duplicate user 'a' found on line 2")]:
                with open(path, "w") as f:
                    f.write(text)
                assert c.call("ACL", "LOAD") == E("ERR " + error + unchanged)
                assert c.call("ACL", "USERS") == [b"carol", b"default"]
            os.remove(path)
            assert c.call("ACL", "LOAD") == E(
                f"ERR Error loading ACLs, opening file '{path}': No such file or directory")


def test_user_lines_in_the_config_file(start_server):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lapse.conf")
        with open(path, "w") as f:
            f.write("user alice on >pw ~k* +get\nuser bob off\n")
        srv = start_server(config_file=path)
        with RawClient(srv.port) as c:
            assert c.call("ACL", "USERS") == [b"alice", b"bob", b"default"]
            assert c.call("AUTH", "alice", "pw") == "OK"
            assert c.call("GET", "k1") is None
            assert c.call("GET", "x") == NOPERM_KEY
