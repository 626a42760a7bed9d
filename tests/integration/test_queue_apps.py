"""Application-style use of lists and sorted sets through redis-py, as services write it: a work
queue with a producer and competing consumers (BRPOP), a reliable queue (BLMOVE into a
processing list), a leaderboard and a sliding-window rate limiter.

Sorted sets are built separately; the leaderboard and the limiter are skipped while the server
answers ZADD with "unknown command". Runs on lapse with --threads 1, 2 and 4, and against
redis-server with LAPSE_TARGET=redis.
"""
from __future__ import annotations

import threading

import pytest
import redis

JOBS = 1000
_zset_support: dict[int, bool] = {}


def client(srv) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=srv.port, password=srv.password, decode_responses=True,
                       socket_timeout=30)


@pytest.fixture
def zsets(r, server):
    """`r`, where the server has sorted sets; checked once per server."""
    if server.port not in _zset_support:
        try:
            r.zadd("__zset_probe", {"m": 1})
            r.delete("__zset_probe")
            _zset_support[server.port] = True
        except redis.ResponseError as e:
            if "unknown command" not in str(e):
                raise
            _zset_support[server.port] = False
    if not _zset_support[server.port]:
        pytest.skip("the server has no sorted sets yet (ZADD: unknown command)")
    return r


# ---- work queues


def test_work_queue_every_job_consumed_once(clean):
    """A producer LPUSHes 1,000 jobs while two consumers BRPOP with a 1 s timeout until the
    producer is done and the queue is drained."""
    producer_done = threading.Event()
    consumed: dict[str, list[int]] = {"c1": [], "c2": []}
    errors: list[str] = []

    def produce():
        c = client(clean)
        try:
            for i in range(0, JOBS, 50):  # some jobs one at a time, some in batches
                if (i // 50) % 2:
                    c.lpush("jobs", *[f"job:{j}" for j in range(i, i + 50)])
                else:
                    pipe = c.pipeline(transaction=False)
                    for j in range(i, i + 50):
                        pipe.lpush("jobs", f"job:{j}")
                    pipe.execute()
        except Exception as e:  # surfaces in the assertions below
            errors.append(f"producer: {e!r}")
        finally:
            producer_done.set()
            c.close()

    def consume(name):
        c = client(clean)
        try:
            while True:
                # stop only after a timeout that began when the producer had finished: a
                # timeout before that may just mean the producer was slow
                finished = producer_done.is_set()
                item = c.brpop("jobs", timeout=1)
                if item is None:
                    if finished:
                        return
                    continue
                key, job = item
                if key != "jobs" or not job.startswith("job:"):
                    errors.append(f"{name} got {item!r}")
                consumed[name].append(int(job.split(":")[1]))
        except Exception as e:
            errors.append(f"{name}: {e!r}")
        finally:
            c.close()

    threads = [threading.Thread(target=consume, args=(n,)) for n in consumed] + [threading.Thread(target=produce)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "a queue thread hung"
    assert errors == []
    everything = consumed["c1"] + consumed["c2"]
    assert len(everything) == JOBS
    assert sorted(everything) == list(range(JOBS))
    # LPUSH + BRPOP is FIFO, so each consumer sees its jobs in the order they were produced
    for jobs in consumed.values():
        assert jobs == sorted(jobs)
    with clean.client() as c:
        assert c.call("EXISTS", "jobs") == 0


def test_reliable_queue_with_blmove(r, clean):
    """Consumers move each job into a processing list with BLMOVE and remove it when done, so a
    crash would leave it there; at the end both lists are empty and every job was done once."""
    done: list[str] = []
    lock = threading.Lock()

    def worker():
        c = client(clean)
        try:
            while True:
                job = c.blmove("rq:pending", "rq:processing", timeout=5, src="RIGHT", dest="LEFT")
                if job is None:
                    continue  # idle; each worker leaves on its "stop"
                if job == "stop":
                    assert c.lrem("rq:processing", 1, job) == 1
                    return
                with lock:
                    done.append(job)
                assert c.lrem("rq:processing", 1, job) == 1
        finally:
            c.close()

    workers = [threading.Thread(target=worker) for _ in range(3)]
    for t in workers:
        t.start()
    for i in range(0, 300, 30):
        assert r.lpush("rq:pending", *[f"task{j}" for j in range(i, i + 30)]) >= 30
    r.lpush("rq:pending", "stop", "stop", "stop")
    for t in workers:
        t.join(60)
        assert not t.is_alive()
    assert sorted(done) == sorted(f"task{j}" for j in range(300))
    assert r.exists("rq:pending", "rq:processing") == 0
    # a job left in processing by a crashed worker is moved back for another try
    r.lpush("rq:pending", "fragile")
    assert r.lmove("rq:pending", "rq:processing", "RIGHT", "LEFT") == "fragile"
    assert r.rpoplpush("rq:processing", "rq:pending") == "fragile"
    assert r.lrange("rq:pending", 0, -1) == ["fragile"]
    assert r.brpoplpush("rq:pending", "rq:processing", timeout=1) == "fragile"
    assert r.lrange("rq:processing", 0, -1) == ["fragile"]


def test_capped_recent_items_log(r):
    """LPUSH + LTRIM keeps the newest N entries; LRANGE reads them newest first."""
    for i in range(250):
        pipe = r.pipeline()
        pipe.lpush("recent", f"event{i}")
        pipe.ltrim("recent", 0, 99)
        assert pipe.execute() == [i + 1 if i < 100 else 101, True]
    assert r.llen("recent") == 100
    assert r.lrange("recent", 0, 2) == ["event249", "event248", "event247"]
    assert r.lindex("recent", -1) == "event150"
    assert r.lpos("recent", "event200") == 49
    assert r.lpos("recent", "event100") is None


# ---- sorted sets


def test_leaderboard(zsets):
    r = zsets
    assert r.zadd("board", {"ann": 120, "bob": 95, "cy": 120, "dee": 40}) == 4
    assert r.zincrby("board", 30, "bob") == 125.0
    assert r.zincrby("board", 5, "eve") == 5.0
    assert r.zrevrange("board", 0, 2, withscores=True) == [("bob", 125.0), ("cy", 120.0), ("ann", 120.0)]
    assert r.zrevrange("board", 0, -1) == ["bob", "cy", "ann", "dee", "eve"]
    assert r.zrank("board", "eve") == 0
    assert r.zrank("board", "bob") == 4
    assert r.zrevrank("board", "bob") == 0
    assert r.zrank("board", "nobody") is None
    assert r.zscore("board", "ann") == 120.0
    assert r.zcard("board") == 5
    assert r.zadd("board", {"ann": 130}, xx=True) == 0
    assert r.zadd("board", {"ann": 1}, gt=True) == 0
    assert r.zrevrange("board", 0, 0, withscores=True) == [("ann", 130.0)]
    assert r.zrangebyscore("board", 100, "+inf", withscores=True) == [("cy", 120.0), ("bob", 125.0), ("ann", 130.0)]
    assert r.zincrby("board", -200, "dee") == -160.0
    assert r.zrange("board", 0, 0, withscores=True) == [("dee", -160.0)]
    assert r.zrem("board", "dee", "nobody") == 1
    assert r.zrevrange("board", 0, -1, withscores=True) == [("ann", 130.0), ("bob", 125.0), ("cy", 120.0),
                                                             ("eve", 5.0)]
    # many players: ranks are dense and ordered by score then member
    r.zadd("big", {f"p{i:04d}": i % 100 for i in range(1000)})
    assert r.zcard("big") == 1000
    top = r.zrevrange("big", 0, 9, withscores=True)
    assert top == [(f"p{i:04d}", 99.0) for i in range(999, 0, -100)]
    assert r.zrank("big", "p0000") == 0
    assert r.zrevrank("big", "p0999") == 0
    assert r.type("big") == "zset"


def sliding_window_allow(r, key, now_ms, seq, limit, window_ms):
    """Records a request at now_ms and says whether the last window holds at most `limit`."""
    pipe = r.pipeline()  # MULTI/EXEC
    pipe.zremrangebyscore(key, 0, now_ms - window_ms)
    pipe.zadd(key, {f"{now_ms}-{seq}": now_ms})
    pipe.zcard(key)
    pipe.expire(key, 60)
    removed, added, count, expire_set = pipe.execute()
    assert added == 1 and expire_set is True
    return count <= limit, removed


def test_sliding_window_rate_limiter(zsets):
    r = zsets
    times = [0, 200, 400, 600, 1100, 1300, 2500, 2600, 2700, 2800]
    results = [sliding_window_allow(r, "rate:ann", t, i, limit=3, window_ms=1000) for i, t in enumerate(times)]
    assert [allowed for allowed, _ in results] == [True, True, True, False, False, False, True, True, True, False]
    assert [removed for _, removed in results] == [0, 0, 0, 0, 1, 1, 4, 0, 0, 0]
    assert r.zcard("rate:ann") == 4
    assert 0 < r.ttl("rate:ann") <= 60
    assert r.zrange("rate:ann", 0, -1) == ["2500-6", "2600-7", "2700-8", "2800-9"]
    # another user has a window of their own
    assert sliding_window_allow(r, "rate:bob", 2800, 0, limit=3, window_ms=1000) == (True, 0)
    assert r.zcard("rate:bob") == 1
    # concurrent callers: exactly `limit` of 20 simultaneous requests get through
    allowed = []
    lock = threading.Lock()

    def caller(n):
        c = client_from(r)
        ok, _ = sliding_window_allow(c, "rate:burst", 10_000, n, limit=7, window_ms=1000)
        with lock:
            allowed.append(ok)
        c.close()

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(allowed) == [False] * 13 + [True] * 7
    assert r.zcard("rate:burst") == 20


def client_from(r: redis.Redis) -> redis.Redis:
    kwargs = r.connection_pool.connection_kwargs
    return redis.Redis(host=kwargs["host"], port=kwargs["port"], password=kwargs.get("password"),
                       decode_responses=True, socket_timeout=30)
