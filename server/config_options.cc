// File: server/config_options.cc
//
// Parsers and printers of the CONFIG parameter kinds (see config_options.h). Each keeps
// Redis 7.0's quirks where a user can see them, because tools and test suites set values
// through CONFIG SET and compare what CONFIG GET answers: a memory value's unit product
// wraps, an output-limit's seconds are kept in a C int, a `save` rule's changes too.
#include "server/config_options.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <array>
#include <cctype>
#include <filesystem>
#include <vector>

namespace lapse::server {

std::optional<uint64_t> ParseMemory(std::string_view v) {
  size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  std::string unit = protocol::AsciiLower(v.substr(digits));
  uint64_t mul = 0;
  if (unit.empty() || unit == "b") mul = 1;
  else if (unit == "k") mul = 1000;
  else if (unit == "kb") mul = 1024;
  else if (unit == "m") mul = 1000 * 1000;
  else if (unit == "mb") mul = 1024 * 1024;
  else if (unit == "g") mul = 1000ull * 1000 * 1000;
  else if (unit == "gb") mul = 1024ull * 1024 * 1024;
  else return std::nullopt;
  constexpr size_t kMaxDigits = 127;  // Redis copies the digits into a 128-byte buffer
  if (digits > kMaxDigits) return std::nullopt;
  // strtoull: no digits read as 0, too many saturate; the unit's product wraps, as in Redis.
  uint64_t n = 0;
  for (size_t i = 0; i < digits; ++i) {
    auto d = static_cast<uint64_t>(v[i] - '0');
    n = n > (UINT64_MAX - d) / 10 ? UINT64_MAX : n * 10 + d;
  }
  return n * mul;
}

std::optional<int64_t> ParseStrtoll(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  size_t first_digit = i;
  uint64_t magnitude = 0;
  constexpr uint64_t kMaxMagnitude = static_cast<uint64_t>(INT64_MAX) + 1;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    auto d = static_cast<uint64_t>(s[i] - '0');
    magnitude = magnitude > (kMaxMagnitude - d) / 10 ? kMaxMagnitude : magnitude * 10 + d;
  }
  // No digits: strtoll leaves the end at the start, so only an empty string parses (as 0).
  if (i == first_digit) return s.empty() ? std::optional<int64_t>(0) : std::nullopt;
  if (i != s.size()) return std::nullopt;
  if (negative) return magnitude == kMaxMagnitude ? INT64_MIN : -static_cast<int64_t>(magnitude);
  return magnitude >= kMaxMagnitude ? INT64_MAX : static_cast<int64_t>(magnitude);
}

namespace {

std::optional<bool> ParseYesNo(std::string_view s) {
  std::string l = protocol::AsciiLower(s);
  if (l == "yes") return true;
  if (l == "no") return false;
  return std::nullopt;
}

// Redis's sdssplitlen(value, " "): two spaces make an empty word, and "" is no words at all.
std::vector<std::string_view> SplitOnSingleSpaces(std::string_view v) {
  std::vector<std::string_view> words;
  for (size_t start = 0; !v.empty();) {
    size_t end = v.find(' ', start);
    words.push_back(v.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return words;
}

// What a C `int` keeps of a long long: its low 32 bits.
int64_t AsCInt(int64_t n) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(n))); }

// `client-output-buffer-limit <class> <hard> <soft> <soft-seconds> [<class> ...]`, as Redis
// parses it: every group is checked before any is applied.
std::optional<std::string> SetOutputBufferLimits(Settings& s, std::string_view v) {
  std::vector<std::string_view> words = SplitOnSingleSpaces(v);
  // Like Redis, an empty value is a list of no groups: valid, and it changes nothing.
  if (words.size() % 4 != 0) return "Wrong number of arguments in buffer limit configuration.";
  Settings candidate = s;
  for (size_t i = 0; i < words.size(); i += 4) {
    std::string cls = protocol::AsciiLower(words[i]);
    OutputBufferLimit* limit = cls == "normal"                      ? &candidate.output_limit_normal
                               : cls == "replica" || cls == "slave" ? &candidate.output_limit_replica
                               : cls == "pubsub"                    ? &candidate.output_limit_pubsub
                                                                    : nullptr;
    if (limit == nullptr) return "Invalid client class specified in buffer limit configuration.";
    auto hard = ParseMemory(words[i + 1]);
    auto soft = ParseMemory(words[i + 2]);
    // Redis reads the seconds with strtoll into an int, then refuses a negative int.
    auto seconds = ParseStrtoll(words[i + 3]);
    if (seconds) seconds = AsCInt(*seconds);
    if (!hard || !soft || !seconds || *seconds < 0) {
      return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    }
    *limit = OutputBufferLimit{static_cast<int64_t>(*hard), static_cast<int64_t>(*soft), *seconds};
  }
  s = std::move(candidate);
  return std::nullopt;
}

std::string FormatOutputBufferLimits(const Settings& s) {
  auto group = [](const char* cls, const OutputBufferLimit& l) {
    return std::string(cls) + " " + std::to_string(static_cast<uint64_t>(l.hard)) + " " +
           std::to_string(static_cast<uint64_t>(l.soft)) + " " + std::to_string(l.soft_seconds);
  };
  return group("normal", s.output_limit_normal) + " " + group("slave", s.output_limit_replica) + " " +
         group("pubsub", s.output_limit_pubsub);
}

// Redis's `save`: pairs of "<seconds> <changes>", or "" for none. Each number is read with
// strtoll; the seconds are kept as a time_t, the changes as an int.
std::optional<std::string> SetSaveRules(Settings& s, std::string_view v) {
  std::vector<std::string_view> words = SplitOnSingleSpaces(v);
  if (words.size() % 2 != 0) return "Invalid save parameters";
  std::vector<std::pair<int64_t, int64_t>> rules;
  for (size_t k = 0; k < words.size(); k += 2) {
    auto seconds = ParseStrtoll(words[k]), changes = ParseStrtoll(words[k + 1]);
    if (!seconds || !changes || *seconds < 1 || *changes < 0) return "Invalid save parameters";
    rules.emplace_back(*seconds, AsCInt(*changes));
  }
  s.save_rules = std::move(rules);
  return std::nullopt;
}

// Redis chdirs to `dir`; lapse keeps the absolute path instead (threads share the working
// directory), so that relative names are resolved once, when set.
std::optional<std::string> SetDir(Settings& s, std::string_view v) {
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(std::string(v), ec);
  if (ec || !std::filesystem::is_directory(path, ec)) return "No such file or directory";
  s.dir = path.lexically_normal().string();
  if (s.dir.size() > 1 && s.dir.back() == '/') s.dir.pop_back();
  return std::nullopt;
}

}  // namespace

std::string FormatSaveRules(const Settings& s) {
  std::string out;
  for (auto [seconds, changes] : s.save_rules) {
    out += (out.empty() ? "" : " ") + std::to_string(seconds) + " " + std::to_string(changes);
  }
  return out;
}

ConfigOption MemOption(const char* name, int64_t Settings::*field, int64_t min) {
  return ConfigOption{name, true,
                      [field, min](Settings& s, std::string_view v) -> std::optional<std::string> {
                        auto n = ParseMemory(v);
                        if (!n) return "argument must be a memory value";
                        auto value = static_cast<int64_t>(*n);
                        if (value < min) {
                          return "argument must be between " + std::to_string(min) + " and " + std::to_string(INT64_MAX) + " inclusive";
                        }
                        s.*field = value;
                        return std::nullopt;
                      },
                      [field](const Settings& s) { return std::to_string(s.*field); }, RewriteAs::kMemory};
}

// Any 64-bit value. One past INT64_MAX is kept with the same bits (a negative int64_t, which
// every limit check reads as no limit: no machine has that much memory) and shown unsigned,
// as Redis shows it.
ConfigOption UnsignedMemOption(const char* name, int64_t Settings::*field) {
  return ConfigOption{name, true,
                      [field](Settings& s, std::string_view v) -> std::optional<std::string> {
                        auto n = ParseMemory(v);
                        if (!n) return "argument must be a memory value";
                        s.*field = static_cast<int64_t>(*n);
                        return std::nullopt;
                      },
                      [field](const Settings& s) { return std::to_string(static_cast<uint64_t>(s.*field)); }, RewriteAs::kMemory};
}

ConfigOption BoolOption(const char* name, bool mut, bool Settings::*field) {
  return ConfigOption{name, mut,
                      [field](Settings& s, std::string_view v) -> std::optional<std::string> {
                        auto b = ParseYesNo(v);
                        if (!b) return "argument must be 'yes' or 'no'";
                        s.*field = *b;
                        return std::nullopt;
                      },
                      [field](const Settings& s) { return std::string(s.*field ? "yes" : "no"); }};
}

ConfigOption OctalOption(const char* name, bool mut, int64_t Settings::*field, int64_t min, int64_t max) {
  return ConfigOption{name, mut,
                      [field, min, max](Settings& s, std::string_view v) -> std::optional<std::string> {
                        std::string terminated(v);
                        char* end = nullptr;
                        errno = 0;
                        long long n = std::strtoll(terminated.c_str(), &end, 8);
                        if (errno == EINVAL || errno == ERANGE || *end != '\0') {
                          return "argument couldn't be parsed into an integer";
                        }
                        if (n < min || n > max) {
                          // Redis shows an octal parameter's bounds in octal.
                          char bounds[64];
                          std::snprintf(bounds, sizeof bounds, "%llo and %llo", static_cast<unsigned long long>(min),
                                        static_cast<unsigned long long>(max));
                          return std::string("argument must be between ") + bounds + " inclusive";
                        }
                        s.*field = n;
                        return std::nullopt;
                      },
                      [field](const Settings& s) {
                        char octal[32];
                        std::snprintf(octal, sizeof octal, "%llo", static_cast<unsigned long long>(s.*field));
                        return std::string(octal);
                      }};
}

ConfigOption BindOption() {
  return ConfigOption{"bind", true,
                      [](Settings& s, std::string_view v) -> std::optional<std::string> {
                        // Redis's CONFIG_BINDADDR_MAX.
                        if (SplitBindAddresses(v).size() > 16) return "Too many bind addresses specified.";
                        s.bind = std::string(v);
                        return std::nullopt;
                      },
                      [](const Settings& s) { return s.bind; }, RewriteAs::kBind};
}

ConfigOption StringOption(const char* name, bool mut, std::string Settings::*field) {
  return ConfigOption{name, mut,
                      [field](Settings& s, std::string_view v) -> std::optional<std::string> {
                        s.*field = std::string(v);
                        return std::nullopt;
                      },
                      [field](const Settings& s) { return s.*field; }, RewriteAs::kString};
}

ConfigOption EnumOption(const char* name, std::string Settings::*field, const char* choices) {
  return ConfigOption{name, true,
                      [field, choices](Settings& s, std::string_view v) -> std::optional<std::string> {
                        std::string l = protocol::AsciiLower(v);
                        std::string_view rest = choices;
                        while (!rest.empty()) {
                          size_t comma = rest.find(", ");
                          if (rest.substr(0, comma) == l) {
                            s.*field = std::move(l);
                            return std::nullopt;
                          }
                          rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
                        }
                        return std::string("argument(s) must be one of the following: ") + choices;
                      },
                      [field](const Settings& s) { return s.*field; }};
}

ConfigOption ImmutableEnumOption(const char* name, std::string Settings::*field, const char* choices) {
  ConfigOption option = EnumOption(name, field, choices);
  option.mutable_at_runtime = false;
  return option;
}

std::vector<std::string> SplitBindAddresses(std::string_view bind) {
  std::vector<std::string_view> words = SplitOnSingleSpaces(bind);
  return std::vector<std::string>(words.begin(), words.end());
}

ConfigOption HzOption() {
  return ConfigOption{"hz", true,
                      [](Settings& s, std::string_view v) -> std::optional<std::string> {
                        int64_t n = 0;
                        if (!protocol::ParseInt64(v, &n)) return "argument couldn't be parsed into an integer";
                        if (n < 0 || n > INT32_MAX) return "argument must be between 0 and 2147483647 inclusive";
                        s.hz = std::clamp<int64_t>(n, 1, 500);
                        return std::nullopt;
                      },
                      [](const Settings& s) { return std::to_string(s.hz); }};
}

ConfigOption OutputBufferLimitOption() {
  return ConfigOption{"client-output-buffer-limit", true, SetOutputBufferLimits, FormatOutputBufferLimits,
                      RewriteAs::kOutputLimits};
}

ConfigOption SaveRulesOption() { return ConfigOption{"save", true, SetSaveRules, FormatSaveRules, RewriteAs::kSave}; }

ConfigOption DirOption() {
  return ConfigOption{"dir", true, SetDir, [](const Settings& s) { return EffectiveDir(s); }, RewriteAs::kDir};
}

ConfigOption DbFilenameOption() {
  return ConfigOption{"dbfilename", true,
                      [](Settings& s, std::string_view v) -> std::optional<std::string> {
                        if (v.empty() || v.find('/') != std::string_view::npos) return "dbfilename can't be a path, just a filename";
                        s.dbfilename = std::string(v);
                        return std::nullopt;
                      },
                      [](const Settings& s) { return s.dbfilename; }, RewriteAs::kString};
}

namespace {

template <class E>
struct EnumWord {
  const char* word;
  E value;
};

// A parameter kept as a C++ enum, named by one of `words`; Redis's error lists them in order.
template <class E, size_t N>
ConfigOption WordEnumOption(const char* name, bool mut, E Settings::*field, std::array<EnumWord<E>, N> words) {
  std::string choices;
  for (const EnumWord<E>& w : words) choices += (choices.empty() ? "" : ", ") + std::string(w.word);
  return ConfigOption{name, mut,
                      [field, words, choices](Settings& s, std::string_view v) -> std::optional<std::string> {
                        std::string l = protocol::AsciiLower(v);
                        for (const EnumWord<E>& w : words) {
                          if (l == w.word) {
                            s.*field = w.value;
                            return std::nullopt;
                          }
                        }
                        return "argument(s) must be one of the following: " + choices;
                      },
                      [field, words](const Settings& s) -> std::string {
                        for (const EnumWord<E>& w : words) {
                          if (s.*field == w.value) return w.word;
                        }
                        return words[0].word;
                      }};
}

}  // namespace

// yes (a certificate is required), optional (checked when given) or no.
ConfigOption TlsAuthClientsOption() {
  using T = Settings::TlsAuthClients;
  return WordEnumOption("tls-auth-clients", true, &Settings::tls_auth_clients,
                        std::array<EnumWord<T>, 3>{{{"no", T::kNo}, {"yes", T::kYes}, {"optional", T::kOptional}}});
}

ConfigOption DebugAccessOption() {
  using D = Settings::DebugAccess;
  return WordEnumOption("enable-debug-command", false, &Settings::enable_debug_command,
                        std::array<EnumWord<D>, 3>{{{"no", D::kNo}, {"yes", D::kYes}, {"local", D::kLocal}}});
}

ConfigOption FileNameOption(const char* name, std::string Settings::*field, const char* not_a_name) {
  return ConfigOption{name, false,
                      [field, not_a_name](Settings& s, std::string_view v) -> std::optional<std::string> {
                        if (v.empty() || v == "." || v == ".." || v.find('/') != std::string_view::npos) return std::string(not_a_name);
                        s.*field = std::string(v);
                        return std::nullopt;
                      },
                      [field](const Settings& s) { return s.*field; }, RewriteAs::kString};
}

ConfigOption FixedOption(const char* name, const char* value, const char* why) {
  return ConfigOption{name, true,
                      [value, why](Settings&, std::string_view v) -> std::optional<std::string> {
                        if (protocol::AsciiLower(v) == value) return std::nullopt;
                        return std::string(why);
                      },
                      [value](const Settings&) { return std::string(value); }};
}

}  // namespace lapse::server
