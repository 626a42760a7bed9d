"""Geo commands against Debian's redis-server 7.0.15: every scenario runs on both servers and the
replies must match byte for byte (RESP2, and RESP3 after HELLO 3).

A geo index is a sorted set, so the scenarios also read it with the sorted-set commands. Search
replies are compared in full, order included: members at equal distances (the TIES grid) come
out in the order Redis's own sorts leave them (glibc's merge sort for a whole result, Redis's
partial quicksort under COUNT), and unsorted replies in the order of Redis's cell walk. A
seeded random workload of searches (poles, antimeridian, ties, huge and tiny shapes, both set
layouts) is replayed on both servers. STORE destinations are several keys, so that some live
on another shard than the source.
"""
import random
import shutil

import pytest
import redis

from lapse_harness import RawClient, RespError as E, parse_reply
from scenarios import assert_same_replies

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")

ZSET_DEFAULTS = [("zset-max-listpack-entries", "128"), ("zset-max-listpack-value", "64")]
LONG = "x" * 70
DESTS = [f"dest{i}" for i in range(6)]  # with 16 shards a thread, some are on another shard

SICILY = ("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
CITIES = ("GEOADD", "cities", "2.3522", "48.8566", "Paris", "-0.1276", "51.5072", "London", "13.4050", "52.5200",
          "Berlin", "12.4964", "41.9028", "Rome", "-3.7038", "40.4168", "Madrid", "4.9041", "52.3676", "Amsterdam",
          "16.3738", "48.2082", "Vienna", "14.4378", "50.0755", "Prague", "21.0122", "52.2297", "Warsaw",
          "-9.1393", "38.7223", "Lisbon", "139.6917", "35.6895", "Tokyo", "-74.0060", "40.7128", "NewYork")
# Points on the poles' limits and both sides of the antimeridian.
EDGES = ("GEOADD", "edges", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "180", "-85.05112878", "se",
         "-180", "85.05112878", "nw", "0", "0", "origin", "179.9999", "0", "east", "-179.9999", "0", "west",
         "179.5", "10", "e10", "-179.5", "-10", "w10", "0", "84.9", "north", "90", "-84.9", "south")
# A grid with repeated positions: equal distances from any centre, so ties in every sort.
TIES = ("GEOADD", "ties", *[x for i in range(60) for x in (f"{(i % 7) * 0.1:.1f}", f"{(i % 5) * 0.1:.1f}", f"t{i}")])
# Members whose scores are no geohash.
FOREIGN = ("ZADD", "foreign", "-1", "neg", "inf", "pinf", "-inf", "ninf", "1.5", "frac", "4503599627370496", "big",
           "0", "zero")


def stores(cmd_prefix, *rest):
    """The same store into each destination, then each destination read back."""
    steps = []
    for d in DESTS:
        steps.append((*cmd_prefix(d), *rest))
        steps.append(("ZRANGE", d, "0", "-1", "WITHSCORES"))
    return steps


SCENARIOS = {
    "geoadd_basics": [
        SICILY, ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"), ("TYPE", "Sicily"), ("OBJECT", "ENCODING", "Sicily"),
        SICILY, ("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo"),
        ("GEOADD", "Sicily", "13", "38", "Palermo"), ("GEOADD", "Sicily", "CH", "13.1", "38", "Palermo"),
        ("GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "Agrigento"),
        ("GEOADD", "Sicily", "NX", "CH", "1", "1", "Palermo", "2.5", "2", "Agrigento"),
        ("GEOADD", "Sicily", "XX", "3", "3", "Agrigento", "4", "4", "Trapani"),
        ("GEOADD", "Sicily", "xx", "ch", "3.5", "3", "Agrigento", "4", "4", "Trapani"),
        ("GEOADD", "Sicily", "ch", "nx", "ch", "9", "9", "dup", "9", "9", "dup"),
        ("GEOADD", "Sicily", "CH", "5", "5", "twice", "6", "6", "twice"), ("ZSCORE", "Sicily", "twice"),
        ("GEOADD", "none", "XX", "1", "2", "m"), ("EXISTS", "none"), ("GEOADD", "none", "XX", "CH", "1", "2", "m"),
        ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"), ("ZCARD", "Sicily"), ("ZRANK", "Sicily", "Catania"),
        ("ZREM", "Sicily", "Agrigento"), ("GEOPOS", "Sicily", "Agrigento"),
        ("GEOADD", "longs", "1", "2", LONG), ("OBJECT", "ENCODING", "longs"),
        ("GEOADD", "longs2", "1", "2", "short", "3", "4", LONG), ("OBJECT", "ENCODING", "longs2"),
        ("GEOADD", "numbers", "1", "2", "123", "3", "4", "-5"), ("ZRANGE", "numbers", "0", "-1", "WITHSCORES"),
        ("GEOSEARCH", "numbers", "FROMMEMBER", "123", "BYRADIUS", "1000", "km", "WITHDIST"),
        ("ZADD", "Sicily", "1", "plain"), ("ZINCRBY", "Sicily", "1", "Catania"), ("GEOPOS", "Sicily", "Catania")],
    "geoadd_errors": [
        SICILY, ("GEOADD", "Sicily", "200", "100", "x"), ("GEOADD", "Sicily", "180.000001", "0", "x"),
        ("GEOADD", "Sicily", "0", "85.05112879", "x"), ("GEOADD", "Sicily", "0", "-85.05112879", "x"),
        ("GEOADD", "Sicily", "-inf", "0", "x"), ("GEOADD", "Sicily", "1", "nan", "x"),
        ("GEOADD", "Sicily", "abc", "2", "x"), ("GEOADD", "Sicily", "1", "", "x"), ("GEOADD", "Sicily", " 1", "2", "x"),
        ("GEOADD", "Sicily", "1e400", "2", "x"), ("GEOADD", "Sicily", "1", "2", "ok", "3", "100", "bad"),
        ("GEOADD", "Sicily", "1", "2", "ok", "3", "bad"), ("GEOADD", "Sicily", "1", "2"),
        ("GEOADD", "Sicily", "NX", "XX", "1", "2", "x"), ("GEOADD", "Sicily", "nx", "xx", "200", "2", "x"),
        ("GEOADD", "Sicily", "CH", "NX", "CH"), ("GEOADD", "Sicily", "GT", "1", "2", "x"),
        ("GEOADD", "Sicily", "INCR", "1", "2", "x"), ("GEOADD", "Sicily", "1", "2", "x", "4"), ("GEOADD", "Sicily"),
        ("GEOADD", "Sicily", "1", "2"), ("GEOADD",), ("SET", "str", "v"), ("GEOADD", "str", "1", "2", "x"),
        ("GEOADD", "str", "1", "200", "x"), ("GEOADD", "str", "NX", "XX", "1", "2", "x"),
        ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"), ("GET", "str"), ("DBSIZE",)],
    "geopos_geohash_geodist": [
        SICILY, CITIES, ("GEOPOS", "Sicily", "Palermo", "Catania", "nosuch"), ("GEOPOS", "Sicily", "nosuch"),
        ("GEOPOS", "nokey", "a", "b"), ("GEOPOS", "Sicily"), ("GEOPOS", "cities", "Tokyo", "NewYork", "Lisbon"),
        ("GEOHASH", "Sicily", "Palermo", "Catania", "nosuch"), ("GEOHASH", "nokey", "a"), ("GEOHASH", "Sicily"),
        ("GEOHASH", "cities", "Tokyo", "NewYork", "Lisbon", "London"),
        ("GEODIST", "Sicily", "Palermo", "Catania"), ("GEODIST", "Sicily", "Palermo", "Catania", "m"),
        ("GEODIST", "Sicily", "Palermo", "Catania", "km"), ("GEODIST", "Sicily", "Palermo", "Catania", "KM"),
        ("GEODIST", "Sicily", "Palermo", "Catania", "mi"), ("GEODIST", "Sicily", "Palermo", "Catania", "Ft"),
        ("GEODIST", "Sicily", "Palermo", "Palermo"), ("GEODIST", "Sicily", "Palermo", "nosuch"),
        ("GEODIST", "Sicily", "nosuch", "Palermo", "km"), ("GEODIST", "nokey", "a", "b"),
        ("GEODIST", "nokey", "a", "b", "parsec"), ("GEODIST", "Sicily", "Palermo", "Catania", "parsec"),
        ("GEODIST", "Sicily", "Palermo", "Catania", "km", "extra"), ("GEODIST", "Sicily", "Palermo"),
        ("GEODIST", "cities", "Tokyo", "NewYork", "km"), ("GEODIST", "cities", "Paris", "London", "mi"),
        ("SET", "str", "v"), ("GEOPOS", "str", "a"), ("GEOHASH", "str", "a"), ("GEODIST", "str", "a", "b"),
        ("GEODIST", "str", "a", "b", "parsec")],
    "foreign_scores": [
        FOREIGN, ("GEOPOS", "foreign", "neg", "pinf", "ninf", "frac", "big", "zero"),
        ("GEOHASH", "foreign", "neg", "pinf", "ninf", "frac", "big", "zero"),
        ("GEODIST", "foreign", "neg", "pinf"), ("GEODIST", "foreign", "frac", "zero", "km"),
        ("GEOSEARCH", "foreign", "FROMLONLAT", "-180", "-85", "BYRADIUS", "100", "km", "WITHHASH", "WITHCOORD"),
        ("GEOSEARCH", "foreign", "FROMMEMBER", "neg", "BYRADIUS", "10", "km", "WITHDIST")],
    "georadius": [
        SICILY, CITIES,
        ("GEORADIUS", "Sicily", "15", "37", "200", "km"), ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "withhash", "withcoord", "withdist", "DESC"),
        ("GEORADIUS", "Sicily", "15", "37", "100", "km"), ("GEORADIUS", "Sicily", "15", "37", "1", "m"),
        ("GEORADIUS", "Sicily", "15", "37", "200000", "m", "ASC"),
        ("GEORADIUS", "Sicily", "15", "37", "124.2739", "mi", "WITHDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "656168", "ft", "WITHDIST"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "WITHDIST"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "ASC", "WITHDIST"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "DESC", "WITHDIST"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "COUNT", "3"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "COUNT", "3", "DESC"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "COUNT", "3", "ANY"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "COUNT", "3", "ANY", "ASC"),
        ("GEORADIUS", "cities", "10", "50", "1000", "km", "COUNT", "100"),
        ("GEORADIUS", "cities", "10", "50", "20000", "km", "WITHDIST"),
        ("GEORADIUS", "cities", "10", "50", "0", "km"), ("GEORADIUS", "nokey", "10", "50", "10", "km"),
        ("GEORADIUS_RO", "cities", "10", "50", "1000", "km", "WITHDIST", "COUNT", "2"),
        ("GEORADIUSBYMEMBER", "cities", "Paris", "1000", "km", "WITHDIST"),
        ("GEORADIUSBYMEMBER", "cities", "Paris", "1000", "km", "WITHDIST", "COUNT", "2", "DESC"),
        ("GEORADIUSBYMEMBER", "cities", "Tokyo", "100", "km"),
        ("GEORADIUSBYMEMBER_RO", "cities", "Berlin", "700", "km", "WITHCOORD", "ASC"),
        ("GEORADIUSBYMEMBER", "cities", "nosuch", "100", "km"), ("GEORADIUSBYMEMBER", "nokey", "x", "100", "km"),
        ("GEORADIUSBYMEMBER", "nokey", "x", "abc", "parsec"),
        ("GEORADIUSBYMEMBER_RO", "nokey", "x", "abc", "parsec", "WITHDIST")],
    "georadius_errors": [
        SICILY, ("SET", "str", "v"),
        ("GEORADIUS", "Sicily", "abc", "37", "200", "km"), ("GEORADIUS", "Sicily", "15", "100", "200", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "abc", "km"), ("GEORADIUS", "Sicily", "15", "37", "-1", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "nan", "km"), ("GEORADIUS", "Sicily", "15", "37", "200", "parsec"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT"), ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "-3"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "x"), ("GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE"), ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d", "WITHDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD", "STOREDIST", "d"),
        ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "d"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "FROMLONLAT", "1", "2"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "BYBOX", "1", "2", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "bogus"),
        ("GEORADIUS", "str", "15", "37", "200", "km"), ("GEORADIUS", "str", "15", "370", "200", "km"),
        ("GEORADIUS", "str", "15", "37", "200", "km", "STORE", "d"), ("GEORADIUSBYMEMBER", "str", "m", "1", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "nosuch", "abc", "km"), ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "abc", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "parsec"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "km", "FROMMEMBER", "Catania"),
        ("GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "COUNT", "0"),
        ("GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "STORE", "d", "WITHHASH"),
        ("GEORADIUS", "Sicily", "15", "37", "200"), ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200"),
        ("EXISTS", "d"), ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES")],
    "geosearch": [
        SICILY, CITIES,
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHCOORD", "WITHDIST", "WITHHASH"),
        ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "DESC", "WITHDIST"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC", "WITHDIST"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "40", "400", "km", "WITHDIST"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "40", "km", "WITHDIST"),
        ("GEOSEARCH", "Sicily", "BYBOX", "400", "400", "km", "FROMLONLAT", "15", "37", "COUNT", "1"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Paris", "BYBOX", "2000", "1000", "km", "WITHDIST"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Paris", "BYBOX", "2000", "1000", "km", "ASC", "WITHCOORD"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Paris", "BYBOX", "1000", "2000", "mi", "DESC", "COUNT", "4"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Paris", "BYRADIUS", "1500", "km", "COUNT", "2", "ANY"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Paris", "BYRADIUS", "1500", "km", "COUNT", "2", "ANY", "DESC"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Paris", "BYRADIUS", "1500", "KM", "count", "50", "withdist"),
        ("GEOSEARCH", "cities", "FROMLONLAT", "0", "0", "BYBOX", "40000", "40000", "km"),
        ("GEOSEARCH", "cities", "FROMLONLAT", "0", "0", "BYBOX", "0", "0", "km"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Rome", "BYRADIUS", "0", "km", "WITHDIST"),
        ("GEOSEARCH", "cities", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km", "BYRADIUS", "20000", "km"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Rome", "FROMMEMBER", "Paris", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "cities", "FROMMEMBER", "Rome", "BYRADIUS", "1", "km", "COUNT", "1", "COUNT", "2"),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "nokey", "FROMLONLAT", "0", "0", "BYBOX", "1", "1", "km")],
    "geosearch_errors": [
        SICILY, ("SET", "str", "v"),
        ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "WITHDIST", "WITHCOORD"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "WITHDIST", "WITHCOORD"),
        ("GeoSearch", "Sicily", "FROMLONLAT", "1", "2", "WITHDIST", "WITHCOORD"),
        ("GEOSEARCH", "Sicily", "BYRADIUS", "1", "km", "WITHDIST", "WITHCOORD"),
        ("geosearch", "Sicily", "BYBOX", "1", "1", "km", "WITHDIST"),
        ("GEOSEARCH", "Sicily", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC"),
        ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"),
        ("GEOSEARCH", "Sicily", "BYBOX", "1", "1", "km", "BYRADIUS", "1", "km", "FROMMEMBER", "Palermo"),
        ("GEOSEARCH", "Sicily", "FROMMEMBER", "nosuch", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "200", "2", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "x", "2", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "x", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "-1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "kmx"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "x", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "x", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "-1", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "-1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "1", "parsec"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "1"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "0"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "9223372036854775808"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "d"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STOREDIST"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "bogus"),
        ("GEOSEARCH", "str", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "str", "FROMLONLAT", "1", "200", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "parsec"),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km", "ANY"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "k"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2"),
        ("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST"),
        ("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STORE", "x"),
        ("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "0"),
        ("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200"),
        ("GEOSEARCHSTORE", "d", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"),
        ("GEOSEARCHSTORE", "d", "Sicily", "BYRADIUS", "200", "km", "STOREDIST"),
        ("EXISTS", "d"), ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES")],
    "stores": [
        SICILY, CITIES, ("SET", "str", "v"),
        *stores(lambda d: ("GEORADIUS", "cities", "10", "50", "1000", "km", "STORE", d)),
        *stores(lambda d: ("GEORADIUS", "cities", "10", "50", "1000", "km", "STOREDIST", d, "COUNT", "3")),
        *stores(lambda d: ("GEORADIUSBYMEMBER", "cities", "Paris", "1000", "mi", "STOREDIST", d)),
        *stores(lambda d: ("GEOSEARCHSTORE", d, "cities", "FROMMEMBER", "Paris", "BYBOX", "3000", "3000", "km")),
        *stores(lambda d: ("GEOSEARCHSTORE", d, "cities", "FROMMEMBER", "Paris", "BYBOX", "3000", "3000", "km",
                           "STOREDIST", "DESC", "COUNT", "4")),
        ("TYPE", "dest0"), ("OBJECT", "ENCODING", "dest0"),
        # An empty result deletes the destination, whatever it held; so does a missing source.
        *stores(lambda d: ("GEORADIUS", "cities", "0", "0", "1", "km", "STORE", d)),
        ("SET", "dest1", "string"), ("GEOSEARCHSTORE", "dest1", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"),
        ("EXISTS", "dest1"), ("SET", "dest2", "string"),
        ("GEORADIUS", "nokey", "0", "0", "1", "km", "STORE", "dest2"), ("EXISTS", "dest2"),
        ("GEORADIUSBYMEMBER", "nokey", "x", "1", "km", "STORE", "dest3"),
        # A destination of another type is replaced; a source of another type is refused.
        ("GEOSEARCHSTORE", "str", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"), ("TYPE", "str"),
        ("ZRANGE", "str", "0", "-1", "WITHSCORES"), ("SET", "str2", "v"),
        ("GEOSEARCHSTORE", "dest4", "str2", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"), ("EXISTS", "dest4"),
        ("GEORADIUS", "str2", "15", "37", "200", "km", "STORE", "dest4"), ("EXISTS", "dest4"),
        # The source itself as the destination; the last STORE/STOREDIST wins.
        ("GEOSEARCHSTORE", "Sicily", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "100", "km"),
        ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"),
        ("GEORADIUS", "cities", "10", "50", "600", "km", "STORE", "dest0", "STOREDIST", "dest5"),
        ("ZRANGE", "dest0", "0", "-1", "WITHSCORES"), ("ZRANGE", "dest5", "0", "-1", "WITHSCORES"),
        ("GEORADIUS", "cities", "10", "50", "600", "km", "STOREDIST", "dest1", "STORE", "dest2"),
        ("EXISTS", "dest1"), ("ZRANGE", "dest2", "0", "-1", "WITHSCORES")],
    "store_layouts": [
        ("GEOADD", "many", *[x for i in range(200) for x in (f"{(i % 20) * 0.01:.2f}", f"{(i // 20) * 0.01:.2f}", f"p{i}")]),
        ("OBJECT", "ENCODING", "many"), ("GEOSEARCHSTORE", "dest0", "many", "FROMLONLAT", "0.1", "0.05", "BYRADIUS", "100", "km"),
        ("OBJECT", "ENCODING", "dest0"), ("ZCARD", "dest0"),
        ("GEOSEARCHSTORE", "dest1", "many", "FROMLONLAT", "0.1", "0.05", "BYRADIUS", "100", "km", "COUNT", "128"),
        ("OBJECT", "ENCODING", "dest1"), ("CONFIG", "SET", "zset-max-listpack-entries", "4"),
        ("GEOSEARCHSTORE", "dest2", "many", "FROMLONLAT", "0.1", "0.05", "BYRADIUS", "100", "km", "COUNT", "5", "STOREDIST"),
        ("OBJECT", "ENCODING", "dest2"), ("ZRANGE", "dest2", "0", "-1", "WITHSCORES"),
        ("GEOADD", "long", "1", "2", LONG, "1.001", "2", "y"),
        ("GEORADIUS", "long", "1", "2", "10", "km", "STORE", "dest3"), ("OBJECT", "ENCODING", "dest3"),
        ("GEOSEARCH", "many", "FROMLONLAT", "0.1", "0.05", "BYBOX", "5", "3", "km", "WITHDIST", "ASC", "COUNT", "30")],
    "poles_antimeridian": [
        EDGES, ("GEOPOS", "edges", "ne", "sw", "se", "nw", "origin", "east", "west", "north", "south"),
        ("GEOHASH", "edges", "ne", "sw", "se", "nw", "origin", "east", "west", "north", "south"),
        ("ZRANGE", "edges", "0", "-1", "WITHSCORES"), ("GEODIST", "edges", "east", "west"),
        ("GEODIST", "edges", "ne", "sw", "km"), ("GEODIST", "edges", "north", "south", "mi"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "180", "0", "BYRADIUS", "100", "km", "WITHDIST", "WITHCOORD", "ASC"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "-180", "0", "BYRADIUS", "100", "km", "WITHDIST", "ASC"),
        ("GEOSEARCH", "edges", "FROMMEMBER", "east", "BYRADIUS", "2000", "km", "WITHDIST", "ASC"),
        ("GEOSEARCH", "edges", "FROMMEMBER", "west", "BYBOX", "200", "3000", "km", "WITHDIST"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "179.99995", "0", "BYBOX", "100", "100", "km", "WITHDIST", "ASC"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "0", "85", "BYRADIUS", "5000", "km", "WITHDIST", "WITHHASH"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "0", "-85", "BYRADIUS", "20000", "km", "WITHDIST", "DESC"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "0", "85.05112878", "BYBOX", "40000", "100", "km", "WITHDIST"),
        ("GEOSEARCH", "edges", "FROMMEMBER", "ne", "BYRADIUS", "1", "m", "WITHCOORD"),
        ("GEOSEARCH", "edges", "FROMLONLAT", "0", "0", "BYRADIUS", "0", "m", "WITHDIST"),
        ("GEORADIUS", "edges", "0", "0", "40000", "km", "WITHDIST"),
        ("GEORADIUS", "edges", "0", "0", "40000", "km", "COUNT", "3", "WITHDIST"),
        ("GEORADIUS", "edges", "0", "0", "40000", "km", "COUNT", "3", "ANY", "WITHDIST"),
        ("GEORADIUS", "edges", "0", "0", "40000", "km", "COUNT", "3", "ANY", "DESC"),
        ("GEORADIUS", "edges", "90", "-80", "6000", "km", "WITHDIST", "WITHHASH")],
    "ties_and_counts": [
        TIES, ("GEOSEARCH", "ties", "FROMLONLAT", "0.3", "0.2", "BYRADIUS", "100", "km", "WITHDIST"),
        *[("GEOSEARCH", "ties", "FROMLONLAT", "0.3", "0.2", "BYRADIUS", "100", "km", order, "COUNT", str(n))
          for order in ("ASC", "DESC") for n in (1, 5, 12, 30, 59, 60, 61)],
        ("GEOSEARCH", "ties", "FROMLONLAT", "0.3", "0.2", "BYRADIUS", "100", "km", "ASC"),
        ("GEOSEARCH", "ties", "FROMLONLAT", "0.3", "0.2", "BYRADIUS", "100", "km", "DESC"),
        ("GEOSEARCH", "ties", "FROMMEMBER", "t3", "BYBOX", "30", "20", "km", "COUNT", "17", "WITHDIST"),
        ("GEOSEARCH", "ties", "FROMMEMBER", "t3", "BYBOX", "30", "20", "km", "COUNT", "17", "ANY", "WITHDIST"),
        ("GEORADIUS", "ties", "0", "0", "50", "km", "COUNT", "25", "STORE", "dest0"),
        ("ZRANGE", "dest0", "0", "-1", "WITHSCORES")],
    "resp3": [
        SICILY, ("HELLO", "3"), ("GEOPOS", "Sicily", "Palermo", "nosuch"), ("GEOPOS", "nokey", "a"),
        ("GEODIST", "Sicily", "Palermo", "Catania"), ("GEODIST", "Sicily", "Palermo", "nosuch"),
        ("GEODIST", "nokey", "a", "b"), ("GEOHASH", "Sicily", "Palermo", "nosuch"),
        ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dest0"),
        ("GEOSEARCH", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"),
        ("ZSCORE", "Sicily", "Palermo"), ("GEOADD", "Sicily", "1", "2", "x")],
    "transactions_and_scripts": [
        SICILY, ("MULTI",), ("GEOADD", "Sicily", "13.583333", "37.316667", "Agrigento"),
        *[("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", d) for d in DESTS],
        ("GEOSEARCHSTORE", "dest5", "Sicily", "FROMMEMBER", "Agrigento", "BYRADIUS", "100", "km", "STOREDIST"),
        ("GEOPOS", "Sicily", "Agrigento"), ("EXEC",), ("ZRANGE", "dest0", "0", "-1", "WITHSCORES"),
        ("ZRANGE", "dest5", "0", "-1", "WITHSCORES"),
        ("MULTI",), ("GEOADD", "Sicily", "200", "0", "bad"), ("GEOPOS", "Sicily", "Palermo"), ("EXEC",),
        ("EVAL", "return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km', 'STORE', KEYS[2])", "2", "Sicily", "dest1"),
        ("EVAL", "return redis.call('GEOPOS', KEYS[1], 'Palermo')", "1", "Sicily"),
        ("EVAL", "return redis.call('GEODIST', KEYS[1], 'Palermo', 'Catania')", "1", "Sicily"),
        ("EVAL", "return redis.pcall('GEOADD', KEYS[1], 200, 0, 'x')", "1", "Sicily"),
        ("EVAL", "return redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'WITHDIST')",
         "1", "Sicily")],
    "command_getkeys": [
        ("COMMAND", "GETKEYS", "GEORADIUS", "g", "1", "2", "3", "km"),
        ("COMMAND", "GETKEYS", "GEORADIUS", "g", "1", "2", "3", "km", "STORE", "d1", "STOREDIST", "d2"),
        ("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "g", "m", "3", "km", "storedist", "d"),
        ("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"),
        ("COMMAND", "GETKEYS", "GEOADD", "g", "1", "2", "m"), ("COMMAND", "GETKEYS", "GEOPOS", "g", "m"),
        ("COMMAND", "GETKEYS", "GEORADIUS_RO", "g", "1", "2", "3", "km")],
}


@needs_redis
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_replies_as_redis(name, server, redis_server):
    assert_same_replies(SCENARIOS[name], server, redis_server, ZSET_DEFAULTS)


# ---- COMMAND INFO: everything but the key specs, which lapse does not list ----

GEO_COMMANDS = ["geoadd", "geopos", "geodist", "geohash", "georadius", "georadius_ro", "georadiusbymember",
                "georadiusbymember_ro", "geosearch", "geosearchstore"]


@needs_redis
def test_command_info_matches_redis(server, redis_server):
    infos = []
    for srv in (redis_server, server):
        with RawClient(srv.port) as c:
            infos.append(c.call("COMMAND", "INFO", *GEO_COMMANDS))
    for want, got in zip(*infos):
        assert got[:8] == want[:8], (want[0], want[:8], got[:8])


# ---- A seeded random workload of searches ----


def random_point(rng, region):
    if region == "pole":
        return rng.uniform(-180, 180), rng.choice([1, -1]) * rng.uniform(80, 85.05112878)
    if region == "antimeridian":
        return rng.choice([rng.uniform(170, 180), rng.uniform(-180, -170)]), rng.uniform(-60, 60)
    if region == "city":
        return 13 + rng.uniform(-1, 1), 38 + rng.uniform(-1, 1)
    if region == "grid":
        return round(rng.uniform(-2, 2), 1), round(rng.uniform(-2, 2), 1)
    return rng.uniform(-180, 180), rng.uniform(-85.05112878, 85.05112878)


UNITS = {"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048, "KM": 1000}


def search_workload(seed, queries=60):
    """One geo set (either layout, with repeated positions on a grid) and searches of every
    shape, unit, option and size around it, some storing their result."""
    rng = random.Random(seed)
    region = rng.choice(["pole", "antimeridian", "city", "world", "grid"])
    size = rng.choice([5, 30, 100, 200, 600])
    args = []
    for i in range(size):
        lon, lat = random_point(rng, region)
        args += [repr(lon), repr(lat), f"m{i}"]
        if region == "grid" and rng.random() < 0.3:
            args += [repr(lon), repr(lat), f"d{i}"]
    cmds = [("GEOADD", "k", *args), ("OBJECT", "ENCODING", "k")]
    for _ in range(queries):
        lon, lat = random_point(rng, region if rng.random() < 0.8 else "world")
        unit = rng.choice(list(UNITS))
        meters = rng.choice([100, 5e3, 5e4, 3e5, 2e6, 8e6, 2e7])
        radius = f"{meters / UNITS[unit]:.3f}"
        opts = [o for o, p in (("WITHDIST", 0.5), ("WITHCOORD", 0.3), ("WITHHASH", 0.3)) if rng.random() < p]
        opts += rng.choice([[], ["ASC"], ["DESC"]])
        if rng.random() < 0.5:
            opts += ["COUNT", str(rng.choice([1, 2, 3, 5, 10, 50]))] + (["ANY"] if rng.random() < 0.3 else [])
        if rng.random() < 0.5:
            shape = ["BYRADIUS", radius, unit]
        else:
            shape = ["BYBOX", radius, f"{meters / UNITS[unit] * rng.uniform(0.2, 2):.3f}", unit]
        origin = (["FROMLONLAT", repr(lon), repr(lat)] if rng.random() < 0.7
                  else ["FROMMEMBER", f"m{rng.randrange(size)}"])
        cmds.append(("GEOSEARCH", "k", *origin, *shape, *opts))
        if rng.random() < 0.2:
            cmds.append(("GEORADIUS", "k", repr(lon), repr(lat), radius, unit, *opts))
        if rng.random() < 0.2:
            plain = [o for o in opts if not o.startswith("WITH")]
            dest = rng.choice(DESTS)
            cmds.append(("GEOSEARCHSTORE", dest, "k", *origin, *shape, *plain,
                         *(["STOREDIST"] if rng.random() < 0.5 else [])))
            cmds.append(("ZRANGE", dest, "0", "-1", "WITHSCORES"))
            cmds.append(("OBJECT", "ENCODING", dest))
        if rng.random() < 0.1:
            cmds.append(("GEODIST", "k", f"m{rng.randrange(size)}", f"m{rng.randrange(size)}", unit))
            cmds.append(("GEOHASH", "k", f"m{rng.randrange(size)}", "nosuch"))
            cmds.append(("GEOPOS", "k", f"m{rng.randrange(size)}", "nosuch"))
    return cmds


@needs_redis
@pytest.mark.parametrize("block", range(4))
def test_random_searches_match_redis(block, server, redis_server):
    with RawClient(server.port) as lapse, RawClient(redis_server.port) as red:
        for seed in range(block * 10, block * 10 + 10):
            cmds = search_workload(seed)
            outs = []
            for c in (red, lapse):
                c.call("FLUSHALL")
                outs.append(c.pipeline_raw(cmds))
            for i, (cmd, w, g) in enumerate(zip(cmds, *outs)):
                assert w == g, f"seed {seed}, command {i}: {cmd[:12]}\n  redis: {w[:400]!r}\n  lapse: {g[:400]!r}"


# ---- Keyspace behaviour ----


def test_bad_input_changes_nothing(raw):
    raw.call(*SICILY)
    raw.call("SET", "str", "v")
    raw.call("ZADD", "dest", "1", "keep")
    bad = [("GEOADD", "Sicily", "1", "2", "ok", "200", "0", "bad"), ("GEOADD", "Sicily", "NX", "XX", "1", "2", "x"),
           ("GEOADD", "str", "1", "2", "x"), ("GEOADD", "new", "1", "2", "x", "1", "abc", "y"),
           ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dest", "WITHDIST"),
           ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dest", "COUNT", "0"),
           ("GEORADIUS", "str", "15", "37", "200", "km", "STORE", "dest"),
           ("GEOSEARCHSTORE", "dest", "Sicily", "FROMMEMBER", "nosuch", "BYRADIUS", "1", "km"),
           ("GEOSEARCHSTORE", "dest", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "parsec"),
           ("GEOSEARCHSTORE", "dest", "str", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"),
           ("GEOSEARCHSTORE", "dest", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY")]
    for cmd in bad:
        assert isinstance(raw.call(*cmd), E), cmd
    assert raw.call("ZRANGE", "Sicily", "0", "-1", "WITHSCORES") == [b"Palermo", b"3479099956230698", b"Catania",
                                                                     b"3479447370796909"]
    assert raw.call("ZRANGE", "dest", "0", "-1") == [b"keep"]
    assert raw.call("GET", "str") == b"v"
    assert raw.call("DBSIZE") == 3


def test_watch_sees_geo_writes(r):
    changes = [lambda o: o.geoadd("g", [1, 2, "new"]), lambda o: o.geoadd("g", [1, 3, "a"]),
               lambda o: o.georadius("src", 1, 1, 100, "km", store="g"),
               # (redis-py drops a FROMLONLAT of 0, 0: the source is at 1, 1)
               lambda o: o.geosearchstore("g", "src", longitude=1, latitude=1, radius=100, unit="km"),
               lambda o: o.georadius("src", 50, 50, 1, "km", store="g")]  # empty: deletes g
    for change in changes:
        r.delete("g")
        r.geoadd("g", [1, 2, "a"])
        r.geoadd("src", [1, 1, "s"])
        pipe = r.pipeline()
        pipe.watch("g")
        other = redis.Redis(port=r.connection_pool.connection_kwargs["port"], decode_responses=True)
        change(other)
        other.close()
        pipe.multi()
        pipe.get("k")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_noop_geoadd_leaves_watchers_alone(r):
    r.geoadd("g", [1, 2, "a"])
    for noop in (lambda o: o.geoadd("g", [1, 2, "a"]), lambda o: o.geoadd("g", [5, 5, "a"], nx=True),
                 lambda o: o.geoadd("g", [5, 5, "b"], xx=True), lambda o: o.geopos("g", "a")):
        pipe = r.pipeline()
        pipe.watch("g")
        other = redis.Redis(port=r.connection_pool.connection_kwargs["port"], decode_responses=True)
        noop(other)
        other.close()
        pipe.multi()
        pipe.zcard("g")
        assert pipe.execute() == [1]


@pytest.mark.lapse_only
def test_stores_in_a_transaction_stay_in_its_footprint(server, raw):
    """EXEC holds the shards its commands name: GEORADIUS's KeyFinder must name the STORE
    destination, or the step would have to lock a shard out of order (and log it)."""
    raw.call(*SICILY)
    raw.call("MULTI")
    for i in range(20):
        raw.call("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "STORE", f"far{i}")
    assert raw.call("EXEC") == [1] * 20
    assert all(raw.call("ZRANGE", f"far{i}", "0", "-1") == [b"Catania"] for i in range(20))
    assert "outside its footprint" not in server.log_text()


def test_redis_py_geo_calls(r):
    """A store locator as an application writes it with redis-py."""
    assert r.geoadd("shops", [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"]) == 2
    assert r.geoadd("shops", [13.361389, 38.115556, "Palermo"], nx=True) == 0
    assert r.geoadd("shops", [13.4, 38.1, "Palermo"], xx=True, ch=True) == 1
    assert r.geoadd("shops", [13.361389, 38.115556, "Palermo"], xx=True) == 0  # moved back
    assert r.geodist("shops", "Palermo", "Catania", unit="km") == 166.2742
    (lon, lat), missing = r.geopos("shops", "Catania", "nosuch")
    assert (lon, lat) == pytest.approx((15.087269, 37.502669), abs=1e-5) and missing is None
    assert r.geohash("shops", "Catania") == ["sqdtr74hyu0"]
    assert r.georadius("shops", 15, 37, 200, unit="km", withdist=True, sort="ASC") == [
        ["Catania", 56.4413], ["Palermo", 190.4424]]
    near = r.geosearch("shops", longitude=15, latitude=37, radius=100, unit="km", withcoord=True, withhash=True)
    assert near[0][0] == "Catania" and near[0][1] == 3479447370796909
    assert r.geosearch("shops", member="Palermo", width=400, height=400, unit="km", sort="DESC", count=1) == ["Catania"]
    assert r.geosearchstore("near", "shops", longitude=15, latitude=37, radius=200, unit="km", storedist=True) == 2
    assert r.zrange("near", 0, -1, withscores=True) == [("Catania", pytest.approx(56.4413, abs=1e-4)),
                                                        ("Palermo", pytest.approx(190.4424, abs=1e-4))]
    assert r.georadiusbymember("shops", "Palermo", 300, unit="km", store="copy") == 2
    assert r.type("copy") == "zset" and r.zscore("copy", "Catania") == 3479447370796909
