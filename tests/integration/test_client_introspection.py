"""What a client can learn about clients and commands: CLIENT LIST / CLIENT INFO (the cmd= of
each client's last command), container commands' subcommands with their own names and
arities. Expected replies are Redis 7.0's (LAPSE_TARGET=redis runs the same file against
redis-server).
"""
import time

import pytest

from conftest import single_server
from lapse_harness import RawClient
from lapse_harness import RespError as E
from redis_errors import arity

server = single_server(threads=2)


def fields(line):
    return dict(f.split("=", 1) for f in line.split(" "))


def last_command(observer, client_id):
    """The cmd= another connection sees for `client_id`."""
    (line,) = observer.call("CLIENT", "LIST", "ID", client_id).decode().splitlines()
    return fields(line)["cmd"]


# ---- cmd= ------------------------------------------------------------------------------


def test_new_client_has_no_last_command(server, raw):
    with RawClient(server.port) as fresh:
        addr = "%s:%d" % fresh.sock.getsockname()
        deadline = time.monotonic() + 10
        while True:  # the server may not have accepted it yet
            found = [fields(line) for line in raw.call("CLIENT", "LIST").decode().splitlines()
                     if fields(line)["addr"] == addr]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert [f["cmd"] for f in found] == ["NULL"]


@pytest.mark.parametrize("command, shown", [
    (["GET", "k"], "get"),
    (["set", "k", "v"], "set"),
    (["PING"], "ping"),
    (["CoNfIg", "GeT", "maxmemory"], "config|get"),
    (["CLIENT", "ID"], "client|id"),
    (["client", "getname"], "client|getname"),
    (["CLIENT", "KILL", "ID", "999999"], "client|kill"),
    (["CLIENT", "LIST", "ID", "999999"], "client|list"),
    (["COMMAND"], "command"),
    (["COMMAND", "COUNT"], "command|count"),
    (["COMMAND", "INFO", "get"], "command|info"),
    (["COMMAND", "DOCS", "get"], "command|docs"),
    (["COMMAND", "GETKEYS", "get", "k"], "command|getkeys"),
    (["OBJECT", "ENCODING", "k"], "object|encoding"),
    (["OBJECT", "HELP"], "object|help"),
    (["COMMAND", "HELP"], "command|help"),
    (["CONFIG", "HELP"], "config|help"),
    # Refused commands count too, under the name their error gives.
    (["GET"], "get"),
    (["CLIENT"], "client"),
    (["CLIENT", "INFO", "x"], "client|info"),
    (["COMMAND", "COUNT", "x"], "command|count"),
    (["CONFIG"], "config"),
    # Unknown commands and subcommands leave nothing.
    (["NOSUCH"], "NULL"),
    (["CLIENT", "NOSUCH"], "NULL"),
    (["OBJECT", "NOSUCH", "k"], "NULL"),
], ids=lambda v: "-".join(v) if isinstance(v, list) else v)
def test_cmd_is_the_last_command(raw, raw2, command, shown):
    me = raw.call("CLIENT", "ID")
    raw.call(*command)
    assert last_command(raw2, me) == shown


def test_client_info_and_list_show_themselves(raw, raw2):
    assert fields(raw.call("CLIENT", "INFO").decode().rstrip("\n"))["cmd"] == "client|info"
    me = raw.call("CLIENT", "ID")
    lines = raw.call("CLIENT", "LIST").decode().splitlines()
    (mine,) = [fields(line) for line in lines if fields(line)["id"] == str(me)]
    assert mine["cmd"] == "client|list"
    # In a pipeline, each command is the last one when it runs.
    raw.send_raw(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n")
    assert raw.read_reply() is None
    assert fields(raw.read_reply().decode().rstrip("\n"))["cmd"] == "client|info"
    assert last_command(raw2, me) == "client|info"


def test_refused_before_auth_still_counts(start_server):
    srv = start_server({"requirepass": "pw"})
    with RawClient(srv.port) as anon, srv.client() as observer:
        assert observer.call("AUTH", "pw") == "OK"
        anon_id = int(fields(observer.call("CLIENT", "LIST").decode().splitlines()[0])["id"])
        assert anon.call("GET", "k") == E("NOAUTH Authentication required.")
        assert last_command(observer, anon_id) == "get"
        # Like an unknown command, an unknown subcommand is reported before NOAUTH.
        assert anon.call("CLIENT", "NOSUCH") == E("ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.")
        assert last_command(observer, anon_id) == "NULL"
        assert anon.call("CLIENT", "ID", "x") == arity("client|id")
        assert anon.call("CLIENT", "ID") == E("NOAUTH Authentication required.")
        assert last_command(observer, anon_id) == "client|id"


# ---- subcommands: their names and arities ------------------------------------------------


@pytest.mark.parametrize("command, error", [
    (["COMMAND", "COUNT", "x"], arity("command|count")),
    (["COMMAND", "LIST", "x", "y"], E("ERR syntax error")),
    (["COMMAND", "GETKEYS"], arity("command|getkeys")),
    (["COMMAND", "GETKEYS", "get"], arity("command|getkeys")),
    (["COMMAND", "GETKEYS", "nosuch", "x"], E("ERR Invalid command specified")),
    (["COMMAND", "GETKEYS", "get", "a", "b"], E("ERR Invalid number of arguments specified for command")),
    (["COMMAND", "GETKEYS", "time", "x"], E("ERR The command has no key arguments")),
    (["command", "nosuch"], E("ERR unknown subcommand 'nosuch'. Try COMMAND HELP.")),
    (["CONFIG", "GET"], arity("config|get")),
    (["CONFIG", "SET", "maxmemory"], arity("config|set")),
    (["CONFIG", "SET", "maxmemory", "0", "timeout"], E("ERR syntax error")),
    (["CONFIG", "RESETSTAT", "x"], arity("config|resetstat")),
    (["CONFIG", "REWRITE", "x"], arity("config|rewrite")),
    (["config", "nosuch"], E("ERR unknown subcommand 'nosuch'. Try CONFIG HELP.")),
    (["CLIENT", "KILL"], arity("client|kill")),
    (["CLIENT", "SETNAME"], arity("client|setname")),
    (["CLIENT", "GETNAME", "x"], arity("client|getname")),
    (["CLIENT", "LIST", "bogus"], E("ERR syntax error")),
    (["CLIENT", "x" * 200], E("ERR unknown subcommand '" + "x" * 128 + "'. Try CLIENT HELP.")),
    (["OBJECT", "ENCODING"], arity("object|encoding")),
    (["OBJECT", "HELP", "x"], arity("object|help")),
    (["COMMAND", "HELP", "x"], arity("command|help")),
    (["CONFIG", "HELP", "x"], arity("config|help")),
], ids=lambda v: "-".join(a[:10] for a in v) if isinstance(v, list) else None)
def test_subcommand_errors(raw, command, error):
    assert raw.call(*command) == error


# ---- omem / tot-mem --------------------------------------------------------------------


def test_tot_mem_counts_the_buffers(raw):
    info = fields(raw.call("CLIENT", "INFO").decode().rstrip("\n"))
    assert info["omem"] == "0"  # nothing waits to be read
    assert int(info["tot-mem"]) > 16 * 1024  # at least the buffers read into


def test_omem_counts_replies_the_client_has_not_read(server, r, raw2):
    r.set("big", "x" * (512 * 1024))
    with RawClient(server.port) as slow:
        me = slow.call("CLIENT", "ID")
        slow.send_raw(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 64)  # 32 MB of replies, never read
        deadline = time.monotonic() + 10
        while True:
            (line,) = raw2.call("CLIENT", "LIST", "ID", me).decode().splitlines()
            seen = fields(line)
            if int(seen["omem"]) > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert int(seen["omem"]) > 0
        assert int(seen["tot-mem"]) >= int(seen["omem"])


# ---- CLIENT LIST TYPE / ID, CLIENT KILL ID ---------------------------------------------


def listed_ids(reply):
    return [int(fields(line)["id"]) for line in reply.decode().splitlines()]


@pytest.mark.parametrize("kind", ["normal", "NORMAL", "Normal"])
def test_client_list_type_normal_is_everyone(raw, raw2, kind):
    ids = {raw.call("CLIENT", "ID"), raw2.call("CLIENT", "ID")}
    assert ids <= set(listed_ids(raw.call("CLIENT", "LIST", "TYPE", kind)))


@pytest.mark.parametrize("kind", ["master", "replica", "slave", "pubsub", "PUBSUB"])
def test_client_list_other_types_are_empty(raw, kind):
    assert raw.call_raw("CLIENT", "LIST", "TYPE", kind) == b"$0\r\n\r\n"


@pytest.mark.parametrize("command, error", [
    (["CLIENT", "LIST", "TYPE", "bogus"], E("ERR Unknown client type 'bogus'")),
    (["CLIENT", "LIST", "TYPE", "a\0b"], E("ERR Unknown client type 'a'")),
    (["CLIENT", "LIST", "TYPE"], E("ERR syntax error")),
    (["CLIENT", "LIST", "TYPE", "normal", "x"], E("ERR syntax error")),
    (["CLIENT", "LIST", "TYPE", "normal", "ID", "1"], E("ERR syntax error")),
    (["CLIENT", "LIST", "ID"], E("ERR syntax error")),
    (["CLIENT", "LIST", "ID", "x"], E("ERR Invalid client ID")),
    (["CLIENT", "LIST", "ID", "1", "x"], E("ERR Invalid client ID")),
    (["CLIENT", "LIST", "ID", "+3"], E("ERR Invalid client ID")),
    (["CLIENT", "LIST", "ID", "1.5"], E("ERR Invalid client ID")),
    (["CLIENT", "LIST", "bogus", "x"], E("ERR syntax error")),
    (["CLIENT", "KILL", "ID", "x"], E("ERR client-id should be greater than 0")),
    (["CLIENT", "KILL", "ID", "0"], E("ERR client-id should be greater than 0")),
    (["CLIENT", "KILL", "ID", "-1"], E("ERR client-id should be greater than 0")),
], ids=lambda v: "-".join(v) if isinstance(v, list) else None)
def test_client_list_and_kill_errors(raw, command, error):
    assert raw.call(*command) == error


def test_client_list_id(raw, raw2):
    me, other = raw.call("CLIENT", "ID"), raw2.call("CLIENT", "ID")
    assert listed_ids(raw.call("CLIENT", "LIST", "ID", other)) == [other]
    # In the order asked, repeats included; ids that match no client add nothing.
    assert listed_ids(raw.call("CLIENT", "LIST", "ID", other, 999999, me, other)) == [other, me, other]
    assert raw.call_raw("CLIENT", "LIST", "ID", "0", "-5", "999999") == b"$0\r\n\r\n"
    assert raw.call("CLIENT", "KILL", "ID", 999999) == 0


# ---- HELP ------------------------------------------------------------------------------

COMMAND_HELP = [
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
]

CONFIG_HELP = [
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
]

OBJECT_HELP = [
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
]


def simple_string_array(lines):
    return b"*%d\r\n" % len(lines) + b"".join(b"+" + line.encode() + b"\r\n" for line in lines)


@pytest.mark.parametrize("command, lines", [
    (["COMMAND", "HELP"], COMMAND_HELP),
    (["command", "help"], COMMAND_HELP),
    (["CONFIG", "HELP"], CONFIG_HELP),
    (["OBJECT", "HELP"], OBJECT_HELP),
], ids=lambda v: "-".join(v) if isinstance(v, list) and len(v) == 2 else "")
def test_help_texts_are_redis_words(raw, command, lines):
    assert raw.call_raw(*command) == simple_string_array(lines)


def test_every_help_ends_with_help(raw):
    assert raw.call("CLIENT", "HELP")[-2:] == ["HELP", "    Prints this help."]


# ---- COMMAND INFO: ACL categories --------------------------------------------------------

ACL_CATEGORIES = {
    "@fast @connection": ["ping", "echo", "quit", "auth", "hello", "select"],
    "@slow": ["client", "object", "config"],
    "@slow @connection": ["command"],
    "@fast": ["time"],
    "@admin @slow @dangerous": ["shutdown", "debug"],
    "@slow @dangerous": ["info"],
    "@keyspace @write @slow": ["del", "rename", "copy"],
    "@keyspace @write @fast": ["unlink", "expire", "pexpire", "expireat", "pexpireat", "persist", "renamenx",
                               "move"],
    "@keyspace @read @fast": ["exists", "touch", "type", "ttl", "pttl", "expiretime", "pexpiretime", "dbsize"],
    "@keyspace @read @slow": ["scan", "randomkey"],
    "@keyspace @read @slow @dangerous": ["keys"],
    "@keyspace @write @slow @dangerous": ["flushdb", "flushall"],
    "@keyspace @write @fast @dangerous": ["swapdb"],
    "@read @string @fast": ["get", "strlen", "mget"],
    "@read @string @slow": ["getrange"],
    "@write @string @slow": ["set", "setex", "psetex", "setrange", "mset", "msetnx"],
    "@write @string @fast": ["setnx", "getset", "getdel", "getex", "append", "incr", "decr", "incrby", "decrby",
                             "incrbyfloat"],
}


@pytest.mark.parametrize("categories, names", ACL_CATEGORIES.items(), ids=list(ACL_CATEGORIES))
def test_command_info_acl_categories(raw, categories, names):
    infos = raw.call("COMMAND", "INFO", *names)
    assert {info[0].decode(): " ".join(info[6]) for info in infos} == {name: categories for name in names}


@pytest.mark.parametrize("name", ["client", "config", "object"])
def test_command_info_container_has_no_flags_or_keys(raw, name):
    """A container's flags, keys and categories are its subcommands' (lapse does not list those)."""
    (info,) = raw.call("COMMAND", "INFO", name)
    assert info[:7] == [name.encode(), -2, [], 0, 0, 0, ["@slow"]]


def test_command_info_get_and_set(raw):
    (get,) = raw.call("COMMAND", "INFO", "get")
    assert get[:7] == [b"get", 2, ["readonly", "fast"], 1, 1, 1, ["@read", "@string", "@fast"]]
    (set_,) = raw.call("COMMAND", "INFO", "set")
    assert set_[:7] == [b"set", -3, ["write", "denyoom"], 1, 1, 1, ["@write", "@string", "@slow"]]


@pytest.mark.lapse_only  # Redis 7.2's subcommand; Redis 7.0 answers "unknown subcommand"
@pytest.mark.parametrize("args, reply", [
    (("LIB-NAME", "redis-py"), "OK"), (("lib-ver", "5.0.1"), "OK"), (("LIB-NAME", ""), "OK"),
    (("LIB-NAME", "a b"), E("ERR LIB-NAME cannot contain spaces, newlines or special characters.")),
    (("lib-ver", "1\n2"), E("ERR lib-ver cannot contain spaces, newlines or special characters.")),
    (("lib-ver", "\xe9"), E("ERR lib-ver cannot contain spaces, newlines or special characters.")),
    (("NAME", "x"), E("ERR Unrecognized option 'NAME'")),
])
def test_client_setinfo_checks_as_redis_7_2(raw, args, reply):
    assert raw.call("CLIENT", "SETINFO", *args) == reply
