"""Connection-level behaviour against the real binary: PING/ECHO, inline commands, protocol
errors, pipelining 10,000 commands, RESP3 (raw bytes), HELLO, CLIENT, COMMAND, TIME, the exact
error texts and QUIT. Expected replies are Redis 7.0's (LAPSE_TARGET=redis runs the same file
against redis-server).
"""
import random

import pytest
import redis

from conftest import single_server
from lapse_harness import RawClient, encode_command, parse_reply, server_ms
from lapse_harness import RespError as E

server = single_server(threads=2)  # one server for this module, instead of one per thread count


def commands(*cmds):
    return b"".join(encode_command(*c) for c in cmds)


# ---- PING / ECHO -----------------------------------------------------------------------


def test_connect_ping_echo(r, raw):
    assert r.ping() is True
    assert r.echo("hello world") == "hello world"
    assert raw.call_raw("PING") == b"+PONG\r\n"
    assert raw.call_raw("PING", "hi there") == b"$8\r\nhi there\r\n"
    assert raw.call_raw("ECHO", b"a\x00\r\nb") == b"$5\r\na\x00\r\nb\r\n"
    assert raw.call_raw("ECHO", "") == b"$0\r\n\r\n"
    assert raw.call("PING", "a", "b") == E("ERR wrong number of arguments for 'ping' command")
    assert raw.call("ECHO") == E("ERR wrong number of arguments for 'echo' command")


def test_inline_commands(raw):
    raw.send_raw(b"PING\r\n")
    assert raw.read_reply_raw() == b"+PONG\r\n"
    raw.send_raw(b"SET inline  'hello world'\r\nGET inline\n")
    assert raw.read_reply_raw() == b"+OK\r\n"
    assert raw.read_reply_raw() == b"$11\r\nhello world\r\n"
    raw.send_raw(b"ECHO \"a\\x41\\nb\"\r\n")
    assert raw.read_reply() == b"aA\nb"


def test_commands_split_across_writes(raw):
    data = b"".join([b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n", b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"])
    for i in range(len(data)):
        raw.send_raw(data[i:i + 1])
    assert raw.read_reply_raw() == b"+OK\r\n"
    assert raw.read_reply_raw() == b"$5\r\nhello\r\n"


def test_protocol_error_closes_connection(server):
    with RawClient(server.port) as c:
        c.send_raw(b"*1\r\n$4\r\nPING\r\n*abc\r\n")
        assert c.read_reply_raw() == b"+PONG\r\n"
        assert c.read_reply_raw() == b"-ERR Protocol error: invalid multibulk length\r\n"
        assert c.at_eof()
    with RawClient(server.port) as c:
        c.send_raw(b"*1\r\n$x\r\n")
        assert c.read_reply_raw() == b"-ERR Protocol error: invalid bulk length\r\n"
        assert c.at_eof()
    server.assert_alive()


# ---- pipelining ------------------------------------------------------------------------


def test_pipeline_10000_mixed_commands_in_order(r):
    rng = random.Random(1234)
    model = {}
    expected = []
    with r.pipeline(transaction=False) as p:
        for i in range(10000):
            key = f"pipe:{rng.randrange(500)}"
            op = rng.choice(["SET", "GET", "INCR", "INCR"])
            if op == "SET":
                value = str(rng.randrange(1000)) if rng.random() < 0.8 else f"text{i}"
                p.set(key, value)
                model[key] = value
                expected.append(True)
            elif op == "GET":
                p.get(key)
                expected.append(model.get(key))
            else:
                p.incr(key)
                current = model.get(key, "0")
                if current.lstrip("-").isdigit():
                    model[key] = str(int(current) + 1)
                    expected.append(int(model[key]))
                else:
                    expected.append("ERR")
        replies = p.execute(raise_on_error=False)
    assert len(replies) == 10000
    for i, (got, want) in enumerate(zip(replies, expected)):
        if want == "ERR":
            assert isinstance(got, redis.ResponseError), (i, got)
            assert str(got) == "value is not an integer or out of range"
        else:
            assert got == want, f"reply {i}: {got!r} != {want!r}"
    assert r.mget(sorted(model)) == [model[k] for k in sorted(model)]


def test_pipeline_10000_raw_single_write(raw):
    commands = []
    for i in range(10000):
        k = f"k{i % 1000}"
        commands.append(("INCR", k) if i % 3 else ("GET", k))
    replies = raw.pipeline(commands)
    counters = {}
    for i, ((op, k), reply) in enumerate(zip(commands, replies)):
        if op == "INCR":
            counters[k] = counters.get(k, 0) + 1
            assert reply == counters[k], i
        else:
            want = counters.get(k)
            assert reply == (None if want is None else str(want).encode()), i


def test_replies_larger_than_the_socket_takes_arrive_whole_and_in_order(connect):
    # 2 x 8 MB of replies outgrow the socket buffers of a client that does not read: the
    # server writes what the socket takes at once and the rest as the client drains it,
    # serving its other clients meanwhile.
    slow, other = connect(), connect()
    big = bytes(random.Random(11).randrange(256) for _ in range(1 << 16)) * 128
    assert slow.call("SET", "big", big) == "OK"
    slow.send_raw(commands(("GET", "big"), ("INCR", "n"), ("GET", "big"), ("PING",)))
    assert other.call("INCR", "m") == 1
    assert other.call_raw("PING") == b"+PONG\r\n"
    want = b"$%d\r\n" % len(big) + big + b"\r\n"
    assert slow.read_reply_raw() == want
    assert slow.read_reply_raw() == b":1\r\n"
    assert slow.read_reply_raw() == want
    assert slow.read_reply_raw() == b"+PONG\r\n"


def test_pipeline_errors_keep_their_place(raw):
    replies = raw.pipeline([("SET", "a", "1"), ("NOSUCH",), ("GET", "a"), ("GET",), ("INCR", "a"),
                            ("SELECT", 99), ("MGET", "a", "b"), ("PING",)])
    assert replies == ["OK", E("ERR unknown command 'NOSUCH', with args beginning with: "), b"1",
                       E("ERR wrong number of arguments for 'get' command"), 2,
                       E("ERR DB index is out of range"), [b"2", None], "PONG"]


def test_many_concurrent_clients(server):
    clients = [server.client() for _ in range(50)]
    try:
        for i, c in enumerate(clients):
            c.send_raw(commands(("INCR", "shared"), ("SET", f"own{i}", i), ("GET", f"own{i}")))
        for i, c in enumerate(clients):
            assert isinstance(c.read_reply(), int)
            assert c.read_reply() == "OK"
            assert c.read_reply() == str(i).encode()
        assert clients[0].call("GET", "shared") == b"50"
    finally:
        for c in clients:
            c.close()


# ---- RESP3 -----------------------------------------------------------------------------


def test_hello3_exact_bytes(server):
    with RawClient(server.port) as c:
        raw = c.call_raw("HELLO", "3")
        assert raw.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$")
        reply, end = parse_reply(raw)
        assert end == len(raw)
        assert list(reply) == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]
        assert reply[b"proto"] == 3
        assert reply[b"id"] == c.call("CLIENT", "ID")
        assert reply[b"mode"] == b"standalone"
        assert reply[b"role"] == b"master"
        assert reply[b"modules"] == []
        assert reply[b"version"].startswith(b"7.")
        assert b":3\r\n" in raw
        # RESP3 replies
        assert c.call_raw("GET", "missing:resp3") == b"_\r\n"
        assert c.call_raw("SET", "r3", "v") == b"+OK\r\n"
        assert c.call_raw("MGET", "r3", "missing:resp3") == b"*2\r\n$1\r\nv\r\n_\r\n"
        assert c.call_raw("SET", "r3", "w", "NX") == b"_\r\n"
        assert c.call_raw("CONFIG", "GET", "maxclients") == b"%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n"
        assert c.call_raw("INCRBYFLOAT", "r3f", "1.5") == b"$3\r\n1.5\r\n"
        assert c.call_raw("CLIENT", "GETNAME") == b"_\r\n"
        assert c.call_raw("OBJECT", "ENCODING", "missing:resp3") == b"_\r\n"
        assert c.call_raw("DEL", "r3", "r3f") == b":2\r\n"
        assert c.call_raw("RANDOMKEY").startswith((b"_\r\n", b"$"))
        info = c.call_raw("INFO", "server")
        assert info.startswith(b"=") and b"txt:# Server\r\n" in info
        # back to RESP2
        hello2 = c.call_raw("HELLO", "2")
        assert hello2.startswith(b"*14\r\n$6\r\nserver\r\n")
        assert c.call_raw("GET", "missing:resp3") == b"$-1\r\n"


def test_hello_errors_and_setname(raw):
    assert raw.call("HELLO", "4") == E("NOPROTO unsupported protocol version")
    assert raw.call("HELLO", "1") == E("NOPROTO unsupported protocol version")
    assert raw.call("HELLO", "abc") == E("ERR Protocol version is not an integer or out of range")
    assert raw.call("HELLO", "3", "foo") == E("ERR Syntax error in HELLO option 'foo'")
    reply = raw.call("HELLO", "2", "SETNAME", "myconn")
    assert isinstance(reply, list) and reply[0] == b"server"
    assert raw.call("CLIENT", "GETNAME") == b"myconn"
    plain = raw.call("HELLO")
    assert plain[plain.index(b"proto") + 1] == 2


def test_hello_options_take_effect_as_they_are_read(raw):
    # Redis 7.0 sets the name when it reads SETNAME: a later bad option or AUTH leaves it set.
    assert raw.call("HELLO", "3", "SETNAME", "first", "bogus") == E("ERR Syntax error in HELLO option 'bogus'")
    assert raw.call("CLIENT", "GETNAME") == b"first"
    assert raw.call("HELLO", "2", "SETNAME", "second", "AUTH", "nosuchuser", "wrong") == E(
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert raw.call("CLIENT", "GETNAME") == b"second"
    assert raw.call("HELLO", "2", "SETNAME", "third", "SETNAME", "a b") == E(
        "ERR Client names cannot contain spaces, newlines or special characters.")
    assert raw.call("CLIENT", "GETNAME") == b"third"
    # A bad protocol version is refused before any option.
    assert raw.call("HELLO", "4", "SETNAME", "fourth") == E("NOPROTO unsupported protocol version")
    assert raw.call("CLIENT", "GETNAME") == b"third"

# ---- CLIENT ----------------------------------------------------------------------------


def test_client_id_setname_getname_list(server, raw, raw2):
    id1, id2 = raw.call("CLIENT", "ID"), raw2.call("CLIENT", "ID")
    assert isinstance(id1, int) and isinstance(id2, int) and id1 != id2
    assert raw.call("CLIENT", "GETNAME") is None
    assert raw.call("CLIENT", "SETNAME", "first") == "OK"
    assert raw.call("CLIENT", "GETNAME") == b"first"
    assert raw.call("CLIENT", "SETNAME", "has space") == E(
        "ERR Client names cannot contain spaces, newlines or special characters.")
    assert raw.call("CLIENT", "GETNAME") == b"first"
    raw2.call("SELECT", 4)
    listing = raw.call("CLIENT", "LIST").decode()
    assert listing.endswith("\n")
    entries = {}
    for line in listing.strip("\n").split("\n"):
        fields = dict(f.split("=", 1) for f in line.split(" "))
        entries[int(fields["id"])] = fields
    assert entries[id1]["name"] == "first"
    assert entries[id2]["db"] == "4"
    assert entries[id1]["addr"].startswith("127.0.0.1:")
    assert entries[id1]["laddr"] == f"127.0.0.1:{server.port}"
    for field in ["age", "idle", "flags", "resp", "user"]:
        assert field in entries[id1]
    only = raw.call("CLIENT", "LIST", "ID", id2).decode()
    assert only.count("\n") == 1 and f"id={id2} " in only
    info = raw.call("CLIENT", "INFO").decode()
    assert info.startswith(f"id={id1} ") and " name=first " in info
    assert raw.call("CLIENT", "ID", "x") == E("ERR wrong number of arguments for 'client|id' command")
    assert raw.call("CLIENT", "FOO") == E("ERR unknown subcommand 'FOO'. Try CLIENT HELP.")
    r = redis.Redis(port=server.port, client_name="pyclient", decode_responses=True)
    assert r.client_getname() == "pyclient"
    assert any(c["name"] == "pyclient" for c in r.client_list())
    assert isinstance(r.client_id(), int)
    r.close()


# ---- COMMAND / TIME / errors -----------------------------------------------------------


def test_command_count_info_docs(raw, r):
    count = raw.call("COMMAND", "COUNT")
    assert isinstance(count, int) and count >= 59
    everything = raw.call("COMMAND")
    assert len(everything) == count
    names = {entry[0] for entry in everything}
    for name in [b"get", b"set", b"ping", b"hello", b"expire", b"scan", b"info", b"config", b"client"]:
        assert name in names
    (get,) = raw.call("COMMAND", "INFO", "get")
    assert get[:6] == [b"get", 2, ["readonly", "fast"], 1, 1, 1]
    (set_,) = raw.call("COMMAND", "INFO", "SET")
    assert set_[0] == b"set" and set_[1] == -3 and "write" in set_[2] and set_[3:6] == [1, 1, 1]
    (mset,) = raw.call("COMMAND", "INFO", "mset")
    assert mset[1] == -3 and mset[3:6] == [1, -1, 2]
    assert raw.call("COMMAND", "INFO", "get", "nosuchcmd")[1] is None
    docs = raw.call("COMMAND", "DOCS", "get")
    assert docs[0] == b"get"
    doc = dict(zip(docs[1][::2], docs[1][1::2]))
    assert doc[b"group"] == b"string" and doc[b"since"] == b"1.0.0" and b"summary" in doc
    assert raw.call("COMMAND", "FOO") == E("ERR unknown subcommand 'FOO'. Try COMMAND HELP.")
    assert raw.call("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == [b"a", b"b"]
    assert r.command_count() == count


def test_command_info_unknown_is_null_bulk(raw):
    assert raw.call_raw("COMMAND", "INFO", "nosuchcmd") == b"*1\r\n$-1\r\n"


def test_time(raw, r):
    sec, usec = raw.call("TIME")
    assert sec.isdigit() and usec.isdigit() and 0 <= int(usec) < 1_000_000
    assert int(sec) > 1_600_000_000
    t = r.time()
    assert isinstance(t, tuple) and abs(t[0] - int(sec)) < 1000
    assert raw.call("TIME", "x") == E("ERR wrong number of arguments for 'time' command")


def redis_args_excerpt(args):
    """How Redis 7.0 quotes the arguments of an unknown command: while the text is shorter
    than 128 bytes, append the next argument cut to the room left."""
    text = ""
    for a in args:
        if len(text) >= 128:
            break
        text += "'" + a[:128 - len(text)] + "' "
    return text


@pytest.mark.parametrize("args", [
    [str(i) for i in range(30)],
    ["x" * 200],
    ["a" * 100, "b" * 100, "c"],
    [f"arg{i}" for i in range(25)],
], ids=["30-short-args", "one-long-arg", "long-args", "25-args"])
def test_unknown_command_long_argument_list(raw, args):
    assert raw.call("nosuch", *args) == E(
        "ERR unknown command 'nosuch', with args beginning with: " + redis_args_excerpt(args))


def test_unknown_command_and_arity_texts(raw, r):
    assert raw.call_raw("foo", "a", "b") == b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"
    assert raw.call_raw("FOO") == b"-ERR unknown command 'FOO', with args beginning with: \r\n"
    assert raw.call_raw("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert raw.call_raw("get", "a", "b") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert raw.call("SET", "k") == E("ERR wrong number of arguments for 'set' command")
    assert raw.call("MGET") == E("ERR wrong number of arguments for 'mget' command")
    assert raw.call("DBSIZE", "x") == E("ERR wrong number of arguments for 'dbsize' command")
    with pytest.raises(redis.ResponseError, match="unknown command 'foo'"):
        r.execute_command("foo", "a", "b")
    with pytest.raises(redis.ResponseError, match=r"wrong number of arguments for 'get' command"):
        r.execute_command("GET")


@pytest.mark.lapse_only
def test_debug_requires_flag(start_server):
    srv = start_server(debug=False)
    with srv.client() as c:
        assert c.call("DEBUG", "ADVANCE", 1000) == E(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run "
            "it from a local connection, otherwise you need to set this option in the configuration file, and "
            "then restart the server.")
        t = server_ms(c)
        assert server_ms(c) - t < 1000


# ---- QUIT / SHUTDOWN / signals ---------------------------------------------------------


def test_quit(server):
    with RawClient(server.port) as c:
        c.send_raw(b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n")
        assert c.read_reply_raw() == b"+PONG\r\n"
        assert c.read_reply_raw() == b"+OK\r\n"
        assert c.at_eof()  # nothing after QUIT is answered
    server.assert_alive()
