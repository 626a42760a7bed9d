"""Bitmap commands and LCS (issue 13): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
BITFIELD_RO and LCS, against Debian's redis-server 7.0, reply bytes compared.

Each scenario is a list of (client, *command) steps run on a FLUSHALLed lapse and Redis; the
replies must be identical byte for byte. Every error case is followed by reads of the keys it
names, so that "bad input changes nothing" is compared too. Scenarios that change
proto-max-bulk-len set it back as their last step.
"""
import shutil

import pytest

from lapse_harness import RawClient

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

BIG_LIMIT = "536870912"  # proto-max-bulk-len's default


def state(*keys):
    """Steps that read back what the keys hold."""
    steps = []
    for k in keys:
        steps += [(0, "EXISTS", k), (0, "GET", k), (0, "PTTL", k)]
    return steps


SCENARIOS = {
    "setbit_getbit": [
        (0, "SETBIT", "k", "7", "1"), (0, "GET", "k"), (0, "SETBIT", "k", "7", "1"), (0, "SETBIT", "k", "7", "0"),
        (0, "SETBIT", "k", "100", "1"), (0, "STRLEN", "k"), (0, "GETBIT", "k", "100"), (0, "GETBIT", "k", "101"),
        (0, "GETBIT", "k", "100000"), (0, "GETBIT", "nokey", "3"), (0, "GET", "k"), (0, "OBJECT", "ENCODING", "k"),
        (0, "SET", "n", "12"), (0, "OBJECT", "ENCODING", "n"), (0, "SETBIT", "n", "2", "0"),
        (0, "OBJECT", "ENCODING", "n"), (0, "GET", "n"), (0, "GETBIT", "n", "2"), (0, "GETBIT", "n", "3"),
        (0, "SET", "t", "abc", "EX", "1000"), (0, "SETBIT", "t", "30", "1"), (0, "TTL", "t"), (0, "GET", "t"),
        (0, "SETBIT", "new", "0", "0"), (0, "GET", "new"), (0, "OBJECT", "ENCODING", "new"),
    ],
    "setbit_errors_change_nothing": [
        (0, "SET", "k", "x"),
        (0, "SETBIT", "k", "4294967296", "1"), (0, "SETBIT", "k", "18446744073709551616", "1"),
        (0, "SETBIT", "k", "-1", "1"), (0, "SETBIT", "k", "x", "1"), (0, "SETBIT", "k", "1.5", "1"),
        (0, "SETBIT", "k", "01", "1"), (0, "SETBIT", "k", "+1", "1"), (0, "SETBIT", "k", "#1", "1"),
        (0, "SETBIT", "k", "", "1"), (0, "SETBIT", "k", "1", "2"), (0, "SETBIT", "k", "1", "-1"),
        (0, "SETBIT", "k", "1", "x"), (0, "SETBIT", "k", "1", "01"), (0, "SETBIT", "k", "1", ""),
        (0, "SETBIT", "k", "-1", "x"), (0, "SETBIT", "nokey", "4294967296", "1"), (0, "SETBIT", "nokey", "1", "5"),
        (0, "SETBIT", "k", "1"), (0, "SETBIT", "k"), (0, "SETBIT", "k", "1", "1", "1"),
        (0, "GETBIT", "k", "4294967296"), (0, "GETBIT", "k", "-1"), (0, "GETBIT", "k", "x"), (0, "GETBIT", "k"),
        (0, "GETBIT", "k", "#2"),
        *state("k", "nokey"),
    ],
    "proto_max_bulk_len": [
        (0, "CONFIG", "SET", "proto-max-bulk-len", "1048576"),
        (0, "SETBIT", "a", "8388608", "1"), (0, "EXISTS", "a"), (0, "SETBIT", "a", "8388607", "1"),
        (0, "STRLEN", "a"), (0, "GETBIT", "a", "8388608"), (0, "GETBIT", "a", "8388607"),
        (0, "BITFIELD", "b", "SET", "i8", "8388608", "1"), (0, "EXISTS", "b"),
        (0, "BITFIELD", "b", "SET", "i8", "#1048576", "1"), (0, "BITFIELD", "b", "GET", "u4", "#2097152"),
        (0, "BITFIELD", "b", "SET", "i8", "8388607", "1"), (0, "STRLEN", "b"),
        (0, "BITFIELD", "b", "GET", "i8", "8388607", "GET", "u63", "8388600"),
        (0, "SET", "x", "a" * 600), (0, "SET", "y", "b" * 300 + "a" * 300),
        (0, "LCS", "x", "y", "LEN"), (0, "LCS", "x", "x"), (0, "LCS", "x", "nokey"),
        (0, "CONFIG", "SET", "proto-max-bulk-len", BIG_LIMIT),
        (0, "LCS", "x", "y", "LEN"),
    ],
    "bitcount": [
        (0, "SET", "s", "foobar"), (0, "BITCOUNT", "s"), (0, "BITCOUNT", "s", "0", "0"), (0, "BITCOUNT", "s", "1", "1"),
        (0, "BITCOUNT", "s", "1", "1", "BYTE"), (0, "BITCOUNT", "s", "1", "1", "BIT"), (0, "BITCOUNT", "s", "5", "30", "bit"),
        (0, "BITCOUNT", "s", "-1", "-1"), (0, "BITCOUNT", "s", "-1", "-5"), (0, "BITCOUNT", "s", "-100", "-200"),
        (0, "BITCOUNT", "s", "-200", "-100"), (0, "BITCOUNT", "s", "0", "100"), (0, "BITCOUNT", "s", "-3", "-1", "BIT"),
        (0, "BITCOUNT", "s", "47", "47", "BIT"), (0, "BITCOUNT", "s", "48", "100", "BIT"), (0, "BITCOUNT", "s", "3", "2"),
        (0, "BITCOUNT", "s", "-9223372036854775808", "9223372036854775807"),
        (0, "BITCOUNT", "s", "-9223372036854775808", "9223372036854775807", "BIT"),
        (0, "SET", "e", ""), (0, "BITCOUNT", "e"), (0, "BITCOUNT", "e", "0", "0"), (0, "BITCOUNT", "e", "0", "-1", "BIT"),
        (0, "SET", "big", "\xff" * 100), (0, "BITCOUNT", "big"), (0, "BITCOUNT", "big", "3", "-7"),
        (0, "BITCOUNT", "big", "13", "700", "BIT"),
        # errors: syntax, integers, and a missing key that answers 0 before its range is read
        (0, "BITCOUNT", "s", "0"), (0, "BITCOUNT", "s", "0", "1", "2"), (0, "BITCOUNT", "s", "0", "1", "BIT", "x"),
        (0, "BITCOUNT", "s", "a", "1"), (0, "BITCOUNT", "s", "1", "a"), (0, "BITCOUNT", "s", "1", "a", "BIT"),
        (0, "BITCOUNT", "s", "-1", "-5", "junk"), (0, "BITCOUNT", "s", "1", "5", "junk"),
        (0, "BITCOUNT", "s", "1", "5", "bit\x00x"),
        (0, "BITCOUNT", "nokey"), (0, "BITCOUNT", "nokey", "0"), (0, "BITCOUNT", "nokey", "a", "b", "c"),
        (0, "BITCOUNT"),
    ],
    "bitpos": [
        (0, "SET", "s", "\xff\xf0\x00"), (0, "BITPOS", "s", "0"), (0, "BITPOS", "s", "1"),
        (0, "SET", "t", "\x00\xff\xf0"), (0, "BITPOS", "t", "1", "0"), (0, "BITPOS", "t", "1", "2"),
        (0, "BITPOS", "t", "1", "2", "-1", "BYTE"), (0, "BITPOS", "t", "1", "7", "15", "BIT"),
        (0, "BITPOS", "t", "0", "8", "11", "bit"), (0, "BITPOS", "t", "0", "8", "12", "bit"),
        (0, "BITPOS", "t", "1", "-5", "-1", "BIT"), (0, "BITPOS", "t", "1", "-100", "-200"),
        (0, "BITPOS", "t", "1", "3", "2"), (0, "BITPOS", "t", "0", "3", "2"),
        (0, "SET", "f", "\xff\xff\xff"), (0, "BITPOS", "f", "0"), (0, "BITPOS", "f", "0", "1"),
        (0, "BITPOS", "f", "0", "1", "-1"), (0, "BITPOS", "f", "0", "0", "-1", "BIT"), (0, "BITPOS", "f", "1", "-1"),
        (0, "BITPOS", "f", "0", "3", "9", "BIT"),
        (0, "SET", "z", "\x00" * 40 + "\x01"), (0, "BITPOS", "z", "1"), (0, "BITPOS", "z", "1", "0", "39"),
        (0, "BITPOS", "z", "0", "5"), (0, "BITPOS", "z", "1", "3", "327", "BIT"),
        (0, "SET", "o", "\xff" * 40 + "\xfe"), (0, "BITPOS", "o", "0"), (0, "BITPOS", "o", "0", "2", "-2"),
        (0, "SET", "e", ""), (0, "BITPOS", "e", "0"), (0, "BITPOS", "e", "1"), (0, "BITPOS", "e", "0", "0", "-1"),
        (0, "BITPOS", "nokey", "0"), (0, "BITPOS", "nokey", "1"), (0, "BITPOS", "nokey", "0", "5", "9", "BIT"),
        # errors
        (0, "BITPOS", "s", "2"), (0, "BITPOS", "s", "-1"), (0, "BITPOS", "s", "x"), (0, "BITPOS", "nokey", "2"),
        (0, "BITPOS", "nokey", "1", "a"), (0, "BITPOS", "nokey", "0", "1", "2", "foo", "x"),
        (0, "BITPOS", "s", "1", "a"), (0, "BITPOS", "s", "1", "0", "a"), (0, "BITPOS", "s", "1", "0", "a", "foo"),
        (0, "BITPOS", "s", "1", "0", "1", "foo"), (0, "BITPOS", "s", "1", "0", "1", "BIT", "x"), (0, "BITPOS", "s"),
    ],
    "bitop": [
        (0, "SET", "a", "foobar"), (0, "SET", "b", "abcdef"), (0, "SET", "{x}c", "\xff\x00\xff"),
        (0, "BITOP", "AND", "dest", "a", "b"), (0, "GET", "dest"), (0, "OBJECT", "ENCODING", "dest"),
        (0, "BITOP", "or", "dest", "a", "b", "{x}c"), (0, "GET", "dest"),
        (0, "BITOP", "XOR", "dest", "a", "b", "{x}c", "nokey"), (0, "GET", "dest"),
        (0, "BITOP", "and", "dest", "a", "nokey"), (0, "GET", "dest"),
        (0, "BITOP", "NOT", "dest", "{x}c"), (0, "GET", "dest"),
        (0, "BITOP", "NOT", "a", "a"), (0, "GET", "a"),
        (0, "BITOP", "OR", "b", "b", "b"), (0, "GET", "b"),
        (0, "SET", "withttl", "x", "EX", "1000"), (0, "BITOP", "OR", "withttl", "a"), (0, "TTL", "withttl"),
        (0, "SET", "short", "1"), (0, "BITOP", "OR", "short", "short"), (0, "OBJECT", "ENCODING", "short"),
        # an empty result deletes the destination and answers 0
        (0, "SET", "e", ""), (0, "BITOP", "OR", "dest", "nokey", "e"), (0, "EXISTS", "dest"),
        (0, "BITOP", "NOT", "dest", "nokey"), (0, "EXISTS", "dest"),
        (0, "SET", "big1", "\x0f" * 100), (0, "SET", "big2", "\xf1" * 77),
        (0, "BITOP", "AND", "d2", "big1", "big2"), (0, "GET", "d2"), (0, "BITOP", "XOR", "d2", "big1", "big2"),
        (0, "GET", "d2"), (0, "BITOP", "OR", "d2", "big2", "big1"), (0, "GET", "d2"),
        # errors change nothing
        (0, "SET", "dest", "keep"),
        (0, "BITOP", "NOT", "dest", "a", "b"), (0, "BITOP", "FOO", "dest", "a"), (0, "BITOP", "ANDX", "dest", "a"),
        (0, "BITOP", "and\x00", "dest", "a"), (0, "BITOP", "AND", "dest"), (0, "BITOP", "NOT", "dest"),
        (0, "BITOP"), *state("dest"),
        (0, "COMMAND", "GETKEYS", "BITOP", "AND", "d", "x", "y", "z"),
    ],
    "bitfield": [
        (0, "BITFIELD", "bf", "SET", "i8", "0", "-100", "GET", "u8", "0", "INCRBY", "i8", "0", "300",
         "OVERFLOW", "SAT", "INCRBY", "i8", "0", "300", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "300", "GET", "i8", "0"),
        (0, "GET", "bf"), (0, "OBJECT", "ENCODING", "bf"),
        (0, "BITFIELD", "bf", "SET", "u63", "#3", "-1", "GET", "u63", "#3", "INCRBY", "i64", "0", "1", "GET", "i64", "0",
         "SET", "i64", "0", "-9223372036854775808", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1"),
        (0, "BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "u8", "0", "-5", "SET", "i8", "0", "-9223372036854775808",
         "OVERFLOW", "WRAP", "SET", "i16", "0", "70000", "SET", "u4", "0", "17", "overflow", "fail", "set", "u4", "0", "16"),
        (0, "BITFIELD", "bf", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "1",
         "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2", "102", "-9", "INCRBY", "i5", "3", "100"),
        (0, "BITFIELD", "bf", "INCRBY", "i64", "64", "9223372036854775807", "INCRBY", "i64", "64", "2",
         "OVERFLOW", "SAT", "INCRBY", "i64", "64", "9223372036854775807", "INCRBY", "i64", "64", "-9223372036854775808",
         "INCRBY", "i64", "64", "-9223372036854775808", "INCRBY", "i64", "64", "-9223372036854775808"),
        (0, "BITFIELD", "bf", "GET", "i1", "0", "GET", "u1", "1", "GET", "i64", "1", "GET", "u63", "2",
         "GET", "i8", "#100", "GET", "u8", "1000"),
        (0, "GET", "bf"), (0, "STRLEN", "bf"),
        (0, "BITFIELD", "bf"), (0, "BITFIELD", "nokey"), (0, "EXISTS", "nokey"),
        (0, "BITFIELD", "nokey", "GET", "u8", "0"), (0, "EXISTS", "nokey"),
        (0, "BITFIELD", "new", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5"), (0, "GET", "new"),
        (0, "BITFIELD", "new2", "SET", "u8", "#2", "0"), (0, "GET", "new2"),
        (0, "SET", "t", "abc", "PX", "100000000"), (0, "BITFIELD", "t", "SET", "u8", "#5", "65"), (0, "GET", "t"),
        (0, "TTL", "t"), (0, "SET", "n", "255"), (0, "BITFIELD", "n", "GET", "u8", "0"),
        (0, "BITFIELD_RO", "bf", "GET", "i8", "0", "GET", "u4", "#3"), (0, "BITFIELD_RO", "bf"),
        (0, "BITFIELD_RO", "nokey", "GET", "i64", "0"),
    ],
    "bitfield_errors_change_nothing": [
        (0, "SET", "bf", "\x01\x02\x03"),
        (0, "BITFIELD", "bf", "GET", "u64", "0"), (0, "BITFIELD", "bf", "GET", "i65", "0"),
        (0, "BITFIELD", "bf", "GET", "x8", "0"), (0, "BITFIELD", "bf", "GET", "i0", "0"),
        (0, "BITFIELD", "bf", "GET", "I8", "0"), (0, "BITFIELD", "bf", "GET", "U8", "0"),
        (0, "BITFIELD", "bf", "GET", "", "0"), (0, "BITFIELD", "bf", "GET", "i", "0"),
        (0, "BITFIELD", "bf", "GET", "i08", "0"), (0, "BITFIELD", "bf", "GET", "i8\x00", "0"),
        (0, "BITFIELD", "bf", "GET", "i-8", "0"),
        (0, "BITFIELD", "bf", "GET", "i8", "-1"), (0, "BITFIELD", "bf", "GET", "i8", "#-1"),
        (0, "BITFIELD", "bf", "GET", "i8", "#x"), (0, "BITFIELD", "bf", "GET", "i8", "x"),
        (0, "BITFIELD", "bf", "GET", "i8", "##1"), (0, "BITFIELD", "bf", "GET", "i8", "#"),
        (0, "BITFIELD", "bf", "GET", "i8", "4294967296"), (0, "BITFIELD", "bf", "SET", "i64", "#67108864", "1"),
        (0, "BITFIELD", "bf", "GET", "i64", "#1152921504606846976"),
        (0, "BITFIELD", "bf", "SET", "i8", "0", "x"), (0, "BITFIELD", "bf", "INCRBY", "i8", "0", "1.5"),
        (0, "BITFIELD", "bf", "SET", "i8", "0", "1", "SET", "i8", "8", "bad"),
        (0, "BITFIELD", "bf", "SET", "i8", "0", "1", "GET", "u64", "0"),
        (0, "BITFIELD", "bf", "OVERFLOW", "BAD", "GET", "i8", "0"), (0, "BITFIELD", "bf", "OVERFLOW"),
        (0, "BITFIELD", "bf", "SET", "i8", "0", "1", "OVERFLOW", "x"),
        (0, "BITFIELD", "bf", "GET"), (0, "BITFIELD", "bf", "GET", "i8"), (0, "BITFIELD", "bf", "SET", "i8", "0"),
        (0, "BITFIELD", "bf", "INCRBY", "i8", "0"), (0, "BITFIELD", "bf", "FOO", "i8", "0"),
        (0, "BITFIELD", "bf", "GET", "i8", "0", "junk"),
        (0, "BITFIELD_RO", "bf", "SET", "i8", "0", "1"), (0, "BITFIELD_RO", "bf", "INCRBY", "i8", "0", "1"),
        (0, "BITFIELD_RO", "bf", "GET", "i8", "0", "SET", "i8", "0", "1"),
        (0, "BITFIELD_RO", "nokey", "SET", "i8", "0", "1"), (0, "BITFIELD_RO", "bf", "OVERFLOW", "SAT"),
        (0, "BITFIELD_RO", "bf", "GET", "i8", "0", "SET"), (0, "BITFIELD_RO", "bf", "SET", "i8", "0", "x"),
        (0, "BITFIELD_RO", "bf", "GET", "u64", "0"), (0, "BITFIELD"), (0, "BITFIELD_RO"),
        *state("bf", "nokey"),
    ],
    "lcs": [
        (0, "SET", "a", "ohmytext"), (0, "SET", "b", "mynewtext"), (0, "LCS", "a", "b"), (0, "LCS", "a", "b", "LEN"),
        (0, "LCS", "a", "b", "IDX"), (0, "LCS", "a", "b", "idx", "MINMATCHLEN", "4"),
        (0, "LCS", "a", "b", "IDX", "WITHMATCHLEN"), (0, "LCS", "a", "b", "IDX", "WITHMATCHLEN", "MINMATCHLEN", "3"),
        (0, "LCS", "a", "b", "MINMATCHLEN", "-5", "IDX"), (0, "LCS", "a", "b", "LEN", "LEN"),
        (0, "LCS", "a", "b", "WITHMATCHLEN"), (0, "LCS", "a", "b", "MINMATCHLEN", "2"),
        (0, "LCS", "b", "a", "IDX", "WITHMATCHLEN"), (0, "LCS", "a", "a", "IDX"),
        (0, "LCS", "a", "nokey"), (0, "LCS", "nokey", "a", "IDX"), (0, "LCS", "nokey", "other", "LEN"),
        (0, "SET", "{x}1", "GTAGGCTTAACGCGATGGCATACCGATCAA"), (0, "SET", "{y}2", "GTTCGAATCCACGGACTGCTACATGC"),
        (0, "LCS", "{x}1", "{y}2"), (0, "LCS", "{x}1", "{y}2", "IDX", "WITHMATCHLEN"),
        (0, "LCS", "{x}1", "{y}2", "IDX", "MINMATCHLEN", "2"),
        (0, "SET", "bin", "a\x00b\xffc\r\n"), (0, "SET", "bin2", "\x00\xff\r"), (0, "LCS", "bin", "bin2"),
        # errors
        (0, "LCS", "a", "b", "IDX", "LEN"), (0, "LCS", "a", "b", "LEN", "IDX"), (0, "LCS", "a", "b", "FOO"),
        (0, "LCS", "a", "b", "MINMATCHLEN"), (0, "LCS", "a", "b", "MINMATCHLEN", "x"),
        (0, "LCS", "a", "b", "MINMATCHLEN", "1.5", "IDX"), (0, "LCS", "a", "b", "IDX\x00"),
        (0, "LCS", "a"), (0, "LCS"), (0, "COMMAND", "GETKEYS", "LCS", "a", "b", "IDX"),
        *state("a", "b"),
    ],
    "lcs_resp3": [
        (0, "HELLO", "3"), (0, "SET", "a", "ohmytext"), (0, "SET", "b", "mynewtext"),
        (0, "LCS", "a", "b", "IDX"), (0, "LCS", "a", "b", "IDX", "WITHMATCHLEN", "MINMATCHLEN", "3"),
        (0, "LCS", "a", "b", "LEN"), (0, "LCS", "a", "b"), (0, "LCS", "nokey", "b", "IDX"),
        (0, "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5", "GET", "u2", "0"),
        (0, "BITCOUNT", "a"), (0, "BITPOS", "a", "1"), (0, "GETBIT", "a", "1"),
    ],
    "transactions_and_watch": [
        (0, "MULTI"), (0, "SETBIT", "k", "3", "1"), (0, "BITFIELD", "k", "INCRBY", "u4", "4", "3"),
        (0, "BITOP", "NOT", "d", "k"), (0, "BITCOUNT", "d"), (0, "LCS", "k", "d", "LEN"), (0, "EXEC"),
        # queueing errors doom the transaction; runtime errors do not
        (0, "MULTI"), (0, "SETBIT", "k", "1"), (0, "EXEC"),
        (0, "MULTI"), (0, "SETBIT", "k", "x", "1"), (0, "SETBIT", "k", "0", "1"), (0, "EXEC"), (0, "GET", "k"),
        # SETBIT that changes nothing leaves watchers alone; a change, growth or BITOP does not
        (0, "WATCH", "k"), (1, "SETBIT", "k", "3", "1"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "SETBIT", "k", "3", "0"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "SETBIT", "k", "100", "0"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "BITFIELD", "k", "SET", "u8", "0", "7"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        # a BITFIELD write of the value already there is no change either
        (0, "WATCH", "k"), (1, "BITFIELD", "k", "SET", "u8", "0", "7"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "BITFIELD", "k", "INCRBY", "i4", "0", "0"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "-100"), (0, "MULTI"),
        (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "-100"), (0, "MULTI"),
        (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "d"), (1, "BITOP", "AND", "d", "k", "k"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "WATCH", "k"), (1, "BITCOUNT", "k"), (1, "BITFIELD_RO", "k", "GET", "u8", "0"), (1, "LCS", "k", "d"),
        (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (0, "EVAL", "redis.call('setbit', KEYS[1], 9, 1) return redis.call('bitcount', KEYS[1])", "1", "s"),
        (0, "EVAL", "return redis.call('bitfield_ro', KEYS[1], 'get', 'u8', 0)", "1", "s"),
    ],
    "oom": [
        (0, "SET", "k", "x"), (1, "CONFIG", "SET", "maxmemory", "1"),
        (0, "SETBIT", "k", "1", "1"), (0, "BITFIELD", "k", "GET", "u8", "0"), (0, "BITFIELD_RO", "k", "GET", "u8", "0"),
        (0, "BITOP", "NOT", "k", "k"), (0, "GETBIT", "k", "1"), (0, "BITCOUNT", "k"), (0, "LCS", "k", "k"),
        (1, "CONFIG", "SET", "maxmemory", "0"), (0, "GET", "k"),
    ],
}


def run_scenario(port, steps, clients=2):
    conns = [RawClient(port) for _ in range(clients)]
    try:
        assert conns[0].call("FLUSHALL") == "OK"
        out = []
        for who, *cmd in steps:
            reply = conns[who].call_raw(*cmd)
            if cmd[0] == "HELLO":
                reply = reply[:1]  # names the server's version and the client id
            out.append(reply)
        return out
    finally:
        for c in conns:
            c.close()


@needs_redis
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_replies_as_redis(name, server, redis_server):
    steps = SCENARIOS[name]
    expected = run_scenario(redis_server.port, steps)
    actual = run_scenario(server.port, steps)
    diffs = [f"{s}\n      redis: {w!r}\n      lapse: {g!r}" for s, w, g in zip(steps, expected, actual) if w != g]
    assert not diffs, "\n".join(diffs)


def test_command_info_flags_and_keys(raw):
    """COMMAND INFO's arity, flags, key positions and categories, as Redis 7.0 reports them."""
    expected = {
        "setbit": (4, ["write", "denyoom"], 1, 1, 1, ["@write", "@bitmap", "@slow"]),
        "getbit": (3, ["readonly", "fast"], 1, 1, 1, ["@read", "@bitmap", "@fast"]),
        "bitcount": (-2, ["readonly"], 1, 1, 1, ["@read", "@bitmap", "@slow"]),
        "bitpos": (-3, ["readonly"], 1, 1, 1, ["@read", "@bitmap", "@slow"]),
        "bitop": (-4, ["write", "denyoom"], 2, -1, 1, ["@write", "@bitmap", "@slow"]),
        "bitfield": (-2, ["write", "denyoom"], 1, 1, 1, ["@write", "@bitmap", "@slow"]),
        "bitfield_ro": (-2, ["readonly", "fast"], 1, 1, 1, ["@read", "@bitmap", "@fast"]),
        "lcs": (-3, ["readonly"], 1, 2, 1, ["@read", "@string", "@slow"]),
    }
    infos = raw.call("COMMAND", "INFO", *expected)
    for (name, want), info in zip(expected.items(), infos):
        assert info[0] == name.encode()
        assert (info[1], list(info[2]), info[3], info[4], info[5], list(info[6])) == want, name


def test_big_bitmaps_count_and_search(raw):
    """A few megabytes of bitmap: SETBIT grows it in place and BITCOUNT/BITPOS see every bit."""
    offsets = [0, 9, 4096, 65535, 1 << 20, (1 << 24) + 5, (1 << 25) - 1]
    for off in offsets:
        assert raw.call("SETBIT", "big", off, 1) == 0
    assert raw.call("STRLEN", "big") == 1 << 22
    assert raw.call("BITCOUNT", "big") == len(offsets)
    assert raw.call("BITPOS", "big", 1, 2) == 4096
    assert raw.call("BITPOS", "big", 1, 8193) == 1 << 20
    assert raw.call("BITPOS", "big", 0) == 1
    assert raw.call("BITCOUNT", "big", 4096, -1, "BIT") == len(offsets) - 2
    assert raw.call("SETBIT", "big", (1 << 25) - 1, 0) == 1
    assert raw.call("BITPOS", "big", 1, -1000) == -1


HIT_COMMANDS = [("GETBIT", "a", "1"), ("GETBIT", "n", "1"), ("SETBIT", "a", "1", "1"), ("SETBIT", "n", "1", "1"),
                ("BITCOUNT", "a"), ("BITCOUNT", "q"), ("BITPOS", "a", "1"), ("BITPOS", "q", "1"),
                ("BITOP", "AND", "d", "a", "q"), ("BITFIELD", "a", "GET", "u8", "0"),
                ("BITFIELD", "a", "SET", "u8", "0", "1"), ("BITFIELD_RO", "q", "GET", "u8", "0"),
                ("LCS", "a", "q"), ("LCS", "a", "b", "LEN")]


def keyspace_counts(port):
    c = RawClient(port)
    try:
        c.call("FLUSHALL")
        c.call("SET", "a", "x")
        c.call("CONFIG", "RESETSTAT")
        for cmd in HIT_COMMANDS:
            c.call_raw(*cmd)
        stats = c.call("INFO", "stats").decode()
        return {k: v for k, v in (line.split(":", 1) for line in stats.split("\r\n") if line.startswith("keyspace_"))}
    finally:
        c.close()


@needs_redis
def test_keyspace_hits_and_misses_as_redis(server, redis_server):
    """Reads count hits and misses as Redis's lookupKeyRead does; writes (SETBIT, BITFIELD with
    a SET) look up without counting."""
    assert keyspace_counts(server.port) == keyspace_counts(redis_server.port)
