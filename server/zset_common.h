// File: server/zset_common.h
//
// What the sorted-set command files share (zset_commands.cc, which defines these, and
// zset_algebra_commands.cc): elements in reply form, their request-unit size, and the
// lookups of a command that holds several shards for one atomic step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/db.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/key_util.h"

namespace lapse::server {

// Registers ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD; called by
// RegisterZSetCommands, so that the table keeps Redis's family order.
void RegisterZSetAlgebraCommands(CommandTable& table);

namespace zset_family {

using Elements = std::vector<std::pair<std::string, double>>;

// Elements in reply form: flat member/score pairs in RESP2, [member, score] arrays in RESP3.
void ReplyElements(protocol::ReplyWriter& reply, const Elements& elements, bool with_scores);
// The bytes charged for `elements`: each member and its 8-byte score.
size_t ElementBytes(const Elements& elements);

// For a command holding the shards of several keys: the shards of args[i] for each index,
// the client's database of `key`, and `key`'s entry there.
std::vector<uint32_t> ShardsOf(ConnCommand& c, const std::vector<size_t>& indexes);
engine::Db& DbFor(ConnCommand& c, std::string_view key);
engine::Entry* FindIn(ConnCommand& c, std::string_view key, int64_t now, Lookup kind);

}  // namespace zset_family
}  // namespace lapse::server
