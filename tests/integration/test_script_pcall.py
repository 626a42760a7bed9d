"""pcall and xpcall in scripts (issue 12): a busy loop inside them still lets a server with one
thread answer BUSY, SCRIPT KILL and SHUTDOWN NOSAVE (server/lua_protected_calls.cc runs the
protected function in a child coroutine so that the hook's yield gets out), and what they
return is exactly Lua 5.1's, as redis-server gives it.

The busy tests run on --threads 1, where nothing but the script's own thread can answer. The
expected replies are Redis's (LAPSE_TARGET=redis runs them against redis-server 7.0): the kill
error is raised again on each new line of the script, so a pcall may catch it only until the
script's next line.
"""
import hashlib
import shutil
import time

import pytest

from conftest import single_server
from lapse_harness import RespError as E
from lapse_harness import RawClient
from test_scripting import start_busy_server

server = single_server(threads=2)

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
KILLED = "ERR Script killed by user with SCRIPT KILL..."
LOOP = "while true do end"


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture
def one_thread(start_server):
    return start_busy_server(start_server, 1)


def start_busy(srv, script):
    """Sends EVAL `script` on a connection of its own, then waits (PING on fresh connections)
    until the server answers BUSY; returns the script's connection and a connection that got
    BUSY."""
    long = srv.client(timeout=30)
    long.send("EVAL", script, "0")
    deadline = time.time() + 20
    while True:
        c = srv.client(timeout=10)
        reply = c.call("PING")
        if reply == E(BUSY):
            return long, c
        c.close()
        assert reply == "PONG" and time.time() < deadline, reply
        time.sleep(0.05)


BUSY_SCRIPTS = {
    "pcall": f"pcall(function() {LOOP} end)\nreturn 1",
    "xpcall": f"xpcall(function() {LOOP} end, function(e) return e end)\nreturn 1",
    "nested": f"pcall(function() pcall(function() {LOOP} end) {LOOP} end)\nreturn 1",
    "pcall_in_a_called_function": f"local function spin() pcall(function() {LOOP} end) end\nspin()\nreturn 1",
}


@pytest.mark.parametrize("name", sorted(BUSY_SCRIPTS))
def test_a_busy_loop_inside_pcall_is_served_and_killed_on_one_thread(name, one_thread):
    script = BUSY_SCRIPTS[name]
    long, c = start_busy(one_thread, script)
    with long, c:
        assert c.call("GET", "k") == E(BUSY)
        assert c.call("FUNCTION", "KILL") == E(BUSY)
        assert c.call("SCRIPT", "KILL") == "OK"
        # Caught by the pcall, raised again on the script's next line.
        line = script.count("\n")
        assert long.read_reply() == E(f"{KILLED} script: {sha1(script)}, on @user_script:{line + 1}.")
        assert c.call("PING") == "PONG"
        assert c.call("SCRIPT", "KILL") == E("NOTBUSY No scripts in execution right now.")


def test_pcall_catches_the_kill_only_until_the_next_line(one_thread):
    """Redis's behaviour: on the same line, the pcall's result is the kill error."""
    script = f"local ok, e = pcall(function() {LOOP} end) return {{ok and 1 or 0, e}}"
    long, c = start_busy(one_thread, script)
    with long, c:
        assert c.call("SCRIPT", "KILL") == "OK"
        # Redis's pcall gives an error table's message, not the table.
        assert long.read_reply() == [0, KILLED.encode()]
    # The script's last line: it ends with pcall's false, a nil reply. The second is a tail
    # call, which must step aside too.
    for script in [f"pcall(function() {LOOP} end)", f"local x = 1\nreturn pcall(function() {LOOP} end)"]:
        long, c = start_busy(one_thread, script)
        with long, c:
            assert c.call("SCRIPT", "KILL") == "OK"
            assert long.read_reply() is None


def test_a_killed_script_cannot_loop_on_pcall(one_thread):
    script = f"while true do pcall(function() {LOOP} end) end"
    long, c = start_busy(one_thread, script)
    with long, c:
        assert c.call("SCRIPT", "KILL") == "OK"
        assert long.read_reply() == E(f"{KILLED} script: {sha1(script)}, on @user_script:1.")


def test_function_kill_stops_a_loop_inside_pcall_on_one_thread(one_thread):
    with one_thread.client() as c:
        assert c.call("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('spin', function() "
                      f"pcall(function() {LOOP} end)\nreturn 1 end)") == b"lib"
    long = one_thread.client(timeout=30)
    long.send("FCALL", "spin", "0")
    busy = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
    deadline = time.time() + 20
    while True:
        c = one_thread.client(timeout=10)
        reply = c.call("PING")
        if reply == E(busy):
            break
        c.close()
        assert reply == "PONG" and time.time() < deadline, reply
        time.sleep(0.05)
    with long, c:
        assert c.call("SCRIPT", "KILL") == E(busy)
        assert c.call("FUNCTION", "KILL") == "OK"
        assert long.read_reply() == E(
            "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:3.")


def test_shutdown_nosave_while_a_loop_inside_pcall_is_busy(one_thread):
    long, c = start_busy(one_thread, f"pcall(function() {LOOP} end)\nreturn 1")
    c.send("SHUTDOWN", "NOSAVE")
    assert one_thread.wait_exit(20) == 0
    one_thread.expected_exit = True
    c.close()
    long.close()


# ---- what pcall and xpcall return: compared with redis-server ------------------------------

# Serializes every value a call returned, with their count, so that nil holes show.
SHOW = ("local function show(...) local t = {tostring(select('#', ...))} for i = 1, select('#', ...) do "
        "local v = select(i, ...) if type(v) == 'table' then v = 'table:' .. tostring(v.err or v.code or #v) "
        "else v = type(v) .. ':' .. tostring(v) end t[#t + 1] = v end return table.concat(t, '|') end\n")

RESULTS = [
    "return show(pcall(function(...) return ... end, 1, nil, 3, nil))",
    "return show(pcall(function() return end))",
    "return show(pcall(function() return nil end))",
    "return show(pcall(error))",
    "return show(pcall(error, 'x'))",
    "return show(pcall(error, 'x', 0))",
    "return show(pcall(error, 'x', 1))",
    "return show(pcall())",
    "local p = pcall return show(p())",
    "return show(pcall(pcall))",
    "return show(pcall(error, {err=5}))",
    "return show(pcall(error, {err='E', x=1}))",
    "local ok, e = pcall(error, {err='E'}) return {ok and 1 or 0, e}",
    "return show(xpcall(function() error({err='E'}) end, function(e) return e end))",
    "return show(pcall(function(...) return select('#', ...) end))",
    "return type(coroutine.running())",
    "return show(pcall(function() return type(coroutine.running()) end))",
    "return show(coroutine.wrap(function() local me = coroutine.running() "
    "return select(2, pcall(function() return coroutine.running() == me end)) end)())",
    "return show(pcall(function() error('x') end))",
    "return show(pcall(function() error('x', 2) end))",
    "return show(pcall(function() error('x', 0) end))",
    "local function check() error('bad', 2) end\nreturn show(pcall(function()\ncheck()\nend))",
    "return show(pcall(function() error({code=5}) end))",
    "local t = {} local ok, e = pcall(error, t) return show(ok, e == t)",
    "return show(pcall(function() local x = nil return x.y end))",
    "return show(pcall(nil))",
    "return show(pcall(42))",
    "return show(pcall(setmetatable({}, {__call = function(self, a) return a, self end}), 7))",
    "return show(pcall(pcall, error, 'x'))",
    "return show(pcall(redis.call, 'nosuchcommand'))",
    "return show(pcall(redis.call, 'set', 'k'))",
    "return show(pcall(string.rep))",
    "return show(pcall(unpack, {1, 2, 3}, 1, 300))",
    "return show(xpcall(function() error('x') end, function(e) return 'h:' .. e end))",
    "return show(xpcall(function() return 1, nil, 2 end, function(e) return e end))",
    "return show(xpcall(function() error({1, 2}) end, function(e) return type(e), 'second' end))",
    "return show(xpcall(function(...) return select('#', ...) end, function(e) return e end, 1, 2))",
    "return show(xpcall(function() error('x') end, nil))",
    "return show(xpcall(function() error('x') end, 'not a function'))",
    "return show(xpcall(function() error('x') end, function(e) error('y') end))",
    "return show(xpcall(nil, function(e) return 'h:' .. e end))",
    "return show(pcall(xpcall, function() error('x') end, function(e) return e .. '!' end))",
    "return show(pcall(coroutine.yield, 1))",
    "return show(pcall(function() coroutine.yield(1) end))",
    # the scripts' own coroutines
    "local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 end)\n"
    "return show(coroutine.resume(co, 1)) .. ' ' .. show(coroutine.resume(co, 5)) .. ' ' .. show(coroutine.resume(co))",
    "return show(pcall(function() local g = coroutine.wrap(function() coroutine.yield(1) coroutine.yield(2) end) "
    "return g() + g() end))",
    "return show(coroutine.wrap(function() return pcall(error, 'z') end)())",
    "return show(coroutine.wrap(function() return pcall(coroutine.yield, 1) end)())",
    "local co = coroutine.create(function() pcall(function() coroutine.yield(1) end) return 'end' end)\n"
    "return show(coroutine.resume(co)) .. ' ' .. coroutine.status(co)",
    "return show(pcall(coroutine.wrap(function() error('in co') end)))",
    # how deep protected calls nest before Lua runs out of C calls
    "local function f(n) local ok, r = pcall(f, n + 1) if ok then return r end return n .. ':' .. tostring(r) end "
    "return f(1)",
]

ERRORS = [
    "local ok = xpcall(function() end) return ok",
    "local x = xpcall local ok = x(function() end) return ok",
    "return coroutine.yield(1)",
]


def eval_all(port, scripts):
    out = []
    with RawClient(port) as c:
        for s in scripts:
            out.append(c.call("EVAL", s, "0"))
    return out


@needs_redis
def test_pcall_and_xpcall_return_what_redis_returns(server, redis_server):
    scripts = [SHOW + s for s in RESULTS]
    expected = eval_all(redis_server.port, scripts)
    actual = eval_all(server.port, scripts)
    diffs = [f"{s!r}\n  redis: {w!r}\n  lapse: {g!r}" for s, w, g in zip(RESULTS, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)
    assert all(isinstance(r, (bytes, list)) for r in actual), actual


@needs_redis
def test_bad_calls_fail_as_in_redis(server, redis_server):
    expected = eval_all(redis_server.port, ERRORS)
    actual = eval_all(server.port, ERRORS)
    diffs = [f"{s!r}\n  redis: {w!r}\n  lapse: {g!r}" for s, w, g in zip(ERRORS, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)
    assert all(isinstance(r, E) for r in actual), actual


def test_pcall_results_exactly(raw):
    """A few of the above spelled out, so that the expected values are in the test."""
    assert raw.call("EVAL", SHOW + RESULTS[0], "0") == b"5|boolean:true|number:1|nil:nil|number:3|nil:nil"
    assert raw.call("EVAL", SHOW + "return show(pcall(function() error('x') end))", "0") == (
        b"2|boolean:false|string:user_script:2: x")
    assert raw.call("EVAL", SHOW + "return show(pcall(function() error({code=5}) end))", "0") == (
        b"3|boolean:false|table:5|nil:nil")
    assert raw.call("EVAL", SHOW + "return show(pcall(redis.call, 'nosuchcommand'))", "0") == (
        b"2|boolean:false|string:ERR Unknown Redis command called from script")
    script = "local ok = xpcall(function() end) return ok"
    assert raw.call("EVAL", script, "0") == E(
        "ERR user_script:1: bad argument #2 to 'xpcall' (value expected) script: "
        f"{sha1(script)}, on @user_script:1.")
