// Access control (see acl.h for the design): categories, users and their rules, the check a
// command goes through, ACL LIST's description and ACL LOG.
#include "server/acl.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <openssl/evp.h>

#include "engine/glob.h"
#include "protocol/arg_reader.h"
#include "server/client_session.h"

namespace lapse::server {

using protocol::EqualsIgnoreCase;

namespace {

constexpr std::array<AclCategoryName, 22> kCategories = {{
    {"keyspace", kCatKeyspace},       {"read", kCatRead},         {"write", kCatWrite},
    {"set", kCatSet},                 {"sortedset", kCatSortedSet}, {"list", kCatList},
    {"hash", kCatHash},               {"string", kCatString},     {"bitmap", kCatBitmap},
    {"hyperloglog", kCatHyperLogLog}, {"geo", kCatGeo},           {"stream", kCatStream},
    {"pubsub", kCatPubSub},           {"admin", kCatAdmin},       {"fast", kCatFast},
    {"slow", kCatSlow},               {"blocking", kCatBlocking}, {"dangerous", kCatDangerous},
    {"connection", kCatConnection},   {"transaction", kCatTransaction}, {"scripting", kCatScripting},
    {"container", kCatContainer},
}};

// Redis's reasons for refusing a rule (ACLSetUserStringError), after the modifier's name.
constexpr std::string_view kUnknownName = "Unknown command or category name in ACL";
constexpr std::string_view kSyntax = "Syntax error";
constexpr std::string_view kKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try "
    "'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try "
    "'resetchannels' to start with an empty list of channels";
constexpr std::string_view kNoSuchPassword = "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";

constexpr int64_t kLogGroupingMs = 60000;   // Redis merges alike refusals this close together

bool IsLowerHex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Commands Redis's key specs mark as writing their keys without reading them (OW, RM with
// no ACCESS): a %W~ pattern is enough for them. Every other write also reads.
bool WritesWithoutReading(const std::string& name) {
  for (std::string_view n : {"set", "setex", "psetex", "setnx", "mset", "msetnx", "del", "unlink", "expire", "pexpire",
                             "expireat", "pexpireat", "persist", "hset", "hmset", "hsetnx", "hdel", "sadd", "srem",
                             "lpush", "rpush", "zadd", "zrem", "pfadd", "geoadd", "iput", "idel"}) {
    if (name == n) return true;
  }
  return false;
}

uint8_t KeyPermissionsNeeded(const CommandSpec& spec) {
  if (spec.flags & kWrite) return WritesWithoutReading(spec.name) ? kKeyWrite : kKeyReadWrite;
  return kKeyRead;
}

bool KeyAllowed(const AclUser& user, std::string_view key, uint8_t needed) {
  for (const KeyPattern& p : user.keys) {
    if ((p.permissions & needed) == needed && engine::GlobMatch(p.pattern, key)) return true;
  }
  return false;
}

// The channels a command publishes or subscribes to, and whether they are patterns.
std::vector<std::string_view> ChannelsOf(const CommandSpec& spec, Args args, bool* patterns) {
  *patterns = spec.name == "psubscribe";
  if (spec.name == "publish" || spec.name == "spublish") return {args[1]};
  if (spec.name == "subscribe" || spec.name == "ssubscribe" || *patterns) return {args.begin() + 1, args.end()};
  return {};
}

std::vector<std::string_view> KeysOf(const CommandSpec& spec, Args args) {
  std::vector<std::string_view> keys;
  if ((spec.flags & (kContainerArg | kItemKey)) && args.size() > 1) return {args[1]};
  if (spec.flags & kPubSub) return keys;  // shard channels are keys to the table only
  if (std::optional<size_t> at = KeyCountIndex(spec)) {
    int64_t count = 0;
    if (args.size() > *at && protocol::ParseInt64(args[*at], &count) && count > 0 &&
        count <= static_cast<int64_t>(args.size() - *at - 1)) {
      keys.assign(args.begin() + static_cast<ptrdiff_t>(*at) + 1, args.begin() + static_cast<ptrdiff_t>(*at + 1 + count));
    }
    return keys;
  }
  ForEachKeyIndex(spec, args, [&](size_t i) { keys.push_back(args[i]); });
  return keys;
}

}  // namespace

std::span<const AclCategoryName> AclCategoryNames() { return kCategories; }

uint32_t FindAclCategory(std::string_view name) {
  for (const AclCategoryName& c : kCategories) {
    if (EqualsIgnoreCase(name, c.name)) return c.bit;
  }
  return 0;
}

std::string Sha256Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

bool AclUser::Unrestricted() const {
  return all_keys && all_channels && std::all_of(allowed.begin(), allowed.end(), [](bool b) { return b; });
}

bool AclUser::PasswordMatches(std::string_view password) const {
  if (nopass) return true;
  std::string hash = Sha256Hex(password);
  // Compared in constant time, as Redis does: how long a refusal takes says nothing.
  bool matched = false;
  for (const std::string& stored : passwords) {
    unsigned char diff = 0;
    for (size_t i = 0; i < hash.size(); ++i) diff |= static_cast<unsigned char>(hash[i] ^ stored[i]);
    matched |= diff == 0;
  }
  return matched;
}

std::optional<AclDenial> CheckCommand(const AclUser& user, const CommandSpec& spec, uint32_t stat_id,
                                      const std::string& full_name, Args args) {
  // Like Redis, the commands a client may send before AUTH are never refused.
  if (spec.flags & kNoAuth) return std::nullopt;
  if (!user.allowed[stat_id]) return AclDenial{AclDenial::kCommand, full_name};
  if (!user.all_keys) {
    uint8_t needed = KeyPermissionsNeeded(spec);
    for (std::string_view key : KeysOf(spec, args)) {
      if (!KeyAllowed(user, key, needed)) return AclDenial{AclDenial::kKey, std::string(key)};
    }
  }
  if (!user.all_channels && (spec.flags & kPubSub)) {
    bool patterns = false;
    for (std::string_view channel : ChannelsOf(spec, args, &patterns)) {
      if (!ChannelAllowed(user, channel, patterns)) return AclDenial{AclDenial::kChannel, std::string(channel)};
    }
  }
  return std::nullopt;
}

bool ChannelAllowed(const AclUser& user, std::string_view channel, bool is_pattern) {
  if (user.all_channels) return true;
  for (const std::string& p : user.channels) {
    if (is_pattern ? p == channel : engine::GlobMatch(p, channel)) return true;
  }
  return false;
}

std::string NoPermError(const AclDenial& denial) {
  switch (denial.reason) {
    case AclDenial::kCommand:
      return "NOPERM this user has no permissions to run the '" + denial.object + "' command";
    case AclDenial::kKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    case AclDenial::kChannel:
      break;
  }
  return "NOPERM this user has no permissions to access one of the channels used as arguments";
}

std::string NoPermAtExecError(const AclDenial& denial) {
  std::string why = denial.reason == AclDenial::kCommand ? "no permission to execute the command or subcommand"
                    : denial.reason == AclDenial::kKey   ? "no permission to touch the specified keys"
                                                         : "no permission to access one of the channels used as arguments";
  return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
         "This command is no longer allowed for the following reason: " + why;
}

std::string NoPermInScriptError(const AclDenial& denial) {
  switch (denial.reason) {
    case AclDenial::kCommand:
      return "ERR The user executing the script can't run this command or subcommand";
    case AclDenial::kKey:
      return "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments";
    case AclDenial::kChannel:
      break;
  }
  return "ERR The user executing the script can't publish to the channel mentioned in the command";
}

// ---- the registry ----

Acl::Acl(const CommandTable& table, ClientRegistry& clients) : table_(table), clients_(clients) {
  auto user = std::make_shared<AclUser>(NewUser("default"));
  // Redis's default user: "on nopass ~* &* +@all".
  for (std::string_view rule : {"on", "nopass", "~*", "&*", "+@all"}) ApplyRule(*user, rule);
  users_.emplace("default", std::move(user));
}

AclUser Acl::NewUser(std::string_view name) const {
  AclUser user;
  user.name = std::string(name);
  user.allowed.assign(table_.stat_count(), false);
  user.all_channels = pubsub_default_all_;
  return user;
}

std::shared_ptr<const AclUser> Acl::Find(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = users_.find(std::string(name));
  return it == users_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const AclUser>> Acl::All() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const AclUser>> out;
  for (const auto& [name, user] : users_) out.push_back(user);
  return out;
}

void Acl::Attach(ClientInfo& client, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = users_.find(name);
  bool restricted = it == users_.end() || !it->second->Unrestricted();
  clients_.SetUser(client, name);
  client.acl_restricted.store(restricted, std::memory_order_relaxed);
}

bool Acl::DefaultNeedsAuth() const {
  std::shared_ptr<const AclUser> user = Find("default");
  return !user->nopass || !user->enabled;
}

std::optional<std::string> Acl::SetUser(std::string_view name, std::span<const std::string_view> rules) {
  std::lock_guard lock(mu_);
  auto it = users_.find(std::string(name));
  AclUser user = it == users_.end() ? NewUser(name) : *it->second;
  for (std::string_view rule : rules) {
    if (auto reason = ApplyRule(user, rule)) {
      return "ERR Error in ACL SETUSER modifier '" + std::string(rule) + "': " + *reason;
    }
  }
  // Like Redis 7.0, a user turned off keeps its connections; only new logins are refused.
  std::string key = user.name;
  users_[key] = std::make_shared<const AclUser>(std::move(user));
  TouchClients(key, false);
  return std::nullopt;
}

size_t Acl::DeleteUsers(std::span<const std::string_view> names) {
  std::lock_guard lock(mu_);
  size_t deleted = 0;
  for (std::string_view name : names) {
    auto it = users_.find(std::string(name));
    if (it == users_.end()) continue;
    users_.erase(it);
    TouchClients(std::string(name), true);
    ++deleted;
  }
  return deleted;
}

void Acl::SetRequirePass(std::string_view password) {
  std::lock_guard lock(mu_);
  AclUser user = *users_.at("default");
  ApplyRule(user, "resetpass");
  ApplyRule(user, password.empty() ? std::string_view("nopass") : std::string(">") + std::string(password));
  users_["default"] = std::make_shared<const AclUser>(std::move(user));
}

void Acl::TouchClients(const std::string& name, bool disconnect) {
  auto user = users_.find(name);
  bool restricted = user == users_.end() || !user->second->Unrestricted();
  std::vector<std::function<void()>> kills;
  clients_.ForEach([&](ClientInfo& client) {
    if (client.user != name) return;
    client.acl_restricted.store(restricted, std::memory_order_relaxed);
    if (disconnect && client.kill) kills.push_back(client.kill);
  });
  for (auto& kill : kills) kill();
}

std::optional<std::string> Acl::ApplyRule(AclUser& user, std::string_view rule) const {
  auto is = [&](std::string_view word) { return EqualsIgnoreCase(rule, word); };
  if (is("on")) {
    user.enabled = true;
  } else if (is("off")) {
    user.enabled = false;
  } else if (is("nopass")) {
    user.nopass = true;
    user.passwords.clear();
  } else if (is("resetpass")) {
    user.nopass = false;
    user.passwords.clear();
  } else if (is("sanitize-payload") || is("skip-sanitize-payload")) {
    user.sanitize_payload = is("sanitize-payload");
  } else if (is("allkeys")) {
    return ApplyRule(user, "~*");
  } else if (is("resetkeys")) {
    user.all_keys = false;
    user.keys.clear();
  } else if (is("allchannels")) {
    return ApplyRule(user, "&*");
  } else if (is("resetchannels")) {
    user.all_channels = false;
    user.channels.clear();
  } else if (is("clearselectors")) {
    // lapse has no selectors, so there are none to clear.
  } else if (is("reset")) {
    for (std::string_view r : {"resetpass", "resetkeys", "resetchannels", "off", "-@all", "sanitize-payload"}) ApplyRule(user, r);
    if (pubsub_default_all_) ApplyRule(user, "&*");
  } else if (rule.empty()) {
    return std::string(kSyntax);
  } else if (rule[0] == '>' || rule[0] == '#') {
    std::string hash = rule[0] == '>' ? Sha256Hex(rule.substr(1)) : std::string(rule.substr(1));
    if (!IsLowerHex64(hash)) return std::string(kBadHash);
    if (std::find(user.passwords.begin(), user.passwords.end(), hash) == user.passwords.end()) user.passwords.push_back(hash);
    user.nopass = false;
  } else if (rule[0] == '<' || rule[0] == '!') {
    std::string hash = rule[0] == '<' ? Sha256Hex(rule.substr(1)) : std::string(rule.substr(1));
    if (!IsLowerHex64(hash)) return std::string(kBadHash);
    auto it = std::find(user.passwords.begin(), user.passwords.end(), hash);
    if (it == user.passwords.end()) return std::string(kNoSuchPassword);
    user.passwords.erase(it);
  } else if (rule[0] == '~' || rule[0] == '%') {
    uint8_t permissions = rule[0] == '~' ? kKeyReadWrite : 0;
    size_t at = 1;
    if (rule[0] == '%') {
      for (; at < rule.size() && rule[at] != '~'; ++at) {
        char c = static_cast<char>(std::toupper(static_cast<unsigned char>(rule[at])));
        if (c == 'R') permissions |= kKeyRead;
        else if (c == 'W') permissions |= kKeyWrite;
        else return std::string(kSyntax);
      }
      if (permissions == 0) return std::string(kSyntax);
      if (at < rule.size()) ++at;  // the '~'
    }
    if (user.all_keys) return std::string(kKeyAfterAll);
    std::string pattern(rule.substr(at));
    if (pattern == "*" && permissions == kKeyReadWrite) {
      user.all_keys = true;
      user.keys.assign(1, KeyPattern{"*", kKeyReadWrite});
      return std::nullopt;
    }
    auto same = std::find_if(user.keys.begin(), user.keys.end(), [&](const KeyPattern& p) { return p.pattern == pattern; });
    if (same != user.keys.end()) {
      same->permissions |= permissions;
    } else {
      user.keys.push_back(KeyPattern{std::move(pattern), permissions});
    }
  } else if (rule[0] == '&') {
    if (user.all_channels) return std::string(kChannelAfterAll);
    std::string pattern(rule.substr(1));
    if (pattern == "*") {
      user.all_channels = true;
      user.channels.clear();
    } else if (std::find(user.channels.begin(), user.channels.end(), pattern) == user.channels.end()) {
      user.channels.push_back(std::move(pattern));
    }
  } else if (rule[0] == '(') {
    return "lapse does not support selectors";
  } else if (is("allcommands") || is("nocommands") || rule[0] == '+' || rule[0] == '-') {
    return ApplyCommandRule(user, rule);
  } else {
    return std::string(kSyntax);
  }
  return std::nullopt;
}

namespace {
// Redis's ACLChangeSelectorPerm: a command's bit, and with a container's all its subcommands'.
void SetCommandBits(std::vector<bool>& bits, const CommandSpec& spec, bool allow) {
  bits[spec.stat_id] = allow;
  for (const SubcommandSpec& sub : spec.subcommands) bits[sub.stat_id] = allow;
}

// Redis's ACLSetSelectorCommandBitsForCategory.
void SetCategoryBits(std::vector<bool>& bits, const CommandTable& table, uint32_t category, bool allow) {
  for (const CommandSpec* spec : table.All()) {
    if (CommandCategories(*spec) & category) SetCommandBits(bits, *spec, allow);
    for (const SubcommandSpec& sub : spec->subcommands) {
      if (SubcommandCategories(*spec, sub) & category) bits[sub.stat_id] = allow;
    }
  }
}
}  // namespace

std::optional<std::string> Acl::ApplyCommandRule(AclUser& user, std::string_view rule) const {
  bool allow = rule[0] == '+' || EqualsIgnoreCase(rule, "allcommands");
  if (EqualsIgnoreCase(rule, "allcommands") || EqualsIgnoreCase(rule, "nocommands") || EqualsIgnoreCase(rule, "+@all") ||
      EqualsIgnoreCase(rule, "-@all")) {
    user.allowed.assign(user.allowed.size(), allow);
    user.future_commands = allow;
    return std::nullopt;
  }
  std::string_view name = rule.substr(1);
  if (!name.empty() && name[0] == '@') {
    uint32_t category = FindAclCategory(name.substr(1));
    if (category == 0) return std::string(kUnknownName);
    SetCategoryBits(user.allowed, table_, category, allow);
    return std::nullopt;
  }
  size_t bar = name.find('|');
  const CommandSpec* spec = table_.Find(name.substr(0, bar));
  if (spec == nullptr) return std::string(kUnknownName);
  if (bar == std::string_view::npos) {
    SetCommandBits(user.allowed, *spec, allow);
    return std::nullopt;
  }
  if (spec->subcommands.empty()) {
    // Redis 7.0 allows a first argument of a command without subcommands (+select|0); lapse does not.
    if (!allow) return std::string(kUnknownName);
    return "lapse does not support first-argument rules (+command|argument) for commands without subcommands";
  }
  const SubcommandSpec* sub = spec->FindSubcommand(name.substr(bar + 1));
  if (sub == nullptr) return std::string(kUnknownName);
  user.allowed[sub->stat_id] = allow;
  return std::nullopt;
}

// ---- description (ACL LIST, GETUSER) ----

std::string Acl::DescribeKeys(const AclUser& user) {
  if (user.all_keys) return "~*";
  std::string out;
  for (const KeyPattern& p : user.keys) {
    if (!out.empty()) out += ' ';
    out += p.permissions == kKeyRead ? "%R~" : p.permissions == kKeyWrite ? "%W~" : "~";
    out += p.pattern;
  }
  return out;
}

std::string Acl::DescribeChannels(const AclUser& user) {
  if (user.all_channels) return "&*";
  std::string out;
  for (const std::string& c : user.channels) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

// Redis 7.0's ACLDescribeSelectorCommandRules: start from +@all or -@all, apply each
// category that covers more of what is left to describe than not, then single commands for
// the rest. What is left is a copy of the user's bits from which every category applied is
// taken back out. Redis walks its commands in hash order, which changes from run to run;
// lapse walks them in its table's order.
std::string Acl::DescribeCommands(const AclUser& user, const CommandTable& table) {
  bool additive = !user.future_commands;
  std::string rules = additive ? "-@all " : "+@all ";
  std::vector<bool> fake(user.allowed.size(), !additive);
  std::vector<bool> left = user.allowed;
  for (const AclCategoryName& category : kCategories) {
    size_t on = 0, off = 0;
    for (const CommandSpec* spec : table.All()) {
      if (CommandCategories(*spec) & category.bit) (left[spec->stat_id] ? on : off)++;
      for (const SubcommandSpec& sub : spec->subcommands) {
        if (SubcommandCategories(*spec, sub) & category.bit) (left[sub.stat_id] ? on : off)++;
      }
    }
    if ((additive && on > off) || (!additive && off > on)) {
      SetCategoryBits(fake, table, category.bit, additive);
      SetCategoryBits(left, table, category.bit, !additive);
      rules += std::string(additive ? "+@" : "-@") + category.name + " ";
    }
  }
  for (const CommandSpec* spec : table.All()) {
    bool bit = user.allowed[spec->stat_id];
    if (bit != fake[spec->stat_id]) {
      rules += std::string(bit ? "+" : "-") + spec->name + " ";
      SetCommandBits(fake, *spec, bit);
    }
    for (const SubcommandSpec& sub : spec->subcommands) {
      bool sub_bit = user.allowed[sub.stat_id];
      if (sub_bit != fake[sub.stat_id]) rules += std::string(sub_bit ? "+" : "-") + sub.name + " ";
    }
  }
  rules.pop_back();
  return rules;
}

std::string Acl::Describe(const AclUser& user, const CommandTable& table) {
  std::string out = "user " + user.name + (user.enabled ? " on" : " off");
  if (user.nopass) out += " nopass";
  if (user.sanitize_payload) out += " sanitize-payload";
  for (const std::string& hash : user.passwords) out += " #" + hash;
  std::string keys = DescribeKeys(user);
  if (!keys.empty()) out += " " + keys;
  out += user.all_channels ? " &*" : " resetchannels";
  if (!user.all_channels && !user.channels.empty()) out += " " + DescribeChannels(user);
  return out + " " + DescribeCommands(user, table);
}

std::vector<std::string> Acl::Describe() const {
  std::vector<std::string> lines;
  for (const auto& user : All()) lines.push_back(Describe(*user, table_));
  return lines;
}

namespace {
std::vector<std::string_view> SplitWords(std::string_view line) {
  std::vector<std::string_view> words;
  for (size_t i = 0; i < line.size();) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t w = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > w) words.push_back(line.substr(w, i - w));
  }
  return words;
}
}  // namespace

std::optional<std::string> Acl::LoadUsers(std::string_view text, const std::string& source) {
  // Built apart and swapped in whole: a bad line changes nothing.
  std::map<std::string, std::shared_ptr<const AclUser>> loaded;
  size_t line_no = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::vector<std::string_view> words = SplitWords(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (words.empty()) continue;
    std::string where = source + ":" + std::to_string(line_no);
    if (words[0] != "user" || words.size() < 2) return where + " should start with user keyword followed by the username.";
    std::string name(words[1]);
    if (loaded.count(name) != 0) {
      return "WARNING: Duplicate user '" + name + "' found on line " + std::to_string(line_no) + ".";
    }
    // A line describes a user whole, from nothing.
    AclUser user = NewUser(name);
    for (size_t i = 2; i < words.size(); ++i) {
      if (auto reason = ApplyRule(user, words[i])) {
        return where + ": Error in applying operation '" + std::string(words[i]) + "': " + *reason + ".";
      }
    }
    loaded.emplace(name, std::make_shared<const AclUser>(std::move(user)));
  }
  std::lock_guard lock(mu_);
  std::vector<std::string> old_names;
  for (const auto& [name, user] : users_) old_names.push_back(name);
  // A file that does not describe the default user leaves it as it is (requirepass with it).
  if (loaded.count("default") == 0) loaded.emplace("default", users_.at("default"));
  users_ = std::move(loaded);
  for (const std::string& name : old_names) TouchClients(name, users_.count(name) == 0);
  return std::nullopt;
}

std::string Acl::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
  std::stringstream text;
  text << in.rdbuf();
  if (auto error = LoadUsers(text.str(), path)) {
    return *error + " WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
  }
  return "";
}

std::string Acl::SaveFile(const std::string& path) const {
  std::string tmp = path + ".tmp-lapse";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const std::string& line : Describe()) out << line << "\n";
    out.flush();
    if (!out) return "Error saving ACLs to '" + tmp + "': " + std::strerror(errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return "Error renaming ACL file: " + std::string(std::strerror(errno));
  return "";
}

// ---- ACL LOG ----

void Acl::Log(AclLogEntry entry) {
  std::lock_guard lock(mu_);
  size_t looked = 0;
  // Like Redis, a refusal like a recent one counts on that entry, which moves to the front.
  for (auto it = log_.begin(); it != log_.end() && looked < 10; ++it, ++looked) {
    if (it->reason == entry.reason && it->context == entry.context && it->object == entry.object &&
        it->username == entry.username && entry.created_ms - it->created_ms < kLogGroupingMs) {
      entry.count = it->count + 1;
      log_.erase(it);
      break;
    }
  }
  log_.push_front(std::move(entry));
  while (log_.size() > log_max_len_) log_.pop_back();
}

std::vector<AclLogEntry> Acl::LogEntries(size_t count) const {
  std::lock_guard lock(mu_);
  return {log_.begin(), log_.begin() + static_cast<ptrdiff_t>(std::min(count, log_.size()))};
}

void Acl::SetLogMaxLen(size_t max_len) {
  std::lock_guard lock(mu_);
  log_max_len_ = max_len;
}

void Acl::ResetLog() {
  std::lock_guard lock(mu_);
  log_.clear();
}

}  // namespace lapse::server
