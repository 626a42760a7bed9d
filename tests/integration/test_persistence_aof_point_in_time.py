"""BGREWRITEAOF writes its base as a point-in-time view, in slices, while clients go on
(issue 17, "The rewrite is a fork-less compaction in the same style"). The rewrite switches to
the new incremental file at the instant its walk starts, so after a restart the base plus the
increment replay to exactly what the server held: writes, deletions, expiries, RENAME, MOVE,
FLUSHDB, SWAPDB and collection edits made while the base was being written included. And the
base alone is one instant of the data set.

rdb-key-save-delay (microseconds per key, which Redis's rewrite child honours too) slows the
rewrite down so that it surely overlaps the writes, and each test checks that it did (the
rewrite was still running after them) rather than trusting a duration. The same tests run
against redis-server 7.0.15 (LAPSE_TARGET=redis), whose fork gives the same guarantee.
"""
from __future__ import annotations


import pytest

from lapse_harness import RespError as E
from lapse_harness import wait_until
from test_persistence_aof import MANIFEST, aof_options, client, info_persistence, items_state, state, up
from test_persistence_point_in_time import DELAY_US, KEYS, fill, write_stream_around, writes_during

DATABASES = (0, 1, 2)


def rewriting(c) -> bool:
    return c.info("persistence")["aof_rewrite_in_progress"] == 1


def finish_rewrite(srv):
    c = client(srv)
    c.config_set("rdb-key-save-delay", 0)
    wait_until(lambda: not rewriting(c), timeout=120, what="the AOF rewrite to end")
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"


def base_alone(start_server, tmp_path, preamble: str):
    """A server started on a copy of the log's current base file alone (a manifest naming only
    it): what the base holds, without the increment."""
    folder = tmp_path / "appendonlydir"
    base = [line.split()[1] for line in (folder / MANIFEST).read_text().splitlines() if line.endswith("type b")]
    assert len(base) == 1
    copy = tmp_path / "base-alone"
    (copy / "appendonlydir").mkdir(parents=True)
    (copy / "appendonlydir" / base[0]).write_bytes((folder / base[0]).read_bytes())
    (copy / "appendonlydir" / MANIFEST).write_text(f"file {base[0]} seq 1 type b\n")
    return up(start_server, options=aof_options(copy, **{"aof-use-rdb-preamble": preamble}))


def rewrite_under_writes(srv, c):
    """A slowed rewrite while every type is edited (writes_during); the data set at its start."""
    return writes_during(srv, c, c.bgrewriteaof, lambda: state(srv, DATABASES))


@pytest.mark.parametrize("preamble", ["yes", "no"], ids=["rdb-base", "command-base"])
def test_writes_during_a_rewrite_survive_a_restart(start_server, tmp_path, preamble):
    options = aof_options(tmp_path, threads=2, **{"aof-use-rdb-preamble": preamble})
    srv = up(start_server, options=options)
    c = client(srv)
    at_start = rewrite_under_writes(srv, c)
    c.select(2)
    c.hset("bighash", "added-last", "1")
    c.select(0)
    c.set("written-last", "1")
    assert rewriting(c), "the rewrite ended before the writes: raise DELAY_US"
    finish_rewrite(srv)
    expected = state(srv, DATABASES)
    assert expected != at_start  # the writes did happen
    srv.stop()
    assert state(up(start_server, options=options), DATABASES) == expected


@pytest.mark.parametrize("preamble", ["yes", "no"], ids=["rdb-base", "command-base"])
def test_the_base_is_the_data_set_when_the_rewrite_began(start_server, tmp_path, preamble):
    """The writes above changed the data set after the rewrite began; the base alone must still
    hold it as it was then (the increment holds the rest)."""
    options = aof_options(tmp_path, threads=2, **{"aof-use-rdb-preamble": preamble})
    srv = up(start_server, options=options)
    c = client(srv)
    at_start = rewrite_under_writes(srv, c)
    assert rewriting(c), "the rewrite ended before the writes: raise DELAY_US"
    finish_rewrite(srv)
    assert state(srv, DATABASES) != at_start
    assert state(base_alone(start_server, tmp_path, preamble), DATABASES) == at_start


@pytest.mark.parametrize("preamble", ["yes", "no"], ids=["rdb-base", "command-base"])
def test_a_rewrite_that_starts_during_a_stream_of_writes_holds_one_instant(start_server, tmp_path, preamble):
    """One connection sets key c<t % KEYS> to t for t = 0, 1, 2, ... without pause; BGREWRITEAOF
    comes from another connection in the middle. The base holds KEYS consecutive values (one
    instant); base plus increment hold the last KEYS values written."""
    options = aof_options(tmp_path, threads=2, **{"aof-use-rdb-preamble": preamble})
    srv = up(start_server, options=options)
    c = client(srv)
    c.config_set("rdb-key-save-delay", DELAY_US)
    last = write_stream_around(srv, start=lambda: c.bgrewriteaof(), running=lambda: rewriting(c), what="rewrite")
    finish_rewrite(srv)
    base = client(base_alone(start_server, tmp_path, preamble))
    values = sorted(int(base.get(f"c{i}")) for i in range(KEYS))
    assert base.dbsize() == KEYS
    assert values == list(range(values[0], values[0] + KEYS)), (values[:3], values[-3:])
    assert values[-1] < last - KEYS  # an instant before the writes that followed the reply
    srv.stop()
    again = client(up(start_server, options=options))
    assert sorted(int(again.get(f"c{i}")) for i in range(KEYS)) == list(range(last - KEYS, last))


def test_bgsave_during_a_rewrite_is_refused_or_scheduled(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    c = client(srv)
    raw = srv.client()
    fill(c)
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert raw.call("BGREWRITEAOF") == "Background append only file rewriting started"
    assert raw.call("BGSAVE") == E("ERR Another child process is active (AOF?): can't BGSAVE right now. "
                                   "Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
    saves = c.info("persistence")["rdb_saves"]
    assert raw.call("BGSAVE", "SCHEDULE") == "Background saving scheduled"
    assert raw.call("BGSAVE", "SCHEDULE") == "Background saving scheduled"
    assert rewriting(c), "the rewrite ended before BGSAVE: raise DELAY_US"
    assert c.info("persistence")["rdb_saves"] == saves  # refused and scheduled: nothing saved yet
    finish_rewrite(srv)
    # The scheduled save runs once the rewrite has ended.
    wait_until(lambda: c.info("persistence")["rdb_saves"] == saves + 1, timeout=60, what="the scheduled BGSAVE")
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    raw.close()


def test_a_rewrite_asked_for_during_a_bgsave_is_scheduled(start_server, tmp_path):
    srv = up(start_server, options=aof_options(tmp_path))
    c = client(srv)
    raw = srv.client()
    fill(c)
    rewrites = info_persistence(srv)["aof_rewrites"]
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert raw.call("BGSAVE") == "Background saving started"
    assert raw.call("BGREWRITEAOF") == "Background append only file rewriting scheduled"
    assert raw.call("BGREWRITEAOF") == "Background append only file rewriting scheduled"
    info = c.info("persistence")
    assert (info["rdb_bgsave_in_progress"], info["aof_rewrite_scheduled"]) == (1, 1), "raise DELAY_US"
    assert info["aof_rewrite_in_progress"] == 0
    c.config_set("rdb-key-save-delay", 0)
    wait_until(lambda: c.info("persistence")["aof_rewrites"] == rewrites + 1, timeout=60,
               what="the scheduled rewrite")
    info = c.info("persistence")
    assert (info["aof_rewrite_scheduled"], info["aof_last_bgrewrite_status"]) == (0, "ok")
    raw.close()


@pytest.mark.lapse_only
@pytest.mark.parametrize("preamble", ["yes", "no"], ids=["rdb-base", "command-base"])
def test_item_edits_during_a_rewrite_survive_a_restart(start_server, tmp_path, preamble):
    """The base holds the items as they were at the rewrite's instant (an RDB base through the
    walk's pre-write hook, a base of commands through a copy made holding every shard); base
    plus increment holds them as they are."""
    options = aof_options(tmp_path, threads=2, **{"aof-use-rdb-preamble": preamble})
    srv = up(start_server, options=options)
    c = client(srv)
    raw = srv.client()
    fill(c)
    assert raw.call("CSETTTL", "users", "1000") == "OK"
    for i in range(200):
        raw.call("IPUT", "users", f"u{i}", f'{{"id":"u{i}","v":0}}')
    at_start = items_state(raw)
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert raw.call("BGREWRITEAOF") == "Background append only file rewriting started"
    for i in range(0, 200, 3):
        raw.call("IPUT", "users", f"u{i}", f'{{"id":"u{i}","v":1}}')
        assert raw.call("IDEL", "users", f"u{i + 1}") == 1
        raw.call("IPUT", "users", f"new{i}", f'{{"id":"new{i}"}}')
    assert raw.call("CSETTTL", "users", "2000") == "OK"
    assert raw.call("CSETRU", "orders", "500") == "OK"
    assert rewriting(c), "the rewrite ended before the writes: raise DELAY_US"
    finish_rewrite(srv)
    expected = items_state(raw)
    assert expected != at_start
    assert items_state(base_alone(start_server, tmp_path, preamble).client()) == at_start
    raw.close()
    srv.stop()
    assert items_state(up(start_server, options=options).client()) == expected


def test_turning_appendonly_on_during_a_bgsave_logs_everything(start_server, tmp_path):
    """The new log's base needs the tables' view that the BGSAVE holds: lapse answers once the
    save has ended, Redis at once (it schedules the rewrite); either way nothing is lost."""
    options = {"dir": str(tmp_path), "threads": 2}
    srv = up(start_server, options=options)
    c = client(srv)
    fill(c)
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert srv.client().call("BGSAVE") == "Background saving started"
    assert c.config_set("appendonly", "yes")
    c.set("after", "1")
    c.delete("k0")
    c.config_set("rdb-key-save-delay", 0)

    def settled():
        info = c.info("persistence")
        return (info["rdb_bgsave_in_progress"], info["aof_rewrite_scheduled"], info["aof_rewrite_in_progress"]) == (0, 0, 0)

    wait_until(settled, timeout=120, what="the save and the new log's base")
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    expected = state(srv, DATABASES)
    srv.stop()
    assert state(up(start_server, options=aof_options(tmp_path, threads=2)), DATABASES) == expected
