// Operations family: commands an operator uses to watch a running server rather than its
// data (MONITOR, LATENCY). They run on the connection's thread and touch no shard; what they
// watch is server-wide and reaches them across threads (server/monitor.h, server/latency.h).
#include <vector>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace {

// MONITOR: from now on the client gets a line for every command run. A client that already
// monitors gets no reply at all, as in Redis (which ignores the command).
void CmdMonitor(ConnCommand& c) {
  // Inside EXEC a reply per command is expected, and Redis refuses what would break that.
  if (ShardSet::InAtomicStep()) return c.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
  if (c.server.monitors().Add(*c.session.info)) c.reply.Ok();
}

// ---- LATENCY ----

void LatencyLatest(ConnCommand& c) {
  std::vector<LatencyMonitor::Latest> latest = c.server.latency().LatestSamples();
  c.reply.ArrayHeader(latest.size());
  for (const LatencyMonitor::Latest& l : latest) {
    c.reply.ArrayHeader(4);
    c.reply.Bulk(l.event);
    c.reply.Integer(l.time_s);
    c.reply.Integer(l.last_ms);
    c.reply.Integer(l.max_ms);
  }
}

void LatencyHistory(ConnCommand& c) {
  std::vector<LatencyMonitor::Sample> samples = c.server.latency().History(c.args[2]);
  c.reply.ArrayHeader(samples.size());
  for (const LatencyMonitor::Sample& s : samples) {
    c.reply.ArrayHeader(2);
    c.reply.Integer(s.time_s);
    c.reply.Integer(s.ms);
  }
}

// lapse draws no ASCII graphs; an event with samples is pointed to LATENCY HISTORY instead.
void LatencyGraph(ConnCommand& c) {
  std::string event(c.args[2]);
  if (!c.server.latency().HasSamples(event)) return c.reply.Error("ERR No samples available for event '" + event + "'");
  c.reply.Error("ERR LATENCY GRAPH is not supported by lapse; LATENCY HISTORY " + event + " gives the same samples");
}

// One command's histogram: its calls, and (microseconds, calls at or below) pairs.
void ReplyHistogram(ConnCommand& c, const CommandLatencyHistogram::Totals& totals) {
  c.reply.MapHeader(2);
  c.reply.Bulk("calls");
  c.reply.Integer(static_cast<int64_t>(totals.total));
  c.reply.Bulk("histogram_usec");
  std::vector<std::pair<int64_t, uint64_t>> buckets = totals.CumulativeBuckets();
  c.reply.MapHeader(buckets.size());
  for (const auto& [micros, calls] : buckets) {
    c.reply.Integer(micros);
    c.reply.Integer(static_cast<int64_t>(calls));
  }
}

// LATENCY HISTOGRAM [command ...]: every command with calls, or the named ones (a container
// name stands for its subcommands, "client|id" for one); unknown names are skipped, a name
// given twice is answered twice, as in Redis.
void LatencyHistogram(ConnCommand& c) {
  const CommandTable& table = c.server.commands();
  std::vector<uint32_t> ids;
  auto add_with_data = [&](uint32_t id) {
    if (c.server.LatencyTotals(id).total > 0) ids.push_back(id);
  };
  if (c.args.size() == 2) {
    for (uint32_t id = 0; id < table.stat_count(); ++id) add_with_data(id);
  }
  for (size_t i = 2; i < c.args.size(); ++i) {
    std::string_view name = c.args[i];
    size_t bar = name.find('|');
    const CommandSpec* spec = table.Find(name.substr(0, bar));
    if (spec == nullptr) continue;
    if (bar != std::string_view::npos) {
      if (const SubcommandSpec* sub = spec->FindSubcommand(name.substr(bar + 1))) add_with_data(sub->stat_id);
      continue;
    }
    add_with_data(spec->stat_id);
    for (const SubcommandSpec& sub : spec->subcommands) add_with_data(sub.stat_id);
  }
  c.reply.MapHeader(ids.size());
  for (uint32_t id : ids) {
    c.reply.Bulk(table.stat_name(id));
    ReplyHistogram(c, c.server.LatencyTotals(id));
  }
}

// The dispatcher has checked the subcommand and its arity against the table.
void CmdLatency(ConnCommand& c) {
  std::string_view sub = c.args[1];
  using protocol::EqualsIgnoreCase;
  if (EqualsIgnoreCase(sub, "LATEST")) return LatencyLatest(c);
  if (EqualsIgnoreCase(sub, "HISTORY")) return LatencyHistory(c);
  if (EqualsIgnoreCase(sub, "GRAPH")) return LatencyGraph(c);
  if (EqualsIgnoreCase(sub, "HISTOGRAM")) return LatencyHistogram(c);
  if (EqualsIgnoreCase(sub, "DOCTOR")) return c.reply.Verbatim(c.server.latency().Doctor());
  if (EqualsIgnoreCase(sub, "RESET")) {
    std::vector<std::string_view> events(c.args.begin() + 2, c.args.end());
    return c.reply.Integer(static_cast<int64_t>(c.server.latency().Reset(events)));
  }
  ReplyHelp(c.reply, {"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "DOCTOR", "    Return a human readable latency analysis report.",
                      "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
                      "HISTORY <event>", "    Return time-latency samples for the <event> class.",
                      "LATEST", "    Return the latest latency samples for all events.",
                      "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
                      "    (default: reset all data for all event classes)",
                      "HISTOGRAM [COMMAND ...]",
                      "    Return a cumulative distribution of latencies in the format of a histogram for the specified "
                      "command names.",
                      "    If no commands are specified then all histograms are replied."});
}

}  // namespace

void RegisterOperationsCommands(CommandTable& table) {
  // name, arity, flags, first key, last key, step, handler, group, summary
  table.Add({"monitor", 1, kAdmin | kNoScript, 0, 0, 0, CmdMonitor, "server",
             "Listen for all requests received by the server in real time"});
  table.Add({"latency", -2, kAdmin | kNoScript, 0, 0, 0, CmdLatency, "server", "A container for latency diagnostics commands"},
            {{"doctor", 2}, {"graph", 3}, {"help", 2}, {"histogram", -2}, {"history", 3}, {"latest", 2}, {"reset", -2}});
}

}  // namespace lapse::server
