// File: server/debug_command.cc
//
// DEBUG (behind enable-debug-command): lapse's test hooks (ADVANCE, FREEZE-CLOCK,
// SET-ACTIVE-EXPIRE, SLEEP, RELOAD) and the subcommands client test suites use, with Redis
// 7.0's replies and errors:
//   - OBJECT key: Redis's one line. encoding is OBJECT ENCODING's; serializedlength is the
//     length of the value's RDB encoding (what DUMP writes, less its type byte), so it can
//     differ from Redis's where the two encode a value differently; lru and lru_seconds_idle
//     come from the key's access stamp; refcount is OBJECT REFCOUNT's.
//     For a list the ql_ fields describe lapse's own nodes (engine/list.h): their number,
//     elements per node, list-max-listpack-size, no compression (lapse never compresses
//     nodes), and the nodes' packed bytes.
//   - ERROR msg: the error msg, as given (Redis puts a '-' before it, whatever it is).
//   - PROTOCOL type: a test reply of each RESP type (DebugProtocol).
//   - LOG message: the message in the server's log, at warning level as Redis writes it.
//   - DIGEST, DIGEST-VALUE key...: Redis's signatures of the data (server/debug_digest.cc).
//   - POPULATE count [prefix] [size]: Redis's quick fill, "<prefix>:<n>" -> "value:<n>"
//     (padded with zero bytes or cut to `size`), skipping keys that exist, in one atomic step.
//   - QUICKLIST-PACKED-THRESHOLD size: Redis's check of the size, then OK. Redis stores an
//     element past the threshold in a plain node of its own rather than in a listpack;
//     lapse's nodes (engine/list.h) are byte strings with no size cap, and a node always
//     takes an element however large, so there is no second representation to switch to and
//     no threshold to keep: lists behave the same for any size.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <spdlog/spdlog.h>

#include "engine/list.h"
#include "engine/rdb_value.h"
#include "engine/shard.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/debug_digest.h"
#include "server/help_reply.h"
#include "server/key_util.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

// Redis's quicklistisSetPackedThreshold bound: below 4 GB less 1 MB.
constexpr uint64_t kPackedThresholdLimit = (uint64_t{1} << 32) - (uint64_t{1} << 20);

std::string ListFields(const engine::Entry& e, const Settings& s) {
  engine::list::NodeFigures nodes = engine::list::Nodes(&e);
  size_t count = engine::list::Size(&e);
  char buf[160];
  snprintf(buf, sizeof buf, " ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:0 ql_uncompressed_size:%zu",
           nodes.nodes, nodes.nodes ? static_cast<double>(count) / static_cast<double>(nodes.nodes) : 0.0,
           static_cast<int>(s.list_max_listpack_size), nodes.packed_bytes);
  return buf;
}

std::string ObjectLine(ConnCommand& c, const engine::Entry& e, int64_t now) {
  std::string rdb;
  engine::rdb::AppendValue(rdb, &e, c.server.persistence().compression());
  uint64_t idle_s = engine::IdleMs(&e, now) / 1000;
  char buf[256];
  snprintf(buf, sizeof buf, "Value at:%p refcount:%lld encoding:%s serializedlength:%zu lru:%llu lru_seconds_idle:%llu",
           static_cast<const void*>(&e), static_cast<long long>(ObjectRefcount(c.server, e)), ObjectEncodingName(e), rdb.empty() ? size_t{0} : rdb.size() - 1,
           static_cast<unsigned long long>((LruClock(now) - idle_s) & kLruClockMax),
           static_cast<unsigned long long>(idle_s));
  std::string line = buf;
  if (e.type() == engine::ValueType::kList) line += ListFields(e, c.server.config().Snapshot());
  return line;
}

// Looks the key up without touching it (Redis's dictFind): its idle time stays what it was.
void DebugObject(ConnCommand& c, std::string_view key) {
  std::string line;
  int64_t now = c.server.clock().NowMs();
  ShardSet& shards = c.server.shards();
  shards.WithShard(shards.ShardFor(key), [&](engine::Shard& shard) {
    engine::Entry* e = shard.db(c.session.db).Find(key, now);
    if (e != nullptr) line = ObjectLine(c, *e, now);
  });
  if (line.empty()) return c.reply.Error("ERR no such key");
  c.reply.SimpleString(line);
}

void DebugPackedThreshold(ConnCommand& c, std::string_view size) {
  std::optional<uint64_t> bytes = ParseMemory(size);
  if (!bytes || *bytes > kPackedThresholdLimit)
    return c.reply.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
  c.reply.Ok();
}

// Redis sends the message after a '-' as it is, but a line break would end the reply early:
// like Redis, those become spaces. Redis writes it as raw bytes, not as an error reply, so
// that its error counts leave it out (checked against redis-server 7.0.15): so does lapse.
void DebugError(ConnCommand& c, std::string_view message) {
  std::string text(message);
  for (char& ch : text) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  c.reply.Error(text);
  c.session.error_reply_uncounted = true;
}

void DebugHelp(ConnCommand& c) {
  ReplyHelp(c.reply,
            {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
             "ADVANCE <milliseconds>", "    Move the server clock forward.",
             "DIGEST", "    Output a hex signature representing the current DB content.",
             "DIGEST-VALUE <key> [<key> ...]", "    Output a hex signature of the values of all the specified keys.",
             "ERROR <string>",
             "    Return a Redis protocol error with <string> as message. Useful for clients",
             "    unit tests to simulate Redis errors.",
             "FREEZE-CLOCK <0|1>", "    Stop the server clock (ADVANCE still moves it) or let it run again.",
             "LOG <message>", "    Write <message> to the server log.",
             "OBJECT <key>", "    Show low level info about `key` and associated value.",
             "PROTOCOL <type>",
             "    Reply with a test value of the specified type. <type> can be: string,",
             "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
             "    true, false.",
             "QUICKLIST-PACKED-THRESHOLD <size>",
             "    Accepted as Redis checks it; changes nothing: lapse's list nodes take elements",
             "    of any size alike.",
             "POPULATE <count> [<prefix>] [<size>]",
             "    Create <count> string keys named key:<num>. If <prefix> is specified then",
             "    it is used instead of the 'key' prefix. These are not propagated to",
             "    replicas. Cluster slots are not respected so keys not belonging to the",
             "    current node can be created in cluster mode.",
             "RELOAD", "    Save the RDB on disk, empty the dataset and load it back.",
             "SET-ACTIVE-EXPIRE <0|1>", "    Pause or resume background reclamation.",
             "SLEEP <seconds>", "    Stop the serving thread for <seconds>."});
}

// PROTOCOL type: one reply of each RESP type, as Redis's DEBUG PROTOCOL sends them, for
// clients to test their parsers against. In RESP2 each falls back as every reply of its type
// does (a map to a flat array, true to :1); an attribute is left out there, and a push is
// refused, as Redis does.
void DebugProtocol(ConnCommand& c, std::string_view type) {
  protocol::ReplyWriter& r = c.reply;
  bool resp3 = r.version() == protocol::RespVersion::kResp3;
  if (EqualsIgnoreCase(type, "string")) return r.Bulk("Hello World");
  if (EqualsIgnoreCase(type, "integer")) return r.Integer(12345);
  if (EqualsIgnoreCase(type, "double")) return r.Double(3.141);
  if (EqualsIgnoreCase(type, "bignum")) return r.BigNumber("1234567999999999999999999999999999999");
  if (EqualsIgnoreCase(type, "null")) return r.Null();
  if (EqualsIgnoreCase(type, "true")) return r.Bool(true);
  if (EqualsIgnoreCase(type, "false")) return r.Bool(false);
  if (EqualsIgnoreCase(type, "verbatim")) return r.Verbatim("This is a verbatim\nstring", "txt");
  if (EqualsIgnoreCase(type, "array") || EqualsIgnoreCase(type, "set")) {
    EqualsIgnoreCase(type, "set") ? r.SetHeader(3) : r.ArrayHeader(3);
    for (int64_t j = 0; j < 3; ++j) r.Integer(j);
    return;
  }
  if (EqualsIgnoreCase(type, "map")) {
    r.MapHeader(3);
    for (int64_t j = 0; j < 3; ++j) {
      r.Integer(j);
      r.Bool(j == 1);
    }
    return;
  }
  if (EqualsIgnoreCase(type, "attrib")) {
    if (resp3) {
      r.buffer()->append("|1\r\n");  // an attribute: metadata before the reply it describes
      r.Bulk("key-popularity");
      r.ArrayHeader(2);
      r.Bulk("key:123");
      r.Integer(90);
    }
    return r.Bulk("Some real reply following the attribute");
  }
  if (EqualsIgnoreCase(type, "push")) {
    if (!resp3) return r.Error("ERR RESP2 is not supported by this command");
    r.PushHeader(2);
    r.Bulk("server-cpu-usage");
    r.Integer(42);
    // A push is out of band: a client waiting for this command's reply still gets one.
    return r.Bulk("Some real reply following the push reply");
  }
  r.Error("ERR Wrong protocol type name. Please use one of the following: "
          "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
}

// As Redis's getPositiveLongFromObjectOrReply: one error for both what is no integer and
// what is negative.
bool ParsePositive(ConnCommand& c, std::string_view text, int64_t* out) {
  if (!protocol::ParseInt64(text, out) || *out < 0) {
    return c.reply.Error("ERR value is out of range, must be positive"), false;
  }
  return true;
}

// POPULATE count [prefix] [size]. Like Redis's, it counts no change and sends no event; a
// key name is cut at 127 bytes, as Redis's 128-byte buffer cuts it.
void DebugPopulate(ConnCommand& c) {
  int64_t count = 0;
  int64_t size = 0;
  if (!ParsePositive(c, c.args[2], &count)) return;
  if (c.args.size() == 5 && !ParsePositive(c, c.args[4], &size)) return;
  std::string prefix(c.args.size() >= 4 ? protocol::AsCString(c.args[3]) : "key");
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  std::string key;
  std::string value;
  shards.RunHoldingAll([&] {
    for (int64_t j = 0; j < count; ++j) {
      key = prefix + ":" + std::to_string(j);
      if (key.size() > 127) key.resize(127);
      uint32_t id = shards.ShardFor(key);
      engine::Db& db = shards.shard(id).db(c.session.db);
      if (FindKey(shards.shard(id), db, key, now, Lookup::kWrite) != nullptr) continue;
      value = "value:" + std::to_string(j);
      if (size > 0) value.resize(static_cast<size_t>(size), '\0');
      db.Put(key, value, engine::ValueType::kString, engine::kNoDeadline, now);
    }
  });
  c.reply.Ok();
}

// The subcommands that set a 0|1 switch: SET-ACTIVE-EXPIRE, FREEZE-CLOCK.
bool ParseSwitch(ConnCommand& c, bool* on) {
  int64_t n = 0;
  if (!protocol::ParseInt64(c.args[2], &n) || (n != 0 && n != 1)) return c.reply.Error(errors::kNotInteger), false;
  *on = n == 1;
  return true;
}

void CmdDebug(ConnCommand& c) {
  std::string_view sub = c.args[1];
  bool three = c.args.size() == 3;
  bool on = false;
  if (EqualsIgnoreCase(sub, "ADVANCE") && three) {
    int64_t ms = 0;
    if (!protocol::ParseInt64(c.args[2], &ms) || ms < 0) return c.reply.Error(errors::kNotInteger);
    c.server.clock().Advance(ms);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "SET-ACTIVE-EXPIRE") && three) {
    if (!ParseSwitch(c, &on)) return;
    c.server.shards().set_active_expire(on);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "FREEZE-CLOCK") && three) {
    if (!ParseSwitch(c, &on)) return;
    c.server.clock().SetFrozen(on);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "SLEEP") && three) {
    // As Redis reads it (strtod of the leading number): text that is no number sleeps 0 s.
    std::string text(protocol::AsCString(c.args[2]));
    double seconds = std::strtod(text.c_str(), nullptr);
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "RELOAD") && c.args.size() == 2) {
    if (auto err = c.server.persistence().DebugReload()) return c.reply.Error(*err);
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "OBJECT") && three) return DebugObject(c, c.args[2]);
  if (EqualsIgnoreCase(sub, "ERROR") && three) return DebugError(c, c.args[2]);
  if (EqualsIgnoreCase(sub, "PROTOCOL") && three) return DebugProtocol(c, c.args[2]);
  if (EqualsIgnoreCase(sub, "DIGEST") && c.args.size() == 2) return ReplyDatasetDigest(c);
  if (EqualsIgnoreCase(sub, "DIGEST-VALUE")) return ReplyValueDigests(c);
  if (EqualsIgnoreCase(sub, "LOG") && three) {
    // Test suites mark their steps in the server's log with it.
    spdlog::warn("DEBUG LOG: {}", protocol::AsCString(c.args[2]));
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "QUICKLIST-PACKED-THRESHOLD") && three) return DebugPackedThreshold(c, c.args[2]);
  if (EqualsIgnoreCase(sub, "POPULATE") && c.args.size() >= 3 && c.args.size() <= 5) return DebugPopulate(c);
  if (EqualsIgnoreCase(sub, "HELP")) return DebugHelp(c);
  c.reply.Error(errors::UnknownSubcommandOrArity(protocol::AsCString(sub), "debug"));
}

}  // namespace

void RegisterDebugCommand(CommandTable& table) {
  table.Add({"debug", -2, kAdmin | kProtected | kNoScript, 0, 0, 0, CmdDebug, "server",
             "Debugging commands: ADVANCE, DIGEST, DIGEST-VALUE, ERROR, FREEZE-CLOCK, LOG, OBJECT, PROTOCOL, "
             "QUICKLIST-PACKED-THRESHOLD, RELOAD, SET-ACTIVE-EXPIRE, SLEEP."});
}

}  // namespace lapse::server
