// File: bench/report.h
//
// Merges the threads' figures and renders them: a memtier-like table for people, and JSON
// for scripts (bench/compare reads the JSON; the table is for eyes only). Latencies are
// reported in milliseconds with microsecond precision; ops/s of a command type is its
// completed replies over the whole run's duration (first request written to last reply
// read), so the per-type figures add up to the total.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/client_thread.h"
#include "bench/options.h"
#include "bench/request_builder.h"

namespace lapse::bench {

struct RunSummary {
  std::vector<std::string> names;        // by template index
  std::vector<CommandFigures> commands;  // by template index
  CommandFigures total;
  std::vector<std::vector<CommandFigures>> timeline;  // [second][template]
  double duration_s = 0;
  uint64_t connection_errors = 0;
};

RunSummary Summarize(const CommandMix& mix, std::vector<ThreadResult>& threads);

// The table: one row per command type and a Totals row.
std::string RenderTable(const BenchOptions& options, const RunSummary& summary);

// JSON: configuration, totals, per-command figures; with `timeline`, per-second figures too.
std::string RenderJson(const BenchOptions& options, const RunSummary& summary, bool timeline);

}  // namespace lapse::bench
