"""The change feed, ICHANGES (issue 15), on the real binary over TCP with two event-loop
threads, so that a container's items live on many shards and the blocked reader and the writer
usually sit on different threads.

ICHANGES container [FROM BEGINNING|NOW|<token>] [COUNT n] [BLOCK ms] answers
[next-token, [change, ...]]; the README ("Change feed") documents the documents. Every test
checks exact bytes: the documents are built here from what IGET returns and from the server
clock.

Time: tests that depend on it stop the server clock (DEBUG FREEZE-CLOCK 1) and move it with
DEBUG ADVANCE, so every change's crts and every deadline is exact. A deletion by time to live
enters the feed when the item is physically reclaimed: tests pause background reclamation
(DEBUG SET-ACTIVE-EXPIRE 0) to hold it back, then let it run and wait for the deletion with
ICHANGES ... BLOCK itself (a generous real-time cap; nothing asserts how long anything takes).
"""
from __future__ import annotations

import json
import math
import select
import threading
import time

import pytest

from conftest import single_server
from lapse_harness import RespError as E
from lapse_harness import blocked_clients, server_ms, wait_blocked
from redis_errors import arity

pytestmark = pytest.mark.lapse_only

server = single_server(threads=2)

# Real milliseconds a test waits for the server's own threads (reclaimer, a woken reader).
WAIT_MS = 10000
SYNTAX = E("ERR syntax error")
NOT_INT = E("ERR value is not an integer or out of range")
NOT_POSITIVE = E("ERR value is out of range, must be positive")
UNBLOCKED = E("UNBLOCKED client unblocked via CLIENT UNBLOCK")
INVALID_NAME = E("ERR invalid container name: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'")


def invalid_token(token):
    return E(f"ERR invalid change feed token '{token}': give BEGINNING, NOW or a token that ICHANGES returned")


def too_old(token, container, oldest):
    return E(f"ERR change feed token '{token}' of container '{container}' is older than its retention "
             f"(change-feed-retention): the oldest token still available is '{oldest}'")


# ---- helpers ---------------------------------------------------------------------------


def changes(raw, container, *options):
    """ICHANGES expecting success: (token as str, [documents as bytes])."""
    reply = raw.call("ICHANGES", container, *options)
    assert isinstance(reply, list) and len(reply) == 2 and isinstance(reply[1], list), reply
    return reply[0].decode(), reply[1]


def container_id(raw, container):
    """The container part of its tokens."""
    return changes(raw, container, "FROM", "NOW")[0].split("-")[0]


def token(cid, lsn):
    return f"{cid}-{lsn}"


def create(item, lsn, crts_ms):
    return b'{"current":%s,"metadata":{"operationType":"create","lsn":%d,"crts":%d}}' % (item, lsn, crts_ms // 1000)


def replace(item, lsn, crts_ms, previous):
    return (b'{"current":%s,"metadata":{"operationType":"replace","lsn":%d,"crts":%d,"previousImageLSN":%d}}'
            % (item, lsn, crts_ms // 1000, previous))


def delete(item_id, ts_ms, lsn, crts_ms, previous, deadline_ms=None):
    """A delete; with deadline_ms, one by time to live (expiredAt and reclaimLagMs)."""
    quoted = json.dumps(item_id).encode()
    doc = (b'{"previous":{"id":%s,"_ts":%d},"metadata":{"operationType":"delete","lsn":%d,"crts":%d,'
           b'"previousImageLSN":%d,"timeToLiveExpired":%s,"id":%s'
           % (quoted, ts_ms // 1000, lsn, crts_ms // 1000, previous, b"false" if deadline_ms is None else b"true",
              quoted))
    if deadline_ms is not None:
        doc += b',"expiredAt":%d,"reclaimLagMs":%d' % (deadline_ms // 1000, crts_ms - deadline_ms)
    return doc + b"}}"


def put(raw, container, item_id, body):
    """IPUT expecting success; returns the item as IGET returns it."""
    etag = raw.call("IPUT", container, item_id, body)
    assert isinstance(etag, bytes) and len(etag) == 16, etag
    return raw.call("IGET", container, item_id)


def advance(raw, ms):
    assert raw.call("DEBUG", "ADVANCE", ms) == "OK"


def reclaim(raw, on):
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1 if on else 0) == "OK"
    raw.call("INFO", "reclaim")  # runs on every shard: slices that started before it are over


def lastcharge(raw):
    return raw.call("LASTCHARGE")


def query_ru(docs):
    """1 RU per started KiB returned, 1 per started 100 changes, at least 1 (as b"n")."""
    n = max(1, math.ceil(sum(len(d) for d in docs) / 1024), math.ceil(len(docs) / 100))
    return str(n).encode()


def has_reply(conn, wait=0.0) -> bool:
    if conn.buf:
        return True
    readable, _, _ = select.select([conn.sock], [], [], wait)
    return bool(readable)


def block(conn, observer, *command):
    """Sends a blocking ICHANGES and waits until the server counts the client as blocked."""
    conn.send(*command)
    wait_blocked(observer, 1)
    assert not has_reply(conn), f"{command} answered at once"


@pytest.fixture
def frozen(clean, raw):
    assert raw.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
    yield
    with clean.client() as c:
        assert c.call("DEBUG", "FREEZE-CLOCK", 0) == "OK"


@pytest.fixture
def paused(clean, raw):
    """Background reclamation paused until the test lets it run."""
    reclaim(raw, False)
    yield
    with clean.client() as c:
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1) == "OK"


# ---- create, replace, delete ----------------------------------------------------------------


def test_create_replace_and_delete(raw, frozen):
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    cid = container_id(raw, "c")
    assert changes(raw, "c") == (token(cid, 0), [])
    t0 = server_ms(raw)
    v1 = put(raw, "c", "a", '{"v":1}')
    advance(raw, 2500)
    v2 = put(raw, "c", "a", '{"v":2,"ttl":60}')
    advance(raw, 1000)
    assert raw.call("IDEL", "c", "a") == 1
    assert changes(raw, "c") == (token(cid, 3), [
        create(v1, 1, t0),
        replace(v2, 2, t0 + 2500, 1),
        delete("a", t0 + 2500, 3, t0 + 3500, 2),
    ])
    # The current image is exactly what IGET returned, parsed as Cosmos DB consumers read it.
    doc = json.loads(changes(raw, "c", "COUNT", 1)[1][0])
    assert doc["current"] == json.loads(v1)
    assert doc["metadata"] == {"operationType": "create", "lsn": 1, "crts": t0 // 1000}
    # Written again after its delete: a create with no earlier image.
    v3 = put(raw, "c", "a", "{}")
    assert changes(raw, "c", "FROM", token(cid, 3)) == (token(cid, 4), [create(v3, 4, t0 + 3500)])


def test_only_writes_that_change_an_item_enter(raw, frozen):
    now = server_ms(raw)
    a = put(raw, "c", "a", '{"v":1}')
    cid = container_id(raw, "c")
    etag = json.loads(a)["_etag"]
    # Conditions not met, reads, counts, scans, settings and deletes of nothing change nothing.
    assert raw.call("IPUT", "c", "a", '{"v":2}', "NX") is None
    assert raw.call("IPUT", "c", "b", '{"v":2}', "XX") is None
    assert raw.call("IPUT", "c", "a", '{"v":2}', "IFMATCH", "0" * 16) is None
    raw.call("IGET", "c", "a")
    raw.call("ITTL", "c", "a")
    raw.call("ICOUNT", "c")
    raw.call("ISCAN", "c", 0)
    raw.call("CINFO", "c")
    assert raw.call("CSETTTL", "c", 100) == "OK"
    assert raw.call("IDEL", "c", "missing") == 0
    assert changes(raw, "c") == (token(cid, 1), [create(a, 1, now)])
    # Conditions met: an XX and an IFMATCH write are replaces.
    a2 = put(raw, "c", "a", '{"v":3}')
    raw.call("IPUT", "c", "a", '{"v":4}', "XX")
    a3 = raw.call("IGET", "c", "a")
    raw.call("IPUT", "c", "a", '{"v":5}', "IFMATCH", json.loads(a3)["_etag"])
    a4 = raw.call("IGET", "c", "a")
    assert etag != json.loads(a4)["_etag"]
    assert changes(raw, "c", "FROM", token(cid, 1))[1] == [replace(a2, 2, now, 1), replace(a3, 3, now, 2),
                                                           replace(a4, 4, now, 3)]


def test_idel_of_many_items_on_many_shards(raw, frozen):
    now = server_ms(raw)
    ids = [f"i{n}" for n in range(20)]
    for i in ids:
        put(raw, "c", i, "{}")
    cid = container_id(raw, "c")
    assert raw.call("IDEL", "c", *ids, "missing") == 20
    token_, docs = changes(raw, "c", "FROM", token(cid, 20))
    assert token_ == token(cid, 40)
    # One delete per item, lsns 21..40 in commit order, each naming the create it follows.
    by_id = {json.loads(d)["previous"]["id"]: d for d in docs}
    assert sorted(by_id) == sorted(ids)
    lsns = [json.loads(d)["metadata"]["lsn"] for d in docs]
    assert lsns == list(range(21, 41))
    for i in ids:
        lsn = json.loads(by_id[i])["metadata"]["lsn"]
        assert by_id[i] == delete(i, now, lsn, now, ids.index(i) + 1)


# ---- expiry ------------------------------------------------------------------------------


def test_no_expiry_while_the_container_ttl_is_off(raw, frozen):
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    put(raw, "c", "own", '{"ttl":5}')
    put(raw, "c", "inherit", "{}")
    cid = container_id(raw, "c")
    advance(raw, 60000)
    reclaim(raw, True)
    assert raw.call("IGET", "c", "own") is not None  # a read meets nothing expired either
    assert changes(raw, "c", "FROM", token(cid, 2), "BLOCK", 300) == (token(cid, 2), [])


def test_expiry_enters_when_reclaimed_with_its_deadline(raw, frozen, paused):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    t0 = server_ms(raw)
    put(raw, "c", "a", "{}")
    cid = container_id(raw, "c")
    advance(raw, 10000)  # expired: invisible at once ...
    assert raw.call("ICOUNT", "c") == 0
    assert changes(raw, "c", "FROM", token(cid, 1)) == (token(cid, 1), [])  # ... but not yet deleted
    advance(raw, 1234)
    reclaim(raw, True)
    got = changes(raw, "c", "FROM", token(cid, 1), "BLOCK", WAIT_MS)
    assert got == (token(cid, 2), [delete("a", t0, 2, t0 + 11234, 1, deadline_ms=t0 + 10000)])


def test_expiry_under_minus_one_and_a_changed_default(raw, frozen, paused):
    assert raw.call("CSETTTL", "c", 200) == "OK"
    t0 = server_ms(raw)
    put(raw, "c", "own", '{"ttl":5}')
    put(raw, "c", "inherit", "{}")
    cid = container_id(raw, "c")
    advance(raw, 100000)
    # -1: only the item's own ttl counts, and its deadline passed long ago.
    assert raw.call("CSETTTL", "c", -1) == "OK"
    reclaim(raw, True)
    assert changes(raw, "c", "FROM", token(cid, 2), "BLOCK", WAIT_MS) == (
        token(cid, 3), [delete("own", t0, 3, t0 + 100000, 1, deadline_ms=t0 + 5000)])
    # Back to 200 s: the inheriting item has 100 s left. Lowered to 50 s, it is overdue by
    # 50 s, and its deadline is the new setting's.
    assert raw.call("CSETTTL", "c", 200) == "OK"
    assert changes(raw, "c", "FROM", token(cid, 3), "BLOCK", 300) == (token(cid, 3), [])
    assert raw.call("CSETTTL", "c", 50) == "OK"
    assert changes(raw, "c", "FROM", token(cid, 3), "BLOCK", WAIT_MS) == (
        token(cid, 4), [delete("inherit", t0, 4, t0 + 100000, 2, deadline_ms=t0 + 50000)])


def test_expired_item_met_by_a_read_or_a_write_enters_then(raw, frozen, paused):
    assert raw.call("CSETTTL", "c", 5) == "OK"
    t0 = server_ms(raw)
    put(raw, "c", "a", "{}")
    put(raw, "c", "b", "{}")
    cid = container_id(raw, "c")
    advance(raw, 7000)
    assert raw.call("IGET", "c", "a") is None  # reclaims it: the deletion enters with this read
    assert changes(raw, "c", "FROM", token(cid, 2)) == (
        token(cid, 3), [delete("a", t0, 3, t0 + 7000, 1, deadline_ms=t0 + 5000)])
    b = put(raw, "c", "b", '{"v":2}')  # over an expired item: its deletion, then a create
    assert changes(raw, "c", "FROM", token(cid, 3)) == (
        token(cid, 5), [delete("b", t0, 4, t0 + 7000, 2, deadline_ms=t0 + 5000), create(b, 5, t0 + 7000)])


def test_a_tight_budget_delays_ttl_deletions_and_the_lag_shows(start_server):
    """5 RU/s server-wide buys one deletion of a 1 KiB item (5 RU) per simulated second: the
    three expired items enter the feed one second apart, each with its lag."""
    srv = start_server(options={"threads": 2, "ru-per-second": 5})
    with srv.client() as c:
        assert c.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
        advance(c, 1000 - server_ms(c) % 1000)
        reclaim(c, False)
        assert c.call("CSETTTL", "c", "OFF") == "OK"
        t0 = server_ms(c)
        body = '{"v":"' + "x" * 900 + '"}'  # 964 bytes as IGET returns it: 5 RU to reclaim
        for i in range(3):
            put(c, "c", f"i{i}", body)
        cid = container_id(c, "c")
        assert c.call("CSETTTL", "c", 1) == "OK"
        advance(c, 2000)
        reclaim(c, True)
        position, seen = token(cid, 3), []
        for second in range(3):
            position, docs = changes(c, "c", "FROM", position, "BLOCK", WAIT_MS)
            time.sleep(0.1)  # the budget is checked per item: nothing more may come this second
            more_token, more = changes(c, "c", "FROM", position)
            assert (more_token, more) == (position, []), second
            assert len(docs) == 1, second
            meta = json.loads(docs[0])["metadata"]
            assert meta["lsn"] == 4 + second
            assert meta["timeToLiveExpired"] is True
            assert meta["expiredAt"] == (t0 + 1000) // 1000
            assert meta["reclaimLagMs"] == 1000 + 1000 * second
            assert meta["crts"] == (t0 + 2000 + 1000 * second) // 1000
            seen.append(meta["id"])
            advance(c, 1000)
        assert sorted(seen) == ["i0", "i1", "i2"]


# ---- tokens and retention ----------------------------------------------------------------


def test_token_resume_count_and_now(raw, frozen):
    now = server_ms(raw)
    items = [put(raw, "c", f"i{n}", "{}") for n in range(5)]
    cid = container_id(raw, "c")
    expected = [create(item, n + 1, now) for n, item in enumerate(items)]
    assert changes(raw, "c", "COUNT", 2) == (token(cid, 2), expected[:2])
    assert changes(raw, "c", "FROM", token(cid, 2), "COUNT", 2) == (token(cid, 4), expected[2:4])
    assert changes(raw, "c", "FROM", token(cid, 4)) == (token(cid, 5), expected[4:])
    assert changes(raw, "c", "FROM", token(cid, 5)) == (token(cid, 5), [])
    assert changes(raw, "c", "FROM", "beginning", "COUNT", 100) == (token(cid, 5), expected)
    assert changes(raw, "c", "FROM", "NOW") == (token(cid, 5), [])
    assert changes(raw, "c", "FROM", token(cid, 0), "COUNT", 1) == (token(cid, 1), expected[:1])
    # COUNT defaults to 100.
    for n in range(5, 120):
        put(raw, "c", f"i{n}", "{}")
    t, docs = changes(raw, "c")
    assert (t, len(docs)) == (token(cid, 100), 100)
    assert changes(raw, "c", "FROM", t)[0] == token(cid, 120)


def test_retention_overflow_and_its_error(start_server):
    # Each create document here is 131 bytes (132 from lsn 10): three fit in 400, four do not.
    srv = start_server(options={"threads": 2, "change-feed-retention": 400})
    with srv.client() as c:
        assert c.call("CONFIG", "GET", "change-feed-retention") == [b"change-feed-retention", b"400"]
        for n in range(10):
            put(c, "c", f"i{n}", "{}")
        cid = container_id(c, "c")
        t, docs = changes(c, "c")
        assert sum(len(d) for d in docs) <= 400 < sum(len(d) for d in docs) + len(docs[0])
        assert [json.loads(d)["metadata"]["lsn"] for d in docs] == [8, 9, 10]
        assert t == token(cid, 10)
        # The oldest token still available reads them all; one before it is refused by name.
        assert changes(c, "c", "FROM", token(cid, 7)) == (t, docs)
        for old in (token(cid, 6), token(cid, 0)):
            assert c.call("ICHANGES", "c", "FROM", old) == too_old(old, "c", token(cid, 7))
        # The newest change is kept whatever its size; a smaller setting applies at the next change.
        assert c.call("CONFIG", "SET", "change-feed-retention", 1) == "OK"
        assert changes(c, "c", "FROM", token(cid, 7)) == (t, docs)
        big = put(c, "c", "big", '{"v":"' + "x" * 2000 + '"}')
        assert changes(c, "c") == (token(cid, 11), [create(big, 11, json.loads(big)["_ts"] * 1000)])
        assert c.call("ICHANGES", "c", "FROM", token(cid, 9)) == too_old(token(cid, 9), "c", token(cid, 10))
        # Other containers keep their own feeds.
        put(c, "d", "x", "{}")
        assert len(changes(c, "d")[1]) == 1


def test_config_change_feed_retention(raw):
    assert raw.call("CONFIG", "GET", "change-feed-retention") == [b"change-feed-retention", b"16777216"]
    for bad in ("0", "-1", "lots"):
        reply = raw.call("CONFIG", "SET", "change-feed-retention", bad)
        assert isinstance(reply, E) and "change-feed-retention" in reply.message, reply
    assert raw.call("CONFIG", "GET", "change-feed-retention") == [b"change-feed-retention", b"16777216"]
    assert raw.call("CONFIG", "SET", "change-feed-retention", "1mb") == "OK"
    assert raw.call("CONFIG", "GET", "change-feed-retention") == [b"change-feed-retention", b"1048576"]
    assert raw.call("CONFIG", "SET", "change-feed-retention", "16mb") == "OK"


def test_a_dropped_container_takes_its_feed_and_old_tokens_say_so(raw):
    put(raw, "c", "a", "{}")
    old_id = container_id(raw, "c")
    assert raw.call("CDROP", "c") == 1
    assert raw.call("ICHANGES", "c") == E("ERR no such container 'c'")
    b = put(raw, "c", "b", "{}")
    new_id = container_id(raw, "c")
    assert new_id != old_id
    assert raw.call("ICHANGES", "c", "FROM", token(old_id, 1)) == E(
        f"ERR change feed token '{old_id}-1' belongs to an earlier container 'c' that was dropped: "
        f"the oldest token still available is '{new_id}-0'")
    assert changes(raw, "c") == (token(new_id, 1), [create(b, 1, json.loads(b)["_ts"] * 1000)])
    assert raw.call("FLUSHALL") == "OK"
    assert raw.call("ICHANGES", "c") == E("ERR no such container 'c'")


# ---- BLOCK ---------------------------------------------------------------------------------


def test_block_is_woken_by_a_write_on_another_connection(connect):
    reader, writer = connect(), connect()
    assert writer.call("CSETTTL", "c", "OFF") == "OK"
    cid = container_id(writer, "c")
    block(reader, writer, "ICHANGES", "c", "FROM", "NOW", "BLOCK", 0)
    assert not has_reply(reader, 0.2)
    item = put(writer, "c", "a", '{"v":1}')
    reply = reader.read_reply()
    assert reply == [token(cid, 1).encode(), [create(item, 1, json.loads(item)["_ts"] * 1000)]]
    # The charge is settled when it answers: one query of what it returned.
    assert reader.call("LASTCHARGE") == query_ru(reply[1])
    # Every write wakes it, from whichever shard; a reader that resumes sees them all in order.
    block(reader, writer, "ICHANGES", "c", "FROM", token(cid, 1), "BLOCK", WAIT_MS)
    for n in range(10):
        writer.call("IPUT", "c", f"i{n}", "{}")
    t, docs = reader.read_reply()
    while t.decode() != token(cid, 11):
        t, more = changes(reader, "c", "FROM", t.decode())
        t, docs = t.encode(), docs + more
    assert [json.loads(d)["current"]["id"] for d in docs] == [f"i{n}" for n in range(10)]


def test_concurrent_writers_make_one_consistent_order(connect):
    """Four connections write and delete ten items at once while a fifth follows the feed
    with BLOCK. The feed must be gapless, hold exactly the changes that happened, and replay
    item by item: a create only of an absent item, a replace or delete only of a present
    one, each naming the lsn of the item's change before it, each writer's writes in its
    own order, and the last image of each item what IGET returns at the end."""
    writers, reader, observer = [connect() for _ in range(4)], connect(), connect()
    assert observer.call("CSETTTL", "c", "OFF") == "OK"
    cid = container_id(observer, "c")
    changed = [0] * len(writers)

    def write(w):
        conn = writers[w]
        for n in range(300):
            item = f"i{n % 10}"
            if n % 7 == 6:
                changed[w] += conn.call("IDEL", "c", item)
            else:
                assert len(conn.call("IPUT", "c", item, json.dumps({"w": w, "n": n}))) == 16
                changed[w] += 1

    threads = [threading.Thread(target=write, args=(w,)) for w in range(len(writers))]
    for t in threads:
        t.start()
    position, docs = token(cid, 0), []
    while True:
        done = not any(t.is_alive() for t in threads)
        position, got = changes(reader, "c", "FROM", position, "BLOCK", 200)
        docs += got
        if done and not got:
            break
    for t in threads:
        t.join()
    assert len(docs) == sum(changed)
    assert position == token(cid, len(docs))
    last_lsn, image, seen_n = {}, {}, {}
    for lsn, raw_doc in enumerate(docs, start=1):
        doc = json.loads(raw_doc)
        meta = doc["metadata"]
        assert meta["lsn"] == lsn
        op = meta["operationType"]
        item = doc["current"]["id"] if "current" in doc else doc["previous"]["id"]
        if op == "create":
            assert image.get(item) is None and "previousImageLSN" not in meta, raw_doc
        else:
            assert image.get(item) is not None and meta["previousImageLSN"] == last_lsn[item], raw_doc
        if op == "delete":
            assert meta["timeToLiveExpired"] is False
            image[item] = None
        else:
            body = doc["current"]
            assert body["n"] > seen_n.get(body["w"], -1), raw_doc  # each writer's order
            seen_n[body["w"]] = body["n"]
            image[item] = raw_doc[len(b'{"current":'):raw_doc.rindex(b',"metadata":')]  # its exact bytes
        last_lsn[item] = lsn
    for n in range(10):
        assert observer.call("IGET", "c", f"i{n}") == image.get(f"i{n}")


def test_block_is_woken_by_background_reclamation(connect):
    reader, writer = connect(), connect()
    reclaim(writer, False)
    assert writer.call("CSETTTL", "c", 1) == "OK"
    put(writer, "c", "a", "{}")
    cid = container_id(writer, "c")
    block(reader, writer, "ICHANGES", "c", "FROM", token(cid, 1), "BLOCK", 0)
    advance(writer, 1500)
    reclaim(writer, True)
    t, docs = reader.read_reply()
    assert t == token(cid, 2).encode()
    meta = json.loads(docs[0])["metadata"]
    assert (meta["operationType"], meta["timeToLiveExpired"], meta["id"]) == ("delete", True, "a")


def test_block_times_out_with_the_same_token_and_no_changes(connect):
    reader, writer = connect(), connect()
    put(writer, "c", "a", "{}")
    cid = container_id(writer, "c")
    started = time.monotonic()
    assert changes(reader, "c", "FROM", "NOW", "BLOCK", 200) == (token(cid, 1), [])
    assert time.monotonic() - started >= 0.19
    assert reader.call("LASTCHARGE") == b"1"
    assert blocked_clients(writer) == 0


def test_client_unblock_cdrop_and_multi(connect):
    reader, writer = connect(), connect()
    put(writer, "c", "a", "{}")
    cid = container_id(writer, "c")
    reader_id = reader.call("CLIENT", "ID")
    block(reader, writer, "ICHANGES", "c", "FROM", "NOW", "BLOCK", 0)
    assert writer.call("CLIENT", "UNBLOCK", reader_id) == 1
    assert reader.read_reply() == [token(cid, 1).encode(), []]
    block(reader, writer, "ICHANGES", "c", "FROM", "NOW", "BLOCK", 0)
    assert writer.call("CLIENT", "UNBLOCK", reader_id, "ERROR") == 1
    assert reader.read_reply() == UNBLOCKED
    block(reader, writer, "ICHANGES", "c", "FROM", "NOW", "BLOCK", 0)
    assert writer.call("CDROP", "c") == 1
    assert reader.read_reply() == E("ERR container 'c' was dropped while waiting for its changes")
    # Inside MULTI it answers at once.
    put(writer, "c", "b", "{}")
    cid = container_id(writer, "c")
    assert reader.call("MULTI") == "OK"
    assert reader.call("ICHANGES", "c", "FROM", "NOW", "BLOCK", 0) == "QUEUED"
    assert reader.call("EXEC") == [[token(cid, 1).encode(), []]]
    # So does a script's call.
    script = "return redis.call('ICHANGES', 'c', 'FROM', 'NOW', 'BLOCK', 0)"
    assert reader.call("EVAL", script, 0) == [token(cid, 1).encode(), []]
    # A client that disconnects while blocked leaves nothing behind.
    gone = connect()
    block(gone, writer, "ICHANGES", "c", "FROM", "NOW", "BLOCK", 0)
    gone.close()
    wait_blocked(writer, 0)
    put(writer, "c", "d", "{}")
    assert changes(writer, "c", "FROM", token(cid, 1))[0] == token(cid, 2)


def test_shutdown_with_a_blocked_reader_is_clean(start_server):
    srv = start_server(options={"threads": 2})
    reader, writer = srv.client(), srv.client()
    put(writer, "c", "a", "{}")
    block(reader, writer, "ICHANGES", "c", "FROM", "NOW", "BLOCK", 0)
    writer.close()
    srv.stop()  # fails unless the server exits cleanly
    srv.expected_exit = True  # the fixture's own stop then has nothing to do
    assert reader.at_eof()
    reader.close()


# ---- request units -------------------------------------------------------------------------


def test_reading_costs_one_ru_per_started_kib_returned(raw):
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    _, docs = changes(raw, "c")
    assert (docs, lastcharge(raw)) == ([], b"1")  # an empty read costs 1, like any query
    put(raw, "c", "small", "{}")
    _, docs = changes(raw, "c")
    assert lastcharge(raw) == b"1"
    body = '{"v":"' + "x" * 900 + '"}'
    for n in range(3):
        put(raw, "c", f"i{n}", body)
    _, docs = changes(raw, "c")
    total = sum(len(d) for d in docs)
    assert 3 * 1024 < total < 4 * 1024, total  # four documents over three KiB
    assert lastcharge(raw) == b"4" == query_ru(docs)
    _, docs = changes(raw, "c", "COUNT", 1)
    assert lastcharge(raw) == b"1"
    assert raw.call("ICHANGES", "c", "COUNT", 0) == NOT_POSITIVE
    assert lastcharge(raw) == b"1"  # a rejected request


def test_a_container_over_its_own_budget_is_throttled(raw, frozen):
    advance(raw, 1000 - server_ms(raw) % 1000)
    put(raw, "c", "a", "{}")
    assert raw.call("CSETRU", "c", 10) == "OK"
    raw.call("IPUT", "c", "b", "{}")  # 5 RU
    raw.call("IPUT", "c", "e", "{}")  # 10: the second is spent
    reply = raw.call("ICHANGES", "c")
    assert isinstance(reply, E) and reply.message.startswith("THROTTLED Request rate is large."), reply
    advance(raw, 1000)
    assert len(changes(raw, "c")[1]) == 3


# ---- bad input ------------------------------------------------------------------------------


def test_bad_input_gets_exact_errors_and_changes_nothing(raw):
    put(raw, "c", "a", "{}")
    cid = container_id(raw, "c")
    before = (raw.call("CLIST"), changes(raw, "c"))
    cases = [
        (("ICHANGES",), arity("ichanges")),
        (("ICHANGES", "nope"), E("ERR no such container 'nope'")),
        (("ICHANGES", "nope", "BLOCK", 100), E("ERR no such container 'nope'")),
        (("ICHANGES", "a/b"), INVALID_NAME),
        (("ICHANGES", "c", "FROM"), SYNTAX),
        (("ICHANGES", "c", "FROM", "yesterday"), invalid_token("yesterday")),
        (("ICHANGES", "c", "FROM", "5"), invalid_token("5")),
        (("ICHANGES", "c", "FROM", "0-1"), invalid_token("0-1")),
        (("ICHANGES", "c", "FROM", f"{cid}-01"), invalid_token(f"{cid}-01")),
        (("ICHANGES", "c", "FROM", f"{cid}--1"), invalid_token(f"{cid}--1")),
        (("ICHANGES", "c", "FROM", f"{cid}-1x"), invalid_token(f"{cid}-1x")),
        (("ICHANGES", "c", "FROM", f"{cid}-99999999999999999999"), invalid_token(f"{cid}-99999999999999999999")),
        (("ICHANGES", "c", "FROM", f"{cid}-2"),
         E(f"ERR change feed token '{cid}-2' is ahead of container 'c', whose newest token is '{cid}-1'")),
        (("ICHANGES", "c", "COUNT", "x"), NOT_INT),
        (("ICHANGES", "c", "COUNT", 0), NOT_POSITIVE),
        (("ICHANGES", "c", "COUNT", -3), NOT_POSITIVE),
        (("ICHANGES", "c", "BLOCK", "1.5"), E("ERR timeout is not an integer or out of range")),
        (("ICHANGES", "c", "BLOCK", -1), E("ERR timeout is negative")),
        (("ICHANGES", "c", "COUNT", 1, "COUNT", 2), SYNTAX),
        (("ICHANGES", "c", "FROM", "NOW", "FROM", "NOW"), SYNTAX),
        (("ICHANGES", "c", "BLOCK", 1, "BLOCK", 1), SYNTAX),
        (("ICHANGES", "c", "LIMIT", 1), SYNTAX),
        (("ICHANGES", "c", "COUNT"), SYNTAX),
    ]
    for command, error in cases:
        assert raw.call(*command) == error, command
        assert lastcharge(raw) == b"1", command
        assert (raw.call("CLIST"), changes(raw, "c")) == before, command
