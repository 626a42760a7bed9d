// File: server/command_metadata.h
//
// What COMMAND DOCS and COMMAND INFO tell about a command beyond the command table: its
// documentation (summary, since, complexity, history, arguments ...), Redis's command flags
// and ACL categories, its tips and its key specs. redis-cli builds its hints and its HELP from
// COMMAND DOCS, and cluster-aware clients locate keys with the key specs of COMMAND INFO.
//
// Redis's commands carry Redis 7.0.15's own replies, captured by
// scripts/gen_command_metadata.py into command_metadata_redis.cc (generated, do not edit);
// lapse's own commands carry metadata written by hand in command_metadata_lapse.cc. Both keep a
// reply as a token string, which is about half the size of the RESP3 bytes and needs no
// escaping in C++: tokens separated by '^', each one value of the reply, in order:
//
//   %N  a map of N pairs        *N  an array of N         ~N  a set of N
//   :N  an integer              +s  a simple string        $s  a bulk string
//   anything else               a bulk string (so "$" escapes a text that starts with %*~:+$)
//
// Headers work in both protocols: the reply writer turns maps and sets into RESP2 arrays, as
// Redis does. Only COMMAND reads this metadata; dispatch never does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_table.h"

namespace lapse::protocol {
class ReplyWriter;
}

namespace lapse::server {

struct CommandMetadata {
  std::string_view name;  // full and lower case: "set", "client|list"
  // COMMAND DOCS's map for the command, without its "subcommands" field: lapse lists only the
  // subcommands it has.
  std::string_view docs;
  // COMMAND INFO's first seven fields (name, arity, flags, first, last and step key, ACL
  // categories). Empty for lapse's own commands, which take them from the command table.
  std::string_view info_head;
  // COMMAND INFO's tips and key specs.
  std::string_view info_tail;
};

// Generated from redis-server (command_metadata_redis.cc), and written by hand for the
// commands Redis 7.0 lacks (command_metadata_lapse.cc); sorted by name.
const std::vector<CommandMetadata>& RedisCommandMetadata();
const std::vector<CommandMetadata>& LapseCommandMetadata();

// lapse's own metadata first; nullptr when there is none for `full_name`.
const CommandMetadata* FindCommandMetadata(std::string_view full_name);

// Writes the values that `tokens` encode.
void WriteMetadataTokens(protocol::ReplyWriter& reply, std::string_view tokens);

// The number of pairs of the map that a docs token string starts with.
size_t DocsFieldCount(std::string_view docs);

// A key spec of COMMAND INFO, as COMMAND GETKEYS interprets it (Redis 7.0's rules).
struct KeySpec {
  std::vector<std::string_view> flags;  // as COMMAND INFO lists them: "RW", "access", ...
  bool HasFlag(std::string_view flag) const;
  // begin_search: "index" (`index`), "keyword" (`keyword` searched from `startfrom`, backwards
  // when negative) or "unknown".
  std::string_view begin_type;
  int64_t index = 0;
  std::string_view keyword;
  int64_t startfrom = 0;
  // find_keys: "range" (lastkey, keystep, limit), "keynum" (keynumidx, firstkey, keystep) or
  // "unknown".
  std::string_view find_type;
  int64_t lastkey = 0, keystep = 1, limit = 0, keynumidx = 0, firstkey = 0;
};

// The key specs of an info_tail token string.
std::vector<KeySpec> ParseKeySpecs(std::string_view info_tail);

// The command's key specs, parsed once per process (ACL checks every key of a restricted
// user's every command by them); none for nullptr.
const std::vector<KeySpec>& KeySpecsOf(const CommandMetadata* meta);

// A key COMMAND GETKEYS found: its argument index and the flags GETKEYSANDFLAGS shows.
struct FoundKey {
  size_t index;
  std::vector<std::string_view> flags;
};

// COMMAND GETKEYS's keys for `args` (the command's name first); none where Redis finds none.
// `specs` are the command's; `name` is its full name, which picks Redis's own key finder where
// the specs cannot tell (SORT's STORE, SET's GET, an unparsable numkeys ...).
std::vector<FoundKey> FindKeys(std::string_view name, const std::vector<KeySpec>& specs, Args args);

// Whether COMMAND GETKEYS may find keys for the command (Redis's doesCommandHaveKeys).
bool CommandMayHaveKeys(std::string_view name, const std::vector<KeySpec>& specs);

}  // namespace lapse::server
