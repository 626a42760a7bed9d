// File: server/config.cc
//
// The table of CONFIG parameters (each declared once, with its kind from config_options.h),
// and what reads and changes them: the configuration file, command-line flags, CONFIG GET
// and CONFIG SET. Redis 7.0's parameters that lapse does not implement are answered with
// their defaults (config_redis_defaults.cc) and may only be set to them, so that Redis's own
// files load and nothing is ever answered OK without taking effect.
#include "server/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/eviction.h"
#include "engine/glob.h"
#include "protocol/arg_reader.h"
#include "protocol/split_args.h"
#include "server/config_options.h"
#include "server/config_rewrite.h"
#include "server/keyspace_events.h"
#include "server/latency.h"

namespace lapse::server {

namespace {

// Redis's MULTI_ARG_CONFIG parameters: a file line or command-line flag may give their value
// as several words.
bool IsMultiWordOption(std::string_view name) {
  static constexpr std::string_view kNames[] = {"save", "client-output-buffer-limit", "oom-score-adj-values", "bind",
                                                "replicaof", "slaveof", "latency-tracking-info-percentiles"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

const std::vector<ConfigOption>& Options() {
  static const std::vector<ConfigOption> kOptions = {
      IntOption("port", false, &Settings::port, 0, 65535),
      BindOption(),
      IntOption("tcp-backlog", false, &Settings::tcp_backlog, 0, INT32_MAX),
      IntOption("tcp-keepalive", true, &Settings::tcp_keepalive, 0, INT32_MAX),
      StringOption("unixsocket", false, &Settings::unixsocket),
      OctalOption("unixsocketperm", false, &Settings::unixsocketperm, 0, 0777),
      BoolOption("daemonize", false, &Settings::daemonize),
      StringOption("pidfile", false, &Settings::pidfile),
      ImmutableEnumOption("supervised", &Settings::supervised, "upstart, systemd, auto, no"),
      IntOption("threads", false, &Settings::threads, 0, 256),
      IntOption("databases", false, &Settings::databases, 1, 1 << 16),
      IntOption("maxclients", true, &Settings::maxclients, 1, 1'000'000),
      IntOption("timeout", true, &Settings::timeout, 0, INT32_MAX),
      StringOption("requirepass", true, &Settings::requirepass),
      StringOption("aclfile", false, &Settings::aclfile),
      EnumOption("acl-pubsub-default", &Settings::acl_pubsub_default, "allchannels, resetchannels"),
      EnumOption("loglevel", &Settings::loglevel, "debug, verbose, notice, warning, nothing"),
      StringOption("logfile", false, &Settings::logfile),
      DebugAccessOption(),
      BoolOption("protected-mode", true, &Settings::protected_mode),
      MemOption("proto-max-bulk-len", &Settings::proto_max_bulk_len, 1024 * 1024),
      MemOption("client-query-buffer-limit", &Settings::client_query_buffer_limit, 1024 * 1024),
      OutputBufferLimitOption(),
      UnsignedMemOption("maxmemory", &Settings::maxmemory),
      ConfigOption{"maxmemory-policy", true,
             [](Settings& s, std::string_view v) -> std::optional<std::string> {
               std::optional<engine::EvictionPolicy> policy = engine::ParseEvictionPolicy(v);
               if (!policy) return std::string("argument(s) must be one of the following: ") + engine::kEvictionPolicyNames;
               s.maxmemory_policy = engine::EvictionPolicyName(*policy);
               return std::nullopt;
             },
             [](const Settings& s) { return s.maxmemory_policy; }},
      IntOption("maxmemory-samples", true, &Settings::maxmemory_samples, 1, INT32_MAX),
      IntOption("maxmemory-eviction-tenacity", true, &Settings::maxmemory_eviction_tenacity, 0, 100),
      IntOption("lfu-log-factor", true, &Settings::lfu_log_factor, 0, INT32_MAX),
      IntOption("lfu-decay-time", true, &Settings::lfu_decay_time, 0, INT32_MAX),
      HzOption(),
      ConfigOption{"notify-keyspace-events", true,
             [](Settings& s, std::string_view v) -> std::optional<std::string> {
               std::optional<uint32_t> mask = ParseEventClasses(v);
               if (!mask) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
               s.notify_keyspace_events = *mask;
               return std::nullopt;
             },
             [](const Settings& s) { return FormatEventClasses(s.notify_keyspace_events); }, RewriteAs::kString},
      IntOption("slowlog-log-slower-than", true, &Settings::slowlog_log_slower_than, -1, INT64_MAX),
      IntOption("slowlog-max-len", true, &Settings::slowlog_max_len, 0, INT64_MAX),
      IntOption("acllog-max-len", true, &Settings::acllog_max_len, 0, INT64_MAX),
      IntOption("latency-monitor-threshold", true, &Settings::latency_monitor_threshold, 0, INT64_MAX),
      BoolOption("latency-tracking", true, &Settings::latency_tracking),
      ConfigOption{"latency-tracking-info-percentiles", true,
             [](Settings& s, std::string_view v) -> std::optional<std::string> {
               std::string error = ParsePercentiles(v, &s.latency_tracking_info_percentiles);
               if (!error.empty()) return error;
               return std::nullopt;
             },
             [](const Settings& s) {
               std::string out;
               for (double p : s.latency_tracking_info_percentiles) out += (out.empty() ? "" : " ") + FormatPercentile(p);
               return out;
             }, RewriteAs::kAlways},
      MemOption("hll-sparse-max-bytes", &Settings::hll_sparse_max_bytes),
      IntOption("tracking-table-max-keys", true, &Settings::tracking_table_max_keys, 0, INT64_MAX),
      // Redis 7.0's name and its older alias, one setting.
      IntOption("busy-reply-threshold", true, &Settings::busy_reply_threshold, 0, INT64_MAX),
      IntOption("lua-time-limit", true, &Settings::busy_reply_threshold, 0, INT64_MAX),
      // Redis 7.0's listpack names and their ziplist aliases, one setting each.
      IntOption("hash-max-listpack-entries", true, &Settings::hash_max_listpack_entries, 0, INT64_MAX),
      IntOption("hash-max-ziplist-entries", true, &Settings::hash_max_listpack_entries, 0, INT64_MAX),
      MemOption("hash-max-listpack-value", &Settings::hash_max_listpack_value),
      MemOption("hash-max-ziplist-value", &Settings::hash_max_listpack_value),
      IntOption("set-max-intset-entries", true, &Settings::set_max_intset_entries, 0, INT64_MAX),
      IntOption("list-max-listpack-size", true, &Settings::list_max_listpack_size, INT32_MIN, INT32_MAX),
      IntOption("list-max-ziplist-size", true, &Settings::list_max_listpack_size, INT32_MIN, INT32_MAX),
      IntOption("zset-max-listpack-entries", true, &Settings::zset_max_listpack_entries, 0, INT64_MAX),
      IntOption("zset-max-ziplist-entries", true, &Settings::zset_max_listpack_entries, 0, INT64_MAX),
      MemOption("zset-max-listpack-value", &Settings::zset_max_listpack_value),
      MemOption("zset-max-ziplist-value", &Settings::zset_max_listpack_value),
      IntOption("ru-per-second", true, &Settings::ru_per_second, 0, INT64_MAX / 1000),
      MemOption("change-feed-retention", &Settings::change_feed_retention, 1),
      EnumOption("billing", &Settings::billing, "provisioned, serverless"),
      SaveRulesOption(),
      DirOption(),
      DbFilenameOption(),
      BoolOption("rdbcompression", true, &Settings::rdbcompression),
      BoolOption("rdbchecksum", false, &Settings::rdbchecksum),
      BoolOption("rdb-lapse-data", true, &Settings::rdb_lapse_data),
      IntOption("rdb-key-save-delay", true, &Settings::rdb_key_save_delay, INT32_MIN, INT32_MAX),
      IntOption("tls-port", true, &Settings::tls_port, 0, 65535),
      StringOption("tls-cert-file", true, &Settings::tls_cert_file),
      StringOption("tls-key-file", true, &Settings::tls_key_file),
      StringOption("tls-key-file-pass", true, &Settings::tls_key_file_pass),
      StringOption("tls-ca-cert-file", true, &Settings::tls_ca_cert_file),
      StringOption("tls-ca-cert-dir", true, &Settings::tls_ca_cert_dir),
      TlsAuthClientsOption(),
      StringOption("tls-protocols", true, &Settings::tls_protocols),
      StringOption("tls-ciphers", true, &Settings::tls_ciphers),
      StringOption("tls-ciphersuites", true, &Settings::tls_ciphersuites),
      BoolOption("tls-prefer-server-ciphers", true, &Settings::tls_prefer_server_ciphers),
      BoolOption("tls-session-caching", true, &Settings::tls_session_caching),
      IntOption("tls-session-cache-size", true, &Settings::tls_session_cache_size, 0, INT32_MAX),
      IntOption("tls-session-cache-timeout", true, &Settings::tls_session_cache_timeout, 0, INT32_MAX),
      BoolOption("appendonly", true, &Settings::appendonly),
      FileNameOption("appendfilename", &Settings::appendfilename, "appendfilename can't be a path, just a filename"),
      FileNameOption("appenddirname", &Settings::appenddirname, "appenddirname can't be a path, just a dirname"),
      EnumOption("appendfsync", &Settings::appendfsync, "everysec, always, no"),
      BoolOption("aof-load-truncated", true, &Settings::aof_load_truncated),
      BoolOption("aof-use-rdb-preamble", true, &Settings::aof_use_rdb_preamble),
      FixedOption("aof-timestamp-enabled", "no", "lapse does not write AOF timestamp annotations: aof-timestamp-enabled can only be no"),
      IntOption("auto-aof-rewrite-percentage", true, &Settings::auto_aof_rewrite_percentage, 0, INT32_MAX),
      MemOption("auto-aof-rewrite-min-size", &Settings::auto_aof_rewrite_min_size),
      BoolOption("no-appendfsync-on-rewrite", true, &Settings::no_appendfsync_on_rewrite),
  };
  return kOptions;
}

const ConfigOption* FindOption(std::string_view name) {
  std::string l = protocol::AsciiLower(name);
  for (const ConfigOption& o : Options()) {
    if (l == o.name) return &o;
  }
  return nullptr;
}

}  // namespace

namespace {

// The Redis parameter lapse answers with its default, or nullptr; "dir" among them.
const char* FindRedisDefault(std::string_view name) {
  std::string l = protocol::AsciiLower(name);
  if (l == "dir") return "";
  for (const RedisDefault& d : RedisOnlyDefaults()) {
    if (l == d.name) return d.value;
  }
  return nullptr;
}

constexpr std::string_view kRedisOnlyReadOnly =
    "lapse does not implement this parameter; it only reports Redis 7.0's default, read-only";

std::string SetFailed(std::string_view name, std::string_view reason) {
  return "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " + std::string(reason);
}

// A Redis parameter lapse does not implement, in a configuration file or on the command line:
// its default changes nothing and is accepted, so that Redis's own files load; any other
// value would claim what lapse does not do. `dir` may name the working directory.
std::optional<std::string> StartupRedisDefault(std::string_view name, std::string_view value, const char* redis_default) {
  std::string l = protocol::AsciiLower(name);
  if (l == "dir") {
    std::error_code ec;
    if (std::filesystem::equivalent(std::filesystem::path(std::string(value)), std::filesystem::current_path(ec), ec)) {
      return std::nullopt;
    }
    return SetFailed(name, "lapse keeps no files: dir may only be the working directory");
  }
  if (IsRedisDefaultValue(l, value, redis_default)) return std::nullopt;
  return SetFailed(name, "lapse does not implement this parameter; only Redis 7.0's default, '" +
                             std::string(redis_default) + "', is accepted");
}

// The setting called `name` if it may be set now; otherwise nullptr and *error says why.
const ConfigOption* SettableOption(std::string_view name, bool at_startup, std::string* error) {
  const ConfigOption* opt = FindOption(name);
  if (opt == nullptr && FindRedisDefault(name) != nullptr) {
    *error = !at_startup && IsRedisImmutable(protocol::AsciiLower(name))
                 ? SetFailed(name, "can't set immutable config")
                 : SetFailed(name, kRedisOnlyReadOnly);
  } else if (opt == nullptr) {
    *error = "ERR Unknown option or number of arguments for CONFIG SET - '" + std::string(name) + "'";
  } else if (!at_startup && !opt->mutable_at_runtime) {
    *error = SetFailed(name, "can't set immutable config");
    opt = nullptr;
  } else if (!at_startup && (opt->name == std::string_view("dir") || opt->name == std::string_view("dbfilename"))) {
    // Redis 7.0's protected config (enable-protected-configs no): set at start-up only.
    *error = SetFailed(name, "can't set protected config");
    opt = nullptr;
  }
  return opt;
}

}  // namespace

std::optional<std::string> Config::SetLocked(std::string_view name, std::string_view value, bool at_startup) {
  if (at_startup && FindOption(name) == nullptr) {
    if (const char* redis_default = FindRedisDefault(name)) return StartupRedisDefault(name, value, redis_default);
  }
  std::string error;
  const ConfigOption* opt = SettableOption(name, at_startup, &error);
  if (opt == nullptr) return error;
  Settings candidate = settings_;
  if (auto err = opt->set(candidate, value)) return SetFailed(name, *err);
  settings_ = std::move(candidate);
  return std::nullopt;
}

std::optional<std::string> Config::Set(std::string_view name, std::string_view value) { return SetAll({{name, value}}); }

std::optional<std::string> Config::SetAll(const std::vector<std::pair<std::string_view, std::string_view>>& pairs) {
  std::lock_guard lock(mu_);
  // Like Redis: every name is checked (known, mutable, not repeated) before any value.
  // A parameter lapse only reports (nullptr here, with its default) may be set to that
  // default, which changes nothing, as in a configuration file; any other value is refused.
  std::vector<const ConfigOption*> options;
  std::vector<const char*> redis_defaults;
  std::vector<std::string> names;
  std::string error;
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::string_view name = pairs[i].first;
    std::string lower = protocol::AsciiLower(name);
    const char* redis_default = FindOption(name) == nullptr ? FindRedisDefault(name) : nullptr;
    const ConfigOption* opt = nullptr;
    if (redis_default == nullptr || IsRedisImmutable(lower)) {
      opt = SettableOption(name, false, &error);
      if (opt == nullptr) return error;
    }
    for (size_t j = 0; j < options.size(); ++j) {
      if (opt != nullptr ? options[j] == opt : names[j] == lower) return SetFailed(name, "duplicate parameter");
    }
    options.push_back(opt);
    redis_defaults.push_back(redis_default);
    names.push_back(std::move(lower));
  }
  Settings candidate = settings_;
  for (size_t i = 0; i < pairs.size(); ++i) {
    // Redis lower-cases the names before it sets anything: a value's error shows that spelling.
    if (options[i] == nullptr) {
      if (!IsRedisDefaultValue(names[i], pairs[i].second, redis_defaults[i])) {
        return SetFailed(names[i], kRedisOnlyReadOnly);
      }
      continue;
    }
    if (auto err = options[i]->set(candidate, pairs[i].second)) return SetFailed(names[i], *err);
  }
  if (validator_) {
    std::vector<std::string_view> names;
    for (const auto& pair : pairs) names.push_back(pair.first);
    if (auto err = validator_(settings_, candidate, names)) return err;
  }
  settings_ = std::move(candidate);
  return std::nullopt;
}

namespace {
// Redis's test knob rdb-key-save-delay is a HIDDEN_CONFIG: CONFIG GET answers it when named,
// never for a glob pattern, so that CONFIG GET * lists what Redis lists.
bool GetMatches(std::string_view pattern, std::string_view name) {
  if (name != "rdb-key-save-delay") return engine::GlobMatch(pattern, name, true);
  return pattern.find_first_of("[*?") == std::string_view::npos && protocol::AsciiLower(pattern) == name;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> Config::Get(std::string_view pattern) const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const ConfigOption& o : Options()) {
    if (GetMatches(pattern, o.name)) out.emplace_back(o.name, o.get(settings_));
  }
  // A parameter lapse implements (perhaps added after the defaults were listed) is answered
  // above, with its live value.
  for (const RedisDefault& d : RedisOnlyDefaults()) {
    if (engine::GlobMatch(pattern, d.name, true) && FindOption(d.name) == nullptr) out.emplace_back(d.name, d.value);
  }
  // Redis's dir defaults to the working directory, which lapse neither changes nor uses.
  if (engine::GlobMatch(pattern, "dir", true) && FindOption("dir") == nullptr) {
    std::error_code ec;
    out.emplace_back("dir", std::filesystem::current_path(ec).string());
  }
  return out;
}

std::optional<std::vector<std::string>> SplitConfigLine(std::string_view line) {
  std::string unescaped;
  std::vector<std::string_view> views;
  if (!protocol::SplitArgs(line, &unescaped, &views)) return std::nullopt;
  return std::vector<std::string>(views.begin(), views.end());
}

std::optional<std::string> Config::LoadFromText(std::string_view text) {
  std::lock_guard lock(mu_);
  size_t line_no = 0;
  bool saw_save = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    // As Redis: a comment is skipped before it is split, so quotes in it never matter.
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    auto words = SplitConfigLine(line);
    if (!words) return "line " + std::to_string(line_no) + ": unbalanced quotes";
    if (words->empty()) continue;
    if (auto err = ApplyLineLocked(*words, &saw_save)) return "line " + std::to_string(line_no) + ": " + *err;
  }
  return std::nullopt;
}

// One `name value...` line of a file or of the command line.
std::optional<std::string> Config::ApplyLineLocked(const std::vector<std::string>& words, bool* saw_save) {
  std::string name = protocol::AsciiLower(words[0]);
  if (name == "rename-command") {
    if (words.size() != 3) return std::string("rename-command needs two arguments");
    settings_.renamed_commands.emplace_back(words[1], words[2]);
    return std::nullopt;
  }
  if (name == "user") {  // as many as there are users, each several words
    std::string rules;
    for (size_t w = 1; w < words.size(); ++w) rules += (w > 1 ? " " : "") + words[w];
    settings_.users.push_back(std::move(rules));
    return std::nullopt;
  }
  std::string value = words.size() > 1 ? words[1] : "";
  if (IsMultiWordOption(name)) {  // values of several words
    if (words.size() == 2 && !value.empty()) {
      // One quoted word is split as Redis splits it (sdssplitargs): `bind "a  b"` is two.
      std::optional<std::vector<std::string>> parts = SplitConfigLine(value);
      if (parts && !parts->empty()) {
        value.clear();
        for (const std::string& part : *parts) value += (value.empty() ? "" : " ") + part;
      }
    }
    for (size_t w = 2; w < words.size(); ++w) value += " " + words[w];
    // As in Redis, a file's first `save` line replaces the defaults and later ones add rules.
    if (name == "save" && *saw_save && !value.empty() && !settings_.save_rules.empty()) {
      value = FormatSaveRules(settings_) + " " + value;
    }
    if (name == "save") *saw_save = true;
  } else if (words.size() != 2) {
    return "'" + name + "' takes one argument";
  }
  return SetLocked(name, value, true);
}

std::optional<std::string> Config::LoadFromArgs(int argc, char** argv, bool* exit_now) {
  *exit_now = false;
  int i = 1;
  if (i < argc && argv[i][0] != '-') {  // as in Redis: -h and -v are flags, not file names
    std::ifstream in(argv[i]);
    if (!in) return std::string("cannot open config file '") + argv[i] + "'";
    std::stringstream ss;
    ss << in.rdbuf();
    if (auto err = LoadFromText(ss.str())) return std::string("config file '") + argv[i] + "', " + *err;
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(argv[i], ec);
    config_file_ = ec ? std::string(argv[i]) : absolute.string();
    ++i;
  }
  auto is_flag = [&](int at) { return std::string_view(argv[at]).rfind("--", 0) == 0; };
  for (; i < argc; ++i) {
    std::string_view flag(argv[i]);
    if (flag == "--help" || flag == "-h") {
      std::cout << Usage();
      *exit_now = true;
      return std::nullopt;
    }
    if (flag == "--version" || flag == "-v") {
      std::cout << "lapse-server v=" << LAPSE_VERSION << "\n";
      *exit_now = true;
      return std::nullopt;
    }
    if (!is_flag(i)) return "unexpected argument '" + std::string(flag) + "'";
    // As Redis reads its command line: each flag and the words after it, up to the next
    // "--", make one configuration line (`--save 900 1 300 10`, `--rename-command A B`); the
    // first word after a flag is its value whatever it looks like, except that a bare
    // `--save` means `save ""`.
    std::vector<std::string> words{std::string(flag.substr(2))};
    bool bare_save = protocol::AsciiLower(words[0]) == "save" && (i + 1 >= argc || is_flag(i + 1));
    if (bare_save) {
      words.emplace_back();
    } else {
      if (i + 1 >= argc) return "missing value for '" + std::string(flag) + "'";
      words.emplace_back(argv[++i]);
      while (i + 1 < argc && !is_flag(i + 1)) words.emplace_back(argv[++i]);
    }
    std::lock_guard lock(mu_);
    bool saw_save = false;
    if (auto err = ApplyLineLocked(words, &saw_save)) return err;
  }
  return std::nullopt;
}


std::optional<std::string> Config::Rewrite(const std::vector<std::string>& acl_lines) const {
  // The file is read and written without the lock, which every new client and many
  // commands take: a copy of the settings is what gets written.
  Settings now = Snapshot();
  std::string old_text;
  // As Redis: a file that is gone is written afresh; one that cannot be read is an error.
  if (std::FILE* in = std::fopen(config_file_.c_str(), "r")) {
    char chunk[4096];
    size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0) old_text.append(chunk, n);
    bool failed = std::ferror(in) != 0;
    int error = errno;
    std::fclose(in);
    if (failed) return std::string(std::strerror(error));
  } else if (errno != ENOENT) {
    return std::string(std::strerror(errno));
  }
  Settings defaults;
  std::vector<RewriteLines> parameters;
  for (const ConfigOption& option : Options()) {
    if (RewriteAliasOf(option.name) == nullptr) parameters.push_back(LinesOfOption(option, now, defaults));
  }
  for (const RedisDefault& d : RedisOnlyDefaults()) {
    if (FindOption(d.name) == nullptr && RewriteAliasOf(d.name) == nullptr) parameters.push_back(LinesOfRedisDefault(d));
  }
  // The users, unless an aclfile keeps them (then the file's user lines go).
  RewriteLines users{"user", {}};
  if (now.aclfile.empty()) {
    for (const std::string& line : acl_lines) users.lines.emplace_back(line, true);
  }
  parameters.push_back(std::move(users));
  auto primary = [](std::string_view directive) -> std::string {
    if (const char* name = RewriteAliasOf(directive)) return name;
    if (FindOption(directive) != nullptr || FindRedisDefault(directive) != nullptr) return std::string(directive);
    static constexpr std::string_view kFileOnly[] = {"include", "rename-command", "user", "loadmodule", "sentinel"};
    for (std::string_view name : kFileOnly) {
      if (name == directive) return std::string(directive);
    }
    return {};
  };
  return OverwriteConfigFile(config_file_, RewriteConfigText(old_text, parameters, primary));
}

std::string EffectiveDir(const Settings& s) {
  if (!s.dir.empty()) return s.dir;
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

std::string Config::Usage() {
  return "Usage: lapse-server [/path/to/lapse.conf] [--option value ...]\n"
         "       lapse-server --help | --version\n\n"
         "Options (also valid as 'name value' lines in the config file; flags override the file):\n"
         "  --port N                   TCP port (default 6379)\n"
         "  --bind \"ADDR ...\"         addresses to listen on; '-ADDR' may be missing, * and ::* are all (default 127.0.0.1)\n"
         "  --unixsocket PATH          also listen on this unix-domain socket\n"
         "  --unixsocketperm MODE      its file mode, in octal (default 0: as the umask leaves it)\n"
         "  --tcp-backlog N            listen queue of each socket (default 511)\n"
         "  --tcp-keepalive SECONDS    probe TCP clients silent this long; 0 = never (default 300)\n"
         "  --daemonize yes|no         run in the background (default no)\n"
         "  --pidfile PATH             write the process id here (daemonized default: /var/run/lapse.pid)\n"
         "  --supervised upstart|systemd|auto|no  tell the supervisor when ready (default no)\n"
         "  --threads N                event-loop threads, 16 shards each (default: cores - 1, at least 1)\n"
         "  --databases N              numbered databases for SELECT (default 16)\n"
         "  --maxclients N             connections accepted at once (default 10000)\n"
         "  --timeout SECONDS          close clients idle this long; 0 = never (default 0)\n"
         "  --requirepass PASSWORD     the default user's password: require AUTH before other commands\n"
         "  --aclfile PATH             ACL users, as 'user ...' lines (ACL LOAD, ACL SAVE)\n"
         "  --acl-pubsub-default resetchannels|allchannels  the channels a new ACL user starts with\n"
         "  --loglevel LEVEL           debug | verbose | notice | warning | nothing\n"
         "  --logfile PATH             log to this file instead of standard output\n"
         "  --enable-debug-command no|yes|local  allow DEBUG ADVANCE / FREEZE-CLOCK / SET-ACTIVE-EXPIRE /\n"
         "                             SLEEP (local: from loopback clients only)\n"
         "  --protected-mode yes|no    refuse non-loopback clients when no password is set\n"
         "  --proto-max-bulk-len BYTES largest bulk string accepted (default 512mb)\n"
         "  --client-query-buffer-limit BYTES  close a client whose unparsed input exceeds this (1gb)\n"
         "  --client-output-buffer-limit 'normal HARD SOFT SECONDS'  close a client whose unsent\n"
         "                             replies exceed HARD, or SOFT for SECONDS (default: no limit)\n"
         "  --maxmemory BYTES          evict (or refuse writes) above this much memory; 0 = no limit\n"
         "  --maxmemory-policy P       noeviction, allkeys-lru|lfu|random, volatile-lru|lfu|random|ttl\n"
         "  --maxmemory-samples N      keys sampled per database and shard each eviction round (5)\n"
         "  --maxmemory-eviction-tenacity N  time one command may spend evicting, 0-100 (10)\n"
         "  --lfu-log-factor N         how slowly the LFU counter grows (10)\n"
         "  --lfu-decay-time MINUTES   the LFU counter loses one per this many idle minutes (1)\n"
         "  --hll-sparse-max-bytes BYTES  a sparse HyperLogLog growing past this turns dense (3000)\n"
         "  --tracking-table-max-keys N  keys client-side caching tracks at most; 0 = no limit (1000000)\n"
         "  --latency-monitor-threshold MS  LATENCY records spikes this long or longer; 0 = off (0)\n"
         "  --latency-tracking yes|no  per-command latency histograms (yes)\n"
         "  --latency-tracking-info-percentiles '50 99 99.9'  percentiles of INFO latencystats\n"
         "  --hash-max-listpack-entries N  a hash with more fields leaves the packed layout (512)\n"
         "  --hash-max-listpack-value BYTES  a longer field or value moves a hash to a table (64)\n"
         "  --set-max-intset-entries N  a set of more integers leaves the intset layout (512)\n"
         "  --list-max-listpack-size N  a list node's elements (N > 0) or bytes (-1..-5: 4..64 KiB) (-2)\n"
         "  --zset-max-listpack-entries N  a sorted set with more members leaves the packed layout (128)\n"
         "  --zset-max-listpack-value BYTES  a longer member moves a sorted set to a skiplist (64)\n"
         "  --ru-per-second N          server-wide request-unit budget; 0 = unlimited\n"
         "  --billing MODE             provisioned (reclaim only with leftover RU) | serverless\n"
         "  --change-feed-retention BYTES  change documents each container's feed keeps (16mb)\n"
         "  --dir PATH                 where the snapshot is written and read (the working directory)\n"
         "  --dbfilename NAME          the snapshot's file name (dump.rdb)\n"
         "  --save 'SECONDS CHANGES ...'  snapshot rules; '' = none (3600 1 300 100 60 10000)\n"
         "  --rdbcompression yes|no    LZF-compress strings longer than 20 bytes in snapshots (yes)\n"
         "  --rdbchecksum yes|no       end snapshots with a CRC-64 (yes)\n"
         "  --rdb-lapse-data yes|no    write containers, items and hash-field TTLs too (yes)\n"
         "  --tls-port N               also serve TLS on this port; 0 = none (with --port 0: TLS only)\n"
         "  --tls-cert-file PATH       the server's certificate chain (PEM)\n"
         "  --tls-key-file PATH        its private key (PEM); --tls-key-file-pass unlocks it\n"
         "  --tls-ca-cert-file PATH    CA certificates that sign client certificates (or --tls-ca-cert-dir)\n"
         "  --tls-auth-clients yes|no|optional  whether clients must present a certificate (yes)\n"
         "  --tls-protocols 'TLSv1.2 TLSv1.3'  protocols accepted (default: TLSv1.2 and TLSv1.3)\n"
         "  --tls-ciphers LIST         TLSv1.2 ciphers; --tls-ciphersuites LIST for TLSv1.3\n"
         "  --tls-prefer-server-ciphers yes|no, --tls-session-caching yes|no,\n"
         "  --tls-session-cache-size N, --tls-session-cache-timeout SECONDS  as in Redis\n"
         "Config file only:\n"
         "  rename-command NAME NEW    rename a command; \"\" disables it\n"
         "  user NAME RULES...         an ACL user, as ACL SETUSER makes it (user alice on >pw ~k* +get)\n";
}

}  // namespace lapse::server
