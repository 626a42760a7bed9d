#!/usr/bin/python3
"""Generates server/command_metadata_redis.cc: COMMAND DOCS and COMMAND INFO of every Redis 7.0
command, as Debian's redis-server 7.0.15 answers them, so that lapse answers the same bytes;
and server/command_metadata_lapse.cc, the same for lapse's own commands, from the metadata
written by hand in scripts/lapse_command_docs.py.

Run by a developer, never by the build (which must not need redis-server):

    /usr/bin/python3 scripts/gen_command_metadata.py              # starts a redis-server itself
    /usr/bin/python3 scripts/gen_command_metadata.py --port 6379  # or reads a running one
    /usr/bin/python3 scripts/gen_command_metadata.py --lapse-only # lapse's own: no redis-server

The replies are read in RESP3, so that maps, sets and simple strings keep their types, and
stored as compact token strings that server/command_metadata.cc writes back in RESP2 or RESP3
(the format is described in server/command_metadata.h).
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SEPARATOR = "^"
TYPED = "%*~:+$"  # a token starting with one of these is typed; any other is a bulk string
HERE = os.path.dirname(os.path.abspath(__file__))
REDIS_OUTPUT = os.path.join(HERE, "..", "server", "command_metadata_redis.cc")
LAPSE_OUTPUT = os.path.join(HERE, "..", "server", "command_metadata_lapse.cc")


class Resp3:
    """A minimal RESP3 client that keeps the reply's types: (type char, value)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""
        self.call("HELLO", "3")

    def call(self, *args):
        self.sock.sendall(b"*%d\r\n" % len(args) +
                          b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args))
        return self._read()

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(1 << 20)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _read(self):
        line = self._line()
        kind, rest = chr(line[0]), line[1:]
        if kind in "*~%":
            n = int(rest) * (2 if kind == "%" else 1)
            return kind, [self._read() for _ in range(n)]
        if kind == "$":
            n = int(rest)
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return kind, data.decode()
        if kind == ":":
            return kind, int(rest)
        if kind in "+-":
            return kind, rest.decode()
        if kind == "=":  # verbatim: "txt:" and the text
            n = int(rest)
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            data, self.buf = self.buf[4:n], self.buf[n + 2:]
            return kind, data.decode()
        raise ValueError(f"unexpected RESP3 type {kind!r}")


def tokens(value):
    kind, v = value
    if kind in "*~%":
        out = [f"{kind}{len(v) // 2 if kind == '%' else len(v)}"]
        for item in v:
            out += tokens(item)
        return out
    if kind == ":":
        return [f":{v}"]
    if kind == "+":
        return ["+" + v]
    assert SEPARATOR not in v and '"' not in v and "\\" not in v and "\n" not in v, v
    return ["$" + v if v[:1] and v[0] in TYPED else v]


def pairs(map_value):
    items = map_value[1]
    return [(items[i][1], items[i + 1]) for i in range(0, len(items), 2)]


def docs_tokens(docs):
    """The docs map without its subcommands (lapse lists only the subcommands it has)."""
    fields = [(k, v) for k, v in pairs(docs) if k != "subcommands"]
    out = [f"%{len(fields)}"]
    for k, v in fields:
        out += tokens(("$", k)) + tokens(v)
    return out


def cxx_literal(toks, indent):
    """Adjacent string literals of at most ~100 characters, split between tokens."""
    text = SEPARATOR.join(toks)
    lines, line = [], ""
    for piece in text.split(SEPARATOR):
        chunk = (SEPARATOR if line or lines else "") + piece
        if line and len(line) + len(chunk) > 100:
            lines.append(line)
            line = chunk
        else:
            line += chunk
    lines.append(line)
    return ("\n" + " " * indent).join(f'"{l}"' for l in lines)


def collect(conn):
    """name -> (docs tokens, info head tokens (7 fields), info tail tokens (tips, key specs))."""
    docs = {}

    def walk_docs(name, value):
        docs[name] = docs_tokens(value)
        for k, v in pairs(value):
            if k == "subcommands":
                for sub, sub_docs in pairs(v):
                    walk_docs(sub, sub_docs)

    for name, value in pairs(conn.call("COMMAND", "DOCS")):
        walk_docs(name, value)
    out = {}

    def walk_info(entry):
        fields = entry[1]
        name = fields[0][1]
        head = [t for f in fields[:7] for t in tokens(f)]
        tail = [t for f in fields[7:9] for t in tokens(f)]
        out[name] = (docs[name], head, tail)
        for sub in fields[9][1]:
            walk_info(sub)

    for entry in conn.call("COMMAND", "INFO")[1]:
        walk_info(entry)
    return out, conn.call("INFO", "server")[1]


def write(path, metadata, source, function):
    lines = [
        "// generated by scripts/gen_command_metadata.py from " + source + "; do not edit.",
        "//",
        "// COMMAND DOCS and COMMAND INFO metadata, in the token format of server/command_metadata.h.",
        '#include "server/command_metadata.h"',
        "",
        "namespace lapse::server {",
        "",
        f"const std::vector<CommandMetadata>& {function}() {{",
        "  static const std::vector<CommandMetadata> metadata = {",
    ]
    for name in sorted(metadata):
        docs, head, tail = metadata[name]
        lines.append(f'      {{"{name}",')
        lines.append("       " + cxx_literal(docs, 7) + ",")
        lines.append("       " + (cxx_literal(head, 7) if head else '""') + ",")
        lines.append("       " + cxx_literal(tail, 7) + "},")
    lines += ["  };", "  return metadata;", "}", "", "}  // namespace lapse::server", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"{len(metadata)} commands and subcommands written to {os.path.normpath(path)}")


def lapse_metadata():
    sys.path.insert(0, HERE)
    import lapse_command_docs
    out = {}
    for name, (docs, head, tail) in lapse_command_docs.COMMANDS.items():
        out[name] = (docs_tokens(docs), [t for v in head for t in tokens(v)] if head else [],
                     [t for v in tail for t in tokens(v)])
    return out


def start_redis():
    port_sock = socket.socket()
    port_sock.bind(("127.0.0.1", 0))
    port = port_sock.getsockname()[1]
    port_sock.close()
    workdir = tempfile.mkdtemp()
    proc = subprocess.Popen([shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port),
                             "--save", "", "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, help="read a running redis-server instead of starting one")
    parser.add_argument("--lapse-only", action="store_true", help="write only lapse's own commands' metadata")
    args = parser.parse_args()
    write(LAPSE_OUTPUT, lapse_metadata(), "scripts/lapse_command_docs.py", "LapseCommandMetadata")
    if args.lapse_only:
        return
    proc, port = (None, args.port) if args.port else start_redis()
    try:
        metadata, info = collect(Resp3(port))
    finally:
        if proc:
            proc.terminate()
            proc.wait()
    version = next(l.split(":")[1] for l in info.splitlines() if l.startswith("redis_version:"))
    if not version.startswith("7.0."):
        sys.exit(f"redis-server {version}: lapse follows Redis 7.0")
    write(REDIS_OUTPUT, metadata, f"redis-server {version}", "RedisCommandMetadata")


if __name__ == "__main__":
    main()
