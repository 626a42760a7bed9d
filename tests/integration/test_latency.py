"""LATENCY LATEST/HISTORY/RESET/DOCTOR/GRAPH/HISTOGRAM/HELP, latency-monitor-threshold,
latency-tracking, latency-tracking-info-percentiles and INFO latencystats, on lapse and against
Debian's redis-server 7.0 (LAPSE_TARGET=redis) to show that every expected reply is Redis's.

A latency spike is made with DEBUG SLEEP 0.01 under a 1 ms threshold: it lasts at least 10 ms
however fast the machine is, so no assertion depends on speed.
"""
from __future__ import annotations

import re

import pytest

from conftest import single_server
from lapse_harness import RawClient, RespError as E, target_kind

server = single_server(threads=2)

HELP = [
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR", "    Return a human readable latency analysis report.",
    "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>", "    Return time-latency samples for the <event> class.",
    "LATEST", "    Return the latest latency samples for all events.",
    "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP", "    Prints this help.",
]

DISABLED = ("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "
            "\"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep "
            "space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
NO_SPIKES = ("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest "
             "bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")

# hdr_histogram's log iterator from 1024 ns by powers of 2, each level's highest equivalent value
# in microseconds: the labels LATENCY HISTOGRAM may use.
LABELS = {((1024 << k) + ((1024 << k) >> 7) - 1) // 1000 for k in range(21)}


@pytest.fixture
def c(server, r):
    with RawClient(server.port) as conn:
        conn.call("LATENCY", "RESET")
        conn.call("CONFIG", "RESETSTAT")
        yield conn
        conn.call("CONFIG", "SET", "latency-monitor-threshold", 0)
        conn.call("CONFIG", "SET", "latency-tracking", "yes")
        conn.call("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
        conn.call("LATENCY", "RESET")


def spike(c):
    assert c.call("CONFIG", "SET", "latency-monitor-threshold", 1) == "OK"
    assert c.call("DEBUG", "SLEEP", "0.01") == "OK"


def test_help(c):
    assert c.call("LATENCY", "HELP") == HELP


@pytest.mark.parametrize("args, error", [
    (("LATENCY",), "ERR wrong number of arguments for 'latency' command"),
    (("LATENCY", "FOO"), "ERR unknown subcommand 'FOO'. Try LATENCY HELP."),
    (("LATENCY", "LATEST", "x"), "ERR wrong number of arguments for 'latency|latest' command"),
    (("LATENCY", "HISTORY"), "ERR wrong number of arguments for 'latency|history' command"),
    (("LATENCY", "HISTORY", "a", "b"), "ERR wrong number of arguments for 'latency|history' command"),
    (("LATENCY", "GRAPH", "nosuch"), "ERR No samples available for event 'nosuch'"),
    (("LATENCY", "DOCTOR", "x"), "ERR wrong number of arguments for 'latency|doctor' command"),
    (("CONFIG", "SET", "latency-monitor-threshold", "-1"),
     "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 "
     "and 9223372036854775807 inclusive"),
    (("CONFIG", "SET", "latency-monitor-threshold", "x"),
     "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument couldn't be parsed "
     "into an integer"),
    (("CONFIG", "SET", "latency-tracking", "maybe"),
     "ERR CONFIG SET failed (possibly related to argument 'latency-tracking') - argument must be 'yes' or 'no'"),
    (("CONFIG", "SET", "latency-tracking-info-percentiles", "50 101"),
     "ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - "
     "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
    (("CONFIG", "SET", "latency-tracking-info-percentiles", "50 x"),
     "ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - "
     "Invalid latency-tracking-info-percentiles parameters"),
])
def test_bad_input_gets_redis_errors_and_changes_nothing(c, args, error):
    before = c.call("CONFIG", "GET", "latency-*")
    assert c.call(*args) == E(error)
    assert c.call("CONFIG", "GET", "latency-*") == before


def test_config_defaults_and_set(c):
    got = c.call("CONFIG", "GET", "latency-*")
    assert dict(zip(got[::2], got[1::2])) == {
        b"latency-monitor-threshold": b"0", b"latency-tracking": b"yes",
        b"latency-tracking-info-percentiles": b"50 99 99.9"}
    assert c.call("CONFIG", "SET", "latency-tracking-info-percentiles", "50.5 0 100 99.90") == "OK"
    assert c.call("CONFIG", "GET", "latency-tracking-info-percentiles") == [
        b"latency-tracking-info-percentiles", b"50.5 0 100 99.9"]
    assert c.call("CONFIG", "SET", "latency-tracking-info-percentiles", "") == "OK"
    assert c.call("CONFIG", "GET", "latency-tracking-info-percentiles") == [b"latency-tracking-info-percentiles", b""]


def test_doctor_when_disabled_and_when_quiet(c):
    assert c.call("LATENCY", "DOCTOR") == DISABLED.encode()
    assert c.call("CONFIG", "SET", "latency-monitor-threshold", 1000) == "OK"
    assert c.call("LATENCY", "DOCTOR") == NO_SPIKES.encode()
    assert c.call("LATENCY", "LATEST") == []
    assert c.call("LATENCY", "HISTORY", "command") == []


def test_a_slow_command_is_a_command_event(c):
    sec, _ = c.call("TIME")
    spike(c)
    latest = c.call("LATENCY", "LATEST")
    assert len(latest) == 1
    event, when, last, worst = latest[0]
    assert event == b"command"
    assert abs(when - int(sec)) <= 2 and last >= 10 and worst == last
    assert c.call("LATENCY", "HISTORY", "command") == [[when, last]]
    doctor = c.call("LATENCY", "DOCTOR").decode()
    assert doctor.startswith("Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
                             "about it, do you Dave?\n\n1. command: 1 latency spikes (average ")
    assert f"Worst all time event {worst}ms." in doctor


def test_spikes_in_one_second_share_a_sample_and_the_worst_is_kept(c):
    spike(c)
    # A longer one right after: in the same second it raises that second's sample, otherwise
    # it adds one; either way the worst is the longest.
    assert c.call("DEBUG", "SLEEP", "0.03") == "OK"
    history = c.call("LATENCY", "HISTORY", "command")
    assert 1 <= len(history) <= 2 and history[-1][1] >= 30
    assert [s[0] for s in history] == sorted({s[0] for s in history})
    assert c.call("LATENCY", "LATEST")[0][3] == max(s[1] for s in history)


def test_reset_counts_the_events_it_forgot(c):
    spike(c)
    assert c.call("LATENCY", "RESET", "nosuch", "other") == 0
    assert c.call("LATENCY", "RESET", "command", "command") == 1
    assert c.call("LATENCY", "LATEST") == []
    spike(c)
    assert c.call("LATENCY", "RESET") == 1
    assert c.call("LATENCY", "RESET") == 0


@pytest.mark.lapse_only
def test_graph_is_refused_with_a_pointer_to_history(c):
    spike(c)
    assert c.call("LATENCY", "GRAPH", "command") == E(
        "ERR LATENCY GRAPH is not supported by lapse; LATENCY HISTORY command gives the same samples")


def histogram(c, *names):
    reply = c.call("LATENCY", "HISTOGRAM", *names)
    return [(reply[i], dict(zip(reply[i + 1][::2], reply[i + 1][1::2]))) for i in range(0, len(reply), 2)]


def test_histogram_counts_every_call_in_cumulative_buckets(c):
    for _ in range(5):
        c.call("SET", "k", "v")
    c.call("GET", "k")
    assert c.call("LATENCY", "HISTOGRAM", "get", "nosuch") != []
    entries = histogram(c, "set", "nosuch", "SET")
    assert [name for name, _ in entries] == [b"set", b"set"]
    fields = entries[0][1]
    assert set(fields) == {b"calls", b"histogram_usec"} and fields[b"calls"] == 5
    buckets = fields[b"histogram_usec"]
    labels, counts = buckets[::2], buckets[1::2]
    assert set(labels) <= LABELS and labels == sorted(labels)
    assert counts == sorted(set(counts)) and counts[-1] == 5


def test_histogram_of_a_container_lists_its_subcommands_with_calls(c):
    c.call("CLIENT", "ID")
    c.call("CLIENT", "GETNAME")
    names = [name for name, _ in histogram(c, "client")]
    assert sorted(names) == [b"client|getname", b"client|id"]
    assert [name for name, _ in histogram(c, "client|id")] == [b"client|id"]
    everything = [name for name, _ in histogram(c)]
    assert {b"client|id", b"client|getname", b"config|resetstat"} <= set(everything)


def test_histogram_in_resp3_is_a_map(c):
    c.call("GET", "k")
    c.call("HELLO", 3)
    raw = c.call_raw("LATENCY", "HISTOGRAM", "get")
    assert re.fullmatch(rb"%1\r\n\$3\r\nget\r\n%2\r\n\$5\r\ncalls\r\n:1\r\n\$14\r\nhistogram_usec\r\n%1\r\n:\d+\r\n:1\r\n",
                        raw), raw
    c.call("HELLO", 2)


def latencystats(c):
    text = c.call("INFO", "latencystats").decode()
    lines = text.split("\r\n")
    assert lines[0] == "# Latencystats"
    return {ln.split(":")[0]: ln.split(":", 1)[1] for ln in lines[1:] if ln}


def test_info_latencystats(c):
    c.call("GET", "k")
    stats = latencystats(c)
    assert re.fullmatch(r"p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}", stats["latency_percentiles_usec_get"])
    assert "latency_percentiles_usec_config|resetstat" in stats
    assert c.call("CONFIG", "SET", "latency-tracking-info-percentiles", "0 50.5 100") == "OK"
    stats = latencystats(c)
    assert re.fullmatch(r"p0=\d+\.\d{3},p50\.5=\d+\.\d{3},p100=\d+\.\d{3}", stats["latency_percentiles_usec_get"])
    # Percentiles grow with p; p0 is a lowest equivalent value, the others highest ones.
    p0, p50, p100 = (float(kv.split("=")[1]) for kv in stats["latency_percentiles_usec_get"].split(","))
    assert p0 <= p50 <= p100
    assert c.call("CONFIG", "SET", "latency-tracking-info-percentiles", "") == "OK"
    assert latencystats(c)["latency_percentiles_usec_get"] == ""


def test_info_sections_name_latencystats_only_when_asked(c):
    assert b"# Latencystats" not in c.call("INFO")
    assert b"# Latencystats" in c.call("INFO", "everything")
    text = c.call("INFO", "everything").decode()
    assert text.index("# Errorstats") < text.index("# Latencystats") < text.index("# Cluster")


def test_tracking_off_stops_recording_and_resetstat_clears(c):
    c.call("GET", "k")
    assert c.call("CONFIG", "SET", "latency-tracking", "no") == "OK"
    assert latencystats(c) == {}
    c.call("GET", "k")
    assert c.call("CONFIG", "SET", "latency-tracking", "yes") == "OK"
    assert histogram(c, "get")[0][1][b"calls"] == 1
    assert c.call("CONFIG", "RESETSTAT") == "OK"
    assert histogram(c, "get") == []
