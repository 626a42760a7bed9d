"""Eviction under maxmemory (issue 16).

Two halves:
  * differential: settings, OBJECT FREQ / IDLETIME, INFO fields and the OOM behaviour are
    checked against Debian's redis-server reply for reply;
  * lapse only: which keys each policy gives up, measured on a server of its own with a
    frozen clock where time matters. These need the allocator's own figure for used memory
    (jemalloc); a build without it (the sanitizer build reports the resident set, which does
    not shrink when keys are freed) skips them.

Memory limits are set relative to what the server uses at that moment (INFO used_memory), so
each test states the excess it creates in bytes of values and checks which keys went.
"""

import time

import pytest

from conftest import running_server
from lapse_harness import RawClient, RespError

# ---------------------------------------------------------------------------------------
# Differential


def both(redis_server, server):
    return {"redis": RawClient(redis_server.port), "lapse": RawClient(server.port)}


def reset(c):
    c.call("CONFIG", "SET", "maxmemory", "0")
    c.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    c.call("CONFIG", "SET", "maxmemory-samples", "5")
    c.call("FLUSHALL")


@pytest.fixture
def pair(redis_server, clean):
    clients = both(redis_server, clean)
    for c in clients.values():
        reset(c)
    yield clients
    for c in clients.values():
        reset(c)
        c.close()


def replies(c, commands):
    return [c.call(*cmd) for cmd in commands]


def same(pair, commands):
    got = {name: replies(c, commands) for name, c in pair.items()}
    assert got["lapse"] == got["redis"]
    return got["lapse"]


POLICIES = ["noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
            "volatile-random", "volatile-ttl"]


def test_policy_settings_round_trip(pair):
    commands = []
    for p in POLICIES + ["ALLKEYS-LRU", "Volatile-Ttl"]:
        commands += [("CONFIG", "SET", "maxmemory-policy", p), ("CONFIG", "GET", "maxmemory-policy")]
    for name, value in [("maxmemory-samples", "10"), ("maxmemory-samples", "65"), ("maxmemory-eviction-tenacity", "0"),
                        ("maxmemory-eviction-tenacity", "100"), ("lfu-log-factor", "0"), ("lfu-log-factor", "100"),
                        ("lfu-decay-time", "0"), ("lfu-decay-time", "5")]:
        commands += [("CONFIG", "SET", name, value), ("CONFIG", "GET", name)]
    same(pair, commands)


@pytest.mark.parametrize("name,value", [
    ("maxmemory-policy", "lru"), ("maxmemory-policy", ""), ("maxmemory-policy", "allkeys-lru "),
    ("maxmemory-samples", "0"), ("maxmemory-samples", "-1"), ("maxmemory-samples", "x"),
    ("maxmemory-eviction-tenacity", "101"), ("maxmemory-eviction-tenacity", "-1"),
    ("lfu-log-factor", "-1"), ("lfu-log-factor", "1.5"), ("lfu-decay-time", "-1"), ("lfu-decay-time", "2147483648"),
])
def test_bad_settings_get_redis_errors_and_change_nothing(pair, name, value):
    got = same(pair, [("CONFIG", "GET", name), ("CONFIG", "SET", name, value), ("CONFIG", "GET", name)])
    assert isinstance(got[1], RespError)
    assert got[0] == got[2]


def test_object_freq_and_idletime(pair):
    same(pair, [
        ("SET", "a", "v1"),
        ("OBJECT", "FREQ", "a"),  # refused: not an LFU policy
        ("OBJECT", "IDLETIME", "a"),
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"),
        ("SET", "b", "v1"), ("OBJECT", "FREQ", "b"),  # a new key starts at 5
        ("GET", "b"), ("OBJECT", "FREQ", "b"),  # at 5 the increment is certain
        ("SET", "d", "v1"), ("SET", "d", "v2"), ("OBJECT", "FREQ", "d"),  # the overwrite's lookup counts, and keeps the count
        ("SETEX", "c", "100", "v"), ("OBJECT", "FREQ", "c"),
        ("OBJECT", "IDLETIME", "b"),  # refused under LFU
        ("OBJECT", "FREQ", "nokey"), ("OBJECT", "IDLETIME", "nokey"), ("OBJECT", "FREQ", "a", "b"),
        ("CONFIG", "SET", "maxmemory-policy", "volatile-lfu"), ("OBJECT", "FREQ", "b"),
        ("CONFIG", "SET", "maxmemory-policy", "volatile-ttl"), ("OBJECT", "FREQ", "b"),
    ])


def test_object_freq_of_a_set_on_miss_key_is_redis_s_with_a_read_history(pair):
    # With allkeys-lfu and a maxmemory lapse counts reads in a history apart from the key's
    # counter (engine/frequency_sketch.h): a key created after a miss, with no history, is
    # queued on probation yet reports Redis's initial count, and climbs as in Redis.
    if info_fields(pair["lapse"], "memory").get("mem_allocator") != "jemalloc":
        pytest.skip("needs the allocator's own used_memory (jemalloc) under a 100mb maxmemory; "
                    "this build reports the resident set")
    same(pair, [
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"), ("CONFIG", "SET", "maxmemory", "100mb"),
        ("GET", "fresh"), ("SET", "fresh", "v"), ("OBJECT", "FREQ", "fresh"),
        ("GET", "fresh"), ("OBJECT", "FREQ", "fresh"),
        ("GET", "back"), ("GET", "back"), ("SET", "back", "v"), ("OBJECT", "FREQ", "back"),
        ("CONFIG", "SET", "maxmemory", "0"),
    ])


def test_info_reports_the_eviction_figures(pair):
    for c in pair.values():
        c.call("CONFIG", "SET", "maxmemory", "100mb")
        c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    fields = {}
    for name, c in pair.items():
        lines = {**info_fields(c, "memory"), **info_fields(c, "stats")}
        fields[name] = {k: lines.get(k) for k in ("maxmemory", "maxmemory_human", "maxmemory_policy")}
        for k in ("evicted_keys", "total_eviction_exceeded_time", "current_eviction_exceeded_time"):
            assert k in lines, (name, k)
    assert fields["lapse"] == fields["redis"] == {"maxmemory": "104857600", "maxmemory_human": "100.00M",
                                                  "maxmemory_policy": "allkeys-lfu"}


def test_nothing_to_evict_is_oom_and_changes_nothing(pair):
    oom = RespError("OOM command not allowed when used memory > 'maxmemory'.")
    got = same(pair, [
        ("MSET", "a", "1", "b", "2", "c", "3"),
        # noeviction: writes refused, reads and deletions served.
        ("CONFIG", "SET", "maxmemory", "1"), ("SET", "d", "4"), ("GET", "a"), ("DEL", "c"), ("DBSIZE",),
        # volatile-* with only persistent keys: nothing may go.
        ("CONFIG", "SET", "maxmemory-policy", "volatile-lru"), ("SET", "d", "4"), ("DBSIZE",),
        ("CONFIG", "SET", "maxmemory-policy", "volatile-ttl"), ("SET", "d", "4"), ("DBSIZE",),
        # allkeys-*: every key goes, then the write is refused all the same.
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"), ("SET", "d", "4"), ("DBSIZE",),
        ("CONFIG", "SET", "maxmemory", "0"), ("SET", "d", "4"), ("DBSIZE",),
    ])
    assert got[2] == got[7] == got[10] == got[13] == oom
    assert got[5] == got[8] == got[11] == 2 and got[14] == 0 and got[17] == 1


# ---------------------------------------------------------------------------------------
# lapse only: which keys go

VALUE = "x" * 4000


def info_fields(c, section):
    text = c.call("INFO", section)
    text = text.decode() if isinstance(text, bytes) else text
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def used_memory(c):
    return int(info_fields(c, "memory")["used_memory"])


@pytest.fixture(scope="module")
def lapse_alone():
    with running_server(kind="lapse", options={"threads": 2}) as srv:
        with srv.client() as c:
            if info_fields(c, "memory").get("mem_allocator") != "jemalloc":
                pytest.skip("needs the allocator's own used_memory (jemalloc); this build reports the resident set")
        yield srv


@pytest.fixture
def c(lapse_alone):
    client = RawClient(lapse_alone.port)
    reset(client)
    client.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    client.call("CONFIG", "RESETSTAT")
    yield client
    reset(client)
    client.call("DEBUG", "FREEZE-CLOCK", "0")
    client.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    client.close()


def settled_used_memory(c):
    """used_memory once memory freed by earlier commands has settled: a dropped container's
    items are freed in the background after FLUSHALL."""
    c.call("MEMORY", "PURGE")  # also empties this connection's thread's allocator cache
    deadline = time.monotonic() + 3
    last = used_memory(c)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = used_memory(c)
        if now == last:
            break
        last = now
    return last


def set_limit_from_used(c, offset):
    """Sets maxmemory to used memory + `offset` bytes. Under allkeys-lfu a maxmemory also sizes
    the read history (a power of two near 1/20 of it, counted in used memory:
    engine/frequency_sketch.h), so a first limit 6% above used memory (room for the history:
    setting a limit evicts at once) brings in a history of the final size, and used memory is
    measured again with it."""
    if c.call("CONFIG", "GET", "maxmemory-policy")[1] in (b"allkeys-lfu", "allkeys-lfu"):
        c.call("CONFIG", "SET", "maxmemory", str(settled_used_memory(c) * 106 // 100))
    c.call("CONFIG", "SET", "maxmemory", str(settled_used_memory(c) + offset))


def squeeze(c, policy, excess_values):
    """Sets maxmemory about `excess_values` values below what is used now, then writes one
    small key so that eviction runs; returns the write's reply."""
    c.call("CONFIG", "SET", "maxmemory-policy", policy)
    set_limit_from_used(c, -excess_values * len(VALUE))
    time.sleep(0.01)  # the maxmemory check reads a figure up to 1 ms old (server/memory.h)
    reply = c.call("SET", "probe", "1")
    return reply.message if isinstance(reply, RespError) else reply


def present(c, keys):
    return [k for k, n in zip(keys, c.pipeline([("EXISTS", k) for k in keys])) if n == 1]


@pytest.mark.lapse_only
def test_volatile_ttl_evicts_the_nearest_deadline_first(c):
    c.call("DEBUG", "FREEZE-CLOCK", "1")
    # Enough samples that the first round, which samples every shard, sees every volatile key.
    c.call("CONFIG", "SET", "maxmemory-samples", "64")
    c.pipeline([("SET", f"p{i}", VALUE) for i in range(40)])
    c.pipeline([("SET", f"t{i:02}", VALUE, "EX", str(1000 + 100 * i)) for i in range(40)])
    assert squeeze(c, "volatile-ttl", 10) == "OK"
    left = present(c, [f"t{i:02}" for i in range(40)])
    gone = sorted(set(f"t{i:02}" for i in range(40)) - set(left))
    assert gone, "nothing was evicted"
    # The keys that went are the ones with the nearest deadlines: a prefix of the order.
    assert gone == [f"t{i:02}" for i in range(len(gone))]
    assert len(present(c, [f"p{i}" for i in range(40)])) == 40


@pytest.mark.lapse_only
@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"])
def test_volatile_policies_never_touch_persistent_keys(c, policy):
    c.pipeline([("SET", f"p{i}", VALUE) for i in range(60)])
    c.pipeline([("SET", f"v{i}", VALUE, "EX", "1000") for i in range(20)])
    assert squeeze(c, policy, 10) == "OK"
    assert len(present(c, [f"p{i}" for i in range(60)])) == 60
    assert len(present(c, [f"v{i}" for i in range(20)])) < 20
    # Once no volatile key is left, writes are refused.
    c.call("CONFIG", "SET", "maxmemory", str(used_memory(c) - 40 * len(VALUE)))
    time.sleep(0.01)
    assert c.call("SET", "more", VALUE) == RespError("OOM command not allowed when used memory > 'maxmemory'.")
    assert present(c, [f"v{i}" for i in range(20)]) == []
    assert len(present(c, [f"p{i}" for i in range(60)])) == 60
    assert int(info_fields(c, "stats")["evicted_keys"]) == 20


@pytest.mark.lapse_only
@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-lru"])
def test_lru_gives_up_the_keys_idle_longest(c, policy):
    c.call("DEBUG", "FREEZE-CLOCK", "1")
    c.call("CONFIG", "SET", "maxmemory-samples", "10")
    keys = [f"k{i}" for i in range(120)]
    c.pipeline([("SET", k, VALUE, "EX", "100000") for k in keys])
    c.call("DEBUG", "ADVANCE", "100000")  # 100 s
    hot = keys[:60]
    c.pipeline([("GET", k) for k in hot])
    assert squeeze(c, policy, 20) == "OK"
    gone = set(keys) - set(present(c, keys))
    assert len(gone) >= 8
    assert gone <= set(keys[60:]), f"recently used keys evicted: {sorted(gone & set(hot))}"


@pytest.mark.lapse_only
def test_lfu_gives_up_the_least_used_keys(c):
    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    c.call("CONFIG", "SET", "maxmemory-samples", "10")
    keys = [f"k{i}" for i in range(120)]
    c.pipeline([("SET", k, VALUE) for k in keys])
    hot = keys[:60]
    for _ in range(30):
        c.pipeline([("GET", k) for k in hot])
    assert squeeze(c, "allkeys-lfu", 20) == "OK"
    gone = set(keys) - set(present(c, keys))
    assert len(gone) >= 8
    assert gone <= set(keys[60:]), f"frequently used keys evicted: {sorted(gone & set(hot))}"


@pytest.mark.lapse_only
def test_expired_data_goes_first_whatever_the_ru_budget(c):
    c.call("DEBUG", "FREEZE-CLOCK", "1")
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # the reclaimer does not run: all expired data waits
    c.call("CSETTTL", "box", "10")
    c.pipeline([("IPUT", "box", f"i{i}", '{"v":"%s"}' % VALUE) for i in range(30)])
    c.call("CSETRU", "box", "1")  # and the container's budget could not pay for it anyway
    c.pipeline([("SET", f"e{i}", VALUE, "PX", "5000") for i in range(30)])
    c.pipeline([("SET", f"p{i}", VALUE) for i in range(30)])
    c.call("DEBUG", "ADVANCE", "20000")
    assert squeeze(c, "allkeys-lru", 20) == "OK"
    assert len(present(c, [f"p{i}" for i in range(30)])) == 30
    stats, reclaim = info_fields(c, "stats"), info_fields(c, "reclaim")
    assert stats["evicted_keys"] == "0"
    assert int(reclaim["reclaimed_forced_total"]) == 60
    cinfo = c.call("CINFO", "box")
    assert cinfo[cinfo.index(b"stored_items") + 1] == 0


@pytest.mark.lapse_only
def test_items_are_never_evicted(c):
    c.pipeline([("IPUT", "box", f"i{i}", '{"v":"%s"}' % VALUE) for i in range(30)])
    c.pipeline([("SET", f"k{i}", VALUE) for i in range(30)])
    reply = squeeze(c, "allkeys-lru", 60)  # more than all the keys hold
    assert reply.startswith("OOM command not allowed")
    assert present(c, [f"k{i}" for i in range(30)]) == []
    assert c.call("ICOUNT", "box") == 30


def stop_evicting(c):
    """Lifts maxmemory, so that what the checks after it see is what the squeeze did."""
    c.call("CONFIG", "SET", "maxmemory", "0")


def item_ids(c, container, ids):
    """The ids still stored. By ITTL (-2: absent), not IGET, whose replies would grow the
    output buffer, which counts towards maxmemory, and so evict more."""
    return [i for i, ttl in zip(ids, c.pipeline([("ITTL", container, i) for i in ids])) if ttl != -2]


def cinfo(c, container):
    reply = c.call("CINFO", container)
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


@pytest.mark.lapse_only
def test_items_of_an_opted_in_container_are_evicted_and_no_others(c):
    c.call("DEBUG", "FREEZE-CLOCK", "1")
    assert c.call("CSETEVICT", "cache", "ON") == "OK"
    ids = [f"i{i}" for i in range(40)]
    c.pipeline([("IPUT", "cache", i, '{"v":"%s"}' % VALUE) for i in ids])
    c.pipeline([("IPUT", "data", i, '{"v":"%s"}' % VALUE) for i in ids])
    # The squeeze's own key is then by far the most recent: on a loaded machine, items written
    # in the same second as it tied with it, and it was once evicted instead of an item.
    c.call("DEBUG", "ADVANCE", "100000")
    assert squeeze(c, "allkeys-lru", 15) == "OK"
    stop_evicting(c)
    left = item_ids(c, "cache", ids)
    assert 0 < len(left) < 40
    assert item_ids(c, "data", ids) == ids
    evicted = 40 - len(left)
    assert cinfo(c, "cache")["evictable"] == 1 and cinfo(c, "data")["evictable"] == 0
    assert cinfo(c, "cache")["evicted_items_total"] == evicted
    assert cinfo(c, "data")["evicted_items_total"] == 0
    assert int(info_fields(c, "reclaim")["evicted_items_total"]) == evicted
    assert info_fields(c, "stats")["evicted_keys"] == "0"  # keys only, as in Redis
    # Billed to the container as reclamation: a delete of each item's size.
    assert float(cinfo(c, "cache")["ru_reclaim_total"]) >= evicted


@pytest.mark.lapse_only
def test_opting_out_again_protects_the_items(c):
    c.call("CSETEVICT", "cache", "ON")
    assert c.call("CSETEVICT", "cache", "off") == "OK"
    ids = [f"i{i}" for i in range(30)]
    c.pipeline([("IPUT", "cache", i, '{"v":"%s"}' % VALUE) for i in ids])
    assert squeeze(c, "allkeys-random", 10).startswith("OOM command not allowed")
    assert c.call("ICOUNT", "cache") == 30


@pytest.mark.lapse_only
@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"])
def test_volatile_policies_never_evict_items(c, policy):
    c.call("CSETEVICT", "cache", "ON")
    c.pipeline([("IPUT", "cache", f"i{i}", '{"v":"%s"}' % VALUE) for i in range(30)])
    c.pipeline([("SET", f"v{i}", VALUE, "EX", "1000") for i in range(5)])
    assert squeeze(c, policy, 20).startswith("OOM command not allowed")
    assert c.call("ICOUNT", "cache") == 30
    assert present(c, [f"v{i}" for i in range(5)]) == []


@pytest.mark.lapse_only
@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu"])
def test_items_and_keys_compete_on_one_score(c, policy):
    c.call("DEBUG", "FREEZE-CLOCK", "1")
    c.call("CONFIG", "SET", "maxmemory-policy", policy)
    c.call("CONFIG", "SET", "maxmemory-samples", "10")
    c.call("CSETEVICT", "cache", "ON")
    ids, keys = [f"i{i}" for i in range(80)], [f"k{i}" for i in range(80)]
    c.pipeline([("IPUT", "cache", i, '{"v":"%s"}' % VALUE) for i in ids])
    c.pipeline([("SET", k, VALUE) for k in keys])
    c.call("DEBUG", "ADVANCE", "100000")  # 100 s: the hot half is read after it
    hot_ids, hot_keys = ids[:40], keys[:40]
    for _ in range(30 if policy == "allkeys-lfu" else 1):
        c.pipeline([("IGET", "cache", i) for i in hot_ids])
        c.pipeline([("GET", k) for k in hot_keys])
    assert squeeze(c, policy, 30) == "OK"
    stop_evicting(c)
    gone_items = set(ids) - set(item_ids(c, "cache", ids))
    gone_keys = set(keys) - set(present(c, keys))
    assert len(gone_items) + len(gone_keys) >= 10
    assert gone_items and gone_keys, "both kinds should be chosen from"
    assert not gone_items & set(hot_ids), f"hot items evicted: {sorted(gone_items & set(hot_ids))}"
    assert not gone_keys & set(hot_keys), f"hot keys evicted: {sorted(gone_keys & set(hot_keys))}"


@pytest.mark.lapse_only
def test_evicted_items_are_in_the_change_feed_and_send_item_events(c, lapse_alone):
    c.call("CSETEVICT", "cache", "ON")
    ids = [f"i{i}" for i in range(40)]
    c.pipeline([("IPUT", "cache", i, '{"v":"%s"}' % VALUE) for i in ids])
    c.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
    sub = RawClient(lapse_alone.port)
    try:
        sub.call("SUBSCRIBE", "__itemevent@0__:evicted")
        assert squeeze(c, "allkeys-random", 10) == "OK"
        stop_evicting(c)
        gone = set(ids) - set(item_ids(c, "cache", ids))
        assert gone
        heard = names_heard(sub, len(gone), b"message", lambda m: [m[2]])
        assert heard == {f"cache/{i}" for i in gone}
    finally:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()
    _, changes = c.call("ICHANGES", "cache", "FROM", "BEGINNING", "COUNT", "1000")
    evicted = [ch.decode() for ch in changes if b'"evicted":true' in ch]
    assert len(evicted) == len(gone)
    assert all('"timeToLiveExpired":false' in ch for ch in evicted)


@pytest.mark.lapse_only
def test_a_new_policy_applies_to_the_next_command(c):
    c.pipeline([("SET", f"k{i}", VALUE) for i in range(40)])
    assert squeeze(c, "noeviction", 20).startswith("OOM command not allowed")
    assert c.call("DBSIZE") == 40
    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    assert c.call("SET", "probe", "1") == "OK"
    assert c.call("DBSIZE") < 41
    assert int(info_fields(c, "stats")["evicted_keys"]) >= 1


def evict_some(c, keys):
    """Squeezes out about ten values' worth under allkeys-random; returns the keys that went."""
    assert squeeze(c, "allkeys-random", 10) == "OK"
    gone = set(keys) - set(present(c, keys))
    assert gone
    return gone


def names_heard(client, count, kind, names_of):
    """Reads messages of `kind` until `count` key names were heard; returns them."""
    heard = set()
    client.sock.settimeout(5)
    while len(heard) < count:
        message = client.read_reply()
        assert message[0] == kind
        heard.update(name.decode() for name in names_of(message))
    return heard


@pytest.mark.lapse_only
def test_evictions_send_evicted_events_and_break_watches(c, lapse_alone):
    c.pipeline([("SET", f"k{i}", VALUE) for i in range(40)])
    c.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
    watcher = RawClient(lapse_alone.port)
    sub = RawClient(lapse_alone.port)
    try:
        sub.call("SUBSCRIBE", "__keyevent@0__:evicted")
        keys = [f"k{i}" for i in range(40)]
        watcher.call("WATCH", *keys)
        gone = evict_some(c, keys)
        assert names_heard(sub, len(gone), b"message", lambda m: [m[2]]) == gone
        watcher.call("MULTI")
        watcher.call("SET", "w", "1")
        assert watcher.call("EXEC") is None
    finally:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
        watcher.close()
        sub.close()


@pytest.mark.lapse_only
def test_an_evicted_key_is_invalidated_for_its_trackers(c, lapse_alone):
    keys = [f"k{i}" for i in range(40)]
    c.pipeline([("SET", k, VALUE) for k in keys])
    tracker = RawClient(lapse_alone.port)
    try:
        tracker.call("HELLO", "3")
        assert tracker.call("CLIENT", "TRACKING", "ON", "NOLOOP") == "OK"
        tracker.pipeline([("GET", k) for k in keys])
        gone = evict_some(c, keys)
        assert names_heard(tracker, len(gone), b"invalidate", lambda m: m[1]) == gone
    finally:
        tracker.close()
