// DUMP and RESTORE: one key's value as Redis 7.0's payload (engine/rdb_value.h, sealed with
// the RDB version and a CRC-64 by engine/rdb_codec.h), so that tools that copy keys between
// servers (redis-cli --cluster import, RIOT, MIGRATE-style scripts) work with lapse both ways.
//
// RESTORE reads the payload into a scratch database first and moves the finished entry into
// the real one only then: a payload that passes its checksum but holds malformed data leaves
// the keyspace exactly as it was, REPLACE or not. Checks run in Redis's order (options,
// BUSYKEY, TTL, checksum, data), so each bad input gets the error Redis would give.
//
// Hash-field TTLs are not part of the payload (Redis 7.0 has none): a restored hash's
// fields never expire.
#include "engine/access.h"
#include "engine/db.h"
#include "engine/rdb_value.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/keyspace_events.h"
#include "server/migrate.h"
#include "server/persistence.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::Entry;
using protocol::EqualsIgnoreCase;

namespace {

constexpr std::string_view kBusyKey = "BUSYKEY Target key name already exists.";
constexpr std::string_view kBadPayload = "ERR DUMP payload version or checksum are wrong";
constexpr std::string_view kBadData = "ERR Bad data format";

void CmdDump(ShardCommand& c) {
  Entry* e = FindKey(c, c.args[1], Lookup::kRead);
  ChargeRead(c.charge, c.args[1], e);
  if (e == nullptr) return c.reply.Null();
  std::string body;
  engine::rdb::AppendValue(body, e, c.server.persistence().compression());
  c.reply.Bulk(engine::rdb::SealPayload(std::move(body)));
}

struct RestoreOptions {
  bool replace = false;
  bool absttl = false;
  int64_t idle_seconds = -1;
  int64_t frequency = -1;
};

// REPLACE, ABSTTL, IDLETIME s, FREQ f, as Redis's restoreCommand reads them: IDLETIME and
// FREQ exclude each other (the second is a syntax error). False once the error is sent.
bool ParseRestoreOptions(ShardCommand& c, RestoreOptions* o) {
  for (size_t j = 4; j < c.args.size(); ++j) {
    std::string_view a = protocol::AsCString(c.args[j]);
    bool has_value = j + 1 < c.args.size();
    if (EqualsIgnoreCase(a, "REPLACE")) {
      o->replace = true;
    } else if (EqualsIgnoreCase(a, "ABSTTL")) {
      o->absttl = true;
    } else if (EqualsIgnoreCase(a, "IDLETIME") && has_value && o->frequency == -1) {
      if (!protocol::ParseInt64(c.args[++j], &o->idle_seconds)) return c.reply.Error(errors::kNotInteger), false;
      if (o->idle_seconds < 0) return c.reply.Error("ERR Invalid IDLETIME value, must be >= 0"), false;
    } else if (EqualsIgnoreCase(a, "FREQ") && has_value && o->idle_seconds == -1) {
      if (!protocol::ParseInt64(c.args[++j], &o->frequency)) return c.reply.Error(errors::kNotInteger), false;
      if (o->frequency < 0 || o->frequency > 255) {
        return c.reply.Error("ERR Invalid FREQ value, must be >= 0 and <= 255"), false;
      }
    } else {
      return c.reply.Error(errors::kSyntax), false;
    }
  }
  return true;
}

void CmdRestore(ShardCommand& c) {
  RestoreOptions o;
  if (!ParseRestoreOptions(c, &o)) return;
  std::string_view key = c.args[1];
  bool exists = FindKey(c, key, Lookup::kWrite) != nullptr;
  if (!o.replace && exists) return c.reply.Error(kBusyKey);
  int64_t ttl = 0;
  if (!protocol::ParseInt64(c.args[2], &ttl)) return c.reply.Error(errors::kNotInteger);
  if (ttl < 0) return c.reply.Error("ERR Invalid TTL value, must be >= 0");
  std::optional<std::string_view> body = engine::rdb::OpenPayload(c.args[3]);
  if (!body) return c.reply.Error(kBadPayload);
  engine::Db scratch(c.now_ms);
  engine::rdb::Reader reader(*body);
  std::string error;
  auto type = reader.Byte();
  Entry* e = type ? engine::rdb::ReadValue(reader, *type, scratch, key, c.server.collection_limits(), c.now_ms, &error)
                  : nullptr;
  if (e == nullptr) return c.reply.Error(kBadData);
  int64_t deadline = ttl == 0 ? engine::kNoDeadline : o.absttl ? ttl : c.now_ms + ttl;
  ChargeWrite(c.charge, true, key.size() + c.args[3].size());
  if (deadline != engine::kNoDeadline && deadline <= c.now_ms) {
    // Already expired: Redis answers OK and only deletes what REPLACE would have replaced.
    if (exists && c.db.Erase(key, c.now_ms)) NotifyKeyspace(c, kEventGeneric, "del", key);
    return c.reply.Ok();
  }
  if (deadline != engine::kNoDeadline) e = scratch.SetDeadline(e, deadline, c.now_ms);
  Entry* restored = scratch.Extract(key, c.now_ms);
  if (exists) c.db.Erase(key, c.now_ms);
  engine::SetRestoredAccess(restored, o.idle_seconds, o.frequency, c.now_ms);
  c.db.Adopt(restored, c.now_ms);
  NotifyKeyspace(c, kEventGeneric, "restore", key);
  c.reply.Ok();
}

}  // namespace

void RegisterDumpCommands(CommandTable& table) {
  table.Add({"dump", 2, kReadOnly, 1, 1, 1, CmdDump, "generic",
             "Returns a serialized representation of the value stored at a key."});
  table.Add({"restore", -4, kWrite | kDenyOom | kDangerous, 1, 1, 1, CmdRestore, "generic",
             "Creates a key from the serialized representation of a value."});
  RegisterMigrateCommand(table);
  // What MIGRATE sends a cluster node; a standalone server runs it as RESTORE.
  table.Add({"restore-asking", -4, kWrite | kDenyOom | kDangerous, 1, 1, 1, CmdRestore, "server",
             "An internal command for migrating keys in a cluster."});
}

}  // namespace lapse::server
