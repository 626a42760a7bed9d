"""MEMORY STATS and MEMORY DOCTOR (issue 18): Redis 7.0's field names, order and reply types,
compared with Debian's redis-server in RESP2 and RESP3, and the doctor's texts. The values are
each server's own (lapse's from jemalloc and its own tables), so only their shape and the
relations that hold on both are compared; lapse's own figures are checked apart."""
from __future__ import annotations

import pytest

from conftest import running_server, single_server
from lapse_harness import RawClient, Verbatim

server = single_server(threads=2)

EMPTY = ("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these "
         "conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be "
         "back to our programming as soon as I finished rebooting.\n")
NO_ISSUE = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
ISSUES_HEAD = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
ISSUES_TAIL = "I'm here to keep you safe, Sam. I want to help you.\n"
ISSUE_TITLES = (" * Peak memory:", " * High total RSS:", " * High allocator fragmentation:",
                " * High allocator RSS overhead:", " * High process RSS overhead:", " * Big client buffers:",
                " * Many scripts:")


def as_pairs(reply):
    """MEMORY STATS as (name, value) pairs in order: RESP2 arrays and RESP3 maps alike."""
    if isinstance(reply, dict):
        return [(k, as_pairs(v) if isinstance(v, (dict, list)) else v) for k, v in reply.items()]
    return [(reply[i], as_pairs(reply[i + 1]) if isinstance(reply[i + 1], list) else reply[i + 1])
            for i in range(0, len(reply), 2)]


def shape(pairs):
    """Names and value kinds: int, double (a RESP3 double, or a RESP2 bulk holding one), map."""
    out = []
    for name, value in pairs:
        if isinstance(value, list):
            out.append((name, shape(value)))
        elif isinstance(value, int):
            out.append((name, "int"))
        elif isinstance(value, float) or (isinstance(value, bytes) and float(value) is not None):
            out.append((name, "double"))
        else:
            out.append((name, type(value).__name__))
    return out


def stats(c):
    return dict(as_pairs(c.call("MEMORY", "STATS")))


def prepare(c):
    """The same keyspace on both servers: two keys in db 0 (one volatile), one in db 3."""
    assert c.call("FLUSHALL") == "OK"
    assert c.call("SET", "a", "1") == "OK"
    assert c.call("SET", "v", "1", "EX", "100") == "OK"
    assert c.call("SELECT", "3") == "OK"
    assert c.call("SET", "b", "1") == "OK"
    assert c.call("SELECT", "0") == "OK"


@pytest.mark.parametrize("protocol", ["2", "3"])
def test_stats_fields_order_and_types_as_redis(server, redis_server, protocol):
    shapes = []
    for srv in (redis_server, server):
        with RawClient(srv.port) as c:
            prepare(c)
            c.call("HELLO", protocol)
            shapes.append(shape(as_pairs(c.call("MEMORY", "STATS"))))
    assert shapes[1] == shapes[0]
    names = [name for name, _ in shapes[0]]
    assert names.index(b"db.0") == names.index(b"functions.caches") + 1
    assert names.index(b"db.3") == names.index(b"db.0") + 1


def test_stats_relations_that_hold_on_both(server, redis_server):
    for srv in (redis_server, server):
        with RawClient(srv.port) as c:
            prepare(c)
            s = stats(c)
        assert s[b"keys.count"] == 3
        db0, db3 = dict(s[b"db.0"]), dict(s[b"db.3"])
        assert db0[b"overhead.hashtable.expires"] > 0 and db3[b"overhead.hashtable.expires"] == 0
        assert db0[b"overhead.hashtable.main"] > 0 and db3[b"overhead.hashtable.slot-to-keys"] == 0
        for zero in (b"replication.backlog", b"clients.slaves", b"cluster.links", b"aof.buffer"):
            assert s[zero] == 0
        assert s[b"allocator-fragmentation.bytes"] == s[b"allocator.active"] - s[b"allocator.allocated"]
        assert s[b"allocator-rss.bytes"] == s[b"allocator.resident"] - s[b"allocator.active"]
        assert s[b"fragmentation.bytes"] > 0


@pytest.mark.lapse_only
def test_lapse_figures_are_its_own(server):
    with RawClient(server.port) as c:
        prepare(c)
        s = stats(c)
        used = next(int(line.split(b":")[1]) for line in c.call("INFO", "memory").split(b"\r\n")
                    if line.startswith(b"used_memory:"))
    assert s[b"total.allocated"] == s[b"allocator.allocated"]
    assert s[b"clients.normal"] > 0  # this very client's buffers (CLIENT LIST's tot-mem)
    assert abs(s[b"total.allocated"] - used) < 1 << 20
    assert s[b"peak.allocated"] >= s[b"total.allocated"] >= s[b"startup.allocated"] > 0
    assert s[b"dataset.bytes"] == max(0, s[b"total.allocated"] - s[b"overhead.total"])
    overheads = sum(dict(s[db])[b"overhead.hashtable.main"] + dict(s[db])[b"overhead.hashtable.expires"]
                    for db in (b"db.0", b"db.3"))
    assert s[b"overhead.total"] == (s[b"startup.allocated"] + s[b"clients.normal"] + s[b"lua.caches"] +
                                    s[b"functions.caches"] + overheads)
    assert abs(float(s[b"fragmentation"]) * s[b"total.allocated"] -
               (s[b"total.allocated"] + s[b"fragmentation.bytes"])) < s[b"total.allocated"] * 0.01


def test_stats_in_resp3_is_a_map_with_doubles(server):
    with RawClient(server.port) as c:
        c.call("HELLO", "3")
        reply = c.call("MEMORY", "STATS")
    assert isinstance(reply, dict)
    assert isinstance(reply[b"dataset.percentage"], float) and isinstance(reply[b"fragmentation"], float)
    assert isinstance(reply[b"keys.count"], int)


def test_doctor_on_an_empty_instance(start_server):
    srv = start_server()
    with srv.client() as c:
        if b"mem_allocator:jemalloc" not in c.call("INFO", "memory"):
            # A build without jemalloc (the sanitizer build) reports the resident set, which is
            # never under Redis's 5 MB "empty" line.
            pytest.skip("needs the allocator's own allocated bytes (jemalloc)")
        assert c.call("MEMORY", "DOCTOR") == EMPTY.encode()
        c.call("HELLO", "3")
        doctor = c.call("MEMORY", "DOCTOR")
    assert isinstance(doctor, Verbatim) and doctor == EMPTY.encode()


def doctor_after_loading(srv, scripts):
    with srv.client() as c:
        c.send_raw(b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$200\r\n%s\r\n" % (len(b"key:%d" % i), i, b"v" * 200)
                            for i in range(50_000)))
        for _ in range(50_000):
            c.read_reply()
        for i in range(scripts):
            c.call("SCRIPT", "LOAD", f"return {i}")
        return c.call("MEMORY", "DOCTOR").decode()


def test_doctor_reports_many_scripts(start_server):
    report = doctor_after_loading(start_server(), scripts=1001)
    assert report.startswith(ISSUES_HEAD) and report.endswith(ISSUES_TAIL)
    assert " * Many scripts: There seem to be many cached scripts in this instance (more than 1000)." in report
    items = [line for line in report.split("\n\n") if line.startswith(" * ")]
    assert all(item.startswith(ISSUE_TITLES) for item in items)


def test_doctor_with_data_and_few_scripts(start_server):
    report = doctor_after_loading(start_server(), scripts=10)
    assert report == NO_ISSUE or (report.startswith(ISSUES_HEAD) and "Many scripts" not in report)
