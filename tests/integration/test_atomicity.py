"""Multi-key commands are atomic across shards, as on Redis's single thread.

Each test runs one client that changes several keys at once (MSET, DEL, RENAME, SWAPDB,
MSETNX, SMOVE) against clients that read them all at once (MGET, EXISTS), on a 4-thread server
whose keys are spread over every shard, and checks that no reader ever sees a change half
done. The same tests pass against redis-server (LAPSE_TARGET=redis).
"""
from __future__ import annotations

import threading
import time

import redis

from conftest import single_server

server = single_server(threads=4)

# Enough names that every one of 4 shards holds several of them.
KEYS = [f"atomic:{i}" for i in range(16)]
DURATION_S = 1.5
PIPELINE = 25


def client(srv):
    return redis.Redis(host="127.0.0.1", port=srv.port, password=srv.password, socket_timeout=30)


class Contest:
    """Runs `write(pipeline)` in a loop on one client while `check()` runs in a loop on two
    others, for DURATION_S; collects the readers' failures and counts their checks."""

    def __init__(self, srv):
        self.srv = srv
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.checks = 0
        self.writes = 0
        self.lock = threading.Lock()

    def run(self, write, check):
        def writer():
            c = client(self.srv)
            try:
                while not self.stop.is_set():
                    p = c.pipeline(transaction=False)
                    for _ in range(PIPELINE):
                        write(p)
                    p.execute()
                    with self.lock:
                        self.writes += PIPELINE
            except Exception as e:  # surfaces in the assertion below
                with self.lock:
                    self.failures.append(f"writer: {e!r}")

        def reader():
            c = client(self.srv)
            try:
                while not self.stop.is_set():
                    problem = check(c)
                    with self.lock:
                        self.checks += 1
                        if problem:
                            self.failures.append(problem)
            except Exception as e:
                with self.lock:
                    self.failures.append(f"reader: {e!r}")

        threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(DURATION_S)
        self.stop.set()
        for t in threads:
            t.join()
        assert self.writes > 0 and self.checks > 0
        assert self.failures == [], f"{len(self.failures)} of {self.checks} checks failed: {self.failures[:5]}"


def test_keys_span_every_shard(r):
    # The contests below are meaningful only if their keys do not all share a shard; the key
    # hash is not visible, so check the weaker property that MSET over them works at all
    # and rely on 16 names over 4 shards (all on one shard has probability 4**-15).
    assert r.mset({k: "x" for k in KEYS})
    assert r.mget(KEYS) == ["x"] * len(KEYS)


def test_mget_sees_all_or_none_of_each_mset(clean):
    c = client(clean)
    c.mset({k: "start" for k in KEYS})
    counter = iter(range(10**9))

    def write(p):
        value = str(next(counter))
        p.mset({k: value for k in KEYS})

    def check(c):
        values = c.mget(KEYS)
        if len(set(values)) != 1:
            return f"MGET saw a partial MSET: {sorted(set(values))[:4]}"
        return None

    Contest(clean).run(write, check)


def test_exists_sees_all_or_none_of_each_del(clean):
    def write(p):
        p.mset({k: "v" for k in KEYS})
        p.delete(*KEYS)

    def check(c):
        n = c.exists(*KEYS)
        if n not in (0, len(KEYS)):
            return f"EXISTS counted {n} of {len(KEYS)} keys between an MSET and a DEL"
        return None

    Contest(clean).run(write, check)


def test_rename_across_shards_is_never_seen_half_done(clean):
    c = client(clean)
    c.set("ping", "ball")

    def write(p):
        p.rename("ping", "pong")
        p.rename("pong", "ping")

    def check(c):
        values = c.mget("ping", "pong")
        present = [v for v in values if v is not None]
        if present != [b"ball"]:
            return f"MGET ping pong during RENAME gave {values}"
        n = c.exists("ping", "pong")
        if n != 1:
            return f"EXISTS ping pong during RENAME gave {n}"
        return None

    Contest(clean).run(write, check)


def test_swapdb_is_seen_whole(clean):
    c = client(clean)
    c.mset({k: "0" for k in KEYS})
    c.execute_command("SELECT", 1)
    c.mset({k: "1" for k in KEYS})
    c.execute_command("SELECT", 0)

    def write(p):
        p.execute_command("SWAPDB", 0, 1)

    def check(c):
        values = c.mget(KEYS)
        if len(set(values)) != 1:
            return f"MGET during SWAPDB saw both databases: {sorted(set(values))}"
        return None

    try:
        Contest(clean).run(write, check)
    finally:
        c.flushall()


def test_msetnx_has_exactly_one_winner(clean):
    contenders = 4
    rounds = 150
    clients = [client(clean) for _ in range(contenders)]
    barrier = threading.Barrier(contenders)
    results = [[None] * rounds for _ in range(contenders)]
    errors = []

    def contend(who):
        try:
            for rnd in range(rounds):
                keys = {f"nx:{rnd}:{k}": str(who) for k in KEYS}
                barrier.wait()
                results[who][rnd] = clients[who].msetnx(keys)
        except Exception as e:
            errors.append(repr(e))
            barrier.abort()

    threads = [threading.Thread(target=contend, args=(w,)) for w in range(contenders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    check = clients[0]
    for rnd in range(rounds):
        winners = [w for w in range(contenders) if results[w][rnd]]
        assert len(winners) == 1, f"round {rnd}: MSETNX succeeded for {winners}"
        values = check.mget([f"nx:{rnd}:{k}" for k in KEYS])
        assert set(values) == {str(winners[0]).encode()}, f"round {rnd}: keys hold {sorted(set(values))}"


def test_smove_across_shards_is_never_seen_half_done(clean):
    """A member moved back and forth between sets on different shards is always in exactly
    one of them for SUNION, which reads both at once."""
    c = client(clean)
    sets = [k for k in KEYS[:8]]
    c.sadd(sets[0], "token")

    def write(p):
        for a, b in zip(sets, sets[1:]):
            p.smove(a, b, "token")
        for a, b in zip(reversed(sets), list(reversed(sets))[1:]):
            p.smove(a, b, "token")

    def check(c):
        members = c.sunion(*sets)
        if members != {b"token"}:
            return f"SUNION during SMOVE gave {members}"
        return None

    Contest(clean).run(write, check)

