// Reads the metadata token strings of command_metadata.h: writes them as replies, and
// interprets key specs as Redis 7.0's COMMAND GETKEYS does, including the key finders Redis
// falls back on where a command's key specs cannot tell (getkeys_proc in Redis's sources).
#include "server/command_metadata.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "protocol/arg_reader.h"
#include "protocol/reply_writer.h"
#include "server/migrate.h"

namespace lapse::server {

using protocol::EqualsIgnoreCase;

namespace {

constexpr char kSeparator = '^';

// Walks a token string one token at a time.
class TokenCursor {
 public:
  explicit TokenCursor(std::string_view tokens) : rest_(tokens), done_(tokens.empty()) {}
  bool Done() const { return done_; }
  std::string_view Next() {
    size_t end = rest_.find(kSeparator);
    std::string_view token = rest_.substr(0, end);
    if (end == std::string_view::npos) {
      done_ = true;
      rest_ = {};
    } else {
      rest_.remove_prefix(end + 1);
    }
    return token;
  }

 private:
  std::string_view rest_;
  bool done_;
};

int64_t TokenNumber(std::string_view token) {
  int64_t n = 0;
  protocol::ParseInt64(token.substr(1), &n);
  return n;
}

bool IsHeader(std::string_view token) {
  return !token.empty() && (token[0] == '%' || token[0] == '*' || token[0] == '~');
}

// The text of a string token, without its type mark.
std::string_view TokenText(std::string_view token) {
  if (!token.empty() && (token[0] == '+' || token[0] == '$')) return token.substr(1);
  return token;
}

// One value of a token string, nested values included, for the code that reads key specs.
struct Value {
  std::string_view token;
  std::vector<Value> items;  // a map's keys and values alternate
  const Value* Field(std::string_view key) const {
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (TokenText(items[i].token) == key) return &items[i + 1];
    }
    return nullptr;
  }
  int64_t IntField(std::string_view key, int64_t otherwise) const {
    const Value* v = Field(key);
    return v != nullptr && !v->token.empty() && v->token[0] == ':' ? TokenNumber(v->token) : otherwise;
  }
  std::string_view TextField(std::string_view key) const {
    const Value* v = Field(key);
    return v == nullptr ? std::string_view() : TokenText(v->token);
  }
};

Value ReadValue(TokenCursor& cursor) {
  Value v{cursor.Next(), {}};
  if (IsHeader(v.token)) {
    int64_t n = TokenNumber(v.token) * (v.token[0] == '%' ? 2 : 1);
    for (int64_t i = 0; i < n && !cursor.Done(); ++i) v.items.push_back(ReadValue(cursor));
  }
  return v;
}

KeySpec ToKeySpec(const Value& map) {
  KeySpec spec;
  if (const Value* flags = map.Field("flags")) {
    for (const Value& f : flags->items) spec.flags.push_back(TokenText(f.token));
  }
  static const Value kNone{};
  const Value* begin = map.Field("begin_search");
  const Value* begin_spec = begin != nullptr ? begin->Field("spec") : nullptr;
  spec.begin_type = begin != nullptr ? begin->TextField("type") : "unknown";
  if (begin_spec == nullptr) begin_spec = &kNone;
  spec.index = begin_spec->IntField("index", 0);
  spec.keyword = begin_spec->TextField("keyword");
  spec.startfrom = begin_spec->IntField("startfrom", 0);
  const Value* find = map.Field("find_keys");
  const Value* find_spec = find != nullptr ? find->Field("spec") : nullptr;
  spec.find_type = find != nullptr ? find->TextField("type") : "unknown";
  if (find_spec == nullptr) find_spec = &kNone;
  spec.lastkey = find_spec->IntField("lastkey", 0);
  spec.keystep = find_spec->IntField("keystep", 1);
  spec.limit = find_spec->IntField("limit", 0);
  spec.keynumidx = find_spec->IntField("keynumidx", 0);
  spec.firstkey = find_spec->IntField("firstkey", 0);
  return spec;
}

// ---- Redis's own key finders, for when the key specs cannot tell ----

// C's atoi, as Redis's finders read a key count: leading digits, 0 when there are none.
int64_t LenientInt(std::string_view s) {
  std::string copy(s);
  return std::atoll(copy.c_str());
}

// A count of keys at `count_at`, the keys from `first` every `step`, and a stored key at
// `store_at` (0: none), after them. No key when the count is out of range.
std::vector<FoundKey> CountedKeys(Args args, size_t store_at, size_t count_at, size_t first, size_t step) {
  std::vector<FoundKey> keys;
  // redis.acl_check_cmd finds keys whatever the arity: a count may be missing.
  if (count_at >= args.size() || first >= args.size()) return keys;
  int64_t n = LenientInt(args[count_at]);
  if (n < 1 || n > static_cast<int64_t>((args.size() - first) / step)) return keys;
  for (int64_t i = 0; i < n; ++i) keys.push_back({first + static_cast<size_t>(i) * step, {}});
  if (store_at != 0) keys.push_back({store_at, {}});
  return keys;
}

std::vector<FoundKey> SortKeys(Args args) {
  std::vector<FoundKey> keys{{1, {"RO", "access"}}};
  std::optional<size_t> store;
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "limit")) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "store") && i + 1 < args.size()) {
      store = i + 1;  // the last STORE wins, as in SORT itself
    } else if (EqualsIgnoreCase(args[i], "get") || EqualsIgnoreCase(args[i], "by")) {
      i += 1;
    }
  }
  if (store) keys.push_back({*store, {"OW", "update"}});
  return keys;
}

std::vector<FoundKey> GeoRadiusKeys(Args args) {
  std::vector<FoundKey> keys{{1, {}}};
  std::optional<size_t> store;
  for (size_t i = 5; i < args.size(); ++i) {
    if ((EqualsIgnoreCase(args[i], "store") || EqualsIgnoreCase(args[i], "storedist")) && i + 1 < args.size()) {
      store = ++i;
    }
  }
  if (store) keys.push_back({*store, {}});
  return keys;
}

std::vector<FoundKey> XReadKeys(Args args) {
  std::optional<size_t> streams;
  for (size_t i = 1; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "block") || EqualsIgnoreCase(args[i], "count")) {
      ++i;
    } else if (EqualsIgnoreCase(args[i], "group")) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "noack")) {
    } else {
      if (EqualsIgnoreCase(args[i], "streams")) streams = i;
      break;
    }
  }
  std::vector<FoundKey> keys;
  if (!streams) return keys;
  size_t n = args.size() - *streams - 1;
  if (n == 0 || n % 2 != 0) return keys;
  for (size_t i = 0; i < n / 2; ++i) keys.push_back({*streams + 1 + i, {}});
  return keys;
}

std::vector<FoundKey> SetKeys(Args args) {
  for (size_t i = 3; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "get")) return {{1, {"RW", "access", "update"}}};
  }
  return {{1, {"OW", "update"}}};
}

// MIGRATE's keys (server/migrate.h), each flagged as Redis's migrateGetKeys flags them.
std::vector<FoundKey> MigrateKeys(Args args) {
  std::vector<size_t> positions;
  MigrateKeyPositions(args, &positions);
  std::vector<FoundKey> keys;
  for (size_t i : positions) keys.push_back({i, {"RW", "access", "delete"}});
  return keys;
}

std::vector<FoundKey> BitfieldKeys(Args args) {
  bool read_only = true;
  for (size_t i = 2; i < args.size(); ++i) {
    size_t remaining = args.size() - i - 1;
    if (EqualsIgnoreCase(args[i], "get") && remaining >= 2) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "overflow") && remaining >= 1) {
      i += 1;
    } else {
      read_only = false;  // SET, INCRBY, or a syntax error: assumed to write
      break;
    }
  }
  if (read_only) return {{1, {"RO", "access"}}};
  return {{1, {"RW", "access", "update"}}};
}

using Finder = std::vector<FoundKey> (*)(Args);
struct NamedFinder {
  std::string_view name;
  Finder finder;
};

// The commands Redis 7.0 gives a key finder of its own (its getkeys_proc), by name.
std::optional<Finder> FallbackFinder(std::string_view name) {
  static const NamedFinder kFinders[] = {
      {"zunionstore", [](Args a) { return CountedKeys(a, 1, 2, 3, 1); }},
      {"zinterstore", [](Args a) { return CountedKeys(a, 1, 2, 3, 1); }},
      {"zdiffstore", [](Args a) { return CountedKeys(a, 1, 2, 3, 1); }},
      {"zunion", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"zinter", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"zdiff", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"zintercard", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"sintercard", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"lmpop", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"zmpop", [](Args a) { return CountedKeys(a, 0, 1, 2, 1); }},
      {"blmpop", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"bzmpop", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"eval", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"evalsha", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"eval_ro", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"evalsha_ro", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"fcall", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"fcall_ro", [](Args a) { return CountedKeys(a, 0, 2, 3, 1); }},
      {"sort", SortKeys},
      {"sort_ro", [](Args) { return std::vector<FoundKey>{{1, {"RO", "access"}}}; }},
      {"georadius", GeoRadiusKeys},
      {"georadiusbymember", GeoRadiusKeys},
      {"xread", XReadKeys},
      {"xreadgroup", XReadKeys},
      {"set", SetKeys},
      {"bitfield", BitfieldKeys},
      {"migrate", MigrateKeys},
  };
  for (const NamedFinder& f : kFinders) {
    if (f.name == name) return f.finder;
  }
  return std::nullopt;
}

// Appends what one spec finds to `keys`; false when the spec cannot tell (Redis then asks the
// command's own finder).
bool FindWithSpec(const KeySpec& spec, Args args, std::vector<FoundKey>* keys) {
  int64_t argc = static_cast<int64_t>(args.size());
  int64_t first = 0;
  if (spec.begin_type == "index") {
    first = spec.index;
  } else if (spec.begin_type == "keyword") {
    bool forward = spec.startfrom > 0;
    int64_t start = forward ? spec.startfrom : argc + spec.startfrom;
    int64_t end = forward ? argc - 1 : 1;
    for (int64_t i = start; i != end; i += start <= end ? 1 : -1) {
      if (i >= argc || i < 1) break;
      if (EqualsIgnoreCase(args[static_cast<size_t>(i)], spec.keyword)) {
        first = i + 1;
        break;
      }
    }
    if (first == 0) return true;  // no keyword, no key
  } else {
    return false;
  }
  int64_t last = 0;
  int64_t step = 1;
  if (spec.find_type == "range") {
    step = spec.keystep;
    if (spec.lastkey >= 0) {
      last = first + spec.lastkey;
    } else if (spec.limit == 0) {
      last = argc + spec.lastkey;
    } else {
      last = first + ((argc - first) / spec.limit + spec.lastkey);
    }
  } else if (spec.find_type == "keynum") {
    step = spec.keystep;
    int64_t count_at = first + spec.keynumidx;
    int64_t numkeys = 0;
    if (count_at >= argc || !protocol::ParseInt64(args[static_cast<size_t>(count_at)], &numkeys) || numkeys < 0) return false;
    first += spec.firstkey;
    last = first + numkeys - 1;
  } else {
    return false;
  }
  if (last >= argc || last < first || first >= argc) return false;
  for (int64_t i = first; i <= last; i += std::max<int64_t>(1, step)) keys->push_back({static_cast<size_t>(i), spec.flags});
  return !spec.HasFlag("incomplete");
}

}  // namespace

bool KeySpec::HasFlag(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

const CommandMetadata* FindCommandMetadata(std::string_view full_name) {
  std::string name = protocol::AsciiLower(full_name);
  for (const auto* table : {&LapseCommandMetadata(), &RedisCommandMetadata()}) {
    auto it = std::lower_bound(table->begin(), table->end(), name,
                               [](const CommandMetadata& m, const std::string& n) { return m.name < n; });
    if (it != table->end() && it->name == name) return &*it;
  }
  return nullptr;
}

void WriteMetadataTokens(protocol::ReplyWriter& reply, std::string_view tokens) {
  TokenCursor cursor(tokens);
  while (!cursor.Done()) {
    std::string_view token = cursor.Next();
    switch (token.empty() ? '\0' : token[0]) {
      case '%': reply.MapHeader(static_cast<size_t>(TokenNumber(token))); break;
      case '*': reply.ArrayHeader(static_cast<size_t>(TokenNumber(token))); break;
      case '~': reply.SetHeader(static_cast<size_t>(TokenNumber(token))); break;
      case ':': reply.Integer(TokenNumber(token)); break;
      case '+': reply.SimpleString(token.substr(1)); break;
      case '$': reply.Bulk(token.substr(1)); break;
      default: reply.Bulk(token); break;
    }
  }
}

size_t DocsFieldCount(std::string_view docs) {
  TokenCursor cursor(docs);
  return cursor.Done() ? 0 : static_cast<size_t>(TokenNumber(cursor.Next()));
}

std::vector<KeySpec> ParseKeySpecs(std::string_view info_tail) {
  TokenCursor cursor(info_tail);
  if (cursor.Done()) return {};
  ReadValue(cursor);  // tips
  if (cursor.Done()) return {};
  Value specs = ReadValue(cursor);
  std::vector<KeySpec> out;
  for (const Value& map : specs.items) out.push_back(ToKeySpec(map));
  return out;
}

const std::vector<KeySpec>& KeySpecsOf(const CommandMetadata* meta) {
  static const std::vector<KeySpec> kNone;
  static const auto* const parsed = [] {
    auto* out = new std::unordered_map<const CommandMetadata*, std::vector<KeySpec>>;
    for (const auto* table : {&LapseCommandMetadata(), &RedisCommandMetadata()}) {
      for (const CommandMetadata& m : *table) out->emplace(&m, ParseKeySpecs(m.info_tail));
    }
    return out;
  }();
  if (meta == nullptr) return kNone;
  auto it = parsed->find(meta);
  return it != parsed->end() ? it->second : kNone;
}

bool CommandMayHaveKeys(std::string_view name, const std::vector<KeySpec>& specs) {
  if (FallbackFinder(name)) return true;
  return std::any_of(specs.begin(), specs.end(), [](const KeySpec& s) { return !s.HasFlag("not_key"); });
}

std::vector<FoundKey> FindKeys(std::string_view name, const std::vector<KeySpec>& specs, Args args) {
  bool has_key_spec = std::any_of(specs.begin(), specs.end(), [](const KeySpec& s) { return !s.HasFlag("not_key"); });
  bool variable_flags = std::any_of(specs.begin(), specs.end(), [](const KeySpec& s) { return s.HasFlag("variable_flags"); });
  if (has_key_spec && !variable_flags) {
    std::vector<FoundKey> keys;
    bool complete = true;
    for (const KeySpec& spec : specs) {
      if (spec.HasFlag("not_key")) continue;
      if (!FindWithSpec(spec, args, &keys)) {
        complete = false;
        break;
      }
    }
    if (complete) return keys;
  }
  std::optional<Finder> finder = FallbackFinder(name);
  return finder ? (*finder)(args) : std::vector<FoundKey>{};
}

}  // namespace lapse::server
