"""Containers belong to a database (issue 15), against the real server over TCP.

The rule (README, "Containers belong to a database"): a container lives in the database that
was selected when it was created, as a Cosmos DB container lives in its database. SELECT
chooses which containers a connection sees; whatever acts on a whole database acts on its
containers too (FLUSHDB drops them, FLUSHALL drops every database's, SWAPDB swaps them with the
keys); whatever acts on one key acts on keys only (MOVE, DEL, KEYS, SCAN, DBSIZE, INFO
keyspace), and CMOVE is MOVE's counterpart for a container. Item events are published on
`__itemevent@<db>__:<event>`, <db> being the container's database at that moment.

Why these exist beside tests/engine/container_db_test.cc: there one store stands for a shard
and the re-keying is called by hand. Here items really live on several shards over two
threads, connections sit on different threads, and SWAPDB and CMOVE must re-key the catalog
and every shard in one step. Every refused command is checked with its exact reply, followed
by reads proving that nothing changed in either database.
"""
import json

import pytest

from conftest import single_server
from lapse_harness import RawClient
from lapse_harness import RespError as E
from redis_errors import NOT_INT, arity

pytestmark = pytest.mark.lapse_only

server = single_server(threads=2)

OUT_OF_RANGE = E("ERR DB index is out of range")
SAME_DB = E("ERR source and destination objects are the same")
INVALID_NAME = E("ERR invalid container name: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'")


# ---- helpers ---------------------------------------------------------------------------


def select(c, db):
    assert c.call("SELECT", db) == "OK"


def put(c, container, item_id, members="\"v\":1"):
    etag = c.call("IPUT", container, item_id, "{" + members + "}")
    assert isinstance(etag, bytes) and len(etag) == 16, etag
    return etag


def value_of(c, container, item_id):
    doc = c.call("IGET", container, item_id)
    return None if doc is None else json.loads(doc)["v"]


def scan_ids(c, container):
    ids, cursor = [], b"0"
    for _ in range(10000):
        cursor, page = c.call("ISCAN", container, cursor, "COUNT", 100)
        ids += [json.loads(d)["id"] for d in page]
        if cursor == b"0":
            return sorted(ids)
    pytest.fail("ISCAN never returned cursor 0")


def view(c, db, *containers):
    """Everything a client of database `db` sees of these containers (and nothing it does
    changes them). Leaves the client in `db`."""
    select(c, db)
    snap = {"CLIST": c.call("CLIST")}
    for name in containers:
        snap[name] = (c.call("CGETTTL", name), c.call("CGETRU", name), c.call("ICOUNT", name), scan_ids(c, name))
    return snap


def views(c, dbs, *containers):
    snap = {db: view(c, db, *containers) for db in dbs}
    select(c, 0)
    return snap


def info_reclaim(c):
    text = bytes(c.call("INFO", "reclaim")).decode()
    return dict(line.split(":", 1) for line in text.splitlines() if line and not line.startswith("#"))


def cinfo(c, container):
    reply = c.call("CINFO", container)
    return None if reply is None else {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


@pytest.fixture
def frozen(clean, raw):
    assert raw.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
    yield
    with clean.client() as c:
        assert c.call("DEBUG", "FREEZE-CLOCK", 0) == "OK"


# ---- SELECT chooses the containers ---------------------------------------------------------


def test_containers_are_invisible_from_another_database(clean, raw, raw2):
    assert raw.call("CSETTTL", "c", 60) == "OK"
    assert raw.call("CSETRU", "c", 1000) == "OK"
    put(raw, "c", "a")
    before = view(raw, 0, "c")
    assert before == {"CLIST": [b"c"], "c": (60, 1000, 1, ["a"])}
    select(raw2, 1)
    assert raw2.call("CLIST") == []
    assert raw2.call("CGETTTL", "c") is None
    assert raw2.call("CGETRU", "c") is None
    assert raw2.call("IGET", "c", "a") is None
    assert raw2.call("ITTL", "c", "a") == -2
    assert raw2.call("IPTTL", "c", "a") == -2
    assert raw2.call("ICOUNT", "c") == 0
    assert raw2.call("ISCAN", "c", 0) == [b"0", []]
    assert raw2.call("CINFO", "c") is None
    assert raw2.call("IDEL", "c", "a") == 0
    assert raw2.call("CDROP", "c") == 0
    assert raw2.call("IPUT", "c", "a", '{"v":2}', "XX") is None  # no such container here
    assert raw2.call("CLIST") == []  # none of that created one
    assert view(raw, 0, "c") == before
    # A third connection, still in database 0, sees it.
    with clean.client() as other:
        assert value_of(other, "c", "a") == 1


def test_same_name_in_two_databases_is_two_independent_containers(raw, frozen):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    etag0 = put(raw, "c", "a", "\"v\":0")
    put(raw, "c", "only0")
    select(raw, 1)
    assert raw.call("CGETTTL", "c") is None  # a fresh container: TTL off
    etag1 = put(raw, "c", "a", "\"v\":1")
    assert etag1 != etag0
    assert raw.call("CSETRU", "c", 500) == "OK"
    assert value_of(raw, "c", "a") == 1
    assert raw.call("ICOUNT", "c") == 1
    select(raw, 0)
    assert value_of(raw, "c", "a") == 0
    assert raw.call("CGETRU", "c") is None  # db 1's budget is its own
    assert raw.call("ICOUNT", "c") == 2
    # db 0's TTL runs out; db 1's container has TTL off.
    assert raw.call("DEBUG", "ADVANCE", 10_000) == "OK"
    assert raw.call("ICOUNT", "c") == 0
    assert view(raw, 1, "c") == {"CLIST": [b"c"], "c": (None, 500, 1, ["a"])}
    # Dropping one leaves the other.
    assert raw.call("CDROP", "c") == 1
    assert raw.call("CLIST") == []
    select(raw, 0)
    assert raw.call("CLIST") == [b"c"]
    assert raw.call("CGETTTL", "c") == 10


def test_budgets_belong_to_the_container_of_one_database(raw, frozen):
    """CSETRU gives db 1's c a budget; db 0's c stays on the unlimited server-wide one."""
    select(raw, 1)
    assert raw.call("CSETRU", "c", 5) == "OK"
    put(raw, "c", "a")  # 5 RU: the whole second's budget
    refused = raw.call("IGET", "c", "a")
    assert isinstance(refused, E) and refused.message.startswith("THROTTLED Request rate is large. Retry after ")
    select(raw, 0)
    for i in range(20):
        put(raw, "c", f"a{i}")
    assert raw.call("ICOUNT", "c") == 20
    assert cinfo(raw, "c")["ru_throttled_requests"] == 0
    select(raw, 1)
    assert cinfo(raw, "c")["ru_throttled_requests"] == 1


def test_keys_and_containers_stay_apart_per_database(raw):
    """DBSIZE, KEYS, SCAN and INFO keyspace count keys only, per database, as before; INFO
    reclaim counts containers, in all and per database."""
    select(raw, 3)
    put(raw, "c", "a")
    assert raw.call("DBSIZE") == 0
    assert raw.call("KEYS", "*") == []
    assert raw.call("SCAN", 0) == [b"0", []]
    assert raw.call("RANDOMKEY") is None
    assert b"db3" not in bytes(raw.call("INFO", "keyspace"))
    select(raw, 5)
    put(raw, "d", "a")
    put(raw, "e", "a")
    assert raw.call("SET", "k", "v") == "OK"
    assert raw.call("DBSIZE") == 1
    rec = info_reclaim(raw)
    assert (rec["containers"], rec["containers_db3"], rec["containers_db5"]) == ("3", "1", "2")
    assert "containers_db0" not in rec


# ---- FLUSHDB / FLUSHALL ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", [[], ["SYNC"], ["ASYNC"]], ids=["plain", "sync", "async"])
def test_flushdb_removes_only_this_databases_containers(raw, raw2, mode):
    assert raw.call("CSETTTL", "keep", 100) == "OK"
    put(raw, "keep", "a")
    put(raw, "both", "a")
    raw.call("SET", "k0", "v")
    select(raw2, 1)
    assert raw2.call("CSETTTL", "both", 7) == "OK"
    for i in range(50):
        put(raw2, "both", f"i{i}")
    put(raw2, "gone", "a")
    raw2.call("SET", "k1", "v")
    db0 = view(raw, 0, "keep", "both")
    assert raw2.call("FLUSHDB", *mode) == "OK"
    assert raw2.call("CLIST") == []
    assert raw2.call("ICOUNT", "both") == 0
    assert raw2.call("IGET", "gone", "a") is None
    assert raw2.call("CGETTTL", "both") is None
    assert raw2.call("DBSIZE") == 0
    assert view(raw, 0, "keep", "both") == db0
    assert raw.call("GET", "k0") == b"v"
    assert info_reclaim(raw)["containers"] == "2"
    # A container re-created under the same name starts empty, TTL off.
    put(raw2, "both", "fresh")
    assert raw2.call("ICOUNT", "both") == 1
    assert raw2.call("CGETTTL", "both") is None


def test_flushall_removes_every_databases_containers(raw):
    for db in (0, 4, 15):
        select(raw, db)
        put(raw, "c", "a")
        raw.call("SET", "k", "v")
    assert info_reclaim(raw)["containers"] == "3"
    assert raw.call("FLUSHALL") == "OK"
    for db in (0, 4, 15):
        select(raw, db)
        assert raw.call("CLIST") == []
        assert raw.call("IGET", "c", "a") is None
        assert raw.call("DBSIZE") == 0
    rec = info_reclaim(raw)
    assert rec["containers"] == "0"
    assert not any(k.startswith("containers_db") for k in rec)


# ---- SWAPDB --------------------------------------------------------------------------------


def test_swapdb_swaps_containers_with_the_keys(raw, raw2, frozen):
    assert raw.call("CSETTTL", "c0", 100) == "OK"
    put(raw, "c0", "a")
    put(raw, "both", "a", "\"v\":0")
    raw.call("SET", "k", "zero")
    select(raw2, 1)  # a client that stays in database 1 through the swap
    assert raw2.call("CSETRU", "c1", 900) == "OK"
    put(raw2, "c1", "a")
    put(raw2, "both", "a", "\"v\":1")
    raw2.call("SET", "k", "one")
    before = views(raw, [0, 1], "c0", "c1", "both")
    assert raw.call("SWAPDB", 0, 1) == "OK"
    after = views(raw, [0, 1], "c0", "c1", "both")
    assert after == {0: before[1], 1: before[0]}
    # The connection keeps its index and sees what is now there.
    assert value_of(raw2, "both", "a") == 0
    assert raw2.call("GET", "k") == b"zero"
    assert raw2.call("CGETTTL", "c0") == 100
    assert value_of(raw, "both", "a") == 1
    # The swapped containers go on working where they are: expiry, writes, figures.
    select(raw2, 1)
    assert raw.call("DEBUG", "ADVANCE", 100_000) == "OK"
    assert raw2.call("IGET", "c0", "a") is None
    assert cinfo(raw2, "c0")["reclaimed_total"] == 1  # by that read or the reclaimer
    put(raw2, "c0", "b")
    assert raw2.call("ICOUNT", "c0") == 1
    # Back again.
    assert raw2.call("SWAPDB", 1, 0) == "OK"
    select(raw, 0)
    assert raw.call("CLIST") == [b"both", b"c0"]
    assert scan_ids(raw, "c0") == ["b"]
    rec = info_reclaim(raw)
    assert (rec["containers"], rec["containers_db0"], rec["containers_db1"]) == ("4", "2", "2")


def test_swapdb_with_an_empty_database_and_bad_indexes(raw):
    put(raw, "c", "a")
    before = views(raw, [0, 9], "c")
    for args, error in [(("x", 9), E("ERR invalid first DB index")), ((0, "y"), E("ERR invalid second DB index")),
                        ((0, 16), OUT_OF_RANGE), ((-1, 9), OUT_OF_RANGE)]:
        assert raw.call("SWAPDB", *args) == error, args
        assert views(raw, [0, 9], "c") == before, args
    assert raw.call("SWAPDB", 0, 9) == "OK"
    assert views(raw, [0, 9], "c") == {0: before[9], 9: before[0]}
    assert raw.call("SWAPDB", 9, 9) == "OK"  # with itself: nothing changes
    assert views(raw, [0, 9], "c") == {0: before[9], 9: before[0]}


def test_exec_sees_a_swap_made_before_it_as_keys_do(raw, raw2):
    """A transaction queued in database 1 runs against what database 1 holds at EXEC, for
    keys and containers alike; SWAPDB touches the watched keys, not containers (which cannot be
    watched), so an unwatched EXEC runs."""
    put(raw, "c", "a", "\"v\":0")
    raw.call("SET", "k", "zero")
    select(raw2, 1)
    put(raw2, "c", "a", "\"v\":1")
    raw2.call("SET", "k", "one")
    assert raw2.call("MULTI") == "OK"
    assert raw2.call("GET", "k") == "QUEUED"
    assert raw2.call("IGET", "c", "a") == "QUEUED"
    assert raw.call("SWAPDB", 0, 1) == "OK"
    got = raw2.call("EXEC")
    assert got[0] == b"zero" and json.loads(got[1])["v"] == 0
    # With a watched key, the swap aborts it as Redis does.
    assert raw2.call("WATCH", "k") == "OK"
    assert raw2.call("MULTI") == "OK"
    assert raw2.call("IGET", "c", "a") == "QUEUED"
    assert raw.call("SWAPDB", 0, 1) == "OK"
    assert raw2.call("EXEC") is None


# ---- CMOVE ---------------------------------------------------------------------------------


def test_cmove_moves_a_container_with_its_items_and_settings(raw, frozen):
    assert raw.call("CSETTTL", "c", 50) == "OK"
    assert raw.call("CSETRU", "c", 700) == "OK"
    etags = {f"i{i}": put(raw, "c", f"i{i}") for i in range(40)}
    raw.call("SET", "c", "a key of the same name")
    moved = view(raw, 0, "c")
    assert raw.call("CMOVE", "c", 3) == 1
    assert raw.call("CLIST") == []
    assert raw.call("IGET", "c", "i0") is None
    assert raw.call("GET", "c") == b"a key of the same name"  # keys are MOVE's
    assert view(raw, 3, "c") == moved
    for item_id, etag in etags.items():
        assert json.loads(raw.call("IGET", "c", item_id))["_etag"] == etag.decode()
    assert raw.call("DEBUG", "ADVANCE", 50_000) == "OK"
    assert raw.call("ICOUNT", "c") == 0  # its TTL came along
    rec = info_reclaim(raw)
    assert (rec["containers"], rec["containers_db3"]) == ("1", "1")
    assert "containers_db0" not in rec


def test_cmove_refusals_change_nothing(raw):
    put(raw, "c", "a", "\"v\":0")
    put(raw, "taken", "a", "\"v\":0")
    select(raw, 2)
    put(raw, "taken", "a", "\"v\":2")
    select(raw, 0)
    before = views(raw, [0, 2], "c", "taken")
    refused = [
        (("CMOVE", "c", "x"), NOT_INT),
        (("CMOVE", "c", "1.5"), NOT_INT),
        (("CMOVE", "c", ""), NOT_INT),
        (("CMOVE", "c", "99999999999999999999"), NOT_INT),
        (("CMOVE", "c", -1), OUT_OF_RANGE),
        (("CMOVE", "c", 16), OUT_OF_RANGE),
        (("CMOVE", "c", 0), SAME_DB),
        (("CMOVE", "a/b", 2), INVALID_NAME),
        (("CMOVE", "", 2), INVALID_NAME),
        (("CMOVE", "c"), arity("cmove")),
        (("CMOVE", "c", 2, 3), arity("cmove")),
        (("CMOVE", "taken", 2), 0),  # the target has a container of that name
        (("CMOVE", "absent", 2), 0),
    ]
    for cmd, reply in refused:
        assert raw.call(*cmd) == reply, cmd
        assert views(raw, [0, 2], "c", "taken") == before, cmd
    assert raw.call("CLIST") == [b"c", b"taken"]


def test_cmove_onto_a_dropped_name_and_back(raw):
    select(raw, 2)
    put(raw, "c", "old")
    assert raw.call("CDROP", "c") == 1
    select(raw, 0)
    put(raw, "c", "new")
    assert raw.call("CMOVE", "c", 2) == 1
    select(raw, 2)
    assert scan_ids(raw, "c") == ["new"]
    assert raw.call("IGET", "c", "old") is None
    assert raw.call("CMOVE", "c", 0) == 1
    assert raw.call("CLIST") == []
    select(raw, 0)
    assert scan_ids(raw, "c") == ["new"]


def test_move_of_a_key_leaves_containers_alone(raw):
    put(raw, "c", "a")
    assert raw.call("MOVE", "c", 1) == 0  # no key "c": MOVE is for keys only
    assert raw.call("CLIST") == [b"c"]
    select(raw, 1)
    assert raw.call("CLIST") == []


def test_cmove_with_few_databases(start_server):
    srv = start_server(options={"threads": 2, "databases": 2})
    with srv.client() as c:
        put(c, "c", "a")
        assert c.call("CMOVE", "c", 2) == OUT_OF_RANGE
        assert c.call("CLIST") == [b"c"]
        assert c.call("CMOVE", "c", 1) == 1
        select(c, 1)
        assert c.call("CLIST") == [b"c"]
        assert c.call("SELECT", 2) == OUT_OF_RANGE


# ---- Transactions and scripts ----------------------------------------------------------------


def test_multi_exec_follows_select(raw):
    assert raw.call("MULTI") == "OK"
    for cmd in [("SELECT", 2), ("CSETTTL", "c", 100), ("IPUT", "c", "a", '{"v":2}'), ("SELECT", 0),
                ("IGET", "c", "a"), ("CLIST",), ("SELECT", 2), ("CMOVE", "c", 4), ("CLIST",)]:
        assert raw.call(*cmd) == "QUEUED", cmd
    got = raw.call("EXEC")
    assert got[:2] == ["OK", "OK"] and len(got[2]) == 16
    assert got[3:] == ["OK", None, [], "OK", 1, []]
    # SELECT inside the transaction stays in force after it, as in Redis.
    assert b" db=2 " in raw.call("CLIENT", "INFO")
    select(raw, 4)
    assert raw.call("CGETTTL", "c") == 100
    assert value_of(raw, "c", "a") == 2


def test_select_inside_a_script_uses_that_databases_containers(raw):
    script = "redis.call('SELECT', 6); return redis.call('IPUT', KEYS[1], 'a', ARGV[1])"
    etag = raw.call("EVAL", script, 1, "c", '{"v":6}')
    assert isinstance(etag, bytes) and len(etag) == 16
    assert raw.call("CLIST") == []  # the caller stays in database 0
    select(raw, 6)
    assert value_of(raw, "c", "a") == 6


# ---- Item events -------------------------------------------------------------------------


def test_item_events_name_the_containers_database(raw, clean, frozen):
    assert raw.call("CONFIG", "SET", "notify-keyspace-events", "Egx") == "OK"
    sub = RawClient(clean.port)
    try:
        sub.send("PSUBSCRIBE", "__itemevent@*__:*")
        sub.read_reply()
        sub.sock.settimeout(10)

        def events(n):
            return [sub.read_reply()[2:] for _ in range(n)]

        select(raw, 5)
        assert raw.call("CSETTTL", "c", "-1") == "OK"
        put(raw, "c", "a")
        raw.call("IPUT", "c", "b", '{"v":1,"ttl":1}')
        assert raw.call("IDEL", "c", "a") == 1
        assert raw.call("DEBUG", "ADVANCE", 1000) == "OK"  # b's ttl runs out; the reclaimer deletes it
        assert events(4) == [[b"__itemevent@5__:iput", b"c/a"], [b"__itemevent@5__:iput", b"c/b"],
                             [b"__itemevent@5__:idel", b"c/a"], [b"__itemevent@5__:expired", b"c/b"]]
        # After CMOVE and SWAPDB the events follow the container.
        raw.call("IPUT", "c", "x", '{"v":1,"ttl":1}')
        assert raw.call("CMOVE", "c", 7) == 1
        assert raw.call("SWAPDB", 7, 8) == "OK"
        select(raw, 8)
        raw.call("IPUT", "c", "y", '{"v":1}')
        assert raw.call("DEBUG", "ADVANCE", 1000) == "OK"
        assert events(3) == [[b"__itemevent@5__:iput", b"c/x"], [b"__itemevent@8__:iput", b"c/y"],
                             [b"__itemevent@8__:expired", b"c/x"]]
        # Nothing more went out on database 5's channel: the next message is the marker.
        raw.call("PUBLISH", "__itemevent@5__:marker", "end")
        assert events(1) == [[b"__itemevent@5__:marker", b"end"]]
    finally:
        sub.close()
        raw.call("CONFIG", "SET", "notify-keyspace-events", "")
