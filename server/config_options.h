// File: server/config_options.h
//
// The kinds of CONFIG parameter, each a parser and a printer for one field of Settings. A
// value is parsed by the rules Redis 7.0 applies to that kind of parameter, which differ:
// integers by string2ll (no '+', no leading zeros), memory values by memtoull, and the numbers
// of `save` and the seconds of `client-output-buffer-limit` by C's strtoll (a '+', leading
// zeros and an empty word are fine there). The table of parameters is server/config.cc's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/arg_reader.h"
#include "server/config.h"

namespace lapse::server {

// How CONFIG REWRITE writes a parameter (server/config_rewrite.h), as Redis's rewrite
// function for its type does.
enum class RewriteAs : uint8_t {
  kWord,          // as CONFIG GET shows it: numbers, yes/no, enum names
  kMemory,        // bytes, as "64mb" when they divide evenly
  kString,        // quoted and escaped
  kAlways,        // as CONFIG GET shows it, written even at its default
  kDir,           // the absolute working directory, always written
  kSave,          // a line per rule, always written
  kOutputLimits,  // a line per client class
  kBind,          // written unless it is Redis's default
};

struct ConfigOption {
  const char* name;
  bool mutable_at_runtime;
  // Parses and stores; returns an error reason (without prefix) or nullopt.
  std::function<std::optional<std::string>(Settings&, std::string_view)> set;
  std::function<std::string(const Settings&)> get;
  RewriteAs rewrite = RewriteAs::kWord;
};

// C's strtoll(s, &end, 10) with `*end == '\0'` required: leading white space, a sign, digits
// (none read as 0 only when `s` is empty), saturating at the int64 limits.
std::optional<int64_t> ParseStrtoll(std::string_view s);

// An integer parameter within [min, max], read by Redis's string2ll.
template <class T>
ConfigOption IntOption(const char* name, bool mut, T Settings::*field, int64_t min, int64_t max) {
  return ConfigOption{name, mut,
                      [field, min, max](Settings& s, std::string_view v) -> std::optional<std::string> {
                        int64_t n = 0;
                        if (!protocol::ParseInt64(v, &n)) return "argument couldn't be parsed into an integer";
                        if (n < min || n > max) {
                          return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) + " inclusive";
                        }
                        s.*field = static_cast<T>(n);
                        return std::nullopt;
                      },
                      [field](const Settings& s) { return std::to_string(s.*field); }};
}

// A memory setting Redis keeps as a signed 64-bit number: a value past INT64_MAX reads as
// negative and is out of range.
ConfigOption MemOption(const char* name, int64_t Settings::*field, int64_t min = 0);
// maxmemory, which Redis keeps unsigned (see config_options.cc).
ConfigOption UnsignedMemOption(const char* name, int64_t Settings::*field);
ConfigOption BoolOption(const char* name, bool mut, bool Settings::*field);
// An octal number within [min, max] (unixsocketperm), read with strtoll in base 8 and shown
// in octal, as Redis's OCTAL_CONFIG.
ConfigOption OctalOption(const char* name, bool mut, int64_t Settings::*field, int64_t min, int64_t max);
// `bind`: up to 16 addresses separated by single spaces, kept as given.
ConfigOption BindOption();
ConfigOption StringOption(const char* name, bool mut, std::string Settings::*field);
// One of `choices` (comma-separated, as Redis's error lists them), stored lower-cased.
ConfigOption EnumOption(const char* name, std::string Settings::*field, const char* choices);
// The same, set only at start-up.
ConfigOption ImmutableEnumOption(const char* name, std::string Settings::*field, const char* choices);
// `hz`: any int, kept within 1..500 as Redis's updateHZ keeps it.
ConfigOption HzOption();
ConfigOption OutputBufferLimitOption();
ConfigOption SaveRulesOption();
ConfigOption DirOption();
ConfigOption DbFilenameOption();
ConfigOption TlsAuthClientsOption();
ConfigOption DebugAccessOption();
// A name inside `dir` (appendfilename, appenddirname): immutable once running, as in Redis,
// and never a path, so that the log cannot be pointed outside `dir`.
ConfigOption FileNameOption(const char* name, std::string Settings::*field, const char* not_a_name);
// Settings of features lapse does not have. CONFIG GET answers their one value, which tools
// read; setting that value again is accepted, since it changes nothing and claims nothing,
// and any other value is refused, never answered OK.
ConfigOption FixedOption(const char* name, const char* value, const char* why);

// `save`'s value as CONFIG GET shows it: "<seconds> <changes>" pairs.
std::string FormatSaveRules(const Settings& s);

}  // namespace lapse::server
