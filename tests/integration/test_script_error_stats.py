"""Scripts and INFO commandstats / errorstats (issue 12), as Redis 7.0 counts them: an error a
script's command raised counts once, when the command fails (its error table is marked
ignore_error_stats_update, which scripts see); every other error in a script's reply counts,
nested in an array or not; the script counts as failed whenever its reply holds an error; a
command the script's path refuses counts as that command's rejected call. Run with
LAPSE_TARGET=redis the same table checks Redis 7.0.15.
"""
import pytest

from lapse_harness import RespError


def stats(raw):
    commands, errors = {}, {}
    for line in raw.call("INFO", "commandstats").decode().splitlines():
        if line.startswith("cmdstat_"):
            name, fields = line[len("cmdstat_"):].split(":", 1)
            values = dict(f.split("=") for f in fields.split(","))
            commands[name] = (int(values["calls"]), int(values["rejected_calls"]), int(values["failed_calls"]))
    for line in raw.call("INFO", "errorstats").decode().splitlines():
        if line.startswith("errorstat_"):
            code, count = line[len("errorstat_"):].split(":count=")
            errors[code] = int(count)
    commands.pop("config|resetstat", None)
    commands.pop("info", None)
    return commands, errors


def script(body):
    return ["EVAL", body, "1", "k"]


# (script, {command: (calls, rejected, failed)}, {error code: count})
CASES = [
    ("return redis.pcall('INCR', KEYS[1])", {"eval": (1, 0, 1), "incr": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.call('INCR', KEYS[1])", {"eval": (1, 0, 1), "incr": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.call('LPUSH', KEYS[1], 'a')", {"eval": (1, 0, 1), "lpush": (1, 0, 1)}, {"WRONGTYPE": 1}),
    ("return redis.pcall('LPUSH', KEYS[1])", {"eval": (1, 0, 1), "lpush": (0, 1, 0)}, {"ERR": 1}),
    ("redis.pcall('LPUSH', KEYS[1]) return 1", {"eval": (1, 0, 0), "lpush": (0, 1, 0)}, {"ERR": 1}),
    ("return redis.pcall('NOSUCH')", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.call('NOSUCH')", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.pcall('MULTI')", {"eval": (1, 0, 1), "multi": (0, 1, 0)}, {"ERR": 1}),
    ("return redis.pcall()", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return {1, redis.error_reply('FOO bar')}", {"eval": (1, 0, 1)}, {"FOO": 1}),
    ("return {1, redis.pcall('INCR', KEYS[1])}", {"eval": (1, 0, 1), "incr": (1, 0, 1)}, {"ERR": 1}),
    ("return {redis.error_reply('FOO a'), {redis.error_reply('BAR b')}}", {"eval": (1, 0, 1)}, {"BAR": 1, "FOO": 1}),
    ("return redis.error_reply('FOO bar')", {"eval": (1, 0, 1)}, {"FOO": 1}),
    ("local t = redis.pcall('INCR', KEYS[1]) return {err = t.err}", {"eval": (1, 0, 1), "incr": (1, 0, 1)}, {"ERR": 2}),
    ("error('boom')", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.call('GET', KEYS[1])", {"eval": (1, 0, 0), "get": (1, 0, 0)}, {}),
    ("return {redis.pcall('INCR', KEYS[1]), redis.pcall('INCR', KEYS[1])}",
     {"eval": (1, 0, 2), "incr": (2, 0, 2)}, {"ERR": 2}),
    ("return {redis.pcall('INCR', KEYS[1]), redis.error_reply('FOO x')}",
     {"eval": (1, 0, 2), "incr": (1, 0, 1)}, {"ERR": 1, "FOO": 1}),
    ("return {redis.error_reply('FOO x'), redis.error_reply('FOO y')}", {"eval": (1, 0, 1)}, {"FOO": 2}),
]


@pytest.mark.parametrize("body,commands,errors", CASES, ids=[c[0] for c in CASES])
def test_script_errors_counted_as_redis_counts_them(raw, body, commands, errors):
    raw.call("SET", "k", "v")
    assert raw.call("CONFIG", "RESETSTAT") == "OK"
    raw.call(*script(body))
    assert stats(raw) == (commands, errors)


def test_read_only_and_oom_refusals_count_as_rejected(raw):
    assert raw.call("CONFIG", "RESETSTAT") == "OK"
    reply = raw.call("EVAL_RO", "return redis.pcall('SET', 'k', 'v')", "0")
    assert reply == RespError("ERR Write commands are not allowed from read-only scripts.")
    assert stats(raw) == ({"eval_ro": (1, 0, 1), "set": (0, 1, 0)}, {"ERR": 1})
    try:
        assert raw.call("CONFIG", "SET", "maxmemory", "1") == "OK"
        assert raw.call("CONFIG", "RESETSTAT") == "OK"
        reply = raw.call("EVAL", "return redis.pcall('SET', KEYS[1], 'v')", "1", "k")
        assert reply == RespError("OOM command not allowed when used memory > 'maxmemory'.")
        commands, errors = stats(raw)
    finally:
        raw.call("CONFIG", "SET", "maxmemory", "0")
    assert (commands, errors) == ({"eval": (1, 0, 1), "set": (0, 1, 0)}, {"OOM": 1})


def test_a_script_run_again_counts_its_refusals_again(raw):
    # The second run knows its footprint and runs with an undo log, which holds the counts
    # back until the run counts (server/script_undo.h).
    assert raw.call("CONFIG", "RESETSTAT") == "OK"
    for _ in range(3):
        raw.call("EVAL", "redis.pcall('LPUSH', KEYS[1]) return redis.pcall('NOSUCH')", "1", "k")
    assert stats(raw) == ({"eval": (3, 0, 3), "lpush": (0, 3, 0)}, {"ERR": 6})


def test_error_tables_from_commands_carry_redis_marker(raw):
    raw.call("SET", "k", "v")
    listing = ("local t = redis.pcall(%s) local r = {} for k, v in pairs(t) do r[#r + 1] = k .. '=' .. tostring(v) end "
               "table.sort(r) return r")
    assert raw.call("EVAL", listing % "'INCR', KEYS[1]", "1", "k") == [
        b"err=ERR value is not an integer or out of range", b"ignore_error_stats_update=true"]
    assert raw.call("EVAL", listing % "'NOSUCH'", "0") == [
        b"err=ERR Unknown Redis command called from script", b"ignore_error_stats_update=true"]
    assert raw.call("EVAL", listing % "", "0") == [b"err=ERR Please specify at least one argument for this redis lib call"]
    assert raw.call("EVAL", listing % "'SET', {}", "0") == [
        b"err=ERR Lua redis lib command arguments must be strings or integers"]
