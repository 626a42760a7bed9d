"""Redis 7 functions (issue 12): FUNCTION LOAD/DELETE/LIST/STATS/DUMP/RESTORE/FLUSH/KILL/HELP
and FCALL / FCALL_RO, against Debian's redis-server 7.0, reply bytes compared.

Redis lists libraries and functions in its hash tables' order, which changes from run to
run; lapse sorts them by name. Scenarios that list several therefore compare decoded replies
with lists sorted (SORTED steps); the rest compare bytes.
"""
import shutil
import threading

import pytest
import redis

from conftest import running_server
from lapse_harness import RawClient, RespError as E, parse_reply

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

LIB = """#!lua name=mylib
local function set_it(keys, args)
  return redis.call('set', keys[1], args[1])
end
redis.register_function('fset', set_it)
redis.register_function{function_name='fget', callback=function(keys) return redis.call('get', keys[1]) end,
  flags={'no-writes'}, description='reads a key'}
redis.register_function{function_name='fboom', callback=function() error('boom') end}
redis.register_function{function_name='fincr', callback=function(keys) return redis.call('incr', keys[1]) end}
redis.register_function{function_name='fro', callback=function(keys) return redis.call('set', keys[1], 'x') end,
  flags={'no-writes'}}
redis.register_function{function_name='foom', callback=function(keys) return redis.call('set', keys[1], 'x') end,
  flags={'allow-oom'}}
redis.register_function{function_name='fglobals', callback=function() return {type(KEYS)} end,
  flags={'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}
redis.register_function('fargs', function(keys, args) return {#keys, #args, keys[1], args[1]} end)
redis.register_function('fpcall', function(keys) return redis.pcall('incr', keys[1]) end)
"""
ONE = "#!lua name=one\nredis.register_function{function_name='f1', callback=function() return 1 end, description='d'}"


def load(code, *options):
    return (0, "FUNCTION", "LOAD", *options, code)


def lib(name, body):
    return f"#!lua name={name}\n{body}"


SORTED = "sorted"

SCENARIOS = {
    "load_and_call": [load(LIB), (0, "FCALL", "fset", "1", "k", "v"), (0, "FCALL", "fget", "1", "k"),
                      (0, "FCALL_RO", "fget", "1", "k"), (0, "FCALL", "fargs", "2", "a", "b", "c"),
                      (0, "FCALL", "fargs", "0"), (1, "FCALL", "fget", "1", "k")],
    "fcall_errors": [load(LIB), (0, "SET", "s", "x"), (0, "FCALL", "fboom", "0"), (0, "FCALL", "fincr", "1", "s"),
                     (0, "FCALL", "fpcall", "1", "s"), (0, "FCALL", "fglobals", "0"),
                     (0, "FCALL", "nosuch", "0"), (0, "FCALL", "nosuch", "x"), (0, "FCALL", "fget", "x"),
                     (0, "FCALL", "fget", "5", "a"), (0, "FCALL", "fget", "-1"), (0, "FCALL"),
                     (0, "FCALL", "fget"), (0, "FCALL_RO", "fset", "1", "k", "v"),
                     (0, "FCALL", "fro", "1", "k"), (0, "FCALL_RO", "fro", "1", "k"), (0, "GET", "k")],
    "oom": [load(LIB), (1, "CONFIG", "SET", "maxmemory", "1"), (0, "FCALL", "fset", "1", "k", "v"),
            (0, "FCALL", "foom", "1", "k"), (0, "FCALL", "fget", "1", "k"), (0, "FCALL", "fro", "1", "k"),
            (0, "FCALL_RO", "fset", "1", "k", "v"), (0, "FCALL_RO", "fget", "1", "k"),
            (1, "CONFIG", "SET", "maxmemory", "0"), (0, "GET", "k")],
    "metadata_errors": [load("redis.register_function('f', function() return 1 end)"), load("#!lua"),
                        load("#!lua\n"), load("#!lua name=\n"), load("#!lua name=a-b\n"),
                        load("#!lua name=lib foo=bar\n"), load("#!lua name=lib x\n"), load("#!luax name=lib\n"),
                        load("#!lua name=lib name=x\n"), load("#!lua name=lib\nreturn 1"),
                        load(lib("lib", "return +")), load("#!LUA NAME=upper\nredis.register_function('u', "
                                                           "function() return 1 end)"),
                        load("#!lua  name=spaced\nredis.register_function('sp', function() return 1 end)"),
                        (0, "FCALL", "u", "0")],
    "register_errors": [load(lib("l", "redis.register_function('g-h', function() end)")),
                        load(lib("l", "redis.register_function('g', 5)")),
                        load(lib("l", "redis.register_function('g')")),
                        load(lib("l", "redis.register_function('g', function() end, 3)")),
                        load(lib("l", "redis.register_function({}, function() end)")),
                        load(lib("l", "redis.register_function('', function() end)")),
                        load(lib("l", "redis.register_function(nil, function() end)")),
                        load(lib("l", "redis.register_function{function_name='g', callback=function() end, "
                                      "flags={'no-writes', 'bad'}}")),
                        load(lib("l", "redis.register_function{function_name='g', callback=function() end, "
                                      "flags='no-writes'}")),
                        load(lib("l", "redis.register_function{function_name='g', callback=function() end, foo=1}")),
                        load(lib("l", "redis.register_function{callback=function() end}")),
                        load(lib("l", "redis.register_function{function_name='z'}")),
                        load(lib("l", "redis.register_function{function_name='z', callback=5}")),
                        load(lib("l", "redis.register_function{function_name='z', callback=function() end, "
                                      "flags={5}}")),
                        load(lib("l", "redis.register_function{[1]=2}")),
                        load(lib("l", "redis.register_function('g', function() end)\n"
                                      "redis.register_function('g', function() end)")),
                        (0, "FUNCTION", "LIST")],
    "load_environment": [load(lib("l", "redis.call('set', 'x', 'y')")), load(lib("l", "error('boom')")),
                         load(lib("l", "x = 5")), load(lib("l", "local y = z")),
                         load(lib("l", "local s = redis.setresp")),
                         load(lib("l", "redis.log(redis.LOG_WARNING, 'loading')\n"
                                       "redis.register_function('lg', function() return redis.LOG_NOTICE end)")),
                         (0, "FCALL", "lg", "0"), (0, "GET", "x"),
                         # top-level code gets 500 ms, then Redis's timeout error
                         load(lib("slow", "while true do end")), (0, "FUNCTION", "LIST", "LIBRARYNAME", "slow")],
    "registering_accepts_numbers": [load(lib("n", "redis.register_function(5, function() return 'five' end)")),
                                    load(lib("m", "redis.register_function{function_name='d', callback=function() "
                                                  "return 1 end, description=5}")),
                                    (0, "FCALL", "5", "0"), (0, "FUNCTION", "LIST", "LIBRARYNAME", "m")],
    "collisions_and_replace": [load(ONE), load(ONE), load(lib("two", "redis.register_function('f1', function() "
                                                                      "return 2 end)")),
                               load(lib("one", "redis.register_function('f1', function() return 3 end)"), "REPLACE"),
                               (0, "FCALL", "f1", "0"), load(ONE, "BAD"), load(ONE, "REPLACE", "REPLACE"),
                               (0, "FUNCTION", "LIST")],
    "delete_and_flush": [load(ONE), (0, "FUNCTION", "DELETE", "nosuch"), (0, "FUNCTION", "DELETE", "one"),
                         (0, "FCALL", "f1", "0"), (0, "FUNCTION", "LIST"), load(ONE),
                         (0, "FUNCTION", "FLUSH", "bad"), (0, "FUNCTION", "FLUSH", "SYNC", "x"),
                         (0, "FUNCTION", "FLUSH", "SYNC"), (0, "FUNCTION", "LIST"),
                         load(ONE), (0, "FUNCTION", "FLUSH", "ASYNC"), (0, "FUNCTION", "FLUSH"),
                         (0, "FUNCTION", "DELETE"), (0, "FUNCTION", "DELETE", "a", "b")],
    "list_options": [load(ONE), (0, "FUNCTION", "LIST", "WITHCODE"), (0, "FUNCTION", "LIST", "LIBRARYNAME", "o*"),
                     (0, "FUNCTION", "LIST", "libraryname", "O*"), (0, "FUNCTION", "LIST", "LIBRARYNAME", "x*"),
                     (0, "FUNCTION", "LIST", "LIBRARYNAME"), (0, "FUNCTION", "LIST", "FOO"),
                     (0, "FUNCTION", "LIST", "WITHCODE", "WITHCODE"),
                     (0, "FUNCTION", "LIST", "LIBRARYNAME", "x", "LIBRARYNAME", "y"),
                     (0, "FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "one")],
    "list_flags_and_descriptions": [load(lib("flags", "redis.register_function{function_name='ff', "
                                                      "callback=function() end, flags={'allow-stale', 'no-writes', "
                                                      "'no-cluster', 'allow-oom', 'allow-cross-slot-keys'}}")),
                                    (0, "FUNCTION", "LIST")],
    "list_several": [load(LIB), load(ONE), (SORTED, "FUNCTION", "LIST"), (SORTED, "FUNCTION", "LIST", "WITHCODE")],
    "stats_kill_help": [(0, "FUNCTION", "STATS"), load(LIB), load(ONE), (0, "FUNCTION", "STATS"),
                        (0, "FUNCTION", "KILL"), (0, "FUNCTION", "HELP"), (0, "FUNCTION", "STATS", "x"),
                        (0, "FUNCTION", "DUMP", "x"), (0, "FUNCTION", "NOSUCH"), (0, "FUNCTION")],
    "restore_errors": [(0, "FUNCTION", "RESTORE"), (0, "FUNCTION", "RESTORE", "garbage"),
                       (0, "FUNCTION", "RESTORE", "x" * 20, "BAD"), (0, "FUNCTION", "RESTORE", "x" * 20, "APPEND", "x")],
    "resp3": [(0, "HELLO", "3"), load(LIB), load(ONE), (0, "FUNCTION", "LIST", "LIBRARYNAME", "one"),
              (0, "FUNCTION", "STATS"), (0, "FCALL", "fargs", "1", "a", "b")],
    "with_transactions": [load(LIB), (0, "MULTI"), (0, "FCALL", "fset", "1", "k", "1"),
                          (0, "FCALL", "fincr", "1", "k"), (0, "EXEC"), (0, "WATCH", "k"),
                          (1, "FCALL", "fset", "1", "k", "2"), (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    # A function's redis library: acl_check_cmd and set_repl, no replicate_commands or debugger
    "function_api": [load(lib("api", "redis.register_function('api', function() local t = {} "
                                     "for k in pairs(redis) do t[#t + 1] = k end table.sort(t) return t end)\n"
                                     "redis.register_function('check', function(keys) "
                                     "return {redis.acl_check_cmd('get', keys[1]), type(redis.breakpoint), "
                                     "type(redis.debug), type(redis.replicate_commands)} end)\n"
                                     "redis.register_function('repl', function() return redis.set_repl(7) end)")),
                     (0, "FCALL", "api", "0"), (0, "FCALL", "check", "1", "k"), (0, "FCALL", "repl", "0")],
    "not_from_scripts": [load(ONE), (0, "EVAL", "return redis.call('fcall', 'f1', '0')", "0"),
                         (0, "EVAL", "return redis.call('function', 'stats')", "0")],
}


def sort_deep(value):
    if isinstance(value, list):
        items = [sort_deep(v) for v in value]
        return sorted(items, key=repr)
    return value


def run_scenario(port, steps, clients=2):
    conns = [RawClient(port) for _ in range(clients)]
    try:
        assert conns[0].call("FLUSHALL") == "OK"
        assert conns[0].call("FUNCTION", "FLUSH") == "OK"
        out = []
        for step in steps:
            who = 0 if step[0] == SORTED else step[0]
            reply = conns[who].call_raw(*step[1:])
            if step[1] == "HELLO":
                reply = reply[:1]  # names the server's version and the client id
            elif step[0] == SORTED:
                reply = sort_deep(parse_reply(reply)[0])
            out.append(reply)
        return out
    finally:
        for c in conns:
            c.close()


@pytest.fixture(scope="module")
def redis_server():
    with running_server(kind="redis") as srv:
        yield srv


@needs_redis
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_replies_as_redis(name, server, redis_server):
    steps = SCENARIOS[name]
    expected = run_scenario(redis_server.port, steps)
    actual = run_scenario(server.port, steps)
    diffs = [f"{s}\n      redis: {w!r}\n      lapse: {g!r}" for s, w, g in zip(steps, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)


# Long and repetitive, so that Redis compresses it (LZF) in its DUMP payload.
BIG = lib("big", "\n".join(f"redis.register_function('big{i}', function(keys, args) "
                           f"return redis.call('get', keys[1]) end)" for i in range(40)))


@needs_redis
def test_dump_and_restore_across_servers(server, redis_server):
    clients = {name: redis.Redis(port=srv.port) for name, srv in (("lapse", server), ("redis", redis_server))}
    for c in clients.values():
        c.function_flush()
        c.function_load(BIG)
        c.function_load(ONE)
        c.set("k", "v")
    dumps = {name: c.function_dump() for name, c in clients.items()}
    for source, target in (("redis", "lapse"), ("lapse", "redis"), ("lapse", "lapse")):
        c = clients[target]
        c.function_flush()
        assert c.function_restore(dumps[source]) is True
        assert c.fcall("big39", 1, "k") == b"v"
        assert c.fcall("f1", 0) == 1
        with pytest.raises(redis.ResponseError, match="^Library (big|one) already exists$"):
            c.function_restore(dumps[source])
        assert c.function_restore(dumps[source], "REPLACE") is True
        assert c.function_restore(dumps[source], "FLUSH") is True
        assert len(c.function_list()) == 2
    for c in clients.values():
        c.function_flush()
        c.function_load(lib("other", "redis.register_function('f1', function() return 2 end)"))
        with pytest.raises(redis.ResponseError, match="^Function f1 already exists$"):
            c.function_restore(dumps["redis"], "REPLACE")
        assert c.fcall("f1", 0) == 2
        c.close()


def test_functions_load_once_and_run_on_every_thread(start_server):
    srv = start_server(options={"threads": 4})
    with srv.client() as c:
        assert c.call("FUNCTION", "LOAD", ONE) == b"one"
    for _ in range(8):  # connections land on different threads
        with srv.client() as c:
            assert c.call("FCALL", "f1", "0") == 1
    with srv.client() as c:
        assert c.call("FUNCTION", "LOAD", "REPLACE", lib("one", "redis.register_function('f1', function() "
                                                                "return 2 end)")) == b"one"
    for _ in range(8):
        with srv.client() as c:
            assert c.call("FCALL", "f1", "0") == 2
    with srv.client() as c:
        assert c.call("FUNCTION", "DELETE", "one") == "OK"
    for _ in range(4):
        with srv.client() as c:
            assert c.call("FCALL", "f1", "0") == E("ERR Function not found")


def test_redis_py_functions(r):
    assert r.function_load(LIB) == "mylib"
    assert r.fcall("fset", 1, "k", "v") == "OK"
    assert r.fcall_ro("fget", 1, "k") == "v"
    with pytest.raises(redis.ResponseError, match="write flag"):
        r.fcall_ro("fset", 1, "k", "v")
    listed = r.function_list(library="my*")
    assert listed[0][1] == "mylib"
    stats = r.function_stats()
    assert stats[0] == "running_script" and stats[1] is None


@pytest.mark.parametrize("threads", [4])
def test_functions_are_atomic_across_shards(threads, start_server):
    srv = start_server(options={"threads": threads})
    keys = [f"acct:{i}" for i in range(8)]
    with srv.client() as c:
        c.call("MSET", *[x for k in keys for x in (k, "100")])
        c.call("FUNCTION", "LOAD", lib("bank", """
redis.register_function('transfer', function(keys, args)
  local a = tonumber(redis.call('get', keys[1]))
  local b = tonumber(redis.call('get', keys[2]))
  redis.call('set', keys[1], a - args[1])
  redis.call('set', keys[2], b + args[1])
  return 1
end)"""))
    stop = threading.Event()
    bad = []

    def writer(seed):
        with srv.client() as c:
            i = seed
            while not stop.is_set():
                a, b = keys[i % 8], keys[(i * 5 + 3) % 8]
                if a != b:
                    assert c.call("FCALL", "transfer", "2", a, b, str(i % 7 + 1)) == 1
                i += 1

    def reader():
        with srv.client() as c:
            for _ in range(400):
                total = sum(int(v) for v in c.call("MGET", *keys))
                if total != 800:
                    bad.append(total)

    writers = [threading.Thread(target=writer, args=(s,)) for s in range(3)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in writers + readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    for t in writers:
        t.join()
    assert bad == []


@pytest.mark.lapse_only
def test_lastcharge_after_fcall_is_the_sum(raw):
    raw.call("FUNCTION", "LOAD", LIB)
    raw.call("SET", "k", "v" * 3000)
    raw.call("SET", "k", "v" * 3000)
    set_charge = float(raw.call("LASTCHARGE"))
    raw.call("GET", "k")
    get_charge = float(raw.call("LASTCHARGE"))
    raw.call("FCALL", "fset", "1", "k", "v" * 3000)
    assert float(raw.call("LASTCHARGE")) == pytest.approx(set_charge)
    raw.call("FCALL", "fget", "1", "k")
    assert float(raw.call("LASTCHARGE")) == pytest.approx(get_charge)
