"""Replication, lapse as the master: Debian's redis-server 7.0 as a replica (`--replicaof`),
`redis-cli --rdb` and `redis-cli --replica`, and a raw replica that speaks the protocol
byte by byte (PSYNC, +FULLRESYNC, the payload, the stream, +CONTINUE).

The replicas are always redis-server; the master is the target, so every test also passes
with Redis as the master (LAPSE_TARGET=redis) unless marked lapse_only. Redis masters are
started with repl-diskless-sync-delay 0 (lapse never waits for more replicas).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from lapse_harness import RawClient, ServerProcess, encode_command, parse_reply, target_kind, wait_until
from lapse_harness import RespError as E


def master_options(**extra):
    options = {"threads": 2, **extra}
    if target_kind() == "redis":
        options["repl-diskless-sync-delay"] = 0
    return options


def start_replica(start_server, master):
    replica = start_server(kind="redis", options={"loglevel": "notice"})
    assert py(replica).execute_command("REPLICAOF", "127.0.0.1", master.port) == "OK"
    return replica


def py(srv, db=0):
    return redis.Redis(port=srv.port, db=db, decode_responses=True)


def link_up(replica):
    info = py(replica).info("replication")
    return info.get("master_link_status") == "up" and info.get("master_sync_in_progress") == 0


def wait_synced(master, replica, timeout=30.0):
    """Until the replica is attached and has processed everything written so far."""
    wait_until(lambda: link_up(replica), timeout, "the replica's link to be up")
    m = py(master)
    wait_until(lambda: m.execute_command("WAIT", 1, 100) == 1, timeout, "the replica to acknowledge the stream")


def contents(srv, databases=(0, 1, 3)):
    """Every key of `databases` with its type, value and whether it has a TTL."""
    out = {}
    for db in databases:
        c = redis.Redis(port=srv.port, db=db)  # values as bytes: a HyperLogLog is no text
        for key in c.keys("*"):
            kind = c.type(key).decode()
            if kind == "string":
                value = c.get(key)
            elif kind == "hash":
                value = c.hgetall(key)
            elif kind == "list":
                value = c.lrange(key, 0, -1)
            elif kind == "set":
                value = sorted(c.smembers(key))
            elif kind == "zset":
                value = c.zrange(key, 0, -1, withscores=True)
            elif kind == "stream":
                value = [c.xrange(key), c.xinfo_stream(key)["last-generated-id"]]
            else:
                value = None
            if kind == "none":  # expired between KEYS and TYPE
                continue
            out[(db, key)] = (kind, value, c.pttl(key) > 0)
    return out


def load_dataset(m: redis.Redis):
    m.set("str", "hello")
    m.set("int", 42)
    m.set("ttl", "soon", ex=1000)
    m.rpush("list", *[f"e{i}" for i in range(300)])
    m.hset("hash", mapping={f"f{i}": f"v{i}" for i in range(20)})
    m.sadd("intset", *range(50))
    m.sadd("set", *[f"m{i}" for i in range(600)])
    m.zadd("zset", {f"z{i}": i * 1.5 for i in range(200)})
    m.xadd("stream", {"a": "1"}, id="1-1")
    m.xadd("stream", {"b": "2"}, id="2-1")
    m.pfadd("hll", "a", "b", "c")
    m.setbit("bits", 100, 1)
    c1 = redis.Redis(port=m.connection_pool.connection_kwargs["port"], db=1, decode_responses=True)
    c1.set("in-db1", "x")
    c1.hset("h1", "f", "v")


def test_replica_gets_the_data_set_then_the_stream(start_server):
    master = start_server(options=master_options())
    m = py(master)
    load_dataset(m)
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    assert contents(replica) == contents(master)

    # The stream: plain writes, a transaction, a script, non-deterministic commands (their
    # effects), relative TTLs (absolute in the stream), other databases, a served blocking pop.
    m.set("after", "1")
    m.incrbyfloat("float", 1.25)
    m.expire("str", 5000)
    m.spop("set", 3)
    m.srandmember("set")
    with m.pipeline(transaction=True) as p:
        p.lpush("list", "head").rpop("list").hincrby("hash", "n", 5)
        p.execute()
    m.eval("redis.call('set', KEYS[1], 'from-lua'); redis.call('incr', 'lua-counter'); return 1", 1, "lua")
    c3 = py(master, 3)
    c3.set("db3", "v")
    c3.lpush("q", "job")
    blocker = py(master)
    popped = []
    t = threading.Thread(target=lambda: popped.append(blocker.blpop("waiting-list", timeout=10)))
    t.start()
    wait_until(lambda: m.info("clients")["blocked_clients"] == 1, 10, "BLPOP to block")
    m.rpush("waiting-list", "one", "two")
    t.join()
    assert popped == [("waiting-list", "one")]
    m.delete("hll")
    m.getdel("int")
    py(master, 1).flushdb()
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert contents(replica) == contents(master)
    assert py(replica).get("lua") == "from-lua"
    assert py(replica, 3).lrange("q", 0, -1) == ["job"]
    assert py(replica).lrange("waiting-list", 0, -1) == ["two"]
    # The deadline is absolute in the stream: the replica's TTL counts from the master's write.
    assert 4990 <= py(replica).ttl("str") <= 5000


def test_writes_during_the_sync_are_neither_lost_nor_doubled(start_server):
    """The payload is one instant; what is written after it reaches the replica through the
    stream: a counter incremented all along ends equal on both sides."""
    master = start_server(options=master_options())
    m = py(master)
    with m.pipeline(transaction=False) as p:
        for i in range(60000):
            p.set(f"key:{i}", "x" * 50)
        p.execute()
    stop = threading.Event()
    done = []

    def writer():
        w = py(master)
        n = 0
        while not stop.is_set():
            w.incr("counter")
            w.rpush("log", n)
            n += 1
        done.append(n)

    t = threading.Thread(target=writer)
    t.start()
    try:
        replica = start_replica(start_server, master)
        wait_until(lambda: link_up(replica), 60, "the replica's link to be up")
        time.sleep(0.3)
    finally:
        stop.set()
        t.join()
    assert m.execute_command("WAIT", 1, 10000) == 1
    r = py(replica)
    assert int(r.get("counter")) == int(m.get("counter")) == done[0]
    assert r.lrange("log", 0, -1) == [str(i) for i in range(done[0])]
    assert r.dbsize() == m.dbsize() == 60002


def test_the_payload_does_not_count_towards_the_replica_output_limit(start_server):
    """client-output-buffer-limit replica limits the stream, not the payload (4 MB here
    against a 1 MB hard limit): the replica syncs once and stays."""
    master = start_server(options=master_options())
    m = py(master)
    assert m.config_set("client-output-buffer-limit", "replica 1mb 0 0")
    with m.pipeline(transaction=False) as p:
        for i in range(4000):
            p.set(f"big:{i}", "x" * 1000)
        p.execute()
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    for i in range(100):
        m.set(f"after:{i}", i)
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert py(replica).dbsize() == 4100
    assert m.info("stats")["sync_full"] == 1


def test_expired_and_deleted_keys_are_deleted_on_the_replica(start_server):
    master = start_server(options=master_options())
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    m, r = py(master), py(replica)
    m.set("brief", "v", px=1500)
    m.set("stays", "v")
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert r.dbsize() == 2 and r.pttl("brief") > 0
    # A Redis replica never expires keys itself (reads just hide them): only the master's DEL
    # takes them out of its DBSIZE.
    wait_until(lambda: r.dbsize() == 1, 10, "the expired key's DEL to reach the replica")
    assert r.keys("*") == ["stays"]


def test_a_key_found_expired_inside_a_transaction_is_deleted_before_the_command(start_server):
    """RENAMENX onto a key that expired but was never reclaimed: the master deletes it when
    the command finds it, inside the transaction, so the replica gets DEL before RENAMENX."""
    master = start_server(options=master_options())
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    m, r = py(master), py(replica)
    assert m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0) == "OK"
    m.set("b", "old", px=100)
    m.set("a", "1")
    time.sleep(0.3)
    with m.pipeline(transaction=True) as p:
        p.renamenx("a", "b")
        assert p.execute() == [True]
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert r.get("b") == "1" and r.exists("a") == 0
    assert m.get("b") == "1" and m.exists("a") == 0


def test_info_role_and_client_list_show_the_replica(start_server):
    master = start_server(options=master_options())
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    m = py(master)
    m.set("k", "v")
    assert m.execute_command("WAIT", 1, 5000) == 1
    info = m.info("replication")
    assert info["role"] == "master"
    assert info["connected_slaves"] == 1
    slave = info["slave0"]
    assert slave["ip"] == "127.0.0.1" and slave["port"] == replica.port and slave["state"] == "online"
    assert info["repl_backlog_active"] == 1 and info["repl_backlog_first_byte_offset"] == 1
    offset = info["master_repl_offset"]
    assert offset == info["repl_backlog_histlen"] > 0
    wait_until(lambda: m.info("replication")["slave0"]["offset"] == m.info("replication")["master_repl_offset"], 10,
               "the replica's acknowledgement")
    role = m.execute_command("ROLE")
    assert role[0] == "master" and role[1] >= offset
    assert role[2] == [["127.0.0.1", str(replica.port), str(m.info("replication")["slave0"]["offset"])]]
    lines = m.execute_command("CLIENT", "LIST", "TYPE", "replica").splitlines()
    assert len(lines) == 1 and " flags=S " in lines[0]
    assert m.execute_command("CLIENT", "LIST", "TYPE", "slave").splitlines() == lines
    assert " flags=S " not in m.execute_command("CLIENT", "LIST", "TYPE", "normal")
    everyone = m.execute_command("CLIENT", "LIST").splitlines()
    assert m.info("clients")["connected_clients"] == len(everyone) - 1  # the replica is not counted
    assert m.info("stats")["sync_full"] == 1
    assert replica.log_text().count("MASTER <-> REPLICA sync: Finished with success") == 1


def test_wait_counts_replicas_that_acknowledged(start_server):
    master = start_server(options=master_options())
    m = py(master)
    assert m.execute_command("WAIT", 0, 0) == 0
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    m.set("k", "v")
    assert m.execute_command("WAIT", 1, 0) == 1
    start = time.monotonic()
    assert m.execute_command("WAIT", 2, 300) == 1
    assert time.monotonic() - start >= 0.29
    start = time.monotonic()
    with m.pipeline(transaction=True) as p:
        p.set("k2", "v").execute_command("WAIT", 5, 0)
        # Inside MULTI it never blocks (whether the replica already has the transaction's own
        # write depends on when Redis propagates it and the replica acknowledges).
        assert p.execute()[1] in (0, 1)
    assert time.monotonic() - start < 5
    assert m.execute_command("WAIT", 1, 0) == 1
    assert m.execute_command("WAIT", -1, 0) == 1  # enough at once


def test_killed_replica_continues_from_the_backlog(start_server):
    master = start_server(options=master_options())
    m = py(master)
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    m.set("while-away", "1")
    wait_until(lambda: link_up(replica) and py(replica).get("while-away") == "1", 30, "the replica to come back")
    stats = m.info("stats")
    assert stats["sync_full"] == 1 and stats["sync_partial_ok"] == 1
    assert "Successful partial resynchronization with master" in replica.log_text()


def test_redis_cli_rdb_takes_a_backup_redis_can_load(start_server, tmp_path):
    master = start_server(options=master_options())
    load_dataset(py(master))
    path = str(tmp_path / "backup.rdb")
    out = subprocess.run(["redis-cli", "-p", str(master.port), "--rdb", path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    check = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "RDB looks OK!" in check.stdout, check.stdout
    loaded = start_server(kind="redis", options={"dir": str(tmp_path), "dbfilename": "backup.rdb"})
    assert contents(loaded) == contents(master)


def test_redis_cli_functions_rdb_has_the_libraries_only(start_server, tmp_path):
    master = start_server(options=master_options())
    m = py(master)
    m.set("k", "v")
    m.function_load("#!lua name=mylib\nredis.register_function('f', function() return 1 end)")
    path = str(tmp_path / "functions.rdb")
    out = subprocess.run(["redis-cli", "-p", str(master.port), "--functions-rdb", path], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = start_server(kind="redis", options={"dir": str(tmp_path), "dbfilename": "functions.rdb"})
    lr = py(loaded)
    assert lr.dbsize() == 0
    libraries = lr.function_list()
    assert len(libraries) == 1 and libraries[0][:2] == ["library_name", "mylib"]


# ---------------------------------------------------------------------------------------
# The protocol, byte by byte


class RawReplica(RawClient):
    def read_line(self) -> bytes:
        while b"\n" not in self.buf:
            assert self._fill(), "connection closed"
        line, self.buf = self.buf.split(b"\n", 1)
        return line + b"\n"

    def read_bytes(self, n: int) -> bytes:
        while len(self.buf) < n:
            assert self._fill(), "connection closed"
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_until(self, marker: bytes, timeout: float = 15.0) -> bytes:
        deadline = time.monotonic() + timeout
        while marker not in self.buf:
            assert time.monotonic() < deadline, f"no {marker!r} in {self.buf!r}"
            assert self._fill(), "connection closed"
        end = self.buf.index(marker) + len(marker)
        out, self.buf = self.buf[:end], self.buf[end:]
        return out

    def handshake_line(self) -> bytes:
        """The next line that is not a keep-alive newline."""
        while True:
            line = self.read_line()
            if line != b"\n":
                return line

    def full_sync(self):
        """PSYNC ? -1: the replication id, the offset and the payload."""
        self.send("PSYNC", "?", "-1")
        line = self.handshake_line()
        m = re.fullmatch(rb"\+FULLRESYNC ([0-9a-f]{40}) (\d+)\r\n", line)
        assert m, line
        header = self.handshake_line()
        assert header.startswith(b"$"), header
        payload = self.read_bytes(int(header[1:-2]))
        return m.group(1).decode(), int(m.group(2)), payload


def test_psync_full_then_stream_then_continue(start_server):
    master = start_server(options=master_options())
    m = py(master)
    m.set("before", "1")
    with RawReplica(master.port) as rep:
        assert rep.call("REPLCONF", "listening-port", "0") == "OK"
        # No capa eof: Redis would stream its payload with an EOF mark instead of a length.
        assert rep.call("REPLCONF", "capa", "psync2") == "OK"
        replid, offset, payload = rep.full_sync()
        assert payload.startswith(b"REDIS0010") and b"before" in payload
        m.set("x", "1")
        stream = rep.read_until(encode_command("SET", "x", "1"))
        # The first write after the payload selects its database.
        assert encode_command("SELECT", "0") + encode_command("SET", "x", "1") in stream
        consumed = offset + len(stream)
    # Gone; what is written meanwhile waits in the backlog.
    wait_until(lambda: m.info("replication")["connected_slaves"] == 0, 10, "the replica to be gone")
    m.set("y", "2")
    with RawReplica(master.port) as rep:
        assert rep.call("REPLCONF", "capa", "psync2") == "OK"
        rep.send("PSYNC", replid, str(consumed + 1))
        assert rep.handshake_line() == f"+CONTINUE {replid}\r\n".encode()
        rep.read_until(encode_command("SET", "y", "2"))
    assert m.info("stats")["sync_partial_ok"] == 1
    # An unknown history is a full resynchronisation, counted as a failed partial one.
    with RawReplica(master.port) as rep:
        rep.send("PSYNC", "f" * 40, "5")
        assert rep.handshake_line().startswith(b"+FULLRESYNC ")
    assert m.info("stats")["sync_partial_err"] == 1


def test_sync_sends_the_payload_without_fullresync(start_server):
    master = start_server(options=master_options())
    py(master).set("k", "v")
    with RawReplica(master.port) as rep:
        rep.send("SYNC")
        header = rep.handshake_line()
        assert header.startswith(b"$"), header
        assert rep.read_bytes(int(header[1:-2])).startswith(b"REDIS0010")


def test_a_replica_that_gets_a_reply_is_disconnected(start_server):
    master = start_server(options=master_options())
    with RawReplica(master.port) as rep:
        rep.full_sync()
        rep.send("REPLCONF", "ACK", "0")  # no reply, stays
        rep.send("PING")
        assert rep.at_eof(10.0)
    wait_until(lambda: "Replica generated a reply to command 'ping'" in master.log_text(), 5, "the log line")


def test_replconf_and_psync_errors(start_server):
    master = start_server(options=master_options())
    cases = [
        (("REPLCONF",), "OK"),
        (("REPLCONF", "a"), E("ERR syntax error")),
        (("REPLCONF", "listening-port", "x"), E("ERR value is not an integer or out of range")),
        (("REPLCONF", "listening-port", "99999999999999999999"), E("ERR value is not an integer or out of range")),
        (("REPLCONF", "listening-port", "-5"), "OK"),
        (("REPLCONF", "bogus", "1"), E("ERR Unrecognized REPLCONF option: bogus")),
        (("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "whatever"), "OK"),
        (("REPLCONF", "rdb-only", "2"), E("ERR value is out of range, value must between 0 and 1")),
        (("REPLCONF", "rdb-only", "x"), E("ERR value is not an integer or out of range")),
        (("REPLCONF", "rdb-filter-only", "functions x"), E("ERR Unsupported rdb-filter-only option: x")),
        (("REPLCONF", "ip-address", "x" * 50), "OK"),
        (("REPLCONF", "ip-address", "x" * 256), E("ERR REPLCONF ip-address provided by replica instance is too long: 256 bytes")),
        (("REPLCONF", "listening-port", "1", "bogus", "2"), E("ERR Unrecognized REPLCONF option: bogus")),
        (("PSYNC", "a", "b"), E("ERR value is not an integer or out of range")),
        (("PSYNC",), E("ERR wrong number of arguments for 'psync' command")),
        (("SYNC", "x"), E("ERR wrong number of arguments for 'sync' command")),
        (("PSYNC", "a", "1", "FAILOVER"), E("ERR PSYNC FAILOVER can't be sent to a master.")),
    ]
    for args, expected in cases:
        with master.client() as c:
            assert c.call(*args) == expected, args
            assert c.call("PING") == "PONG", args  # still a normal client
    with master.client() as c:
        # ACK and GETACK from a client that is no replica answer nothing.
        c.send("REPLCONF", "ACK", "5")
        c.send("REPLCONF", "GETACK", "*")
        assert c.call("PING") == "PONG"
        assert c.call("REPLCONF", "rdb-filter-only", "") == "OK"
        assert c.call("SYNC") == E("ERR Filtered replica requires EOF capability")
        assert c.call("MULTI") == "OK"
        assert c.call("SYNC") == E("ERR Command not allowed inside a transaction")
        assert c.call("PSYNC", "?", "-1") == E("ERR Command not allowed inside a transaction")
        assert c.call("DISCARD") == "OK"
    assert py(master).info("replication")["connected_slaves"] == 0
    assert py(master).info("stats")["sync_full"] == 0


@pytest.mark.lapse_only
def test_lapse_only_data_stays_out_of_the_replica(start_server):
    """Containers and items are lapse's own: the payload leaves them out and the stream skips
    their commands, so a Redis replica syncs and stays up."""
    master = start_server(options=master_options())
    m = py(master)
    m.execute_command("CSETTTL", "orders", 100)
    m.execute_command("IPUT", "orders", "1", '{"n": 1}')
    m.set("plain", "v")
    replica = start_replica(start_server, master)
    wait_synced(master, replica)
    m.execute_command("IPUT", "orders", "2", '{"n": 2}')
    m.set("after", "v")
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert sorted(py(replica).keys("*")) == ["after", "plain"]
    assert link_up(replica)
    assert "CRITICAL" not in replica.log_text()


@pytest.mark.lapse_only
def test_redis_cli_rdb_backup_keeps_lapse_data(start_server, tmp_path):
    """A payload-only client (redis-cli --rdb asks REPLCONF rdb-only 1) gets containers and
    items too, so that the backup restores all of lapse."""
    master = start_server(options=master_options())
    m = py(master)
    m.execute_command("CSETTTL", "orders", 1000)
    m.execute_command("IPUT", "orders", "1", '{"n": 1}')
    m.set("plain", "v")
    path = str(tmp_path / "backup.rdb")
    out = subprocess.run(["redis-cli", "-p", str(master.port), "--rdb", path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    restored = start_server(options={"dir": str(tmp_path), "dbfilename": "backup.rdb"})
    rr = py(restored)
    assert rr.get("plain") == "v"
    assert '"n":1' in rr.execute_command("IGET", "orders", "1").replace(" ", "")
