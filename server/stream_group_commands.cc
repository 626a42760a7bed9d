// Consumer groups: XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP, XACK,
// XPENDING, XCLAIM and XAUTOCLAIM, as Redis 7.0's t_stream.c answers them (the data: engine/stream.h's
// StreamGroup). XREADGROUP is in stream_read_commands.cc.
//
// As in Redis, XGROUP checks its options before the key, and the key and group before the
// subcommand's arguments; XACK parses its ids only once the group is known (a missing key or
// group acknowledges nothing), and XPENDING parses its range before looking anything up.
// Idle times are measured on the command's clock (ShardCommand::now_ms).
#include <algorithm>
#include <string>
#include <vector>

#include "engine/shard.h"
#include "engine/stream.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/key_util.h"
#include "server/keyspace_events.h"
#include "server/stream_util.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::Stream;
using engine::StreamGroup;
using engine::StreamId;
using engine::ValueType;
using protocol::AsCString;
using protocol::EqualsIgnoreCase;
namespace stream = engine::stream;

namespace {

std::string NoSuchGroup(std::string_view group, std::string_view key) {
  return "NOGROUP No such consumer group '" + std::string(AsCString(group)) + "' for key name '" +
         std::string(AsCString(key)) + "'";
}

void XGroupHelp(ShardCommand& c) {
  ReplyHelp(c.reply, {"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "CREATE <key> <groupname> <id|$> [option]",
                      "    Create a new consumer group. Options are:",
                      "    * MKSTREAM",
                      "      Create the empty stream if it does not exist.",
                      "    * ENTRIESREAD entries_read",
                      "      Set the group's entries_read counter (internal use).",
                      "CREATECONSUMER <key> <groupname> <consumer>",
                      "    Create a new consumer in the specified group.",
                      "DELCONSUMER <key> <groupname> <consumer>",
                      "    Remove the specified consumer.",
                      "DESTROY <key> <groupname>",
                      "    Remove the specified group.",
                      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
                      "    Set the current group ID and entries_read counter."});
}

// CREATE's and SETID's options after the id: MKSTREAM (CREATE only) and ENTRIESREAD.
bool ParseGroupOptions(ShardCommand& c, bool create, bool* mkstream, int64_t* entries_read) {
  for (size_t i = 5; i < c.args.size();) {
    std::string_view opt = AsCString(c.args[i]);
    if (create && EqualsIgnoreCase(opt, "MKSTREAM")) {
      *mkstream = true;
      ++i;
    } else if (EqualsIgnoreCase(opt, "ENTRIESREAD") && i + 1 < c.args.size()) {
      if (!ParseLongLong(c.args[i + 1], entries_read, c.reply)) return false;
      if (*entries_read < 0 && *entries_read != StreamGroup::kInvalidEntriesRead) {
        return c.reply.Error("ERR value for ENTRIESREAD must be positive or -1"), false;
      }
      i += 2;
    } else {
      return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "XGROUP")), false;
    }
  }
  return true;
}

// The group's new last id: `$` for the stream's last id (0-0 without a stream).
bool ParseGroupId(ShardCommand& c, const Stream* s, bool strict, StreamId* id) {
  if (AsCString(c.args[4]) == "$") return *id = s != nullptr ? s->last_id() : StreamId::Min(), true;
  return ParseId(c.args[4], 0, strict, id, nullptr, c.reply);
}

void Notify(ShardCommand& c, std::string_view event) { NotifyKeyspace(c, kStreamGroupEvent, event, c.args[2]); }

void XGroupCreate(ShardCommand& c, Entry* e, bool mkstream, int64_t entries_read) {
  Stream* s = e != nullptr ? &stream::Of(e) : nullptr;
  StreamId id;
  if (!ParseGroupId(c, s, true, &id)) return;
  bool made_stream = s == nullptr;
  if (made_stream) {
    e = stream::Create(c.db, c.args[2], c.now_ms);
    s = &stream::Of(e);
    c.db.Touch(c.args[2]);
  }
  auto [it, created] = s->groups().try_emplace(std::string(c.args[3]));
  if (!created) return c.reply.Error("BUSYGROUP Consumer Group name already exists");
  it->second.last_id = id;
  it->second.entries_read = entries_read;
  c.changes = 1;  // MKSTREAM's new stream included, as Redis counts it
  c.reply.Ok();
  // Redis signals the key only when MKSTREAM made it, and so invalidates caches only then.
  if (made_stream) return NotifyKeyspace(c, kEventStream, "xgroup-create", c.args[2]);
  Notify(c, "xgroup-create");
}

// XGROUP subcommand key group ...: Redis's xgroupCommand.
void CmdXGroup(ShardCommand& c) {
  std::string_view sub = AsCString(c.args[1]);
  if (EqualsIgnoreCase(sub, "HELP")) return XGroupHelp(c);
  bool create = EqualsIgnoreCase(sub, "CREATE");
  bool mkstream = false;
  int64_t entries_read = StreamGroup::kInvalidEntriesRead;
  if ((create || EqualsIgnoreCase(sub, "SETID")) && !ParseGroupOptions(c, create, &mkstream, &entries_read)) return;
  bool wrong = false;
  Entry* e = FindTyped(c, c.args[2], ValueType::kStream, &wrong, Lookup::kWrite);
  if (wrong) return;
  StreamGroup* group = e != nullptr ? stream::Of(e).FindGroup(c.args[3]) : nullptr;
  if (!mkstream) {
    if (e == nullptr) {
      return c.reply.Error(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM "
          "option to create an empty stream automatically.");
    }
    if (group == nullptr && !create && !EqualsIgnoreCase(sub, "DESTROY")) {
      return c.reply.Error(NoSuchGroup(c.args[3], c.args[2]));
    }
  }
  size_t argc = c.args.size();
  if (create && argc >= 5 && argc <= 8) return XGroupCreate(c, e, mkstream, entries_read);
  if (EqualsIgnoreCase(sub, "SETID") && (argc == 5 || argc == 7)) {
    StreamId id;
    if (!ParseGroupId(c, &stream::Of(e), false, &id)) return;
    group->last_id = id;
    group->entries_read = entries_read;
    c.changes = 1;
    c.reply.Ok();
    return Notify(c, "xgroup-setid");
  }
  // Redis counts one change for a group created, moved or destroyed and for a consumer created
  // or deleted, none when there was nothing to do (XGROUP CREATE counts in XGroupCreate).
  c.changes = 0;
  if (EqualsIgnoreCase(sub, "DESTROY") && argc == 4) {
    if (group == nullptr) return c.reply.Integer(0);
    c.changes = 1;
    stream::Of(e).groups().erase(std::string(c.args[3]));
    c.reply.Integer(1);
    Notify(c, "xgroup-destroy");
    // Readers blocked on the group learn that it is gone; watchers see no change, as in Redis 7.0.
    c.db.WakeBlocked(c.args[2]);
    return;
  }
  if (EqualsIgnoreCase(sub, "CREATECONSUMER") && argc == 5) {
    bool created = group->AddConsumer(c.args[4], c.now_ms);
    c.changes = created ? 1 : 0;
    c.reply.Integer(created ? 1 : 0);
    if (created) Notify(c, "xgroup-createconsumer");
    return;
  }
  if (EqualsIgnoreCase(sub, "DELCONSUMER") && argc == 5) {
    auto it = group->consumers.find(c.args[4]);
    if (it == group->consumers.end()) return c.reply.Integer(0);
    c.changes = 1;
    auto pending = static_cast<int64_t>(it->second.pending.size());
    for (const auto& [id, unused] : it->second.pending) group->pel.erase(id);
    group->consumers.erase(it);
    c.reply.Integer(pending);
    return Notify(c, "xgroup-delconsumer");
  }
  c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "XGROUP"));
}

// XACK key group id [id ...]
void CmdXAck(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindTyped(c, c.args[1], ValueType::kStream, &wrong, Lookup::kRead);
  if (wrong) return;
  StreamGroup* group = e != nullptr ? stream::Of(e).FindGroup(c.args[2]) : nullptr;
  if (group == nullptr) return c.reply.Integer(0);
  // All ids are checked first: an error must not follow a partial acknowledgement.
  std::vector<StreamId> ids(c.args.size() - 3);
  for (size_t j = 3; j < c.args.size(); ++j) {
    if (!ParseStrictId(c.args[j], &ids[j - 3], c.reply)) return;
  }
  int64_t acknowledged = 0;
  for (StreamId id : ids) acknowledged += group->Acknowledge(id) ? 1 : 0;
  c.charge.Add(engine::RuOp::kDelete, c.args[1].size() * static_cast<size_t>(std::max<int64_t>(acknowledged, 1)));
  c.reply.Integer(acknowledged);
}

// XPENDING key group: the count, first and last ids, and each consumer's count.
void ReplyPendingSummary(ShardCommand& c, const StreamGroup& group) {
  c.reply.ArrayHeader(4);
  c.reply.Integer(static_cast<int64_t>(group.pel.size()));
  if (group.pel.empty()) {
    c.reply.Null();
    c.reply.Null();
    c.reply.NullArray();
    return;
  }
  c.reply.Bulk(group.pel.begin()->first.ToString());
  c.reply.Bulk(group.pel.rbegin()->first.ToString());
  size_t with_pending = 0;
  for (const auto& [name, consumer] : group.consumers) with_pending += consumer.pending.empty() ? 0 : 1;
  c.reply.ArrayHeader(with_pending);
  for (const auto& [name, consumer] : group.consumers) {
    if (consumer.pending.empty()) continue;
    c.reply.ArrayHeader(2);
    c.reply.Bulk(name);
    c.reply.Bulk(std::to_string(consumer.pending.size()));
  }
}

struct PendingRange {
  int64_t min_idle = 0;
  StreamId start, end;
  int64_t count = 0;
  std::string_view consumer;  // empty data(): every consumer
};

// XPENDING's extended form: [IDLE ms] start end count [consumer]; false after replying.
bool ParsePendingRange(ShardCommand& c, PendingRange* out) {
  size_t at = 3;
  if (EqualsIgnoreCase(AsCString(c.args[3]), "IDLE")) {
    if (!ParseLongLong(c.args[4], &out->min_idle, c.reply)) return false;
    if (c.args.size() < 8) return c.reply.Error(errors::kSyntax), false;
    at += 2;
  }
  if (!ParseLongLong(c.args[at + 2], &out->count, c.reply)) return false;
  out->count = std::max<int64_t>(out->count, 0);
  bool start_ex = false, end_ex = false;
  if (!ParseIntervalId(c.args[at], 0, &out->start, &start_ex, c.reply)) return false;
  if (start_ex && !out->start.Increment()) return c.reply.Error("ERR invalid start ID for the interval"), false;
  if (!ParseIntervalId(c.args[at + 1], UINT64_MAX, &out->end, &end_ex, c.reply)) return false;
  if (end_ex && !out->end.Decrement()) return c.reply.Error("ERR invalid end ID for the interval"), false;
  if (at + 3 < c.args.size()) out->consumer = c.args[at + 3];
  return true;
}

void ReplyPendingRange(ShardCommand& c, const StreamGroup& group, const PendingRange& range) {
  const engine::StreamConsumer* consumer = nullptr;
  if (range.consumer.data() != nullptr) {
    auto it = group.consumers.find(range.consumer);
    if (it == group.consumers.end()) return c.reply.ArrayHeader(0);
    consumer = &it->second;
  }
  std::string body;
  protocol::ReplyWriter out(&body, c.reply.version());
  size_t n = 0;
  int64_t left = range.count;
  auto visit = [&](StreamId id) {
    const engine::StreamPending& nack = group.pel.find(id)->second;
    int64_t idle = c.now_ms - nack.delivery_time_ms;
    if (range.min_idle != 0 && idle < range.min_idle) return;
    ++n, --left;
    out.ArrayHeader(4);
    out.Bulk(id.ToString());
    out.Bulk(nack.consumer);
    out.Integer(std::max<int64_t>(idle, 0));
    out.Integer(static_cast<int64_t>(nack.delivery_count));
  };
  if (consumer != nullptr) {
    for (auto it = consumer->pending.lower_bound(range.start); left > 0 && it != consumer->pending.end() &&
                                                               it->first <= range.end; ++it) {
      visit(it->first);
    }
  } else {
    for (auto it = group.pel.lower_bound(range.start); left > 0 && it != group.pel.end() && it->first <= range.end;
         ++it) {
      visit(it->first);
    }
  }
  c.reply.ArrayHeader(n);
  c.reply.buffer()->append(body);
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
void CmdXPending(ShardCommand& c) {
  size_t argc = c.args.size();
  if (argc != 3 && (argc < 6 || argc > 9)) return c.reply.Error(errors::kSyntax);
  PendingRange range;
  if (argc >= 6 && !ParsePendingRange(c, &range)) return;
  bool wrong = false;
  Entry* e = FindTyped(c, c.args[1], ValueType::kStream, &wrong, Lookup::kRead);
  if (wrong) return;
  const StreamGroup* group = e != nullptr ? stream::Of(e).FindGroup(c.args[2]) : nullptr;
  if (group == nullptr) {
    return c.reply.Error("NOGROUP No such key '" + std::string(AsCString(c.args[1])) + "' or consumer group '" +
                         std::string(AsCString(c.args[2])) + "'");
  }
  ChargeRead(c.charge, c.args[1], nullptr);
  if (argc == 3) return ReplyPendingSummary(c, *group);
  ReplyPendingRange(c, *group, range);
}

// ---- XCLAIM, XAUTOCLAIM ----

// The stream and group of XCLAIM/XAUTOCLAIM, or nullptr after replying (WRONGTYPE, NOGROUP).
StreamGroup* FindClaimGroup(ShardCommand& c, Stream** s) {
  bool wrong = false;
  Entry* e = FindTyped(c, c.args[1], ValueType::kStream, &wrong, Lookup::kRead);
  if (wrong) return nullptr;
  StreamGroup* group = e != nullptr ? stream::Of(e).FindGroup(c.args[2]) : nullptr;
  if (group == nullptr) {
    c.reply.Error("NOGROUP No such key '" + std::string(AsCString(c.args[1])) + "' or consumer group '" +
                  std::string(AsCString(c.args[2])) + "'");
    return nullptr;
  }
  *s = &stream::Of(e);
  return group;
}

// Moves the pending entry `nack` (of `id`) to `consumer`, delivered at `time_ms`.
void TakeOver(StreamGroup& group, StreamId id, engine::StreamPending& nack, std::string_view consumer,
              int64_t time_ms) {
  if (nack.consumer != consumer) {
    auto owner = group.consumers.find(nack.consumer);
    if (owner != group.consumers.end()) owner->second.pending.erase(id);
    group.consumers.find(consumer)->second.pending.emplace(id, std::monostate{});
    nack.consumer = std::string(consumer);
  }
  nack.delivery_time_ms = time_ms;
}

// An entry claimed: its id alone (JUSTID) or the entry.
void ReplyClaimed(protocol::ReplyWriter& out, const Stream& s, StreamId id, bool justid) {
  if (justid) return out.Bulk(id.ToString());
  s.Lookup(id, [&](StreamId, std::span<const std::string_view> fv) {
    ReplyEntry(out, id, fv);
    return false;
  });
}

// The consumer claiming, created (with its event) on the first claim, as Redis does, which
// counts the creation as a change.
void ClaimingConsumer(ShardCommand& c, StreamGroup& group, bool* seen, uint64_t* changes) {
  if (*seen) return;
  *seen = true;
  if (group.AddConsumer(c.args[3], c.now_ms)) {
    NotifyKeyspace(c, kStreamGroupEvent, "xgroup-createconsumer", c.args[1]);
    ++*changes;
  }
  group.consumers.find(c.args[3])->second.seen_time_ms = c.now_ms;
}

struct ClaimOptions {
  int64_t delivery_time = -1;  // -1: now
  int64_t retry_count = -1;    // -1: one more delivery (none with JUSTID)
  bool force = false, justid = false;
  StreamId last_id;
};

// XCLAIM's options after its ids; false after replying.
bool ParseClaimOptions(ShardCommand& c, size_t j, ClaimOptions* o) {
  auto number = [&](size_t at, int64_t* out, const char* what) {
    if (protocol::ParseInt64(c.args[at], out)) return true;
    c.reply.Error(std::string("ERR Invalid ") + what + " option argument for XCLAIM");
    return false;
  };
  for (; j < c.args.size(); ++j) {
    bool more = j + 1 < c.args.size();
    std::string_view opt = AsCString(c.args[j]);
    if (EqualsIgnoreCase(opt, "FORCE")) {
      o->force = true;
    } else if (EqualsIgnoreCase(opt, "JUSTID")) {
      o->justid = true;
    } else if (EqualsIgnoreCase(opt, "IDLE") && more) {
      if (!number(++j, &o->delivery_time, "IDLE")) return false;
      o->delivery_time = c.now_ms - o->delivery_time;
    } else if (EqualsIgnoreCase(opt, "TIME") && more) {
      if (!number(++j, &o->delivery_time, "TIME")) return false;
    } else if (EqualsIgnoreCase(opt, "RETRYCOUNT") && more) {
      if (!number(++j, &o->retry_count, "RETRYCOUNT")) return false;
    } else if (EqualsIgnoreCase(opt, "LASTID") && more) {
      if (!ParseStrictId(c.args[++j], &o->last_id, c.reply)) return false;
    } else {
      c.reply.Error("ERR Unrecognized XCLAIM option '" + std::string(opt) + "'");
      return false;
    }
  }
  return true;
}

// XCLAIM key group consumer min-idle id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE]
// [JUSTID] [LASTID id]
void CmdXClaim(ShardCommand& c) {
  Stream* s = nullptr;
  StreamGroup* group = FindClaimGroup(c, &s);
  if (group == nullptr) return;
  int64_t min_idle;
  if (!protocol::ParseInt64(c.args[4], &min_idle)) return c.reply.Error("ERR Invalid min-idle-time argument for XCLAIM");
  min_idle = std::max<int64_t>(min_idle, 0);
  // The ids run up to the first argument that is no id; options follow.
  std::vector<StreamId> ids;
  size_t j = 5;
  for (StreamId id; j < c.args.size() && engine::ParseStreamId(AsCString(c.args[j]), 0, &id) &&
                    AsCString(c.args[j]).size() == c.args[j].size();
       ++j) {
    ids.push_back(id);
  }
  ClaimOptions o;
  if (!ParseClaimOptions(c, j, &o)) return;
  // Redis counts a change for each entry claimed, each deleted entry dropped from the PEL and
  // the consumer created; a LASTID that moved counts only when none of those happened (the
  // claims carry it otherwise).
  bool last_id_moved = o.last_id > group->last_id;
  if (last_id_moved) group->last_id = o.last_id;
  uint64_t dropped = 0, created = 0;
  int64_t delivery = o.delivery_time < 0 || o.delivery_time > c.now_ms ? c.now_ms : o.delivery_time;
  std::string body;
  protocol::ReplyWriter out(&body, c.reply.version());
  size_t n = 0;
  bool seen = false;
  for (StreamId id : ids) {
    auto nack = group->pel.find(id);
    if (!s->Lookup(id, [](StreamId, std::span<const std::string_view>) { return false; })) {
      // A pending entry deleted from the stream leaves the PEL.
      if (nack != group->pel.end()) {
        group->Acknowledge(id);
        ++dropped;
      }
      continue;
    }
    bool forced = false;
    if (o.force && nack == group->pel.end()) {
      nack = group->pel.emplace(id, engine::StreamPending{"", c.now_ms, 1}).first;
      forced = true;
    }
    if (nack == group->pel.end()) continue;
    if (!forced && min_idle != 0 && c.now_ms - nack->second.delivery_time_ms < min_idle) continue;
    ClaimingConsumer(c, *group, &seen, &created);
    TakeOver(*group, id, nack->second, c.args[3], delivery);
    if (o.retry_count >= 0) {
      nack->second.delivery_count = static_cast<uint64_t>(o.retry_count);
    } else if (!o.justid) {
      ++nack->second.delivery_count;
    }
    ReplyClaimed(out, *s, id, o.justid);
    ++n;
  }
  c.changes = n + dropped + created + (last_id_moved && n + dropped == 0 ? 1 : 0);
  c.reply.ArrayHeader(n);
  c.reply.buffer()->append(body);
}

// XAUTOCLAIM key group consumer min-idle start [COUNT n] [JUSTID]: Redis 7's reply of the
// next cursor, the claimed entries and the ids found deleted (and dropped from the PEL).
void CmdXAutoClaim(ShardCommand& c) {
  int64_t min_idle;
  if (!protocol::ParseInt64(c.args[4], &min_idle)) {
    return c.reply.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
  }
  min_idle = std::max<int64_t>(min_idle, 0);
  StreamId start;
  bool start_ex = false;
  if (!ParseIntervalId(c.args[5], 0, &start, &start_ex, c.reply)) return;
  if (start_ex && !start.Increment()) return c.reply.Error("ERR invalid start ID for the interval");
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < c.args.size(); ++j) {
    std::string_view opt = AsCString(c.args[j]);
    if (EqualsIgnoreCase(opt, "COUNT") && j + 1 < c.args.size()) {
      constexpr int64_t kMaxCount = INT64_MAX / 16;  // LONG_MAX / max(sizeof(streamID), 10)
      if (!protocol::ParseInt64(c.args[++j], &count) || count < 1 || count > kMaxCount) {
        return c.reply.Error("ERR COUNT must be > 0");
      }
    } else if (EqualsIgnoreCase(opt, "JUSTID")) {
      justid = true;
    } else {
      return c.reply.Error(errors::kSyntax);
    }
  }
  Stream* s = nullptr;
  StreamGroup* group = FindClaimGroup(c, &s);
  if (group == nullptr) return;
  std::string body;
  protocol::ReplyWriter out(&body, c.reply.version());
  size_t n = 0;
  std::vector<StreamId> deleted;
  bool seen = false;
  uint64_t created = 0;
  int64_t attempts = count * 10;
  // `it` is what Redis's iterator would return next.
  auto it = group->pel.lower_bound(start);
  while (attempts-- > 0 && count > 0 && it != group->pel.end()) {
    auto current = it++;
    StreamId id = current->first;
    if (!s->Lookup(id, [](StreamId, std::span<const std::string_view>) { return false; })) {
      group->Acknowledge(id);
      deleted.push_back(id);
      --count;
      continue;
    }
    if (min_idle != 0 && c.now_ms - current->second.delivery_time_ms < min_idle) continue;
    ClaimingConsumer(c, *group, &seen, &created);
    TakeOver(*group, id, current->second, c.args[3], c.now_ms);
    if (!justid) ++current->second.delivery_count;
    ReplyClaimed(out, *s, id, justid);
    ++n, --count;
  }
  c.changes = created + n + deleted.size();  // as XCLAIM's
  c.reply.ArrayHeader(3);
  c.reply.Bulk((it == group->pel.end() ? StreamId::Min() : it->first).ToString());
  c.reply.ArrayHeader(n);
  c.reply.buffer()->append(body);
  c.reply.ArrayHeader(deleted.size());
  for (StreamId id : deleted) c.reply.Bulk(id.ToString());
}

}  // namespace

void RegisterStreamGroupCommands(CommandTable& table) {
  const char* g = "stream";
  table.Add({"xgroup", -2, kWrite, 2, 2, 1, CmdXGroup, g, "A container for consumer groups commands."},
            {{"create", -5}, {"createconsumer", 5}, {"delconsumer", 5}, {"destroy", 4}, {"help", 2}, {"setid", -5}});
  table.Add({"xack", -4, kWrite | kFast, 1, 1, 1, CmdXAck, g, "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream."});
  table.Add({"xclaim", -6, kWrite | kFast, 1, 1, 1, CmdXClaim, g, "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member."});
  table.Add({"xautoclaim", -6, kWrite | kFast, 1, 1, 1, CmdXAutoClaim, g, "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member."});
  table.Add({"xpending", -3, kReadOnly, 1, 1, 1, CmdXPending, g, "Returns the information and entries from a stream consumer group's pending entries list."});
}

}  // namespace lapse::server
