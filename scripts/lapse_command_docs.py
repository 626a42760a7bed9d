"""COMMAND DOCS and COMMAND INFO metadata of lapse's own commands, written by hand in the form
Redis 7.0 gives its own (argument types, tokens, optional/multiple flags, nested oneof and block
arguments, key specs). gen_command_metadata.py turns it into server/command_metadata_lapse.cc.

redis-cli builds its hints and HELP from COMMAND DOCS, so the arguments here are what a user
sees while typing: `IPUT c id json [NX|XX] [IFMATCH etag]`.

Containers are not Redis keys, but ACL key patterns apply to container names and a transaction
routes by them, so each container argument is described by a key spec (index 1, one key) with
the flags a key of the same access would have.
"""

LAPSE_SINCE = "0.1.0"


# ---- values, as RESP3 types them ----

def bulk(s):
    return ("$", s)


def simple(s):
    return ("+", s)


def integer(n):
    return (":", n)


def rmap(*pairs):
    return ("%", [x for k, v in pairs for x in (bulk(k), v)])


def rset(items):
    return ("~", list(items))


def array(items):
    return ("*", list(items))


# ---- arguments ----

def arg(name, type_, token=None, key_spec_index=None, optional=False, multiple=False, args=None, since=None,
        summary=None):
    pairs = [("name", bulk(name)), ("type", bulk(type_))]
    if key_spec_index is not None:
        pairs.append(("key_spec_index", integer(key_spec_index)))
    if token is not None:
        pairs.append(("token", bulk(token)))
    if summary is not None:
        pairs.append(("summary", bulk(summary)))
    if since is not None:
        pairs.append(("since", bulk(since)))
    flags = [simple(f) for f, on in (("optional", optional), ("multiple", multiple)) if on]
    if flags:
        pairs.append(("flags", rset(flags)))
    if args is not None:
        pairs.append(("arguments", array(args)))
    return rmap(*pairs)


def key(name, index=0):
    return arg(name, "key", key_spec_index=index)


def pure(token, optional=False):
    return arg(token.lower(), "pure-token", token=token, optional=optional)


def oneof(name, *choices, optional=False, token=None):
    return arg(name, "oneof", token=token, optional=optional, args=list(choices))


CONTAINER = key("container")
ITEM_ID = arg("id", "string")


def docs(summary, group, complexity, *args, since=LAPSE_SINCE):
    pairs = [("summary", bulk(summary)), ("since", bulk(since)), ("group", bulk(group)),
             ("complexity", bulk(complexity))]
    if args:
        pairs.append(("arguments", array(args)))
    return rmap(*pairs)


# ---- key specs ----

def key_spec(*flags, index=1):
    """One key at `index`, as most of lapse's commands name their container or key."""
    return rmap(("flags", rset(simple(f) for f in flags)),
                ("begin_search", rmap(("type", bulk("index")), ("spec", rmap(("index", integer(index)))))),
                ("find_keys", rmap(("type", bulk("range")), ("spec", rmap(("lastkey", integer(0)),
                                                                           ("keystep", integer(1)),
                                                                           ("limit", integer(0)))))))


def info_tail(*specs, tips=()):
    return [rset(bulk(t) for t in tips), rset(specs)]


READ = key_spec("RO", "access")
READ_NO_ACCESS = key_spec("RO")
WRITE = key_spec("RW", "update")
INSERT_OR_UPDATE = key_spec("RW", "access", "update")
DELETE = key_spec("RW", "delete")


# ---- the hash field TTL commands of Redis 7.4, in Redis 7.4's own words ----

def fields_block():
    return arg("fields", "block", token="FIELDS",
               args=[arg("numfields", "integer"), arg("field", "string", multiple=True)])


def hash_expire(summary, unit_name, unit_type):
    return docs(summary, "hash", "O(N) where N is the number of specified fields",
                key("key"), arg(unit_name, unit_type),
                oneof("condition", pure("NX"), pure("XX"), pure("GT"), pure("LT"), optional=True),
                fields_block(), since="7.4.0")


def hash_ttl(summary):
    return docs(summary, "hash", "O(N) where N is the number of specified fields", key("key"), fields_block(),
                since="7.4.0")


# name -> (docs, info head or None (taken from the command table), info tail)
COMMANDS = {
    "csetttl": (docs("Sets a container's DefaultTimeToLive in seconds: -1 (items never expire unless they say so), "
                     "1 to 2147483647, or OFF/NULL (no expiry at all). Creates the container.",
                     "container", "O(1)", CONTAINER,
                     oneof("ttl", arg("seconds", "integer"), pure("OFF"), pure("NULL"))),
                None, info_tail(WRITE)),
    "cgetttl": (docs("Returns a container's DefaultTimeToLive, or nil when it is off or there is no container.",
                     "container", "O(1)", CONTAINER),
                None, info_tail(READ_NO_ACCESS)),
    "csetru": (docs("Gives a container its own budget of request units per second, or OFF to share the server's.",
                    "container", "O(1)", CONTAINER,
                    oneof("budget", arg("ru-per-second", "integer"), pure("OFF"))),
               None, info_tail(WRITE)),
    "cgetru": (docs("Returns a container's own request-unit budget, or nil when it shares the server's.",
                    "container", "O(1)", CONTAINER),
               None, info_tail(READ_NO_ACCESS)),
    "csetevict": (docs("Lets maxmemory's allkeys-* policies evict a container's items (ON), or not (OFF, the "
                       "default).", "container", "O(1)", CONTAINER, oneof("evictable", pure("ON"), pure("OFF"))),
                  None, info_tail(WRITE)),
    "cinfo": (docs("Returns a container's settings, item counts, request-unit figures and reclamation state.",
                   "container", "O(1)", CONTAINER),
              None, info_tail(READ_NO_ACCESS)),
    "clist": (docs("Lists the containers of the selected database, sorted by name.", "container",
                   "O(N) where N is the number of containers"),
              None, info_tail()),
    "cdrop": (docs("Drops a container with all its items; their memory is freed in the background.",
                   "container", "O(1)", CONTAINER),
              None, info_tail(DELETE)),
    "cmove": (docs("Moves a container, with its items and settings, to another database.", "container", "O(1)",
                   CONTAINER, arg("db", "integer")),
              None, info_tail(key_spec("RW", "access", "delete"))),
    "iput": (docs("Writes a JSON item into a container, under conditions, and returns its new etag.",
                  "container", "O(N) where N is the size of the JSON document", CONTAINER, ITEM_ID,
                  arg("json", "string"), oneof("condition", pure("NX"), pure("XX"), optional=True),
                  arg("etag", "string", token="IFMATCH", optional=True)),
             None, info_tail(key_spec("RW", "update", "insert"))),
    "iget": (docs("Returns a live item of a container as JSON, with its id, _ts and _etag.", "container",
                  "O(N) where N is the size of the JSON document", CONTAINER, ITEM_ID),
             None, info_tail(READ)),
    "idel": (docs("Deletes items of a container and returns how many live items were deleted.", "container",
                  "O(N) where N is the number of items to delete", CONTAINER,
                  arg("id", "string", multiple=True)),
             None, info_tail(DELETE)),
    "ittl": (docs("Returns the seconds until an item expires: -1 never, -2 absent or expired.", "container", "O(1)",
                  CONTAINER, ITEM_ID),
             None, info_tail(READ)),
    "ipttl": (docs("Returns the milliseconds until an item expires: -1 never, -2 absent or expired.", "container",
                   "O(1)", CONTAINER, ITEM_ID),
              None, info_tail(READ)),
    "icount": (docs("Counts the live items of a container.", "container", "O(1)", CONTAINER),
               None, info_tail(READ_NO_ACCESS)),
    "iscan": (docs("Iterates over the live items of a container.", "container",
                   "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
                   "cursor to return back to 0. N is the number of items inside the container.",
                   CONTAINER, arg("cursor", "integer"), arg("count", "integer", token="COUNT", optional=True),
                   arg("pattern", "pattern", token="MATCH", optional=True)),
              None, info_tail(READ)),
    "ichanges": (docs("Reads a container's change feed from a point, waiting for changes when asked to.",
                      "container", "O(N) where N is the number of changes returned", CONTAINER,
                      oneof("from", pure("BEGINNING"), pure("NOW"), arg("token", "string"), token="FROM",
                            optional=True),
                      arg("count", "integer", token="COUNT", optional=True),
                      arg("milliseconds", "integer", token="BLOCK", optional=True)),
                 None, info_tail(READ)),
    "lastcharge": (docs("Returns the request-unit charge of the previous command on this connection.", "container",
                        "O(1)"),
                   None, info_tail()),
    "hexpire": (hash_expire("Set expiry for hash field using relative time to expire (seconds)", "seconds",
                            "integer"), None, info_tail(WRITE)),
    "hpexpire": (hash_expire("Set expiry for hash field using relative time to expire (milliseconds)",
                             "milliseconds", "integer"), None, info_tail(WRITE)),
    "hexpireat": (hash_expire("Set expiry for hash field using an absolute Unix timestamp (seconds)",
                              "unix-time-seconds", "unix-time"), None, info_tail(WRITE)),
    "hpexpireat": (hash_expire("Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
                               "unix-time-milliseconds", "unix-time"), None, info_tail(WRITE)),
    "httl": (hash_ttl("Returns the TTL in seconds of a hash field."), None, info_tail(READ_NO_ACCESS)),
    "hpttl": (hash_ttl("Returns the TTL in milliseconds of a hash field."), None, info_tail(READ_NO_ACCESS)),
    "hexpiretime": (hash_ttl("Returns the expiration time of a hash field as a Unix timestamp, in seconds."),
                    None, info_tail(READ_NO_ACCESS)),
    "hpexpiretime": (hash_ttl("Returns the expiration time of a hash field as a Unix timestamp, in msec."),
                     None, info_tail(READ_NO_ACCESS)),
    "hpersist": (hash_ttl("Removes the expiration time for each specified field"), None, info_tail(WRITE)),
    # Redis 7.2's, which lapse has and Redis 7.0 lacks: metadata and flags as Redis 7.2 gives them.
    "client|setinfo": (docs("Set client or connection specific info", "connection", "O(1)",
                            oneof("attr", arg("libname", "string", token="LIB-NAME"),
                                  arg("libver", "string", token="LIB-VER")), since="7.2.0"),
                       [bulk("client|setinfo"), integer(4), rset([simple("noscript"), simple("loading"),
                                                                  simple("stale")]),
                        integer(0), integer(0), integer(0), rset([simple("@slow"), simple("@connection")])],
                       info_tail()),
}
