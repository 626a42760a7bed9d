// File: server/dirty_count.h
//
// How many changes a write command made, as Redis counts them in server.dirty: the counter
// behind INFO's rdb_changes_since_last_save and the `save <seconds> <changes>` rules.
// Redis adds one per element or key a command changed (MSET of 3 keys adds 3, SADD of 3 new
// members 3, DEL of 2 existing keys 2) and nothing for a write that changed nothing (SET NX
// on an existing key, EXPIRE of a missing key, SREM of absent members).
//
// The engine's handlers do not report a count, so it is read from what is visible after the
// command ran: its name, its arguments and its reply. Most commands say what they changed in
// their reply (an integer count, a nil, the popped elements); a few take it from their
// arguments (MSET, HSET and the pushes change one thing per argument pair or element).
// Where neither tells (ZADD without CH counts updated scores, LTRIM the elements removed,
// PFADD the registers raised, SMOVE one change less when the destination had the member),
// the handler counts them (ShardCommand::changes). FLUSHDB and FLUSHALL count the keys they
// removed themselves (server/keyspace_commands.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "server/command_table.h"

namespace lapse::server {

// The changes made by the write command `name` (lower case, as in the command table) called
// with `args` (the name first) that replied `reply` (RESP2 or RESP3) without an error.
uint64_t DirtyChanges(std::string_view name, Args args, std::string_view reply);

}  // namespace lapse::server
