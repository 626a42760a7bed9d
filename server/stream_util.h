// File: server/stream_util.h
//
// What the stream command files (stream_commands.cc, stream_read_commands.cc,
// stream_group_commands.cc) share: Redis's ways of reading a stream id argument, and the
// reply shapes of entries and of XREAD-style per-stream results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/stream.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/keyspace_events.h"

namespace lapse::server {

// The class of a consumer-group event (XGROUP, and the consumers XREADGROUP, XCLAIM and
// XAUTOCLAIM create): Redis 7.0 publishes it without signalModifiedKey, so it leaves
// client-side caches alone.
inline constexpr uint32_t kStreamGroupEvent = kEventStream | kEventKeepsCaches;

inline constexpr std::string_view kInvalidStreamId = "ERR Invalid stream ID specified as stream command argument";

// An id argument, as Redis's streamGenericParseIDOrReply reads it: `strict` refuses the bare
// "-" and "+"; `seq_given`, when not null, admits "<ms>-*" (and says whether the sequence was
// given). Replies Redis's error and returns false on bad input.
bool ParseId(std::string_view arg, uint64_t missing_seq, bool strict, engine::StreamId* id, bool* seq_given,
             protocol::ReplyWriter& reply);
bool ParseStrictId(std::string_view arg, engine::StreamId* id, protocol::ReplyWriter& reply);
// An XRANGE/XPENDING bound: "-", "+", an id, or "(" and a strict id (exclusive).
bool ParseIntervalId(std::string_view arg, uint64_t missing_seq, engine::StreamId* id, bool* exclusive,
                     protocol::ReplyWriter& reply);
// Redis's getLongLongFromObjectOrReply.
bool ParseLongLong(std::string_view text, int64_t* out, protocol::ReplyWriter& reply);

// One entry: [id, [field, value, ...]].
void ReplyEntry(protocol::ReplyWriter& reply, engine::StreamId id, std::span<const std::string_view> field_values);
// The live entries in [start, end] (descending when `reverse`), at most `count` (0: all), as
// an array; returns the bytes written, for the charge.
size_t ReplyRange(protocol::ReplyWriter& reply, const engine::Stream& s, engine::StreamId start, engine::StreamId end,
                  bool reverse, size_t count);
// The header of XREAD's and XREADGROUP's result: an array of [key, entries] pairs in RESP2,
// a map of key -> entries in RESP3.
void StreamsHeader(protocol::ReplyWriter& reply, size_t n);

// Registered by RegisterStreamCommands.
void RegisterStreamReadCommands(CommandTable& table);
void RegisterStreamGroupCommands(CommandTable& table);

}  // namespace lapse::server
