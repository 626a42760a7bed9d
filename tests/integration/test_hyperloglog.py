"""HyperLogLog (issue 13): PFADD, PFCOUNT and PFMERGE against Debian's redis-server 7.0,
reply bytes compared, GET of every HLL included: the same commands must build the same
strings byte for byte (sparse code, dense registers, cached cardinality and its stale bit).

Beyond the scenarios, values are carried between the servers (GET on one, SET on the other)
and must go on counting and growing the same, and bad input (wrong types, corrupt HLLs) must
get Redis's errors and leave the keyspace as Redis leaves it.
"""
import shutil

import pytest
import redis

from lapse_harness import RawClient

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

HEADER = b"HYLL"


def elems(prefix, n, start=0):
    return [f"{prefix}{i}" for i in range(start, start + n)]


def sparse(code, card=b"\x00" * 8):
    """A sparse HLL with the given opcodes and cache bytes."""
    return HEADER + b"\x01\x00\x00\x00" + card + code


STALE = b"\x00" * 7 + b"\x80"
EMPTY = sparse(b"\x7f\xff", STALE)
HALF = sparse(b"\x5f\xff", STALE)          # XZERO:8192, half of the registers
SHORT = sparse(b"\x7f\xfe", STALE)         # 16383 registers
LONG = sparse(b"\x7f\xff\x00", STALE)      # 16385 registers
CUT = sparse(b"\x7f", STALE)               # XZERO missing its second byte
# ZERO:64 x3, ZERO:63, then an XZERO cut short that reads as XZERO:16129: 16384 registers.
CUT_VALID = sparse(b"\x3f\x3f\x3f\x3e\x7f", STALE)
VAL_PAST_END = sparse(b"\x7f\xff\x80", STALE)   # XZERO:16384 then VAL:1,1
CACHED_BAD = sparse(b"\x7f\xfe", b"\x07" + b"\x00" * 7)  # corrupt, but a valid cache of 7
DENSE_SHORT = HEADER + b"\x00" + b"\x00" * 11 + b"\x00" * 100
BAD_ENCODING = HEADER + b"\x02" + b"\x00" * 11 + b"\x7f\xff"

# Each step: (client index, command, args...). Every reply is compared as bytes.
SCENARIOS = {
    "pfdebug": [
        (0, "PFDEBUG"), (0, "PFDEBUG", "ENCODING"), (0, "PFDEBUG", "ENCODING", "nokey"),
        (0, "PFDEBUG", "ENCODING", "a", "b"), (0, "PFDEBUG", "bogus", "nokey"),
        (0, "SET", "s", "not an hll"), (0, "PFDEBUG", "ENCODING", "s"), (0, "PFDEBUG", "bogus", "s"),
        (0, "LPUSH", "l", "x"), (0, "PFDEBUG", "ENCODING", "l"),
        (0, "PFADD", "h", *elems("e", 7)), (0, "PFDEBUG", "ENCODING", "h"), (0, "PFDEBUG", "DECODE", "h"),
        (0, "PFDEBUG", "bogus", "h"), (0, "PFDEBUG", "TODENSE", "h"), (0, "PFDEBUG", "ENCODING", "h"),
        (0, "PFDEBUG", "TODENSE", "h"), (0, "PFDEBUG", "DECODE", "h"), (0, "PFCOUNT", "h"), (0, "GET", "h"),
        (0, "PFADD", "g", "x"), (0, "PFDEBUG", "GETREG", "g"), (0, "GET", "g"), (0, "PFDEBUG", "GETREG", "g"),
        (0, "SET", "cut", CUT), (0, "PFDEBUG", "DECODE", "cut"), (0, "SET", "valid", CUT_VALID),
        (0, "PFDEBUG", "DECODE", "valid"), (0, "SET", "short", SHORT), (0, "PFDEBUG", "DECODE", "short"),
        (0, "PFDEBUG", "TODENSE", "short"), (0, "PFDEBUG", "GETREG", "short"), (0, "GET", "short"),
        (0, "SET", "past", VAL_PAST_END), (0, "PFDEBUG", "DECODE", "past"),
        (0, "MULTI"), (0, "PFDEBUG", "ENCODING", "h"), (0, "EXEC"),
        (0, "EVAL", "return redis.call('pfdebug', 'encoding', KEYS[1])", "1", "h"),
        (0, "COMMAND", "GETKEYS", "PFDEBUG", "GETREG", "k"), (0, "PFSELFTEST", "x"), (0, "PFSELFTEST"),
    ],
    "sparse_10": [
        (0, "PFADD", "k", *elems("e", 10)),
        (0, "GET", "k"),
        (0, "PFCOUNT", "k"),
        (0, "GET", "k"),  # the estimate is cached in the string
        (0, "PFADD", "k", "e3"),
        (0, "GET", "k"),  # unchanged: the cache stays valid
        (0, "PFADD", "k", "new"),
        (0, "GET", "k"),
        (0, "OBJECT", "ENCODING", "k"),
        (0, "STRLEN", "k"),
    ],
    "sparse_1000": [
        (0, "PFADD", "k", *elems("e", 1000)),
        (0, "GET", "k"),
        (0, "PFCOUNT", "k"),
        (0, "GET", "k"),
        (0, "PFADD", "k", *elems("e", 500, 900)),
        (0, "GET", "k"),
        (0, "PFCOUNT", "k"),
    ],
    "dense_20000": [
        (0, "PFADD", "k", *elems("e", 20000)),
        (0, "GET", "k"),
        (0, "PFCOUNT", "k"),
        (0, "GET", "k"),
        (0, "PFADD", "k", *elems("e", 10)),
        (0, "GET", "k"),
        (0, "PFADD", "k", "fresh1", "fresh2", "fresh3"),
        (0, "PFCOUNT", "k"),
        (0, "GET", "k"),
        (0, "STRLEN", "k"),
    ],
    "one_at_a_time_past_promotion": [
        *[(0, "PFADD", "k", f"one{i}") for i in range(2600)],
        (0, "GET", "k"),
        (0, "PFCOUNT", "k"),
        (0, "STRLEN", "k"),
    ],
    "one_at_a_time_snapshots": [
        step
        for i in range(0, 400, 7)
        for step in [(0, "PFADD", "s", *elems("v", 7, i)), (0, "GET", "s")]
    ],
    "no_elements": [
        (0, "PFADD", "k"),
        (0, "GET", "k"),
        (0, "PFADD", "k"),
        (0, "PFCOUNT", "k"),
        (0, "GET", "k"),
        (0, "PFCOUNT", "missing"),
        (0, "EXISTS", "missing"),
    ],
    "binary_and_empty_elements": [
        (0, "PFADD", "k", "", "\x00", "\x00\x01\xff", "a" * 1000, "é"),
        (0, "GET", "k"),
        (0, "PFCOUNT", "k"),
    ],
    "merge_sparse_and_dense": [
        (0, "PFADD", "s", *elems("x", 50)),
        (0, "PFADD", "d", *elems("y", 20000)),
        (0, "PFMERGE", "m", "s", "d"),
        (0, "GET", "m"),
        (0, "PFCOUNT", "m"),
        (0, "PFMERGE", "s2", "s"),  # copies of a sparse HLL, key by key in register order
        (0, "GET", "s2"),
        (0, "PFMERGE", "s", "d"),  # a sparse destination turned dense
        (0, "GET", "s"),
        (0, "PFCOUNT", "s"),
    ],
    "merge_sparse_into_sparse": [
        (0, "PFADD", "a", *elems("x", 300)),
        (0, "PFADD", "b", *elems("x", 300, 200)),
        (0, "PFADD", "c", *elems("z", 900)),
        (0, "PFMERGE", "a", "b"),
        (0, "GET", "a"),
        (0, "PFMERGE", "n", "a", "b", "c"),  # past 3000 bytes: promoted while merging
        (0, "GET", "n"),
        (0, "PFCOUNT", "n"),
        (0, "PFCOUNT", "a", "b", "c"),
    ],
    "merge_missing_and_empty": [
        (0, "PFMERGE", "dest"),
        (0, "GET", "dest"),
        (0, "PFMERGE", "dest2", "nokey1", "nokey2"),
        (0, "GET", "dest2"),
        (0, "PFCOUNT", "dest", "dest2", "nokey"),
    ],
    "count_several": [
        (0, "PFADD", "a", *elems("x", 100)),
        (0, "PFADD", "b", *elems("x", 200, 50)),
        (0, "PFADD", "c", *elems("q", 30000)),
        (0, "PFCOUNT", "a", "b"),
        (0, "PFCOUNT", "a", "b", "c"),
        (0, "PFCOUNT", "a", "a", "missing"),
        (0, "GET", "a"),  # a count of several keys caches nothing
        (0, "GET", "c"),
    ],
    "ttl_kept": [
        (0, "PFADD", "k", "a"),
        (0, "EXPIRE", "k", "1000"),
        (0, "PFADD", "k", *elems("e", 100)),
        (0, "TTL", "k"),
        (0, "PFCOUNT", "k"),
        (0, "TTL", "k"),
        (0, "PFMERGE", "k", "k"),
        (0, "TTL", "k"),
        (0, "PFADD", "k", *elems("e", 20000)),
        (0, "TTL", "k"),
    ],
    "sparse_max_bytes": [
        (0, "CONFIG", "GET", "hll-sparse-max-bytes"),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "100"),
        (0, "CONFIG", "GET", "hll-sparse-max-bytes"),
        (0, "PFADD", "k", *elems("e", 40)),
        (0, "STRLEN", "k"),
        (0, "GET", "k"),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "0"),
        (0, "PFADD", "z", "a"),
        (0, "STRLEN", "z"),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "-1"),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "abc"),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "3000"),
        (0, "PFADD", "w", *elems("e", 40)),
        (0, "STRLEN", "w"),
    ],
    "watch_sees_pfcount_writeback": [
        (0, "PFADD", "k", "a", "b"),
        (0, "WATCH", "k"),
        (1, "PFCOUNT", "k"),  # rewrites the cache: the key changed
        (0, "MULTI"),
        (0, "PFCOUNT", "k"),
        (0, "EXEC"),
        (0, "WATCH", "k"),
        (1, "PFCOUNT", "k"),  # cache valid: nothing written
        (1, "PFADD", "k", "a"),  # no register moved
        (0, "MULTI"),
        (0, "PFCOUNT", "k"),
        (0, "EXEC"),
    ],
    "transactions_and_scripts": [
        (0, "MULTI"),
        (0, "PFADD", "a", "x", "y"),
        (0, "PFADD", "b", "z"),
        (0, "PFMERGE", "c", "a", "b"),
        (0, "PFCOUNT", "c"),
        (0, "PFCOUNT", "a", "b"),
        (0, "EXEC"),
        (0, "GET", "c"),
        (0, "EVAL", "redis.call('pfadd', KEYS[1], 'p', 'q'); return redis.call('pfcount', KEYS[1])", "1", "e"),
        (0, "EVAL", "return redis.pcall('pfadd', KEYS[1], 'p')", "1", "notanhll"),
        (0, "GET", "e"),
    ],
    "wrong_types": [
        (0, "SET", "str", "hello"),
        (0, "SET", "int", "12345"),
        (0, "SET", "empty", ""),
        (0, "SET", "hyll", "HYLL"),
        (0, "PFADD", "good", "a"),
        (0, "PFADD", "str", "a"),
        (0, "PFADD", "int", "a"),
        (0, "PFADD", "empty", "a"),
        (0, "PFADD", "hyll", "a"),
        (0, "PFCOUNT", "str"),
        (0, "PFCOUNT", "good", "str"),
        (0, "PFCOUNT", "str", "nosuch"),
        (0, "PFMERGE", "good", "str"),
        (0, "PFMERGE", "str", "good"),
        (0, "PFMERGE", "new", "good", "int"),
        (0, "EXISTS", "new"),
        (0, "GET", "str"),
        (0, "GET", "good"),
        (0, "PFADD"),
        (0, "PFCOUNT"),
        (0, "PFMERGE"),
    ],
    "corrupt_hlls": [
        (0, "SET", "short", SHORT),
        (0, "SET", "long", LONG),
        (0, "SET", "cut", CUT),
        (0, "SET", "cached", CACHED_BAD),
        (0, "SET", "dshort", DENSE_SHORT),
        (0, "SET", "enc2", BAD_ENCODING),
        (0, "SET", "hdr", sparse(b"")),
        (0, "SET", "cutvalid", CUT_VALID),
        (0, "SET", "valpast", VAL_PAST_END),
        (0, "PFCOUNT", "cutvalid"),
        (0, "PFCOUNT", "cutvalid", "valpast"),
        (0, "PFCOUNT", "valpast", "cutvalid"),
        (0, "PFADD", "cutvalid", "zz"),
        (0, "GET", "cutvalid"),
        (0, "PFADD", "valpast", "zz"),
        (0, "GET", "valpast"),
        (0, "SET", "cutvalid", CUT_VALID),
        (0, "SET", "valpast", VAL_PAST_END),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "0"),  # every growth promotes
        (0, "PFADD", "cutvalid", "zz"),
        (0, "STRLEN", "cutvalid"),
        (0, "PFADD", "valpast", "zz"),
        (0, "GET", "valpast"),
        (0, "CONFIG", "SET", "hll-sparse-max-bytes", "3000"),
        (0, "PFADD", "good", *elems("g", 20)),
        (0, "PFCOUNT", "short"),
        (0, "PFCOUNT", "long"),
        (0, "PFCOUNT", "cut"),
        (0, "PFCOUNT", "hdr"),
        (0, "PFCOUNT", "cached"),  # the cache is trusted
        (0, "PFCOUNT", "cached", "good"),  # a merge walks the registers
        (0, "PFCOUNT", "dshort"),
        (0, "PFCOUNT", "enc2"),
        (0, "PFCOUNT", "good", "long"),
        (0, "PFMERGE", "dest", "good", "short"),
        (0, "EXISTS", "dest"),
        (0, "PFMERGE", "good", "cut"),
        (0, "GET", "good"),
        (0, "PFADD", "hdr", "a"),
        (0, "PFADD", "long", "a"),
        (0, "PFADD", "dshort", "a"),
        (0, "PFADD", "short", "a"),
        (0, "GET", "short"),
        (0, "GET", "long"),
        (0, "GET", "cut"),
        (0, "GET", "hdr"),
        (0, "GET", "cached"),
    ],
    "object_encoding": [
        # A short HLL stored by SET is embstr; the PF commands leave it raw, as Redis does.
        (0, "SET", "a", EMPTY),
        (0, "OBJECT", "ENCODING", "a"),
        (0, "PFCOUNT", "a"),
        (0, "OBJECT", "ENCODING", "a"),
        (0, "SET", "b", EMPTY),
        (0, "PFADD", "b"),
        (0, "OBJECT", "ENCODING", "b"),
        (0, "SET", "c", EMPTY),
        (0, "PFMERGE", "c"),
        (0, "OBJECT", "ENCODING", "c"),
        (0, "PFCOUNT", "a", "b"),
        (0, "SET", "d", EMPTY),
        (0, "PFCOUNT", "d", "a"),
        (0, "OBJECT", "ENCODING", "d"),
        (0, "GET", "c"),
    ],
    "corrupt_partly_applied": [
        # Registers 0..8191 exist: Redis edits in place, so elements before the first one
        # that lands beyond them stay added when the error comes.
        (0, "SET", "half", HALF),
        (0, "PFADD", "half", *elems("h", 40)),
        (0, "GET", "half"),
        (0, "PFCOUNT", "half"),
        (0, "SET", "empty", EMPTY),
        (0, "PFADD", "empty", *elems("h", 40)),
        (0, "GET", "empty"),
    ],
}


def run_scenario(port, steps, clients=2):
    conns = [RawClient(port) for _ in range(clients)]
    try:
        assert conns[0].call("FLUSHALL") == "OK"
        out = []
        for step in steps:
            out.append(conns[step[0]].call_raw(*step[1:]))
        return out
    finally:
        conns[0].call("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
        for c in conns:
            c.close()


def short(step):
    text = repr(step)
    return text if len(text) < 200 else text[:200] + "..."


@needs_redis
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_replies_as_redis(name, server, redis_server):
    steps = SCENARIOS[name]
    expected = run_scenario(redis_server.port, steps)
    actual = run_scenario(server.port, steps)
    diffs = [f"{short(s)}\n      redis: {w[:300]!r}\n      lapse: {g[:300]!r}"
             for s, w, g in zip(steps, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs[:10])


@needs_redis
@pytest.mark.parametrize("n", [10, 1000, 20000])
def test_transplant_both_ways(n, server, redis_server):
    r = redis.Redis(port=redis_server.port)
    l = redis.Redis(port=server.port)
    for c in (r, l):
        c.flushall()
    # Redis -> lapse.
    r.pfadd("h", *elems("t", n))
    l.set("h", r.get("h"))
    assert l.get("h") == r.get("h")
    assert l.pfcount("h") == r.pfcount("h")
    assert l.get("h") == r.get("h")
    for c in (r, l):
        c.pfadd("h", *elems("more", n // 2 + 1))
    assert l.get("h") == r.get("h")
    assert l.pfcount("h") == r.pfcount("h")
    # lapse -> Redis.
    l.pfadd("g", *elems("u", n))
    r.set("g", l.get("g"))
    assert r.pfcount("g") == l.pfcount("g")
    assert r.get("g") == l.get("g")
    for c in (r, l):
        c.pfadd("g", *elems("v", 100))
        c.pfmerge("m", "g", "h")
    assert r.get("g") == l.get("g")
    assert r.get("m") == l.get("m")
    assert r.pfcount("g", "h") == l.pfcount("g", "h")


def test_keys_on_many_shards(server):
    """PFCOUNT of several keys and PFMERGE spread over every shard see one consistent state."""
    c = redis.Redis(port=server.port)
    c.flushall()
    keys = [f"hll:{i}" for i in range(64)]
    for i, k in enumerate(keys):
        c.pfadd(k, *elems(f"k{i}-", 50))
    union = c.pfcount(*keys)
    assert 64 * 50 * 0.97 < union < 64 * 50 * 1.03
    assert c.pfmerge("all", *keys) is True
    assert c.pfcount("all") == union
    assert c.pfcount("all", *keys) == union


def test_command_metadata(server):
    with RawClient(server.port) as c:
        info = {entry[0].decode(): entry for entry in c.call("COMMAND", "INFO", "pfadd", "pfcount", "pfmerge")}
        docs = c.call("COMMAND", "DOCS", "pfmerge")
    # name, arity, flags, first key, last key, step, ACL categories
    assert info["pfadd"][1:6] == [-2, ["write", "denyoom", "fast"], 1, 1, 1]
    assert info["pfcount"][1:6] == [-2, ["readonly"], 1, -1, 1]
    assert info["pfmerge"][1:6] == [-2, ["write", "denyoom"], 1, -1, 1]
    assert info["pfcount"][6] == ["@read", "@hyperloglog", "@slow"]
    assert info["pfadd"][6] == ["@write", "@hyperloglog", "@fast"]
    assert b"hyperloglog" in docs[1]


@needs_redis
def test_random_corruptions_same_as_redis(server, redis_server):
    """Valid HLLs with a few random bytes changed (code and header): every command gives
    Redis's reply and leaves the same bytes behind."""
    import random
    rnd = random.Random(1313)
    r = RawClient(redis_server.port)
    l = RawClient(server.port)
    try:
        for c in (r, l):
            c.call("FLUSHALL")
            c.call("PFADD", "base", *elems("b", 300))
            c.call("PFADD", "dense", *elems("d", 5000))
        base = r.call("GET", "base")
        assert l.call("GET", "base") == base
        for case in range(300):
            value = bytearray(base)
            if rnd.random() < 0.5:
                # Still valid: VAL opcodes given other values (neighbours of one value may then
                # stand unfused, as no PFADD would leave them).
                vals = [i for i in range(16, len(value)) if value[i] & 0x80 and not (value[i - 1] & 0xc0) == 0x40]
                for pos in rnd.sample(vals, rnd.randint(1, 20)):
                    value[pos] = 0x80 | (rnd.randrange(32) << 2) | (value[pos] & 3)
            else:
                for _ in range(rnd.randint(1, 3)):
                    pos = rnd.randrange(4, len(value)) if rnd.random() < 0.9 else rnd.randrange(4, 16)
                    value[pos] = rnd.randrange(256)
            if rnd.random() < 0.2:
                value = value[:rnd.randrange(16, len(value) + 1)]
            steps = [
                ("SET", "v", bytes(value)),
                ("PFCOUNT", "v"),
                ("GET", "v"),
                ("PFCOUNT", "v", "base"),
                ("PFADD", "v", *elems(f"c{case}-", rnd.randint(0, 30))),
                ("GET", "v"),
                ("PFMERGE", "m", "v", "base"),
                ("GET", "m"),
                ("PFMERGE", "dense", "v"),
                ("GET", "dense"),
                ("DEL", "m"),
            ]
            for step in steps:
                want, got = r.call_raw(*step), l.call_raw(*step)
                assert want == got, f"case {case} {bytes(value).hex()} {short(step)}\n redis: {want[:200]!r}\n lapse: {got[:200]!r}"
    finally:
        r.close()
        l.close()
