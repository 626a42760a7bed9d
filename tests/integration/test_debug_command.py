"""DEBUG with and without enable-debug-command. Expected replies are Redis 7.0's, whose
enable-debug-command also defaults to no (LAPSE_TARGET=redis runs the same file)."""
import time

import pytest

from conftest import single_server
from lapse_harness import RawClient
from lapse_harness import RespError as E

server = single_server(threads=2)  # started with --enable-debug-command yes

DEBUG_DISABLED = E(
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it "
    "from a local connection, otherwise you need to set this option in the configuration file, and then "
    "restart the server.")


@pytest.mark.parametrize("seconds", ["0", "0.1", "0.0", "0.001"])
def test_debug_sleep_answers_ok(server, raw, raw2, seconds):
    assert raw.call_raw("DEBUG", "SLEEP", seconds) == b"+OK\r\n"
    assert raw.call("PING") == "PONG"
    assert raw2.call("SET", "after-sleep", seconds) == "OK"  # another connection is served too
    assert raw.call("GET", "after-sleep") == seconds.encode()
    server.assert_alive()


def test_debug_sleep_pipelined(server, raw):
    replies = raw.pipeline([("DEBUG", "SLEEP", "0"), ("INCR", "n"), ("DEBUG", "SLEEP", "0.1"), ("INCR", "n")])
    assert replies == ["OK", 1, "OK", 2]
    server.assert_alive()


def test_debug_arity(raw):
    assert raw.call("DEBUG") == E("ERR wrong number of arguments for 'debug' command")


@pytest.mark.parametrize("resp", [2, 3])
def test_debug_protocol_sends_each_type(raw, resp):
    # Redis's test replies, byte for byte, in either protocol.
    if resp == 3:
        raw.call("HELLO", "3")
    expected = {
        "string": (b"$11\r\nHello World\r\n",) * 2,
        "integer": (b":12345\r\n",) * 2,
        "double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
        "bignum": (b"$37\r\n1234567999999999999999999999999999999\r\n",
                   b"(1234567999999999999999999999999999999\r\n"),
        "null": (b"$-1\r\n", b"_\r\n"),
        "array": (b"*3\r\n:0\r\n:1\r\n:2\r\n",) * 2,
        "set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
        "map": (b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n", b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
        "true": (b":1\r\n", b"#t\r\n"),
        "false": (b":0\r\n", b"#f\r\n"),
        "verbatim": (b"$25\r\nThis is a verbatim\nstring\r\n", b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    }
    for kind, replies in expected.items():
        assert raw.call_raw("DEBUG", "PROTOCOL", kind) == replies[resp - 2], kind
    real = b"$39\r\nSome real reply following the attribute\r\n"
    if resp == 2:
        assert raw.call_raw("DEBUG", "PROTOCOL", "attrib") == real
        assert raw.call("DEBUG", "PROTOCOL", "push") == E("ERR RESP2 is not supported by this command")
    else:
        raw.send("DEBUG", "PROTOCOL", "attrib")
        assert raw.read_reply_raw() == b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n" + real
        raw.send("DEBUG", "PROTOCOL", "push")
        assert raw.read_reply_raw() == b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n"
        assert raw.read_reply() == b"Some real reply following the push reply"
    assert raw.call("DEBUG", "PROTOCOL", "nosuch") == E(
        "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
    assert raw.call("DEBUG", "PROTOCOL") == E(
        "ERR unknown subcommand or wrong number of arguments for 'PROTOCOL'. Try DEBUG HELP.")


def test_debug_digest_is_redis_s(raw):
    # The hex strings are redis-server 7.0.15's for the same data: lapse's digests are Redis's,
    # so two servers (or one before and after a restart) can be compared.
    zero = "0" * 40
    assert raw.call("FLUSHALL") == "OK"
    assert raw.call("DEBUG", "DIGEST") == zero
    assert raw.call("DEBUG", "DIGEST-VALUE") == []
    for cmd in [("SET", "s", "hello"), ("SET", "n", "123"), ("SET", "e", "v", "EX", "100"),
                ("RPUSH", "l", "a", "b", "1"), ("SADD", "st", "x", "y", "3"), ("SADD", "si", "1", "2", "-5"),
                ("ZADD", "z", "0.1", "a", "2", "b", "-inf", "c"), ("HSET", "h", "f", "v", "g", "w"),
                ("XADD", "x", "1-1", "a", "1", "b", "2"), ("XADD", "x", "2-5", "a", "3"), ("PFADD", "p", "a", "b")]:
        raw.call(*cmd)
    assert raw.call("DEBUG", "DIGEST-VALUE", "s", "n", "e", "l", "st", "si", "z", "h", "x", "p", "nosuch") == [
        "36b23a1456b2dce2c3ed252c456761301dba8060", "89f7f51b707418f666d5b45e053bd5bbbf82ac2b",
        "311b17018163335616e089f6b951c82c477335ac", "981fd62c1655c074205cff40b800bd5a5bfdcd41",
        "415a07507e2348d139f9fd645a024f6be569dd65", "29971aac18b3b38d1cef70d99a616ea0db83065f",
        "88622aa8bc7132368f19a135acd24d90178c4a3c", "d127864ed50239662bf61bafc9bda63c17da5b37",
        "89015bfca86dd2c80643aab80f5a5c99c005fdcb", "bd9f20683081b22c29220792b6338e415d8e06c5", zero]
    assert raw.call("DEBUG", "DIGEST") == "50948554a9cc1b12de5bec30d805d88d76a443b3"
    raw.call("SELECT", "2")
    raw.call("SET", "other", "db")
    assert raw.call("DEBUG", "DIGEST") == "900dc2282d9a6478746ab86343e8134d3ad799ed"
    assert raw.call("DEBUG", "DIGEST", "x") == E(
        "ERR unknown subcommand or wrong number of arguments for 'DIGEST'. Try DEBUG HELP.")
    assert raw.call("FLUSHALL") == "OK"
    raw.call("SELECT", "0")


@pytest.mark.lapse_only
def test_debug_digest_leaves_out_expired_hash_fields(raw):
    raw.call("FLUSHALL")
    raw.call("HSET", "h", "a", "1")
    before = raw.call("DEBUG", "DIGEST-VALUE", "h")
    raw.call("HSET", "h", "b", "2")
    assert raw.call("DEBUG", "DIGEST-VALUE", "h") != before
    raw.call("HPEXPIRE", "h", "1", "FIELDS", "1", "b")
    time.sleep(0.05)
    assert raw.call("DEBUG", "DIGEST-VALUE", "h") == before


def test_debug_log_answers_ok(raw):
    assert raw.call("DEBUG", "LOG", "a step of a test") == "OK"
    assert raw.call("DEBUG", "LOG") == E("ERR unknown subcommand or wrong number of arguments for 'LOG'. Try DEBUG HELP.")


def test_enable_debug_command_reads_back(r):
    assert r.config_get("enable-debug-command") == {"enable-debug-command": "yes"}


@pytest.fixture
def no_debug(start_server):
    """A server started without --enable-debug-command (the default: no)."""
    return start_server(debug=False)


@pytest.mark.parametrize("args", [
    ("SLEEP", "0"), ("SLEEP", "0.1"), ("sleep", "0"), ("HELP",), ("NOSUCH",), ("ADVANCE", "1"),
    ("SET-ACTIVE-EXPIRE", "1"), ("FREEZE-CLOCK", "1"),
], ids=lambda a: " ".join(a))
def test_debug_disabled_by_default(no_debug, args):
    with no_debug.client() as c:
        assert c.call("DEBUG", *args) == DEBUG_DISABLED
        assert c.call("PING") == "PONG"


def test_debug_disabled_checks_arity_first(no_debug):
    with no_debug.client() as c:
        assert c.call("DEBUG") == E("ERR wrong number of arguments for 'debug' command")


def test_debug_disabled_reads_back_and_is_immutable(no_debug):
    with no_debug.client() as c:
        assert c.call("CONFIG", "GET", "enable-debug-command") == [b"enable-debug-command", b"no"]
        assert c.call("CONFIG", "SET", "enable-debug-command", "yes") == E(
            "ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set immutable config")
        assert c.call("DEBUG", "SLEEP", "0") == DEBUG_DISABLED


def test_debug_disabled_by_flag_no(start_server):
    srv = start_server({"enable-debug-command": "no"}, debug=False)
    with srv.client() as c:
        assert c.call("DEBUG", "SLEEP", "0") == DEBUG_DISABLED


def test_debug_disabled_is_checked_before_auth(start_server):
    # Redis 7.0 refuses a protected command (DEBUG, MODULE) before it checks authentication.
    srv = start_server({"requirepass": "pw"}, debug=False)
    with RawClient(srv.port) as c:
        assert c.call("DEBUG", "SLEEP", "0") == DEBUG_DISABLED


def test_debug_enabled_for_local_connections(start_server):
    srv = start_server({"enable-debug-command": "local"}, debug=False)
    with srv.client() as c:
        assert c.call("CONFIG", "GET", "enable-debug-command") == [b"enable-debug-command", b"local"]
        assert c.call("DEBUG", "SLEEP", "0") == "OK"  # the test connects over loopback


@pytest.mark.parametrize("amount", ["0", "0.05", "x", "-1", "1e-9"])
def test_debug_sleep_reads_its_amount_as_redis_does(raw, amount):
    # Redis reads the amount with strtod and never fails: text that is no number sleeps 0 s.
    assert raw.call("DEBUG", "SLEEP", amount) == "OK"
    assert raw.call("PING") == "PONG"


@pytest.mark.parametrize("args", [("NOSUCH",), ("SLEEP",), ("nosuch", "a", "b")])
def test_debug_unknown_subcommand_or_arity(raw, args):
    assert raw.call("DEBUG", *args) == E(
        f"ERR unknown subcommand or wrong number of arguments for '{args[0]}'. Try DEBUG HELP.")


# ---- OBJECT, ERROR, QUICKLIST-PACKED-THRESHOLD (Redis 7.0's replies) ----

OBJECT_LINE = (r"Value at:0x[0-9a-f]+ refcount:1 encoding:(?P<encoding>[a-z]+) serializedlength:(?P<length>\d+) "
               r"lru:\d+ lru_seconds_idle:(?P<idle>\d+)")
LIST_FIELDS = r" ql_nodes:\d+ ql_avg_node:\d+\.\d\d ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:\d+"


@pytest.mark.parametrize("setup, encoding, length", [
    (("SET", "k", "hello"), "embstr", 6),
    (("SET", "k", "12345"), "int", 3),
    (("SET", "k", "x" * 100), "raw", None),  # LZF-compressed: lapse's compressor gives 9 bytes, Redis's 13
    (("HSET", "k", "f", "v"), "listpack", 14),
    (("SADD", "k", "1", "2"), "intset", 13),
    (("ZADD", "k", "1", "a"), "listpack", 13),
])
def test_debug_object_line(raw, setup, encoding, length):
    import re
    raw.call(*setup)
    line = raw.call("DEBUG", "OBJECT", "k")
    m = re.fullmatch(OBJECT_LINE, line)
    assert m, line
    assert m["encoding"] == encoding == raw.call("OBJECT", "ENCODING", "k").decode()
    if length is not None:
        assert int(m["length"]) == length  # lengths Redis 7.0.15 gives for these values
    # The LRU clock counts whole seconds: a second that turns between the write and DEBUG
    # OBJECT reads 1 (a slow sanitizer build met it), on Redis as on lapse.
    assert int(m["idle"]) <= 1


def test_debug_object_list_has_quicklist_fields(raw):
    import re
    raw.call("RPUSH", "l", "a", "b", "c")
    line = raw.call("DEBUG", "OBJECT", "l")
    m = re.fullmatch(OBJECT_LINE + LIST_FIELDS, line)
    assert m, line
    assert m["encoding"] == "quicklist"
    assert " ql_nodes:1 ql_avg_node:3.00 " in line


def test_debug_object_does_not_touch_the_key(raw):
    raw.call("SET", "k", "v")
    time.sleep(2.1)  # the LRU clock counts whole seconds
    raw.call("DEBUG", "OBJECT", "k")
    assert raw.call("OBJECT", "IDLETIME", "k") >= 2


def test_debug_object_missing_key(raw):
    assert raw.call("DEBUG", "OBJECT", "nokey") == E("ERR no such key")


@pytest.mark.parametrize("args", [("DEBUG", "OBJECT"), ("DEBUG", "OBJECT", "a", "b"), ("DEBUG", "ERROR"),
                                  ("DEBUG", "QUICKLIST-PACKED-THRESHOLD")])
def test_debug_new_subcommands_arity(raw, args):
    sub = args[1]
    assert raw.call(*args) == E(f"ERR unknown subcommand or wrong number of arguments for '{sub}'. Try DEBUG HELP.")


@pytest.mark.parametrize("message, reply", [
    ("foo bar", b"-foo bar\r\n"),
    ("-WRONG x", b"--WRONG x\r\n"),  # Redis 7.0 puts its '-' before any message
    ("", b"-\r\n"),
    ("a\r\nb", b"-a  b\r\n"),
])
def test_debug_error_replies_the_message(raw, message, reply):
    assert raw.call_raw("DEBUG", "ERROR", message) == reply
    assert raw.call("PING") == "PONG"


@pytest.mark.parametrize("size", ["0", "1", "2", "100", "1kb", "1k", "1gb", "4095mb"])
def test_debug_quicklist_packed_threshold_accepts(raw, size):
    assert raw.call_raw("DEBUG", "QUICKLIST-PACKED-THRESHOLD", size) == b"+OK\r\n"


@pytest.mark.parametrize("size", ["4gb", "5gb", "abc", "-1", "1.5"])
def test_debug_quicklist_packed_threshold_refuses(raw, size):
    assert raw.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", size) == E(
        "ERR argument must be a memory value bigger than 1 and smaller than 4gb")


def test_big_list_elements_after_packed_threshold(raw):
    """What Redis's threshold is for: elements past it stay whole and in order."""
    assert raw.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100") == "OK"
    big = [c * 1000 for c in "abc"]
    raw.call("RPUSH", "l", "small", *big, "tail")
    assert raw.call("LRANGE", "l", "0", "-1") == [b"small", *(b.encode() for b in big), b"tail"]
    assert raw.call("LINDEX", "l", "2") == big[1].encode()
    assert raw.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == "OK"


def test_debug_help_lists_the_shared_subcommands(raw):
    lines = raw.call("DEBUG", "HELP")
    names = {line.split()[0] for line in lines[1:] if not line.startswith(" ")}
    assert {"ERROR", "OBJECT", "QUICKLIST-PACKED-THRESHOLD", "RELOAD", "SET-ACTIVE-EXPIRE", "SLEEP"} <= names


def test_debug_populate_fills_as_redis_does(raw):
    # The digest is redis-server 7.0.15's after the same POPULATEs: the same keys and values.
    assert raw.call("FLUSHALL") == "OK"
    assert raw.call("SET", "key:3", "mine") == "OK"
    assert raw.call("DEBUG", "POPULATE", "5") == "OK"
    assert raw.call("DEBUG", "POPULATE", "3", "pad", "12") == "OK"
    assert raw.call("DEBUG", "POPULATE", "2", "cut", "3") == "OK"
    assert raw.call("DEBUG", "POPULATE", "0") == "OK"
    assert raw.call("DBSIZE") == 10
    assert raw.call("GET", "key:3") == b"mine"  # an existing key is left alone
    assert raw.call("GET", "key:4") == b"value:4"
    assert raw.call("GET", "pad:2") == b"value:2\0\0\0\0\0"
    assert raw.call("GET", "cut:1") == b"val"
    assert raw.call("OBJECT", "ENCODING", "key:1") == b"embstr"
    assert raw.call("DEBUG", "DIGEST") == "1fa4822374da60c8e96c1c30009abffd013ac93d"
    for args, error in [(("x",), "ERR value is out of range, must be positive"),
                        (("-1",), "ERR value is out of range, must be positive"),
                        (("3", "p", "x"), "ERR value is out of range, must be positive"),
                        (("3", "p", "-2"), "ERR value is out of range, must be positive")]:
        assert raw.call("DEBUG", "POPULATE", *args) == E(error)
    assert raw.call("DBSIZE") == 10
    assert raw.call("DEBUG", "POPULATE", "1", "p", "1", "x") == E(
        "ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.")
