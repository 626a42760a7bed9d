"""Containers and JSON items (issue 4, DESIGN.md §1) against the real server, over TCP, with
redis-py and the raw RESP client, on 1, 2 and 4 threads.

Why these exist beside tests/server/container_commands_test.cc: those drive the command table
with a manual clock inside one process. Here the items of one container really live on
different shards, connections really sit on different threads (they are handed out round
robin), settings must travel between them, and time is the server's own clock. Every command
and every error a user can send is checked with its exact reply, and every rejected request
is followed by reads (CLIST, CGETTTL, ICOUNT, a full ISCAN) proving that nothing changed.

Time: the tests that depend on it stop the server clock (DEBUG FREEZE-CLOCK 1, undone in the
fixture's teardown) so that DEBUG ADVANCE moves it exactly and every read runs at the
millisecond the test chose. No assertion depends on how long anything takes; the one test
that waits (for background reclamation) polls CINFO with a generous cap. Where a test needs items
that are expired but still stored (OFF bringing them back, CINFO figures), background
reclamation is paused with DEBUG SET-ACTIVE-EXPIRE 0; note that IGET, ITTL, IPTTL, IDEL and
IPUT reclaim an expired item they meet, while ICOUNT, ISCAN and CINFO only look.

Container names follow the item id rule (1 to 255 bytes of UTF-8 without / \\ ? #): every
command that names a container checks it first (test_invalid_container_names_are_refused).
"""
import json
import re
import time

import pytest
import redis

from lapse_harness import RespError as E
from redis_errors import NOT_INT, SYNTAX, arity
from lapse_harness import server_ms

pytestmark = pytest.mark.lapse_only

INVALID_CURSOR = E("ERR invalid cursor")
NOT_OBJECT = E("ERR the item must be a JSON object")
ID_MISMATCH = E("ERR the item's \"id\" property must be a string equal to the id argument")
TOO_LARGE = E("ERR the item is larger than the maximum of 2097152 bytes")
INVALID_ID = E("ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'")
TTL_TAIL = ("' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', "
            "or '-1' which means never expire.")
MAX_ITEM = 2 * 1024 * 1024
ETAG = re.compile(rb"[0-9a-f]{16}")

CINFO_FIELDS = ["ru_per_second", "ru_user_total", "ru_reclaim_total", "ru_throttled_requests", "reclaim_backlog",
                "reclaim_lag_p50_ms", "reclaim_lag_p99_ms", "reclaim_lag_max_ms", "default_ttl", "live_items",
                "stored_items", "expired_unreclaimed", "reclaimed_total", "reclaimed_background_total",
                "reclaimed_lazy_total", "oldest_unreclaimed_ms", "evictable", "evicted_items_total"]


def ttl_error(value):
    return E("ERR The input ttl '" + value + TTL_TAIL)


# ---- helpers ---------------------------------------------------------------------------


def put(raw, container, item_id, body, *options):
    """IPUT expecting success; returns the new etag."""
    reply = raw.call("IPUT", container, item_id, body, *options)
    assert isinstance(reply, bytes) and ETAG.fullmatch(reply), reply
    return reply.decode()


def doc_text(item_id, members, ts_ms, etag):
    """What IGET returns for an item whose stored members are `members`, written at ts_ms."""
    inner = f",{members}" if members else ""
    return f'{{"id":{json.dumps(item_id, ensure_ascii=False)}{inner},"_ts":{ts_ms // 1000},"_etag":"{etag}"}}'.encode()


def scan_all(raw, container, *options):
    """A full ISCAN iteration; every document seen, repeats included."""
    docs, cursor = [], b"0"
    for _ in range(100000):
        reply = raw.call("ISCAN", container, cursor, *options)
        assert isinstance(reply, list) and len(reply) == 2, reply
        cursor, page = reply
        assert isinstance(page, list), reply
        docs += page
        if cursor == b"0":
            return docs
    pytest.fail("ISCAN never returned cursor 0")


def ids_of(docs):
    return sorted(json.loads(d)["id"] for d in docs)


def scan_ids(raw, container, *options):
    return ids_of(scan_all(raw, container, *options))


def state(raw, *containers):
    """Everything a client can see of these containers without reclaiming anything."""
    snap = {"CLIST": raw.call("CLIST")}
    for c in containers:
        snap[c] = {"CGETTTL": raw.call("CGETTTL", c), "ICOUNT": raw.call("ICOUNT", c),
                   "ISCAN": sorted(scan_all(raw, c, "COUNT", 1000))}
    return snap


def assert_rejected(raw, command, error, *containers):
    """The command gets exactly `error` (None: nil, a condition not met) and nothing visible
    changes in these containers or in CLIST."""
    before = state(raw, *containers)
    assert raw.call(*command) == error, command
    assert state(raw, *containers) == before, command


def cinfo(raw, container):
    reply = raw.call("CINFO", container)
    if isinstance(reply, dict):
        return {k.decode(): v for k, v in reply.items()}
    assert isinstance(reply, list) and len(reply) == 2 * len(CINFO_FIELDS), reply
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def advance(raw, ms):
    assert raw.call("DEBUG", "ADVANCE", ms) == "OK"


@pytest.fixture
def frozen(clean, raw):
    """The server clock stands still (DEBUG ADVANCE still moves it): each read runs at exactly
    the millisecond the test chose. Thawed in teardown, even when the test fails, because the
    server is shared by the whole module."""
    assert raw.call("DEBUG", "FREEZE-CLOCK", 1) == "OK"
    yield
    with clean.client() as c:
        assert c.call("DEBUG", "FREEZE-CLOCK", 0) == "OK"


@pytest.fixture
def lazy(clean, raw):
    """Background reclamation paused, so expired items stay stored until a read meets them."""
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 0) == "OK"
    yield
    with clean.client() as c:
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1) == "OK"


@pytest.fixture(params=[True, False], ids=["active-expire", "lazy-only"])
def active(request, clean, raw):
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1 if request.param else 0) == "OK"
    yield request.param
    with clean.client() as c:
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1) == "OK"


# ---- the commands with redis-py -----------------------------------------------------------


def test_readme_walkthrough_with_redis_py(r, frozen):
    """The README's example, as an application would write it with redis-py."""
    assert r.execute_command("CSETTTL", "sessions", 3600) == "OK"
    etag = r.execute_command("IPUT", "sessions", "u1", '{"user":"ann"}')
    assert re.fullmatch("[0-9a-f]{16}", etag)
    assert re.fullmatch("[0-9a-f]{16}", r.execute_command("IPUT", "sessions", "u2", '{"user":"bob","ttl":60}'))
    item = json.loads(r.execute_command("IGET", "sessions", "u1"))
    assert item == {"id": "u1", "user": "ann", "_ts": item["_ts"], "_etag": etag}
    assert item["_ts"] == r.time()[0]
    assert r.execute_command("ITTL", "sessions", "u2") == 60
    assert r.execute_command("ITTL", "sessions", "u1") == 3600
    assert r.execute_command("CGETTTL", "sessions") == 3600
    assert r.execute_command("CLIST") == ["sessions"]
    assert r.execute_command("ICOUNT", "sessions") == 2
    cursor, docs = r.execute_command("ISCAN", "sessions", 0, "COUNT", 100)
    assert cursor == "0"
    assert sorted(json.loads(d)["user"] for d in docs) == ["ann", "bob"]
    assert r.execute_command("CSETTTL", "sessions", "OFF") == "OK"
    assert r.execute_command("CGETTTL", "sessions") is None
    assert r.execute_command("ITTL", "sessions", "u2") == -1
    assert r.execute_command("IDEL", "sessions", "u1", "u2", "u3") == 2
    assert r.execute_command("IGET", "sessions", "u1") is None
    assert r.execute_command("CDROP", "sessions") == 1
    assert r.execute_command("CLIST") == []


def test_redis_py_errors_carry_the_exact_text(r):
    r.execute_command("IPUT", "c", "a", '{"v":1}')
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CSETTTL", "c", 0)
    assert str(e.value) == ttl_error("0").message[len("ERR "):]
    with pytest.raises(redis.ResponseError, match=r"^The input ttl 'true' is invalid\."):
        r.execute_command("IPUT", "c", "a", '{"ttl":true}')
    with pytest.raises(redis.ResponseError, match="^the item must be a JSON object$"):
        r.execute_command("IPUT", "c", "a", "[]")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'iget' command$"):
        r.execute_command("IGET", "c")
    with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
        r.execute_command("ISCAN", "c", "x")
    assert json.loads(r.execute_command("IGET", "c", "a"))["v"] == 1
    assert r.execute_command("CGETTTL", "c") is None


def test_redis_py_pipeline_keeps_replies_in_order(r):
    """Item commands of many shards in one pipeline, errors in their place."""
    pipe = r.pipeline(transaction=False)
    pipe.execute_command("CSETTTL", "c", 100)
    for i in range(50):
        pipe.execute_command("IPUT", "c", f"i{i}", f'{{"n":{i}}}')
    pipe.execute_command("IPUT", "c", "bad", '{"ttl":0}')
    for i in range(50):
        pipe.execute_command("IGET", "c", f"i{i}")
    pipe.execute_command("ICOUNT", "c")
    replies = pipe.execute(raise_on_error=False)
    assert replies[0] == "OK"
    assert all(re.fullmatch("[0-9a-f]{16}", e) for e in replies[1:51])
    assert isinstance(replies[51], redis.ResponseError)
    assert str(replies[51]).startswith("The input ttl '0' is invalid.")
    for i, d in enumerate(replies[52:102]):
        item = json.loads(d)
        assert (item["id"], item["n"], item["_etag"]) == (f"i{i}", i, replies[1 + i])
    assert replies[102] == 50


# ---- IPUT / IGET: the stored document -----------------------------------------------------


def test_iget_returns_members_exactly_as_written(raw, frozen):
    now = server_ms(raw)
    members = ('"name":"caf\\u00e9 日本","n":1e3,"z":-0,"big":12345678901234567890,'
               '"nested":{"a":[1,{"b":null}],"_ts":5},"s":"a , b }","ttl":60')
    etag = put(raw, "c", "a", "{" + members + "}")
    assert raw.call("IGET", "c", "a") == doc_text("a", members, now, etag)
    # Whitespace between top-level members goes, whitespace inside values stays.
    etag = put(raw, "c", "w", ' {\n "a" : 1 ,\t"b":[ 2, 3 ] } ')
    assert raw.call("IGET", "c", "w") == doc_text("w", '"a" : 1,"b":[ 2, 3 ]', now, etag)
    etag = put(raw, "c", "e", "{}")
    assert raw.call("IGET", "c", "e") == doc_text("e", "", now, etag)
    assert json.loads(raw.call("IGET", "c", "a"))["nested"] == {"a": [1, {"b": None}], "_ts": 5}


def test_client_ts_and_etag_are_replaced_and_id_is_the_servers(raw, frozen):
    now = server_ms(raw)
    etag = put(raw, "c", "a", '{"_ts":1,"id":"a","v":2,"_etag":"x","_rid":"kept"}')
    assert raw.call("IGET", "c", "a") == doc_text("a", '"v":2,"_rid":"kept"', now, etag)
    # An "id" written with escapes is fine when it decodes to the argument.
    etag = put(raw, "c", "b", '{"id":"\\u0062","k":"v"}')
    assert raw.call("IGET", "c", "b") == doc_text("b", '"k":"v"', now, etag)


def test_ts_is_the_last_write_in_seconds_and_etag_changes_on_every_write_only(raw, frozen):
    advance(raw, 1000 - server_ms(raw) % 1000)  # on a whole second
    t0 = server_ms(raw)
    e1 = put(raw, "c", "a", '{"v":1}')
    advance(raw, 2345)
    assert raw.call("IGET", "c", "a") == doc_text("a", '"v":1', t0, e1)  # a read changes nothing
    assert raw.call("ITTL", "c", "a") == -1
    e2 = put(raw, "c", "a", '{"v":2}')
    assert e2 != e1
    assert raw.call("IGET", "c", "a") == doc_text("a", '"v":2', t0 + 2345, e2)
    assert json.loads(raw.call("IGET", "c", "a"))["_ts"] == t0 // 1000 + 2
    e3 = put(raw, "c", "a", '{"v":2}')  # the same body again is still a write
    assert e3 not in (e1, e2)
    etags = {put(raw, "c", f"i{i}", "{}") for i in range(100)}  # unique across shards
    assert len(etags) == 100 and not etags & {e1, e2, e3}


@pytest.mark.parametrize("item_id", ["日本", 'q"t', "a b", "tab\there", "nul\x00byte", "x" * 255, "*[x]", "é" * 127])
def test_ids_round_trip_as_json(raw, item_id):
    """Any 1..255-byte UTF-8 id without / \\ ? # works, and IGET renders it as valid JSON."""
    etag = put(raw, "c", item_id, "{}")
    item = json.loads(raw.call("IGET", "c", item_id))
    assert sorted(item) == ["_etag", "_ts", "id"]
    assert (item["id"], item["_etag"]) == (item_id, etag)
    assert scan_ids(raw, "c") == [item_id]
    assert raw.call("IDEL", "c", item_id) == 1


@pytest.mark.parametrize("item_id", [b"", b"a/b", b"a\\b", b"a?b", b"a#b", b"i" * 256, "é".encode() * 128, b"\xff",
                                     b"ok\xc3"])
def test_invalid_ids_are_rejected_and_change_nothing(raw, item_id):
    put(raw, "c", "a", '{"v":1}')
    for container in ("c", "new"):
        assert_rejected(raw, ("IPUT", container, item_id, "{}"), INVALID_ID, "c", "new")
        assert_rejected(raw, ("IPUT", container, item_id, "{}", "NX"), INVALID_ID, "c", "new")
    assert raw.call("CLIST") == [b"c"]


# ---- IPUT: every error changes nothing ----------------------------------------------------

# simdjson's own words follow "ERR the item is not valid JSON: ".
EMPTY = "Empty: no JSON found"
STRUCTURE = "The JSON document has an improper structure: missing or superfluous commas, braces, missing keys, etc."
BAD_JSON = {
    "empty": (b"", EMPTY),
    "spaces": (b" \r\n\t", EMPTY),
    "unclosed": (b"{", STRUCTURE),
    "unclosed string": (b'{"v":"a}', None),
    "trailing comma": (b'{"v":1,}', STRUCTURE),
    "single quotes": (b"{'v':1}", STRUCTURE),
    "bare word": (b"{v:1}", STRUCTURE),
    "two documents": (b"{} {}", STRUCTURE),
    "nan": (b'{"v":NaN}', STRUCTURE),
    "leading zero": (b'{"v":01}', "Problem while parsing a number"),
    "bad utf-8": (b'{"v":"\xff"}', "The input is not valid UTF-8"),
    "bad escape": (b'{"v":"\\x"}', None),
    "nul byte": (b'{"v":1}\x00', None),
}


@pytest.mark.parametrize("case", list(BAD_JSON))
def test_invalid_json_is_rejected_and_changes_nothing(raw, case):
    body, detail = BAD_JSON[case]
    put(raw, "c", "a", '{"v":1,"ttl":100}')
    for container in ("c", "new"):
        before = state(raw, "c", "new")
        reply = raw.call("IPUT", container, "a", body)
        assert isinstance(reply, E) and reply.message.startswith("ERR the item is not valid JSON: "), reply
        assert len(reply.message) > len("ERR the item is not valid JSON: ")
        if detail is not None:
            assert reply == E("ERR the item is not valid JSON: " + detail)
        assert state(raw, "c", "new") == before


@pytest.mark.parametrize("body", ["[]", "[1,2]", '"str"', "42", "-1.5", "null", "true", "false"])
def test_non_object_is_rejected_and_changes_nothing(raw, body):
    put(raw, "c", "a", '{"v":1}')
    for container in ("c", "new"):
        assert_rejected(raw, ("IPUT", container, "a", body), NOT_OBJECT, "c", "new")


@pytest.mark.parametrize("body", ['{"id":"b"}', '{"id":"A"}', '{"id":1}', '{"id":null}', '{"id":["a"]}',
                                  '{"id":"a "}', '{"v":1,"id":"b"}'])
def test_id_mismatch_is_rejected_and_changes_nothing(raw, body):
    put(raw, "c", "a", '{"v":1}')
    for container in ("c", "new"):
        assert_rejected(raw, ("IPUT", container, "a", body), ID_MISMATCH, "c", "new")
        assert_rejected(raw, ("IPUT", container, "a", body, "XX"), ID_MISMATCH, "c", "new")


def test_item_of_2mib_is_accepted_and_one_byte_more_is_rejected(raw):
    padding = MAX_ITEM - len('{"x":""}')
    body = '{"x":"' + "x" * padding + '"}'
    assert len(body) == MAX_ITEM
    etag = put(raw, "c", "big", body)
    put(raw, "c", "a", '{"v":1}')
    over = '{"x":"' + "x" * (padding + 1) + '"}'
    for container in ("c", "new"):
        assert_rejected(raw, ("IPUT", container, "a", over), TOO_LARGE, "c", "new")
        assert_rejected(raw, ("IPUT", container, "big", over), TOO_LARGE, "c", "new")
    # Rejected on size before it is parsed: not even valid JSON is needed.
    assert_rejected(raw, ("IPUT", "c", "a", "[" * (MAX_ITEM + 1)), TOO_LARGE, "c", "new")
    got = json.loads(raw.call("IGET", "c", "big"))
    assert len(got["x"]) == padding and got["_etag"] == etag


# ---- the ttl property and CSETTTL: valid values, invalid ones with the exact text -----------

ITEM_BAD_TTLS = ["0", "-2", "null", "1.5", '"10"', "true", "2147483648", "false", "1e3", "-0", "10.0", "-1.0",
                 "-2147483648", "9223372036854775808", "18446744073709551615", "[]", "{}",
                 '"-1"', "[1, 2]", "1E1"]


@pytest.mark.parametrize("value", ITEM_BAD_TTLS)
def test_invalid_item_ttl_is_rejected_with_the_exact_text(raw, frozen, value):
    put(raw, "c", "a", '{"v":1,"ttl":100}')
    assert raw.call("CGETTTL", "c") is None  # validated even while the container's TTL is off
    body = '{"v":2,"ttl":' + value + "}"
    for container in ("c", "new"):
        for options in ((), ("NX",), ("XX",)):
            assert_rejected(raw, ("IPUT", container, "a", body, *options), ttl_error(value), "c", "new")
        assert_rejected(raw, ("IPUT", container, "fresh", body), ttl_error(value), "c", "new")
    assert raw.call("CSETTTL", "c", 10) == "OK"
    assert_rejected(raw, ("IPUT", "c", "a", body), ttl_error(value), "c")
    assert raw.call("IPTTL", "c", "a") == 100_000


def test_invalid_item_ttl_text_is_the_value_as_written(raw):
    assert raw.call("IPUT", "c", "a", '{"ttl" :  0 }') == ttl_error("0")
    assert raw.call("IPUT", "c", "a", '{"ttl":"ten days"}') == ttl_error('"ten days"')
    assert raw.call("IPUT", "c", "a", '{"ttl":{"s": 1}}') == ttl_error('{"s": 1}')
    # A key written with escapes is still "ttl".
    assert raw.call("IPUT", "c", "a", '{"t\\u0074l":0}') == ttl_error("0")
    assert raw.call("CLIST") == []


@pytest.mark.parametrize("value", ["99999999999999999999", "-9223372036854775809", "1e400"])
def test_huge_item_ttl_gets_the_ttl_error(raw, value):
    assert raw.call("IPUT", "c", "a", '{"ttl":' + value + "}") == ttl_error(value)


def test_only_a_top_level_ttl_counts(raw, frozen):
    """A nested "ttl" or a "TTL" is ordinary data: not validated, no effect on expiry."""
    assert raw.call("CSETTTL", "c", 10) == "OK"
    put(raw, "c", "a", '{"nested":{"ttl":0},"TTL":-5,"list":[{"ttl":"x"}]}')
    assert raw.call("IPTTL", "c", "a") == 10_000
    assert json.loads(raw.call("IGET", "c", "a"))["nested"] == {"ttl": 0}


@pytest.mark.parametrize("body,name", [('{"ttl":5,"ttl":6}', "ttl"), ('{"id":"a","id":"a"}', "id"),
                                       ('{"v":1,"w":2,"v":1}', "v"), ('{"\\u0076":1,"v":2}', "v")])
def test_duplicate_properties_are_rejected(raw, body, name):
    """A top-level property given twice is refused (which one would count?), nothing written;
    nested duplicates are the client's data, and the server's own _ts/_etag are dropped anyway."""
    put(raw, "c", "a", '{"v":1}')
    assert_rejected(raw, ("IPUT", "c", "a", body), E(f"ERR the item has the property '{name}' more than once"), "c")
    put(raw, "c", "b", '{"in":{"d":1,"d":2},"_ts":1,"_ts":2}')
    assert json.loads(raw.call("IGET", "c", "b").replace(b'"d":1,', b''))["in"] == {"d": 2}


def test_numbers_beyond_64_bits_are_kept_as_written(raw):
    put(raw, "c", "a", '{"big":99999999999999999999,"huge":1e400}')
    assert b'"big":99999999999999999999,"huge":1e400' in raw.call("IGET", "c", "a")


@pytest.mark.parametrize("value", ["1", "-1", "2147483647", "60"])
def test_valid_item_ttls(raw, frozen, value):
    assert raw.call("CSETTTL", "c", -1) == "OK"
    put(raw, "c", "a", '{"ttl":' + value + "}")
    assert json.loads(raw.call("IGET", "c", "a"))["ttl"] == int(value)
    assert raw.call("ITTL", "c", "a") == int(value)


def test_csetttl_and_cgetttl_values(raw):
    assert raw.call("CGETTTL", "c") is None
    assert raw.call("CLIST") == []
    for value in ("10", "-1", "1", "2147483647"):
        assert raw.call("CSETTTL", "c", value) == "OK"
        assert raw.call("CGETTTL", "c") == int(value)
    for off in ("OFF", "off", "Off", "oFf", "NULL", "null", "Null", "nUlL"):
        assert raw.call("CSETTTL", "c", 7) == "OK"
        assert raw.call("CSETTTL", "c", off) == "OK"
        assert raw.call("CGETTTL", "c") is None
    assert raw.call("CLIST") == [b"c"]  # OFF keeps the container
    assert raw.call("CSETTTL", "fresh", "OFF") == "OK"  # CSETTTL creates, with the setting given
    assert raw.call("CSETTTL", "fresh5", 5) == "OK"
    assert raw.call("CLIST") == [b"c", b"fresh", b"fresh5"]
    assert raw.call("CGETTTL", "fresh") is None
    assert raw.call("CGETTTL", "fresh5") == 5
    assert raw.call("ICOUNT", "fresh") == 0


CSETTTL_BAD = ["0", "-2", "1.5", '"10"', "true", "2147483648", "", "-0", "+5", "05", " 5", "5 ", "1e3", "10.0",
               "-1.0", "OFFF", "NUL", "of f", "abc", "99999999999999999999", "-2147483648", "0x10", "false",
               "'10'", "-01", "-1 ", "--1", "1\r\n+OK"]


@pytest.mark.parametrize("value", CSETTTL_BAD)
def test_csetttl_rejects_invalid_values_and_changes_nothing(raw, value):
    assert raw.call("CSETTTL", "c", 30) == "OK"
    put(raw, "c", "a", "{}")
    expected = ttl_error(value.replace("\r", " ").replace("\n", " "))  # CR LF cannot break the framing
    assert_rejected(raw, ("CSETTTL", "c", value), expected, "c", "new")
    assert_rejected(raw, ("CSETTTL", "new", value), expected, "c", "new")  # and creates nothing
    assert raw.call("CGETTTL", "c") == 30
    assert raw.call("CINFO", "new") is None


def test_csetttl_null_means_off_unlike_an_item_ttl_null(raw):
    """The issue lists `null` among invalid ttl values "and the same for CSETTTL", but also
    documents CSETTTL's OFF as "also NULL; any case". The server takes the explicit one:
    CSETTTL c null switches TTL off, while "ttl": null in an item is rejected."""
    assert raw.call("CSETTTL", "c", 30) == "OK"
    assert raw.call("CSETTTL", "c", "null") == "OK"
    assert raw.call("CGETTTL", "c") is None
    assert raw.call("IPUT", "c", "a", '{"ttl":null}') == ttl_error("null")


# ---- NX / XX / IFMATCH ----------------------------------------------------------------------


def test_conditions_on_a_missing_container(raw):
    """Only NX can write where there is no container, and only a write creates one."""
    assert raw.call("IPUT", "c", "a", "{}", "XX") is None
    assert raw.call("IPUT", "c", "a", "{}", "IFMATCH", "0001000000000001") is None
    assert raw.call("IPUT", "c", "a", "{}", "XX", "IFMATCH", "0001000000000001") is None
    assert raw.call("CLIST") == []
    put(raw, "c", "a", '{"v":1}', "NX")
    assert raw.call("CLIST") == [b"c"]
    assert raw.call("CGETTTL", "c") is None


def test_nx_xx_ifmatch(raw):
    e1 = put(raw, "c", "a", '{"v":1}', "NX")
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "NX"), None, "c")
    assert_rejected(raw, ("IPUT", "c", "b", "{}", "XX"), None, "c")
    e2 = put(raw, "c", "a", '{"v":3}', "xx")
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":4}', "IFMATCH", e1), None, "c")  # stale etag
    assert_rejected(raw, ("IPUT", "c", "zz", '{"v":4}', "IFMATCH", e2), None, "c")  # another item's etag
    e3 = put(raw, "c", "a", '{"v":5}', "ifmatch", e2)
    e4 = put(raw, "c", "a", '{"v":6}', "XX", "IFMATCH", e3)
    e5 = put(raw, "c", "a", '{"v":7}', "IFMATCH", e4, "xX")
    assert len({e1, e2, e3, e4, e5}) == 5
    item = json.loads(raw.call("IGET", "c", "a"))
    assert (item["v"], item["_etag"]) == (7, e5)


@pytest.mark.parametrize("etag", ["", "not-an-etag", "0", "00010000000000000", "000100000000000g", "-1"])
def test_ifmatch_with_a_malformed_etag_matches_nothing(raw, etag):
    put(raw, "c", "a", '{"v":1}')
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "IFMATCH", etag), None, "c")


def test_ifmatch_etag_is_compared_exactly(raw):
    e = put(raw, "c", "a", '{"v":1}')
    for _ in range(32):  # etags count up in hex: soon one has a letter
        if e.upper() != e:
            break
        e = put(raw, "c", "a", '{"v":1}')
    assert e.upper() != e
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "IFMATCH", e.upper()), None, "c")
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "IFMATCH", e + " "), None, "c")
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "IFMATCH", "0" + e[:-1]), None, "c")
    put(raw, "c", "a", '{"v":2}', "IFMATCH", e)


def test_nx_with_ifmatch_is_a_syntax_error(raw):
    """NX wants no live item, IFMATCH a live one: they could never both hold, so the pair is
    refused like NX XX."""
    e = put(raw, "c", "a", '{"v":1}')
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "IFMATCH", e, "NX"), SYNTAX, "c")
    assert_rejected(raw, ("IPUT", "c", "a", '{"v":2}', "NX", "IFMATCH", e), SYNTAX, "c")
    assert_rejected(raw, ("IPUT", "c", "new", '{"v":2}', "NX", "IFMATCH", e), SYNTAX, "c", "new")


@pytest.mark.parametrize("options", [("NX", "XX"), ("XX", "NX"), ("NX", "NX"), ("XX", "XX"), ("IFMATCH",),
                                     ("XX", "IFMATCH"), ("IFMATCH", "0001000000000000", "IFMATCH", "0001000000000000"),
                                     ("EX", "10"), ("FOO",), ("",), ("NX", "FOO")])
def test_bad_option_combinations_are_syntax_errors(raw, options):
    put(raw, "c", "a", '{"v":1}')
    for container in ("c", "new"):
        assert_rejected(raw, ("IPUT", container, "a", '{"v":2}', *options), SYNTAX, "c", "new")
    # Options are read before the body.
    assert_rejected(raw, ("IPUT", "c", "a", "not json", *options), SYNTAX, "c", "new")


def test_expired_item_counts_as_absent_for_every_condition(raw, frozen):
    assert raw.call("CSETTTL", "c", 5) == "OK"
    e = put(raw, "c", "x", '{"v":1}')
    advance(raw, 5000)
    assert raw.call("IPUT", "c", "x", '{"v":2}', "XX") is None
    assert raw.call("IPUT", "c", "x", '{"v":2}', "IFMATCH", e) is None
    assert raw.call("IGET", "c", "x") is None
    put(raw, "c", "y", '{"v":1}')
    advance(raw, 4999)
    assert raw.call("IPUT", "c", "y", '{"v":2}', "NX") is None  # still live at the last millisecond
    advance(raw, 1)
    now = server_ms(raw)
    e = put(raw, "c", "y", '{"fresh":true}', "NX")
    assert raw.call("IGET", "c", "y") == doc_text("y", '"fresh":true', now, e)
    assert raw.call("IPTTL", "c", "y") == 5000


# ---- arity ------------------------------------------------------------------------------

ARITY = [("CSETTTL", "c"), ("CSETTTL", "c", "1", "2"), ("CGETTTL",), ("CGETTTL", "c", "d"), ("CLIST", "x"),
         ("CDROP",), ("CDROP", "c", "d"), ("CINFO",), ("CINFO", "c", "d"), ("IPUT", "c"), ("IPUT", "c", "a"),
         ("IGET", "c"), ("IGET", "c", "a", "b"), ("IDEL", "c"), ("ITTL", "c"), ("ITTL", "c", "a", "b"),
         ("IPTTL", "c"), ("IPTTL", "c", "a", "b"), ("ICOUNT",), ("ICOUNT", "c", "d"), ("ISCAN", "c"), ("Iget", "c"),
         ("csetttl", "c", "OFF", "x")]


@pytest.mark.parametrize("command", ARITY, ids=lambda c: " ".join(c))
def test_wrong_arity_changes_nothing(raw, command):
    assert raw.call("CSETTTL", "c", 100) == "OK"
    put(raw, "c", "a", '{"v":1}')
    assert_rejected(raw, command, arity(command[0].lower()), "c")
    assert json.loads(raw.call("IGET", "c", "a"))["v"] == 1


def test_command_names_are_case_insensitive(raw):
    assert raw.call("csetttl", "c", 10) == "OK"
    put(raw, "c", "a", "{}")
    assert raw.call("Iget", "c", "a") is not None
    assert raw.call("icount", "c") == 1
    assert raw.call("iScAn", "c", 0)[0] == b"0"
    assert raw.call("cgetttl", "c") == 10
    assert raw.call("idel", "c", "a") == 1


# ---- IDEL / ITTL / IPTTL ------------------------------------------------------------------


def test_idel_counts_only_live_items(raw, frozen, lazy):
    assert raw.call("IDEL", "c", "a") == 0
    assert raw.call("CSETTTL", "c", 10) == "OK"
    for i in range(20):
        put(raw, "c", f"i{i}", "{}" if i % 2 else '{"ttl":-1}')
    advance(raw, 10_000)  # the odd ones expire
    ids = [f"i{i}" for i in range(20)] + ["missing", "i0", "a/b"]
    assert raw.call("IDEL", "c", *ids) == 10
    assert raw.call("ICOUNT", "c") == 0
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    assert raw.call("ICOUNT", "c") == 0  # IDEL reclaimed the expired ones: OFF does not revive them
    assert cinfo(raw, "c")["stored_items"] == 0
    assert raw.call("IDEL", "nocontainer", "x") == 0
    assert raw.call("CLIST") == [b"c"]  # IDEL creates nothing


def test_ittl_and_ipttl_follow_the_current_setting(raw, frozen):
    assert raw.call("ITTL", "c", "a") == -2
    assert raw.call("IPTTL", "c", "a") == -2
    put(raw, "c", "inherit", "{}")
    put(raw, "c", "own", '{"ttl":30}')
    put(raw, "c", "pinned", '{"ttl":-1}')
    for item in ("inherit", "own", "pinned"):  # OFF: nothing expires
        assert raw.call("ITTL", "c", item) == -1
        assert raw.call("IPTTL", "c", item) == -1
    assert raw.call("CSETTTL", "c", -1) == "OK"
    assert raw.call("ITTL", "c", "inherit") == -1
    assert raw.call("IPTTL", "c", "own") == 30_000
    assert raw.call("ITTL", "c", "own") == 30
    assert raw.call("CSETTTL", "c", 10) == "OK"
    assert raw.call("IPTTL", "c", "inherit") == 10_000
    assert raw.call("ITTL", "c", "pinned") == -1
    advance(raw, 2600)
    assert raw.call("IPTTL", "c", "inherit") == 7400
    assert raw.call("ITTL", "c", "inherit") == 7  # rounded, as Redis's TTL
    assert raw.call("IPTTL", "c", "own") == 27_400
    assert raw.call("CSETTTL", "c", 100) == "OK"
    assert raw.call("IPTTL", "c", "inherit") == 97_400
    assert raw.call("CSETTTL", "c", 3) == "OK"
    assert raw.call("IPTTL", "c", "inherit") == 400
    assert raw.call("ITTL", "c", "inherit") == 0
    advance(raw, 399)
    assert raw.call("IPTTL", "c", "inherit") == 1
    advance(raw, 1)
    assert raw.call("IPTTL", "c", "inherit") == -2
    assert raw.call("ITTL", "c", "inherit") == -2
    assert raw.call("ITTL", "nocontainer", "inherit") == -2


# ---- the TTL matrix, end to end, to the millisecond --------------------------------------

MATRIX_CONTAINERS = {"off": "OFF", "minus": "-1", "ten": "10"}
MATRIX_ITEMS = {"none": "{}", "pinned": '{"ttl":-1}', "four": '{"ttl":4}', "fifteen": '{"ttl":15}'}
# Seconds after the write at which each (container, item) expires; None: never (DESIGN.md §1).
MATRIX = {
    ("off", "none"): None, ("off", "pinned"): None, ("off", "four"): None, ("off", "fifteen"): None,
    ("minus", "none"): None, ("minus", "pinned"): None, ("minus", "four"): 4, ("minus", "fifteen"): 15,
    ("ten", "none"): 10, ("ten", "pinned"): None, ("ten", "four"): 4, ("ten", "fifteen"): 15,
}


def check_matrix_at(raw, t, etags, written):
    """Every read surface agrees with the matrix `t` ms after the write. Looks first
    (ICOUNT, ISCAN, CINFO), then reads item by item (which may reclaim expired items)."""
    for c in MATRIX_CONTAINERS:
        live = sorted(i for i in MATRIX_ITEMS if MATRIX[c, i] is None or t < MATRIX[c, i] * 1000)
        assert raw.call("ICOUNT", c) == len(live), (c, t)
        assert scan_ids(raw, c) == live, (c, t)
        assert scan_ids(raw, c, "COUNT", 1) == live, (c, t)
        assert cinfo(raw, c)["live_items"] == len(live), (c, t)
    for (c, i), ttl in MATRIX.items():
        if ttl is None:
            pttl = -1
        else:
            pttl = ttl * 1000 - t if t < ttl * 1000 else -2
        assert raw.call("IPTTL", c, i) == pttl, (c, i, t)
        assert raw.call("ITTL", c, i) == (pttl if pttl < 0 else (pttl + 500) // 1000), (c, i, t)
        body = MATRIX_ITEMS[i][1:-1]
        expected = None if pttl == -2 else doc_text(i, body, written, etags[c, i])
        assert raw.call("IGET", c, i) == expected, (c, i, t)


def test_ttl_matrix_at_the_millisecond(raw, frozen, active):
    for c, setting in MATRIX_CONTAINERS.items():
        assert raw.call("CSETTTL", c, setting) == "OK"
    written = server_ms(raw)
    etags = {(c, i): put(raw, c, i, body) for c in MATRIX_CONTAINERS for i, body in MATRIX_ITEMS.items()}
    t = 0
    for step in (0, 3999, 4000, 9999, 10_000, 14_999, 15_000, 10 ** 9):
        advance(raw, step - t)
        t = step
        assert server_ms(raw) == written + t
        check_matrix_at(raw, t, etags, written)


def test_max_item_ttl_and_dttl_are_kept_exactly(raw, frozen):
    assert raw.call("CSETTTL", "c", 2147483647) == "OK"
    put(raw, "c", "inherit", "{}")
    put(raw, "c", "own", '{"ttl":2147483647}')
    assert raw.call("IPTTL", "c", "inherit") == 2147483647000
    assert raw.call("IPTTL", "c", "own") == 2147483647000
    assert raw.call("ITTL", "c", "own") == 2147483647


# ---- transitions, writes and reads ----------------------------------------------------------


def test_lowering_the_default_hides_old_items_at_once(raw, frozen, lazy):
    assert raw.call("CSETTTL", "c", 100) == "OK"
    for i in range(16):
        put(raw, "c", f"old{i}", "{}")
    advance(raw, 50_000)
    for i in range(16):
        put(raw, "c", f"young{i}", "{}")
    assert raw.call("ICOUNT", "c") == 32
    assert raw.call("CSETTTL", "c", 50) == "OK"  # the old ones are exactly 50 s old
    assert raw.call("ICOUNT", "c") == 16
    assert scan_ids(raw, "c") == sorted(f"young{i}" for i in range(16))
    info = cinfo(raw, "c")
    assert (info["live_items"], info["stored_items"], info["expired_unreclaimed"]) == (16, 32, 16)
    assert info["oldest_unreclaimed_ms"] == 0  # expired at this very millisecond
    assert raw.call("IGET", "c", "old3") is None
    assert raw.call("IPTTL", "c", "young3") == 50_000
    # Raising it again shows the old ones not yet reclaimed (old3 was, by the IGET).
    assert raw.call("CSETTTL", "c", 51) == "OK"
    assert raw.call("ICOUNT", "c") == 31
    assert raw.call("IPTTL", "c", "old4") == 1000


def test_off_brings_back_expired_unreclaimed_items_and_on_hides_them_again(raw, frozen, lazy):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    put(raw, "c", "old", "{}")
    put(raw, "c", "own", '{"ttl":5}')
    put(raw, "c", "reclaimed", "{}")
    advance(raw, 6000)
    put(raw, "c", "young", "{}")
    assert scan_ids(raw, "c") == ["old", "reclaimed", "young"]  # own expired
    assert raw.call("CSETTTL", "c", 3) == "OK"
    assert scan_ids(raw, "c") == ["young"]
    assert raw.call("IGET", "c", "reclaimed") is None  # met expired: reclaimed on the spot
    # OFF: every expired item still stored is back, own ttl or not, and nothing expires.
    assert raw.call("CSETTTL", "c", "off") == "OK"
    assert scan_ids(raw, "c") == ["old", "own", "young"]
    assert raw.call("ICOUNT", "c") == 3
    assert json.loads(raw.call("IGET", "c", "own"))["ttl"] == 5
    assert raw.call("ITTL", "c", "own") == -1
    assert raw.call("IGET", "c", "reclaimed") is None
    advance(raw, 1_000_000)
    assert raw.call("ICOUNT", "c") == 3
    info = cinfo(raw, "c")
    assert (info["live_items"], info["expired_unreclaimed"], info["default_ttl"]) == (3, 0, None)
    # On again: everything past its time vanishes at once.
    assert raw.call("CSETTTL", "c", 60) == "OK"
    assert raw.call("ICOUNT", "c") == 0
    assert scan_all(raw, "c") == []
    assert cinfo(raw, "c")["expired_unreclaimed"] == 3
    for item in ("old", "own", "young"):
        assert raw.call("IGET", "c", item) is None
    assert raw.call("IDEL", "c", "old", "own", "young") == 0


def test_off_suspends_expiry_and_on_resumes_it_from_the_last_write(raw, frozen, lazy):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    put(raw, "c", "inherit", "{}")
    put(raw, "c", "own", '{"ttl":20}')
    advance(raw, 5000)
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    advance(raw, 4000)
    assert raw.call("CSETTTL", "c", 10) == "OK"  # deadlines count from the write, not from ON
    assert raw.call("IPTTL", "c", "inherit") == 1000
    assert raw.call("IPTTL", "c", "own") == 11_000
    assert raw.call("CSETTTL", "c", -1) == "OK"
    assert raw.call("IPTTL", "c", "inherit") == -1
    assert raw.call("IPTTL", "c", "own") == 11_000


def test_a_write_resets_the_countdown_and_a_read_does_not(raw, frozen):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    put(raw, "c", "a", '{"v":1}')
    put(raw, "c", "b", '{"v":1,"ttl":8}')
    advance(raw, 6000)
    for _ in range(3):  # reads of every kind
        raw.call("IGET", "c", "a")
        raw.call("ITTL", "c", "a")
        raw.call("ICOUNT", "c")
        scan_all(raw, "c")
        raw.call("CINFO", "c")
    assert raw.call("IPTTL", "c", "a") == 4000
    assert raw.call("IPTTL", "c", "b") == 2000
    put(raw, "c", "b", '{"v":2,"ttl":8}', "XX")  # a conditional write resets it as well
    assert raw.call("IPTTL", "c", "b") == 8000
    advance(raw, 3999)
    assert raw.call("IPTTL", "c", "a") == 1
    e = put(raw, "c", "a", '{"v":2}', "IFMATCH", json.loads(raw.call("IGET", "c", "a"))["_etag"])
    assert raw.call("IPTTL", "c", "a") == 10_000
    advance(raw, 9999)
    assert json.loads(raw.call("IGET", "c", "a"))["_etag"] == e
    advance(raw, 1)
    assert raw.call("IGET", "c", "a") is None
    assert raw.call("IGET", "c", "b") is None  # 8 s after its rewrite


def test_removing_ttl_makes_an_item_inherit_and_minus_one_pins_it(raw, frozen):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    put(raw, "c", "a", '{"ttl":100}')
    assert raw.call("IPTTL", "c", "a") == 100_000
    advance(raw, 1000)
    put(raw, "c", "a", "{}")
    assert raw.call("IPTTL", "c", "a") == 10_000
    assert "ttl" not in json.loads(raw.call("IGET", "c", "a"))
    put(raw, "c", "a", '{"ttl":-1}')
    assert raw.call("IPTTL", "c", "a") == -1
    advance(raw, 10 ** 7)
    assert json.loads(raw.call("IGET", "c", "a"))["ttl"] == -1
    put(raw, "c", "a", '{"ttl":3}')
    assert raw.call("IPTTL", "c", "a") == 3000
    put(raw, "c", "a", '{"other":1}')
    advance(raw, 9999)
    assert raw.call("IPTTL", "c", "a") == 1
    advance(raw, 1)
    assert raw.call("IGET", "c", "a") is None


# ---- CINFO ------------------------------------------------------------------------------


def test_cinfo_resp2_is_a_flat_array_with_every_field(raw, frozen, lazy):
    assert raw.call("CINFO", "c") is None
    assert raw.call_raw("CINFO", "c") == b"$-1\r\n"
    assert raw.call("CSETTTL", "c", 10) == "OK"
    reply = raw.call("CINFO", "c")
    assert isinstance(reply, list) and len(reply) == 2 * len(CINFO_FIELDS)
    assert [k.decode() for k in reply[0::2]] == CINFO_FIELDS
    info = cinfo(raw, "c")
    assert info["default_ttl"] == 10
    assert info["ru_per_second"] is None
    assert isinstance(info["ru_user_total"], bytes)  # a double, as a bulk string in RESP2
    float(info["ru_user_total"])
    for field in ("live_items", "stored_items", "expired_unreclaimed", "reclaimed_total", "oldest_unreclaimed_ms",
                  "reclaim_backlog", "reclaimed_background_total", "reclaimed_lazy_total"):
        assert info[field] == 0, field
    for i in range(20):
        put(raw, "c", f"i{i}", "{}")
    put(raw, "c", "own", '{"ttl":3}')
    put(raw, "c", "pinned", '{"ttl":-1}')
    advance(raw, 3500)
    info = cinfo(raw, "c")
    assert (info["live_items"], info["stored_items"], info["expired_unreclaimed"]) == (21, 22, 1)
    assert info["oldest_unreclaimed_ms"] == 500
    assert info["reclaim_backlog"] == 1
    advance(raw, 7000)  # the default's items expired 500 ms ago, "own" 7.5 s ago
    info = cinfo(raw, "c")
    assert (info["live_items"], info["stored_items"], info["expired_unreclaimed"]) == (1, 22, 21)
    assert info["oldest_unreclaimed_ms"] == 7500
    assert raw.call("IGET", "c", "own") is None  # reclaimed lazily
    info = cinfo(raw, "c")
    assert (info["stored_items"], info["reclaimed_total"], info["reclaimed_lazy_total"]) == (21, 1, 1)
    assert info["oldest_unreclaimed_ms"] == 500
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    info = cinfo(raw, "c")
    assert (info["default_ttl"], info["live_items"], info["expired_unreclaimed"], info["oldest_unreclaimed_ms"]) == \
        (None, 21, 0, 0)


def test_cinfo_resp3_is_a_map(server, clean, frozen):
    with server.client() as c:
        assert isinstance(c.call("HELLO", 3), dict)
        assert c.call_raw("CINFO", "missing") == b"_\r\n"
        assert c.call_raw("CGETTTL", "missing") == b"_\r\n"
        assert c.call("CSETTTL", "c", -1) == "OK"
        put(c, "c", "a", "{}")
        assert c.call_raw("IGET", "c", "missing") == b"_\r\n"
        raw_reply = c.call_raw("CINFO", "c")
        assert raw_reply.startswith(b"%18\r\n")
        assert b"$11\r\ndefault_ttl\r\n:-1\r\n" in raw_reply
        info = c.call("CINFO", "c")
        assert isinstance(info, dict)
        assert [k.decode() for k in info] == CINFO_FIELDS
        assert info[b"live_items"] == 1 and info[b"stored_items"] == 1
        assert isinstance(info[b"ru_user_total"], float) and info[b"ru_user_total"] > 0
        assert isinstance(info[b"ru_reclaim_total"], float)
        assert info[b"ru_per_second"] is None
        assert c.call("CSETTTL", "c", "OFF") == "OK"
        assert c.call("CINFO", "c")[b"default_ttl"] is None
        assert c.call_raw("CGETTTL", "c") == b"_\r\n"
        assert c.call("ISCAN", "c", 0)[0] == b"0"
        assert c.call("CLIST") == [b"c"]


def test_cinfo_of_a_container_created_by_iput(raw):
    put(raw, "c", "a", "{}")
    info = cinfo(raw, "c")
    assert (info["default_ttl"], info["live_items"], info["stored_items"]) == (None, 1, 1)


def test_background_reclamation_frees_expired_items_without_any_read(raw, frozen):
    """With active expiry on, expired items leave the store with no client touching them; OFF
    then cannot bring them back. Polls CINFO (which only looks) until the reclaimer is done."""
    assert raw.call("CSETTTL", "c", 10) == "OK"
    for i in range(100):
        put(raw, "c", f"i{i}", "{}" if i % 10 else '{"ttl":-1}')
    for i in range(30):
        put(raw, "c", f"own{i}", '{"ttl":5}')
    advance(raw, 10_000)
    give_up = time.monotonic() + 30
    while (info := cinfo(raw, "c"))["stored_items"] > 10:
        assert time.monotonic() < give_up, f"background reclamation stalled: {info}"
        time.sleep(0.01)
    assert (info["live_items"], info["expired_unreclaimed"], info["reclaim_backlog"]) == (10, 0, 0)
    assert (info["reclaimed_total"], info["reclaimed_background_total"], info["reclaimed_lazy_total"]) == (120, 120, 0)
    assert info["oldest_unreclaimed_ms"] == 0
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    assert raw.call("ICOUNT", "c") == 10


# ---- CLIST / CDROP ------------------------------------------------------------------------


def test_clist_is_sorted_bytewise(raw):
    names = [b"b", b"a", b"C", b"aa", b"_", b"a b", b"10", b"9", "é".encode(), b"\x01"]
    for n in names:
        assert raw.call("CSETTTL", n, "OFF") == "OK"
    put(raw, "z", "x", "{}")  # IPUT creates one too
    assert raw.call("CLIST") == sorted(names + [b"z"])
    assert raw.call("CDROP", "a") == 1
    assert raw.call("CLIST") == sorted(n for n in names + [b"z"] if n != b"a")


def test_reads_create_no_container(raw):
    for command in (("CGETTTL", "c"), ("CINFO", "c"), ("IGET", "c", "a"), ("ITTL", "c", "a"), ("IPTTL", "c", "a"),
                    ("ICOUNT", "c"), ("ISCAN", "c", 0), ("IDEL", "c", "a"), ("CDROP", "c")):
        raw.call(*command)
    assert raw.call("CLIST") == []


def test_cdrop_removes_everything_at_once_for_every_reader(server, raw, lazy):
    others = [server.client() for _ in range(4)]  # round robin: every thread
    try:
        assert raw.call("CDROP", "c") == 0
        assert raw.call("CSETTTL", "c", 100) == "OK"
        for i in range(50):
            put(raw, "c", f"i{i}", f'{{"n":{i}}}')
        put(raw, "other", "i0", "{}")
        assert raw.call("CDROP", "c") == 1
        for o in others:
            assert o.call("ICOUNT", "c") == 0
            assert o.call("ISCAN", "c", 0, "COUNT", 1000) == [b"0", []]
            assert o.call("CGETTTL", "c") is None
            assert o.call("CINFO", "c") is None
            assert o.pipeline([("IGET", "c", f"i{i}") for i in range(50)]) == [None] * 50
            assert o.call("ITTL", "c", "i1") == -2
            assert o.call("IDEL", "c", "i1", "i2") == 0
            assert o.call("IPUT", "c", "i1", "{}", "XX") is None
            assert o.call("CLIST") == [b"other"]
        assert raw.call("CDROP", "c") == 0
        assert json.loads(raw.call("IGET", "other", "i0"))["id"] == "i0"
        # Re-created: empty, TTL off, none of the old items.
        put(raw, "c", "new", "{}")
        assert raw.call("CGETTTL", "c") is None
        assert scan_ids(raw, "c") == ["new"]
        assert raw.call("IGET", "c", "i3") is None
        info = cinfo(raw, "c")
        assert (info["stored_items"], info["reclaimed_total"]) == (1, 0)
    finally:
        for o in others:
            o.close()


# ---- ISCAN --------------------------------------------------------------------------------


def test_iscan_of_a_missing_or_empty_container(raw):
    assert raw.call("ISCAN", "missing", 0) == [b"0", []]
    assert raw.call("CSETTTL", "c", 10) == "OK"
    assert raw.call("ISCAN", "c", 0) == [b"0", []]
    assert raw.call_raw("ISCAN", "c", 0) == b"*2\r\n$1\r\n0\r\n*0\r\n"


@pytest.mark.parametrize("count", [None, 1, 7, 1000, 9223372036854775807])
def test_iscan_returns_every_live_item_once_and_never_expired_ones(raw, frozen, lazy, count):
    """Nothing changes during the iteration, so every live item comes back exactly once."""
    options = () if count is None else ("COUNT", count)
    assert raw.call("CSETTTL", "c", 10) == "OK"
    live, etags = set(), {}
    for i in range(300):
        item = ("a" if i % 3 == 0 else "b") + str(i)
        body = '{"ttl":5}' if i % 4 == 0 else '{"ttl":-1}' if i % 4 == 1 else f'{{"n":{i}}}'
        etags[item] = put(raw, "c", item, body)
        if i % 4 != 0:
            live.add(item)
    put(raw, "other", "a3", "{}")
    advance(raw, 5000)  # the ttl-5 items expire
    docs = scan_all(raw, "c", *options)
    assert ids_of(docs) == sorted(live)
    for d in docs:
        item = json.loads(d)
        assert item["_etag"] == etags[item["id"]]
    if count is not None and count >= 1000:
        assert raw.call("ISCAN", "c", 0, "COUNT", count)[0] == b"0"  # one call is enough
    advance(raw, 5000)  # the inheriting items expire too: only the pinned ones are left
    assert scan_ids(raw, "c", *options) == sorted(f"b{i}" if i % 3 else f"a{i}" for i in range(300) if i % 4 == 1)
    assert raw.call("CSETTTL", "c", "OFF") == "OK"
    assert len(scan_all(raw, "c", *options)) == 300


def test_iscan_match_filters_on_the_id(raw):
    for i in range(200):
        put(raw, "c", f"user:{i}", "{}")
        put(raw, "c", f"order:{i}", "{}")
    put(raw, "c", "a*b", "{}")
    assert scan_ids(raw, "c", "MATCH", "user:*") == sorted(f"user:{i}" for i in range(200))
    assert scan_ids(raw, "c", "MATCH", "user:*", "COUNT", 5) == sorted(f"user:{i}" for i in range(200))
    assert scan_ids(raw, "c", "match", "order:1?") == sorted(f"order:1{i}" for i in range(10))
    assert scan_ids(raw, "c", "COUNT", 3, "MATCH", "order:[12]5") == ["order:15", "order:25"]
    assert scan_ids(raw, "c", "MATCH", "a\\*b") == ["a*b"]
    assert scan_ids(raw, "c", "MATCH", "nothing*") == []
    assert scan_ids(raw, "c", "MATCH", "user:1", "MATCH", "user:2") == ["user:2"]  # the last one wins


def test_iscan_never_returns_an_item_after_it_expired(raw, frozen, active):
    assert raw.call("CSETTTL", "c", -1) == "OK"
    for i in range(300):
        put(raw, "c", f"s{i}" if i % 2 else f"p{i}", '{"ttl":5}' if i % 2 else "{}")
    cursor, first = raw.call("ISCAN", "c", 0, "COUNT", 5)
    assert cursor != b"0"
    advance(raw, 5000)
    seen = set(ids_of(first))
    while cursor != b"0":
        cursor, page = raw.call("ISCAN", "c", cursor, "COUNT", 5)
        later = ids_of(page)
        assert not [i for i in later if i.startswith("s")], later
        seen |= set(later)
    assert {f"p{i}" for i in range(0, 300, 2)} <= seen


def test_iscan_returns_items_live_for_the_whole_iteration_despite_writes(raw):
    stable = {f"s{i}" for i in range(200)}
    for item in stable:
        put(raw, "c", item, "{}")
    for i in range(50):
        put(raw, "c", f"gone{i}", "{}")
    assert raw.call("IDEL", "c", *[f"gone{i}" for i in range(50)]) == 50
    seen, cursor, n = [], b"0", 0
    while True:
        cursor, page = raw.call("ISCAN", "c", cursor, "COUNT", 10)
        seen += ids_of(page)
        if cursor == b"0":
            break
        for _ in range(20):  # grows the tables under the cursor
            put(raw, "c", f"n{n}", "{}")
            n += 1
        put(raw, "c", f"s{n % 200}", '{"rewritten":true}')
        if n > 40:
            raw.call("IDEL", "c", f"n{n - 40}")
    assert stable <= set(seen)
    assert not [i for i in seen if i.startswith("gone")]


ISCAN_ERRORS = [
    (("abc",), INVALID_CURSOR), (("-1",), INVALID_CURSOR), (("1.5",), INVALID_CURSOR), (("",), INVALID_CURSOR),
    ((" 0",), INVALID_CURSOR), (("18446744073709551616",), INVALID_CURSOR), (("0x10",), INVALID_CURSOR),
    (("0", "COUNT"), SYNTAX), (("0", "COUNT", "0"), SYNTAX), (("0", "COUNT", "-1"), SYNTAX),
    (("0", "COUNT", "x"), NOT_INT), (("0", "COUNT", "1.5"), NOT_INT), (("0", "COUNT", "9223372036854775808"), NOT_INT),
    (("0", "MATCH"), SYNTAX), (("0", "FOO", "1"), SYNTAX), (("0", "TYPE", "string"), SYNTAX),
    (("0", "COUNT", "10", "MATCH"), SYNTAX), (("x", "COUNT", "0"), INVALID_CURSOR),
]


@pytest.mark.parametrize("args,error", ISCAN_ERRORS, ids=[" ".join(a) for a, _ in ISCAN_ERRORS])
def test_iscan_errors(raw, args, error):
    put(raw, "c", "a", "{}")
    assert_rejected(raw, ("ISCAN", "c", *args), error, "c")
    assert raw.call("ISCAN", "missing", *args) == error
    assert raw.call("CLIST") == [b"c"]


@pytest.mark.parametrize("cursor", ["18446744073709551615", "9223372036854775807", "12345678901", "3"])
def test_iscan_with_any_numeric_cursor_answers(server, raw, cursor):
    """A cursor the server never gave out is not an error (SCAN's rule); the reply is well formed."""
    for i in range(50):
        put(raw, "c", f"i{i}", "{}")
    reply = raw.call("ISCAN", "c", cursor, "COUNT", 1000)
    assert isinstance(reply, list) and len(reply) == 2
    assert reply[0].isdigit()
    assert set(ids_of(reply[1])) <= {f"i{i}" for i in range(50)}
    server.assert_alive()


# ---- containers are not keys; FLUSHALL; names ---------------------------------------------


def test_containers_are_not_redis_keys(raw):
    put(raw, "c", "a", "{}")
    assert raw.call("CSETTTL", "d", 10) == "OK"
    assert raw.call("DBSIZE") == 0
    assert raw.call("KEYS", "*") == []
    assert raw.call("SCAN", 0) == [b"0", []]
    assert raw.call("GET", "c") is None
    assert raw.call("EXISTS", "c", "a", "d") == 0
    assert raw.call("TYPE", "c") == "none"
    assert raw.call("RANDOMKEY") is None
    assert raw.call("SET", "c", "v") == "OK"  # a key of the same name lives beside it
    assert raw.call("GET", "c") == b"v"
    assert raw.call("ICOUNT", "c") == 1
    assert raw.call("DEL", "c", "d") == 1
    assert raw.call("ICOUNT", "c") == 1
    assert raw.call("CLIST") == [b"c", b"d"]
    assert raw.call("SELECT", 5) == "OK"  # containers belong to their database (test_container_databases.py)
    assert raw.call("ICOUNT", "c") == 0
    assert raw.call("CLIST") == []
    assert raw.call("FLUSHDB") == "OK"  # database 5's: database 0's containers stay
    assert raw.call("SELECT", 0) == "OK"
    assert raw.call("ICOUNT", "c") == 1
    assert raw.call("CLIST") == [b"c", b"d"]


def test_flushall_removes_containers(raw, frozen):
    assert raw.call("CSETTTL", "c", 10) == "OK"
    put(raw, "c", "a", "{}")
    put(raw, "d", "b", '{"ttl":5}')
    assert raw.call("SET", "k", "v") == "OK"
    assert raw.call("SELECT", 3) == "OK"
    assert raw.call("FLUSHALL") == "OK"
    assert raw.call("SELECT", 0) == "OK"
    assert raw.call("CLIST") == []
    assert raw.call("IGET", "c", "a") is None
    assert raw.call("IGET", "d", "b") is None
    assert raw.call("ICOUNT", "c") == 0
    assert raw.call("CGETTTL", "c") is None
    assert raw.call("CINFO", "c") is None
    assert raw.call("DBSIZE") == 0
    put(raw, "c", "a", "{}")
    assert raw.call("CGETTTL", "c") is None  # a new container: TTL off
    advance(raw, 100_000)
    assert raw.call("ICOUNT", "c") == 1


def test_flushall_async_and_from_redis_py(r):
    r.execute_command("IPUT", "c", "a", "{}")
    assert r.flushall(asynchronous=True)
    assert r.execute_command("CLIST") == []
    assert r.execute_command("IGET", "c", "a") is None


NAMES = [b"a b", b"\x00\r\n", "日本".encode(), b"x" * 255, b"*", b"c", b"C", b"c\x00"]
BAD_NAMES = [b"", b"a/b", b"a\\b", b"a?", b"#", b"x" * 256, b"\xff", b"c\xc3"]
BAD_NAME = E("ERR invalid container name: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'")


def test_invalid_container_names_are_refused(raw):
    put(raw, "c", "a", '{"v":1}')
    for n in BAD_NAMES:
        for cmd in [("CSETTTL", n, 10), ("CGETTTL", n), ("CDROP", n), ("CINFO", n), ("CSETRU", n, 5), ("CGETRU", n),
                    ("IPUT", n, "a", "{}"), ("IGET", n, "a"), ("IDEL", n, "a", "b"), ("ITTL", n, "a"),
                    ("IPTTL", n, "a"), ("ICOUNT", n), ("ISCAN", n, 0), ("CMOVE", n, 1)]:
            assert_rejected(raw, cmd, BAD_NAME, "c")


def test_container_names_are_binary_safe_within_the_rule(raw, frozen):
    """Any UTF-8 but / \\ ? # up to 255 bytes, control characters included. Each name is its
    own container (c, C and c\\0 are three), through every command."""
    for n in NAMES:
        assert raw.call("CSETTTL", n, 10) == "OK"
        put(raw, n, "i", '{"name":' + json.dumps(n.decode(errors="replace")[:10]) + "}")
    assert raw.call("CLIST") == sorted(NAMES)
    for n in NAMES:
        assert raw.call("CGETTTL", n) == 10
        assert raw.call("ICOUNT", n) == 1
        assert ids_of(raw.call("ISCAN", n, 0)[1]) == ["i"]
        assert raw.call("IPTTL", n, "i") == 10_000
        assert json.loads(raw.call("IGET", n, "i"))["name"] == n.decode(errors="replace")[:10]
        assert cinfo(raw, n)["live_items"] == 1
    assert raw.call("IDEL", b"*", "i") == 1
    assert raw.call("ICOUNT", b"c") == 1
    for n in NAMES:
        assert raw.call("CDROP", n) == 1
    assert raw.call("CLIST") == []


def test_same_id_in_two_containers_is_two_items(raw, frozen):
    assert raw.call("CSETTTL", "short", 1) == "OK"
    put(raw, "short", "a", '{"v":"short"}')
    put(raw, "long", "a", '{"v":"long"}')
    advance(raw, 1000)
    assert raw.call("IGET", "short", "a") is None
    assert json.loads(raw.call("IGET", "long", "a"))["v"] == "long"
    assert raw.call("IDEL", "long", "a") == 1
    assert raw.call("ICOUNT", "short") == 0


# ---- settings are seen by every connection at once ------------------------------------------


def test_csetttl_is_seen_by_every_connection_at_once(server, raw, frozen, lazy):
    others = [server.client() for _ in range(8)]  # round robin: every thread, twice
    try:
        assert raw.call("CSETTTL", "c", 100) == "OK"
        ids = [f"i{i}" for i in range(16)]
        for i in ids:
            put(raw, "c", i, "{}")
        advance(raw, 50_000)
        for _ in range(5):
            assert raw.call("CSETTTL", "c", 40) == "OK"  # lowered: every item hidden
            for o in others:
                assert o.call("ICOUNT", "c") == 0
                assert o.call("ISCAN", "c", 0, "COUNT", 1000) == [b"0", []]
                assert cinfo(o, "c")["live_items"] == 0
                assert o.call("CGETTTL", "c") == 40
            assert raw.call("CSETTTL", "c", "OFF") == "OK"
            for o in others:
                assert o.pipeline([("IPTTL", "c", i) for i in ids]) == [-1] * 16
            assert raw.call("CSETTTL", "c", 60) == "OK"
            for o in others:
                assert o.pipeline([("IPTTL", "c", i) for i in ids]) == [10_000] * 16
                assert o.call("ICOUNT", "c") == 16
        # Set on one connection, read on another, in flight together.
        a, b = others[0], others[1]
        a.send("CSETTTL", "c", 50)
        assert a.read_reply() == "OK"
        assert b.pipeline([("IPTTL", "c", i) for i in ids]) == [-2] * 16
    finally:
        for o in others:
            o.close()


def test_pipelined_csetttl_applies_to_the_reads_after_it(raw, frozen, lazy):
    assert raw.call("CSETTTL", "c", 100) == "OK"
    for i in range(8):
        put(raw, "c", f"i{i}", "{}")
    advance(raw, 50_000)
    replies = raw.pipeline([("CSETTTL", "c", 60), ("IPTTL", "c", "i4"), ("CSETTTL", "c", 40), ("ICOUNT", "c"),
                            ("CSETTTL", "c", "OFF"), ("ICOUNT", "c"), ("CSETTTL", "c", 40), ("IGET", "c", "i3"),
                            ("CSETTTL", "c", 60), ("IPTTL", "c", "i3"), ("IPTTL", "c", "i5")])
    assert replies == ["OK", 10_000, "OK", 0, "OK", 8, "OK", None, "OK", -2, 10_000]


# ---- the far end of time: last in the module, it moves the shared clock ~68 years ----------


def test_max_item_ttl_expires_exactly_2147483647_seconds_after_the_write(raw, frozen, lazy):
    assert raw.call("CSETTTL", "c", -1) == "OK"
    assert raw.call("CSETTTL", "d", 2147483647) == "OK"
    put(raw, "c", "own", '{"ttl":2147483647}')
    put(raw, "d", "inherit", "{}")
    advance(raw, 2147483647000 - 1)
    assert raw.call("IPTTL", "c", "own") == 1
    assert raw.call("IPTTL", "d", "inherit") == 1
    assert raw.call("ICOUNT", "c") == 1
    advance(raw, 1)
    assert raw.call("ICOUNT", "c") == 0
    assert raw.call("ICOUNT", "d") == 0
    assert raw.call("IGET", "c", "own") is None
    assert raw.call("IGET", "d", "inherit") is None
