"""MULTI / EXEC / DISCARD / WATCH / UNWATCH (issue 12), against Debian's redis-server 7.0.

Each scenario is a list of steps run over several connections; every reply's bytes are
compared with Redis's. A step is (client, command...), or ("sleep", ms) where a watched key
must expire. Scenarios that depend on expiry switch active expiry off first (DEBUG
SET-ACTIVE-EXPIRE 0, which both servers have), so that an expired key stays stored until a
read meets it, and wait several times the TTL, so that timing never decides a reply.
"""
import shutil
import socket
import threading
import time

import pytest
import redis

from conftest import running_server
from lapse_harness import RawClient, encode_command

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

TTL_MS = "50"
WAIT_MS = 200

NO_EXPIRY = (0, "DEBUG", "SET-ACTIVE-EXPIRE", "0")


def touched_by(setup, write):
    """WATCH k; another client runs `write`; then EXEC says whether Redis counted a change."""
    return [*[(1, *c) for c in setup], (0, "WATCH", "k"), (1, *write), (0, "MULTI"), (0, "GET", "k"), (0, "EXEC")]


STRING = [("SET", "k", "v")]
VOLATILE = [("SET", "k", "v", "EX", "1000")]
NUMBER = [("SET", "k", "5")]

SCENARIOS = {
    "basic": [(0, "MULTI"), (0, "SET", "a", "1"), (0, "GET", "a"), (0, "INCR", "a"), (0, "MGET", "a", "b"),
              (0, "EXEC"), (0, "GET", "a")],
    "empty": [(0, "MULTI"), (0, "EXEC")],
    "discard": [(0, "MULTI"), (0, "SET", "a", "1"), (0, "DISCARD"), (0, "GET", "a"), (0, "DISCARD"),
                (0, "EXEC")],
    "without_multi": [(0, "EXEC"), (0, "DISCARD"), (0, "EXEC", "x")],
    "nested_multi_and_watch_inside": [(0, "MULTI"), (0, "MULTI"), (0, "WATCH", "a"), (0, "SET", "a", "1"),
                                      (0, "EXEC"), (0, "GET", "a")],
    "runtime_errors_do_not_abort": [(0, "SET", "s", "x"), (0, "MULTI"), (0, "INCR", "s"), (0, "SET", "a", "1"),
                                    (0, "INCRBY", "a", "x"), (0, "INCR", "a"), (0, "EXEC"), (0, "GET", "a")],
    "unknown_command_aborts": [(0, "MULTI"), (0, "SET", "a", "1"), (0, "NOSUCH", "x"), (0, "SET", "b", "2"),
                               (0, "EXEC"), (0, "MGET", "a", "b"), (0, "EXEC")],
    "wrong_arity_aborts": [(0, "MULTI"), (0, "SET", "a"), (0, "SET", "b", "2"), (0, "EXEC"), (0, "GET", "b")],
    "unknown_subcommand_aborts": [(0, "MULTI"), (0, "CONFIG", "NOSUCH"), (0, "EXEC")],
    "exec_with_arguments_aborts": [(0, "MULTI"), (0, "SET", "a", "1"), (0, "EXEC", "x"), (0, "GET", "a"),
                                   (0, "EXEC")],
    "refused_exec_unwatches": [(0, "WATCH", "k"), (1, "SET", "k", "1"), (0, "EXEC", "x"), (0, "MULTI"),
                               (0, "EXEC")],
    "discard_with_arguments": [(0, "MULTI"), (0, "DISCARD", "x"), (0, "EXEC")],
    "select_inside": [(0, "SET", "a", "db0"), (0, "MULTI"), (0, "SELECT", "1"), (0, "SET", "a", "db1"),
                      (0, "GET", "a"), (0, "EXEC"), (0, "GET", "a"), (0, "SELECT", "0"), (0, "GET", "a")],
    "flush_and_keys_inside": [(0, "MSET", "a", "1", "b", "2"), (0, "MULTI"), (0, "DBSIZE"), (0, "KEYS", "a"),
                              (0, "FLUSHDB"), (0, "DBSIZE"), (0, "EXEC")],
    "swapdb_inside": [(0, "SET", "a", "x"), (0, "MULTI"), (0, "SWAPDB", "0", "1"), (0, "GET", "a"),
                      (0, "EXEC"), (0, "SELECT", "1"), (0, "GET", "a")],
    "resp3": [(0, "HELLO", "3"), (0, "MULTI"), (0, "SET", "a", "1"), (0, "GET", "nosuch"),
              (0, "INCRBYFLOAT", "f", "1.5"), (0, "EXEC"), (0, "WATCH", "a"), (1, "SET", "a", "2"),
              (0, "MULTI"), (0, "GET", "a"), (0, "EXEC")],
    # WATCH
    "watch_other_client_write": [(0, "SET", "k", "1"), (0, "WATCH", "k"), (1, "SET", "k", "2"), (0, "MULTI"),
                                 (0, "SET", "k", "3"), (0, "EXEC"), (0, "GET", "k")],
    "watch_own_write_before_multi": [(0, "WATCH", "k"), (0, "SET", "k", "1"), (0, "MULTI"), (0, "GET", "k"),
                                     (0, "EXEC")],
    "watch_unchanged": [(0, "SET", "k", "1"), (0, "WATCH", "k", "other"), (1, "GET", "k"), (0, "MULTI"),
                        (0, "INCR", "k"), (0, "EXEC")],
    "watch_missing_key_created": [(0, "WATCH", "k"), (1, "SET", "k", "1"), (0, "MULTI"), (0, "PING"),
                                  (0, "EXEC")],
    "watch_missing_key_stays_missing": [(0, "WATCH", "k"), (1, "DEL", "k"), (0, "MULTI"), (0, "PING"),
                                        (0, "EXEC")],
    "watch_twice_and_in_two_dbs": [(0, "WATCH", "k", "k"), (0, "SELECT", "1"), (0, "WATCH", "k"),
                                   (1, "SELECT", "1"), (1, "SET", "k", "1"), (0, "MULTI"), (0, "PING"),
                                   (0, "EXEC")],
    "watch_other_db_untouched": [(0, "WATCH", "k"), (1, "SELECT", "1"), (1, "SET", "k", "1"), (0, "MULTI"),
                                 (0, "PING"), (0, "EXEC")],
    "unwatch": [(0, "WATCH", "k"), (1, "SET", "k", "1"), (0, "UNWATCH"), (0, "MULTI"), (0, "GET", "k"),
                (0, "EXEC")],
    "unwatch_inside_multi": [(0, "WATCH", "k"), (0, "MULTI"), (0, "UNWATCH"), (1, "SET", "k", "1"),
                             (0, "EXEC")],
    "discard_unwatches": [(0, "WATCH", "k"), (0, "MULTI"), (0, "DISCARD"), (1, "SET", "k", "1"),
                          (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "exec_unwatches": [(0, "WATCH", "k"), (0, "MULTI"), (0, "EXEC"), (1, "SET", "k", "1"), (0, "MULTI"),
                       (0, "PING"), (0, "EXEC")],
    "watch_after_dirty_is_ok": [(0, "WATCH", "k"), (1, "SET", "k", "1"), (0, "WATCH", "j"), (0, "MULTI"),
                                (0, "PING"), (0, "EXEC")],
    "aborted_by_both": [(0, "WATCH", "k"), (1, "SET", "k", "1"), (0, "MULTI"), (0, "NOSUCH"), (0, "EXEC")],
    # which writes count as a change
    "touch_set_nx_fails": touched_by(STRING, ("SET", "k", "w", "NX")),
    "touch_set_xx": touched_by(STRING, ("SET", "k", "w", "XX")),
    "touch_setnx_fails": touched_by(STRING, ("SETNX", "k", "w")),
    "touch_del": touched_by(STRING, ("DEL", "k")),
    "touch_del_other": touched_by(STRING, ("DEL", "j")),
    "touch_unlink": touched_by(STRING, ("UNLINK", "k")),
    "touch_getdel": touched_by(STRING, ("GETDEL", "k")),
    "touch_getex_no_option": touched_by(STRING, ("GETEX", "k")),
    "touch_getex_persist_not_volatile": touched_by(STRING, ("GETEX", "k", "PERSIST")),
    "touch_getex_persist_volatile": touched_by(VOLATILE, ("GETEX", "k", "PERSIST")),
    "touch_getex_ex": touched_by(STRING, ("GETEX", "k", "EX", "100")),
    "touch_expire": touched_by(STRING, ("EXPIRE", "k", "100")),
    "touch_expire_nx_refused": touched_by(VOLATILE, ("EXPIRE", "k", "100", "NX")),
    "touch_expire_same": touched_by([("SET", "k", "v", "PXAT", "4102444800123")],
                                    ("PEXPIREAT", "k", "4102444800123")),
    "touch_expire_past": touched_by(STRING, ("EXPIRE", "k", "-1")),
    "touch_persist_not_volatile": touched_by(STRING, ("PERSIST", "k")),
    "touch_persist_volatile": touched_by(VOLATILE, ("PERSIST", "k")),
    "touch_append": touched_by(STRING, ("APPEND", "k", "x")),
    "touch_setrange": touched_by(STRING, ("SETRANGE", "k", "1", "x")),
    "touch_setrange_empty": touched_by(STRING, ("SETRANGE", "k", "1", "")),
    "touch_incr": touched_by(NUMBER, ("INCR", "k")),
    "touch_incr_fails": touched_by(STRING, ("INCR", "k")),
    "touch_incrbyfloat": touched_by(NUMBER, ("INCRBYFLOAT", "k", "1.5")),
    "touch_getset": touched_by(STRING, ("GETSET", "k", "w")),
    "touch_mset": touched_by(STRING, ("MSET", "j", "1", "k", "2")),
    "touch_msetnx_fails": touched_by(STRING, ("MSETNX", "j", "1", "k", "2")),
    "touch_rename_from": touched_by(STRING, ("RENAME", "k", "j")),
    "touch_rename_to": touched_by([("SET", "j", "v")], ("RENAME", "j", "k")),
    "touch_rename_same": touched_by(STRING, ("RENAME", "k", "k")),
    "touch_smove_into_a_set_with_the_member": touched_by([("SADD", "j", "a"), ("SADD", "k", "a")],
                                                         ("SMOVE", "j", "k", "a")),
    "touch_smove_into_a_set_without_it": touched_by([("SADD", "j", "a"), ("SADD", "k", "b")], ("SMOVE", "j", "k", "a")),
    "touch_xsetid": touched_by([("XADD", "k", "1-1", "f", "v")], ("XSETID", "k", "5-0")),
    "touch_xgroup_destroy": touched_by([("XADD", "k", "1-1", "f", "v"), ("XGROUP", "CREATE", "k", "g", "0")],
                                       ("XGROUP", "DESTROY", "k", "g")),
    "touch_xgroup_create": touched_by([("XADD", "k", "1-1", "f", "v")], ("XGROUP", "CREATE", "k", "g", "0")),
    "touch_xreadgroup": touched_by([("XADD", "k", "1-1", "f", "v"), ("XGROUP", "CREATE", "k", "g", "0")],
                                   ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">")),
    "touch_renamenx_fails": touched_by(STRING + [("SET", "j", "v")], ("RENAMENX", "j", "k")),
    "touch_copy_to": touched_by([("SET", "j", "v")], ("COPY", "j", "k")),
    "touch_copy_from": touched_by(STRING, ("COPY", "k", "j")),
    "touch_copy_refused": touched_by(STRING + [("SET", "j", "v")], ("COPY", "j", "k")),
    "touch_move": touched_by(STRING, ("MOVE", "k", "1")),
    "touch_move_refused": touched_by(STRING, ("MOVE", "k", "0")),
    "touch_flushdb": touched_by(STRING, ("FLUSHDB",)),
    "touch_flushdb_missing": touched_by([("SET", "j", "v")], ("FLUSHDB",)),
    "touch_flushall": touched_by(STRING, ("FLUSHALL",)),
    "touch_flushall_async": touched_by(STRING, ("FLUSHALL", "ASYNC")),
    "touch_flushdb_other_db": [(1, "SET", "k", "v"), (0, "WATCH", "k"), (1, "SELECT", "1"), (1, "FLUSHDB"),
                               (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "touch_swapdb_present": touched_by(STRING, ("SWAPDB", "0", "1")),
    "touch_swapdb_comes_in": [(1, "SELECT", "1"), (1, "SET", "k", "v"), (0, "WATCH", "k"),
                              (1, "SWAPDB", "0", "1"), (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "touch_swapdb_neither": touched_by([("SET", "j", "v")], ("SWAPDB", "0", "1")),
    "touch_swapdb_same_db": touched_by(STRING, ("SWAPDB", "0", "0")),
    # expiry
    "expires_after_watch": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS), (0, "WATCH", "k"), ("sleep", WAIT_MS),
                            (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "expires_after_watch_and_is_read": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS), (0, "WATCH", "k"),
                                        ("sleep", WAIT_MS), (1, "GET", "k"), (0, "MULTI"), (0, "PING"),
                                        (0, "EXEC")],
    "expired_before_watch": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS), ("sleep", WAIT_MS),
                             (0, "WATCH", "k"), (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "expired_before_watch_then_read": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS), ("sleep", WAIT_MS),
                                       (0, "WATCH", "k"), (1, "GET", "k"), (0, "MULTI"), (0, "PING"),
                                       (0, "EXEC")],
    "expired_before_watch_then_set": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS), ("sleep", WAIT_MS),
                                      (0, "WATCH", "k"), (1, "SET", "k", "w"), (0, "MULTI"), (0, "PING"),
                                      (0, "EXEC")],
    "expired_before_watch_then_read_then_set": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS),
                                                ("sleep", WAIT_MS), (0, "WATCH", "k"), (1, "GET", "k"),
                                                (1, "SET", "k", "w"), (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "expired_before_watch_then_flushdb": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS), ("sleep", WAIT_MS),
                                          (0, "WATCH", "k"), (1, "FLUSHDB"), (0, "MULTI"), (0, "PING"),
                                          (0, "EXEC")],
    "expired_before_watch_swapped_with_expired": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS),
                                                  (1, "SELECT", "1"), (1, "SET", "k", "v", "PX", TTL_MS),
                                                  ("sleep", WAIT_MS), (0, "WATCH", "k"), (1, "SWAPDB", "0", "1"),
                                                  (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "expired_before_watch_swapped_with_live": [NO_EXPIRY, (0, "SET", "k", "v", "PX", TTL_MS),
                                               (1, "SELECT", "1"), (1, "SET", "k", "w"), ("sleep", WAIT_MS),
                                               (0, "WATCH", "k"), (1, "SWAPDB", "0", "1"), (0, "MULTI"),
                                               (0, "PING"), (0, "EXEC")],
    "missing_swapped_with_expired": [NO_EXPIRY, (1, "SELECT", "1"), (1, "SET", "k", "v", "PX", TTL_MS),
                                     ("sleep", WAIT_MS), (0, "WATCH", "k"), (1, "SWAPDB", "0", "1"),
                                     (0, "MULTI"), (0, "PING"), (0, "EXEC")],
    "missing_swapped_with_expired_then_read": [NO_EXPIRY, (1, "SELECT", "1"), (1, "SET", "k", "v", "PX", TTL_MS),
                                               ("sleep", WAIT_MS), (0, "WATCH", "k"), (1, "SWAPDB", "0", "1"),
                                               (1, "SELECT", "0"), (1, "GET", "k"), (0, "MULTI"), (0, "PING"),
                                               (0, "EXEC")],
    # maxmemory: queuing is refused over it, and EXEC when a queued command may grow memory
    "oom_exec_aborts": [(0, "MULTI"), (0, "SET", "a", "1"), (1, "CONFIG", "SET", "maxmemory", "1"), (0, "EXEC"),
                        (1, "CONFIG", "SET", "maxmemory", "0"), (0, "GET", "a")],
    "oom_read_only_exec_runs": [(0, "MULTI"), (0, "GET", "a"), (1, "CONFIG", "SET", "maxmemory", "1"),
                                (0, "EXEC"), (1, "CONFIG", "SET", "maxmemory", "0")],
    "oom_queuing_refused": [(1, "CONFIG", "SET", "maxmemory", "1"), (0, "MULTI"), (0, "GET", "a"),
                            (0, "DISCARD"), (1, "CONFIG", "SET", "maxmemory", "0")],
    "oom_queuing_dooms": [(0, "MULTI"), (1, "CONFIG", "SET", "maxmemory", "1"), (0, "GET", "a"),
                          (1, "CONFIG", "SET", "maxmemory", "0"), (0, "EXEC")],
}


def run_scenario(port, steps, clients=3):
    conns = [RawClient(port) for _ in range(clients)]
    try:
        assert conns[0].call("FLUSHALL") == "OK"
        out = []
        for step in steps:
            if step[0] == "sleep":
                time.sleep(step[1] / 1000)
                continue
            reply = conns[step[0]].call_raw(*step[1:])
            # HELLO names the server's version and the client id: compare only its type.
            out.append(reply[:1] if step[1] == "HELLO" else reply)
        return out
    finally:
        for c in conns:
            try:
                c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
            except Exception:
                pass
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
    shown = [s for s in steps if s[0] != "sleep"]
    diffs = [f"{s}\n      redis: {w!r}\n      lapse: {g!r}" for s, w, g in zip(shown, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)


@needs_redis
def test_multi_inside_one_pipeline(server, redis_server):
    commands = [("MULTI",), ("SET", "a", "1"), ("NOSUCH",), ("GET", "a"), ("EXEC",), ("MULTI",), ("INCR", "a"),
                ("INCR", "a"), ("EXEC",), ("GET", "a")]
    payload = b"".join(encode_command(*c) for c in commands)
    replies = []
    for srv in (redis_server, server):
        with RawClient(srv.port) as c:
            c.call("FLUSHALL")
            c.send_raw(payload)
            replies.append([c.read_reply_raw() for _ in commands])
    assert replies[1] == replies[0]


def client_list_fields(observer, client_id):
    line = observer.call("CLIENT", "LIST", "ID", str(client_id)).decode()
    fields = dict(f.split("=", 1) for f in line.split())
    return fields["flags"], fields["multi"]


def test_client_list_shows_multi_and_dirty(server, raw, raw2):
    own_id = raw.call("CLIENT", "ID")
    assert client_list_fields(raw2, own_id) == ("N", "-1")
    raw.call("WATCH", "k")
    raw2.call("SET", "k", "1")
    assert client_list_fields(raw2, own_id) == ("d", "-1")
    assert raw.call("MULTI") == "OK"
    assert raw.call("SET", "a", "1") == "QUEUED"
    # A transaction already doomed queues nothing, though it answers QUEUED (Redis 7.0).
    assert client_list_fields(raw2, own_id) == ("xd", "0")
    assert raw.call("EXEC") is None
    assert raw.call("MULTI") == "OK"
    assert raw.call("SET", "a", "1") == "QUEUED"
    assert raw.call("CLIENT", "LIST", "ID", str(own_id)) == "QUEUED"
    # Inside EXEC the client is still in MULTI with its queue counted, as in Redis.
    ok, line = raw.call("EXEC")
    fields = dict(f.split("=", 1) for f in line.decode().split())
    assert (ok, fields["flags"], fields["multi"], fields["cmd"]) == ("OK", "x", "2", "exec")
    assert client_list_fields(raw2, own_id) == ("N", "-1")


def test_disconnect_withdraws_watches(server, clean):
    # A client that watched keys and went away must leave nothing behind that a write trips on.
    for _ in range(50):
        with clean.client() as c:
            c.call("WATCH", "k", "j")
            c.call("MULTI")
            c.call("SET", "k", "1")
    with clean.client() as c:
        assert c.call("SET", "k", "2") == "OK"
        assert c.call("SET", "j", "2") == "OK"
        assert c.call("GET", "k") == b"2"


@pytest.mark.parametrize("threads", [4])
def test_cross_shard_exec_is_atomic(threads, start_server):
    """Writers move a total between 8 keys (spread over the shards) in MULTI/EXEC; readers
    MGET all 8 and must always see the same total. A reader that saw part of an EXEC would see
    another sum."""
    srv = start_server(options={"threads": threads})
    keys = [f"acct:{i}" for i in range(8)]
    with srv.client() as c:
        c.call("MSET", *[x for k in keys for x in (k, "100")])
    stop = time.monotonic() + 3.0
    errors = []

    def writer(seed):
        i = seed
        with srv.client() as c:
            while time.monotonic() < stop:
                a, b = keys[i % 8], keys[(i * 3 + 1) % 8]
                i += 1
                if a == b:
                    continue
                c.pipeline([("MULTI",), ("DECRBY", a, "7"), ("INCRBY", b, "7"), ("EXEC",)])

    def reader():
        with srv.client() as c:
            while time.monotonic() < stop:
                values = c.call("MGET", *keys)
                total = sum(int(v) for v in values)
                if total != 800:
                    errors.append(total)
                    return

    threads_ = [threading.Thread(target=writer, args=(s,)) for s in range(3)]
    threads_ += [threading.Thread(target=reader) for _ in range(3)]
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    assert not errors, f"a reader saw a partial EXEC: totals {errors}"
    with srv.client() as c:
        assert sum(int(v) for v in c.call("MGET", *keys)) == 800


# ---- redis-py, as applications use it ----

def test_redis_py_pipeline_is_transactional(r):
    pipe = r.pipeline()  # transaction=True by default: MULTI/EXEC
    pipe.set("a", "1").incr("a").get("a").mget("a", "missing")
    assert pipe.execute() == [True, 2, "2", ["2", None]]


def test_redis_py_pipeline_runtime_error(r):
    r.set("s", "x")
    pipe = r.pipeline()
    pipe.set("a", "1").incr("s").incr("a")
    with pytest.raises(redis.ResponseError):
        pipe.execute()
    assert r.get("a") == "2"
    pipe.set("b", "1").incr("s")
    ok, error = pipe.execute(raise_on_error=False)
    assert ok is True and isinstance(error, redis.ResponseError)


def test_redis_py_transaction_retries_on_watch(r, clean):
    r.set("counter", "0")
    other = redis.Redis(host="127.0.0.1", port=clean.port, decode_responses=True)
    attempts = []

    def bump(pipe):
        value = int(pipe.get("counter"))
        attempts.append(value)
        if len(attempts) == 1:
            other.incr("counter")  # a concurrent change: the first EXEC must fail
        pipe.multi()
        pipe.set("counter", value + 10)

    r.transaction(bump, "counter")
    assert len(attempts) == 2
    assert r.get("counter") == "11"
    other.close()


def test_redis_py_watch_error(r, clean):
    other = redis.Redis(host="127.0.0.1", port=clean.port, decode_responses=True)
    with r.pipeline() as pipe:
        pipe.watch("k")
        other.set("k", "changed")
        pipe.multi()
        pipe.set("k", "mine")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get("k") == "changed"
    other.close()


def test_redis_py_execabort(r):
    pipe = r.pipeline()
    pipe.set("a", "1")
    pipe.execute_command("NOSUCHCOMMAND")
    with pytest.raises(redis.ResponseError):
        pipe.execute()
    assert r.get("a") is None


# ---- items in transactions, and what EXEC costs ----

@pytest.mark.lapse_only
def test_exec_over_items_is_one_batch(raw, raw2):
    """An EXEC of item commands is lapse's transactional batch: all of it or, with a
    watched key changed, none of it."""
    raw.call("SET", "version", "1")
    raw.call("WATCH", "version")
    raw.call("MULTI")
    for item in ("a", "b", "c"):
        assert raw.call("IPUT", "orders", item, '{"qty":1}') == "QUEUED"
    raw2.call("INCR", "version")
    assert raw.call("EXEC") is None
    assert raw.call("ICOUNT", "orders") == 0
    raw.call("MULTI")
    for item in ("a", "b", "c"):
        raw.call("IPUT", "orders", item, '{"qty":1}')
    raw.call("IGET", "orders", "b")
    raw.call("IDEL", "orders", "c")
    replies = raw.call("EXEC")
    assert len(replies) == 5 and all(isinstance(etag, bytes) for etag in replies[:3])
    assert b'"id":"b"' in replies[3] and replies[4] == 1
    assert raw.call("ICOUNT", "orders") == 2


@pytest.mark.lapse_only
def test_lastcharge_after_exec_is_the_sum(raw):
    commands = [("IPUT", "c", "x", '{"n":1}'), ("SET", "k", "v" * 3000), ("GET", "k"), ("IGET", "c", "x")]
    for cmd in commands:  # so that the runs measured below write the same way (replace, not create)
        raw.call(*cmd)
    charges = []
    for cmd in commands:
        raw.call(*cmd)
        charges.append(float(raw.call("LASTCHARGE")))
    raw.call("MULTI")
    for cmd in commands:
        raw.call(*cmd)
    raw.call("EXEC")
    assert float(raw.call("LASTCHARGE")) == pytest.approx(sum(charges))
