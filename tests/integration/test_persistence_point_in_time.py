"""BGSAVE is a point-in-time snapshot (issue 17, "Fork-less"): the file holds the data set as
it was when BGSAVE replied, whatever clients change while it is being written: overwrites,
deletions, new keys, expiry, RENAME, MOVE, FLUSHDB, SWAPDB, collections edited in place, and
lapse's items (replaced, deleted, created, their container dropped or moved).

rdb-key-save-delay (Redis's own test knob: microseconds per key) slows the save down so that
it surely overlaps the writes, and each test checks that it did (the save was still running
after the writes) rather than trusting a duration. Values encode a generation, so the loaded
file tells which writes it saw. The same tests run against Redis 7.0.15 (LAPSE_TARGET=redis),
whose fork gives the same guarantee.
"""
import os
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from lapse_harness import wait_until
from test_persistence_rdb import client, contents, lapse_view

KEYS = 3000
DELAY_US = 1000  # a save of KEYS keys takes about KEYS * DELAY_US


def in_progress(c) -> bool:
    return c.info("persistence")["rdb_bgsave_in_progress"] == 1


def finish_save(c):
    wait_until(lambda: not in_progress(c), timeout=120, what="BGSAVE to finish")
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"


def saved_copy(srv) -> str:
    """The snapshot just written, copied to a directory of its own, checked by redis-check-rdb."""
    copy_dir = tempfile.mkdtemp(prefix="pit-")
    shutil.copy(os.path.join(srv.data_dir(), "dump.rdb"), copy_dir)
    check = subprocess.run(["redis-check-rdb", os.path.join(copy_dir, "dump.rdb")], capture_output=True, text=True,
                           errors="replace")
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout + check.stderr
    return copy_dir


def fill(c):
    pipe = c.pipeline(transaction=False)
    for i in range(KEYS):
        pipe.set(f"k{i}", f"0:{i}")
    for i in range(50):
        pipe.set(f"ttl{i}", f"0:{i}", px=600_000)
        pipe.hset(f"h{i}", mapping={f"f{n}": f"0:{n}" for n in range(5)})
        pipe.rpush(f"l{i}", "a", "b", "c")
        pipe.sadd(f"s{i}", "x", "y")
        pipe.zadd(f"z{i}", {"m": 1, "n": 2})
    pipe.hset("bighash", mapping={f"f{n}": "0" for n in range(300)})
    pipe.execute()
    c.select(1)
    for i in range(100):
        c.set(f"db1:{i}", "0")
    c.select(0)


def mutate(port, part):
    """Every kind of change but SWAPDB, from its own connection; `part` splits the keys between
    threads."""
    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=60)
    pipe = c.pipeline(transaction=False)
    for i in range(part, KEYS, 2):
        if i % 4 < 2:
            pipe.set(f"k{i}", f"1:{i}")
        elif i % 4 == 2:
            pipe.delete(f"k{i}")
        else:
            pipe.append(f"k{i}", "+appended")
        pipe.set(f"new{i}", "1")
    for i in range(part, 50, 2):
        pipe.pexpire(f"ttl{i}", 1)
        pipe.hset(f"h{i}", "f0", "1")
        pipe.hdel(f"h{i}", "f1")
        pipe.lpush(f"l{i}", "pushed")
        pipe.srem(f"s{i}", "x")
        pipe.zincrby(f"z{i}", 5, "m")
        pipe.rename(f"k{i * 4 + 3}", f"renamed{i}")
        pipe.move(f"k{i * 4 + 1}", 1)
    pipe.execute()
    if part == 0:
        c.hset("bighash", mapping={f"f{n}": "1" for n in range(0, 300, 3)})
        c.execute_command("SELECT", 1)
        c.flushdb()
        c.set("db1:after", "1")


def writes_during(srv, c, start, data_set):
    """Fills the server, slows saving down, calls start() (which must return true), then edits
    every type from two connections and swaps databases 0 and 2 while it runs; returns
    data_set() as it was before start()."""
    fill(c)
    at_start = data_set()
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert start()
    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(mutate, srv.port, part) for part in (0, 1)]:
            done.result()  # raises what the thread raised
    c.swapdb(0, 2)
    return at_start


def test_bgsave_writes_the_data_set_as_it_was_when_bgsave_replied(start_server):
    srv = start_server(options={"threads": 2})
    c = client(srv)
    expected = writes_during(srv, c, c.bgsave, lambda: contents(c, databases=(0, 1, 2)))
    assert in_progress(c), "the save ended before the writes: raise DELAY_US"
    c.select(2)
    assert c.get("k0") == b"1:0"  # the writes did happen (and SWAPDB moved them to db 2)
    c.select(0)
    c.config_set("rdb-key-save-delay", 0)
    finish_save(c)
    copy_dir = saved_copy(srv)
    loaded = start_server(options={"dir": copy_dir, "threads": 3})
    assert contents(client(loaded), databases=(0, 1, 2)) == expected


def write_stream_around(srv, start, running, what):
    """From another connection, sets key c<t % KEYS> to t for t = 0, 1, 2, ... without pause;
    calls start() (which must return true) once 2 KEYS values are written, and stops once
    2 KEYS more followed its reply, checking that running() still holds then. Returns how many
    values were written."""
    stop = threading.Event()
    sent = [0]

    def writer():
        w = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=60)
        t = 0
        while not stop.is_set() and t < 5_000_000:
            pipe = w.pipeline(transaction=False)
            for _ in range(100):
                pipe.set(f"c{t % KEYS}", t)
                t += 1
            pipe.execute()
            sent[0] = t

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_until(lambda: sent[0] >= 2 * KEYS, what="a first round of writes")
        assert start()
        at_reply = sent[0]
        wait_until(lambda: sent[0] >= at_reply + 2 * KEYS, what=f"writes during the {what}")
        assert running(), f"the {what} ended before the writes: raise DELAY_US"
    finally:
        stop.set()
        thread.join()
    return sent[0]


def test_a_save_that_starts_during_a_stream_of_writes_holds_one_instant(start_server):
    """One connection sets key c<t % KEYS> to t for t = 0, 1, 2, ... without pause; BGSAVE comes
    from another connection in the middle. A point-in-time file holds KEYS consecutive values;
    a key-by-key save of a moving data set would hold values from different moments."""
    srv = start_server(options={"threads": 2})
    c = client(srv)
    c.config_set("rdb-key-save-delay", DELAY_US)
    write_stream_around(srv, start=lambda: c.bgsave(), running=lambda: in_progress(c), what="save")
    c.config_set("rdb-key-save-delay", 0)
    finish_save(c)
    loaded = client(start_server(options={"dir": saved_copy(srv), "threads": 3}))
    values = sorted(int(loaded.get(f"c{i}")) for i in range(KEYS))
    assert loaded.dbsize() == KEYS
    assert values == list(range(values[0], values[0] + KEYS)), (values[:3], values[-3:])


@pytest.mark.lapse_only
def test_bgsave_writes_items_as_they_were_when_bgsave_replied(start_server):
    srv = start_server(options={"threads": 2})
    c = client(srv)
    c.execute_command("CSETTTL", "carts", -1)
    c.execute_command("CSETTTL", "doomed", -1)
    c.execute_command("CSETTTL", "travels", 3600)
    pipe = c.pipeline(transaction=False)
    for i in range(1000):  # keys too: a save that wrote items after the keys would see the writes
        pipe.set(f"k{i}", i)
    for i in range(KEYS):
        pipe.execute_command("IPUT", "carts", f"c{i}", f'{{"v":0,"n":{i}}}')
    for i in range(100):
        pipe.execute_command("IPUT", "doomed", f"d{i}", '{"v":0}')
        pipe.execute_command("IPUT", "travels", f"t{i}", '{"v":0,"ttl":600}')
    pipe.execute()
    expected = lapse_view(c)
    c.config_set("rdb-key-save-delay", DELAY_US)
    assert c.bgsave()
    pipe = c.pipeline(transaction=False)
    for i in range(0, KEYS, 3):
        pipe.execute_command("IPUT", "carts", f"c{i}", '{"v":1}')
        pipe.execute_command("IDEL", "carts", f"c{i + 1}")
        pipe.execute_command("IPUT", "carts", f"new{i}", '{"v":1}')
    pipe.execute()
    assert c.execute_command("CDROP", "doomed") == 1
    assert c.execute_command("CMOVE", "travels", 2) == 1
    c.select(2)
    c.execute_command("IPUT", "travels", "t0", '{"v":1}')
    c.select(0)
    assert in_progress(c), "the save ended before the writes: raise DELAY_US"
    assert c.execute_command("IGET", "carts", "c0") is not None  # the writes did happen
    c.config_set("rdb-key-save-delay", 0)
    finish_save(c)
    loaded = client(start_server(options={"dir": saved_copy(srv), "threads": 3}))
    assert lapse_view(loaded) == expected
