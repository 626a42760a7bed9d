// The JSON is written by hand (a flat, fixed shape) so that lapse-bench needs no JSON
// library; names come from command words and option strings, which are escaped.
#include "bench/report.h"

#include <algorithm>
#include <cstdio>

namespace lapse::bench {
namespace {

double Ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// {"ops":…,"ops_per_sec":…,"errors":…,"avg_ms":…,"p50_ms":…,…}
std::string FiguresJson(const CommandFigures& f, double duration_s) {
  const LatencyHistogram& h = f.latency;
  double rate = duration_s > 0 ? static_cast<double>(h.count()) / duration_s : 0;
  return "{\"ops\":" + std::to_string(h.count()) + ",\"ops_per_sec\":" + Fixed(rate, 1) +
         ",\"errors\":" + std::to_string(f.errors) + ",\"avg_ms\":" + Fixed(h.mean() / 1e6, 3) +
         ",\"p50_ms\":" + Fixed(Ms(h.Quantile(0.50)), 3) + ",\"p99_ms\":" + Fixed(Ms(h.Quantile(0.99)), 3) +
         ",\"p999_ms\":" + Fixed(Ms(h.Quantile(0.999)), 3) + ",\"max_ms\":" + Fixed(Ms(h.max()), 3) + "}";
}

std::string ConfigJson(const BenchOptions& o) {
  std::string commands = "[";
  for (size_t i = 0; i < o.commands.size(); ++i) commands += (i ? "," : "") + JsonString(o.commands[i]);
  commands += "]";
  return "{\"host\":" + JsonString(o.host) + ",\"port\":" + std::to_string(o.port) +
         ",\"threads\":" + std::to_string(o.threads) + ",\"clients_per_thread\":" + std::to_string(o.clients) +
         ",\"pipeline\":" + std::to_string(o.pipeline) + ",\"requests_per_client\":" +
         (o.test_time_s > 0 ? std::string("null") : std::to_string(o.requests)) +
         ",\"test_time_s\":" + Fixed(o.test_time_s, 3) + ",\"data_size\":" + std::to_string(o.data_size) +
         ",\"protocol\":" + std::to_string(o.protocol) + ",\"commands\":" + commands + "}";
}

std::string Row(const std::string& name, const CommandFigures& f, double duration_s) {
  const LatencyHistogram& h = f.latency;
  char line[256];
  double rate = duration_s > 0 ? static_cast<double>(h.count()) / duration_s : 0;
  std::snprintf(line, sizeof line, "%-10s %12.1f %10.3f %10.3f %10.3f %10.3f %10.3f %8llu\n", name.c_str(), rate,
                h.mean() / 1e6, Ms(h.Quantile(0.5)), Ms(h.Quantile(0.99)), Ms(h.Quantile(0.999)), Ms(h.max()),
                static_cast<unsigned long long>(f.errors));
  return line;
}

}  // namespace

RunSummary Summarize(const CommandMix& mix, std::vector<ThreadResult>& threads) {
  RunSummary s;
  for (const CommandTemplate& t : mix.templates) s.names.push_back(t.name);
  s.commands.resize(mix.templates.size());
  uint64_t first = UINT64_MAX, last = 0;
  for (ThreadResult& r : threads) {
    for (size_t i = 0; i < r.commands.size(); ++i) s.commands[i].Merge(r.commands[i]);
    if (r.timeline.size() > s.timeline.size()) s.timeline.resize(r.timeline.size(), std::vector<CommandFigures>(mix.templates.size()));
    for (size_t sec = 0; sec < r.timeline.size(); ++sec) {
      for (size_t i = 0; i < r.timeline[sec].size(); ++i) s.timeline[sec][i].Merge(r.timeline[sec][i]);
    }
    if (r.first_send_ns) first = std::min(first, r.first_send_ns);
    last = std::max(last, r.last_reply_ns);
    s.connection_errors += r.connection_errors;
  }
  for (const CommandFigures& f : s.commands) s.total.Merge(f);
  s.duration_s = (first != UINT64_MAX && last > first) ? static_cast<double>(last - first) / 1e9 : 0;
  return s;
}

std::string RenderTable(const BenchOptions& o, const RunSummary& s) {
  std::string text;
  char head[256];
  std::snprintf(head, sizeof head,
                "%d threads x %d connections, pipeline %d, %.2f s, RESP%d (closed loop; latency from write to reply)\n",
                o.threads, o.clients, o.pipeline, s.duration_s, o.protocol);
  text += head;
  std::snprintf(head, sizeof head, "%-10s %12s %10s %10s %10s %10s %10s %8s\n", "Type", "Ops/sec", "Avg(ms)",
                "p50(ms)", "p99(ms)", "p99.9(ms)", "Max(ms)", "Errors");
  text += head;
  text += std::string(88, '-') + "\n";
  for (size_t i = 0; i < s.names.size(); ++i) text += Row(s.names[i], s.commands[i], s.duration_s);
  text += Row("Totals", s.total, s.duration_s);
  if (s.connection_errors) text += "connection errors: " + std::to_string(s.connection_errors) + "\n";
  return text;
}

std::string RenderJson(const BenchOptions& o, const RunSummary& s, bool timeline) {
  std::string json = "{\"config\":" + ConfigJson(o) + ",\"duration_s\":" + Fixed(s.duration_s, 3) +
                     ",\"connection_errors\":" + std::to_string(s.connection_errors) +
                     ",\"totals\":" + FiguresJson(s.total, s.duration_s) + ",\"commands\":{";
  for (size_t i = 0; i < s.names.size(); ++i) {
    json += (i ? "," : "") + JsonString(s.names[i]) + ":" + FiguresJson(s.commands[i], s.duration_s);
  }
  json += "}";
  if (timeline) {
    json += ",\"timeline\":[";
    for (size_t sec = 0; sec < s.timeline.size(); ++sec) {
      json += (sec ? ",{" : "{") + std::string("\"second\":") + std::to_string(sec) + ",\"commands\":{";
      for (size_t i = 0; i < s.names.size(); ++i) {
        json += (i ? "," : "") + JsonString(s.names[i]) + ":" + FiguresJson(s.timeline[sec][i], 1.0);
      }
      json += "}}";
    }
    json += "]";
  }
  return json + "}";
}

}  // namespace lapse::bench
