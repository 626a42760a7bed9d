// Templates are split like a shell line (whitespace, double quotes group), and a whole
// argument equal to __key__ or __data__ is a placeholder; placeholders inside a longer
// argument are not substituted (memtier behaves the same way).
#include "bench/request_builder.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace lapse::bench {
namespace {

void AppendNumber(uint64_t value, std::string* out) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out->append(buf, end);
}

void AppendHeader(char marker, uint64_t value, std::string* out) {
  out->push_back(marker);
  AppendNumber(value, out);
  out->append("\r\n", 2);
}

void AppendBulk(std::string_view s, std::string* out) {
  AppendHeader('$', s.size(), out);
  out->append(s);
  out->append("\r\n", 2);
}

std::string EncodeBulk(std::string_view s) {
  std::string out;
  AppendBulk(s, &out);
  return out;
}

// Splits on whitespace; "double quotes" group words into one argument.
std::vector<std::string> SplitTemplate(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, in_word = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      in_word = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Letters that look like data; the content does not matter to either server.
std::string RawValue(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string value(size, 'x');
  for (char& c : value) c = static_cast<char>('a' + rng() % 26);
  return value;
}

CommandTemplate Compile(const std::string& text, const BenchOptions& options) {
  CommandTemplate t;
  std::vector<std::string> words = SplitTemplate(text);
  t.name = Upper(words[0]);
  t.json_data = options.data_json || t.name == "IPUT";
  for (const std::string& w : words) {
    if (w == "__key__") {
      t.args.push_back({CommandTemplate::ArgKind::kKey, {}});
    } else if (w == "__data__") {
      t.args.push_back({CommandTemplate::ArgKind::kData, {}});
    } else {
      t.args.push_back({CommandTemplate::ArgKind::kLiteral, EncodeBulk(w)});
    }
  }
  bool data_varies = t.json_data && options.ttl_min_s > 0;
  if (!data_varies) {
    t.fixed_data = EncodeBulk(t.json_data ? JsonBody(options.data_size, 0) : RawValue(options.data_size, options.seed));
  }
  return t;
}

// Names used twice (two GET templates) get a suffix so their histograms stay apart.
void MakeNamesUnique(std::vector<CommandTemplate>* templates) {
  for (size_t i = 0; i < templates->size(); ++i) {
    int copies = 1;
    for (size_t j = 0; j < i; ++j) {
      if ((*templates)[j].name == (*templates)[i].name) ++copies;
    }
    if (copies > 1) (*templates)[i].name += "#" + std::to_string(copies);
  }
}

// One cycle of the ratio with each template's turns spread evenly (1:10 gives one SET among
// eleven requests; 2:2 gives A B A B rather than A A B B).
std::vector<uint32_t> Schedule(const std::vector<uint32_t>& weights) {
  std::vector<uint32_t> cycle;
  std::vector<uint32_t> given(weights.size(), 0);
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  for (uint64_t step = 0; step < total; ++step) {
    // The template furthest behind its share so far goes next.
    size_t best = 0;
    double best_lag = -1e18;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (given[i] >= weights[i]) continue;
      double lag = static_cast<double>(weights[i]) * static_cast<double>(step + 1) / static_cast<double>(total) - given[i];
      if (lag > best_lag) best_lag = lag, best = i;
    }
    ++given[best];
    cycle.push_back(static_cast<uint32_t>(best));
  }
  return cycle;
}

}  // namespace

std::string JsonBody(size_t size, int64_t ttl_s) {
  std::string head = "{";
  if (ttl_s > 0) head += "\"ttl\":" + std::to_string(ttl_s) + ",";
  head += "\"d\":\"";
  const std::string tail = "\"}";
  size_t fixed = head.size() + tail.size();
  size_t pad = size > fixed ? size - fixed : 0;
  std::string body = head;
  body.append(RawValue(pad, 7));
  body += tail;
  return body;
}

std::string CompileMix(const BenchOptions& options, CommandMix* mix) {
  std::vector<std::string> texts = options.commands;
  std::vector<uint32_t> weights = options.command_ratio;
  bool default_mix = texts.empty();
  if (default_mix) {
    texts = {"SET __key__ __data__", "GET __key__"};
    weights = {options.set_ratio, options.get_ratio};
  }
  for (const std::string& text : texts) {
    if (SplitTemplate(text).empty()) return "empty --command";
    mix->templates.push_back(Compile(text, options));
  }
  if (default_mix && options.expiry_min_s > 0) mix->templates[0].add_expiry = true;
  MakeNamesUnique(&mix->templates);
  mix->schedule = Schedule(weights);
  return {};
}

RequestBuilder::RequestBuilder(const BenchOptions& options, const CommandMix& mix, uint64_t slice, uint64_t slices)
    : options_(options), mix_(mix), rng_(options.seed * 0x9E3779B97F4A7C15ull + slice + 1) {
  uint64_t range = options.key_maximum - options.key_minimum + 1;
  slices = std::max<uint64_t>(slices, 1);
  slice_first_ = options.key_minimum + range * slice / slices;
  uint64_t slice_end = options.key_minimum + range * (slice + 1) / slices;
  slice_size_ = std::max<uint64_t>(slice_end - slice_first_, 1);
  double mean = (static_cast<double>(options.key_minimum) + static_cast<double>(options.key_maximum)) / 2;
  gaussian_ = std::normal_distribution<double>(mean, static_cast<double>(range) / 6);
}

int64_t RequestBuilder::Draw(int64_t min, int64_t max) {
  if (min >= max) return min;
  return min + static_cast<int64_t>(rng_() % static_cast<uint64_t>(max - min + 1));
}

uint64_t RequestBuilder::NextKey() {
  switch (options_.key_pattern) {
    case KeyPattern::kSequential:
      return slice_first_ + (sequence_++ % slice_size_);
    case KeyPattern::kGaussian: {
      double k = std::round(gaussian_(rng_));
      k = std::clamp(k, static_cast<double>(options_.key_minimum), static_cast<double>(options_.key_maximum));
      return static_cast<uint64_t>(k);
    }
    case KeyPattern::kRandom:
      break;
  }
  return static_cast<uint64_t>(Draw(static_cast<int64_t>(options_.key_minimum), static_cast<int64_t>(options_.key_maximum)));
}

void RequestBuilder::AppendKey(uint64_t key, std::string* out) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof digits, key).ptr;
  size_t digit_count = static_cast<size_t>(end - digits);
  AppendHeader('$', options_.key_prefix.size() + digit_count, out);
  out->append(options_.key_prefix);
  out->append(digits, digit_count);
  out->append("\r\n", 2);
}

void RequestBuilder::AppendData(const CommandTemplate& t, std::string* out) {
  if (!t.fixed_data.empty()) {
    out->append(t.fixed_data);
    return;
  }
  scratch_ = JsonBody(options_.data_size, Draw(options_.ttl_min_s, options_.ttl_max_s));
  AppendBulk(scratch_, out);
}

uint32_t RequestBuilder::AppendNext(std::string* out) {
  uint32_t index = mix_.schedule[schedule_pos_];
  schedule_pos_ = (schedule_pos_ + 1) % mix_.schedule.size();
  const CommandTemplate& t = mix_.templates[index];
  AppendHeader('*', t.args.size() + (t.add_expiry ? 2 : 0), out);
  // One key per request: a template naming __key__ twice (GETSET k k) means the same key.
  bool key_drawn = false;
  uint64_t key = 0;
  for (const CommandTemplate::Arg& arg : t.args) {
    switch (arg.kind) {
      case CommandTemplate::ArgKind::kLiteral:
        out->append(arg.encoded);
        break;
      case CommandTemplate::ArgKind::kKey:
        if (!key_drawn) key = NextKey(), key_drawn = true;
        AppendKey(key, out);
        break;
      case CommandTemplate::ArgKind::kData:
        AppendData(t, out);
        break;
    }
  }
  if (t.add_expiry) {
    out->append("$2\r\nEX\r\n", 8);
    std::string seconds = std::to_string(Draw(options_.expiry_min_s, options_.expiry_max_s));
    AppendBulk(seconds, out);
  }
  return index;
}

}  // namespace lapse::bench
