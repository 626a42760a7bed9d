"""rename-command in the config file: `rename-command FLUSHALL ""` disables FLUSHALL and
`rename-command GET FETCH` moves GET to FETCH, as in Redis 7.0 (LAPSE_TARGET=redis runs the
same file against redis-server)."""
import os
import tempfile

import pytest

from conftest import running_server
from lapse_harness import target_kind
from lapse_harness import RespError as E

CONF = '# lapse test config\nrename-command FLUSHALL ""\nrename-command GET FETCH\n'
INVALID_COMMAND = E("ERR Invalid command specified")


def write_conf(text):
    fd, path = tempfile.mkstemp(prefix="lapse-rename-", suffix=".conf")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="module")
def server():
    path = write_conf(CONF)
    try:
        with running_server(options={"threads": 2}, config_file=path) as srv:
            yield srv
    finally:
        os.unlink(path)


@pytest.fixture
def c(server):
    server.assert_alive()
    with server.client() as client:
        assert client.call("FLUSHDB") == "OK"
        yield client
    server.assert_alive()


def test_disabled_command_is_unknown(c):
    assert c.call("SET", "k", "v") == "OK"
    assert c.call("FLUSHALL") == E("ERR unknown command 'FLUSHALL', with args beginning with: ")
    assert c.call("flushall", "async") == E("ERR unknown command 'flushall', with args beginning with: 'async' ")
    assert c.call("FETCH", "k") == b"v"  # nothing was flushed
    assert c.call("FLUSHDB") == "OK"  # its neighbours are untouched
    assert c.call("DBSIZE") == 0


def test_renamed_command_answers_under_its_new_name_only(c):
    assert c.call("SET", "k", "v") == "OK"
    assert c.call("FETCH", "k") == b"v"
    assert c.call("fetch", "k") == b"v"
    assert c.call("FeTcH", "nokey") is None
    assert c.call("GET", "k") == E("ERR unknown command 'GET', with args beginning with: 'k' ")
    assert c.call("get", "k") == E("ERR unknown command 'get', with args beginning with: 'k' ")
    assert c.call("GETSET", "k", "w") == b"v"  # a command whose name starts with the old one
    assert c.call("FETCH", "k") == b"w"


def test_command_count_and_info_follow_the_table(c):
    with running_server(options={"threads": 2}) as plain, plain.client() as p:
        plain_count = p.call("COMMAND", "COUNT")
        assert p.call("COMMAND", "INFO", "flushall")[0][0] == b"flushall"
    count = c.call("COMMAND", "COUNT")
    assert count == plain_count - 1  # FLUSHALL is gone, GET only moved
    everything = c.call("COMMAND")
    assert len(everything) == count
    names = [entry[0] for entry in everything]
    assert b"flushall" not in names
    assert b"flushdb" in names
    assert c.call("COMMAND", "INFO", "flushall") == [None]
    info = c.call("COMMAND", "INFO", "FLUSHALL", "set")
    assert info[0] is None and info[1][0] == b"set"
    assert c.call("COMMAND", "GETKEYS", "FETCH", "k") == [b"k"]
    assert c.call("COMMAND", "GETKEYS", "GET", "k") == INVALID_COMMAND
    assert c.call("COMMAND", "GETKEYS", "FLUSHALL", "ASYNC") == INVALID_COMMAND


def test_renamed_command_keeps_its_original_name_in_replies(c):
    # Redis 7.0 finds the command by its new name but keeps calling it by its own: the
    # arity error, COMMAND INFO and COMMAND say 'get'.
    assert c.call("FETCH") == E("ERR wrong number of arguments for 'get' command")
    info = c.call("COMMAND", "INFO", "get", "fetch")
    assert info[0] is None and info[1][:2] == [b"get", 2]
    names = [entry[0] for entry in c.call("COMMAND")]
    assert b"get" in names and b"fetch" not in names


def _startup_error(start_server, conf):
    path = write_conf(conf)
    try:
        with pytest.raises(RuntimeError) as excinfo:
            start_server(config_file=path)
        return str(excinfo.value)
    finally:
        os.unlink(path)


def test_rename_of_unknown_command_refuses_to_start(start_server):
    assert "No such command in rename-command" in _startup_error(start_server, "rename-command NOSUCH foo\n")


def test_rename_onto_existing_command_refuses_to_start(start_server):
    assert "Target command name already exists" in _startup_error(start_server, "rename-command GET SET\n")


def test_rename_command_needs_two_arguments(start_server):
    message = _startup_error(start_server, "rename-command GET\n")
    if target_kind() == "redis":
        assert "Bad directive or wrong number of arguments" in message
    else:
        assert "line 1: rename-command needs two arguments" in message
