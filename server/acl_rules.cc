// ACL rules (see acl.h for the design): what ACL SETUSER, the aclfile and `user` lines apply
// to a user, and how ACL LIST and GETUSER describe a user back.
//
// Design, after Redis 7.0's ACLSetUser and ACLSetSelector:
//  - Rules split in two: those of the user (on/off, passwords, reset, clearselectors and the
//    `(...)` selectors themselves) and those of a selector (commands, keys, channels). A
//    selector rule given outside parentheses applies to the root selector, the user's own.
//  - A selector arrives as one rule, "(~k* +get)", once MergeSelectorArguments has joined the
//    arguments it was split over. Its inside is split again as sdssplitargs would (quotes
//    included), and each word must be a selector rule: `on` or `>pw` inside is a syntax error.
//    As in Redis, unbalanced quotes inside leave no words, so the selector is an empty one.
//  - Every rule applies to a copy that only replaces the user when all succeeded, so a
//    failure changes nothing.
#include <algorithm>
#include <cctype>
#include <optional>
#include <span>

#include <spdlog/spdlog.h>

#include "protocol/arg_reader.h"
#include "protocol/resp_parser.h"
#include "server/acl.h"

namespace lapse::server {

using protocol::EqualsIgnoreCase;

namespace {

// Redis's reasons for refusing a rule (ACLSetUserStringError), after the modifier's name.
constexpr std::string_view kSyntax = "Syntax error";
constexpr std::string_view kKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try "
    "'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try "
    "'resetchannels' to start with an empty list of channels";
constexpr std::string_view kFirstArgOfSubcommand = "Allowing first-arg of a subcommand is not supported";
constexpr std::string_view kNoSuchPassword = "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";

bool IsLowerHex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The words inside a selector's parentheses, split as Redis's sdssplitargs splits them; none
// when a quote is left open, as sdssplitargs then gives nothing either.
std::vector<std::string> SplitSelectorWords(std::string_view inside) {
  protocol::ParserLimits limits;
  limits.max_inline_len = inside.size() + 2;
  protocol::RespParser parser(limits);
  // The leading space keeps a first '*' from reading as a multibulk header.
  std::string line = " " + std::string(inside) + "\n";
  std::vector<std::string_view> words;
  size_t consumed = 0;
  if (parser.Parse(line, &consumed, &words) != protocol::ParseStatus::kOk) return {};
  return {words.begin(), words.end()};
}

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

// As Redis's ACLSetSelector: a selector with all keys refuses any pattern before its
// permissions are read, and each of R and W may be given once.
std::optional<std::string> ApplyKeyPattern(AclSelector& selector, std::string_view rule) {
  if (selector.all_keys) return std::string(kKeyAfterAll);
  uint8_t permissions = rule[0] == '~' ? kKeyReadWrite : 0;
  size_t at = 1;
  if (rule[0] == '%') {
    for (; at < rule.size() && rule[at] != '~'; ++at) {
      char c = static_cast<char>(std::toupper(static_cast<unsigned char>(rule[at])));
      uint8_t bit = c == 'R' ? kKeyRead : c == 'W' ? kKeyWrite : 0;
      if (bit == 0 || (permissions & bit)) return std::string(kSyntax);
      permissions |= bit;
    }
    if (permissions == 0) return std::string(kSyntax);
    if (at < rule.size()) ++at;  // the '~'
  }
  if (AclStringHasSpaces(rule.substr(at))) return std::string(kSyntax);
  std::string pattern(rule.substr(at));
  if (pattern == "*" && permissions == kKeyReadWrite) {
    selector.all_keys = true;
    selector.keys.assign(1, KeyPattern{"*", kKeyReadWrite});
    return std::nullopt;
  }
  auto same = std::find_if(selector.keys.begin(), selector.keys.end(), [&](const KeyPattern& p) { return p.pattern == pattern; });
  if (same != selector.keys.end()) {
    same->permissions |= permissions;
  } else {
    selector.keys.push_back(KeyPattern{std::move(pattern), permissions});
  }
  return std::nullopt;
}

std::optional<std::string> ApplyChannelPattern(AclSelector& selector, std::string_view rule) {
  if (selector.all_channels) return std::string(kChannelAfterAll);
  if (AclStringHasSpaces(rule.substr(1))) return std::string(kSyntax);
  std::string pattern(rule.substr(1));
  if (std::find(selector.channels.begin(), selector.channels.end(), pattern) == selector.channels.end()) {
    selector.channels.push_back(std::move(pattern));
  }
  return std::nullopt;
}

}  // namespace

bool AclStringHasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c == '\0' || std::isspace(static_cast<unsigned char>(c)); });
}

std::optional<std::vector<std::string>> MergeSelectorArguments(std::span<const std::string_view> args,
                                                               size_t* unmatched) {
  std::vector<std::string> merged;
  std::optional<size_t> open;  // the argument that opened the selector being merged
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (!arg.empty() && arg.front() == '(' && arg.back() != ')') {
      merged.emplace_back(arg);
      open = i;
      continue;
    }
    if (open) {
      merged.back() += " ";
      merged.back() += arg;
      if (!arg.empty() && arg.back() == ')') open.reset();
      continue;
    }
    merged.emplace_back(arg);
  }
  if (open) {
    *unmatched = *open;
    return std::nullopt;
  }
  return merged;
}

AclSelector Acl::NewSelector() const {
  AclSelector selector;
  selector.allowed.assign(table_.stat_count(), false);
  selector.all_channels = pubsub_default_all_;
  return selector;
}

std::optional<std::string> Acl::ApplyRule(AclUser& user, std::string_view rule) const {
  auto is = [&](std::string_view word) { return EqualsIgnoreCase(rule, word); };
  if (rule.empty()) {
    // Redis takes an empty rule as no rule at all.
  } else if (is("on")) {
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
  } else if (is("clearselectors")) {
    user.selectors.clear();
  } else if (is("reset")) {
    for (std::string_view r : {"resetpass", "resetkeys", "resetchannels", "off", "-@all", "sanitize-payload", "clearselectors"}) {
      ApplyRule(user, r);
    }
    if (pubsub_default_all_) ApplyRule(user, "&*");
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
  } else if (rule.size() >= 2 && rule.front() == '(' && rule.back() == ')') {
    return AddSelector(user, rule);
  } else {
    return ApplySelectorRule(user, rule);
  }
  return std::nullopt;
}

std::optional<std::string> Acl::AddSelector(AclUser& user, std::string_view rule) const {
  AclSelector selector = NewSelector();
  for (const std::string& word : SplitSelectorWords(rule.substr(1, rule.size() - 2))) {
    if (auto reason = ApplySelectorRule(selector, word)) return reason;
  }
  user.selectors.push_back(std::move(selector));
  return std::nullopt;
}

std::optional<std::string> Acl::ApplySelectorRule(AclSelector& selector, std::string_view rule) const {
  auto is = [&](std::string_view word) { return EqualsIgnoreCase(rule, word); };
  if (is("allkeys") || rule == "~*") {
    selector.all_keys = true;
    selector.keys.assign(1, KeyPattern{"*", kKeyReadWrite});
  } else if (is("resetkeys")) {
    selector.all_keys = false;
    selector.keys.clear();
  } else if (is("allchannels") || rule == "&*") {
    selector.all_channels = true;
    selector.channels.clear();
  } else if (is("resetchannels")) {
    selector.all_channels = false;
    selector.channels.clear();
  } else if (rule.empty()) {
    return std::string(kSyntax);
  } else if (rule[0] == '~' || rule[0] == '%') {
    return ApplyKeyPattern(selector, rule);
  } else if (rule[0] == '&') {
    return ApplyChannelPattern(selector, rule);
  } else if (is("allcommands") || is("nocommands") || rule[0] == '+' || rule[0] == '-') {
    return ApplyCommandRule(selector, rule);
  } else {
    return std::string(kSyntax);
  }
  return std::nullopt;
}

std::optional<std::string> Acl::ApplyCommandRule(AclSelector& selector, std::string_view rule) const {
  bool allow = rule[0] == '+' || EqualsIgnoreCase(rule, "allcommands");
  if (EqualsIgnoreCase(rule, "allcommands") || EqualsIgnoreCase(rule, "nocommands") || EqualsIgnoreCase(rule, "+@all") ||
      EqualsIgnoreCase(rule, "-@all")) {
    selector.allowed.assign(selector.allowed.size(), allow);
    selector.first_args.clear();
    selector.future_commands = allow;
    return std::nullopt;
  }
  std::string_view name = rule.substr(1);
  if (!name.empty() && name[0] == '@') {
    uint32_t category = FindAclCategory(name.substr(1));
    if (category == 0) return std::string(kAclUnknownName);
    SetCategoryBits(selector.allowed, table_, category, allow);
    for (const CommandSpec* spec : table_.All()) {
      if (CommandCategories(*spec) & category) selector.first_args.erase(spec->stat_id);
    }
    return std::nullopt;
  }
  size_t bar = name.find('|');
  const CommandSpec* spec = table_.Find(name.substr(0, bar));
  if (spec == nullptr) return std::string(kAclUnknownName);
  if (bar == std::string_view::npos) {
    SetCommandBits(selector.allowed, *spec, allow);
    selector.first_args.erase(spec->stat_id);
    return std::nullopt;
  }
  // "-a|b" is looked up whole, as Redis's ACLLookupCommand: a subcommand, or nothing.
  if (!allow) {
    std::string_view sub_name = name.substr(bar + 1);
    const SubcommandSpec* sub = sub_name.find('|') == std::string_view::npos ? spec->FindSubcommand(sub_name) : nullptr;
    if (sub == nullptr) return std::string(kAclUnknownName);
    selector.allowed[sub->stat_id] = false;
    return std::nullopt;
  }
  // "+a|b|c" splits at its last bar, as in Redis: what precedes must be a command, not a
  // subcommand, and what follows a subcommand or first argument, never empty.
  size_t last = name.rfind('|');
  std::string_view base = name.substr(0, last), first_arg = name.substr(last + 1);
  if (last != bar) {
    std::string_view sub_name = base.substr(bar + 1);
    bool is_subcommand = sub_name.find('|') == std::string_view::npos && spec->FindSubcommand(sub_name) != nullptr;
    return std::string(is_subcommand ? kFirstArgOfSubcommand : kAclUnknownName);
  }
  if (first_arg.empty()) return std::string(kSyntax);
  if (spec->subcommands.empty()) {
    // Redis 7.0 keeps it (deprecated, with a warning in its log) without setting the bit.
    spdlog::warn("Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and "
                 "may get disabled in the future (offender: {})", rule);
    std::vector<std::string>& args = selector.first_args[spec->stat_id];
    bool known = std::any_of(args.begin(), args.end(),
                             [&](const std::string& arg) { return EqualsIgnoreCase(arg, first_arg); });
    if (!known) args.emplace_back(first_arg);
    return std::nullopt;
  }
  const SubcommandSpec* sub = spec->FindSubcommand(first_arg);
  if (sub == nullptr) return std::string(kAclUnknownName);
  selector.allowed[sub->stat_id] = true;
  return std::nullopt;
}

// ---- description (ACL LIST, GETUSER) ----

std::string Acl::DescribeKeys(const AclSelector& selector) {
  if (selector.all_keys) return "~*";
  std::string out;
  for (const KeyPattern& p : selector.keys) {
    if (!out.empty()) out += ' ';
    out += p.permissions == kKeyRead ? "%R~" : p.permissions == kKeyWrite ? "%W~" : "~";
    out += p.pattern;
  }
  return out;
}

std::string Acl::DescribeChannels(const AclSelector& selector) {
  if (selector.all_channels) return "&*";
  std::string out;
  for (const std::string& c : selector.channels) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

// Redis 7.0's ACLDescribeSelectorCommandRules: start from +@all or -@all, then apply, one
// at a time, the category that best fits what is left to describe (more of its commands
// agree than not, the fewest disagree, and on a tie the most agree), each category at most
// once; then single commands for the rest. What is left is a copy of the selector's bits
// from which every category applied is taken back out. Redis walks its commands in hash
// order, which changes from run to run; lapse walks them in its table's order.
std::string Acl::DescribeCommands(const AclSelector& selector, const CommandTable& table) {
  bool additive = !selector.future_commands;
  std::string rules = additive ? "-@all " : "+@all ";
  std::vector<bool> fake(selector.allowed.size(), !additive);
  std::vector<bool> left = selector.allowed;
  std::span<const AclCategoryName> categories = AclCategoryNames();
  std::vector<bool> applied(categories.size(), false);
  for (;;) {
    std::optional<size_t> best;
    size_t fewest_disagree = SIZE_MAX, most_agree = 0;
    for (size_t j = 0; j < categories.size(); ++j) {
      if (applied[j]) continue;
      size_t on = 0, off = 0;
      for (const CommandSpec* spec : table.All()) {
        if (CommandCategories(*spec) & categories[j].bit) (left[spec->stat_id] ? on : off)++;
        for (const SubcommandSpec& sub : spec->subcommands) {
          if (SubcommandCategories(*spec, sub) & categories[j].bit) (left[sub.stat_id] ? on : off)++;
        }
      }
      size_t disagree = additive ? off : on;
      size_t agree = additive ? on : off;
      if (agree > disagree && (disagree < fewest_disagree || (disagree == fewest_disagree && agree > most_agree))) {
        best = j;
        fewest_disagree = disagree;
        most_agree = agree;
      }
    }
    if (!best) break;
    const AclCategoryName& category = categories[*best];
    SetCategoryBits(fake, table, category.bit, additive);
    SetCategoryBits(left, table, category.bit, !additive);
    rules += std::string(additive ? "+@" : "-@") + category.name + " ";
    applied[*best] = true;
  }
  for (const CommandSpec* spec : table.All()) {
    bool bit = selector.allowed[spec->stat_id];
    if (bit != fake[spec->stat_id]) {
      rules += std::string(bit ? "+" : "-") + spec->name + " ";
      SetCommandBits(fake, *spec, bit);
    }
    for (const SubcommandSpec& sub : spec->subcommands) {
      bool sub_bit = selector.allowed[sub.stat_id];
      if (sub_bit != fake[sub.stat_id]) rules += std::string(sub_bit ? "+" : "-") + sub.name + " ";
    }
    // First arguments matter, and are shown, only while the command's bit is off.
    auto first = selector.first_args.find(spec->stat_id);
    if (!bit && first != selector.first_args.end()) {
      for (const std::string& arg : first->second) rules += "+" + std::string(spec->name) + "|" + arg + " ";
    }
  }
  rules.pop_back();
  return rules;
}

// Redis's ACLDescribeSelector: a channel list always starts from resetchannels, so that the
// line loads back to the same selector whatever acl-pubsub-default says.
std::string Acl::DescribeSelector(const AclSelector& selector, const CommandTable& table) {
  std::string out = DescribeKeys(selector);
  if (!out.empty()) out += ' ';
  out += selector.all_channels ? "&*" : "resetchannels";
  if (!selector.all_channels && !selector.channels.empty()) out += " " + DescribeChannels(selector);
  return out + " " + DescribeCommands(selector, table);
}

std::string Acl::Describe(const AclUser& user, const CommandTable& table) {
  std::string out = "user " + user.name + (user.enabled ? " on" : " off");
  if (user.nopass) out += " nopass";
  if (user.sanitize_payload) out += " sanitize-payload";
  for (const std::string& hash : user.passwords) out += " #" + hash;
  out += " " + DescribeSelector(user, table);
  for (const AclSelector& selector : user.selectors) out += " (" + DescribeSelector(selector, table) + ")";
  return out;
}

std::vector<std::string> Acl::Describe() const {
  std::vector<std::string> lines;
  for (const auto& user : All()) lines.push_back(Describe(*user, table_));
  return lines;
}

}  // namespace lapse::server
