"""rdb_changes_since_last_save counts changes as Redis's server.dirty does (issue 17): one per
key or element a write changed, nothing for a write that failed or changed nothing. Each row
of the table runs its set-up, then one command, and compares the counter's delta; run with
LAPSE_TARGET=redis the same table checks that the deltas are Redis 7.0.15's.
"""
import shlex

import pytest

from lapse_harness import RespError


def changes(raw) -> int:
    text = raw.call("INFO", "persistence").decode()
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    return int(fields["rdb_changes_since_last_save"])


# (set-up commands, the command measured, Redis's delta)
CASES = [
    ([], "SET k v", 1),
    (["SET k v"], "SET k w NX", 0),
    ([], "SET k v XX", 0),
    ([], "SET k v GET", 1),
    ([], "MSET a 1 b 2 c 3", 3),
    (["SET a 1"], "MSETNX a 1 b 2", 0),
    ([], "MSETNX a 1 b 2", 2),
    ([], "SETNX k v", 1),
    (["SET k v"], "SETNX k v", 0),
    ([], "SETEX k 100 v", 1),
    ([], "APPEND k v", 1),
    ([], "INCR n", 1),
    ([], "INCRBY n 5", 1),
    ([], "INCRBYFLOAT n 1.5", 1),
    (["SET k v"], "INCR k", 0),
    ([], "SETRANGE k 0 abc", 1),
    ([], "SETRANGE k 0 ''", 0),
    (["SET k v"], "GETDEL k", 1),
    ([], "GETDEL k", 0),
    (["SET k v"], "GETSET k w", 1),
    ([], "GETSET k w", 1),
    (["RPUSH k a"], "GETSET k w", 0),
    (["SET k v"], "GETEX k EX 100", 1),
    (["SET k v"], "GETEX k", 0),
    (["SET a 1", "SET b 2", "SET c 3"], "DEL a b c d", 3),
    ([], "DEL a", 0),
    (["SET a 1", "SET b 2"], "UNLINK a b x", 2),
    (["SET k v"], "EXPIRE k 100", 1),
    ([], "EXPIRE k 100", 0),
    (["SET k v EX 100"], "EXPIRE k 50 GT", 0),
    (["SET k v EX 100"], "PERSIST k", 1),
    (["SET k v"], "PERSIST k", 0),
    (["SET k v"], "PEXPIREAT k 99999999999999", 1),
    (["SET k v"], "EXPIRE k 0", 1),
    (["SET k v"], "RENAME k k2", 1),
    (["SET k v", "SET k2 v"], "RENAMENX k k2", 0),
    (["SET k v"], "COPY k k2", 1),
    ([], "SADD s a b c", 3),
    (["SADD s a"], "SADD s a b c", 2),
    (["SADD s a b c"], "SREM s a b x", 2),
    (["SADD s a b c"], "SPOP s", 1),
    (["SADD s a b c"], "SPOP s 2", 2),
    (["SADD s a b"], "SMOVE s t a", 2),
    (["SADD s a b", "SADD t b c"], "SINTERSTORE d s t", 1),
    ([], "HSET h a 1 b 2 c 3", 3),
    (["HSET h a 1"], "HSET h a 1 b 2", 2),
    (["HSET h a 1"], "HMSET h a 1 b 2", 2),
    ([], "HSETNX h a 1", 1),
    (["HSET h a 1"], "HSETNX h a 1", 0),
    (["HSET h a 1 b 2"], "HDEL h a b x", 2),
    ([], "HINCRBY h a 1", 1),
    ([], "LPUSH l a b c", 3),
    ([], "LPUSHX l a", 0),
    (["RPUSH l a"], "RPUSHX l a b", 2),
    (["RPUSH l a b c"], "LPOP l", 1),
    (["RPUSH l a b c"], "LPOP l 2", 2),
    (["RPUSH l a b c"], "RPOP l 5", 3),
    ([], "RPOP l", 0),
    (["RPUSH l a b c"], "LSET l 0 x", 1),
    (["RPUSH l a b a"], "LREM l 0 a", 2),
    (["RPUSH l a b c"], "LINSERT l BEFORE b x", 1),
    (["RPUSH l a b c"], "LINSERT l BEFORE z x", 0),
    (["RPUSH l a b c"], "LMOVE l m LEFT RIGHT", 1),
    (["RPUSH l a b c"], "LMPOP 1 l LEFT COUNT 2", 2),
    ([], "ZADD z 1 a 2 b", 2),
    (["ZADD z 1 a"], "ZADD z 1 a 3 b", 1),
    (["ZADD z 1 a"], "ZADD z CH 5 a 3 b", 2),
    (["ZADD z 1 a"], "ZADD z INCR 2 a", 1),
    (["ZADD z 1 a 2 b"], "ZADD z 5 a 2 b 3 c", 2),
    (["ZADD z 1 a"], "ZADD z INCR 0 a", 0),
    (["ZADD z 1 a"], "ZADD z XX 1 a", 0),
    (["ZADD z 1 a"], "ZINCRBY z 0 a", 0),
    (["ZADD z 1 a"], "ZINCRBY z 2 a", 1),
    (["GEOADD g 13.36 38.11 a"], "GEOADD g 15.08 37.50 a 13.36 38.11 b", 2),
    (["RPUSH l a b c d e"], "LTRIM l 1 2", 3),
    (["RPUSH l a b c"], "LTRIM l 0 -1", 0),
    (["RPUSH l a b"], "LTRIM l 5 6", 2),
    ([], "LTRIM l 0 1", 0),
    ([], "PFADD p a b c", 4),
    ([], "PFADD p", 1),
    (["PFADD p"], "PFADD p", 0),
    (["PFADD p a b c"], "PFADD p a d", 1),
    (["PFADD p a"], "PFDEBUG ENCODING p", 0),
    (["PFADD p a"], "PFDEBUG TODENSE p", 1),
    (["PFADD p a", "PFDEBUG TODENSE p"], "PFDEBUG TODENSE p", 0),
    (["PFADD p a"], "PFDEBUG GETREG p", 1),
    (["PFADD p a", "PFDEBUG TODENSE p"], "PFDEBUG GETREG p", 0),
    (["SADD s a b", "SADD t a"], "SMOVE s t a", 1),
    (["SADD s a b"], "SMOVE s s a", 0),
    (["SADD s a b"], "SMOVE s t x", 0),
    (["SET k v"], "GETEX k PERSIST", 0),
    (["SET k v EX 100"], "GETEX k PERSIST", 1),
    (["SET k v"], "GETEX k PXAT 1", 1),
    ([], "GETEX k EX 100", 0),
    (["SET k v"], "SET k w NX GET", 0),
    ([], "SET k w NX GET", 1),
    ([], "SET k w XX GET", 0),
    (["SET k v"], "SET k w XX GET", 1),
    (["SET k v"], "RENAME k k", 0),
    (["SET d x"], "SINTERSTORE d none", 1),
    ([], "SINTERSTORE d none", 0),
    (["SET d x", "SADD a 1"], "SDIFFSTORE d a a", 1),
    (["SET d x"], "ZUNIONSTORE d 1 none", 1),
    (["SET d x"], "ZRANGESTORE d none 0 -1", 1),
    (["SET d x"], "SORT none STORE d", 1),
    ([], "SORT none STORE d", 0),
    (["RPUSH l 3 1 2"], "SORT l", 0),
    (["SET d x"], "BITOP AND d none", 1),
    ([], "BITOP AND d none", 0),
    (["SET a x"], "BITOP OR d a", 1),
    (["GEOADD g 13.36 38.11 a 15.08 37.50 b"], "GEOSEARCHSTORE d g FROMMEMBER a BYRADIUS 500 km", 2),
    (["GEOADD g 13.36 38.11 a 15.08 37.50 b"], "GEORADIUS g 15 37 200 km STORE d", 2),
    (["GEOADD g 13.36 38.11 a 15.08 37.50 b"], "GEORADIUS g 15 37 200 km", 0),
    (["SET d x"], "GEOSEARCHSTORE d none FROMLONLAT 0 0 BYRADIUS 1 km", 1),
    ([], "SETBIT k 0 0", 1),
    (["SET k a"], "SETBIT k 100 0", 1),
    (["SET k a"], "BITFIELD k SET u8 0 97", 0),
    (["SET k a"], "BITFIELD k INCRBY u8 0 0", 0),
    (["SET k a"], "BITFIELD k SET u8 8 0", 1),
    (["SET k 1"], "BITFIELD k INCRBY u2 0 5 OVERFLOW FAIL INCRBY u2 0 5", 1),
    (["PFADD a x"], "PFCOUNT a", 1),
    (["PFADD a x", "PFCOUNT a"], "PFCOUNT a", 0),
    (["PFADD a x", "PFADD b y"], "PFCOUNT a b", 0),
    (["XADD x 1-1 f v", "XADD y 1-1 f v", "XGROUP CREATE x g 0", "XGROUP CREATE y g 0"],
     "XREADGROUP GROUP g c STREAMS x y > >", 4),
    (["XADD x 1-1 f v", "XADD y 1-1 f v", "XGROUP CREATE x g 0", "XGROUP CREATE y g $"],
     "XREADGROUP GROUP g c STREAMS x y > >", 2),
    (["XADD x 1-1 f v", "XGROUP CREATE x g $"], "XREADGROUP GROUP g c STREAMS x >", 0),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"],
     "XREADGROUP GROUP g c STREAMS x 0", 1),
    (["XADD x 1-1 f v", "XADD x 2-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"],
     "XCLAIM x g c2 0 1-1 2-1", 3),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"],
     "XCLAIM x g c2 100000 1-1", 0),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"],
     "XCLAIM x g c 100000 1-1 LASTID 5-0", 1),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"],
     "XCLAIM x g c2 0 1-1 LASTID 5-0", 2),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >", "XCLAIM x g c2 0 1-1"],
     "XCLAIM x g c2 0 1-1 LASTID 5-0", 1),
    (["XADD x 1-1 f v", "XADD x 2-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >", "XDEL x 1-1"],
     "XCLAIM x g c2 0 1-1", 1),
    (["XADD x 1-1 f v", "XADD x 2-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >", "XDEL x 1-1"],
     "XAUTOCLAIM x g c2 0 0", 3),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"], "XAUTOCLAIM x g c3 100000 0", 0),
    (["XADD x 1-1 f v", "XADD x 2-1 f v", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >"],
     "XACK x g 1-1 2-1 3-1", 2),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0"], "XACK x g 1-1", 0),
    (["XADD x 1-1 f v"], "XGROUP CREATE x g 0", 1),
    ([], "XGROUP CREATE x g $ MKSTREAM", 1),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0"], "XGROUP SETID x g $", 1),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0"], "XGROUP CREATECONSUMER x g c", 1),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XGROUP CREATECONSUMER x g c"], "XGROUP CREATECONSUMER x g c", 0),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0", "XGROUP CREATECONSUMER x g c"], "XGROUP DELCONSUMER x g c", 1),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0"], "XGROUP DELCONSUMER x g c", 0),
    (["XADD x 1-1 f v", "XGROUP CREATE x g 0"], "XGROUP DESTROY x g", 1),
    (["XADD x 1-1 f v"], "XGROUP DESTROY x g", 0),
    ([], "XGROUP HELP", 0),
    (["ZADD z 1 a 2 b"], "ZREM z a b x", 2),
    ([], "ZINCRBY z 1 a", 1),
    (["ZADD z 1 a 2 b 3 c"], "ZPOPMIN z 2", 2),
    (["ZADD z 1 a 2 b 3 c"], "ZPOPMAX z", 1),
    (["ZADD z 1 a 2 b 3 c"], "ZREMRANGEBYSCORE z 1 2", 2),
    (["ZADD z 1 a 2 b"], "ZUNIONSTORE d 1 z", 1),
    (["ZADD z 1 a 2 b 3 c"], "ZMPOP 1 z MIN COUNT 2", 2),
    ([], "XADD x 1-1 f v", 1),
    (["XADD x 1-1 f v", "XADD x 2-1 f v"], "XDEL x 1-1 2-1 3-1", 2),
    (["XADD x 1-1 f v", "XADD x 2-1 f v"], "XTRIM x MAXLEN 0", 2),
    (["PFADD p a b c"], "PFADD p a", 0),
    ([], "SETBIT b 7 1", 1),
    (["SETBIT b 7 1"], "SETBIT b 7 1", 0),
    ([], "BITFIELD b SET u8 0 5 INCRBY u8 0 1", 2),
    ([], "GEOADD g 13.36 38.11 a 15.08 37.50 b", 2),
    (["RPUSH l 3 1 2"], "SORT l STORE d", 3),
    ([], "EVAL \"redis.call('SET','a','1') redis.call('SADD','s','a','b')\" 0", 3),
]


@pytest.mark.parametrize("setup,command,expected", CASES, ids=[c[1] for c in CASES])
def test_changes_counted_as_redis_counts_them(raw, setup, command, expected):
    for line in setup:
        assert not isinstance(raw.call(*shlex.split(line)), RespError), line
    before = changes(raw)
    raw.call(*shlex.split(command))
    assert changes(raw) - before == expected


def test_resp3_pops_count_each_element(raw):
    assert raw.call("HELLO", "3")
    raw.call("ZADD", "z", "1", "a", "2", "b", "3", "c")
    before = changes(raw)
    assert raw.call("ZPOPMIN", "z", "2") == [[b"a", 1.0], [b"b", 2.0]]
    assert raw.call("ZPOPMIN", "z") == [b"c", 3.0]
    assert changes(raw) - before == 3


def test_failed_writes_and_transactions(raw):
    raw.call("SET", "str", "v")
    before = changes(raw)
    assert raw.call("SADD", "str", "a") == RespError(
        "WRONGTYPE Operation against a key holding the wrong kind of value")
    assert raw.call("LPUSH", "l") == RespError("ERR wrong number of arguments for 'lpush' command")
    assert changes(raw) == before
    raw.call("MULTI")
    raw.call("MSET", "a", "1", "b", "2")
    raw.call("SADD", "s", "x", "y", "z")
    raw.call("DEL", "missing")
    assert raw.call("EXEC") == ["OK", 3, 0]
    assert changes(raw) - before == 5


def test_pfcount_in_a_transaction_counts_its_cache_write(raw):
    raw.call("PFADD", "a", "x")
    before = changes(raw)
    raw.call("MULTI")
    raw.call("PFCOUNT", "a")
    raw.call("PFCOUNT", "a")
    assert raw.call("EXEC") == [1, 1]
    assert changes(raw) - before == 1


def test_save_resets_the_count(raw):
    raw.call("MSET", "a", "1", "b", "2")
    assert changes(raw) >= 2
    assert raw.call("SAVE") == "OK"
    assert changes(raw) == 0
    raw.call("HSET", "h", "f1", "1", "f2", "2", "f3", "3")
    assert changes(raw) == 3


def test_pfadd_on_a_dense_sketch_counts_each_register_raised(raw):
    old = raw.call("CONFIG", "GET", "hll-sparse-max-bytes")[1]
    try:
        assert raw.call("CONFIG", "SET", "hll-sparse-max-bytes", "0") == "OK"
        raw.call("PFADD", "p", "a")
        assert raw.call("STRLEN", "p") == 12304  # dense
        before = changes(raw)
        assert raw.call("PFADD", "p", "a", "b", "c") == 1
        assert changes(raw) - before == 2
        assert raw.call("PFADD", "p", "a", "b") == 0
        assert changes(raw) - before == 2
    finally:
        raw.call("CONFIG", "SET", "hll-sparse-max-bytes", old)


def test_smove_leaves_a_watched_destination_alone_when_it_had_the_member(raw, raw2):
    raw.call("SADD", "s", "a", "b")
    raw.call("SADD", "t", "a")
    assert raw.call("WATCH", "t") == "OK"
    assert raw2.call("SMOVE", "s", "t", "a") == 1
    raw.call("MULTI")
    raw.call("SCARD", "t")
    assert raw.call("EXEC") == [1]
    assert raw.call("WATCH", "t") == "OK"
    assert raw2.call("SMOVE", "s", "t", "b") == 1
    raw.call("MULTI")
    raw.call("SCARD", "t")
    assert raw.call("EXEC") is None


def test_function_library_changes_count_one_each(raw):
    code = "#!lua name=changes_lib\nredis.register_function('changes_f', function() return 1 end)"
    raw.call("FUNCTION", "FLUSH")
    before = changes(raw)
    assert raw.call("FUNCTION", "LOAD", code) == b"changes_lib"
    assert isinstance(raw.call("FUNCTION", "LOAD", code), RespError)
    assert raw.call("FUNCTION", "LOAD", "REPLACE", code) == b"changes_lib"
    dump = raw.call("FUNCTION", "DUMP")
    assert raw.call("FUNCTION", "DELETE", "changes_lib") == "OK"
    assert isinstance(raw.call("FUNCTION", "DELETE", "changes_lib"), RespError)
    assert raw.call("FUNCTION", "RESTORE", dump) == "OK"
    assert raw.call("FUNCTION", "FLUSH") == "OK"
    assert raw.call("FUNCTION", "FLUSH") == "OK"
    assert changes(raw) - before == 6


def test_a_blocked_xreadgroup_counts_only_the_consumer_it_creates(connect):
    from lapse_harness import wait_blocked
    writer, reader = connect(), connect()
    writer.call("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM")
    writer.call("XGROUP", "CREATECONSUMER", "x", "g", "c")
    for consumer, expected in (("c", 1), ("newc", 2)):
        before = changes(writer)
        reader.send("XREADGROUP", "GROUP", "g", consumer, "BLOCK", "0", "STREAMS", "x", ">")
        wait_blocked(writer, 1)
        writer.call("XADD", "x", "*", "f", "v")
        assert len(reader.read_reply()) == 1
        assert changes(writer) - before == expected  # the XADD, and the consumer created


# Redis 7.0's serveClientBlockedOnList pops for a woken BLPOP, BRPOP, BLMOVE or BRPOPLPUSH
# without counting a change; BLMPOP's woken pop counts one per element, and any blocking pop
# served at once counts as the plain pop does.
@pytest.mark.parametrize("command, woken, at_once", [
    (["BLPOP", "l", "0"], 0, 1),
    (["BRPOP", "l", "0"], 0, 1),
    (["BLMOVE", "l", "d", "LEFT", "RIGHT", "0"], 0, 1),
    (["BRPOPLPUSH", "l", "d", "0"], 0, 1),
    (["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "2"], 2, 2),
])
def test_a_woken_blocking_pop_counts_as_redis_counts_it(connect, command, woken, at_once):
    from lapse_harness import wait_blocked
    writer, reader = connect(), connect()
    before = changes(writer)
    reader.send(*command)
    wait_blocked(writer, 1)
    writer.call("RPUSH", "l", "a", "b")
    assert reader.read_reply() is not None
    assert changes(writer) - before == 2 + woken  # the two pushed, and what the pop counts
    writer.call("RPUSH", "l", "c", "d")
    before = changes(writer)
    assert reader.call(*command) is not None
    assert changes(writer) - before == at_once


@pytest.mark.lapse_only
def test_field_ttl_commands_count_the_fields_they_change(raw):
    # HEXPIRE and HPERSIST come from Redis 7.4, which counts one change per field given a
    # deadline, deleted by one in the past, or made persistent, and none when nothing changed.
    raw.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    before = changes(raw)
    assert raw.call("HPERSIST", "h", "FIELDS", "2", "a", "nosuch") == [-1, -2]
    assert raw.call("HEXPIRE", "nosuch", "100", "FIELDS", "1", "a") == [-2]
    assert raw.call("HEXPIRE", "h", "100", "XX", "FIELDS", "1", "a") == [0]
    assert changes(raw) == before
    assert raw.call("HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "x") == [1, 1, -2]
    assert changes(raw) - before == 2
    assert raw.call("HPERSIST", "h", "FIELDS", "3", "a", "b", "c") == [1, 1, -1]
    assert changes(raw) - before == 4
    assert raw.call("HPEXPIREAT", "h", "1", "FIELDS", "2", "a", "c") == [2, 2]
    assert raw.call("HKEYS", "h") == [b"b"]
    assert changes(raw) - before == 6
