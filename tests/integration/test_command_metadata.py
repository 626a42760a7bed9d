"""COMMAND INFO, DOCS, GETKEYS, GETKEYSANDFLAGS and LIST against redis-server 7.0.15, byte for
byte in RESP2 and RESP3, for every command both have; and the metadata of lapse's own commands.

Redis lists a container's subcommands in its hash table's order, which changes from one
process to the next: a container's reply is compared with its subcommands sorted, and each
subcommand's own reply byte for byte."""
import pytest

from conftest import single_server
from lapse_harness import RawClient, RespError, target_kind

server = single_server(threads=2)

# Subcommands lapse has and Redis 7.0 lacks (Redis 7.2's CLIENT SETINFO).
LAPSE_EXTRA_SUBCOMMANDS = {"client|setinfo"}
lapse_only = pytest.mark.skipif(target_kind() == "redis", reason="lapse's own commands")


def typed(buf, pos=0):
    """Decodes one reply keeping every RESP type: (type, value); returns it and its end."""
    nl = buf.index(b"\r\n", pos)
    kind, line, end = chr(buf[pos]), buf[pos + 1:nl], nl + 2
    if kind in "*~%":
        items = []
        for _ in range(int(line) * (2 if kind == "%" else 1)):
            item, end = typed(buf, end)
            items.append(item)
        return (kind, items), end
    if kind == "$" and int(line) >= 0:
        n = int(line)
        return (kind, buf[end:end + n]), end + n + 2
    return (kind, line), end


def connect(port, resp3):
    c = RawClient(port)
    if resp3:
        c.call("HELLO", "3")
    return c


def names(port):
    with RawClient(port) as c:
        return {n.decode() for n in c.call("COMMAND", "LIST")}


@pytest.fixture(scope="module")
def shared(server, redis_server):
    both = names(server.port) & names(redis_server.port)
    return sorted(both), {n for n in both if "|" not in n and any(m.startswith(n + "|") for m in both)}


def sorted_subcommands(reply, sub):
    """`reply` of COMMAND INFO (sub="info") or DOCS (sub="docs") for one container, with its
    subcommands sorted and lapse's extras dropped."""
    kind, (entry,) = reply[0], reply[1][1:] if sub == "docs" else reply[1]
    if sub == "info":
        fields = list(entry[1])
        subs = [s for s in fields[9][1] if s[1][0][1].decode() not in LAPSE_EXTRA_SUBCOMMANDS]
        fields[9] = (fields[9][0], sorted(subs, key=repr))
        return kind, fields
    fields = entry[1]
    pairs = [(fields[i], fields[i + 1]) for i in range(0, len(fields), 2)]
    out = []
    for k, v in pairs:
        if k[1] == b"subcommands":
            subs = [(v[1][i], v[1][i + 1]) for i in range(0, len(v[1]), 2)
                    if v[1][i][1].decode() not in LAPSE_EXTRA_SUBCOMMANDS]
            v = (v[0], sorted(subs, key=repr))
        out.append((k, v))
    return kind, out


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
@pytest.mark.parametrize("sub", ["info", "docs"])
def test_every_shared_command_same_as_redis(server, redis_server, shared, resp3, sub):
    both, containers = shared
    assert len(both) > 300
    with connect(server.port, resp3) as ours, connect(redis_server.port, resp3) as theirs:
        different = []
        for name in both:
            got, want = ours.call_raw("COMMAND", sub, name), theirs.call_raw("COMMAND", sub, name)
            if name in containers:
                got, want = (sorted_subcommands(typed(r)[0], sub) for r in (got, want))
            if got != want:
                different.append(name)
        assert different == []


def test_containers_have_redis_subcommands(server, redis_server, shared):
    both, containers = shared
    ours, theirs = names(server.port), names(redis_server.port)
    for container in containers:
        mine = {n for n in ours if n.startswith(container + "|")}
        redis = {n for n in theirs if n.startswith(container + "|")}
        assert mine - LAPSE_EXTRA_SUBCOMMANDS == redis, container


def test_every_command_has_docs(server, redis_server):
    """redis-cli hints from COMMAND DOCS: a command without docs, or one of lapse's own without
    arguments while it takes some, would show no hint. (A few of Redis's own, COMMAND GETKEYS
    for one, have no arguments in Redis 7.0's docs either.)"""
    redis_names = names(redis_server.port)
    with RawClient(server.port) as c:
        every = c.call("COMMAND", "LIST")
        docs = c.call("COMMAND", "DOCS", *every)
        infos = c.call("COMMAND", "INFO", *every)
    docs = {docs[i].decode(): docs[i + 1] for i in range(0, len(docs), 2)}
    for name, info in zip(every, infos):
        name = name.decode()
        assert name in docs, name
        fields = {docs[name][i].decode(): docs[name][i + 1] for i in range(0, len(docs[name]), 2)}
        assert {"summary", "since", "group"} <= set(fields), name  # all Redis 7.0 requires
        if name not in redis_names:
            assert "complexity" in fields, name
        arity, container = info[1], bool(info[9])
        takes_arguments = arity not in (1, -1, 2 if "|" in name else 1) and not container
        if takes_arguments and name not in redis_names:
            assert "arguments" in fields, name


GETKEYS_SAMPLES = [
    ("GET", "k"), ("SET", "k", "v"), ("SET", "k", "v", "GET"), ("SET", "k", "v", "EX", "10", "get"),
    ("MSET", "a", "1", "b", "2"), ("MGET", "a", "b", "c"), ("DEL", "a", "b"), ("EXISTS", "a", "b"),
    ("BITFIELD", "k", "GET", "u8", "0"), ("BITFIELD", "k", "SET", "u8", "0", "1"),
    ("BITFIELD", "k", "OVERFLOW", "WRAP", "GET", "u8", "0"), ("BITFIELD", "k", "GET", "u8"),
    ("BITFIELD_RO", "k", "GET", "u8", "0"), ("BITOP", "AND", "d", "a", "b"),
    ("ZUNION", "2", "a", "b"), ("ZUNION", "2", "a", "b", "WEIGHTS", "1", "2"), ("ZUNION", "0", "a"),
    ("ZUNION", "x", "a"), ("ZUNION", "3", "a", "b"), ("ZUNION", "2x", "a", "b"), ("ZUNIONSTORE", "d", "2", "a", "b"),
    ("ZINTERSTORE", "d", "1", "a"), ("ZDIFFSTORE", "d", "0", "a"), ("ZDIFF", "2", "a", "b"), ("ZINTER", "1", "a"),
    ("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), ("SINTERCARD", "2", "a", "b"), ("SINTERCARD", "-1", "a"),
    ("SORT", "k"), ("SORT", "k", "STORE", "d"), ("SORT", "k", "BY", "w", "GET", "g", "STORE", "d", "LIMIT", "0", "1"),
    ("SORT", "k", "STORE"), ("SORT", "k", "STORE", "d1", "STORE", "d2"), ("SORT", "k", "LIMIT", "STORE", "x", "STORE", "y"),
    ("SORT_RO", "k", "BY", "x"),
    ("LMPOP", "2", "a", "b", "LEFT"), ("LMPOP", "0", "a", "LEFT"), ("BLMPOP", "0", "2", "a", "b", "LEFT"),
    ("ZMPOP", "1", "a", "MIN"), ("BZMPOP", "0", "2", "a", "b", "MAX"),
    ("EVAL", "return 1", "0"), ("EVAL", "return 1", "2", "a", "b", "c"), ("EVAL", "return 1", "x", "a"),
    ("EVAL", "return 1", "5", "a"), ("EVALSHA", "abc", "1", "a"), ("EVAL_RO", "return 1", "1", "a"),
    ("EVALSHA_RO", "abc", "0"), ("FCALL", "f", "2", "a", "b"), ("FCALL_RO", "f", "0"),
    ("XREAD", "STREAMS", "a", "b", "0", "0"), ("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "a", "0"),
    ("XREAD", "STREAMS", "a"), ("XREAD", "STREAMS", "a", "b", "0"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "a", "b", "0", "0"),
    ("GEORADIUS", "k", "0", "0", "1", "m", "STORE", "d"), ("GEORADIUS", "k", "0", "0", "1", "m", "STOREDIST", "d"),
    ("GEORADIUS", "k", "0", "0", "1", "m"), ("GEORADIUS", "k", "0", "0", "1", "m", "STORE"),
    ("GEORADIUSBYMEMBER", "k", "m", "1", "km", "STORE", "d"), ("GEORADIUS_RO", "k", "0", "0", "1", "m"),
    ("GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "m"),
    ("RENAME", "a", "b"), ("LMOVE", "a", "b", "LEFT", "RIGHT"), ("BLMOVE", "a", "b", "LEFT", "RIGHT", "0"),
    ("SMOVE", "a", "b", "m"), ("COPY", "a", "b"), ("RPOPLPUSH", "a", "b"), ("SDIFFSTORE", "d", "a", "b"),
    ("OBJECT", "ENCODING", "k"), ("XINFO", "STREAM", "k"), ("XGROUP", "CREATE", "k", "g", "$"),
    ("MEMORY", "USAGE", "k"), ("LCS", "a", "b"), ("PFCOUNT", "a", "b"), ("PFMERGE", "d", "a", "b"),
    ("XADD", "k", "*", "f", "v"), ("EXPIRE", "k", "10"), ("HSET", "h", "f", "v"), ("WATCH", "a", "b"),
    ("UNLINK", "a"), ("TOUCH", "a", "b"), ("GETEX", "k", "PERSIST"), ("INCR", "k"), ("GETDEL", "k"),
    ("LPUSH", "k", "a"), ("RPUSHX", "k", "a"), ("SADD", "k", "m"), ("ZADD", "k", "1", "m"), ("PFADD", "k", "a"),
    ("XDEL", "k", "1-1"), ("XTRIM", "k", "MAXLEN", "1"), ("SETRANGE", "k", "0", "v"), ("APPEND", "k", "v"),
    ("MSETNX", "a", "1", "b", "2"), ("BLPOP", "a", "b", "0"), ("BZPOPMIN", "a", "b", "0"), ("RENAMENX", "a", "b"),
    # errors: unknown command or subcommand, no key arguments, arity
    ("NOSUCH", "a"), ("TIME",), ("PING", "x"), ("CLIENT", "LIST"), ("CLIENT", "NOSUCH"), ("CLIENT",),
    ("OBJECT", "HELP"), ("PUBLISH", "c", "m"), ("SPUBLISH", "c", "m"), ("SSUBSCRIBE", "c"), ("SUBSCRIBE", "c"),
    ("GET", "a", "b"), ("SET", "k"), ("MSET", "a"), ("OBJECT", "ENCODING"), ("EVAL",), ("XREAD", "x"),
    ("ZUNION", "1"), ("COMMAND", "INFO"), ("FLUSHALL",),
]


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
@pytest.mark.parametrize("sub", ["GETKEYS", "GETKEYSANDFLAGS"])
def test_getkeys_same_as_redis(server, redis_server, resp3, sub):
    commands = [("COMMAND", sub) + sample for sample in GETKEYS_SAMPLES]
    with connect(server.port, resp3) as ours, connect(redis_server.port, resp3) as theirs:
        got, want = ours.pipeline_raw(commands), theirs.pipeline_raw(commands)
    assert [(c[2:], g) for c, g, w in zip(commands, got, want) if g != w] == []


COMMAND_ERRORS = [
    ("COMMAND", "COUNT", "x"), ("COMMAND", "LIST", "x"), ("COMMAND", "LIST", "FILTERBY"),
    ("COMMAND", "LIST", "FILTERBY", "bad", "x"), ("COMMAND", "LIST", "FILTERBY", "PATTERN"),
    ("COMMAND", "LIST", "FILTERBY", "PATTERN", "a", "b"), ("COMMAND", "NOSUCH"), ("COMMAND", "HELP", "x"),
    ("COMMAND", "GETKEYS"), ("COMMAND", "GETKEYSANDFLAGS", "get"), ("COMMAND", "DOCS", "nosuch"),
    ("COMMAND", "INFO", "nosuch", "get"), ("COMMAND", "INFO", "client|nosuch", "nosuch|list"),
    ("COMMAND", "DOCS", "nosuch", "get", "client|nosuch"), ("COMMAND", "HELP"),
    ("COMMAND", "LIST", "FILTERBY", "MODULE", "x"), ("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"),
    ("COMMAND", "INFO", "GET", "Client|List"), ("COMMAND", "DOCS", "SET", "CONFIG|GET"),
    # not commands: a connection that sends them is closed (test_bad_input.py)
    ("COMMAND", "INFO", "post", "host:"), ("COMMAND", "DOCS", "post", "host:"), ("COMMAND", "GETKEYS", "post", "x"),
]


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_command_errors_and_lookups_same_as_redis(server, redis_server, resp3):
    with connect(server.port, resp3) as ours, connect(redis_server.port, resp3) as theirs:
        got, want = ours.pipeline_raw(COMMAND_ERRORS), theirs.pipeline_raw(COMMAND_ERRORS)
    assert [(c, g) for c, g, w in zip(COMMAND_ERRORS, got, want) if g != w] == []


@pytest.mark.parametrize("filter_", [("PATTERN", "cl*"), ("PATTERN", "*|*"), ("PATTERN", "X[A-G]*"),
                                     ("PATTERN", "CLIENT|*"), ("ACLCAT", "keyspace"), ("ACLCAT", "connection"),
                                     ("ACLCAT", "WRITE"), ("ACLCAT", "dangerous"), ("ACLCAT", "scripting")])
def test_command_list_filterby_same_as_redis(server, redis_server, filter_):
    """Both list their own commands: compared on the commands both have."""
    ours_all, theirs_all = names(server.port), names(redis_server.port)
    with RawClient(server.port) as ours, RawClient(redis_server.port) as theirs:
        got = {n.decode() for n in ours.call("COMMAND", "LIST", "FILTERBY", *filter_)}
        want = {n.decode() for n in theirs.call("COMMAND", "LIST", "FILTERBY", *filter_)}
    assert got & theirs_all == want & ours_all
    assert got <= ours_all


def test_command_count_and_list_agree(server):
    with RawClient(server.port) as c:
        listed = [n.decode() for n in c.call("COMMAND", "LIST")]
        assert c.call("COMMAND", "COUNT") == len([n for n in listed if "|" not in n]) == len(c.call("COMMAND"))
    assert len(listed) == len(set(listed))
    assert "post" not in listed and "host:" not in listed  # not commands (test_bad_input.py)
    for sub in (n for n in listed if "|" in n):
        assert sub.split("|")[0] in listed


@lapse_only
def test_iput_docs_give_its_hint(server):
    with RawClient(server.port) as c:
        docs = c.call("COMMAND", "DOCS", "iput")
    fields = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert fields[b"group"] == b"container"
    args = [dict(zip(a[0::2], a[1::2])) for a in fields[b"arguments"]]
    assert [a[b"name"] for a in args] == [b"container", b"id", b"json", b"condition", b"etag"]
    assert args[0][b"type"] == b"key" and args[0][b"key_spec_index"] == 0
    assert [dict(zip(x[0::2], x[1::2]))[b"token"] for x in args[3][b"arguments"]] == [b"NX", b"XX"]
    assert args[3][b"flags"] == ["optional"] and args[4][b"flags"] == ["optional"]
    assert args[4][b"token"] == b"IFMATCH"


@lapse_only
@pytest.mark.parametrize("command, expected", [
    (("IPUT", "c", "id", "{}"), [[b"c", ["RW", "update", "insert"]]]),
    (("IPUT", "c", "id", "{}", "XX", "IFMATCH", "e"), [[b"c", ["RW", "update", "insert"]]]),
    (("IGET", "c", "id"), [[b"c", ["RO", "access"]]]),
    (("IDEL", "c", "a", "b"), [[b"c", ["RW", "delete"]]]),
    (("CSETTTL", "c", "10"), [[b"c", ["RW", "update"]]]),
    (("ICHANGES", "c", "FROM", "NOW"), [[b"c", ["RO", "access"]]]),
    (("HEXPIRE", "h", "10", "FIELDS", "1", "f"), [[b"h", ["RW", "update"]]]),
])
def test_lapse_commands_getkeysandflags(server, command, expected):
    with RawClient(server.port) as c:
        assert c.call("COMMAND", "GETKEYSANDFLAGS", *command) == expected
        assert c.call("COMMAND", "GETKEYS", *command) == [e[0] for e in expected]


@lapse_only
@pytest.mark.parametrize("name, keys", [("csetttl", [1, 1, 1]), ("iput", [1, 1, 1]), ("hexpire", [1, 1, 1]),
                                        ("clist", [0, 0, 0]), ("lastcharge", [0, 0, 0])])
def test_lapse_commands_key_positions_follow_their_key_specs(server, name, keys):
    with RawClient(server.port) as c:
        (info,) = c.call("COMMAND", "INFO", name)
    assert info[3:6] == keys
    assert len(info[8]) == (1 if keys[0] else 0)


@lapse_only
def test_lapse_commands_without_keys(server):
    with RawClient(server.port) as c:
        assert c.call("COMMAND", "GETKEYS", "CLIST", "x") == RespError("ERR The command has no key arguments")
        assert c.call("COMMAND", "GETKEYS", "LASTCHARGE", "x") == RespError("ERR The command has no key arguments")
        assert c.call("COMMAND", "GETKEYS", "IGET", "c") == RespError("ERR Invalid number of arguments specified for command")


@lapse_only
@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_lapse_command_info_bytes(server, resp3):
    """One lapse command's whole COMMAND INFO entry, byte for byte: flags and categories from
    the table, key spec from its metadata."""
    with connect(server.port, resp3) as c:
        got = c.call_raw("COMMAND", "INFO", "iget")
    s, m = ("~", "%") if resp3 else ("*", "*")
    pairs = (lambda n: n) if resp3 else (lambda n: 2 * n)
    want = (f"*1\r\n*10\r\n$4\r\niget\r\n:3\r\n{s}2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
            f"{s}3\r\n+@read\r\n+@fast\r\n+@container\r\n{s}0\r\n{s}1\r\n{m}{pairs(3)}\r\n"
            f"$5\r\nflags\r\n{s}2\r\n+RO\r\n+access\r\n"
            f"$12\r\nbegin_search\r\n{m}{pairs(2)}\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n{m}{pairs(1)}\r\n"
            f"$5\r\nindex\r\n:1\r\n"
            f"$9\r\nfind_keys\r\n{m}{pairs(2)}\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n{m}{pairs(3)}\r\n"
            f"$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n{s}0\r\n")
    assert got == want.encode()
