// File: server/acl.h
//
// Access control as Redis 7.0 has it: named users with passwords (kept as SHA-256 hex),
// an on/off switch, the commands they may run, the keys and the Pub/Sub channels they may
// touch; and the ACL LOG of refusals.
//
// Design:
//  - A user's command permissions are one bit per statistics slot of the command table
//    (CommandSpec::stat_id and SubcommandSpec::stat_id), so a container's subcommands
//    ("client|kill") have bits of their own, as in Redis. Categories are not kept: a rule
//    such as +@hash sets the bits of the commands in @hash at the time it is applied, and
//    ACL LIST describes the bits back with Redis 7.0's best-fit algorithm.
//  - Permissions live in selectors (AclSelector): the user's own, its root, and any `(...)`
//    ones added by ACL SETUSER. A command passes when one selector allows it whole, as in
//    Redis 7.0; the rule parsing and ACL LIST's descriptions are in acl_rules.cc.
//  - Users are immutable snapshots (shared_ptr<const AclUser>): ACL SETUSER builds a new one
//    and swaps it in under the registry's mutex, so a check never sees a half-made user.
//  - The dispatcher's common case costs one branch: a client whose user may run everything
//    on every key and channel (the default user) has ClientInfo::acl_restricted false, and
//    nothing else is looked at (its root allows everything, so its selectors never matter).
//    The registry sets the flag of every client of a user it changes, so the slow path
//    re-reads the user on its next command.
//  - lapse's container and item commands are in their own category, @container; a key
//    pattern applies to a container's name (args[1]), so a user can be limited to some
//    containers.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_table.h"

namespace lapse::server {

class ClientRegistry;
class Server;
struct ClientSession;
struct ClientInfo;

// Redis 7.0's categories in the order of its table (ACL CAT, COMMAND INFO), then lapse's own.
enum AclCategory : uint32_t {
  kCatKeyspace = 1u << 0,
  kCatRead = 1u << 1,
  kCatWrite = 1u << 2,
  kCatSet = 1u << 3,
  kCatSortedSet = 1u << 4,
  kCatList = 1u << 5,
  kCatHash = 1u << 6,
  kCatString = 1u << 7,
  kCatBitmap = 1u << 8,
  kCatHyperLogLog = 1u << 9,
  kCatGeo = 1u << 10,
  kCatStream = 1u << 11,
  kCatPubSub = 1u << 12,
  kCatAdmin = 1u << 13,
  kCatFast = 1u << 14,
  kCatSlow = 1u << 15,
  kCatBlocking = 1u << 16,
  kCatDangerous = 1u << 17,
  kCatConnection = 1u << 18,
  kCatTransaction = 1u << 19,
  kCatScripting = 1u << 20,
  kCatContainer = 1u << 21,
};

struct AclCategoryName {
  const char* name;
  uint32_t bit;
};
std::span<const AclCategoryName> AclCategoryNames();
// The category's bit, 0 when there is none by that name (case-insensitive).
uint32_t FindAclCategory(std::string_view name);

// The categories of a command as COMMAND INFO lists them: from its flags and group.
uint32_t CommandCategories(const CommandSpec& spec);
// A subcommand's: Redis 7.0's for those Redis has, else its container's flags decide.
uint32_t SubcommandCategories(const CommandSpec& container, const SubcommandSpec& sub);

// Redis's reason for a rule naming no command, category or subcommand it knows (ENOENT):
// the one refusal an aclfile's error message quotes the rule for.
inline constexpr std::string_view kAclUnknownName = "Unknown command or category name in ACL";
// Redis's ACLStringHasSpaces: a white-space or NUL byte, which user names and patterns may
// not hold (an ACL file splits its lines on white space).
bool AclStringHasSpaces(std::string_view s);

enum KeyPermission : uint8_t { kKeyRead = 1, kKeyWrite = 2, kKeyReadWrite = 3 };

struct KeyPattern {
  std::string pattern;
  uint8_t permissions = kKeyReadWrite;
};

// What one selector allows: commands, keys and channels, checked as a whole. A user has its
// root selector (its own permissions) and any number of `(...)` selectors.
struct AclSelector {
  std::vector<bool> allowed;     // by statistics slot (stat_id)
  // Redis's allowed_firstargs (+select|0): for a command without subcommands whose bit is
  // off, the first arguments (compared case-insensitively) it may still run with. Any rule
  // that sets or clears the command's bit forgets them, as Redis's ACLChangeSelectorPerm does.
  std::map<uint32_t, std::vector<std::string>> first_args;
  bool future_commands = false;  // set by +@all: Redis's "can run commands added later"
  bool all_keys = false;
  std::vector<KeyPattern> keys;
  bool all_channels = false;
  std::vector<std::string> channels;

  bool Unrestricted() const;
};

// The user's own fields are its root selector, so a check of a user without selectors
// reads the same fields as before selectors existed.
struct AclUser : AclSelector {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  bool sanitize_payload = false;  // only shown, as `reset` sets it in Redis
  std::vector<std::string> passwords;  // SHA-256, lower-case hex, in the order added
  std::vector<AclSelector> selectors;  // the `(...)` ones, in the order added

  // The default user, and the one that needs no check at all: its root allows everything.
  bool Unrestricted() const { return AclSelector::Unrestricted(); }
  bool PasswordMatches(std::string_view password) const;
};

// Why a command was refused, and what it was refused on (a command's full name, a key or a
// channel), for the NOPERM error and ACL LOG.
struct AclDenial {
  // Ordered as Redis ranks them: when no selector allows a command, the highest reason is
  // reported, and among equal ones the argument furthest right.
  enum Reason { kCommand, kKey, kChannel } reason;
  std::string object;
  size_t arg_index = 0;  // of the key or channel refused
};

// Checks a command (already found and arity-checked) against a user: allowed when its root
// or any one selector allows the command with all its keys and channels; nullopt then.
std::optional<AclDenial> CheckCommand(const AclUser& user, const CommandSpec& spec, uint32_t stat_id,
                                      const std::string& full_name, Args args);
// Channel patterns are matched literally (PSUBSCRIBE's), channels by glob, as Redis 7.0 does.
bool ChannelAllowed(const AclSelector& selector, std::string_view channel, bool is_pattern);
// Whether any of the user's selectors, root included, allows the channel.
bool ChannelAllowedByAny(const AclUser& user, std::string_view channel, bool is_pattern);
bool AnySelectorHasAllChannels(const AclUser& user);

// Redis's ACLMergeSelectorArguments: the words of a `(...)` selector split over several
// arguments become one rule, "(~k* +get)". nullopt when a '(' is never closed, with
// *unmatched the index of the argument that opened it.
std::optional<std::vector<std::string>> MergeSelectorArguments(std::span<const std::string_view> args,
                                                               size_t* unmatched);

// The error the client gets, "NOPERM ...".
std::string NoPermError(const AclDenial& denial);
// EXEC's error for a queued command the user may no longer run.
std::string NoPermAtExecError(const AclDenial& denial);
// A script's error for a redis.call the user may not make.
std::string NoPermInScriptError(const AclDenial& denial);

// One entry of ACL LOG.
struct AclLogEntry {
  uint64_t count = 1;
  std::string reason;   // "command", "key", "channel", "auth"
  std::string context;  // "toplevel", "multi", "lua"
  std::string object;
  std::string username;
  int64_t created_ms = 0;
  std::string client_info;
};

std::string Sha256Hex(std::string_view text);

// Adds a refusal to ACL LOG with the client's CLIENT LIST line (acl_commands.cc).
void RecordAclRefusal(Server& server, const ClientSession& session, std::string reason, std::string context,
                      std::string object, std::string username);
// Records and words a denial of `session`'s command: the NOPERM error to answer.
std::string RefuseForAcl(Server& server, const ClientSession& session, const AclDenial& denial, std::string context);

class Acl {
 public:
  Acl(const CommandTable& table, ClientRegistry& clients);

  std::shared_ptr<const AclUser> Find(std::string_view name) const;
  std::vector<std::shared_ptr<const AclUser>> All() const;  // sorted by name
  // ACL SETUSER: all the rules or none. Returns Redis's error ("ERR Error in ACL SETUSER
  // modifier ...") on failure.
  std::optional<std::string> SetUser(std::string_view name, std::span<const std::string_view> rules);
  // Number deleted; their clients are disconnected. The default user is refused by the caller.
  size_t DeleteUsers(std::span<const std::string_view> names);
  // The default user's password follows requirepass, as in Redis.
  void SetRequirePass(std::string_view password);
  // Replaces the users (ACL LOAD, aclfile and `user` lines at start-up) from `user ...`
  // lines; the default user stays as it is unless a line describes it. An error names
  // `source` and the line, in Redis's words, and changes nothing.
  std::optional<std::string> LoadUsers(std::string_view text, const std::string& source);
  // ACL LOAD and the aclfile at start-up: "" on success, else why nothing was loaded.
  std::string LoadFile(const std::string& path);
  // ACL SAVE: every user, written whole to a temporary file renamed over `path`.
  std::string SaveFile(const std::string& path) const;
  // The users as `user ...` lines, ACL LIST's format.
  std::vector<std::string> Describe() const;
  static std::string Describe(const AclUser& user, const CommandTable& table);
  static std::string DescribeCommands(const AclSelector& selector, const CommandTable& table);
  static std::string DescribeKeys(const AclSelector& selector);
  static std::string DescribeChannels(const AclSelector& selector);
  // A selector as ACL LIST shows it: keys, channels, then command rules.
  static std::string DescribeSelector(const AclSelector& selector, const CommandTable& table);

  // Logs a client in as `user` (AUTH, HELLO AUTH, RESET): its name for CLIENT LIST and its
  // restricted flag, set together under the registry's lock so that no SETUSER falls between.
  void Attach(ClientInfo& client, const std::string& user);
  // Whether a new connection must authenticate: the default user has a password or is off.
  bool DefaultNeedsAuth() const;

  void Log(AclLogEntry entry);
  std::vector<AclLogEntry> LogEntries(size_t count) const;  // newest first
  void ResetLog();
  void SetLogMaxLen(size_t max_len);
  // acl-pubsub-default: whether new users start with allchannels (else resetchannels).
  void set_pubsub_default_all(bool all) { pubsub_default_all_.store(all, std::memory_order_relaxed); }
  const CommandTable& table() const { return table_; }

 private:
  // Applies one rule (already merged, so a selector is one rule) to `user`; Redis's reason
  // for refusing it on failure.
  std::optional<std::string> ApplyRule(AclUser& user, std::string_view rule) const;
  // The rules a selector accepts: commands, keys, channels (Redis's ACLSetSelector).
  std::optional<std::string> ApplySelectorRule(AclSelector& selector, std::string_view rule) const;
  std::optional<std::string> ApplyCommandRule(AclSelector& selector, std::string_view rule) const;
  // "(~k* +get)": a new selector from the words inside the parentheses.
  std::optional<std::string> AddSelector(AclUser& user, std::string_view rule) const;
  AclSelector NewSelector() const;
  AclUser NewUser(std::string_view name) const;
  // One `user` line's rules applied to `user`, with Redis's aclfile wording for what fails
  // (appended to *errors): false when any failed.
  bool ApplyLoadedRules(AclUser& user, std::span<const std::string_view> words, const std::string& where,
                        std::string* errors) const;
  // Under mu_: marks the clients of `name` for a fresh check, or disconnects them.
  void TouchClients(const std::string& name, bool disconnect);

  const CommandTable& table_;
  ClientRegistry& clients_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const AclUser>> users_;
  std::deque<AclLogEntry> log_;  // newest first
  // acllog-max-len: as in Redis, a smaller limit trims the log at its next entry.
  size_t log_max_len_ = 128;
  std::atomic<bool> pubsub_default_all_{false};
};

}  // namespace lapse::server
