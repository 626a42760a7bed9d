// XREAD and XREADGROUP [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ..., as Redis 7.0's
// xreadCommand serves them.
//
// Both are FanoutHandlers: one atomic step over the streams' shards resolves the ids (`$` to
// the stream's last id, `>` to the group's last delivered one) and serves every stream that
// has something to give; when none has and BLOCK is given, the client blocks through the
// machinery lists use (server/blocking.h), waiting on every stream. XADD touches its key
// (Db::Touch), which makes it ready; a served waiter answers with the one stream that woke
// it, as Redis's serveClientsBlockedOnStreamKey does.
//
// XREADGROUP with `>` delivers new entries: it advances the group's last id and read
// counter and adds each entry to the pending list (PEL) of the group and the consumer, unless
// NOACK. With an explicit id it serves the consumer's own history: its pending entries after
// that id, each delivered once more (a deleted entry comes back as its id and a null).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/shard.h"
#include "engine/stream.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/blocking.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/keyspace_events.h"
#include "server/persistence.h"
#include "server/server.h"
#include "server/shard_set.h"
#include "server/stream_util.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::Stream;
using engine::StreamGroup;
using engine::StreamId;
using engine::ValueType;
using protocol::EqualsIgnoreCase;
namespace stream = engine::stream;

namespace {

// XREAD's and XREADGROUP's keys: the first half of what follows STREAMS (Redis's xreadGetKeys).
void XReadKeys(Args args, std::vector<size_t>* out) {
  size_t streams_at = 0;
  for (size_t i = 1; i < args.size() && streams_at == 0; ++i) {
    std::string_view opt = protocol::AsCString(args[i]);
    if (EqualsIgnoreCase(opt, "BLOCK") || EqualsIgnoreCase(opt, "COUNT")) {
      ++i;
    } else if (EqualsIgnoreCase(opt, "GROUP")) {
      i += 2;
    } else if (EqualsIgnoreCase(opt, "STREAMS")) {
      streams_at = i + 1;
    } else if (!EqualsIgnoreCase(opt, "NOACK")) {
      return;
    }
  }
  if (streams_at == 0 || streams_at >= args.size()) return;
  size_t n = args.size() - streams_at;
  if (n % 2 != 0) return;
  for (size_t i = 0; i < n / 2; ++i) out->push_back(streams_at + i);
}

struct XReadArgs {
  bool grouped = false;     // XREADGROUP
  int64_t timeout_ms = -1;  // -1: no BLOCK
  size_t count = 0;         // 0: no limit
  size_t streams_at = 0;
  size_t streams = 0;
  std::string_view group, consumer;
  bool noack = false;
};

// Whether the command comes from a script (EVAL, FCALL), as sort_command.cc tells: its
// commands run inside the script's atomic step while the thread's script slot is running.
bool CalledFromScript(Server& server) {
  if (!ShardSet::InAtomicStep()) return false;
  int thread = ShardSet::CurrentThreadIndex();
  return server.running_scripts().SlotOf(thread >= 0 ? static_cast<size_t>(thread) : SIZE_MAX).running.load();
}

bool ParseXRead(ConnCommand& c, XReadArgs* out) {
  Args args = c.args;
  protocol::ReplyWriter& reply = c.reply;
  for (size_t i = 1; i < args.size(); ++i) {
    size_t more = args.size() - i - 1;
    std::string_view opt = protocol::AsCString(args[i]);
    if (EqualsIgnoreCase(opt, "BLOCK") && more) {
      // Redis refuses BLOCK from a script outright (a blocking list command would time out).
      if (CalledFromScript(c.server)) {
        return reply.Error("ERR " + std::string(protocol::AsCString(args[0])) +
                           " command is not allowed with BLOCK option from scripts"),
               false;
      }
      if (!protocol::ParseInt64(args[++i], &out->timeout_ms)) return reply.Error(errors::kTimeoutNotInteger), false;
      if (out->timeout_ms < 0) return reply.Error(errors::kTimeoutNegative), false;
    } else if (EqualsIgnoreCase(opt, "COUNT") && more) {
      int64_t count;
      if (!ParseLongLong(args[++i], &count, reply)) return false;
      out->count = static_cast<size_t>(std::max<int64_t>(count, 0));
    } else if (EqualsIgnoreCase(opt, "STREAMS") && more) {
      out->streams_at = i + 1;
      size_t n = args.size() - out->streams_at;
      if (n % 2 != 0) {
        // Redis 7.0.15 says XREAD and '$' for XREADGROUP too.
        return reply.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."),
               false;
      }
      out->streams = n / 2;
      break;
    } else if (EqualsIgnoreCase(opt, "GROUP") && more >= 2) {
      if (!out->grouped) {
        return reply.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."), false;
      }
      out->group = args[i + 1];
      out->consumer = args[i + 2];
      i += 2;
    } else if (EqualsIgnoreCase(opt, "NOACK")) {
      if (!out->grouped) {
        return reply.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."), false;
      }
      out->noack = true;
    } else {
      return reply.Error(errors::kSyntax), false;
    }
  }
  if (out->streams_at == 0) return reply.Error(errors::kSyntax), false;
  if (out->grouped && out->group.data() == nullptr) return reply.Error("ERR Missing GROUP option for XREADGROUP"), false;
  return true;
}

std::string NoGroupError(std::string_view key, std::string_view group) {
  return "NOGROUP No such key '" + std::string(protocol::AsCString(key)) + "' or consumer group '" +
         std::string(protocol::AsCString(group)) + "' in XREADGROUP with GROUP option";
}

// XREAD's entries of one stream after `after`, as [key, entries] (RESP3: key, entries).
void ReplyStream(protocol::ReplyWriter& reply, std::string_view key, const Stream& s, StreamId after, size_t count) {
  if (reply.version() == protocol::RespVersion::kResp2) reply.ArrayHeader(2);
  reply.Bulk(key);
  after.Increment();
  ReplyRange(reply, s, after, StreamId::Max(), false, count);
}

// The consumer XREADGROUP reads as, created (with its event) when new; true when created.
bool SeeConsumer(const Server& server, uint32_t db, std::string_view key, StreamGroup& group,
                 std::string_view consumer, int64_t now) {
  bool created = group.AddConsumer(consumer, now);
  if (created) server.keyspace_events().Notify(kStreamGroupEvent, "xgroup-createconsumer", key, db);
  group.consumers.find(consumer)->second.seen_time_ms = now;
  return created;
}

// XREADGROUP's entries of one stream: new ones after the group's last id (`history` false),
// or the consumer's pending entries after `after`.
void ReplyGroupStream(protocol::ReplyWriter& reply, std::string_view key, Stream& s, StreamGroup& group,
                      std::string_view consumer, StreamId after, bool history, const XReadArgs& a, int64_t now) {
  if (reply.version() == protocol::RespVersion::kResp2) reply.ArrayHeader(2);
  reply.Bulk(key);
  std::string body;
  protocol::ReplyWriter entries(&body, reply.version());
  size_t n = 0;
  after.Increment();
  if (history) {
    auto& pending = group.consumers.find(consumer)->second.pending;
    for (auto it = pending.lower_bound(after); it != pending.end() && (a.count == 0 || n < a.count); ++it, ++n) {
      StreamId id = it->first;
      bool live = s.Lookup(id, [&](StreamId, std::span<const std::string_view> fv) {
        ReplyEntry(entries, id, fv);
        return false;
      });
      if (!live) {
        entries.ArrayHeader(2);
        entries.Bulk(id.ToString());
        entries.NullArray();
        continue;
      }
      engine::StreamPending& nack = group.pel.find(id)->second;
      nack.delivery_time_ms = now;
      ++nack.delivery_count;
    }
  } else {
    s.Range(after, StreamId::Max(), false, [&](StreamId id, std::span<const std::string_view> fv) {
      s.AdvanceGroup(group, id);
      ReplyEntry(entries, id, fv);
      if (!a.noack) group.Deliver(id, consumer, now);
      return ++n != a.count;
    });
  }
  reply.ArrayHeader(n);
  reply.buffer()->append(body);
}

// A blocked XREAD or XREADGROUP, served by the first of its streams to pass its id. A woken
// reader is served once the stream's last id passes (XSETID moves it without an entry, and
// wakes nobody, as in Redis 7.0); the first try, made as the client blocks, wants an entry, as
// the synchronous read did.
ServeFn ServeBlockedRead(std::map<std::string, StreamId, std::less<>> after, XReadArgs a) {
  std::string group_name(a.group), consumer(a.consumer);
  return [after = std::move(after), a, group_name, consumer, first_try = true](ServeAttempt& at) mutable {
    bool initial = std::exchange(first_try, false);
    Entry* e = at.db.Find(at.key, at.now_ms);
    if (e == nullptr || e->type() != ValueType::kStream) {
      // A group reader whose stream is deleted or replaced can never be served (its group went
      // with it), so it is told at once, as Redis's unblockDeletedStreamReadgroupClients does.
      if (!a.grouped || initial) return ServeResult::kNotReady;
      if (!at.Claim()) return ServeResult::kClaimLost;
      at.Reply().Error("UNBLOCKED the stream key no longer exists");
      return ServeResult::kServed;
    }
    Stream& s = stream::Of(e);
    StreamGroup* group = a.grouped ? s.FindGroup(group_name) : nullptr;
    if (a.grouped && group == nullptr) {
      if (!at.Claim()) return ServeResult::kClaimLost;
      at.Reply().Error("NOGROUP the consumer group this client was blocked on no longer exists");
      return ServeResult::kServed;
    }
    StreamId gt = group != nullptr ? group->last_id : after.find(at.key)->second;
    if (!((initial ? s.LastLiveId() : s.last_id()) > gt)) return ServeResult::kNotReady;
    if (!at.Claim()) return ServeResult::kClaimLost;
    protocol::ReplyWriter reply = at.Reply();
    StreamsHeader(reply, 1);
    if (group == nullptr) {
      ReplyStream(reply, at.key, s, gt, a.count);
    } else {
      // Redis counts only the consumer a served read creates, not the stream served, as a
      // change (the XREADGROUP's own count is its handler's, none for a blocked one).
      if (SeeConsumer(at.server, at.db.index(), at.key, *group, consumer, at.now_ms)) {
        at.server.persistence().CountChanges(1);
      }
      ReplyGroupStream(reply, at.key, s, *group, consumer, gt, false, a, at.now_ms);
    }
    return ServeResult::kServed;
  };
}

// Resolves the ids of one stream (`$`, `>`, or an id): false after replying an error.
bool ResolveId(const XReadArgs& a, std::string_view key, Entry* e, std::string_view arg, StreamId* after,
               protocol::ReplyWriter& reply) {
  if (a.grouped && (e == nullptr || stream::Of(e).FindGroup(a.group) == nullptr)) {
    return reply.Error(NoGroupError(key, a.group)), false;
  }
  std::string_view id = protocol::AsCString(arg);
  if (id == "$") {
    if (a.grouped) {
      reply.Error(
          "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by "
          "specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result "
          "set.");
      return false;
    }
    *after = e == nullptr ? StreamId::Min() : stream::Of(e).last_id();
    return true;
  }
  if (id == ">") {
    if (!a.grouped) {
      reply.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
      return false;
    }
    *after = StreamId::Max();  // the group's last id, once known
    return true;
  }
  return ParseStrictId(arg, after, reply);
}

// Resolves the ids and answers with every stream that has something to give; false when
// none has and nothing was replied.
bool ReadAtOnce(ConnCommand& c, const XReadArgs& a, Args keys, Args id_args, std::vector<StreamId>* after) {
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  for (std::string_view key : keys) ids.push_back(shards.ShardFor(key));
  bool answered = false;
  shards.RunHolding(ids, [&] {
    int64_t now = c.server.clock().NowMs();
    auto find = [&](size_t i, Lookup kind) {
      engine::Shard& shard = shards.shard(shards.ShardFor(keys[i]));
      return FindKey(shard, shard.db(c.session.db), keys[i], now, kind);
    };
    answered = true;
    for (size_t i = 0; i < keys.size(); ++i) {
      Entry* e = find(i, Lookup::kRead);
      if (e != nullptr && e->type() != ValueType::kStream) return c.reply.Error(errors::kWrongType);
      if (!ResolveId(a, keys[i], e, id_args[i], &(*after)[i], c.reply)) return;
    }
    std::string body;
    protocol::ReplyWriter out(&body, c.reply.version());
    size_t served = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      Entry* e = find(i, Lookup::kReadQuiet);
      if (e == nullptr) continue;
      Stream& s = stream::Of(e);
      if (!a.grouped) {
        if (!(s.LastLiveId() > (*after)[i])) continue;
        ++served;
        ReplyStream(out, keys[i], s, (*after)[i], a.count);
        continue;
      }
      StreamGroup& group = *s.FindGroup(a.group);
      bool history = (*after)[i] != StreamId::Max();
      if (!history && !(s.length() > 0 && s.LastLiveId() > group.last_id)) continue;
      ++served;
      // Redis counts a change for each stream a group read served and each consumer it created.
      c.changes = c.changes.value_or(0) + 1;
      if (SeeConsumer(c.server, static_cast<uint32_t>(c.session.db), keys[i], group, a.consumer, now)) ++*c.changes;
      ReplyGroupStream(out, keys[i], s, group, a.consumer, history ? (*after)[i] : group.last_id, history, a, now);
    }
    answered = served > 0;
    if (!answered) return;
    StreamsHeader(c.reply, served);
    c.reply.buffer()->append(body);
    c.charge.Add(a.grouped ? engine::RuOp::kReplace : engine::RuOp::kRead, body.size());
  });
  return answered;
}

// XREAD [COUNT n] [BLOCK ms] STREAMS key [key ...] id [id ...]
// XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key [key ...] id [id ...]
awaitable<void> Read(ConnCommand& c, bool grouped) {
  XReadArgs a;
  a.grouped = grouped;
  if (!ParseXRead(c, &a)) return Answered();
  Args keys = c.args.subspan(a.streams_at, a.streams);
  Args id_args = c.args.subspan(a.streams_at + a.streams, a.streams);
  std::vector<StreamId> after(a.streams);
  if (ReadAtOnce(c, a, keys, id_args, &after)) return Answered();
  if (a.timeout_ms < 0) {
    c.reply.NullArray();
    return Answered();
  }
  // A key named twice waits for its first id, as Redis's blockForKeys keeps the first.
  std::map<std::string, StreamId, std::less<>> after_by_key;
  for (size_t i = 0; i < keys.size(); ++i) after_by_key.emplace(std::string(keys[i]), after[i]);
  BlockRequest request;
  request.keys.assign(keys.begin(), keys.end());
  request.timeout_ms = a.timeout_ms;
  request.serve = ServeBlockedRead(std::move(after_by_key), a);
  return BlockOn(c, std::move(request));
}

awaitable<void> CmdXRead(ConnCommand& c) { return Read(c, false); }
awaitable<void> CmdXReadGroup(ConnCommand& c) { return Read(c, true); }

}  // namespace

void RegisterStreamReadCommands(CommandTable& table) {
  const char* g = "stream";
  CommandSpec xread{"xread", -4, kReadOnly | kBlocking, 0, 0, 0, CmdXRead, g, "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise."};
  xread.find_keys = XReadKeys;
  table.Add(std::move(xread));
  CommandSpec xreadgroup{"xreadgroup", -7, kWrite | kBlocking, 0, 0, 0, CmdXReadGroup, g, "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise."};
  xreadgroup.find_keys = XReadKeys;
  table.Add(std::move(xreadgroup));
}

}  // namespace lapse::server
