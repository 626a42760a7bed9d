// Blocking sorted-set pops: BZPOPMIN, BZPOPMAX and BZMPOP (server/blocking.h). Each serves
// itself through one function, on arrival or later when a write gives a key it waits on
// members, popping with PopZSet as ZPOPMIN/ZMPOP do (server/zset_pop.h).
//
// Request units: the popped members' bytes at the delete rate, charged when served; nothing
// while blocked.
#include <string>
#include <vector>

#include "engine/shard.h"
#include "protocol/reply_writer.h"
#include "server/blocking.h"
#include "server/command_table.h"
#include "server/mpop_args.h"
#include "server/server.h"
#include "server/zset_pop.h"

namespace lapse::server {

namespace {

using engine::Entry;
using engine::ValueType;

// Pops up to `count` from the sorted set under the attempt's key, in `shape`.
ServeFn ServeZPop(bool from_max, size_t count, PopReplyShape shape) {
  return [from_max, count, shape](ServeAttempt& a) {
    Entry* e = a.db.Find(a.key, a.now_ms);
    if (e == nullptr) return ServeResult::kNotReady;
    if (e->type() != ValueType::kZSet) return ServeResult::kWrongType;
    if (!a.Claim()) return ServeResult::kClaimLost;
    std::vector<ZPopped> popped = PopZSet(a.server, a.db, a.key, from_max, count, a.now_ms);
    size_t bytes = a.key.size();
    for (const ZPopped& p : popped) bytes += p.member.size();
    a.charge.Add(engine::RuOp::kDelete, bytes);
    protocol::ReplyWriter reply = a.Reply();
    ReplyPopped(reply, shape, a.key, popped);
    return ServeResult::kServed;
  };
}

// BZPOPMIN/BZPOPMAX key [key ...] timeout
awaitable<void> BlockingZPop(ConnCommand& c, bool from_max) {
  int64_t timeout = 0;
  if (!ParseBlockTimeout(c.args.back(), &timeout, c.reply)) return Answered();
  BlockRequest request;
  request.keys.assign(c.args.begin() + 1, c.args.end() - 1);
  request.timeout_ms = timeout;
  request.serve = ServeZPop(from_max, 1, PopReplyShape::kKeyFlat);
  return BlockOn(c, std::move(request));
}

awaitable<void> CmdBZPopMin(ConnCommand& c) { return BlockingZPop(c, false); }
awaitable<void> CmdBZPopMax(ConnCommand& c) { return BlockingZPop(c, true); }

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
awaitable<void> CmdBZMPop(ConnCommand& c) {
  // Redis checks the rest before the timeout.
  MPopArgs parsed;
  if (!ParseMPopArgs(c.args, 2, "MIN", "MAX", &parsed, c.reply)) return Answered();
  int64_t timeout = 0;
  if (!ParseBlockTimeout(c.args[1], &timeout, c.reply)) return Answered();
  BlockRequest request;
  request.keys = parsed.keys;
  request.timeout_ms = timeout;
  request.serve = ServeZPop(parsed.second_end, static_cast<size_t>(parsed.count), PopReplyShape::kKeyNested);
  return BlockOn(c, std::move(request));
}

}  // namespace

void RegisterZSetBlockingCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kF = kFast, kB = kBlocking, kNS = kNoScript;
  const char* g = "sorted-set";
  table.Add({"bzpopmin", -3, kW | kNS | kB | kF, 1, -2, 1, CmdBZPopMin, g, "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."});
  table.Add({"bzpopmax", -3, kW | kNS | kB | kF, 1, -2, 1, CmdBZPopMax, g, "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped."});
  table.Add({"bzmpop", -5, kW | kB, 0, 0, 0, CmdBZMPop, g, "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."});
}

}  // namespace lapse::server
