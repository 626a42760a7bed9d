"""DEBUG with and without enable-debug-command. Expected replies are Redis 7.0's, whose
enable-debug-command also defaults to no (LAPSE_TARGET=redis runs the same file)."""
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
