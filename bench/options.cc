// Options are table-driven: each entry names the flag and a setter that parses its value,
// so --help and the parser cannot disagree about which flags exist. Both `--name value` and
// `--name=value` are accepted, as memtier does.
#include "bench/options.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <string_view>

namespace lapse::bench {
namespace {

using Setter = std::function<bool(std::string_view, BenchOptions*)>;

struct OptionSpec {
  std::string_view name;
  std::string_view help;
  Setter set;
};

template <typename Int>
bool ParseNumber(std::string_view text, Int* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool ParseSeconds(std::string_view text, double* out) {
  try {
    size_t used = 0;
    *out = std::stod(std::string(text), &used);
    return used == text.size() && *out >= 0;
  } catch (...) {
    return false;
  }
}

// "A:B[:C...]" into positive-or-zero weights.
bool ParseRatio(std::string_view text, std::vector<uint32_t>* out) {
  out->clear();
  while (true) {
    size_t colon = text.find(':');
    uint32_t weight;
    if (!ParseNumber(text.substr(0, colon), &weight)) return false;
    out->push_back(weight);
    if (colon == std::string_view::npos) return true;
    text.remove_prefix(colon + 1);
  }
}

// "MIN-MAX" with MIN <= MAX.
bool ParseRange(std::string_view text, int64_t* min, int64_t* max) {
  size_t dash = text.find('-', 1);
  if (dash == std::string_view::npos) return false;
  return ParseNumber(text.substr(0, dash), min) && ParseNumber(text.substr(dash + 1), max) && *min <= *max &&
         *min >= 0;
}

bool ParseKeyPattern(std::string_view text, KeyPattern* out) {
  // memtier writes SET:GET patterns ("R:R"); one pattern serves both here.
  if (text.size() == 3 && text[1] == ':' && text[0] == text[2]) text = text.substr(0, 1);
  if (text == "R") *out = KeyPattern::kRandom;
  else if (text == "S") *out = KeyPattern::kSequential;
  else if (text == "G") *out = KeyPattern::kGaussian;
  else return false;
  return true;
}

const std::vector<OptionSpec>& Specs() {
  static const std::vector<OptionSpec> specs = {
      {"host", "server address (default 127.0.0.1)", [](auto v, auto* o) { o->host = v; return !v.empty(); }},
      {"port", "server port (default 6379)", [](auto v, auto* o) { return ParseNumber(v, &o->port); }},
      {"threads", "client threads, one event loop each (default 4)",
       [](auto v, auto* o) { return ParseNumber(v, &o->threads) && o->threads > 0; }},
      {"clients", "connections per thread (default 50)",
       [](auto v, auto* o) { return ParseNumber(v, &o->clients) && o->clients > 0; }},
      {"pipeline", "requests in flight per connection (default 1)",
       [](auto v, auto* o) { return ParseNumber(v, &o->pipeline) && o->pipeline > 0; }},
      {"requests", "requests per connection (default 10000)",
       [](auto v, auto* o) { return ParseNumber(v, &o->requests) && o->requests > 0; }},
      {"test-time", "run for this many seconds instead of --requests",
       [](auto v, auto* o) { return ParseSeconds(v, &o->test_time_s) && o->test_time_s > 0; }},
      {"ratio", "SET:GET ratio of the default commands (default 1:10)",
       [](auto v, auto* o) {
         std::vector<uint32_t> r;
         if (!ParseRatio(v, &r) || r.size() != 2 || r[0] + r[1] == 0) return false;
         o->set_ratio = r[0];
         o->get_ratio = r[1];
         return true;
       }},
      {"key-pattern", "R (uniform), S (sequential, each connection its own slice), G (gaussian)",
       [](auto v, auto* o) { return ParseKeyPattern(v, &o->key_pattern); }},
      {"key-prefix", "key name prefix (default memtier-)", [](auto v, auto* o) { o->key_prefix = v; return true; }},
      {"key-minimum", "lowest key number (default 0)", [](auto v, auto* o) { return ParseNumber(v, &o->key_minimum); }},
      {"key-maximum", "highest key number (default 10000000)",
       [](auto v, auto* o) { return ParseNumber(v, &o->key_maximum); }},
      {"data-size", "value bytes; for JSON bodies the whole object's bytes (default 32)",
       [](auto v, auto* o) { return ParseNumber(v, &o->data_size) && o->data_size > 0; }},
      {"data-json", "make __data__ a JSON object for every command, not only IPUT",
       [](auto v, auto* o) { o->data_json = true; return v.empty(); }},
      {"expiry-range", "MIN-MAX seconds: the default SET gets EX drawn uniformly from it",
       [](auto v, auto* o) { return ParseRange(v, &o->expiry_min_s, &o->expiry_max_s) && o->expiry_min_s > 0; }},
      {"ttl-range", "MIN-MAX seconds: JSON bodies get a \"ttl\" property drawn from it",
       [](auto v, auto* o) { return ParseRange(v, &o->ttl_min_s, &o->ttl_max_s) && o->ttl_min_s > 0; }},
      {"protocol", "resp2 or resp3 (resp3 sends HELLO 3 on connect)",
       [](auto v, auto* o) {
         if (v == "resp2" || v == "redis") o->protocol = 2;
         else if (v == "resp3") o->protocol = 3;
         else return false;
         return true;
       }},
      {"command", "request template, repeatable; __key__ and __data__ are replaced, e.g. \"IPUT c __key__ __data__\"",
       [](auto v, auto* o) { o->commands.emplace_back(v); return !v.empty(); }},
      {"command-ratio", "weights of the --command templates, A:B:... (default 1 each)",
       [](auto v, auto* o) { return ParseRatio(v, &o->command_ratio); }},
      {"json-out", "write the full JSON summary (with a per-second timeline) to this file",
       [](auto v, auto* o) { o->json_out = v; return !v.empty(); }},
      {"seed", "random seed (default 1)", [](auto v, auto* o) { return ParseNumber(v, &o->seed); }},
  };
  return specs;
}

const OptionSpec* FindSpec(std::string_view name) {
  for (const OptionSpec& spec : Specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool TakesNoValue(std::string_view name) { return name == "data-json"; }

std::optional<std::string> Validate(BenchOptions* o) {
  if (o->key_minimum > o->key_maximum) return "--key-minimum is above --key-maximum";
  if (!o->command_ratio.empty() && o->command_ratio.size() != o->commands.size()) {
    return "--command-ratio needs one weight per --command";
  }
  if (o->command_ratio.empty()) o->command_ratio.assign(o->commands.size(), 1);
  uint64_t total = 0;
  for (uint32_t w : o->command_ratio) total += w;
  if (!o->commands.empty() && total == 0) return "--command-ratio weights are all zero";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ParseOptions(int argc, char** argv, BenchOptions* out, bool* exit_now) {
  *exit_now = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *exit_now = true;
      return std::nullopt;
    }
    if (arg.substr(0, 2) != "--") return "unexpected argument '" + std::string(arg) + "'";
    arg.remove_prefix(2);
    std::string_view name = arg.substr(0, arg.find('='));
    std::string_view value;
    const OptionSpec* spec = FindSpec(name);
    if (!spec) return "unknown option --" + std::string(name);
    if (name.size() < arg.size()) {
      value = arg.substr(name.size() + 1);
    } else if (!TakesNoValue(name)) {
      if (i + 1 >= argc) return "--" + std::string(name) + " needs a value";
      value = argv[++i];
    }
    if (!spec->set(value, out)) return "bad value for --" + std::string(name) + ": '" + std::string(value) + "'";
  }
  return Validate(out);
}

std::string Usage() {
  std::string text =
      "lapse-bench: a memtier-style load generator for Redis-protocol servers.\n\n"
      "Closed loop: each connection keeps --pipeline requests in flight and sends the next one\n"
      "as soon as a reply arrives. Latency is measured from the moment a request is written to\n"
      "the socket until its reply has been read. A server stall therefore delays the requests\n"
      "that would have been sent during it instead of counting them as late (coordinated\n"
      "omission): figures compare servers under the same load; they are not open-loop\n"
      "response times. Histograms are log-linear (HdrHistogram-style, < 1% bucket error).\n\n"
      "Without --command the mix is SET __key__ __data__ [EX n] and GET __key__ by --ratio.\n"
      "For IPUT templates (or with --data-json) __data__ is a JSON object of --data-size bytes.\n\n"
      "Options:\n";
  for (const OptionSpec& spec : Specs()) {
    std::string flag = "  --" + std::string(spec.name);
    if (!TakesNoValue(spec.name)) flag += " V";
    flag.resize(std::max<size_t>(flag.size() + 1, 22), ' ');
    text += flag + std::string(spec.help) + "\n";
  }
  return text;
}

}  // namespace lapse::bench
