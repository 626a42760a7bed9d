"""Lists (Redis 7.0), against Debian's redis-server 7.0: every scenario runs on both servers and
the replies must match byte for byte.

Covers LPUSH/RPUSH/LPUSHX/RPUSHX, LPOP/RPOP (with and without a count, RESP2 and RESP3 nulls),
LLEN, LINDEX, LSET, LRANGE, LTRIM, LREM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP, WRONGTYPE,
the key's life (deleted with its last element), COPY/RENAME/MOVE, SCAN TYPE list, big lists and
odd element sizes, list-max-listpack-size; and the blocking commands where they do not block:
on non-empty lists, with bad timeouts, inside MULTI/EXEC and inside scripts on empty lists.
Blocking itself (several connections) is in test_blocking.py.

Redis 7.0 lists are always "quicklist" (the "listpack" encoding for small lists came in 7.2).
A few explicit checks at the bottom spell out the error texts the scenarios rely on.
"""
import shutil

import pytest

from lapse_harness import RespError as E
from scenarios import assert_same_replies, s
from redis_errors import NOT_INT, SYNTAX, arity

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

WRONG = [("SET", "str", "v")]
LONG_MIN = "-9223372036854775808"
LONG_MAX = "9223372036854775807"
BIG = [f"e{i}" for i in range(10000)]
HUGE = "h" * (100 * 1024)
BINARY = "a\r\nb\x00c"


def wrongtype(*cmds):
    return WRONG + [c for c in cmds]


SCENARIOS = {
    # ---- pushes
    "push_basics": [("LPUSH", "l", "a"), ("LPUSH", "l", "b", "c"), ("RPUSH", "l", "x", "y"), ("LRANGE", "l", "0", "-1"),
                    ("LLEN", "l"), ("RPUSH", "r", "1", "2", "3"), ("LRANGE", "r", "0", "-1"), ("TYPE", "l"),
                    ("OBJECT", "ENCODING", "l"), ("EXISTS", "l"), ("LPUSH", "l", "a", "a", "a"), ("LLEN", "l"),
                    ("LRANGE", "l", "0", "-1"), ("LPUSH", "l"), ("RPUSH", "l"), ("LPUSH",), ("LLEN", "nokey"),
                    ("LLEN", "l", "x"), ("LLEN",)],
    "pushx": [("LPUSHX", "nokey", "a"), ("RPUSHX", "nokey", "a", "b"), ("EXISTS", "nokey"), ("RPUSH", "l", "m"),
              ("LPUSHX", "l", "a", "b"), ("RPUSHX", "l", "y", "z"), ("LRANGE", "l", "0", "-1"), ("LPUSHX", "l"),
              ("RPUSHX", "l"), ("TYPE", "nokey")],
    "push_integer_like_and_binary": [("RPUSH", "l", "0", "-1", LONG_MAX, LONG_MIN, "12345678901234567890", "007", "+1",
                                      "1.5", " 1", "", BINARY, "-0"),
                                     ("LRANGE", "l", "0", "-1"), ("LINDEX", "l", "2"), ("LPOS", "l", "007"),
                                     ("LPOS", "l", "7"), ("LREM", "l", "0", "-0"), ("LREM", "l", "0", "0"),
                                     ("LRANGE", "l", "0", "-1"), ("LINSERT", "l", "BEFORE", "", "new"),
                                     ("LINSERT", "l", "AFTER", BINARY, "tail"), ("LRANGE", "l", "-4", "-1"),
                                     ("LPOS", "l", ""), ("LSET", "l", "0", ""), ("LINDEX", "l", "0"), ("LLEN", "l")],
    # ---- pops
    "pop_without_count": [("RPUSH", "l", "a", "b", "c"), ("LPOP", "l"), ("RPOP", "l"), ("LLEN", "l"), ("LPOP", "l"),
                          ("EXISTS", "l"), ("TYPE", "l"), ("OBJECT", "ENCODING", "l"), ("LPOP", "l"), ("RPOP", "l"),
                          ("LPOP", "nokey"), ("RPOP", "nokey"), ("LLEN", "l"), ("LRANGE", "l", "0", "-1"),
                          ("LPOP",), ("RPOP", "l", "1", "2")],
    "pop_with_count": [("RPUSH", "l", "a", "b", "c", "d", "e"), ("LPOP", "l", "2"), ("RPOP", "l", "2"),
                       ("LRANGE", "l", "0", "-1"), ("LPOP", "l", "0"), ("RPOP", "l", "0"), ("LLEN", "l"),
                       ("LPOP", "l", "-1"), ("RPOP", "l", "-5"), ("LPOP", "l", "x"), ("LPOP", "l", "1.5"),
                       ("LPOP", "l", LONG_MAX), ("EXISTS", "l"), ("RPUSH", "l", "a", "b", "c"), ("RPOP", "l", "10"),
                       ("EXISTS", "l"), ("LPOP", "nokey", "1"), ("RPOP", "nokey", "3"), ("LPOP", "nokey", "0"),
                       ("RPOP", "nokey", "-1"), ("LPOP", "nokey", "x"), ("RPUSH", "l", "z"), ("LPOP", "l", "1"),
                       ("EXISTS", "l"), ("RPUSH", "l", "a", "b"), ("LPOP", "l", LONG_MIN), ("LPOP", "l", "01"),
                       ("LRANGE", "l", "0", "-1")],
    "pop_resp3_nulls": [("HELLO", "3"), ("RPUSH", "l", "a", "b", "c"), ("LPOP", "nokey"), ("RPOP", "nokey"),
                        ("LPOP", "nokey", "2"), ("RPOP", "nokey", "0"), ("LPOP", "l", "0"), ("LPOP", "l", "2"),
                        ("RPOP", "l"), ("LPOP", "l"), ("LINDEX", "nokey", "0"), ("LINDEX", "l", "0"),
                        ("LRANGE", "nokey", "0", "-1"), ("LPOS", "nokey", "a"), ("LPOS", "nokey", "a", "COUNT", "0"),
                        ("RPUSH", "l", "a"), ("LPOS", "l", "zz"), ("LPOS", "l", "zz", "COUNT", "2"),
                        ("LMPOP", "1", "nokey", "LEFT"), ("LMPOP", "2", "nokey", "l", "RIGHT", "COUNT", "5"),
                        ("RPOPLPUSH", "nokey", "d"), ("LMOVE", "nokey", "d", "LEFT", "LEFT"),
                        ("RPUSH", "l", "b"), ("BLPOP", "nokey", "l", "0"), ("BLPOP", "l", "0.01"), ("BRPOP", "nokey", "0.01"),
                        ("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0.01"), ("BRPOPLPUSH", "nokey", "d", "0.01"),
                        ("BLMPOP", "0.01", "1", "nokey", "LEFT"),
                        ("MULTI",), ("BLPOP", "nokey", "0"), ("BRPOP", "nokey", "0"), ("LPOP", "nokey"),
                        ("LPOP", "nokey", "1"), ("BLMPOP", "0", "1", "nokey", "LEFT"), ("EXEC",)],
    "pop_resp2_nulls": [("LPOP", "nokey"), ("LPOP", "nokey", "2"), ("LPOS", "nokey", "a"),
                        ("LMPOP", "1", "nokey", "LEFT"), ("BLPOP", "nokey", "0.01"), ("BRPOP", "nokey", "0.01"),
                        ("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0.01"), ("BRPOPLPUSH", "nokey", "d", "0.01"),
                        ("BLMPOP", "0.01", "1", "nokey", "LEFT"), ("EXISTS", "d")],
    # ---- reads and in-place changes
    "lindex": [("RPUSH", "l", "a", "b", "c"), ("LINDEX", "l", "0"), ("LINDEX", "l", "2"), ("LINDEX", "l", "3"),
               ("LINDEX", "l", "-1"), ("LINDEX", "l", "-3"), ("LINDEX", "l", "-4"), ("LINDEX", "l", LONG_MAX),
               ("LINDEX", "l", LONG_MIN), ("LINDEX", "l", "x"), ("LINDEX", "l", "1.0"), ("LINDEX", "l", ""),
               ("LINDEX", "nokey", "0"), ("LINDEX", "nokey", "x"), ("LINDEX", "l"), ("LINDEX", "l", "0", "1")],
    "lset": [("RPUSH", "l", "a", "b", "c"), ("LSET", "l", "0", "A"), ("LSET", "l", "-1", "C"), ("LSET", "l", "1", ""),
             ("LRANGE", "l", "0", "-1"), ("LSET", "l", "3", "x"), ("LSET", "l", "-4", "x"), ("LSET", "l", LONG_MAX, "x"),
             ("LSET", "l", "x", "y"), ("LSET", "nokey", "0", "x"), ("LSET", "nokey", "x", "y"), ("EXISTS", "nokey"),
             ("LSET", "l", "1", "x" * 5000), ("LINDEX", "l", "1"), ("LSET", "l", "1", "small"), ("LRANGE", "l", "0", "-1"),
             ("LSET", "l", "0"), ("LSET", "l", "0", "a", "b")],
    "lrange_indexes": [("RPUSH", "l", "a", "b", "c", "d", "e"),
                       *[("LRANGE", "l", a, b) for a in ("0", "1", "4", "5", "-1", "-5", "-6", "-100", "100", LONG_MIN)
                         for b in ("0", "2", "4", "5", "-1", "-2", "-5", "-6", "100", LONG_MAX)],
                       ("LRANGE", "l", "x", "1"), ("LRANGE", "l", "0", "y"), ("LRANGE", "l", "0", "1.5"),
                       ("LRANGE", "nokey", "0", "-1"), ("LRANGE", "nokey", "x", "y"), ("LRANGE", "l", "0"),
                       ("LRANGE", "l", "0", "1", "2")],
    "ltrim": [("RPUSH", "l", "a", "b", "c", "d", "e"), ("LTRIM", "l", "1", "-2"), ("LRANGE", "l", "0", "-1"),
              ("LTRIM", "l", "0", "100"), ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "-2", "-1"), ("LRANGE", "l", "0", "-1"),
              ("LTRIM", "l", "-100", "0"), ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "1", "0"), ("EXISTS", "l"),
              ("RPUSH", "l", "a", "b", "c"), ("LTRIM", "l", "5", "10"), ("EXISTS", "l"), ("RPUSH", "l", "a", "b", "c"),
              ("LTRIM", "l", "-1", "-3"), ("EXISTS", "l"), ("RPUSH", "l", "a", "b", "c"), ("LTRIM", "l", "0", "-1"),
              ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", LONG_MIN, LONG_MAX), ("LLEN", "l"), ("LTRIM", "l", "x", "1"),
              ("LTRIM", "l", "0", "x"), ("LTRIM", "nokey", "0", "1"), ("LTRIM", "nokey", "x", "1"), ("EXISTS", "nokey"),
              ("LTRIM", "l", "0"), ("RPUSH", "big", *BIG[:1000]), ("LTRIM", "big", "100", "-101"), ("LLEN", "big"),
              ("LINDEX", "big", "0"), ("LINDEX", "big", "-1"), ("LRANGE", "big", "398", "401")],
    "lrem": [("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"), ("LREM", "l", "2", "a"), ("LRANGE", "l", "0", "-1"),
             ("LREM", "l", "-1", "a"), ("LRANGE", "l", "0", "-1"), ("LREM", "l", "0", "b"), ("LRANGE", "l", "0", "-1"),
             ("LREM", "l", "0", "zz"), ("LREM", "l", "5", "a"), ("LRANGE", "l", "0", "-1"), ("LREM", "l", "-10", "c"),
             ("EXISTS", "l"), ("LREM", "nokey", "0", "a"), ("LREM", "l", "x", "a"), ("LREM", "nokey", "x", "a"),
             ("RPUSH", "m", "x", "y", "x", "y", "x"), ("LREM", "m", "-2", "x"), ("LRANGE", "m", "0", "-1"),
             ("LREM", "m", LONG_MIN, "y"), ("LRANGE", "m", "0", "-1"), ("LREM", "m", LONG_MAX, "x"), ("EXISTS", "m"),
             ("RPUSH", "n", "1", "01", "1"), ("LREM", "n", "0", "1"), ("LRANGE", "n", "0", "-1"), ("LREM", "n", "0"),
             ("LREM", "n", "0", "a", "b")],
    "linsert": [("RPUSH", "l", "a", "b", "c"), ("LINSERT", "l", "BEFORE", "b", "x"), ("LINSERT", "l", "AFTER", "b", "y"),
                ("LINSERT", "l", "before", "a", "first"), ("LINSERT", "l", "after", "c", "last"), ("LRANGE", "l", "0", "-1"),
                ("LINSERT", "l", "BEFORE", "zz", "v"), ("LINSERT", "nokey", "BEFORE", "a", "v"), ("EXISTS", "nokey"),
                ("LINSERT", "l", "MIDDLE", "a", "v"), ("LINSERT", "nokey", "MIDDLE", "a", "v"),
                ("LINSERT", "l", "BEFORE", "a"), ("LINSERT", "l", "BEFORE", "a", "v", "w"), ("RPUSH", "d", "p", "q", "p"),
                ("LINSERT", "d", "AFTER", "p", "n"), ("LRANGE", "d", "0", "-1"), ("LLEN", "l")],
    "lpos": [("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"), ("LPOS", "l", "a"), ("LPOS", "l", "c"),
             ("LPOS", "l", "zz"), ("LPOS", "l", "c", "RANK", "1"), ("LPOS", "l", "c", "RANK", "2"),
             ("LPOS", "l", "c", "RANK", "4"), ("LPOS", "l", "c", "RANK", "-1"), ("LPOS", "l", "c", "RANK", "-3"),
             ("LPOS", "l", "c", "RANK", "-4"), ("LPOS", "l", "c", "RANK", "0"), ("LPOS", "l", "c", "RANK", LONG_MIN),
             ("LPOS", "l", "c", "RANK", LONG_MAX), ("LPOS", "l", "c", "RANK", "-9223372036854775807"),
             ("LPOS", "l", "c", "RANK", "x"), ("LPOS", "l", "c", "COUNT", "0"), ("LPOS", "l", "c", "COUNT", "1"),
             ("LPOS", "l", "c", "COUNT", "2"), ("LPOS", "l", "c", "COUNT", "100"), ("LPOS", "l", "zz", "COUNT", "0"),
             ("LPOS", "l", "c", "COUNT", "-1"), ("LPOS", "l", "c", "COUNT", "x"),
             ("LPOS", "l", "c", "RANK", "-1", "COUNT", "2"), ("LPOS", "l", "c", "RANK", "2", "COUNT", "0"),
             ("LPOS", "l", "c", "MAXLEN", "3"), ("LPOS", "l", "c", "MAXLEN", "2"), ("LPOS", "l", "c", "MAXLEN", "0"),
             ("LPOS", "l", "c", "MAXLEN", "7", "COUNT", "0"), ("LPOS", "l", "c", "MAXLEN", "-1"),
             ("LPOS", "l", "c", "RANK", "-1", "MAXLEN", "1"), ("LPOS", "l", "c", "RANK", "-1", "MAXLEN", "2", "COUNT", "0"),
             ("LPOS", "l", "a", "RANK", "-1", "MAXLEN", "3"), ("LPOS", "l", "c", "MAXLEN", "x"),
             ("LPOS", "l", "c", "rank", "2", "count", "1", "maxlen", "10"), ("LPOS", "l", "c", "RANK", "1", "RANK", "2"),
             ("LPOS", "l", "c", "FOO", "1"), ("LPOS", "l", "c", "RANK"), ("LPOS", "l", "c", "COUNT"),
             ("LPOS", "l", "c", "MAXLEN"), ("LPOS", "nokey", "c"), ("LPOS", "nokey", "c", "COUNT", "0"),
             ("LPOS", "nokey", "c", "RANK", "0"), ("LPOS", "nokey", "c", "COUNT", "-1"), ("LPOS", "nokey", "c", "FOO"),
             ("LPOS", "l"), ("LPOS", "l", "1"), ("LPOS", "l", "3", "COUNT", "0", "MAXLEN", "5")],
    # ---- moves
    "lmove_directions": [("RPUSH", "s", "1", "2", "3", "4"), ("RPUSH", "d", "x"),
                         ("LMOVE", "s", "d", "LEFT", "LEFT"), ("LRANGE", "d", "0", "-1"),
                         ("LMOVE", "s", "d", "LEFT", "RIGHT"), ("LRANGE", "d", "0", "-1"),
                         ("LMOVE", "s", "d", "RIGHT", "LEFT"), ("LRANGE", "d", "0", "-1"),
                         ("LMOVE", "s", "d", "right", "right"), ("LRANGE", "d", "0", "-1"), ("EXISTS", "s"),
                         ("LMOVE", "s", "d", "LEFT", "LEFT"), ("LMOVE", "d", "new", "RIGHT", "LEFT"),
                         ("LRANGE", "new", "0", "-1"), ("TYPE", "new"), ("LMOVE", "d", "d", "LEFT", "RIGHT"),
                         ("LRANGE", "d", "0", "-1"), ("LMOVE", "d", "d", "RIGHT", "LEFT"), ("LRANGE", "d", "0", "-1"),
                         ("LMOVE", "d", "d", "LEFT", "LEFT"), ("LMOVE", "d", "d", "RIGHT", "RIGHT"),
                         ("LRANGE", "d", "0", "-1"), ("LMOVE", "s", "d", "UP", "LEFT"), ("LMOVE", "s", "d", "LEFT", "DOWN"),
                         ("LMOVE", "d", "e", "UP", "LEFT"), ("LMOVE", "s", "d", "LEFT"),
                         ("LMOVE", "s", "d", "LEFT", "LEFT", "x"), ("RPUSH", "one", "v"), ("LMOVE", "one", "one", "LEFT", "RIGHT"),
                         ("LRANGE", "one", "0", "-1"), ("LMOVE", "one", "other", "LEFT", "RIGHT"), ("EXISTS", "one"),
                         ("LRANGE", "other", "0", "-1")],
    "lmove_missing_and_wrongtype": [("LMOVE", "nokey", "d", "LEFT", "RIGHT"), ("EXISTS", "d"), ("SET", "str", "v"),
                                    ("RPUSH", "s", "a", "b"), ("LMOVE", "s", "str", "LEFT", "RIGHT"), ("LRANGE", "s", "0", "-1"),
                                    ("GET", "str"), ("LMOVE", "str", "s", "LEFT", "RIGHT"), ("LMOVE", "nokey", "str", "LEFT", "LEFT"),
                                    ("LMOVE", "str", "nokey", "LEFT", "LEFT"), ("RPOPLPUSH", "s", "str"),
                                    ("RPOPLPUSH", "str", "s"), ("RPOPLPUSH", "nokey", "str"), ("LRANGE", "s", "0", "-1"),
                                    ("LMOVE", "s", "str", "UP", "LEFT"), ("HSET", "h", "f", "v"),
                                    ("LMOVE", "s", "h", "RIGHT", "LEFT"), ("LRANGE", "s", "0", "-1")],
    "rpoplpush": [("RPUSH", "s", "a", "b", "c"), ("RPOPLPUSH", "s", "d"), ("RPOPLPUSH", "s", "d"), ("LRANGE", "d", "0", "-1"),
                  ("LRANGE", "s", "0", "-1"), ("RPOPLPUSH", "s", "s"), ("RPOPLPUSH", "s", "d"), ("EXISTS", "s"),
                  ("RPOPLPUSH", "s", "d"), ("RPOPLPUSH", "nokey", "nokey"), ("RPUSH", "r", "1", "2", "3"),
                  ("RPOPLPUSH", "r", "r"), ("LRANGE", "r", "0", "-1"), ("RPOPLPUSH", "r"), ("RPOPLPUSH", "r", "d", "x")],
    "lmpop": [("RPUSH", "b", "1", "2", "3", "4", "5"), ("RPUSH", "c", "x"), ("LMPOP", "3", "a", "b", "c", "LEFT"),
              ("LMPOP", "3", "a", "b", "c", "RIGHT"), ("LMPOP", "2", "b", "c", "LEFT", "COUNT", "2"),
              ("LMPOP", "2", "b", "c", "right", "count", "10"), ("EXISTS", "b"), ("LMPOP", "3", "a", "b", "c", "LEFT", "COUNT", "5"),
              ("LMPOP", "3", "a", "b", "c", "LEFT"), ("EXISTS", "c"), ("RPUSH", "a", "q"),
              ("LMPOP", "1", "a", "LEFT", "COUNT", "0"), ("LMPOP", "1", "a", "LEFT", "COUNT", "-1"),
              ("LMPOP", "1", "a", "LEFT", "COUNT", "x"), ("LMPOP", "1", "a", "LEFT", "COUNT"),
              ("LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"), ("LMPOP", "1", "a", "LEFT", "FOO"),
              ("LMPOP", "1", "a", "MIDDLE"), ("LMPOP", "1", "a"), ("LMPOP", "0", "a", "LEFT"), ("LMPOP", "-1", "a", "LEFT"),
              ("LMPOP", "x", "a", "LEFT"), ("LMPOP", "3", "a", "LEFT"), ("LMPOP", "2", "a", "LEFT"), ("LMPOP", "1"),
              ("LMPOP",), ("LMPOP", LONG_MAX, "a", "LEFT"), ("LMPOP", "1", "a", "LEFT", "COUNT", LONG_MAX),
              ("EXISTS", "a"), ("LMPOP", "1", "nokey", "LEFT", "COUNT", "0"), ("LMPOP", "1", "nokey", "RIGHT", "COUNT", "3"),
              ("RPUSH", "z", "1", "2"), ("LMPOP", "1", "z", "RIGHT", "COUNT", "1"), ("LRANGE", "z", "0", "-1")],
    # ---- types and keys
    "list_wrongtype": wrongtype(("LPUSH", "str", "a"), ("RPUSH", "str", "a"), ("LPUSHX", "str", "a"), ("RPUSHX", "str", "a"),
                                ("LPOP", "str"), ("RPOP", "str"), ("LPOP", "str", "2"), ("RPOP", "str", "0"),
                                ("LLEN", "str"), ("LINDEX", "str", "0"), ("LSET", "str", "0", "x"), ("LRANGE", "str", "0", "-1"),
                                ("LTRIM", "str", "0", "1"), ("LREM", "str", "0", "a"), ("LINSERT", "str", "BEFORE", "a", "b"),
                                ("LPOS", "str", "a"), ("LPOS", "str", "a", "COUNT", "0"), ("LMOVE", "str", "d", "LEFT", "LEFT"),
                                ("RPOPLPUSH", "str", "d"), ("LMPOP", "1", "str", "LEFT"), ("LMPOP", "2", "nokey", "str", "LEFT"),
                                ("BLPOP", "str", "0"), ("BRPOP", "nokey", "str", "0"), ("BLMOVE", "str", "d", "LEFT", "LEFT", "0"),
                                ("BRPOPLPUSH", "str", "d", "0"), ("BLMPOP", "0", "1", "str", "LEFT"),
                                ("LINDEX", "str", "x"), ("LPOS", "str", "a", "RANK", "0"), ("EXISTS", "d"), ("GET", "str"),
                                ("RPUSH", "l", "a"), ("GET", "l"), ("APPEND", "l", "x"), ("INCR", "l"), ("STRLEN", "l"),
                                ("HSET", "l", "f", "v"), ("SADD", "l", "m"), ("HGET", "l", "f"), ("SMEMBERS", "l"),
                                ("GETRANGE", "l", "0", "1"), ("SETRANGE", "l", "0", "x"), ("GETDEL", "l"),
                                ("SET", "l", "v", "GET"), ("MGET", "l", "str"), ("SETBIT", "l", "1", "1"), ("BITCOUNT", "l"),
                                ("LRANGE", "l", "0", "-1"), ("HSET", "h", "f", "v"), ("LPUSH", "h", "x"), ("LLEN", "h"),
                                ("SADD", "s", "m"), ("RPOP", "s"), ("TYPE", "l"), ("SET", "l", "v"), ("TYPE", "l"),
                                ("LLEN", "l")),
    "list_arity": [("LPUSH", "l"), ("RPUSHX", "l"), ("LLEN",), ("LINDEX", "l"), ("LSET", "l", "0"), ("LRANGE", "l", "0"),
                   ("LTRIM", "l", "0"), ("LREM", "l", "0"), ("LINSERT", "l", "BEFORE", "a"), ("LPOS", "l"),
                   ("LMOVE", "a", "b", "LEFT"), ("RPOPLPUSH", "a"), ("LMPOP", "1", "a"), ("BLPOP", "a"), ("BRPOP", "a"),
                   ("BLMOVE", "a", "b", "LEFT", "LEFT"), ("BRPOPLPUSH", "a", "b"), ("BLMPOP", "0", "1", "a"), ("BLMPOP", "0"),
                   ("LPOP",), ("RPOP", "l", "1", "2")],
    "key_life": [("RPUSH", "l", "a"), ("EXPIRE", "l", "100"), ("RPUSH", "l", "b"), ("TTL", "l"), ("LPOP", "l"),
                 ("TTL", "l"), ("RPOP", "l"), ("EXISTS", "l"), ("TYPE", "l"), ("OBJECT", "ENCODING", "l"), ("TTL", "l"),
                 ("RPUSH", "l", "c"), ("TTL", "l"), ("LREM", "l", "0", "c"), ("EXISTS", "l"), ("RPUSH", "l", "a", "b"),
                 ("LMPOP", "1", "l", "LEFT", "COUNT", "2"), ("EXISTS", "l"), ("RPUSH", "l", "a"),
                 ("LMOVE", "l", "m", "LEFT", "LEFT"), ("EXISTS", "l"), ("RPUSH", "l", "a"), ("BLPOP", "l", "0"),
                 ("EXISTS", "l"), ("RPUSH", "l", "a"), ("BRPOPLPUSH", "l", "m", "0"), ("EXISTS", "l"),
                 ("LRANGE", "m", "0", "-1"), ("OBJECT", "ENCODING", "m"), ("DBSIZE",), ("DEL", "m"), ("DBSIZE",)],
    "lists_and_keyspace": [("RPUSH", "l", "a", "b", "c"), ("COPY", "l", "l2"), ("LRANGE", "l2", "0", "-1"),
                           ("LPUSH", "l2", "z"), ("LRANGE", "l", "0", "-1"), ("LRANGE", "l2", "0", "-1"),
                           ("OBJECT", "ENCODING", "l2"), ("COPY", "l", "l2"), ("COPY", "l", "l2", "REPLACE"),
                           ("LRANGE", "l2", "0", "-1"), ("RENAME", "l2", "l3"), ("EXISTS", "l2"), ("LRANGE", "l3", "0", "-1"),
                           ("SET", "str", "v"), ("RENAMENX", "l3", "str"), ("RENAME", "l3", "str"), ("TYPE", "str"),
                           ("LRANGE", "str", "0", "-1"), ("MOVE", "str", "1"), ("EXISTS", "str"), ("SELECT", "1"),
                           ("TYPE", "str"), ("LPOP", "str"), ("COPY", "str", "l", "DB", "0"), ("SELECT", "0"),
                           ("LRANGE", "l", "0", "-1"), ("RPUSH", "m", "x"), ("MOVE", "m", "1"), ("RPUSH", "m", "y"),
                           ("MOVE", "m", "1"), ("LRANGE", "m", "0", "-1"), ("SET", "s1", "v"), ("HSET", "h1", "f", "v"),
                           ("SADD", "set1", "v"), ("RPUSH", "l4", "v"), s("SCAN", "0", "TYPE", "list"),
                           s("SCAN", "0", "TYPE", "LIST"), s("SCAN", "0", "TYPE", "string"), s("SCAN", "0", "TYPE", "list", "MATCH", "l*"),
                           s("KEYS", "*"), ("EXPIRE", "l", "100"), ("COPY", "l", "l5"), ("TTL", "l5"),
                           ("RPUSH", "big", *BIG[:2000]), ("COPY", "big", "big2"), ("LPOP", "big", "1000"),
                           ("LLEN", "big2"), ("LINDEX", "big2", "1999"), ("RENAME", "big2", "big3"), ("LLEN", "big3"),
                           ("DEL", "l", "l5", "big3", "nokey"), ("UNLINK", "big"), ("EXISTS", "big"), ("FLUSHALL",),
                           ("DBSIZE",)],
    # ---- sizes
    "big_list": [("RPUSH", "l", *BIG), ("LLEN", "l"), ("LINDEX", "l", "0"), ("LINDEX", "l", "5000"), ("LINDEX", "l", "-1"),
                 ("LINDEX", "l", "9999"), ("LINDEX", "l", "10000"), ("LINDEX", "l", "-10000"), ("LINDEX", "l", "-10001"),
                 ("LRANGE", "l", "0", "9"), ("LRANGE", "l", "4990", "5010"), ("LRANGE", "l", "-10", "-1"),
                 ("LRANGE", "l", "9995", "20000"), ("LRANGE", "l", "0", "-1"), ("LRANGE", "l", "-20000", "2"),
                 ("LPOS", "l", "e9999"), ("LPOS", "l", "e9999", "MAXLEN", "9999"), ("LPOS", "l", "e0", "RANK", "-1"),
                 ("LSET", "l", "7000", "changed"), ("LINDEX", "l", "7000"), ("LINSERT", "l", "BEFORE", "e5000", "ins"),
                 ("LRANGE", "l", "4999", "5001"), ("LREM", "l", "0", "ins"), ("LLEN", "l"), ("LPOP", "l", "3"),
                 ("RPOP", "l", "3"), ("LTRIM", "l", "1000", "1999"), ("LRANGE", "l", "0", "2"), ("LLEN", "l"),
                 ("LPUSH", "p", *BIG), ("LRANGE", "p", "0", "4"), ("LINDEX", "p", "-1"), ("OBJECT", "ENCODING", "p"),
                 ("LMPOP", "2", "nokey", "p", "RIGHT", "COUNT", "5000"), ("LLEN", "p"), ("RPOP", "p", "100000"),
                 ("EXISTS", "p")],
    "odd_element_sizes": [("RPUSH", "l", "", HUGE, "", "x", BINARY), ("LLEN", "l"), ("LINDEX", "l", "0"),
                          ("LINDEX", "l", "1"), ("LRANGE", "l", "0", "-1"), ("LPOS", "l", ""), ("LPOS", "l", "", "COUNT", "0"),
                          ("LPOS", "l", HUGE), ("LREM", "l", "1", ""), ("LINSERT", "l", "AFTER", HUGE, HUGE + "!"),
                          ("LRANGE", "l", "1", "2"), ("LSET", "l", "0", HUGE), ("LPOP", "l"), ("RPOP", "l", "2"),
                          ("LMOVE", "l", "m", "LEFT", "RIGHT"), ("LRANGE", "m", "0", "-1"), ("LRANGE", "l", "0", "-1"),
                          ("LPUSH", "e", ""), ("LLEN", "e"), ("LPOP", "e"), ("EXISTS", "e"), ("OBJECT", "ENCODING", "l")],
    "listpack_size_config": [("CONFIG", "GET", "list-max-listpack-size"), ("CONFIG", "GET", "list-max-ziplist-size"),
                             ("CONFIG", "SET", "list-max-listpack-size", "4"), ("CONFIG", "GET", "list-max-listpack-size"),
                             ("RPUSH", "a", *[str(i) for i in range(50)]), ("LRANGE", "a", "0", "-1"), ("LINDEX", "a", "37"),
                             ("LINSERT", "a", "AFTER", "3", "x"), ("LRANGE", "a", "0", "6"), ("LREM", "a", "0", "x"),
                             ("LTRIM", "a", "2", "-3"), ("LRANGE", "a", "0", "-1"), ("OBJECT", "ENCODING", "a"),
                             ("CONFIG", "SET", "list-max-listpack-size", "1"), ("RPUSH", "b", *BIG[:300]),
                             ("LRANGE", "b", "100", "110"), ("LPOP", "b", "150"), ("LLEN", "b"),
                             ("CONFIG", "SET", "list-max-ziplist-size", "-1"), ("CONFIG", "GET", "list-max-listpack-size"),
                             ("RPUSH", "c", HUGE, "y", HUGE), ("LINDEX", "c", "1"), ("LLEN", "c"),
                             ("CONFIG", "SET", "list-max-listpack-size", "-5"), ("RPUSH", "d", *BIG[:3000]),
                             ("LRANGE", "d", "2990", "2999"), ("CONFIG", "SET", "list-max-listpack-size", "-6"),
                             ("CONFIG", "SET", "list-max-listpack-size", "0"), ("CONFIG", "GET", "list-max-listpack-size"),
                             ("CONFIG", "SET", "list-max-listpack-size", "x"), ("CONFIG", "SET", "list-max-listpack-size", "2"),
                             ("RPUSH", "e", "1", "2", "3", "4", "5"), ("LRANGE", "e", "0", "-1"),
                             ("RPUSH", "f", *BIG[:500]), ("LRANGE", "f", "250", "252"), ("LINDEX", "f", "-1"),
                             ("CONFIG", "SET", "list-max-listpack-size", "-2")],
    # ---- blocking commands that do not block
    "blocking_on_nonempty_lists": [("RPUSH", "a", "1", "2", "3"), ("RPUSH", "b", "x", "y"), ("BLPOP", "a", "0"),
                                   ("BRPOP", "a", "0"), ("BLPOP", "nokey", "b", "a", "0"), ("BRPOP", "nokey", "b", "1.5"),
                                   ("BLPOP", "a", "a", "0"), ("EXISTS", "a"), ("RPUSH", "b", "x", "y"),
                                   ("BLMOVE", "b", "d", "LEFT", "RIGHT", "0"),
                                   ("RPUSH", "b", "p", "q"), ("BLMOVE", "b", "d", "RIGHT", "LEFT", "0.5"),
                                   ("LRANGE", "d", "0", "-1"), ("BRPOPLPUSH", "b", "d", "0"), ("LRANGE", "d", "0", "-1"),
                                   ("EXISTS", "b"), ("BLMOVE", "d", "d", "LEFT", "RIGHT", "0"), ("LRANGE", "d", "0", "-1"),
                                   ("BRPOPLPUSH", "d", "d", "0"), ("LRANGE", "d", "0", "-1"),
                                   ("BLMPOP", "0", "2", "nokey", "d", "LEFT"), ("BLMPOP", "0.5", "1", "d", "RIGHT", "COUNT", "5"),
                                   ("EXISTS", "d"), ("RPUSH", "m", "1", "2", "3"), ("BLMPOP", "0", "1", "m", "LEFT", "COUNT", "2"),
                                   ("BLMPOP", "0", "1", "m", "LEFT", "COUNT", "0"), ("BLMPOP", "0", "0", "m", "LEFT"),
                                   ("BLMPOP", "0", "2", "m", "LEFT"), ("BLMPOP", "0", "1", "m", "UP"),
                                   ("BLMPOP", "0", "1", "m", "LEFT", "COUNT", "-1"), ("BLMPOP", "x", "1", "m", "LEFT"),
                                   ("BLMPOP", "-1", "1", "m", "LEFT"), ("BLMOVE", "m", "d", "UP", "LEFT", "0"),
                                   ("LRANGE", "m", "0", "-1"), ("BLPOP", "m", "0", "0")],
    "blocking_timeout_errors": [("RPUSH", "a", "1"),
                                *[(cmd, *keys, t) for t in ("x", "", "-1", "-0.5", "-inf", "nan", "1.5x", " 1", "1 ")
                                  for cmd, *keys in (("BLPOP", "a"), ("BRPOP", "nokey"), ("BRPOPLPUSH", "a", "d"))],
                                ("BLMOVE", "a", "d", "LEFT", "LEFT", "x"), ("BLMOVE", "a", "d", "LEFT", "LEFT", "-1"),
                                ("BLMPOP", "-1", "1", "a", "LEFT"), ("BLMPOP", "x", "1", "a", "LEFT"),
                                ("LRANGE", "a", "0", "-1"), ("EXISTS", "d"),
                                # accepted timeouts, on lists that have elements or for a moment only
                                ("RPUSH", "a", "2", "3", "4"), ("BLPOP", "a", "1e3"), ("BLPOP", "a", "-0"),
                                ("BLPOP", "a", "0x10"), ("BLPOP", "nokey", "0.0001"), ("BLPOP", "nokey", "1e-3"),
                                ("BLPOP", "nokey", "0.01"), ("BRPOP", "nokey", ".01"), ("LRANGE", "a", "0", "-1")],
    "blocking_in_multi": [("MULTI",), ("BLPOP", "nokey", "0"), ("BRPOP", "nokey", "other", "0"),
                          ("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0"), ("BRPOPLPUSH", "nokey", "d", "0"),
                          ("BLMPOP", "0", "2", "nokey", "other", "LEFT", "COUNT", "2"), ("RPUSH", "q", "a", "b"),
                          ("BLPOP", "q", "0"), ("BLMOVE", "q", "d", "LEFT", "RIGHT", "0"), ("BLPOP", "q", "0"),
                          ("BLPOP", "nokey", "x"), ("BLPOP", "nokey", "-1"), ("EXEC",), ("EXISTS", "d", "q"),
                          ("LRANGE", "d", "0", "-1"), ("SET", "str", "v"), ("MULTI",), ("BLPOP", "str", "0"),
                          ("BLMPOP", "0", "1", "nokey", "LEFT"), ("EXEC",)],
    "blocking_in_scripts": [("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "nokey"),
                            ("EVAL", "return redis.call('brpoplpush', KEYS[1], KEYS[2], 0)", "2", "nokey", "d"),
                            ("EVAL", "return redis.call('blmpop', 0, 1, KEYS[1], 'LEFT')", "1", "nokey"),
                            ("EVAL", "redis.call('rpush', KEYS[1], 'x'); return redis.call('blpop', KEYS[1], 0)", "1", "q"),
                            ("EVAL", "return redis.call('lrange', KEYS[1], 0, -1)", "1", "q"), ("EXISTS", "q"),
                            ("EVAL", "redis.call('rpush', KEYS[1], 'a', 'b', 'c'); return redis.call('lpop', KEYS[1], 2)",
                             "1", "q"),
                            ("EVAL", "return redis.call('lpop', KEYS[1])", "1", "nokey"),
                            ("EVAL", "return redis.pcall('lpush', KEYS[1], 'x')", "1", "str"),
                            ("SET", "str", "v"), ("EVAL", "return redis.pcall('lpush', KEYS[1], 'x')", "1", "str")],
    "watch_and_multi": [("RPUSH", "l", "a", "b"), ("MULTI",), ("LPUSH", "l", "z"), ("LRANGE", "l", "0", "-1"),
                        ("RPOP", "l", "2"), ("LLEN", "l"), ("LMPOP", "1", "l", "LEFT"), ("LLEN", "l"), ("EXEC",),
                        ("EXISTS", "l"), ("MULTI",), ("LPUSH", "l"), ("EXEC",), ("MULTI",), ("LPOP", "l", "x"),
                        ("LPUSH", "l", "v"), ("EXEC",), ("LRANGE", "l", "0", "-1")],
}

# Settings a scenario may change, and their defaults, restored after every scenario.
# (lapse does not compress list nodes, so it refuses list-compress-depth rather than accept
# a setting that would change nothing: see test_compress_depth_is_refused.)
DEFAULTS = [("list-max-listpack-size", "-2")]


@needs_redis
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_replies_as_redis(name, server, redis_server):
    assert_same_replies(SCENARIOS[name], server, redis_server, DEFAULTS, width=300)


# ---- Explicit replies: the texts the scenarios rely on, spelled out ----

NO_SUCH_KEY = E("ERR no such key")
OUT_OF_RANGE = E("ERR index out of range")
WRONGTYPE = E("WRONGTYPE Operation against a key holding the wrong kind of value")
TIMEOUT_NOT_FLOAT = E("ERR timeout is not a float or out of range")
TIMEOUT_NEGATIVE = E("ERR timeout is negative")


def test_exact_replies(raw):
    assert raw.call("RPUSH", "l", "a", "b", "c") == 3
    assert raw.call("LPUSH", "l", "z") == 4
    assert raw.call("LRANGE", "l", "0", "-1") == [b"z", b"a", b"b", b"c"]
    assert raw.call("LRANGE", "l", "-2", "100") == [b"b", b"c"]
    assert raw.call("LRANGE", "l", "3", "1") == []
    assert raw.call("LINDEX", "l", "-1") == b"c"
    assert raw.call("LINDEX", "l", "4") is None
    assert raw.call("LSET", "l", "4", "x") == OUT_OF_RANGE
    assert raw.call("LSET", "nokey", "0", "x") == NO_SUCH_KEY
    assert raw.call("LSET", "l", "-4", "Z") == "OK"
    assert raw.call("LINSERT", "l", "BEFORE", "nopivot", "x") == -1
    assert raw.call("LINSERT", "nokey", "BEFORE", "a", "x") == 0
    assert raw.call("LINSERT", "l", "AFTER", "a", "a2") == 5
    assert raw.call("LINSERT", "l", "ASIDE", "a", "x") == SYNTAX
    assert raw.call("LPOS", "l", "b") == 3
    assert raw.call("LPOS", "l", "zz", "COUNT", "0") == []
    assert raw.call("LPOS", "nokey", "zz") is None
    assert raw.call("LREM", "l", "0", "a2") == 1
    assert raw.call("LPOP", "l", "0") == []
    assert raw.call("LPOP", "nokey", "2") is None
    assert raw.call("LPOP", "l", "-1") == E("ERR value is out of range, must be positive")
    assert raw.call("LPOP", "l", "2") == [b"Z", b"a"]
    assert raw.call("RPOP", "l", "10") == [b"c", b"b"]
    assert raw.call("EXISTS", "l") == 0
    assert raw.call("TYPE", "l") == "none"
    assert raw.call("LRANGE", "l", "x", "1") == NOT_INT
    assert raw.call("LLEN") == arity("llen")


def test_exact_replies_moves_and_lmpop(raw):
    raw.call("RPUSH", "s", "1", "2", "3")
    assert raw.call("LMOVE", "s", "s", "LEFT", "RIGHT") == b"1"
    assert raw.call("LRANGE", "s", "0", "-1") == [b"2", b"3", b"1"]
    assert raw.call("LMOVE", "nokey", "d", "LEFT", "RIGHT") is None
    assert raw.call("EXISTS", "d") == 0
    raw.call("SET", "str", "v")
    assert raw.call("LMOVE", "s", "str", "LEFT", "RIGHT") == WRONGTYPE
    assert raw.call("LRANGE", "s", "0", "-1") == [b"2", b"3", b"1"]
    assert raw.call("RPOPLPUSH", "s", "d") == b"1"
    assert raw.call("LMPOP", "3", "nokey", "s", "d", "LEFT", "COUNT", "5") == [b"s", [b"2", b"3"]]
    assert raw.call("LMPOP", "2", "nokey", "d", "RIGHT") == [b"d", [b"1"]]
    assert raw.call("LMPOP", "1", "nokey", "LEFT") is None
    assert raw.call("LMPOP", "0", "s", "LEFT") == E("ERR numkeys should be greater than 0")
    assert raw.call("LMPOP", "1", "s", "LEFT", "COUNT", "0") == E("ERR count should be greater than 0")
    assert raw.call("OBJECT", "ENCODING", "nokey") is None
    assert raw.call("RPUSH", "q", "x") == 1
    assert raw.call("OBJECT", "ENCODING", "q") == b"quicklist"


def test_exact_replies_blocking_without_blocking(raw):
    raw.call("RPUSH", "a", "1", "2")
    assert raw.call("BLPOP", "nokey", "a", "0") == [b"a", b"1"]
    assert raw.call("BLPOP", "a", "x") == TIMEOUT_NOT_FLOAT
    assert raw.call("BLPOP", "a", "-1") == TIMEOUT_NEGATIVE
    assert raw.call("BLMOVE", "a", "d", "LEFT", "RIGHT", "-0.5") == TIMEOUT_NEGATIVE
    assert raw.call("BLMPOP", "x", "1", "a", "LEFT") == TIMEOUT_NOT_FLOAT
    assert raw.call("LRANGE", "a", "0", "-1") == [b"2"]
    assert raw.pipeline([("MULTI",), ("BLPOP", "nokey", "0"), ("BRPOPLPUSH", "nokey", "d", "0"),
                         ("BLMPOP", "0", "1", "nokey", "LEFT"), ("EXEC",)]) == ["OK", "QUEUED", "QUEUED", "QUEUED",
                                                                               [None, None, None]]
    assert raw.call_raw("MULTI") == b"+OK\r\n"
    assert raw.call_raw("BLPOP", "nokey", "0") == b"+QUEUED\r\n"
    assert raw.call_raw("EXEC") == b"*1\r\n*-1\r\n"
    assert raw.call("HELLO", "3")[b"proto"] == 3
    assert raw.call_raw("LPOP", "nokey") == b"_\r\n"
    assert raw.call_raw("LPOP", "nokey", "1") == b"_\r\n"
    assert raw.call_raw("BLPOP", "nokey", "0.01") == b"_\r\n"


def redis_range(values, start, stop):
    """LRANGE's index rules: negative from the end, start clamped at 0, stop inclusive and clamped."""
    n = len(values)
    start = max(start + n if start < 0 else start, 0)
    stop = min(stop + n if stop < 0 else stop, n - 1)
    return values[start:stop + 1] if start <= stop else []


def test_ten_thousand_elements_in_one_push(rb):
    values = [f"v{i:05d}".encode() for i in range(10000)]
    assert rb.rpush("l", *values) == 10000
    assert rb.llen("l") == 10000
    assert rb.lrange("l", 0, -1) == values
    for start, stop in ((0, 0), (1, 127), (128, 129), (4096, 5000), (9000, -1), (-500, -400), (9999, 20000),
                        (-20000, 3), (5, 4)):
        assert rb.lrange("l", start, stop) == redis_range(values, start, stop), (start, stop)
    for i in (0, 1, 127, 128, 5000, 9998, 9999, -1, -10000):
        assert rb.lindex("l", i) == values[i]
    assert rb.lindex("l", 10000) is None
    assert rb.lpos("l", b"v09999") == 9999
    assert rb.lpop("l", 9990) == values[:9990]
    assert rb.lrange("l", 0, -1) == values[9990:]


def test_odd_sizes_round_trip(rb):
    big = bytes(range(256)) * 400  # 100 KB with every byte value
    assert rb.rpush("l", b"", big, b"\r\n", b"\x00") == 4
    assert rb.lrange("l", 0, -1) == [b"", big, b"\r\n", b"\x00"]
    assert rb.lindex("l", 1) == big
    assert rb.lpos("l", big) == 1
    assert rb.lpos("l", b"") == 0
    assert rb.lrem("l", 0, big) == 1
    assert rb.llen("l") == 3


@pytest.mark.lapse_only
def test_compress_depth_is_refused(raw):
    # lapse keeps list nodes uncompressed; accepting the setting would change nothing. CONFIG
    # GET answers Redis's default, read-only, as for every Redis parameter lapse lacks.
    reply = raw.call("CONFIG", "SET", "list-compress-depth", "1")
    assert isinstance(reply, E) and "list-compress-depth" in str(reply)
    assert raw.call("CONFIG", "GET", "list-compress-depth") == [b"list-compress-depth", b"0"]
