"""CONFIG GET with glob patterns and several patterns at once, and Redis 7.0's full parameter set:
every parameter Redis 7.0.15 lists (CONFIG GET *) is answered by lapse, those it implements with
their live values, the others with Redis's default, read-only. Compared with Debian's
redis-server 7.0 started beside lapse; the single-server tests also run against Redis
(LAPSE_TARGET=redis) to show that the expected replies are Redis's.
"""
from __future__ import annotations

import os

import pytest

from conftest import single_server
from lapse_harness import RawClient, RespError as E, target_kind

server = single_server(threads=2)

# lapse's own settings, which Redis does not have.
LAPSE_ONLY = {"billing", "change-feed-retention", "ru-per-second", "threads", "rdb-lapse-data"}
# Parameters both have whose start-up values differ by design: the harness's port and bind,
# and the snapshot directory the harness gives each server.
DIFFERENT_BY_DESIGN = {"port", "bind", "dir"}


def as_dict(reply):
    return dict(zip(reply[::2], reply[1::2]))


def config_get(port, *patterns):
    with RawClient(port) as c:
        return {k.decode(): v.decode() for k, v in as_dict(c.call("CONFIG", "GET", *patterns)).items()}


@pytest.mark.lapse_only
def test_every_redis_parameter_is_answered_with_redis_default_values(server, redis_server):
    ours = config_get(server.port, "*")
    redis = config_get(redis_server.port, "*")
    assert set(ours) - LAPSE_ONLY == set(redis)
    differing = {name for name in redis if ours[name] != redis[name]}
    assert differing <= DIFFERENT_BY_DESIGN, {n: (ours[n], redis[n]) for n in differing - DIFFERENT_BY_DESIGN}


@pytest.mark.lapse_only
def test_dir_is_the_one_the_harness_gave(server):
    assert config_get(server.port, "dir") == {"dir": os.path.realpath(server.data_dir())}


@pytest.mark.parametrize("patterns, expected", [
    (("*max-*-entries*", "maxmemory"), {
        "hash-max-listpack-entries": "512", "hash-max-ziplist-entries": "512", "set-max-intset-entries": "512",
        "zset-max-listpack-entries": "128", "zset-max-ziplist-entries": "128", "maxmemory": "0"}),
    (("tls-*port", "repl-backlog-?ize"), {"tls-port": "0", "repl-backlog-size": "1048576"}),
    (("MAXMEMORY-POLICY", "maxmemory-policy", "*policy"), {"MAXMEMORY-POLICY": "noeviction"}),
    (("cluster-enabled", "appendfsync", "nosuch"), {"cluster-enabled": "no", "appendfsync": "everysec"}),
    (("lazyfree-lazy-[eu]*",), {"lazyfree-lazy-eviction": "no", "lazyfree-lazy-expire": "no",
                                "lazyfree-lazy-user-del": "no", "lazyfree-lazy-user-flush": "no"}),
    (("nosuch*",), {}),
])
def test_glob_patterns_and_several_at_once(server, patterns, expected):
    assert config_get(server.port, *patterns) == expected


def test_several_patterns_name_each_parameter_once(server):
    with RawClient(server.port) as c:
        reply = c.call("CONFIG", "GET", "maxmemory", "maxmemor?", "maxmemor[xy]", "MaxMemory")
        assert reply == [b"maxmemory", b"0"]
        # A name without glob characters is answered as it was spelled.
        assert c.call("CONFIG", "GET", "MaxMemory") == [b"MaxMemory", b"0"]


@pytest.mark.lapse_only
@pytest.mark.parametrize("name, value", [
    ("tls-replication", "yes"), ("lazyfree-lazy-eviction", "yes"), ("repl-backlog-size", "2mb"),
    ("maxmemory-clients", "1"), ("stream-node-max-entries", "abc"), ("stream-node-max-entries", "0100"),
    ("repl-backlog-size", "1m"),
])
def test_parameters_lapse_lacks_are_read_only(server, name, value):
    with RawClient(server.port) as c:
        before = c.call("CONFIG", "GET", name)
        assert c.call("CONFIG", "SET", name, value) == E(
            f"ERR CONFIG SET failed (possibly related to argument '{name}') - lapse does not implement this "
            "parameter; it only reports Redis 7.0's default, read-only")
        # One refused pair refuses the whole CONFIG SET.
        assert isinstance(c.call("CONFIG", "SET", "maxmemory-samples", "7", name, value), E)
        assert c.call("CONFIG", "GET", "maxmemory-samples") == [b"maxmemory-samples", b"5"]
        assert c.call("CONFIG", "GET", name) == before


@pytest.mark.parametrize("name, value", [
    ("repl-backlog-size", "1048576"), ("maxmemory-clients", "0"), ("lazyfree-lazy-eviction", "NO"),
    ("tls-replication", "no"),
    # Memory parameters are compared by their byte count, as Redis reads them.
    ("repl-backlog-size", "1mb"), ("stream-node-max-bytes", "4KB"), ("active-defrag-ignore-bytes", "100mb"),
])
def test_a_parameter_lapse_lacks_may_be_set_to_its_default(server, name, value):
    # It changes nothing, on Redis as on lapse: the reply is OK and the value stays.
    with RawClient(server.port) as c:
        before = c.call("CONFIG", "GET", name)
        assert c.call("CONFIG", "SET", name, value, "maxmemory-samples", "7") == "OK"
        assert c.call("CONFIG", "GET", name) == before
        assert c.call("CONFIG", "GET", "maxmemory-samples") == [b"maxmemory-samples", b"7"]
        assert c.call("CONFIG", "SET", "maxmemory-samples", "5") == "OK"
        assert c.call("CONFIG", "SET", name, value, name, value) == E(
            f"ERR CONFIG SET failed (possibly related to argument '{name}') - duplicate parameter")


@pytest.mark.parametrize("name, value", [("cluster-enabled", "yes"), ("io-threads", "1"), ("tcp-backlog", "511"),
                                         ("supervised", "no"), ("replicaof", ""), ("slaveof", "no one")])
def test_a_parameter_redis_sets_only_at_start_up_is_immutable(server, name, value):
    with RawClient(server.port) as c:
        before = c.call("CONFIG", "GET", name)
        assert c.call("CONFIG", "SET", name, value) == E(
            f"ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config")
        assert c.call("CONFIG", "GET", name) == before


@pytest.mark.lapse_only
def test_a_redis_default_in_a_configuration_is_accepted_and_another_value_refused(start_server, tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text("appendfsync everysec\ntcp-keepalive 300\nrepl-diskless-sync YES\nrepl-backlog-size 1mb\ndir .\n")
    srv = start_server(config_file=str(conf))
    assert config_get(srv.port, "appendfsync", "tcp-keepalive") == {"appendfsync": "everysec", "tcp-keepalive": "300"}
    with pytest.raises(Exception):
        start_server(options={"repl-diskless-sync-delay": "6"})


@pytest.mark.parametrize("value, shown", [("00", "0"), ("000", "0"), ("-0", "0"), ("+0", "0"), ("' 0'", "0"),
                                          ('""', "0"), ("1", "1"), ("0777", "777"), ("640", "640")])
def test_unixsocketperm_is_read_in_octal_as_redis_reads_it(start_server, tmp_path, value, shown):
    # Redis reads it with strtoll in base 8 and shows it in octal. Without a unixsocket it
    # applies to nothing, so only the reading is checked here (test_listeners.py has the rest).
    conf = tmp_path / "redis.conf"
    conf.write_text(f"unixsocketperm {value}\n")
    srv = start_server(config_file=str(conf))
    assert config_get(srv.port, "unixsocketperm") == {"unixsocketperm": shown}


@pytest.mark.parametrize("value", ["08", "0x0", "1000", "-1"])
def test_unixsocketperm_not_octal_or_past_0777_stops_start_up(start_server, tmp_path, value):
    conf = tmp_path / "redis.conf"
    conf.write_text(f"unixsocketperm {value}\n")
    with pytest.raises(RuntimeError):
        start_server(config_file=str(conf))


def test_the_hidden_rdb_key_save_delay_is_answered_by_name_only(server):
    # A test knob of Redis's (HIDDEN_CONFIG): not in CONFIG GET *, but readable and settable.
    assert config_get(server.port, "rdb-key-save-delay") == {"rdb-key-save-delay": "0"}
    assert config_get(server.port, "rdb-key-save-*") == {}
    with RawClient(server.port) as c:
        assert c.call("CONFIG", "SET", "rdb-key-save-delay", "5") == "OK"
        assert config_get(server.port, "rdb-key-save-delay") == {"rdb-key-save-delay": "5"}
        assert c.call("CONFIG", "SET", "rdb-key-save-delay", "0") == "OK"


MEMORY_VALUE = "argument must be a memory value"


@pytest.mark.parametrize("name, value, reply, stored", [
    # Redis's memtoull: no digits read as 0, b/k/kb/... in any case, digits past 2^64 saturate
    # and a unit's product wraps; no sign, no spaces, no hex.
    ("maxmemory", "", "OK", "0"), ("maxmemory", "k", "OK", "0"), ("maxmemory", "1B", "OK", "1"),
    ("maxmemory", "1Kb", "OK", "1024"), ("maxmemory", "2G", "OK", "2000000000"),
    ("maxmemory", "18446744073709551615", "OK", "18446744073709551615"),
    ("maxmemory", "99999999999999999999", "OK", "18446744073709551615"),
    ("maxmemory", "99999999999999999999k", "OK", "18446744073709550616"),
    ("maxmemory", "-1", MEMORY_VALUE, "0"), ("maxmemory", "+5", MEMORY_VALUE, "0"),
    ("maxmemory", " 1", MEMORY_VALUE, "0"), ("maxmemory", "1 ", MEMORY_VALUE, "0"),
    ("maxmemory", "0x10", MEMORY_VALUE, "0"), ("maxmemory", "1.5mb", MEMORY_VALUE, "0"),
    # The others are signed: past INT64_MAX they are out of range.
    ("hash-max-listpack-value", "", "OK", "0"),
    ("hash-max-listpack-value", "9223372036854775808", "argument must be between 0 and 9223372036854775807 inclusive",
     "64"),
    ("proto-max-bulk-len", "", "argument must be between 1048576 and 9223372036854775807 inclusive", "536870912"),
    ("proto-max-bulk-len", "2mb", "OK", "2097152"),
    # hz takes any int and keeps it within 1..500.
    ("hz", "0", "OK", "1"), ("hz", "1000", "OK", "500"), ("hz", "-1", "argument must be between 0 and 2147483647 inclusive", "10"),
    ("hz", "x", "argument couldn't be parsed into an integer", "10"),
    # An empty buffer-limit list sets no class; words are split on single spaces.
    ("client-output-buffer-limit", "", "OK", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", " ", "Wrong number of arguments in buffer limit configuration.",
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal  0 0 0", "Wrong number of arguments in buffer limit configuration.",
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal 0 0 0 ", "Wrong number of arguments in buffer limit configuration.",
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    # Integers are read by string2ll: no '+', no leading zeros, no "-0".
    ("maxmemory-samples", "010", "argument couldn't be parsed into an integer", "5"),
    ("maxmemory-samples", "-0", "argument couldn't be parsed into an integer", "5"),
    ("maxmemory-samples", "+5", "argument couldn't be parsed into an integer", "5"),
    ("hz", "010", "argument couldn't be parsed into an integer", "10"),
    # The output-limit seconds are read by strtoll into a C int; an empty word is 0.
    ("client-output-buffer-limit", "normal 0 0 +5", "OK",
     "normal 0 0 5 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal 0 0 010", "OK",
     "normal 0 0 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal 0 0 ", "OK",
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal 0 0 100000000000000000", "OK",
     "normal 0 0 1569325056 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal 0 0 2147483648",
     "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-output-buffer-limit", "normal 0 0 9223372036854775807",
     "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    # save: strtoll too, the changes kept in a C int; words split on single spaces.
    ("save", "+5 +1", "OK", "5 1"), ("save", "05 -0", "OK", "5 0"),
    ("save", "99999999999999999999 1", "OK", "9223372036854775807 1"),
    ("save", "5 99999999999999999999", "OK", "5 -1"), ("save", "5 4294967296", "OK", "5 0"),
    ("save", " 5 1", "Invalid save parameters", ""), ("save", "5  1", "Invalid save parameters", ""),
    ("save", "5 1a", "Invalid save parameters", ""),
])
def test_numeric_parameters_parse_as_redis_does(server, name, value, reply, stored):
    with RawClient(server.port) as c:
        before = c.call("CONFIG", "GET", name)[1]
        try:
            expected = "OK" if reply == "OK" else E(
                f"ERR CONFIG SET failed (possibly related to argument '{name}') - {reply}")
            assert c.call("CONFIG", "SET", name, value) == expected
            assert c.call("CONFIG", "GET", name) == [name.encode(), stored.encode()]
        finally:
            c.call("CONFIG", "SET", name, before)


@pytest.mark.parametrize("value, shown, human", [
    ("2199023255552", "2199023255552", "2.00T"), ("2251799813685248", "2251799813685248", "2.00P"),
    ("1152921504606846975", "1152921504606846975", "1024.00P"),
    ("1152921504606846976", "1152921504606846976", "1152921504606846976B"),
    ("9223372036854775808", "-9223372036854775808", "9223372036854775808B"),
])
def test_info_shows_a_huge_maxmemory_as_redis_does(server, value, shown, human):
    with RawClient(server.port) as c:
        try:
            assert c.call("CONFIG", "SET", "maxmemory", value) == "OK"
            lines = c.call("INFO", "memory").decode().split("\r\n")
            assert f"maxmemory:{shown}" in lines
            assert f"maxmemory_human:{human}" in lines
        finally:
            c.call("CONFIG", "SET", "maxmemory", "0")


def test_a_value_error_names_the_parameter_in_lower_case(server):
    # Redis lower-cases the names before it sets anything; name errors keep the spelling.
    with RawClient(server.port) as c:
        prefix = "ERR CONFIG SET failed (possibly related to argument "
        assert c.call("CONFIG", "SET", "MAXMEMORY", "x") == E(prefix + "'maxmemory') - argument must be a memory value")
        assert c.call("CONFIG", "SET", "Hash-Max-Ziplist-Value", "x") == E(
            prefix + "'hash-max-ziplist-value') - argument must be a memory value")
        assert c.call("CONFIG", "SET", "MAXMEMORY", "1", "maxmemory", "2") == E(prefix + "'maxmemory') - duplicate parameter")
        assert c.call("CONFIG", "SET", "DAEMONIZE", "no") == E(prefix + "'DAEMONIZE') - can't set immutable config")
        assert c.call("CONFIG", "SET", "FOO", "1") == E("ERR Unknown option or number of arguments for CONFIG SET - 'FOO'")
        assert c.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]
