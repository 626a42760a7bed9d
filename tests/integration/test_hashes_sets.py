"""Hashes and sets (issue 13), against Debian's redis-server 7.0: every scenario runs on both
servers and the replies must match byte for byte.

Where Redis's order is a hash table's (HGETALL of a hashtable-encoded hash, SMEMBERS of a set
of strings, ...) it is not part of the contract and differs from lapse's; those steps are
marked SORTED and compared as sorted decoded replies. Random replies (SPOP, SRANDMEMBER,
HRANDFIELD with a count below the size) are checked for their properties in the tests below
the scenarios.
"""
import shutil

import pytest
import redis

from lapse_harness import RespError as E
from scenarios import assert_same_replies, s

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

DEFAULTS = [("hash-max-listpack-entries", "512"), ("hash-max-listpack-value", "64"), ("set-max-intset-entries", "512"),
            ("zset-max-listpack-value", "64")]
LONG = "x" * 70
WRONG = [("SET", "str", "v")]


def wrongtype(*cmds):
    return WRONG + [c for c in cmds]


SCENARIOS = {
    "hset_hget_basics": [("HSET", "h", "a", "1", "b", "2", "c", "3"), ("HGET", "h", "b"), ("HGET", "h", "zz"),
                         ("HGET", "nokey", "a"), ("HMGET", "h", "a", "zz", "c"), ("HMGET", "nokey", "a", "b"),
                         ("HGETALL", "h"), ("HKEYS", "h"), ("HVALS", "h"), ("HLEN", "h"), ("HLEN", "nokey"),
                         ("HSET", "h", "a", "10", "d", "4"), ("HGETALL", "h"), ("HSTRLEN", "h", "a"),
                         ("HSTRLEN", "h", "zz"), ("HSTRLEN", "nokey", "a"), ("HEXISTS", "h", "a"), ("HEXISTS", "h", "zz"),
                         ("HEXISTS", "nokey", "a"), ("HGETALL", "nokey"), ("HKEYS", "nokey"), ("HVALS", "nokey"),
                         ("TYPE", "h"), ("OBJECT", "ENCODING", "h"), ("EXISTS", "h")],
    "hmset_hsetnx": [("HMSET", "h", "a", "1", "b", "2"), ("HSETNX", "h", "a", "9"), ("HSETNX", "h", "c", "3"),
                     ("HSETNX", "new", "f", "v"), ("HGETALL", "h"), ("HGETALL", "new"), ("HMSET", "h", "a"),
                     ("HMSET", "h", "a", "1", "b"), ("HSET", "h", "a"), ("HSET", "h", "a", "1", "b"), ("HSET", "h"),
                     ("HGETALL", "h")],
    "hdel_deletes_empty_hash": [("HSET", "h", "a", "1", "b", "2"), ("HDEL", "h", "zz"), ("HDEL", "h", "a", "a", "zz"),
                                ("HGETALL", "h"), ("HDEL", "h", "b"), ("EXISTS", "h"), ("TYPE", "h"),
                                ("HDEL", "nokey", "a"), ("HSET", "h", "x", "1"), ("HDEL", "h", "x", "y"), ("EXISTS", "h")],
    "hincrby": [("HINCRBY", "h", "n", "5"), ("HINCRBY", "h", "n", "-7"), ("HGET", "h", "n"),
                ("HINCRBY", "h", "n", "x"), ("HINCRBY", "h", "n", "1.5"), ("HSET", "h", "s", "abc", "z", "007", "sp", " 1"),
                ("HINCRBY", "h", "s", "1"), ("HINCRBY", "h", "z", "1"), ("HINCRBY", "h", "sp", "1"),
                ("HSET", "h", "big", "9223372036854775807"), ("HINCRBY", "h", "big", "1"),
                ("HSET", "h", "small", "-9223372036854775808"), ("HINCRBY", "h", "small", "-1"),
                ("HINCRBY", "h", "small", "9223372036854775807"), ("HINCRBY", "nokey", "f", "x"), ("EXISTS", "nokey"),
                ("HGETALL", "h")],
    "hincrbyfloat": [("HINCRBYFLOAT", "h", "f", "1.5"), ("HINCRBYFLOAT", "h", "f", "-0.25"), ("HINCRBYFLOAT", "h", "f", "1e3"),
                     ("HINCRBYFLOAT", "h", "f", "inf"), ("HINCRBYFLOAT", "h", "f", "-inf"), ("HINCRBYFLOAT", "h", "f", "nan"),
                     ("HINCRBYFLOAT", "h", "f", "x"), ("HSET", "h", "s", "abc", "big", "1e308"),
                     ("HINCRBYFLOAT", "h", "s", "1"), ("HINCRBYFLOAT", "h", "big", "1e308"), ("HINCRBYFLOAT", "h", "big", "1"),
                     ("HINCRBYFLOAT", "h", "i", "3"), ("HINCRBYFLOAT", "h", "i", "0.1"), ("HINCRBYFLOAT", "nokey", "f", "inf"),
                     ("EXISTS", "nokey"), s("HGETALL", "h")],
    "hash_encoding_thresholds": [("HSET", "h", "a", "1"), ("OBJECT", "ENCODING", "h"), ("HSET", "h", "b", LONG),
                                 ("OBJECT", "ENCODING", "h"), ("HDEL", "h", "b"), ("OBJECT", "ENCODING", "h"),
                                 ("HSET", "h2", LONG, "1"), ("OBJECT", "ENCODING", "h2"),
                                 ("HINCRBY", "h3", LONG, "1"), ("OBJECT", "ENCODING", "h3"),
                                 ("HSETNX", "h4", "a", LONG), ("OBJECT", "ENCODING", "h4"),
                                 ("CONFIG", "SET", "hash-max-listpack-entries", "3"),
                                 ("HSET", "h5", "a", "1", "b", "2", "c", "3"), ("OBJECT", "ENCODING", "h5"),
                                 ("HSET", "h5", "d", "4"), ("OBJECT", "ENCODING", "h5"), s("HGETALL", "h5"),
                                 ("CONFIG", "SET", "hash-max-ziplist-entries", "512"),
                                 ("CONFIG", "GET", "hash-max-listpack-entries"),
                                 ("CONFIG", "SET", "hash-max-listpack-value", "2"), ("HSET", "h6", "ab", "cd"),
                                 ("OBJECT", "ENCODING", "h6"), ("HSET", "h6", "abc", "1"), ("OBJECT", "ENCODING", "h6"),
                                 ("CONFIG", "SET", "hash-max-listpack-value", "64"), ("CONFIG", "GET", "hash-max-ziplist-value"),
                                 ("CONFIG", "SET", "hash-max-listpack-entries", "-1"),
                                 ("CONFIG", "SET", "hash-max-listpack-value", "x")],
    # A refused increment leaves a packed hash packed, even with a field now past the value limit.
    "refused_increment_keeps_the_encoding": [("HSET", "h", "longfield", "x", "big", "9223372036854775807"),
                                             ("CONFIG", "SET", "hash-max-listpack-value", "3"),
                                             ("HINCRBY", "h", "longfield", "1"), ("OBJECT", "ENCODING", "h"),
                                             ("HINCRBYFLOAT", "h", "longfield", "1"), ("OBJECT", "ENCODING", "h"),
                                             ("HINCRBY", "h", "big", "1"), ("OBJECT", "ENCODING", "h"),
                                             ("HINCRBY", "h", "big", "-1"), ("OBJECT", "ENCODING", "h")],
    # A packed payload is restored packed unless it has too many entries (Redis's rdbLoadObject).
    "restore_keeps_packed_values_past_the_limit": [
        ("HSET", "h", "longfieldname", "v"), ("ZADD", "z", "1", "longmember"),
        ("CONFIG", "SET", "hash-max-listpack-value", "3"), ("CONFIG", "SET", "zset-max-listpack-value", "3"),
        ("EVAL", "return redis.call('RESTORE', KEYS[2], 0, redis.call('DUMP', KEYS[1]))", "2", "h", "h2"),
        ("EVAL", "return redis.call('RESTORE', KEYS[2], 0, redis.call('DUMP', KEYS[1]))", "2", "z", "z2"),
        ("OBJECT", "ENCODING", "h2"), ("OBJECT", "ENCODING", "z2"), ("HSET", "h2", "a", "b"),
        ("OBJECT", "ENCODING", "h2"), ("HSET", "h2", "abcd", "b"), ("OBJECT", "ENCODING", "h2"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "0"),
        ("EVAL", "return redis.call('RESTORE', KEYS[2], 0, redis.call('DUMP', KEYS[1]))", "2", "h", "h3"),
        ("OBJECT", "ENCODING", "h3")],
    "hash_many_fields": [("HSET", "h", *[x for i in range(600) for x in (f"f{i}", str(i))]), ("HLEN", "h"),
                         ("OBJECT", "ENCODING", "h"), ("HGET", "h", "f599"), s("HKEYS", "h"), ("HDEL", "h", "f0", "f1"),
                         ("HLEN", "h"), ("HINCRBY", "h", "f5", "10"), ("HGET", "h", "f5")],
    "hscan": [("HSET", "h", "a", "1", "b", "2", "ab", "3"), ("HSCAN", "h", "0"), ("HSCAN", "h", "0", "MATCH", "a*"),
              ("HSCAN", "h", "0", "COUNT", "1"), ("HSCAN", "h", "0", "COUNT", "0"), ("HSCAN", "h", "0", "COUNT", "x"),
              ("HSCAN", "h", "0", "COUNT"), ("HSCAN", "h", "0", "FOO", "1"), ("HSCAN", "h", "x"), ("HSCAN", "nokey", "0"),
              ("HSCAN", "nokey", "x"), ("HSCAN", "nokey", "0", "COUNT", "0"), ("HSCAN", "h", "0", "TYPE", "hash"),
              ("HSCAN", "h", "-1"), ("HSCAN", "h")],
    "hrandfield_deterministic": [("HSET", "h", "a", "1", "b", "2"), ("HRANDFIELD", "nokey"), ("HRANDFIELD", "nokey", "3"),
                                 ("HRANDFIELD", "h", "0"), ("HRANDFIELD", "h", "5"), ("HRANDFIELD", "h", "2", "WITHVALUES"),
                                 ("HRANDFIELD", "h", "2", "withvalues"), ("HRANDFIELD", "h", "1", "FOO"),
                                 ("HRANDFIELD", "h", "1", "WITHVALUES", "x"), ("HRANDFIELD", "h", "x"),
                                 ("HRANDFIELD", "h", "-9223372036854775808"),
                                 ("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"),
                                 ("HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"),
                                 ("HRANDFIELD", "h", "-9223372036854775808", "FOO"),
                                 ("HRANDFIELD", "h", "9223372036854775807", "WITHVALUES"),
                                 ("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"),
                                 ("HRANDFIELD", "h", "x", "FOO"),
                                 ("HELLO", "3"), ("HRANDFIELD", "h", "5", "WITHVALUES"), ("HGETALL", "h"),
                                 ("HRANDFIELD", "nokey", "1", "WITHVALUES")],
    "hash_wrongtype": wrongtype(("HSET", "str", "a", "1"), ("HSETNX", "str", "a", "1"), ("HGET", "str", "a"),
                                ("HMGET", "str", "a"), ("HMSET", "str", "a", "1"), ("HGETALL", "str"), ("HDEL", "str", "a"),
                                ("HLEN", "str"), ("HSTRLEN", "str", "a"), ("HEXISTS", "str", "a"), ("HKEYS", "str"),
                                ("HVALS", "str"), ("HINCRBY", "str", "a", "1"), ("HINCRBYFLOAT", "str", "a", "1"),
                                ("HRANDFIELD", "str"), ("HRANDFIELD", "str", "2"), ("HSCAN", "str", "0"),
                                ("HSCAN", "str", "0", "COUNT", "0"), ("HINCRBY", "str", "a", "x"), ("GET", "str"),
                                ("HSET", "h", "a", "1"), ("GET", "h"), ("APPEND", "h", "x"), ("INCR", "h"), ("STRLEN", "h"),
                                ("GETRANGE", "h", "0", "1"), ("SETRANGE", "h", "0", "x"), ("GETSET", "h", "x"),
                                ("GETDEL", "h"), ("GETEX", "h"), ("SET", "h", "v", "GET"), ("MGET", "h", "str"),
                                ("HGETALL", "h"), ("SET", "h", "v"), ("GET", "h"), ("HSET", "h2", "a", "1"),
                                ("SETNX", "h2", "v"), ("MSETNX", "h2", "v"), ("TYPE", "h2"),
                                ("SETBIT", "h2", "1", "1"), ("GETBIT", "h2", "1"), ("BITCOUNT", "h2"),
                                ("BITPOS", "h2", "1"), ("BITOP", "AND", "d", "h2", "str"), ("BITOP", "NOT", "h2", "str"),
                                ("BITFIELD", "h2", "GET", "u8", "0"), ("BITFIELD_RO", "h2", "GET", "u8", "0"),
                                ("LCS", "h2", "str"), ("LCS", "str", "h2"), ("EXISTS", "d"), ("HGETALL", "h2")),
    "hash_arity": [("HGET", "h"), ("HGETALL",), ("HDEL", "h"), ("HMGET", "h"), ("HLEN",), ("HEXISTS", "h"),
                   ("HINCRBY", "h", "f"), ("HSTRLEN", "h"), ("HRANDFIELD",), ("HSETNX", "h", "f")],
    "sadd_srem_smembers": [("SADD", "s", "3", "1", "2", "1"), ("SMEMBERS", "s"), ("SCARD", "s"), ("OBJECT", "ENCODING", "s"),
                           ("SADD", "s", "-5", "70000", "5000000000"), ("SMEMBERS", "s"), ("SISMEMBER", "s", "70000"),
                           ("SISMEMBER", "s", "7"), ("SISMEMBER", "s", "x"), ("SMISMEMBER", "s", "1", "x", "-5"),
                           ("SREM", "s", "1", "x", "70000"), ("SMEMBERS", "s"), ("SREM", "s", "2", "3", "-5", "5000000000"),
                           ("EXISTS", "s"), ("SCARD", "nokey"), ("SMEMBERS", "nokey"), ("SISMEMBER", "nokey", "a"),
                           ("SMISMEMBER", "nokey", "a", "b"), ("SREM", "nokey", "a"), ("TYPE", "s")],
    "intset_canonical_integers": [("SADD", "s", "1", "01", "+1", "-0", " 1", "1.0", "9223372036854775807",
                                   "9223372036854775808", "-9223372036854775808"), s("SMEMBERS", "s"), ("SCARD", "s"),
                                  ("OBJECT", "ENCODING", "s"), ("SADD", "i", "-9223372036854775808", "9223372036854775807", "0"),
                                  ("OBJECT", "ENCODING", "i"), ("SMEMBERS", "i"), ("SISMEMBER", "i", "0"),
                                  ("SISMEMBER", "i", "00")],
    "set_encoding_thresholds": [("SADD", "s", "a"), ("OBJECT", "ENCODING", "s"), ("SADD", "i", "1"),
                                ("SADD", "i", "b"), ("OBJECT", "ENCODING", "i"), ("SREM", "i", "b"), ("OBJECT", "ENCODING", "i"),
                                ("CONFIG", "SET", "set-max-intset-entries", "3"), ("SADD", "j", "1", "2", "3"),
                                ("OBJECT", "ENCODING", "j"), ("SADD", "j", "4"), ("OBJECT", "ENCODING", "j"),
                                s("SMEMBERS", "j"), ("CONFIG", "GET", "set-max-intset-entries"),
                                ("CONFIG", "SET", "set-max-intset-entries", "512"),
                                ("SADD", "big", *[str(i) for i in range(600)]), ("OBJECT", "ENCODING", "big"),
                                ("SCARD", "big"), ("SADD", "words", *[f"w{i}" for i in range(300)]), ("SCARD", "words"),
                                ("SISMEMBER", "words", "w299"), ("SREM", "words", "w0", "w299"), ("SCARD", "words")],
    "set_algebra": [("SADD", "a", "1", "2", "3", "4"), ("SADD", "b", "3", "4", "5"), ("SADD", "c", "4", "x"),
                    ("SINTER", "a", "b"), ("SINTER", "a", "b", "c"), ("SINTER", "a", "nokey"), ("SINTER", "a"),
                    ("SUNION", "a", "b"), s("SUNION", "a", "c"), ("SUNION", "nokey"), ("SDIFF", "a", "b"),
                    ("SDIFF", "a", "b", "c"), ("SDIFF", "nokey", "a"), ("SDIFF", "a", "nokey"), ("SDIFF", "a", "a"),
                    ("SINTERSTORE", "d", "a", "b"), ("SMEMBERS", "d"), ("OBJECT", "ENCODING", "d"),
                    ("SUNIONSTORE", "d", "a", "c"), ("SCARD", "d"), ("OBJECT", "ENCODING", "d"),
                    ("SDIFFSTORE", "d", "a", "b"), ("SMEMBERS", "d"), ("SINTERSTORE", "d", "a", "nokey"), ("EXISTS", "d"),
                    ("SET", "d", "v"), ("EXPIRE", "d", "100"), ("SUNIONSTORE", "d", "a"), ("TYPE", "d"), ("TTL", "d"),
                    ("SUNIONSTORE", "a", "a", "b"), ("SMEMBERS", "a"), ("SDIFFSTORE", "e", "nokey"), ("EXISTS", "e"),
                    ("SINTERCARD", "2", "a", "b"), ("SINTERCARD", "2", "a", "b", "LIMIT", "1"),
                    ("SINTERCARD", "2", "a", "b", "LIMIT", "0"), ("SINTERCARD", "1", "a"), ("SINTERCARD", "2", "a", "nokey"),
                    ("SINTERCARD", "0", "a"), ("SINTERCARD", "x", "a"), ("SINTERCARD", "3", "a", "b"),
                    ("SINTERCARD", "2", "a", "b", "LIMIT", "-1"), ("SINTERCARD", "2", "a", "b", "LIMIT", "x"),
                    ("SINTERCARD", "2", "a", "b", "LIMIT"), ("SINTERCARD", "2", "a", "b", "FOO", "1"),
                    ("SINTERCARD", "1")],
    "set_algebra_wrongtype": wrongtype(("SADD", "a", "1"), ("SINTER", "nokey", "str"), ("SINTER", "str", "nokey"),
                                       ("SINTER", "a", "str"), ("SUNION", "a", "str"), ("SDIFF", "a", "str"),
                                       ("SDIFF", "nokey", "str"), ("SINTERSTORE", "d", "a", "str"), ("EXISTS", "d"),
                                       ("SUNIONSTORE", "d", "str"), ("SDIFFSTORE", "d", "a", "str"),
                                       ("SINTERCARD", "2", "a", "str"), ("SUNIONSTORE", "str", "a"), ("TYPE", "str"),
                                       ("SMEMBERS", "str")),
    "smove": [("SADD", "a", "1", "2"), ("SADD", "b", "x"), ("SMOVE", "a", "b", "1"), ("SMEMBERS", "a"), s("SMEMBERS", "b"),
              ("SMOVE", "a", "b", "9"), ("SMOVE", "nokey", "b", "1"), ("SMOVE", "a", "a", "2"), ("SMOVE", "a", "a", "9"),
              ("SMOVE", "a", "new", "2"), ("EXISTS", "a"), ("SMEMBERS", "new"), ("OBJECT", "ENCODING", "new"),
              ("SET", "str", "v"), ("SMOVE", "str", "b", "x"), ("SMOVE", "b", "str", "x"), ("SMOVE", "nokey", "str", "x"),
              s("SMEMBERS", "b"), ("SMOVE", "b", "c"), ("SMOVE", "b", "c", "x", "y")],
    "spop_srandmember_deterministic": [("SADD", "s", "1", "2", "3"), ("SPOP", "nokey"), ("SPOP", "nokey", "2"),
                                       ("SPOP", "s", "0"), ("SPOP", "s", "-1"), ("SPOP", "s", "x"), ("SPOP", "s", "1", "2"),
                                       ("SRANDMEMBER", "nokey"), ("SRANDMEMBER", "nokey", "2"), ("SRANDMEMBER", "s", "0"),
                                       ("SRANDMEMBER", "s", "10"), ("SRANDMEMBER", "s", "x"),
                                       ("SRANDMEMBER", "s", "-9223372036854775808"), ("SRANDMEMBER", "s", "1", "2"),
                                       ("HELLO", "3"), ("SMEMBERS", "s"), ("SRANDMEMBER", "s", "10"), ("SPOP", "s", "0"),
                                       ("SPOP", "nokey", "1"), ("SUNION", "s"), ("SINTER", "s", "s"), ("SDIFF", "s", "nokey"),
                                       ("SPOP", "s", "3"), ("EXISTS", "s"), ("SMEMBERS", "nokey"),
                                       ("SADD", "p", "a", "3", "1"), ("SREM", "p", "a"), ("SPOP", "p", "10"),
                                       ("SADD", "p", "x", "y"), ("SCARD", "p")],
    "sscan": [("SADD", "s", "1", "2", "10"), ("SSCAN", "s", "0"), ("SSCAN", "s", "0", "MATCH", "1*"),
              ("SSCAN", "s", "0", "COUNT", "0"), ("SSCAN", "s", "x"), ("SSCAN", "nokey", "0"), ("SSCAN", "s", "0", "MATCH"),
              ("SADD", "w", "ab", "b"), s("SSCAN", "w", "0", "MATCH", "a*")],
    "set_wrongtype": wrongtype(("SADD", "str", "a"), ("SREM", "str", "a"), ("SMEMBERS", "str"), ("SISMEMBER", "str", "a"),
                               ("SMISMEMBER", "str", "a"), ("SCARD", "str"), ("SPOP", "str"), ("SPOP", "str", "2"),
                               ("SRANDMEMBER", "str"), ("SRANDMEMBER", "str", "2"), ("SSCAN", "str", "0"), ("GET", "str"),
                               ("SADD", "s", "a"), ("HSET", "s", "a", "1"), ("HGET", "s", "a"), ("GET", "s"), ("INCR", "s"),
                               ("SADD", "h", "x"), ("HSET", "h2", "a", "1"), ("SADD", "h2", "a"), ("SPOP", "str", "x")),
    "keys_on_collections": [("HSET", "h", "a", "1"), ("SADD", "s", "x"), ("SADD", "i", "1"), ("TYPE", "h"), ("TYPE", "s"),
                            ("EXPIRE", "h", "100"), ("TTL", "h"), ("PERSIST", "h"), ("TTL", "h"), ("COPY", "h", "h2"),
                            ("HGETALL", "h2"), ("COPY", "s", "s2"), ("SMEMBERS", "s2"), ("COPY", "i", "i2"),
                            ("OBJECT", "ENCODING", "i2"), ("RENAME", "h", "h3"), ("EXISTS", "h"), ("HGETALL", "h3"),
                            ("RENAMENX", "s", "h3"), ("MOVE", "s", "1"), ("EXISTS", "s"), ("SELECT", "1"), ("SMEMBERS", "s"),
                            ("SELECT", "0"), ("COPY", "h3", "s", "DB", "1"), ("DEL", "h3", "i", "nokey"), ("UNLINK", "s2"),
                            ("EXISTS", "h3", "s2", "i2"), s("KEYS", "*"), ("SCAN", "0", "TYPE", "hash"),
                            ("SCAN", "0", "TYPE", "set"), ("SCAN", "0", "TYPE", "string"), ("DBSIZE",),
                            ("HSET", "big", *[x for i in range(600) for x in (f"f{i}", "v")]), ("COPY", "big", "big2"),
                            ("HLEN", "big2"), ("OBJECT", "ENCODING", "big2"), ("HDEL", "big", "f1"), ("HLEN", "big2"),
                            ("RENAME", "big2", "big3"), ("HLEN", "big3"), ("FLUSHALL",), ("DBSIZE",)],
    "transactions_and_scripts": [("MULTI",), ("HSET", "h", "a", "1"), ("SADD", "s", "1", "2"), ("HGET", "h", "a"),
                                 ("SCARD", "s"), ("SUNIONSTORE", "d", "s", "nokey"), ("EXEC",),
                                 ("EVAL", "redis.call('hset', KEYS[1], 'f', 'v'); return redis.call('hgetall', KEYS[1])", "1", "h"),
                                 ("EVAL", "return redis.call('smembers', KEYS[1])", "1", "s"),
                                 ("EVAL", "return redis.call('hget', KEYS[1], 'a')", "1", "s"),
                                 ("EVAL", "return redis.pcall('sadd', KEYS[1], 'a')", "1", "h")],
}


@needs_redis
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_replies_as_redis(name, server, redis_server):
    assert_same_replies(SCENARIOS[name], server, redis_server, DEFAULTS)


# ---- Random replies: properties ----


def test_hrandfield_properties(r):
    fields = {f"f{i}": str(i) for i in range(20)}
    r.hset("h", mapping=fields)
    for _ in range(20):
        assert r.hrandfield("h") in fields
    picked = r.hrandfield("h", 5)
    assert len(picked) == 5 and len(set(picked)) == 5 and set(picked) <= set(fields)
    repeated = r.hrandfield("h", -50)
    assert len(repeated) == 50 and set(repeated) <= set(fields)
    with_values = r.hrandfield("h", 3, withvalues=True)
    assert len(with_values) == 6
    for f, v in zip(with_values[::2], with_values[1::2]):
        assert fields[f] == v
    # on a large (table) hash too
    r.hset("big", mapping={f"k{i}": "v" for i in range(1000)})
    assert len(set(r.hrandfield("big", 100))) == 100
    assert len(r.hrandfield("big", -2000)) == 2000


def test_spop_and_srandmember_properties(r):
    for key, members in (("ints", [str(i) for i in range(50)]), ("words", [f"w{i}" for i in range(50)]),
                         ("bigset", [f"m{i}" for i in range(1000)])):
        r.sadd(key, *members)
        assert r.srandmember(key) in members
        picked = r.srandmember(key, 10)
        assert len(picked) == 10 and len(set(picked)) == 10 and set(picked) <= set(members)
        assert len(r.srandmember(key, -100)) == 100
        assert r.scard(key) == len(members)
        popped = r.spop(key, 7)
        assert len(set(popped)) == 7 and set(popped) <= set(members)
        one = r.spop(key)
        assert one in members and one not in popped
        assert r.scard(key) == len(members) - 8
        assert not r.smismember(key, popped + [one]).count(1)
        rest = r.spop(key, 100000)
        assert len(rest) == len(members) - 8
        assert r.exists(key) == 0


def test_large_collections_scan_fully(r):
    r.hset("h", mapping={f"f{i}": str(i) for i in range(2000)})
    seen = {}
    cursor = 0
    while True:
        cursor, chunk = r.hscan("h", cursor, count=50)
        seen.update(chunk)
        if cursor == 0:
            break
    assert seen == {f"f{i}": str(i) for i in range(2000)}
    r.sadd("s", *[f"m{i}" for i in range(2000)])
    members = set()
    cursor = 0
    while True:
        cursor, chunk = r.sscan("s", cursor, count=50, match="m1*")
        members.update(chunk)
        if cursor == 0:
            break
    assert members == {f"m{i}" for i in range(2000) if str(i).startswith("1")}


def test_watch_sees_collection_changes(r):
    r.hset("h", "a", "1")
    r.sadd("s", "x")
    for change in (lambda o: o.hset("h", "b", "2"), lambda o: o.hdel("h", "a"), lambda o: o.sadd("s", "y"),
                   lambda o: o.srem("s", "x"), lambda o: o.hincrby("h", "a", 1), lambda o: o.spop("s")):
        r.hset("h", "a", "1")
        r.sadd("s", "x")
        pipe = r.pipeline()
        pipe.watch("h", "s")
        other = redis.Redis(port=r.connection_pool.connection_kwargs["port"], decode_responses=True)
        change(other)
        other.close()
        pipe.multi()
        pipe.get("k")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_bad_input_changes_nothing(raw):
    raw.call("HSET", "h", "a", "1")
    raw.call("SADD", "s", "1")
    bad = [("HSET", "h", "a"), ("HINCRBY", "h", "a", "x"), ("HINCRBYFLOAT", "h", "a", "nan"),
           ("HINCRBYFLOAT", "h", "a", "inf"), ("HSET", "s", "a", "1"), ("SADD", "h", "x"),
           ("SPOP", "s", "-1"), ("SINTERSTORE", "s", "h"), ("SMOVE", "s", "h", "1"),
           ("HRANDFIELD", "h", "x")]
    for cmd in bad:
        assert isinstance(raw.call(*cmd), E), cmd
    assert raw.call("HGETALL", "h") == [b"a", b"1"]
    assert raw.call("SMEMBERS", "s") == [b"1"]
    assert raw.call("DBSIZE") == 2


def test_memory_usage_counts_the_table(raw):
    raw.call("HSET", "small", "a", "1")
    raw.call("HSET", "big", *[x for i in range(1000) for x in (f"field{i}", "value")])
    small = raw.call("MEMORY", "USAGE", "small")
    big = raw.call("MEMORY", "USAGE", "big")
    assert small < 100
    assert big > 1000 * 20


def test_redis_py_session_store(r):
    """A session store as an application writes it with redis-py."""
    r.hset("session:1", mapping={"user": "ann", "cart": "3", "csrf": "x1"})
    r.expire("session:1", 600)
    assert r.hgetall("session:1") == {"user": "ann", "cart": "3", "csrf": "x1"}
    assert r.hincrby("session:1", "cart", 2) == 5
    assert 0 < r.ttl("session:1") <= 600
    r.sadd("online", "ann", "bob")
    r.sadd("admins", "ann")
    assert r.sinter("online", "admins") == {"ann"}
    assert r.smembers("online") == {"ann", "bob"}
    assert r.type("online") == "set" and r.type("session:1") == "hash"
