"""FLUSHDB and FLUSHALL against snapshots (issue 17), as Redis 7.0 does them:
- FLUSHALL stops a running BGSAVE (Redis kills its child): the file stays as it was and
  rdb_last_bgsave_status keeps its value;
- with `save` rules, FLUSHALL then saves the emptied data set at once, so that a restart does
  not bring the keys back, and the changes counter starts again from 0;
- both count the keys they removed as changes;
- FLUSHDB does not stop a save; on lapse it hands the keys the walk has not reached to the
  save instead of writing them all first (the save's buffer stays small).
The same tests run against Redis 7.0.15 (LAPSE_TARGET=redis), except the last, which reads
lapse's buffer figure.
"""
import os
import time

import pytest

from lapse_harness import wait_until
from test_persistence_point_in_time import DELAY_US, KEYS, finish_save, in_progress, saved_copy
from test_persistence_rdb import client


def changes(c) -> int:
    return c.info("persistence")["rdb_changes_since_last_save"]


def fill(c, databases=(0,), value="v"):
    for db in databases:
        c.select(db)
        pipe = c.pipeline(transaction=False)
        for i in range(KEYS):
            pipe.set(f"k{i}", value)
        pipe.execute()
    c.select(0)


def test_flushall_stops_a_running_bgsave_and_leaves_the_file_as_it_was(start_server):
    srv = start_server()
    c = client(srv)
    fill(c)
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert c.bgsave()
    assert c.flushall()
    wait_until(lambda: not in_progress(c), timeout=60, what="the stopped save to end")
    info = c.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok"
    assert not os.path.exists(os.path.join(srv.data_dir(), "dump.rdb"))
    # The next save runs as usual, and holds what the flush left.
    c.config_set("rdb-key-save-delay", 0)
    c.set("after", "1")
    assert c.bgsave()
    finish_save(c)
    loaded = client(start_server(options={"dir": saved_copy(srv)}))
    assert loaded.dbsize() == 1 and loaded.get("after") == b"1"


def test_flushall_under_save_rules_saves_the_emptied_data_set_at_once(start_server):
    srv = start_server(options={"save": "3600 1"})
    c = client(srv)
    fill(c, databases=(0, 1))
    assert c.save()
    before = c.lastsave()
    c.set("more", "1")
    assert changes(c) == 1
    time.sleep(1.1)  # LASTSAVE counts seconds
    assert c.flushall()
    assert changes(c) == 0
    assert c.lastsave() > before
    loaded = client(start_server(options={"dir": saved_copy(srv)}))
    assert loaded.dbsize() == 0
    loaded.select(1)
    assert loaded.dbsize() == 0


def test_flushall_in_a_transaction_saves_as_it_runs(start_server):
    srv = start_server(options={"save": "3600 1"})
    c = client(srv)
    fill(c)
    pipe = c.pipeline(transaction=True)
    pipe.flushall()
    pipe.set("after", "1")
    assert pipe.execute() == [True, True]
    assert changes(c) == 1  # the SET after the save
    loaded = client(start_server(options={"dir": saved_copy(srv)}))
    assert loaded.dbsize() == 0


@pytest.mark.parametrize("numkeys", [0, 2])
def test_flushall_in_a_script_counts_only_what_follows_its_save(start_server, numkeys):
    """The script's writes before FLUSHALL are counted before its save (a script with declared
    keys too, whose earlier calls lapse holds back until its run counts)."""
    c = client(start_server(options={"save": "3600 1", "threads": 2}))
    c.set("x", "1")
    script = ("redis.call('set', 'a', '1') redis.call('set', 'b', '1') redis.call('flushall') "
              "redis.call('set', 'a', '2') return 1")
    keys = ["a", "b"][:numkeys]
    assert c.eval(script, numkeys, *keys) == 1
    assert changes(c) == 1


def test_flushdb_and_flushall_count_the_keys_they_removed(start_server):
    c = client(start_server())
    fill(c, databases=(0, 1))
    c.select(1)
    c.delete("k0")  # db 1 keeps KEYS - 1
    c.select(0)
    base = changes(c)
    assert c.flushdb()
    assert changes(c) == base + KEYS
    assert c.flushdb()  # nothing left to remove
    assert changes(c) == base + KEYS
    assert c.flushall()
    assert changes(c) == base + 2 * KEYS - 1


@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_flushdb_does_not_stop_a_save_which_keeps_the_flushed_keys(start_server, mode):
    srv = start_server(options={"threads": 2})
    c = client(srv)
    fill(c, databases=(0, 1))
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert c.bgsave()
    assert c.execute_command("FLUSHDB", mode)
    c.select(1)
    assert c.execute_command("FLUSHDB", mode)
    c.select(0)
    assert in_progress(c), "the save ended before the flush: raise DELAY_US"
    assert c.dbsize() == 0
    c.set("after", "1")
    c.config_set("rdb-key-save-delay", 0)
    finish_save(c)
    loaded = client(start_server(options={"dir": saved_copy(srv), "threads": 3}))
    assert loaded.get("after") is None
    assert loaded.dbsize() == KEYS
    loaded.select(1)
    assert loaded.dbsize() == KEYS


@pytest.mark.lapse_only
@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_a_flushdb_during_a_save_buffers_nothing_ahead_of_the_walk(start_server, mode):
    """The save's buffer (INFO rdb_last_cow_size, its peak) stays small instead of holding every
    key the walk had not reached, as it did when the flush wrote them all first."""
    srv = start_server(options={"threads": 2})
    c = client(srv)
    value = "v" * 1000
    fill(c, value=value)
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert c.bgsave()
    assert c.execute_command("FLUSHDB", mode)
    assert in_progress(c), "the save ended before the flush: raise DELAY_US"
    c.config_set("rdb-key-save-delay", 0)
    finish_save(c)
    assert c.info("persistence")["rdb_last_cow_size"] < KEYS * len(value) // 20
    loaded = client(start_server(options={"dir": saved_copy(srv)}))
    assert loaded.dbsize() == KEYS and loaded.get("k0") == value.encode()
