"""Redis 7.0's error replies that many integration tests expect, written once. Each test file
still spells out the errors only it meets."""
import hashlib

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


# ACL refusals (test_acl.py, test_acl_selectors.py).
NOPERM_KEY = E("NOPERM this user has no permissions to access one of the keys used as arguments")
NOPERM_CHANNEL = E("NOPERM this user has no permissions to access one of the channels used as arguments")


def noperm_command(name):
    return E(f"NOPERM this user has no permissions to run the '{name}' command")


def acl_password_hash(password):
    """What `#<hash>` takes and ACL GETUSER shows for a password: its SHA-256 in hex."""
    return hashlib.sha256(password.encode()).hexdigest()
