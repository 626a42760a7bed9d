// File: server/memory_commands.cc
//
// MEMORY USAGE, PURGE, MALLOC-STATS and HELP, as in Redis 7.0. USAGE reports what the key
// costs lapse: its entry's allocation (key, value, header and, with a TTL, its deadline),
// its bucket slot and, with a TTL, its timing-wheel record. The figure is lapse's own, not
// Redis's, whose objects are laid out differently. DOCTOR and STATS, whose reports are built
// from Redis's own internals, are not built yet and say so.
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

// The dispatcher has checked the subcommand and its arity against the table; the key, when
// there is one, is args[2], so USAGE runs on the key's shard.
void CmdMemory(ShardCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "USAGE")) return MemoryUsage(c);
  if (EqualsIgnoreCase(sub, "PURGE")) {
    if (!PurgeAllocator()) return c.reply.Error("ERR Error purging dirty pages");
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "MALLOC-STATS")) return c.reply.Verbatim(AllocatorStats());
  if (EqualsIgnoreCase(sub, "DOCTOR")) return c.reply.Error("ERR MEMORY DOCTOR is not supported by lapse yet");
  if (EqualsIgnoreCase(sub, "STATS")) {
    return c.reply.Error("ERR MEMORY STATS is not supported by lapse yet: INFO memory has the figures");
  }
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
