"""ACL selectors (Redis 7.0): `(...)` groups of command, key and channel rules that a user's
command may satisfy instead of the user's own (root) permissions. Every expected reply is
Redis 7.0.15's: LAPSE_TARGET=redis runs the same file against redis-server.

A command is allowed when the root or one selector allows it whole (command, every key,
every channel). When none does, Redis reports the highest reason (channel, then key, then
command) and, among equal ones, the argument furthest right: the NOPERM error, ACL LOG's
object and ACL DRYRUN's text all follow that rule.

Descriptions of command rules compare only one command or one category per selector: Redis
walks its commands in hash order, which changes from run to run.
"""
import os
import tempfile

import pytest

from conftest import single_server
from lapse_harness import RawClient
from lapse_harness import RespError as E
from redis_errors import NOPERM_CHANNEL, NOPERM_KEY, noperm_command
from redis_errors import acl_password_hash as sha

server = single_server(threads=2)


def login(admin, user="sel"):
    c = RawClient(admin.sock.getpeername()[1])
    assert c.call("AUTH", user, "pw") == "OK"
    return c


# The user most tests run as: its root reads a*, and each selector opens one other door.
SEL_RULES = ["on", ">pw", "~a*", "+get", "+mget", "+multi", "+exec",
             "(~b* +get +set +mget +mset)",
             "(%R~r* +@read)",
             "(%W~w* +set +mset)",
             "(&ch* +publish +subscribe)"]


@pytest.fixture
def sel(admin):
    assert admin.call("ACL", "SETUSER", "sel", *SEL_RULES) == "OK"
    for key in ("a1", "b1", "r1", "w1"):
        assert admin.call("SET", key, "v") == "OK"
    with login(admin) as c:
        yield c


# ---- SETUSER, GETUSER, LIST ------------------------------------------------------------


def test_selectors_in_acl_list(admin):
    assert admin.call("ACL", "SETUSER", "u", "on", "nopass", "(~x*", "+get)", "(%R~r* +@read &ch*)") == "OK"
    assert admin.call("ACL", "LIST")[1] == (
        b"user u on nopass resetchannels -@all (~x* resetchannels -@all +get) "
        b"(%R~r* resetchannels &ch* -@all +@read)")
    # a selector split over any number of arguments is joined with single spaces
    assert admin.call("ACL", "SETUSER", "v", "(", "~k*", "+get", ")", "(+set", "~a", "resetkeys)") == "OK"
    assert admin.call("ACL", "LIST")[2] == (
        b"user v off resetchannels -@all (~k* resetchannels -@all +get) (resetchannels -@all +set)")


def test_getuser_resp2(admin):
    assert admin.call("ACL", "SETUSER", "u", "on", "nopass", "~a*", "+get", "(~x* %W~w* +set)", "(&ch* +@read)") == "OK"
    assert admin.call_raw("ACL", "GETUSER", "u") == (
        b"*12\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$6\r\nnopass\r\n$9\r\npasswords\r\n*0\r\n"
        b"$8\r\ncommands\r\n$10\r\n-@all +get\r\n$4\r\nkeys\r\n$3\r\n~a*\r\n$8\r\nchannels\r\n$0\r\n\r\n"
        b"$9\r\nselectors\r\n*2\r\n"
        b"*6\r\n$8\r\ncommands\r\n$10\r\n-@all +set\r\n$4\r\nkeys\r\n$9\r\n~x* %W~w*\r\n$8\r\nchannels\r\n$0\r\n\r\n"
        b"*6\r\n$8\r\ncommands\r\n$12\r\n-@all +@read\r\n$4\r\nkeys\r\n$0\r\n\r\n$8\r\nchannels\r\n$4\r\n&ch*\r\n")


def test_getuser_resp3(admin):
    assert admin.call("ACL", "SETUSER", "u", "on", "nopass", "(~x* &* +get)") == "OK"
    admin.call("HELLO", "3")
    assert admin.call_raw("ACL", "GETUSER", "u") == (
        b"%6\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$6\r\nnopass\r\n$9\r\npasswords\r\n*0\r\n"
        b"$8\r\ncommands\r\n$5\r\n-@all\r\n$4\r\nkeys\r\n$0\r\n\r\n$8\r\nchannels\r\n$0\r\n\r\n"
        b"$9\r\nselectors\r\n*1\r\n"
        b"%3\r\n$8\r\ncommands\r\n$10\r\n-@all +get\r\n$4\r\nkeys\r\n$3\r\n~x*\r\n$8\r\nchannels\r\n$2\r\n&*\r\n")


def test_setuser_adds_selectors_and_clearselectors_removes_them(admin):
    assert admin.call("ACL", "SETUSER", "u", "(+get ~a)") == "OK"
    assert admin.call("ACL", "SETUSER", "u", "(+set ~b)") == "OK"
    assert admin.call("ACL", "LIST")[1] == (
        b"user u off resetchannels -@all (~a resetchannels -@all +get) (~b resetchannels -@all +set)")
    assert admin.call("ACL", "SETUSER", "u", "clearselectors", "(+del ~c)") == "OK"
    assert admin.call("ACL", "LIST")[1] == b"user u off resetchannels -@all (~c resetchannels -@all +del)"
    assert admin.call("ACL", "SETUSER", "u", "clearselectors") == "OK"
    assert admin.call("ACL", "GETUSER", "u")[11] == []
    # `reset` clears them too
    assert admin.call("ACL", "SETUSER", "u", "(+get)", "reset") == "OK"
    assert admin.call("ACL", "LIST")[1] == b"user u off sanitize-payload resetchannels -@all"


def test_selector_rules_start_from_nothing(admin):
    # an empty selector allows nothing; key, channel and command rules inside it follow the
    # same syntax as outside
    assert admin.call("ACL", "SETUSER", "u", "()", "(allkeys allchannels allcommands)",
                      "(~a resetkeys %RW~b &x resetchannels nocommands +@hash -hset)") == "OK"
    assert admin.call("ACL", "LIST")[1] == (
        b"user u off resetchannels -@all (resetchannels -@all) (~* &* +@all) (~b resetchannels -@all +@hash -hset)")


def test_selectors_follow_acl_pubsub_default(admin):
    assert admin.call("CONFIG", "SET", "acl-pubsub-default", "allchannels") == "OK"
    assert admin.call("ACL", "SETUSER", "u", "(+get)") == "OK"
    assert admin.call("ACL", "LIST")[1] == b"user u off &* -@all (&* -@all +get)"


# ---- syntax errors: exact text, nothing changed ------------------------------------------


def test_selector_rules_as_redis_applies_them_to_the_root_too(admin):
    # an empty rule is no rule; allkeys/~* and allchannels/&* may be repeated
    assert admin.call("ACL", "SETUSER", "u", "", "allkeys", "~*", "allkeys", "allchannels", "&*",
                      "(allkeys ~* allchannels &*)") == "OK"
    assert admin.call("ACL", "LIST")[1] == b"user u off ~* &* -@all (~* &* -@all)"
    assert admin.call("ACL", "SETUSER", "u", "%RW~*") == E(
        "ERR Error in ACL SETUSER modifier '%RW~*': Adding a pattern after the * pattern (or the 'allkeys' flag) is "
        "not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")


@pytest.mark.parametrize("rules, error", [
    (["(~x"], "ERR Unmatched parenthesis in acl selector starting at '(~x'."),
    (["(~x", "+get", "on"], "ERR Unmatched parenthesis in acl selector starting at '(~x'."),
    (["(+get)", "(~y", "+set"], "ERR Unmatched parenthesis in acl selector starting at '(~y'."),
    (["bogus", "(~x"], "ERR Unmatched parenthesis in acl selector starting at '(~x'."),
    (["(on)"], "ERR Error in ACL SETUSER modifier '(on)': Syntax error"),
    (["(off)"], "ERR Error in ACL SETUSER modifier '(off)': Syntax error"),
    (["(>pass)"], "ERR Error in ACL SETUSER modifier '(>pass)': Syntax error"),
    (["(#" + sha("x") + ")"], f"ERR Error in ACL SETUSER modifier '(#{sha('x')})': Syntax error"),
    (["(nopass)"], "ERR Error in ACL SETUSER modifier '(nopass)': Syntax error"),
    (["(reset)"], "ERR Error in ACL SETUSER modifier '(reset)': Syntax error"),
    (["(clearselectors)"], "ERR Error in ACL SETUSER modifier '(clearselectors)': Syntax error"),
    (["((~x))"], "ERR Error in ACL SETUSER modifier '((~x))': Syntax error"),
    (["(~x", "\"\")"], "ERR Error in ACL SETUSER modifier '(~x \"\")': Syntax error"),
    ([")"], "ERR Error in ACL SETUSER modifier ')': Syntax error"),
    (["(+nosuch)"], "ERR Error in ACL SETUSER modifier '(+nosuch)': Unknown command or category name in ACL"),
    (["(+get", "+@nosuch)"], "ERR Error in ACL SETUSER modifier '(+get +@nosuch)': Unknown command or category "
                             "name in ACL"),
    (["(%X~k)"], "ERR Error in ACL SETUSER modifier '(%X~k)': Syntax error"),
    (["(~*", "~k)"], "ERR Error in ACL SETUSER modifier '(~* ~k)': Adding a pattern after the * pattern (or the "
                     "'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an "
                     "empty list of patterns"),
    (["(&*", "&c)"], "ERR Error in ACL SETUSER modifier '(&* &c)': Adding a pattern after the * pattern (or the "
                     "'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start "
                     "with an empty list of channels"),
])
def test_selector_errors_change_nothing(admin, rules, error):
    assert admin.call("ACL", "SETUSER", "u", "on", "nopass", "~k", "(+get ~s)") == "OK"
    before = admin.call("ACL", "LIST")
    assert admin.call("ACL", "SETUSER", "u", "off", "clearselectors", "(+set)", *rules) == E(error)
    assert admin.call("ACL", "LIST") == before
    # nor is a user created by a SETUSER that fails
    assert admin.call("ACL", "SETUSER", "newcomer", "(+get)", *rules) == E(error)
    assert admin.call("ACL", "USERS") == [b"default", b"u"]


def test_unbalanced_quotes_inside_a_selector_leave_it_empty(admin):
    # sdssplitargs gives no words for the inside, so Redis adds an empty selector
    assert admin.call("ACL", "SETUSER", "u", "(~x", "\"a", "b)") == "OK"
    assert admin.call("ACL", "LIST")[1] == b"user u off resetchannels -@all (resetchannels -@all)"


# ---- enforcement -------------------------------------------------------------------------


def test_root_or_any_selector_allows(sel):
    assert sel.call("GET", "a1") == b"v"           # root
    assert sel.call("GET", "b1") == b"v"           # first selector
    assert sel.call("SET", "b1", "x") == "OK"
    assert sel.call("GET", "r1") == b"v"           # %R~r* +@read
    assert sel.call("STRLEN", "r1") == 1
    assert sel.call("SET", "w1", "x") == "OK"      # %W~w* +set
    assert sel.call("PUBLISH", "ch1", "m") == 0    # &ch* +publish
    assert sel.call("MGET", "a1", "a2") == [b"v", None]
    assert sel.call("MGET", "b1", "b2") == [b"x", None]


def test_denied_when_no_selector_allows_it_whole(sel, admin):
    assert sel.call("HSET", "a1", "f", "v") == noperm_command("hset")
    assert sel.call("SET", "a1", "x") == NOPERM_KEY    # set is allowed, but not on a1
    assert sel.call("GET", "w1") == NOPERM_KEY         # w* is write-only, and get is not in that selector
    assert sel.call("SET", "r1", "x") == NOPERM_KEY    # r* is read-only
    assert sel.call("STRLEN", "b1") == NOPERM_KEY      # b* has no strlen, @read has no b*
    assert sel.call("PUBLISH", "other", "m") == NOPERM_CHANNEL
    for key in ("a1", "r1", "w1"):
        assert admin.call("GET", key) == b"v"


def test_multi_key_commands_need_one_selector_for_all_keys(sel, admin):
    # b1 and w1 are each writable by one selector, but no selector may write both
    assert sel.call("MSET", "b1", "x", "w1", "x") == NOPERM_KEY
    assert sel.call("MGET", "a1", "b1") == NOPERM_KEY
    assert sel.call("MGET", "r1", "b1") == NOPERM_KEY
    assert sel.call("MSET", "b1", "x", "b2", "y") == "OK"
    assert sel.call("MSET", "w1", "x", "w2", "y") == "OK"
    assert admin.call("MGET", "b1", "w1") == [b"x", b"x"]


def test_channels_need_one_selector_for_all_channels(admin):
    assert admin.call("ACL", "SETUSER", "sel", "on", ">pw", "&a*", "+subscribe", "(&b* +subscribe)") == "OK"
    with login(admin) as c:
        assert c.call("SUBSCRIBE", "a1", "b1") == NOPERM_CHANNEL
        assert c.call("SUBSCRIBE", "b1", "b2") == [b"subscribe", b"b1", 1]


def test_subscribers_keep_channels_a_selector_still_allows(admin):
    assert admin.call("ACL", "SETUSER", "sel", "on", ">pw", "&a", "+subscribe", "+ping", "(&b +subscribe)") == "OK"
    keeps, loses = login(admin), login(admin)
    try:
        assert keeps.call("SUBSCRIBE", "a") == [b"subscribe", b"a", 1]
        assert loses.call("SUBSCRIBE", "b") == [b"subscribe", b"b", 1]
        # the root loses a, a selector gains it; b is gone from every selector
        assert admin.call("ACL", "SETUSER", "sel", "resetchannels", "clearselectors", "(&a)") == "OK"
        assert loses.at_eof()
        assert keeps.call("PING") == [b"pong", b""]
    finally:
        keeps.close()
        loses.close()


@pytest.mark.lapse_only
def test_selectors_apply_to_container_names(admin):
    assert admin.call("ACL", "SETUSER", "sel", "on", ">pw", "~app-*", "+iget",
                      "(~orders* +@container)", "(~stock* +icount)") == "OK"
    with login(admin) as c:
        assert c.call("IPUT", "orders", "i1", '{"a":1}') is not None
        assert c.call("IGET", "orders", "i1") is not None
        assert c.call("ICOUNT", "stock") == 0
        assert c.call("IGET", "app-1", "i1") is None
        assert c.call("IPUT", "app-1", "i1", '{"a":1}') == NOPERM_KEY
        assert c.call("ICOUNT", "other") == NOPERM_KEY
        assert c.call("GET", "orders") == noperm_command("get")
    assert admin.call("ICOUNT", "app-1") == 0


# ---- which refusal is reported: NOPERM, ACL LOG, DRYRUN --------------------------------


@pytest.mark.parametrize("command, reason, obj", [
    (["HSET", "a1", "f", "v"], "command", "hset"),
    (["SET", "a1", "x"], "key", "a1"),
    # root refuses b1 (argument 2), the first selector a1 (argument 1): the rightmost wins
    (["MGET", "a1", "b1"], "key", "b1"),
    (["MGET", "b1", "a1"], "key", "a1"),
    # the root may not MSET at all; one selector refuses w1, another b1
    (["MSET", "b1", "x", "w1", "x"], "key", "w1"),
    (["MSET", "w1", "x", "b1", "x"], "key", "b1"),
    (["PUBLISH", "zz", "m"], "channel", "zz"),
    (["SUBSCRIBE", "ch1", "zz", "ch2"], "channel", "zz"),
])
def test_reported_refusal(sel, admin, command, reason, obj):
    expected_error = {"command": noperm_command(obj.lower()), "key": NOPERM_KEY, "channel": NOPERM_CHANNEL}[reason]
    assert sel.call(*command) == expected_error
    entry = admin.call("ACL", "LOG", "1")[0]
    assert (entry[3], entry[5], entry[7], entry[9]) == (reason.encode(), b"toplevel", obj.encode(), b"sel")
    verb = {"command": f"run the '{obj}' command", "key": f"access the '{obj}' key",
            "channel": f"access the '{obj}' channel"}[reason]
    assert admin.call("ACL", "DRYRUN", "sel", *command) == f"This user has no permissions to {verb}".encode()


def test_dryrun_with_selectors(sel, admin):
    for command in (["GET", "a1"], ["GET", "b1"], ["GET", "r1"], ["SET", "w1", "x"], ["MSET", "b1", "1", "b2", "2"],
                    ["PUBLISH", "ch9", "m"]):
        assert admin.call_raw("ACL", "DRYRUN", "sel", *command) == b"+OK\r\n"
    assert admin.call("ACL", "DRYRUN", "sel", "GET", "w1") == b"This user has no permissions to access the 'w1' key"
    assert admin.call("ACL", "LOG") == []


def test_refusal_in_multi_is_logged_as_multi(sel, admin):
    assert sel.call("MULTI") == "OK"
    assert sel.call("MSET", "b1", "x", "w1", "x") == NOPERM_KEY
    assert sel.call("GET", "b1") == "QUEUED"
    assert sel.call("EXEC") == E("EXECABORT Transaction discarded because of previous errors.")
    entry = admin.call("ACL", "LOG", "1")[0]
    assert (entry[3], entry[5], entry[7]) == (b"key", b"multi", b"w1")


# ---- aclfile ---------------------------------------------------------------------------


def test_aclfile_round_trip(start_server):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "users.acl")
        with open(path, "w") as f:
            f.write("user default on nopass ~* &* +@all\n"
                    "user u on nopass ~a (~b*   +get)   (%R~r* &c +@read)\n")
        srv = start_server({"aclfile": path})
        with RawClient(srv.port) as c:
            listed = [b"user default on nopass ~* &* +@all",
                      b"user u on nopass ~a resetchannels -@all (~b* resetchannels -@all +get) "
                      b"(%R~r* resetchannels &c -@all +@read)"]
            assert c.call("ACL", "LIST") == listed
            assert c.call("ACL", "DRYRUN", "u", "GET", "b1") == "OK"
            assert c.call("ACL", "SETUSER", "v", "(&x +publish)") == "OK"
            assert c.call("ACL", "SAVE") == "OK"
            with open(path) as f:
                saved = f.read()
            listed.append(b"user v off resetchannels -@all (resetchannels &x -@all +publish)")
            assert saved == "".join(line.decode() + "\n" for line in listed)
            assert c.call("ACL", "DELUSER", "u", "v") == 2
            assert c.call("ACL", "LOAD") == "OK"
            assert c.call("ACL", "LIST") == listed
            assert c.call("ACL", "DRYRUN", "v", "PUBLISH", "x", "m") == "OK"


def test_aclfile_selector_errors(start_server):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "users.acl")
        with open(path, "w") as f:
            f.write("user default on nopass ~* &* +@all\n")
        srv = start_server({"aclfile": path})
        unchanged = "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
        with RawClient(srv.port) as c:
            for text, error in [
                    # a selector's unknown command is quoted, other errors are not
                    ("user u on (+nosuch)\n", f"{path}:1: Error in applying operation '(+nosuch)': Unknown command "
                                              "or category name in ACL. "),
                    ("user u on (~a on)\n", f"{path}:1: Syntax error. "),
                    # every error is told, and of the others only the first of a line
                    ("user u on foo +nosuch (bar) +nosuch2\nuser v (>pw)\n",
                     f"{path}:1: Syntax error. {path}:1: Error in applying operation '+nosuch': Unknown command or "
                     f"category name in ACL. {path}:1: Error in applying operation '+nosuch2': Unknown command or "
                     f"category name in ACL. {path}:2: Syntax error. ")]:
                with open(path, "w") as f:
                    f.write(text)
                assert c.call("ACL", "LOAD") == E("ERR " + error + unchanged)
                assert c.call("ACL", "USERS") == [b"default"]


def test_user_lines_with_selectors_in_the_config_file(start_server):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lapse.conf")
        with open(path, "w") as f:
            f.write("user alice on >pw ~a* +get (~b* +set) (&ch +publish)\n")
        srv = start_server(config_file=path)
        with RawClient(srv.port) as c:
            assert c.call("ACL", "LIST")[0] == (
                f"user alice on #{sha('pw')} ~a* resetchannels -@all +get (~b* resetchannels -@all +set) "
                "(resetchannels &ch -@all +publish)").encode()
            assert c.call("AUTH", "alice", "pw") == "OK"
            assert c.call("SET", "b1", "v") == "OK"
            assert c.call("GET", "a1") is None
            assert c.call("GET", "b1") == NOPERM_KEY
            assert c.call("PUBLISH", "ch", "m") == 0


def test_scripts_are_checked_against_selectors(admin):
    assert admin.call("ACL", "SETUSER", "sel", "on", ">pw", "allkeys", "+eval", "+get", "(~b* +set)") == "OK"
    with login(admin) as c:
        assert c.call("EVAL", "return redis.call('set', 'b1', 'x')", "0") == "OK"
        assert c.call("EVAL", "return redis.call('get', 'a1')", "0") is None
        assert c.call("EVAL", "return redis.pcall('set', 'a1', 'x')", "0") == E(
            "ERR The user executing the script can't access at least one of the keys mentioned in the command "
            "arguments")
    entry = admin.call("ACL", "LOG", "1")[0]
    assert (entry[3], entry[5], entry[7]) == (b"key", b"lua", b"a1")
    assert admin.call("MGET", "a1", "b1") == [None, b"x"]
