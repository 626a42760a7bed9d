// Stream family: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID and XINFO, as Redis 7.0's
// t_stream.c answers them (engine/stream.h holds the data); XREAD and XREADGROUP are in
// stream_read_commands.cc, the consumer-group commands in stream_group_commands.cc, and what
// they share (id parsing, entry replies) is declared in stream_util.h.
//
// Argument parsing follows Redis's own order, because the order decides which error a bad
// request gets: XADD parses its options and id before it looks the key up, XDEL looks the
// key up before it parses ids (a missing key answers 0 whatever the ids), XSETID parses
// everything first. A stream is never deleted for being empty, as in Redis. Every change
// touches the key (Db::Touch), which wakes blocked readers, except XSETID, which in Redis 7.0
// does neither and leaves client-side caches alone too.
//
// Request units: XADD an insert of its fields, XDEL/XTRIM a delete of the key per entry
// removed, reads the bytes they return.
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
#include "server/help_reply.h"
#include "server/key_util.h"
#include "server/keyspace_events.h"
#include "server/server.h"
#include "server/shard_set.h"
#include "server/stream_util.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using engine::Stream;
using engine::StreamId;
using engine::StreamTrim;
using engine::ValueType;
using protocol::EqualsIgnoreCase;
namespace stream = engine::stream;

// ---- Shared with the other stream files (stream_util.h) ----

bool ParseId(std::string_view arg, uint64_t missing_seq, bool strict, StreamId* id, bool* seq_given,
             protocol::ReplyWriter& reply) {
  if (arg.size() > 127) return reply.Error(kInvalidStreamId), false;
  std::string_view text = protocol::AsCString(arg);
  if (strict && (text == "-" || text == "+")) return reply.Error(kInvalidStreamId), false;
  if (seq_given != nullptr) *seq_given = true;
  if (text == "-") return *id = StreamId::Min(), true;
  if (text == "+") return *id = StreamId::Max(), true;
  size_t dash = text.find('-');
  if (seq_given != nullptr && dash != std::string_view::npos && text.substr(dash + 1) == "*") {
    if (!engine::ParseStreamId(text.substr(0, dash), 0, id)) return reply.Error(kInvalidStreamId), false;
    *seq_given = false;
    return true;
  }
  if (!engine::ParseStreamId(text, missing_seq, id)) return reply.Error(kInvalidStreamId), false;
  return true;
}

bool ParseStrictId(std::string_view arg, StreamId* id, protocol::ReplyWriter& reply) {
  return ParseId(arg, 0, true, id, nullptr, reply);
}

// An XRANGE bound: "-", "+", an id, or "(" and a strict id (exclusive).
bool ParseIntervalId(std::string_view arg, uint64_t missing_seq, StreamId* id, bool* exclusive,
                     protocol::ReplyWriter& reply) {
  *exclusive = arg.size() > 1 && arg[0] == '(';
  if (*exclusive) return ParseId(arg.substr(1), missing_seq, true, id, nullptr, reply);
  return ParseId(arg, missing_seq, false, id, nullptr, reply);
}

bool ParseLongLong(std::string_view text, int64_t* out, protocol::ReplyWriter& reply) {
  if (!protocol::ParseInt64(text, out)) return reply.Error(errors::kNotInteger), false;
  return true;
}

void ReplyEntry(protocol::ReplyWriter& reply, StreamId id, std::span<const std::string_view> field_values) {
  reply.ArrayHeader(2);
  reply.Bulk(id.ToString());
  reply.ArrayHeader(field_values.size());
  for (std::string_view s : field_values) reply.Bulk(s);
}

// Replies the live entries in [start, end] (descending when `reverse`), at most `count`
// (0: all); returns the bytes sent, for the charge.
size_t ReplyRange(protocol::ReplyWriter& reply, const Stream& s, StreamId start, StreamId end, bool reverse,
                  size_t count) {
  std::string body;
  protocol::ReplyWriter entries(&body, reply.version());
  size_t n = 0;
  s.Range(start, end, reverse, [&](StreamId id, std::span<const std::string_view> fv) {
    ReplyEntry(entries, id, fv);
    return ++n != count;  // count 0 never matches: no limit
  });
  reply.ArrayHeader(n);
  reply.buffer()->append(body);
  return body.size();
}

void StreamsHeader(protocol::ReplyWriter& reply, size_t n) {
  reply.version() == protocol::RespVersion::kResp2 ? reply.ArrayHeader(n) : reply.MapHeader(n);
}

namespace {

constexpr std::string_view kIdTooSmall = "ERR The ID specified in XADD is equal or smaller than the target stream top item";

// XADD's and XTRIM's options (Redis's streamParseAddOrTrimArgsOrReply).
struct AddTrimArgs {
  StreamTrim trim;
  bool no_mkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
};

// The trimming threshold after MAXLEN or MINID at args[*i], with its optional `~` or `=`.
bool ParseThreshold(Args args, size_t* i, bool maxlen, AddTrimArgs* out, protocol::ReplyWriter& reply) {
  if (out->trim.strategy != StreamTrim::Strategy::kNone) {
    reply.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
    return false;
  }
  size_t more = args.size() - 1 - *i;
  out->trim.approx = false;
  std::string_view next = args[*i + 1];
  if (more >= 2 && (next == "~" || next == "=")) {
    out->trim.approx = next == "~";
    ++*i;
  }
  ++*i;
  if (maxlen) {
    int64_t n;
    if (!ParseLongLong(args[*i], &n, reply)) return false;
    if (n < 0) return reply.Error("ERR The MAXLEN argument must be >= 0."), false;
    out->trim.maxlen = static_cast<uint64_t>(n);
    out->trim.strategy = StreamTrim::Strategy::kMaxLen;
    return true;
  }
  if (!ParseStrictId(args[*i], &out->trim.minid, reply)) return false;
  out->trim.strategy = StreamTrim::Strategy::kMinId;
  return true;
}

// Returns the index of XADD's id (for XTRIM, of the last argument), or -1 after replying.
int64_t ParseAddOrTrim(Args args, bool xadd, AddTrimArgs* out, protocol::ReplyWriter& reply) {
  bool limit_given = false;
  int64_t limit = 0;
  size_t i = 2;
  for (; i < args.size(); ++i) {
    size_t more = args.size() - 1 - i;
    std::string_view opt = protocol::AsCString(args[i]);
    if (xadd && opt == "*") break;
    if (EqualsIgnoreCase(opt, "MAXLEN") && more) {
      if (!ParseThreshold(args, &i, true, out, reply)) return -1;
    } else if (EqualsIgnoreCase(opt, "MINID") && more) {
      if (!ParseThreshold(args, &i, false, out, reply)) return -1;
    } else if (EqualsIgnoreCase(opt, "LIMIT") && more) {
      if (!ParseLongLong(args[i + 1], &limit, reply)) return -1;
      if (limit < 0) return reply.Error("ERR The LIMIT argument must be >= 0."), -1;
      limit_given = true;
      ++i;
    } else if (xadd && EqualsIgnoreCase(opt, "NOMKSTREAM")) {
      out->no_mkstream = true;
    } else if (xadd) {
      if (!ParseId(args[i], 0, true, &out->id, &out->seq_given, reply)) return -1;
      out->id_given = true;
      break;
    } else {
      return reply.Error(errors::kSyntax), -1;
    }
  }
  if (limit != 0 && out->trim.strategy == StreamTrim::Strategy::kNone) {
    return reply.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"), -1;
  }
  if (!xadd && out->trim.strategy == StreamTrim::Strategy::kNone) {
    return reply.Error("ERR syntax error, XTRIM must be called with a trimming strategy"), -1;
  }
  if (limit_given && !out->trim.approx) {
    return reply.Error("ERR syntax error, LIMIT cannot be used without the special ~ option"), -1;
  }
  // Without LIMIT, `~` does at most 100 nodes' worth of work (100 * stream-node-max-entries).
  out->trim.limit = limit_given ? static_cast<size_t>(limit) : out->trim.approx ? 100 * Stream::kNodeMaxEntries : 0;
  return static_cast<int64_t>(i);
}

Entry* FindStream(ShardCommand& c, bool* wrong, Lookup kind) {
  return FindTyped(c, c.args[1], ValueType::kStream, wrong, kind);
}

// The id XADD gives its entry (Redis's streamAppendItem), or nullopt after replying.
std::optional<StreamId> NextId(ShardCommand& c, const Stream& s, const AddTrimArgs& a) {
  StreamId last = s.last_id();
  StreamId id;
  if (!a.id_given) {
    if (static_cast<uint64_t>(c.now_ms) > last.ms) {
      id = {static_cast<uint64_t>(c.now_ms), 0};
    } else {
      id = last;
      id.Increment();
    }
  } else if (a.seq_given) {
    id = a.id;
  } else if (last.ms == a.id.ms) {
    // Redis 7.0 answers this overflow with its "too large" error (errno is left ERANGE).
    if (last.seq == UINT64_MAX) return c.reply.Error("ERR Elements are too large to be stored"), std::nullopt;
    id = {last.ms, last.seq + 1};
  } else {
    id = a.id;
  }
  if (id <= last) return c.reply.Error(kIdTooSmall), std::nullopt;
  return id;
}

// After a change: the stream's watchers and blocked readers see it.
void Changed(ShardCommand& c, std::string_view event) {
  c.db.Touch(c.args[1]);
  NotifyKeyspace(c, kEventStream, event, c.args[1]);
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
void CmdXAdd(ShardCommand& c) {
  AddTrimArgs a;
  int64_t id_pos = ParseAddOrTrim(c.args, true, &a, c.reply);
  if (id_pos < 0) return;
  size_t fields = c.args.size() - static_cast<size_t>(id_pos) - 1;
  if (fields < 2 || fields % 2 == 1) return c.reply.Error(errors::WrongArity("xadd"));
  if (a.id_given && a.seq_given && a.id == StreamId::Min()) {
    return c.reply.Error("ERR The ID specified in XADD must be greater than 0-0");
  }
  bool wrong = false;
  Entry* e = FindStream(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr && a.no_mkstream) return c.reply.Null();
  // A new stream's last id is 0-0, which any id accepted above exceeds: creating it first
  // never leaves an empty key behind.
  if (e == nullptr) e = stream::Create(c.db, c.args[1], c.now_ms);
  Stream& s = stream::Of(e);
  if (s.last_id() == StreamId::Max()) {
    return c.reply.Error("ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  std::optional<StreamId> id = NextId(c, s, a);
  if (!id) return;
  Args field_values = c.args.subspan(static_cast<size_t>(id_pos) + 1);
  s.Append(*id, field_values);
  size_t bytes = c.args[1].size();
  for (std::string_view f : field_values) bytes += f.size();
  ChargeWrite(c.charge, false, bytes);
  c.reply.Bulk(id->ToString());
  Changed(c, "xadd");
  if (s.Trim(a.trim) > 0) NotifyKeyspace(c, kEventStream, "xtrim", c.args[1]);
}

void CmdXLen(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindStream(c, &wrong, Lookup::kRead);
  if (wrong) return;
  ChargeRead(c.charge, c.args[1], nullptr);
  c.reply.Integer(e == nullptr ? 0 : static_cast<int64_t>(stream::Of(e).length()));
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n]
void RangeCommand(ShardCommand& c, bool reverse) {
  std::string_view start_arg = reverse ? c.args[3] : c.args[2];
  std::string_view end_arg = reverse ? c.args[2] : c.args[3];
  StreamId start, end;
  bool start_ex = false, end_ex = false;
  if (!ParseIntervalId(start_arg, 0, &start, &start_ex, c.reply)) return;
  if (start_ex && !start.Increment()) return c.reply.Error("ERR invalid start ID for the interval");
  if (!ParseIntervalId(end_arg, UINT64_MAX, &end, &end_ex, c.reply)) return;
  if (end_ex && !end.Decrement()) return c.reply.Error("ERR invalid end ID for the interval");
  int64_t count = -1;
  for (size_t j = 4; j < c.args.size(); ++j) {
    if (!EqualsIgnoreCase(protocol::AsCString(c.args[j]), "COUNT") || j + 1 >= c.args.size()) {
      return c.reply.Error(errors::kSyntax);
    }
    if (!ParseLongLong(c.args[++j], &count, c.reply)) return;
    count = std::max<int64_t>(count, 0);
  }
  bool wrong = false;
  Entry* e = FindStream(c, &wrong, Lookup::kRead);
  if (wrong) return;
  if (e == nullptr) return c.reply.ArrayHeader(0);
  if (count == 0) return c.reply.NullArray();
  size_t bytes = ReplyRange(c.reply, stream::Of(e), start, end, reverse, count < 0 ? 0 : static_cast<size_t>(count));
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + bytes);
}

void CmdXRange(ShardCommand& c) { RangeCommand(c, false); }
void CmdXRevRange(ShardCommand& c) { RangeCommand(c, true); }

// XDEL key id [id ...]
void CmdXDel(ShardCommand& c) {
  bool wrong = false;
  Entry* e = FindStream(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Integer(0);
  // Every id is checked before any is deleted, so a bad one changes nothing.
  std::vector<StreamId> ids(c.args.size() - 2);
  for (size_t j = 2; j < c.args.size(); ++j) {
    if (!ParseStrictId(c.args[j], &ids[j - 2], c.reply)) return;
  }
  Stream& s = stream::Of(e);
  int64_t deleted = 0;
  for (StreamId id : ids) deleted += s.Delete(id) ? 1 : 0;
  if (deleted > 0) {
    c.charge.Add(engine::RuOp::kDelete, c.args[1].size() * static_cast<size_t>(deleted));
    Changed(c, "xdel");
  }
  c.reply.Integer(deleted);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void CmdXTrim(ShardCommand& c) {
  AddTrimArgs a;
  if (ParseAddOrTrim(c.args, false, &a, c.reply) < 0) return;
  bool wrong = false;
  Entry* e = FindStream(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Integer(0);
  size_t dropped = stream::Of(e).Trim(a.trim);
  if (dropped > 0) {
    c.charge.Add(engine::RuOp::kDelete, c.args[1].size() * dropped);
    Changed(c, "xtrim");
  }
  c.reply.Integer(static_cast<int64_t>(dropped));
}

// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
void CmdXSetId(ShardCommand& c) {
  StreamId id, max_deleted;
  int64_t entries_added = -1;
  if (!ParseStrictId(c.args[2], &id, c.reply)) return;
  for (size_t i = 3; i < c.args.size(); i += 2) {
    bool more = i + 1 < c.args.size();
    std::string_view opt = protocol::AsCString(c.args[i]);
    if (EqualsIgnoreCase(opt, "ENTRIESADDED") && more) {
      if (!ParseLongLong(c.args[i + 1], &entries_added, c.reply)) return;
      if (entries_added < 0) return c.reply.Error("ERR entries_added must be positive");
    } else if (EqualsIgnoreCase(opt, "MAXDELETEDID") && more) {
      if (!ParseStrictId(c.args[i + 1], &max_deleted, c.reply)) return;
      if (id < max_deleted) {
        return c.reply.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
    } else {
      return c.reply.Error(errors::kSyntax);
    }
  }
  bool wrong = false;
  Entry* e = FindStream(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  if (e == nullptr) return c.reply.Error(errors::kNoSuchKey);
  Stream& s = stream::Of(e);
  if (s.length() > 0) {
    if (id < s.LastLiveId()) return c.reply.Error("ERR The ID specified in XSETID is smaller than the target stream top item");
    if (entries_added != -1 && s.length() > static_cast<uint64_t>(entries_added)) {
      return c.reply.Error("ERR The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  s.SetLastId(id);
  if (entries_added != -1) s.SetEntriesAdded(static_cast<uint64_t>(entries_added));
  if (max_deleted != StreamId::Min()) s.SetMaxDeletedId(max_deleted);
  // Redis 7.0 neither touches watchers, wakes blocked readers nor invalidates caches for XSETID.
  NotifyKeyspace(c, kEventStream | kEventKeepsCaches, "xsetid", c.args[1]);
  c.reply.Ok();
}

// ---- XINFO ----

void XInfoHelp(ShardCommand& c) {
  ReplyHelp(c.reply, {"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.", "GROUPS <key>",
                      "    Show the stream consumer groups.", "STREAM <key> [FULL [COUNT <count>]",
                      "    Show information about the stream."});
}

// The entry at one end of the stream, or a null.
void ReplyEdgeEntry(protocol::ReplyWriter& reply, const Stream& s, bool last) {
  bool found = false;
  s.Range(StreamId::Min(), StreamId::Max(), last, [&](StreamId id, std::span<const std::string_view> fv) {
    ReplyEntry(reply, id, fv);
    found = true;
    return false;
  });
  if (!found) reply.Null();
}

// One consumer of XINFO STREAM FULL: its pending entries up to `count` (0: all).
void ReplyConsumerFull(protocol::ReplyWriter& reply, const engine::StreamGroup& group, const std::string& name,
                       const engine::StreamConsumer& consumer, size_t count) {
  reply.MapHeader(4);
  reply.Bulk("name");
  reply.Bulk(name);
  reply.Bulk("seen-time");
  reply.Integer(consumer.seen_time_ms);
  reply.Bulk("pel-count");
  reply.Integer(static_cast<int64_t>(consumer.pending.size()));
  reply.Bulk("pending");
  size_t n = count == 0 ? consumer.pending.size() : std::min(count, consumer.pending.size());
  reply.ArrayHeader(n);
  auto it = consumer.pending.begin();
  for (size_t i = 0; i < n; ++i, ++it) {
    const engine::StreamPending& nack = group.pel.find(it->first)->second;
    reply.ArrayHeader(3);
    reply.Bulk(it->first.ToString());
    reply.Integer(nack.delivery_time_ms);
    reply.Integer(static_cast<int64_t>(nack.delivery_count));
  }
}

// The groups of XINFO STREAM FULL, each with its PEL and consumers up to `count` (0: all).
void ReplyGroupsFull(protocol::ReplyWriter& reply, const Stream& s, size_t count) {
  reply.ArrayHeader(s.groups().size());
  for (const auto& [name, group] : s.groups()) {
    reply.MapHeader(7);
    reply.Bulk("name");
    reply.Bulk(name);
    reply.Bulk("last-delivered-id");
    reply.Bulk(group.last_id.ToString());
    reply.Bulk("entries-read");
    group.entries_read == engine::StreamGroup::kInvalidEntriesRead ? reply.Null() : reply.Integer(group.entries_read);
    reply.Bulk("lag");
    std::optional<int64_t> lag = s.Lag(group);
    lag ? reply.Integer(*lag) : reply.Null();
    reply.Bulk("pel-count");
    reply.Integer(static_cast<int64_t>(group.pel.size()));
    reply.Bulk("pending");
    size_t n = count == 0 ? group.pel.size() : std::min(count, group.pel.size());
    reply.ArrayHeader(n);
    auto it = group.pel.begin();
    for (size_t i = 0; i < n; ++i, ++it) {
      reply.ArrayHeader(4);
      reply.Bulk(it->first.ToString());
      reply.Bulk(it->second.consumer);
      reply.Integer(it->second.delivery_time_ms);
      reply.Integer(static_cast<int64_t>(it->second.delivery_count));
    }
    reply.Bulk("consumers");
    reply.ArrayHeader(group.consumers.size());
    for (const auto& [consumer_name, consumer] : group.consumers) {
      ReplyConsumerFull(reply, group, consumer_name, consumer, count);
    }
  }
}

// XINFO STREAM key [FULL [COUNT n]]. radix-tree-keys counts lapse's nodes, which split as
// Redis's listpacks do (100 entries); radix-tree-nodes is lapse's node count plus one, since
// lapse has no radix tree whose inner nodes it could count.
void XInfoStream(ShardCommand& c, const Stream& s) {
  Args opts = c.args.subspan(3);
  bool full = !opts.empty();
  int64_t count = 10;
  if (full) {
    bool shape_ok = (opts.size() == 1 || opts.size() == 3) && EqualsIgnoreCase(protocol::AsCString(opts[0]), "FULL") &&
                    (opts.size() == 1 || EqualsIgnoreCase(protocol::AsCString(opts[1]), "COUNT"));
    if (!shape_ok) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "XINFO"));
    if (opts.size() == 3 && !ParseLongLong(opts[2], &count, c.reply)) return;
    if (count < 0) count = 10;  // Redis 7.0.15 keeps its default for a negative COUNT
  }
  c.reply.MapHeader(full ? 9 : 10);
  c.reply.Bulk("length");
  c.reply.Integer(static_cast<int64_t>(s.length()));
  c.reply.Bulk("radix-tree-keys");
  c.reply.Integer(static_cast<int64_t>(s.node_count()));
  c.reply.Bulk("radix-tree-nodes");
  c.reply.Integer(static_cast<int64_t>(s.node_count() + 1));
  c.reply.Bulk("last-generated-id");
  c.reply.Bulk(s.last_id().ToString());
  c.reply.Bulk("max-deleted-entry-id");
  c.reply.Bulk(s.max_deleted_id().ToString());
  c.reply.Bulk("entries-added");
  c.reply.Integer(static_cast<int64_t>(s.entries_added()));
  c.reply.Bulk("recorded-first-entry-id");
  c.reply.Bulk(s.first_id().ToString());
  if (full) {
    c.reply.Bulk("entries");
    ReplyRange(c.reply, s, StreamId::Min(), StreamId::Max(), false, static_cast<size_t>(count));
    c.reply.Bulk("groups");
    return ReplyGroupsFull(c.reply, s, static_cast<size_t>(count));
  }
  c.reply.Bulk("groups");
  c.reply.Integer(static_cast<int64_t>(s.groups().size()));
  c.reply.Bulk("first-entry");
  ReplyEdgeEntry(c.reply, s, false);
  c.reply.Bulk("last-entry");
  ReplyEdgeEntry(c.reply, s, true);
}

// XINFO GROUPS key: each group's name, consumers, pending, last id, read counter and lag.
void XInfoGroups(ShardCommand& c, const Stream& s) {
  c.reply.ArrayHeader(s.groups().size());
  for (const auto& [name, group] : s.groups()) {
    c.reply.MapHeader(6);
    c.reply.Bulk("name");
    c.reply.Bulk(name);
    c.reply.Bulk("consumers");
    c.reply.Integer(static_cast<int64_t>(group.consumers.size()));
    c.reply.Bulk("pending");
    c.reply.Integer(static_cast<int64_t>(group.pel.size()));
    c.reply.Bulk("last-delivered-id");
    c.reply.Bulk(group.last_id.ToString());
    c.reply.Bulk("entries-read");
    group.entries_read == engine::StreamGroup::kInvalidEntriesRead ? c.reply.Null() : c.reply.Integer(group.entries_read);
    c.reply.Bulk("lag");
    std::optional<int64_t> lag = s.Lag(group);
    lag ? c.reply.Integer(*lag) : c.reply.Null();
  }
}

// XINFO CONSUMERS key group: each consumer's name, pending count and idle time.
void XInfoConsumers(ShardCommand& c, const engine::StreamGroup& group) {
  c.reply.ArrayHeader(group.consumers.size());
  for (const auto& [name, consumer] : group.consumers) {
    c.reply.MapHeader(3);
    c.reply.Bulk("name");
    c.reply.Bulk(name);
    c.reply.Bulk("pending");
    c.reply.Integer(static_cast<int64_t>(consumer.pending.size()));
    c.reply.Bulk("idle");
    c.reply.Integer(std::max<int64_t>(c.now_ms - consumer.seen_time_ms, 0));
  }
}

// XINFO STREAM|GROUPS|CONSUMERS|HELP
void CmdXInfo(ShardCommand& c) {
  std::string_view sub = protocol::AsCString(c.args[1]);
  if (EqualsIgnoreCase(sub, "HELP")) return XInfoHelp(c);
  bool wrong = false;
  Entry* e = FindTyped(c, c.args[2], ValueType::kStream, &wrong, Lookup::kRead);
  if (wrong) return;
  if (e == nullptr) return c.reply.Error(errors::kNoSuchKey);
  Stream& s = stream::Of(e);
  ChargeRead(c.charge, c.args[2], nullptr);
  if (EqualsIgnoreCase(sub, "CONSUMERS") && c.args.size() == 4) {
    const engine::StreamGroup* group = s.FindGroup(c.args[3]);
    if (group == nullptr) {
      return c.reply.Error("NOGROUP No such consumer group '" + std::string(protocol::AsCString(c.args[3])) +
                           "' for key name '" + std::string(protocol::AsCString(c.args[2])) + "'");
    }
    return XInfoConsumers(c, *group);
  }
  if (EqualsIgnoreCase(sub, "GROUPS") && c.args.size() == 3) return XInfoGroups(c, s);
  if (EqualsIgnoreCase(sub, "STREAM")) return XInfoStream(c, s);
  c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "XINFO"));
}

}  // namespace

void RegisterStreamCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kF = kFast, kM = kDenyOom;
  const char* g = "stream";
  table.Add({"xadd", -5, kW | kM | kF, 1, 1, 1, CmdXAdd, g, "Appends a new message to a stream. Creates the key if it doesn't exist."});
  table.Add({"xlen", 2, kR | kF, 1, 1, 1, CmdXLen, g, "Return the number of messages in a stream."});
  table.Add({"xrange", -4, kR, 1, 1, 1, CmdXRange, g, "Returns the messages from a stream within a range of IDs."});
  table.Add({"xrevrange", -4, kR, 1, 1, 1, CmdXRevRange, g, "Returns the messages from a stream within a range of IDs in reverse order."});
  table.Add({"xdel", -3, kW | kF, 1, 1, 1, CmdXDel, g, "Returns the number of messages after removing them from a stream."});
  table.Add({"xtrim", -4, kW, 1, 1, 1, CmdXTrim, g, "Deletes messages from the beginning of a stream."});
  table.Add({"xsetid", -3, kW | kM | kF, 1, 1, 1, CmdXSetId, g, "An internal command for replicating stream values."});
  table.Add({"xinfo", -2, kR, 2, 2, 1, CmdXInfo, g, "A container for stream introspection commands."},
            {{"consumers", 4}, {"groups", 3}, {"help", 2}, {"stream", -3}});
  RegisterStreamReadCommands(table);
  RegisterStreamGroupCommands(table);
}

}  // namespace lapse::server
