"""Keyspace notifications (notify-keyspace-events), against Debian's redis-server 7.0.

Differential: each scenario runs on lapse and on redis-server with a subscriber that has
PSUBSCRIBE '__key*__:*' (and SUBSCRIBE to a marker channel); the commands run on a second
connection, then a PUBLISH on the marker closes the scenario, and the exact sequence of
(channel, message) pairs before it must be the same on both servers. A scenario names the
classes it enables ("KEA", "Kl", "Eg$", "KEn", "Em", ...). Its setup commands run before the
classes are enabled, so they report nothing.

Steps are command tuples run on connection A; ("@b", *cmd) sends a command on connection B
without reading its reply and waits until the server counts one more blocked client (for
BLPOP and friends), ("@b?",) reads B's pending reply.

Besides the differential scenarios: `expired` for a key set with PX 100 (lazily via GET and
by the background reclaimer), CONFIG SET/GET round trips of the classes, events as RESP3
pushes, and Redis 7.4's hexpire/hpersist/hexpired for the HEXPIRE family, which Redis 7.0
lacks (those are checked against 7.4's documented events, on lapse only).
"""
from __future__ import annotations

import shutil
import time

import pytest

from lapse_harness import RawClient, RespError, wait_blocked

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

MARKER = "__events_marker__"

S3 = [("SADD", "s1", "a", "b", "c"), ("SADD", "s2", "b", "c", "d")]
Z2 = [("ZADD", "z1", "1", "a", "2", "b", "3", "c"), ("ZADD", "z2", "5", "b", "6", "d")]

# name: (classes, setup, steps)
SCENARIOS = {
    # ---- streams
    "streams": ("KEA", [], [
        ("XADD", "s", "1-0", "a", "1"), ("XADD", "s", "MAXLEN", "1", "2-0", "a", "2"),
        ("XADD", "s", "MAXLEN", "5", "3-0", "a", "3"), ("XADD", "s", "1-0", "a", "1"), ("XDEL", "s", "2-0"),
        ("XDEL", "s", "9-9"), ("XTRIM", "s", "MAXLEN", "0"), ("XTRIM", "s", "MAXLEN", "0"), ("XSETID", "s", "10-0"),
        ("XSETID", "s", "1-0"), ("XADD", "nokey", "NOMKSTREAM", "*", "a", "1"), ("XRANGE", "s", "-", "+"),
        ("COPY", "s", "s2"), ("RENAME", "s2", "s3"), ("DEL", "s", "s3"),
        ("@b", "XREAD", "BLOCK", "0", "STREAMS", "w", "$"), ("XADD", "w", "5-0", "f", "v"), ("@b?",),
    ]),
    "stream_groups": ("KEA", [], [
        ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"), ("XGROUP", "CREATE", "s", "g", "$"),
        ("XGROUP", "CREATE", "nokey", "g", "$"), ("XADD", "s", "1-0", "a", "1"),
        ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"), ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "bob"), ("XGROUP", "CREATECONSUMER", "s", "g", "bob"),
        ("XCLAIM", "s", "g", "carol", "0", "1-0"), ("XAUTOCLAIM", "s", "g", "dave", "0", "0"),
        ("XACK", "s", "g", "1-0"), ("XGROUP", "SETID", "s", "g", "0"), ("XGROUP", "DELCONSUMER", "s", "g", "bob"),
        ("XGROUP", "DELCONSUMER", "s", "g", "nobody"), ("XGROUP", "DESTROY", "s", "g"), ("XGROUP", "DESTROY", "s", "g"),
        ("XGROUP", "CREATE", "w", "g", "$", "MKSTREAM"),
        ("@b", "XREADGROUP", "GROUP", "g", "eve", "BLOCK", "0", "STREAMS", "w", ">"), ("XADD", "w", "5-0", "f", "v"),
        ("@b?",),
    ]),
    # ---- strings
    "set_family": ("KEA", [], [
        ("SET", "k", "v"), ("SET", "k", "w"), ("SET", "k", "x", "NX"), ("SET", "k", "y", "XX"),
        ("SET", "n", "y", "XX"), ("SET", "k", "z", "EX", "100"), ("SET", "k", "z", "KEEPTTL"),
        ("SET", "k", "a", "PX", "100000", "GET"), ("SET", "k", "b", "NX", "GET"), ("SET", "k", "v", "EX", "0"),
        ("SET", "k", "v", "BOGUS"), ("SETNX", "k", "1"), ("SETNX", "k2", "1"), ("SETEX", "e", "100", "v"),
        ("PSETEX", "e", "100000", "v"), ("SETEX", "e", "0", "v"), ("GETSET", "k", "new"), ("GETSET", "g", "new"),
        ("MSET", "m1", "1", "m2", "2", "m1", "3", "alpha", "a", "beta", "b", "gamma", "c"), ("MSETNX", "m1", "x", "m9", "y"),
        ("MSETNX", "m8", "x", "m9", "y"), ("MSET", "m1"),
    ]),
    "set_past_deadline": ("KEA", [], [
        ("SET", "k", "v", "PXAT", "1"), ("GET", "k"), ("SET", "j", "v"), ("SET", "j", "v", "EXAT", "1"),
        ("EXISTS", "j"),
    ]),
    "set_over_other_types": ("KEA", [("RPUSH", "l", "a"), ("SADD", "s", "m")], [
        ("SET", "l", "v"), ("SET", "s", "v", "GET"), ("GETSET", "s", "x"), ("SET", "s", "w", "GET"),
    ]),
    "getdel_getex": ("KEA", [("SET", "k", "v"), ("SET", "t", "v", "EX", "100"), ("RPUSH", "l", "a")], [
        ("GETDEL", "k"), ("GETDEL", "k"), ("GETDEL", "l"), ("GETEX", "t"), ("GETEX", "t", "EX", "200"),
        ("GETEX", "t", "PERSIST"), ("GETEX", "t", "PERSIST"), ("GETEX", "t", "PX", "100000"),
        ("GETEX", "t", "PXAT", "1"), ("GETEX", "t", "EX", "10"), ("GETEX", "missing", "EX", "10"),
        ("SET", "u", "1"), ("GETEX", "u", "EX", "-1"), ("GETEX", "u", "BAD"), ("GETEX", "l", "PERSIST"),
        ("GETEX", "u", "EXAT", "1"),
    ]),
    "append_setrange": ("KEA", [("RPUSH", "l", "a")], [
        ("APPEND", "a", "x"), ("APPEND", "a", "yz"), ("APPEND", "l", "x"), ("SETRANGE", "a", "1", "Q"),
        ("SETRANGE", "a", "10", "Q"), ("SETRANGE", "a", "0", ""), ("SETRANGE", "b", "0", ""), ("SETRANGE", "b", "2", "x"),
        ("SETRANGE", "a", "-1", "x"), ("SETRANGE", "l", "0", "x"), ("EXISTS", "b"),
    ]),
    "counters": ("KEA", [("SET", "s", "abc"), ("RPUSH", "l", "a"), ("SET", "t", "5", "EX", "100")], [
        ("INCR", "c"), ("INCR", "c"), ("DECR", "c"), ("INCRBY", "c", "10"), ("DECRBY", "c", "3"), ("INCRBY", "c", "x"),
        ("INCR", "s"), ("INCR", "l"), ("INCRBYFLOAT", "f", "1.5"), ("INCRBYFLOAT", "f", "-0.5"),
        ("INCRBYFLOAT", "s", "1"), ("INCRBYFLOAT", "f", "abc"), ("INCR", "t"), ("INCRBY", "c", "9223372036854775807"),
    ]),
    "strings_only_string_class": ("K$", [], [
        ("SET", "k", "v", "EX", "100"), ("APPEND", "k", "x"), ("INCR", "n"), ("DEL", "k"), ("GETDEL", "n"),
    ]),
    # ---- keys
    "del_unlink": ("KEA", [("SET", "a", "1"), ("SET", "b", "1"), ("RPUSH", "c", "x"), ("SET", "d", "1"),
                           ("SET", "alpha", "1"), ("SET", "beta", "1"), ("SET", "gamma", "1")], [
        ("DEL", "a", "missing", "b", "a"), ("UNLINK", "c", "d", "nope"), ("DEL", "nothing"),
        ("DEL", "gamma", "alpha", "beta"),
    ]),
    "expire_family": ("KEA", [("SET", "k", "v"), ("SET", "j", "v"), ("SET", "p", "v", "EX", "100")], [
        ("EXPIRE", "k", "100"), ("EXPIRE", "k", "50", "GT"), ("EXPIRE", "k", "500", "GT"), ("EXPIRE", "k", "5", "NX"),
        ("PEXPIRE", "k", "100000", "XX"), ("EXPIREAT", "k", "99999999999"), ("PEXPIREAT", "k", "99999999999999"),
        ("EXPIRE", "missing", "10"), ("EXPIRE", "k", "abc"), ("EXPIRE", "k", "10", "BOGUS"), ("PERSIST", "k"),
        ("PERSIST", "k"), ("PERSIST", "missing"), ("EXPIRE", "j", "-1"), ("EXISTS", "j"), ("PEXPIREAT", "p", "1"),
        ("SET", "q", "v"), ("EXPIREAT", "q", "1"), ("SET", "r", "v"), ("PEXPIRE", "r", "0"),
    ]),
    "rename": ("KEA", [("SET", "a", "1"), ("SET", "b", "2"), ("SET", "c", "3", "EX", "100"), ("RPUSH", "l", "x")], [
        ("RENAME", "a", "x"), ("RENAME", "x", "b"), ("RENAME", "missing", "y"), ("RENAME", "b", "b"),
        ("RENAMENX", "b", "c"), ("RENAMENX", "b", "n"), ("RENAMENX", "missing", "n2"), ("RENAME", "c", "alpha"),
        ("RENAME", "l", "beta"), ("RENAMENX", "beta", "beta"),
    ]),
    "copy_move": ("KEA", [("SET", "a", "1"), ("SET", "b", "2"), ("RPUSH", "l", "x"), ("SET", "m", "v", "EX", "100")], [
        ("COPY", "a", "c"), ("COPY", "a", "b"), ("COPY", "a", "b", "REPLACE"), ("COPY", "missing", "z"),
        ("COPY", "a", "a"), ("COPY", "l", "l2", "DB", "1"), ("COPY", "l", "l2", "DB", "1"),
        ("COPY", "l", "l2", "DB", "1", "REPLACE"), ("COPY", "a", "x", "BOGUS"), ("MOVE", "a", "1"),
        ("MOVE", "b", "1"), ("MOVE", "m", "1"), ("MOVE", "missing", "1"), ("MOVE", "c", "0"), ("SET", "b", "3"),
        ("MOVE", "b", "1"), ("SELECT", "1"), ("DEL", "a", "l2"), ("SELECT", "0"),
    ]),
    "flush_swap": ("KEA", [("SET", "a", "1"), ("SET", "b", "1"), ("SELECT", "1"), ("SET", "c", "1"), ("SELECT", "0")], [
        ("SWAPDB", "0", "1"), ("FLUSHDB",), ("SET", "x", "1"), ("FLUSHALL",), ("FLUSHALL", "ASYNC"),
    ]),
    "reads_and_keymiss": ("KEAm", [("SET", "a", "1"), ("RPUSH", "l", "x"), ("HSET", "h", "f", "v"),
                                   ("SADD", "s", "m"), ("ZADD", "z", "1", "m")], [
        ("GET", "a"), ("GET", "nope"), ("MGET", "a", "n1", "alpha", "n2"), ("EXISTS", "a", "n3"), ("TYPE", "n4"),
        ("TTL", "n5"), ("PTTL", "a"), ("STRLEN", "n6"), ("GETRANGE", "n7", "0", "1"), ("LRANGE", "n8", "0", "-1"),
        ("LLEN", "n9"), ("LINDEX", "l", "0"), ("HGET", "n10", "f"), ("HGETALL", "n11"), ("HLEN", "h"),
        ("SMEMBERS", "n12"), ("SISMEMBER", "s", "m"), ("SCARD", "n13"), ("ZRANGE", "n14", "0", "-1"),
        ("ZSCORE", "n15", "m"), ("ZCARD", "z"), ("OBJECT", "ENCODING", "n16"), ("TOUCH", "n17", "a"),
        ("GETBIT", "n18", "0"), ("BITCOUNT", "n19"), ("PFCOUNT", "n20"), ("GET", "l"), ("SUNION", "n21", "s"),
        ("ZUNION", "2", "n22", "z"), ("LPOS", "n23", "x"), ("HRANDFIELD", "n24"), ("SRANDMEMBER", "n25"),
        ("ZRANDMEMBER", "n26"), ("SORT", "n27"), ("DUMP_UNKNOWN_COMMAND",), ("GETDEL", "n28"),
    ]),
    "new_events": ("KEn", [("SET", "old", "1")], [
        ("SET", "a", "1"), ("SET", "a", "2"), ("RPUSH", "l", "x"), ("RPUSH", "l", "y"), ("HSET", "h", "f", "v"),
        ("SADD", "s", "m"), ("ZADD", "z", "1", "m"), ("APPEND", "ap", "x"), ("INCR", "i"), ("SETBIT", "b", "1", "1"),
        ("PFADD", "hll", "x"), ("RENAME", "a", "old"), ("COPY", "l", "l2"), ("MOVE", "s", "1"),
        ("SUNIONSTORE", "su", "s2", "z"), ("SADD", "s2", "x"), ("SUNIONSTORE", "su", "s2"), ("SUNIONSTORE", "su", "s2"),
        ("MSET", "m1", "1", "old", "2"), ("LPUSHX", "nol", "x"), ("SET", "t", "1", "PX", "100000"),
        ("LMOVE", "l", "l3", "LEFT", "RIGHT"), ("SMOVE", "s2", "s3", "x"), ("BITOP", "OR", "bo", "b"),
        ("PFMERGE", "pm", "hll"), ("ZUNIONSTORE", "zu", "1", "z"), ("SORT", "l", "STORE", "so"),
        ("HINCRBY", "h2", "f", "1"), ("ZINCRBY", "z2", "1", "m"), ("SETRANGE", "sr", "1", "x"), ("GETSET", "gs", "x"),
        ("SETNX", "sn", "1"), ("INCRBYFLOAT", "if", "1"), ("BITFIELD", "bf", "SET", "u8", "0", "1"),
    ]),
    "generic_only": ("Eg", [("SET", "a", "1"), ("RPUSH", "l", "x")], [
        ("EXPIRE", "a", "100"), ("SET", "a", "2"), ("RPOP", "l"), ("RENAME", "a", "b"), ("DEL", "b"),
    ]),
    "string_generic_keyevent": ("Eg$", [("SET", "a", "1")], [
        ("SET", "b", "2", "EX", "100"), ("SETEX", "c", "10", "v"), ("INCR", "a"), ("PERSIST", "b"), ("DEL", "a", "b"),
        ("RPUSH", "l", "x"),
    ]),
    # ---- lists
    "list_push_pop": ("KEA", [("SET", "str", "v")], [
        ("LPUSH", "l", "a", "b"), ("RPUSH", "l", "c"), ("LPUSHX", "l", "z"), ("RPUSHX", "l", "y"), ("LPUSHX", "no", "z"),
        ("RPUSHX", "no", "z"), ("LPUSH", "str", "x"), ("LPOP", "l"), ("RPOP", "l"), ("LPOP", "l", "0"),
        ("LPOP", "l", "2"), ("RPOP", "l", "5"), ("LPOP", "l"), ("RPOP", "no"), ("LPOP", "no", "2"), ("LPOP", "str"),
        ("RPUSH", "m", "1"), ("RPOP", "m"), ("RPUSH", "m", "1", "2"), ("RPOP", "m", "2"), ("LPOP", "l", "-1"),
    ]),
    "list_edit": ("KEA", [("RPUSH", "l", "a", "b", "c", "b", "a"), ("SET", "str", "v")], [
        ("LSET", "l", "0", "x"), ("LSET", "l", "99", "x"), ("LSET", "no", "0", "x"), ("LINSERT", "l", "BEFORE", "b", "n"),
        ("LINSERT", "l", "AFTER", "zz", "n"), ("LINSERT", "no", "AFTER", "b", "n"), ("LREM", "l", "0", "b"),
        ("LREM", "l", "0", "zz"), ("LREM", "no", "0", "b"), ("LTRIM", "l", "0", "-1"), ("LTRIM", "l", "1", "2"),
        ("LTRIM", "no", "0", "1"), ("LTRIM", "l", "5", "1"), ("EXISTS", "l"), ("RPUSH", "r", "a", "a"),
        ("LREM", "r", "0", "a"), ("LSET", "str", "0", "x"), ("LINSERT", "l", "MIDDLE", "a", "b"),
    ]),
    "list_move": ("KEA", [("RPUSH", "s", "a", "b", "c"), ("SET", "str", "v")], [
        ("LMOVE", "s", "d", "LEFT", "RIGHT"), ("LMOVE", "s", "d", "RIGHT", "LEFT"), ("RPOPLPUSH", "s", "s"),
        ("LMOVE", "s", "s", "LEFT", "LEFT"), ("LMOVE", "s", "alpha", "LEFT", "LEFT"), ("LMOVE", "no", "d", "LEFT", "LEFT"),
        ("LMOVE", "d", "str", "LEFT", "LEFT"), ("RPOPLPUSH", "d", "d2"), ("RPOPLPUSH", "d", "d2"),
        ("LMOVE", "d2", "d2", "LEFT", "RIGHT"),
    ]),
    "list_mpop": ("KEA", [("RPUSH", "a", "1", "2", "3"), ("RPUSH", "b", "x")], [
        ("LMPOP", "2", "no", "a", "LEFT"), ("LMPOP", "2", "a", "b", "RIGHT", "COUNT", "5"),
        ("LMPOP", "1", "a", "LEFT"), ("LMPOP", "2", "no", "b", "LEFT", "COUNT", "3"), ("LMPOP", "1", "no", "LEFT"),
        ("RPUSH", "b", "y"), ("BLPOP", "no", "b", "0"), ("RPUSH", "c", "1", "2"), ("BLPOP", "no", "c", "0"), ("BRPOP", "c", "0"),
        ("RPUSH", "c", "1"), ("BLMOVE", "c", "d", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "d", "e", "0"),
        ("BLMPOP", "0", "1", "e", "LEFT"),
    ]),
    "list_only": ("Kl", [("SET", "a", "1")], [
        ("RPUSH", "l", "a", "b"), ("LPOP", "l", "2"), ("SET", "a", "2"), ("EXPIRE", "a", "10"),
    ]),
    # ---- hashes
    "hashes": ("KEA", [("SET", "str", "v")], [
        ("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "1"), ("HMSET", "h", "c", "3"), ("HSETNX", "h", "a", "9"),
        ("HSETNX", "h", "d", "4"), ("HDEL", "h", "zz"), ("HDEL", "h", "a", "zz", "b"), ("HDEL", "no", "a"),
        ("HINCRBY", "h", "c", "2"), ("HINCRBY", "h", "c", "x"), ("HINCRBYFLOAT", "h", "f", "1.5"),
        ("HINCRBYFLOAT", "h", "d", "abc"), ("HSET", "str", "a", "1"), ("HDEL", "h", "c", "d", "f"), ("EXISTS", "h"),
        ("HSET", "h", "a"), ("HINCRBY", "n", "x", "1"), ("HINCRBYFLOAT", "n2", "x", "1"),
    ]),
    "hash_only": ("Kh", [("SET", "a", "1")], [
        ("HSET", "h", "a", "1"), ("HDEL", "h", "a"), ("SET", "a", "2"),
    ]),
    # ---- sets
    "sets": ("KEA", [("SET", "str", "v")], [
        ("SADD", "s", "a", "b", "c"), ("SADD", "s", "a"), ("SADD", "s", "a", "d"), ("SREM", "s", "zz"),
        ("SREM", "s", "a", "zz"), ("SREM", "no", "a"), ("SADD", "str", "a"), ("SPOP", "no"), ("SPOP", "s", "0"),
        ("SREM", "s", "b", "c", "d"), ("EXISTS", "s"), ("SADD", "t", "x"), ("SPOP", "t"), ("SADD", "t", "x", "y"),
        ("SPOP", "t", "5"), ("SADD", "u", "1", "2", "3"), ("SPOP", "u", "3"), ("SADD", "v", "1", "2", "3", "4"),
        ("SCARD", "v"),
    ]),
    "smove": ("KEA", [("SADD", "a", "1", "2"), ("SADD", "b", "2"), ("SET", "str", "v")], [
        ("SMOVE", "a", "b", "1"), ("SMOVE", "a", "b", "2"), ("SMOVE", "b", "b", "2"), ("SMOVE", "b", "c", "9"),
        ("SMOVE", "no", "c", "1"), ("SMOVE", "b", "str", "1"), ("SMOVE", "b", "c", "1"), ("SMOVE", "b", "c", "2"),
        ("SMOVE", "c", "alpha", "1"),
    ]),
    "set_stores": ("KEA", S3 + [("SET", "str", "v"), ("SET", "d", "old")], [
        ("SINTERSTORE", "d", "s1", "s2"), ("SUNIONSTORE", "d", "s1", "s2"), ("SDIFFSTORE", "d", "s1", "s2"),
        ("SDIFFSTORE", "d", "s1", "s1"), ("SINTERSTORE", "d", "s1", "no"), ("SINTERSTORE", "d", "s1", "no"),
        ("SUNIONSTORE", "d", "no"), ("SUNIONSTORE", "e", "no"), ("SUNIONSTORE", "e", "s1", "str"),
        ("SINTERSTORE", "alpha", "s2"), ("SDIFFSTORE", "s1", "s1", "s2"),
    ]),
    "sets_only": ("Ks", [], [
        ("SADD", "s", "a"), ("SPOP", "s"), ("SET", "x", "1"),
    ]),
    # ---- sorted sets
    "zsets": ("KEA", [("SET", "str", "v")], [
        ("ZADD", "z", "1", "a", "2", "b"), ("ZADD", "z", "1", "a"), ("ZADD", "z", "5", "a"), ("ZADD", "z", "NX", "9", "a"),
        ("ZADD", "z", "XX", "9", "c"), ("ZADD", "z", "XX", "9", "a"), ("ZADD", "z", "GT", "1", "a"),
        ("ZADD", "z", "LT", "1", "a"), ("ZADD", "z", "INCR", "2", "a"), ("ZADD", "z", "NX", "INCR", "2", "a"),
        ("ZADD", "z", "CH", "3", "a", "4", "x"), ("ZADD", "z", "nan", "a"), ("ZADD", "str", "1", "a"),
        ("ZADD", "no", "XX", "1", "a"), ("EXISTS", "no"), ("ZINCRBY", "z", "1", "b"), ("ZINCRBY", "z", "x", "b"),
        ("ZINCRBY", "n2", "1", "m"), ("ZREM", "z", "zz"), ("ZREM", "z", "a", "zz"), ("ZREM", "no", "a"),
        ("ZREM", "z", "b", "x", "c", "m"), ("EXISTS", "z"),
    ]),
    "zset_ranges": ("KEA", [("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f")], [
        ("ZREMRANGEBYSCORE", "z", "10", "20"), ("ZREMRANGEBYSCORE", "z", "1", "1"), ("ZREMRANGEBYRANK", "z", "0", "0"),
        ("ZREMRANGEBYRANK", "z", "10", "20"), ("ZREMRANGEBYLEX", "z", "[c", "[d"), ("ZREMRANGEBYLEX", "z", "[x", "[y"),
        ("ZREMRANGEBYSCORE", "no", "1", "2"), ("ZREMRANGEBYLEX", "z", "x", "y"), ("ZREMRANGEBYRANK", "z", "0", "-1"),
        ("EXISTS", "z"),
    ]),
    "zset_pops": ("KEA", [("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"), ("ZADD", "y", "1", "q")], [
        ("ZPOPMIN", "z"), ("ZPOPMAX", "z"), ("ZPOPMIN", "z", "0"), ("ZPOPMIN", "no"), ("ZPOPMAX", "z", "5"),
        ("ZMPOP", "2", "no", "y", "MIN"), ("ZADD", "z", "1", "a", "2", "b"), ("ZMPOP", "1", "z", "MAX", "COUNT", "1"),
        ("BZPOPMIN", "no", "z", "0"), ("ZADD", "y", "1", "q"), ("BZPOPMAX", "y", "0"), ("ZADD", "y", "1", "q"), ("BZMPOP", "0", "1", "y", "MIN"),
        ("ZPOPMIN", "z", "-1"),
    ]),
    "zset_stores": ("KEA", Z2 + [("SET", "str", "v"), ("SET", "d", "old")], [
        ("ZUNIONSTORE", "d", "2", "z1", "z2"), ("ZINTERSTORE", "d", "2", "z1", "z2"), ("ZDIFFSTORE", "d", "2", "z1", "z2"),
        ("ZDIFFSTORE", "d", "2", "z1", "z1"), ("ZINTERSTORE", "d", "2", "z1", "no"), ("ZINTERSTORE", "d", "2", "z1", "no"),
        ("ZUNIONSTORE", "e", "1", "no"), ("ZUNIONSTORE", "e", "2", "z1", "str"), ("ZRANGESTORE", "r", "z1", "0", "1"),
        ("ZRANGESTORE", "r", "z1", "5", "6"), ("ZRANGESTORE", "r", "z1", "5", "6"), ("ZRANGESTORE", "r2", "no", "0", "-1"),
        ("ZUNIONSTORE", "alpha", "1", "z2"), ("ZRANGESTORE", "z1", "z1", "0", "0"),
        ("ZUNIONSTORE", "d", "1", "z1", "WEIGHTS", "x"),
    ]),
    "geo": ("KEA", [("SET", "str", "v"), ("SET", "d", "old")], [
        ("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"),
        ("GEOADD", "g", "13.361389", "38.115556", "Palermo"), ("GEOADD", "g", "XX", "1", "1", "Palermo"),
        ("GEOADD", "g", "NX", "1", "1", "Palermo"), ("GEOADD", "g2", "XX", "1", "1", "a"), ("GEOADD", "g", "1", "100", "bad"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "e"), ("GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "e"),
        ("GEORADIUSBYMEMBER", "g", "Palermo", "300", "km", "STORE", "f"), ("GEORADIUS", "g", "0", "0", "1", "km", "STORE", "f"),
        ("GEOSEARCHSTORE", "d", "no", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "d", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEORADIUS", "g", "15", "37", "200", "km"),
    ]),
    "zsets_only": ("Kz", [], [
        ("ZADD", "z", "1", "a"), ("ZPOPMIN", "z"), ("SET", "x", "1"),
    ]),
    # ---- bits, HyperLogLog, SORT
    "bits": ("KEA", [("SET", "str", "\x01"), ("RPUSH", "l", "a")], [
        ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "0"), ("SETBIT", "b", "x", "1"),
        ("SETBIT", "l", "1", "1"), ("BITOP", "AND", "d", "b", "str"), ("BITOP", "OR", "d", "no1", "no2"),
        ("BITOP", "OR", "e", "no1"), ("BITOP", "NOT", "d", "b"), ("BITOP", "XOR", "d", "l"), ("BITOP", "BAD", "d", "b"),
        ("BITFIELD", "f", "SET", "u8", "0", "200"), ("BITFIELD", "f", "INCRBY", "u8", "0", "1"),
        ("BITFIELD", "f", "GET", "u8", "0"), ("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "100"),
        ("BITFIELD", "f2", "GET", "u8", "0"), ("BITFIELD", "f", "SET", "u8", "0", "1", "SET", "u8", "8", "2"),
        ("BITFIELD", "l", "SET", "u8", "0", "1"), ("BITFIELD", "f", "SET", "u8", "x", "1"),
    ]),
    "hyperloglog": ("KEA", [("SET", "str", "v")], [
        ("PFADD", "h", "a", "b"), ("PFADD", "h", "a"), ("PFADD", "h2"), ("PFADD", "h2"), ("PFADD", "h3", "c"),
        ("PFMERGE", "m", "h", "h3"), ("PFMERGE", "m", "h"), ("PFMERGE", "m2"), ("PFMERGE", "m", "str"),
        ("PFADD", "str", "a"), ("PFCOUNT", "h", "h3"),
    ]),
    "sort_store": ("KEA", [("RPUSH", "l", "3", "1", "2"), ("SET", "d", "old"), ("SET", "str", "v")], [
        ("SORT", "l", "STORE", "d"), ("SORT", "no", "STORE", "d"), ("SORT", "no", "STORE", "d"), ("SORT", "l"),
        ("SORT", "l", "STORE", "alpha"), ("SORT", "str", "STORE", "d"), ("SORT", "l", "LIMIT", "5", "5", "STORE", "e"),
    ]),
    # ---- transactions and scripts run the same handlers
    "multi_exec": ("KEA", [], [
        ("MULTI",), ("SET", "a", "1"), ("RPUSH", "l", "x"), ("INCR", "a"), ("DEL", "a", "l"), ("EXEC",),
    ]),
    "eval": ("KEA", [], [
        ("EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('expire', KEYS[1], 100); "
                 "return redis.call('del', KEYS[1])", "1", "k"),
        ("EVAL", "return redis.pcall('incr', 'k2')", "0"),
    ]),
    "other_database": ("KEA", [], [
        ("SELECT", "3"), ("SET", "a", "1"), ("RPUSH", "l", "x"), ("DEL", "a"), ("SELECT", "0"),
    ]),
    # ---- blocking commands served by another client's write
    "blocking_served": ("KEA", [("SET", "str", "v")], [
        ("@b", "BLPOP", "bl", "0"), ("RPUSH", "bl", "a"), ("@b?",), ("EXISTS", "bl"),
        ("@b", "BRPOP", "bl", "0"), ("RPUSH", "bl", "a", "b"), ("@b?",),
        ("@b", "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"), ("LPUSH", "src", "x"), ("@b?",),
        ("@b", "BRPOPLPUSH", "src2", "dst", "0"), ("RPUSH", "src2", "y", "z"), ("@b?",),
        ("@b", "BLMPOP", "0", "2", "m1", "m2", "LEFT", "COUNT", "2"), ("RPUSH", "m2", "1", "2", "3"), ("@b?",),
        ("@b", "BZPOPMIN", "zb", "0"), ("ZADD", "zb", "1", "a"), ("@b?",),
        ("@b", "BZPOPMAX", "zb", "0"), ("ZADD", "zb", "1", "a", "2", "b"), ("@b?",),
        ("@b", "BZMPOP", "0", "1", "zb2", "MIN", "COUNT", "5"), ("ZADD", "zb2", "1", "a", "2", "b"), ("@b?",),
        ("@b", "BLPOP", "bl3", "0"), ("MULTI",), ("RPUSH", "bl3", "a"), ("DEL", "bl3"), ("RPUSH", "bl3", "b"), ("EXEC",),
        ("@b?",),
    ]),
}


def read_events(sub, marker=MARKER):
    """(channel, message) pairs from a subscriber until the marker's message."""
    out = []
    while True:
        msg = sub.read_reply()
        kind = msg[0].decode() if isinstance(msg[0], bytes) else msg[0]
        if kind == "message" and msg[1] == marker.encode():
            return out
        assert kind == "pmessage", msg
        out.append((msg[2].decode(errors="replace"), msg[3].decode(errors="replace")))


def run_events(port, classes, setup, steps):
    """The keyspace events (and the replies, for diagnosis) of `steps` on a fresh server state."""
    a, b, sub = RawClient(port), RawClient(port), RawClient(port)
    try:
        assert a.call("CONFIG", "SET", "notify-keyspace-events", "") == "OK"
        assert a.call("FLUSHALL") == "OK"
        for cmd in setup:
            a.call(*cmd)
        sub.send("PSUBSCRIBE", "__key*__:*")
        sub.read_reply()
        sub.send("SUBSCRIBE", MARKER)
        sub.read_reply()
        assert a.call("CONFIG", "SET", "notify-keyspace-events", classes) == "OK"
        replies, blocked = [], 0
        for step in steps:
            if step[0] == "@b":
                b.send(*step[1:])
                blocked += 1
                wait_blocked(a, blocked)
            elif step[0] == "@b?":
                replies.append(("b", b.read_reply()))
                blocked -= 1
            else:
                replies.append(a.call(*step))  # an error reply comes back as a RespError
        a.call("PUBLISH", MARKER, "end")
        events = read_events(sub)
        assert a.call("CONFIG", "SET", "notify-keyspace-events", "") == "OK"
        a.call("SELECT", "0")
        return events, replies
    finally:
        for conn in (a, b, sub):
            conn.close()


@needs_redis
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_events_match_redis(name, clean, redis_server):
    classes, setup, steps = SCENARIOS[name]
    expected, redis_replies = run_events(redis_server.port, classes, setup, steps)
    actual, replies = run_events(clean.port, classes, setup, steps)
    if expected != actual:
        width = max(len(expected), len(actual))
        lines = [f"{i:3} redis: {expected[i] if i < len(expected) else '-'!s:60} "
                 f"lapse: {actual[i] if i < len(actual) else '-'!s}" for i in range(width)]
        diff_replies = [f"  step {st}: redis {w!r} lapse {g!r}"
                        for st, w, g in zip(steps, redis_replies, replies) if w != g]
        pytest.fail(f"{name}: events differ\n" + "\n".join(lines) + "\nreplies that differ:\n" + "\n".join(diff_replies))
    # The scenario must produce something to compare unless it is about silence.
    assert expected or name in ("flush_swap",)


# ---- expiry


def subscribe(port, *channels):
    sub = RawClient(port)
    for ch in channels:
        sub.send("SUBSCRIBE", ch)
        sub.read_reply()
    return sub


def test_expired_event_lazily(raw, clean):
    raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    assert raw.call("CONFIG", "SET", "notify-keyspace-events", "Ex") == "OK"
    sub = subscribe(clean.port, "__keyevent@0__:expired", MARKER)
    try:
        assert raw.call("SET", "k", "v", "PX", "100") == "OK"
        time.sleep(0.3)
        assert raw.call("GET", "k") is None
        raw.call("PUBLISH", MARKER, "end")
        msgs = []
        while True:
            m = sub.read_reply()
            if m[1] == MARKER.encode():
                break
            msgs.append(m)
        assert msgs == [[b"message", b"__keyevent@0__:expired", b"k"]]
    finally:
        sub.close()
        raw.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        raw.call("CONFIG", "SET", "notify-keyspace-events", "")


def test_expired_event_by_reclaimer(raw, clean):
    assert raw.call("CONFIG", "SET", "notify-keyspace-events", "Kx") == "OK"
    sub = subscribe(clean.port, "__keyspace@0__:k")
    try:
        assert raw.call("SET", "k", "v", "PX", "100") == "OK"
        sub.sock.settimeout(5)
        # No read of k: only the background reclaimer can find it.
        assert sub.read_reply() == [b"message", b"__keyspace@0__:k", b"expired"]
    finally:
        sub.close()
        raw.call("CONFIG", "SET", "notify-keyspace-events", "")


# ---- CONFIG


@pytest.mark.parametrize("given,shown", [
    ("gn$lshzxetdmKE", "AKEm"), ("Kx", "xK"), ("KEn", "nKE"), ("", ""), ("A", "A"), ("AKE", "AKE"),
    ("Elg", "glE"), ("Em", "Em"), ("KEA", "AKE"), ("g$lshzxetdKE", "AKE"), ("ms", "sm"),
])
def test_config_round_trip(raw, given, shown):
    try:
        assert raw.call("CONFIG", "SET", "notify-keyspace-events", given) == "OK"
        assert raw.call("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", shown.encode()]
    finally:
        raw.call("CONFIG", "SET", "notify-keyspace-events", "")


def test_config_invalid_class(raw):
    reply = raw.call("CONFIG", "SET", "notify-keyspace-events", "Kq")
    assert isinstance(reply, RespError)
    assert str(reply.message) == ("ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
                                  "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
    assert raw.call("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b""]


# ---- RESP3


@needs_redis
def test_events_as_resp3_pushes(clean, redis_server):
    def capture(port):
        a, sub = RawClient(port), RawClient(port)
        try:
            a.call("FLUSHALL")
            sub.call("HELLO", "3")
            sub.send("PSUBSCRIBE", "__key*__:*")
            first = sub.read_reply_raw()
            sub.send("SUBSCRIBE", MARKER)
            sub.read_reply_raw()
            a.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
            a.call("SET", "k", "v")
            a.call("LPUSH", "l", "x")
            a.call("PUBLISH", MARKER, "end")
            got = [sub.read_reply_raw() for _ in range(5)]
            a.call("CONFIG", "SET", "notify-keyspace-events", "")
            return [first] + got
        finally:
            a.close()
            sub.close()

    expected = capture(redis_server.port)
    got = capture(clean.port)
    assert got == expected
    assert got[1].startswith(b">4\r\n$8\r\npmessage\r\n")


# ---- Redis 7.4's hash field expiry (not in Redis 7.0): what 7.4's hexpireGenericCommand and
# hpersistCommand report: one event per command that changed something, `hexpire` when
# deadlines were set, `hdel` when a deadline already past deleted fields (then `del` if the hash
# is left empty), `hpersist`; and `hexpired` when fields reach their deadlines.


@pytest.mark.lapse_only
def test_hash_field_expiry_events(clean):
    steps = [
        ("HSET", "h", "a", "1", "b", "2", "c", "3"),
        ("HEXPIRE", "h", "100", "FIELDS", "1", "a"),              # hexpire
        ("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"),        # nothing changed: none
        ("HPEXPIRE", "h", "200000", "FIELDS", "2", "a", "zz"),    # hexpire
        ("HEXPIREAT", "h", "99999999999", "FIELDS", "1", "b"),    # hexpire
        ("HPERSIST", "h", "FIELDS", "2", "a", "c"),               # hpersist (a had a TTL)
        ("HPERSIST", "h", "FIELDS", "1", "c"),                    # none
        ("HPEXPIREAT", "h", "1", "FIELDS", "1", "c"),             # past: field deleted, hdel
        ("HEXPIRE", "h", "0", "FIELDS", "2", "a", "b"),           # past: hdel, then del (empty)
        ("HEXPIRE", "h", "10", "FIELDS", "1", "a"),               # no key: none
        ("HSET", "g", "a", "1", "b", "2"),
        ("HPEXPIRE", "g", "50", "FIELDS", "1", "a"),              # hexpire; a expires by itself
    ]
    events, replies = run_events(clean.port, "KEA", [], steps)
    assert replies[1] == [1] and replies[7] == [2] and replies[8] == [2, 2]
    assert [e for e in events if e[0].startswith("__keyevent")] == [
        ("__keyevent@0__:hset", "h"), ("__keyevent@0__:hexpire", "h"), ("__keyevent@0__:hexpire", "h"),
        ("__keyevent@0__:hexpire", "h"), ("__keyevent@0__:hpersist", "h"), ("__keyevent@0__:hdel", "h"),
        ("__keyevent@0__:hdel", "h"), ("__keyevent@0__:del", "h"), ("__keyevent@0__:hset", "g"),
        ("__keyevent@0__:hexpire", "g"),
    ]
    # The reclaimer (or a read) deletes field a at its deadline: `hexpired`.
    assert RawClient(clean.port).call("CONFIG", "SET", "notify-keyspace-events", "Eh") == "OK"
    sub = subscribe(clean.port, "__keyevent@0__:hexpired")
    try:
        with RawClient(clean.port) as a:
            a.call("HSET", "g", "a", "1")
            a.call("HPEXPIRE", "g", "50", "FIELDS", "1", "a")
            sub.sock.settimeout(5)
            assert sub.read_reply() == [b"message", b"__keyevent@0__:hexpired", b"g"]
            assert a.call("HGETALL", "g") == [b"b", b"2"]
    finally:
        sub.close()
        with RawClient(clean.port) as a:
            a.call("CONFIG", "SET", "notify-keyspace-events", "")


# ---- lapse's items (IPUT/IDEL): not keys, so they have a channel of their own,
# __itemevent@<db>__:<event> with "container/id", <db> the container's database (0 here;
# other databases, CMOVE and SWAPDB: test_container_databases.py)


@pytest.mark.lapse_only
def test_item_events(raw, clean):
    assert raw.call("CONFIG", "SET", "notify-keyspace-events", "Egx") == "OK"
    sub = RawClient(clean.port)
    try:
        sub.send("PSUBSCRIBE", "__itemevent@*__:*")
        sub.read_reply()
        assert raw.call("CSETTTL", "c", "-1") == "OK"  # items live until their own ttl, if any
        raw.call("IPUT", "c", "a", '{"v":1}')
        raw.call("IPUT", "c", "a", '{"v":2}')
        assert raw.call("IPUT", "c", "a", '{"v":3}', "NX") is None  # not written: no event
        raw.call("IPUT", "c", "b", '{"v":1,"ttl":1}')
        assert raw.call("IDEL", "c", "a", "zz") == 1
        sub.sock.settimeout(10)
        got = [sub.read_reply()[2:] for _ in range(5)]
        assert got == [[b"__itemevent@0__:iput", b"c/a"], [b"__itemevent@0__:iput", b"c/a"],
                       [b"__itemevent@0__:iput", b"c/b"], [b"__itemevent@0__:idel", b"c/a"],
                       [b"__itemevent@0__:expired", b"c/b"]]  # b's one-second TTL runs out
        # Key events stay off the item channel, and the classes gate items too.
        assert raw.call("CONFIG", "SET", "notify-keyspace-events", "Ex") == "OK"
        raw.call("SET", "k", "v")
        raw.call("IPUT", "c", "d", '{"v":1}')
        raw.call("PUBLISH", "__itemevent@0__:marker", "end")
        assert sub.read_reply()[2:] == [b"__itemevent@0__:marker", b"end"]
    finally:
        sub.close()
        raw.call("CONFIG", "SET", "notify-keyspace-events", "")
