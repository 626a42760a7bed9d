// File: server/memory_commands.cc
//
// MEMORY USAGE, STATS, DOCTOR, PURGE, MALLOC-STATS and HELP, as in Redis 7.0. USAGE reports
// what the key costs lapse: its entry's allocation (key, value, header and, with a TTL, its
// deadline), its bucket slot and, with a TTL, its timing-wheel record. The figure is lapse's
// own, not Redis's, whose objects are laid out differently. STATS and DOCTOR answer Redis's
// fields and texts from lapse's figures (server/memory_report.h says which are whose).
//
// MEMORY is a connection command: USAGE holds only its key's shard, STATS visits them all.
#include <cstdint>
#include <string>

#include "engine/collection.h"
#include "engine/entry.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/key_util.h"
#include "server/memory.h"
#include "server/memory_report.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

constexpr size_t kBucketSlotBytes = sizeof(void*);
constexpr size_t kWheelRecordBytes = 8;

void MemoryUsage(ShardCommand& c) {
  // SAMPLES only matters for nested values, which lapse does not have yet; it is checked as
  // Redis checks it.
  for (size_t i = 3; i < c.args.size(); ++i) {
    if (!EqualsIgnoreCase(c.args[i], "SAMPLES") || i + 1 >= c.args.size()) return c.reply.Error(errors::kSyntax);
    int64_t samples = 0;
    if (!protocol::ParseInt64(c.args[++i], &samples)) return c.reply.Error(errors::kNotInteger);
    if (samples < 0) return c.reply.Error(errors::kSyntax);
  }
  // A peek: MEMORY USAGE counts as neither a hit nor a miss.
  engine::Entry* e = FindKey(c, c.args[2], Lookup::kWrite);
  if (e == nullptr) return c.reply.Null();
  size_t bytes = e->AllocatedBytes() + engine::TableBytes(e) + kBucketSlotBytes;
  if (e->deadline() != engine::kNoDeadline) bytes += kWheelRecordBytes;
  c.reply.Integer(static_cast<int64_t>(bytes));
}

void UsageOnKeyShard(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  std::string_view key = c.args[2];
  shards.WithShard(shards.ShardFor(key), [&](engine::Shard& shard) {
    ShardCommand sc{shard, shard.db(static_cast<size_t>(c.session.db)), c.args, c.reply, c.server.clock().NowMs(),
                    c.server};
    MemoryUsage(sc);
    c.charge = sc.charge;
  });
}

// Redis's MEMORY STATS: names and order as Redis 7.0 sends them; a database that holds keys
// is a map of its overheads.
void MemoryStats(ConnCommand& c) {
  MemoryOverhead m = GatherMemoryOverhead(c.server);
  auto field = [&](std::string_view name, uint64_t value) {
    c.reply.Bulk(name);
    c.reply.Integer(static_cast<int64_t>(value));
  };
  auto signed_field = [&](std::string_view name, uint64_t a, uint64_t b) {
    c.reply.Bulk(name);
    c.reply.Integer(static_cast<int64_t>(a) - static_cast<int64_t>(b));
  };
  auto ratio = [&](std::string_view name, uint64_t a, uint64_t b) {
    c.reply.Bulk(name);
    c.reply.Double(b == 0 ? 0.0 : static_cast<double>(static_cast<float>(a) / static_cast<float>(b)));
  };
  c.reply.MapHeader(27 + m.dbs.size());
  field("peak.allocated", m.peak_allocated);
  field("total.allocated", m.total_allocated);
  field("startup.allocated", m.startup_allocated);
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  field("clients.normal", m.clients_normal);
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", m.lua_caches);
  field("functions.caches", m.functions_caches);
  for (const MemoryOverhead::Db& db : m.dbs) {
    c.reply.Bulk("db." + std::to_string(db.id));
    c.reply.MapHeader(3);
    field("overhead.hashtable.main", db.main);
    field("overhead.hashtable.expires", db.expires);
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", m.overhead_total);
  field("keys.count", m.keys);
  field("keys.bytes-per-key", m.bytes_per_key);
  field("dataset.bytes", m.dataset);
  c.reply.Bulk("dataset.percentage");
  c.reply.Double(m.dataset_percentage);
  c.reply.Bulk("peak.percentage");
  c.reply.Double(m.peak_percentage);
  field("allocator.allocated", m.allocator_allocated);
  field("allocator.active", m.allocator_active);
  field("allocator.resident", m.allocator_resident);
  ratio("allocator-fragmentation.ratio", m.allocator_active, m.allocator_allocated);
  signed_field("allocator-fragmentation.bytes", m.allocator_active, m.allocator_allocated);
  ratio("allocator-rss.ratio", m.allocator_resident, m.allocator_active);
  signed_field("allocator-rss.bytes", m.allocator_resident, m.allocator_active);
  ratio("rss-overhead.ratio", m.process_rss, m.allocator_resident);
  signed_field("rss-overhead.bytes", m.process_rss, m.allocator_resident);
  ratio("fragmentation", m.process_rss, m.total_allocated);
  signed_field("fragmentation.bytes", m.process_rss, m.total_allocated);
}

// The dispatcher has checked the subcommand and its arity against the table.
void CmdMemory(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "USAGE")) return UsageOnKeyShard(c);
  if (EqualsIgnoreCase(sub, "PURGE")) {
    if (!PurgeAllocator()) return c.reply.Error("ERR Error purging dirty pages");
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "MALLOC-STATS")) return c.reply.Verbatim(AllocatorStats());
  if (EqualsIgnoreCase(sub, "DOCTOR")) return c.reply.Verbatim(MemoryDoctorReport(GatherMemoryOverhead(c.server)));
  if (EqualsIgnoreCase(sub, "STATS")) return MemoryStats(c);
  ReplyHelp(c.reply, {"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "DOCTOR",
                      "    Return memory problems reports.",
                      "MALLOC-STATS",
                      "    Return internal statistics report from the memory allocator.",
                      "PURGE",
                      "    Attempt to purge dirty pages for reclamation by the allocator.",
                      "STATS",
                      "    Return information about the memory usage of the server.",
                      "USAGE <key> [SAMPLES <count>]",
                      "    Return memory in bytes used by <key> and its value. Nested values are",
                      "    sampled up to <count> times (default: 5, 0 means sample all)."});
}

}  // namespace

void RegisterMemoryCommands(CommandTable& table) {
  table.Add({"memory", -2, kReadOnly, 2, 2, 1, CmdMemory, "server", "A container for memory diagnostics commands."},
            {{"doctor", 2}, {"help", 2}, {"malloc-stats", 2}, {"purge", 2}, {"stats", 2}, {"usage", -3}});
}

}  // namespace lapse::server
