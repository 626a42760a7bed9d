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
#include "server/command_metadata.h"
#include "server/sha1.h"

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

constexpr int64_t kLogGroupingMs = 60000;   // Redis merges alike refusals this close together

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

bool KeyAllowed(const AclSelector& selector, std::string_view key, uint8_t needed) {
  for (const KeyPattern& p : selector.keys) {
    if ((p.permissions & needed) == needed && engine::GlobMatch(p.pattern, key)) return true;
  }
  return false;
}

// The arguments (by index) naming the channels a command publishes or subscribes to, and
// whether they are patterns.
std::vector<size_t> ChannelsOf(const CommandSpec& spec, Args args, bool* patterns) {
  *patterns = spec.name == "psubscribe";
  std::vector<size_t> at;
  if (spec.name == "publish" || spec.name == "spublish") {
    at.push_back(1);
  } else if (spec.name == "subscribe" || spec.name == "ssubscribe" || *patterns) {
    for (size_t i = 1; i < args.size(); ++i) at.push_back(i);
  }
  return at;
}

// The arguments (by index) naming the command's keys, in the order Redis checks them.
std::vector<size_t> KeysOf(const CommandSpec& spec, Args args) {
  std::vector<size_t> keys;
  if ((spec.flags & (kContainerArg | kItemKey)) && args.size() > 1) return {1};
  if (spec.flags & kPubSub) return keys;  // shard channels are keys to the table only
  if (std::optional<size_t> at = KeyCountIndex(spec)) {
    int64_t count = 0;
    if (args.size() > *at && protocol::ParseInt64(args[*at], &count) && count > 0 &&
        count <= static_cast<int64_t>(args.size() - *at - 1)) {
      for (size_t i = *at + 1; i < *at + 1 + static_cast<size_t>(count); ++i) keys.push_back(i);
    }
    return keys;
  }
  ForEachKeyIndex(spec, args, [&](size_t i) { keys.push_back(i); });
  return keys;
}

// What a command touches, worked out once however many selectors look at it (Redis's
// aclKeyResultCache).
class CommandTargets {
 public:
  CommandTargets(const CommandSpec& spec, const std::string& full_name, Args args)
      : spec_(spec), full_name_(full_name), args_(args) {}
  // The keys in the order Redis checks them: those its key specs find (as COMMAND GETKEYS
  // finds them, SORT's STORE included), or, for commands the specs do not describe (lapse's
  // own without specs, shard channels, which are not keys to ACL), the table's positions.
  const std::vector<size_t>& keys() {
    if (keys_) return *keys_;
    if (!(spec_.flags & kPubSub)) {
      if (!key_flags_) key_flags_ = KeyPermissionsBySpec();
      if (!key_flags_->empty()) {
        keys_.emplace();
        for (const auto& [index, permissions] : *key_flags_) keys_->push_back(index);
        return *keys_;
      }
    }
    keys_ = KeysOf(spec_, args_);
    return *keys_;
  }
  // The permissions the key at args[at] needs, as Redis's ACLSelectorCheckKey derives them
  // from the key's spec: read for ACCESS, write for INSERT, DELETE or UPDATE (so COPY needs
  // only read on its source and write on its destination, and EXISTS neither). A key the
  // specs do not describe (lapse's own commands without them) needs what the command's
  // flags say.
  uint8_t needed(size_t at) {
    if (!key_flags_) key_flags_ = KeyPermissionsBySpec();
    for (const auto& [index, permissions] : *key_flags_) {
      if (index == at) return permissions;
    }
    return KeyPermissionsNeeded(spec_);
  }
  const std::vector<size_t>& channels(bool* patterns) {
    if (!channels_) channels_ = ChannelsOf(spec_, args_, &patterns_);
    *patterns = patterns_;
    return *channels_;
  }

 private:
  std::vector<std::pair<size_t, uint8_t>> KeyPermissionsBySpec() const {
    std::vector<std::pair<size_t, uint8_t>> out;
    const CommandMetadata* meta = FindCommandMetadata(full_name_);
    if (meta == nullptr) return out;
    for (const FoundKey& key : FindKeys(full_name_, KeySpecsOf(meta), args_)) {
      if (std::find(key.flags.begin(), key.flags.end(), "not_key") != key.flags.end()) continue;
      uint8_t permissions = 0;
      for (std::string_view flag : key.flags) {
        if (flag == "access") permissions |= kKeyRead;
        if (flag == "insert" || flag == "delete" || flag == "update") permissions |= kKeyWrite;
      }
      out.emplace_back(key.index, permissions);
    }
    return out;
  }

  const CommandSpec& spec_;
  const std::string& full_name_;
  Args args_;
  std::optional<std::vector<size_t>> keys_;
  std::optional<std::vector<std::pair<size_t, uint8_t>>> key_flags_;
  std::optional<std::vector<size_t>> channels_;
  bool patterns_ = false;
};

// A command whose bit is off may still run with a first argument the selector lists.
bool FirstArgAllowed(const AclSelector& selector, uint32_t stat_id, Args args) {
  if (args.size() < 2) return false;
  auto it = selector.first_args.find(stat_id);
  if (it == selector.first_args.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const std::string& arg) { return protocol::EqualsIgnoreCase(args[1], arg); });
}

// Redis's ACLSelectorCheckCmd: the command, then each key, then each channel.
std::optional<AclDenial> CheckSelector(const AclSelector& selector, const CommandSpec& spec, uint32_t stat_id,
                                       const std::string& full_name, Args args, CommandTargets& targets) {
  if (!selector.allowed[stat_id] && !FirstArgAllowed(selector, stat_id, args)) {
    return AclDenial{AclDenial::kCommand, full_name};
  }
  if (!selector.all_keys) {
    for (size_t at : targets.keys()) {
      // redis.acl_check_cmd checks a command whatever its arity, so a finder may name a key
      // past the arguments given (SORT_RO alone); Redis would read past argv there.
      if (at >= args.size()) continue;
      if (!KeyAllowed(selector, args[at], targets.needed(at))) {
        return AclDenial{AclDenial::kKey, std::string(args[at]), at};
      }
    }
  }
  if (!selector.all_channels && (spec.flags & kPubSub)) {
    bool patterns = false;
    for (size_t at : targets.channels(&patterns)) {
      if (at >= args.size()) continue;
      if (!ChannelAllowed(selector, args[at], patterns)) return AclDenial{AclDenial::kChannel, std::string(args[at]), at};
    }
  }
  return std::nullopt;
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
  return LowerHex(std::span<const unsigned char>(digest, len));
}

bool AclSelector::Unrestricted() const {
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
  CommandTargets targets(spec, full_name, args);
  std::optional<AclDenial> reported = CheckSelector(user, spec, stat_id, full_name, args, targets);
  if (!reported) return std::nullopt;
  // Redis's ACLCheckAllUserCommandPerm: allowed when one selector allows it whole; else the
  // refusal reported is the highest reason, and of those the argument furthest right.
  for (const AclSelector& selector : user.selectors) {
    std::optional<AclDenial> denial = CheckSelector(selector, spec, stat_id, full_name, args, targets);
    if (!denial) return std::nullopt;
    if (denial->reason > reported->reason ||
        (denial->reason == reported->reason && denial->arg_index > reported->arg_index)) {
      reported = std::move(denial);
    }
  }
  return reported;
}

bool ChannelAllowed(const AclSelector& selector, std::string_view channel, bool is_pattern) {
  if (selector.all_channels) return true;
  for (const std::string& p : selector.channels) {
    if (is_pattern ? p == channel : engine::GlobMatch(p, channel)) return true;
  }
  return false;
}

bool ChannelAllowedByAny(const AclUser& user, std::string_view channel, bool is_pattern) {
  if (ChannelAllowed(user, channel, is_pattern)) return true;
  return std::any_of(user.selectors.begin(), user.selectors.end(),
                     [&](const AclSelector& s) { return ChannelAllowed(s, channel, is_pattern); });
}

bool AnySelectorHasAllChannels(const AclUser& user) {
  return user.all_channels ||
         std::any_of(user.selectors.begin(), user.selectors.end(), [](const AclSelector& s) { return s.all_channels; });
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
  static_cast<AclSelector&>(user) = NewSelector();
  user.name = std::string(name);
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
  size_t unmatched = 0;
  std::optional<std::vector<std::string>> merged = MergeSelectorArguments(rules, &unmatched);
  // Redis quotes the argument with %s: up to its first NUL.
  if (!merged) {
    return "ERR Unmatched parenthesis in acl selector starting at '" + std::string(protocol::AsCString(rules[unmatched])) +
           "'.";
  }
  AclUser user = it == users_.end() ? NewUser(name) : *it->second;
  for (const std::string& rule : *merged) {
    if (auto reason = ApplyRule(user, rule)) {
      return "ERR Error in ACL SETUSER modifier '" + std::string(protocol::AsCString(rule)) + "': " + *reason;
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
  std::string errors;
  size_t line_no = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::vector<std::string_view> words = SplitWords(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (words.empty()) continue;
    std::string where = source + ":" + std::to_string(line_no);
    // Like Redis, every line is checked and every error told, though one is enough to load nothing.
    if (words[0] != "user" || words.size() < 2) {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    std::string name(words[1]);
    if (loaded.count(name) != 0) {
      errors += "WARNING: Duplicate user '" + name + "' found on line " + std::to_string(line_no) + ". ";
      continue;
    }
    // A line describes a user whole, from nothing.
    AclUser user = NewUser(name);
    ApplyLoadedRules(user, std::span<const std::string_view>(words).subspan(2), where, &errors);
    loaded.emplace(name, std::make_shared<const AclUser>(std::move(user)));
  }
  if (!errors.empty()) {
    errors.pop_back();
    return errors;
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

bool Acl::ApplyLoadedRules(AclUser& user, std::span<const std::string_view> words, const std::string& where,
                           std::string* errors) const {
  size_t unmatched = 0;
  std::optional<std::vector<std::string>> rules = MergeSelectorArguments(words, &unmatched);
  if (!rules) {
    // Redis 7.0.15 crashes on this line instead; lapse says what SETUSER would.
    *errors += where + ": Unmatched parenthesis in acl selector starting at '" + std::string(words[unmatched]) + "'. ";
    return false;
  }
  // Redis's ACLLoadFromFile quotes a rule naming an unknown command, which is no secret, and
  // of the other errors tells only the first, without the rule: it may hold a password.
  bool told_other = false;
  bool ok = true;
  for (const std::string& rule : *rules) {
    std::optional<std::string> reason = ApplyRule(user, rule);
    if (!reason) continue;
    ok = false;
    if (*reason == kAclUnknownName) {
      *errors += where + ": Error in applying operation '" + rule + "': " + *reason + ". ";
    } else if (!told_other) {
      *errors += where + ": " + *reason + ". ";
      told_other = true;
    }
  }
  return ok;
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
