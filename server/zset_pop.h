// File: server/zset_pop.h
//
// Popping from a sorted set's ends: what ZPOPMIN, ZPOPMAX and ZMPOP do once they have found
// their key, shared with the blocking forms (BZPOPMIN, BZPOPMAX, BZMPOP), which call it when
// a key they wait on receives members. Defined in zset_commands.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/db.h"
#include "protocol/reply_writer.h"

namespace lapse::server {

class Server;

struct ZPopped {
  std::string member;
  double score;
};

// Pops up to `count` elements from the sorted set under `key` in `db`: the lowest scores
// first, or the highest first when `from_max`. The key must hold a sorted set or be absent
// (the caller checks the type: WRONGTYPE is its reply); absent gives nothing. Touches the
// key for WATCH (and blocked clients) when anything was popped, and deletes it when it is
// left empty, as Redis does; reports `zpopmin`/`zpopmax` (and `del`) to `server`'s keyspace
// events.
std::vector<ZPopped> PopZSet(const Server& server, engine::Db& db, std::string_view key, bool from_max, size_t count,
                             int64_t now_ms);

// How Redis 7.0 shapes a pop's reply (genericZpopCommand):
//   kFlat        member, score, member, score ...   (ZPOPMIN/ZPOPMAX in RESP2, or without a
//                                                     count in RESP3)
//   kNested      [member, score], ...                (ZPOPMIN/ZPOPMAX with a count in RESP3)
//   kKeyFlat     key, member, score ...              (BZPOPMIN/BZPOPMAX, both protocols)
//   kKeyNested   [key, [[member, score], ...]]       (ZMPOP/BZMPOP, both protocols)
enum class PopReplyShape { kFlat, kNested, kKeyFlat, kKeyNested };
void ReplyPopped(protocol::ReplyWriter& reply, PopReplyShape shape, std::string_view key, const std::vector<ZPopped>& popped);

}  // namespace lapse::server
