"""Redis 7.0's error replies that many integration tests expect, written once. Each test file
still spells out the errors only it meets."""
from lapse_harness import RespError as E

SYNTAX = E("ERR syntax error")
NOT_INT = E("ERR value is not an integer or out of range")
NOT_FLOAT = E("ERR value is not a valid float")
OVERFLOW = E("ERR increment or decrement would overflow")
NAN_INF = E("ERR increment would produce NaN or Infinity")


def arity(command):
    return E(f"ERR wrong number of arguments for '{command}' command")


def invalid_expire(command):
    return E(f"ERR invalid expire time in '{command}' command")
