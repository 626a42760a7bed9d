// ACL family: the ACL command (SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, LOG,
// GENPASS, DRYRUN, SAVE, LOAD, HELP) over the registry of users in server/acl.h, and the
// ACL LOG records the dispatcher and AUTH make. Runs on the connection's thread.
#include <openssl/rand.h>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/acl.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/script_undo.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

void RecordAclRefusal(Server& server, const ClientSession& session, std::string reason, std::string context,
                      std::string object, std::string username) {
  int64_t now = server.clock().NowMs();
  std::string info = server.clients().Describe(now, session.info->id);
  if (!info.empty() && info.back() == '\n') info.pop_back();
  AclLogEntry entry{1, std::move(reason), std::move(context), std::move(object), std::move(username), now,
                    std::move(info)};
  // A script that may still start over logs the refusal only once its run counts.
  if (ScriptUndo* undo = ActiveScriptUndo()) return undo->HoldAclRefusal(std::move(entry));
  server.acl().Log(std::move(entry));
}

std::string RefuseForAcl(Server& server, const ClientSession& session, const AclDenial& denial, std::string context) {
  static constexpr const char* kReasons[] = {"command", "key", "channel"};
  RecordAclRefusal(server, session, kReasons[denial.reason], std::move(context), denial.object, session.user);
  return NoPermError(denial);
}

namespace {

// Like Redis 7.0, a client of the user subscribed to a channel or pattern the user may no
// longer use is disconnected.
void KillSubscribersNoLongerAllowed(Server& server, const AclUser& user) {
  if (AnySelectorHasAllChannels(user)) return;
  std::vector<uint64_t> subscribed;
  server.clients().ForEach([&](ClientInfo& client) {
    if (client.user == user.name && client.subscribed()) subscribed.push_back(client.id);
  });
  auto allowed = [&](std::string_view name, bool is_pattern) { return ChannelAllowedByAny(user, name, is_pattern); };
  for (uint64_t id : subscribed) {
    std::shared_ptr<ClientInfo> client = server.clients().Find(id);
    if (client && !server.pubsub().AllSubscriptionsAllowed(*client, allowed)) server.clients().KillMatching([id](const ClientInfo& other) { return other.id == id; }, 0);
  }
}

void AclSetUser(ConnCommand& c) {
  // Redis checks the name before any rule (ACLStringHasSpaces: isspace or NUL).
  if (AclStringHasSpaces(c.args[2])) return c.reply.Error("ERR Usernames can't contain spaces or null characters");
  std::vector<std::string_view> rules(c.args.begin() + 3, c.args.end());
  if (auto error = c.server.acl().SetUser(c.args[2], rules)) return c.reply.Error(*error);
  KillSubscribersNoLongerAllowed(c.server, *c.server.acl().Find(c.args[2]));
  c.reply.Ok();
}

// Redis's aclAddReplySelectorDescription: three fields of a map.
void ReplySelector(protocol::ReplyWriter& r, const AclSelector& selector, const CommandTable& table) {
  r.Bulk("commands");
  r.Bulk(Acl::DescribeCommands(selector, table));
  r.Bulk("keys");
  r.Bulk(Acl::DescribeKeys(selector));
  r.Bulk("channels");
  r.Bulk(Acl::DescribeChannels(selector));
}

void AclGetUser(ConnCommand& c) {
  std::shared_ptr<const AclUser> user = c.server.acl().Find(c.args[2]);
  if (user == nullptr) return c.reply.Null();
  protocol::ReplyWriter& r = c.reply;
  r.MapHeader(6);
  r.Bulk("flags");
  std::vector<const char*> flags = {user->enabled ? "on" : "off"};
  if (user->nopass) flags.push_back("nopass");
  if (user->sanitize_payload) flags.push_back("sanitize-payload");
  r.SetHeader(flags.size());
  for (const char* flag : flags) r.Bulk(flag);
  r.Bulk("passwords");
  r.ArrayHeader(user->passwords.size());
  for (const std::string& hash : user->passwords) r.Bulk(hash);
  ReplySelector(r, *user, c.server.commands());
  r.Bulk("selectors");
  r.ArrayHeader(user->selectors.size());
  for (const AclSelector& selector : user->selectors) {
    r.MapHeader(3);
    ReplySelector(r, selector, c.server.commands());
  }
}

void AclDelUser(ConnCommand& c) {
  std::vector<std::string_view> names(c.args.begin() + 2, c.args.end());
  for (std::string_view name : names) {
    if (name == "default") return c.reply.Error("ERR The 'default' user cannot be removed");
  }
  c.reply.Integer(static_cast<int64_t>(c.server.acl().DeleteUsers(names)));
}

void AclList(ConnCommand& c) {
  std::vector<std::string> lines = c.server.acl().Describe();
  c.reply.ArrayHeader(lines.size());
  for (const std::string& line : lines) c.reply.Bulk(line);
}

void AclUsers(ConnCommand& c) {
  auto users = c.server.acl().All();
  c.reply.ArrayHeader(users.size());
  for (const auto& user : users) c.reply.Bulk(user->name);
}

// Without a category, the categories; with one, its commands and subcommands.
void AclCat(ConnCommand& c) {
  if (c.args.size() == 2) {
    c.reply.ArrayHeader(AclCategoryNames().size());
    for (const AclCategoryName& category : AclCategoryNames()) c.reply.Bulk(category.name);
    return;
  }
  if (c.args.size() > 3) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "acl"));
  uint32_t category = FindAclCategory(c.args[2]);
  if (category == 0) return c.reply.Error("ERR Unknown category '" + std::string(c.args[2]) + "'");
  std::vector<const std::string*> names;
  for (const CommandSpec* spec : c.server.commands().All()) {
    if (CommandCategories(*spec) & category) names.push_back(&spec->name);
    for (const SubcommandSpec& sub : spec->subcommands) {
      if (SubcommandCategories(*spec, sub) & category) names.push_back(&sub.name);
    }
  }
  c.reply.ArrayHeader(names.size());
  for (const std::string* name : names) c.reply.Bulk(*name);
}

// ACL LOG [count | RESET]
void AclLog(ConnCommand& c) {
  if (c.args.size() > 3) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "acl"));
  int64_t count = 10;
  if (c.args.size() == 3) {
    if (EqualsIgnoreCase(c.args[2], "RESET")) {
      c.server.acl().ResetLog();
      return c.reply.Ok();
    }
    if (!protocol::ParseInt64(c.args[2], &count)) return c.reply.Error(errors::kNotInteger);
    if (count < 0) count = 0;  // Redis answers a negative count with no entries
  }
  int64_t now = c.server.clock().NowMs();
  std::vector<AclLogEntry> entries = c.server.acl().LogEntries(static_cast<size_t>(count));
  c.reply.ArrayHeader(entries.size());
  for (const AclLogEntry& e : entries) {
    c.reply.MapHeader(7);
    c.reply.Bulk("count");
    c.reply.Integer(static_cast<int64_t>(e.count));
    c.reply.Bulk("reason");
    c.reply.Bulk(e.reason);
    c.reply.Bulk("context");
    c.reply.Bulk(e.context);
    c.reply.Bulk("object");
    c.reply.Bulk(e.object);
    c.reply.Bulk("username");
    c.reply.Bulk(e.username);
    c.reply.Bulk("age-seconds");
    c.reply.Double(static_cast<double>(now - e.created_ms) / 1000.0);
    c.reply.Bulk("client-info");
    c.reply.Bulk(e.client_info);
  }
}

// ACL GENPASS [bits]: random bits from OpenSSL, as hex (Redis rounds up to whole digits).
void AclGenPass(ConnCommand& c) {
  int64_t bits = 256;
  if (c.args.size() > 3) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "acl"));
  if (c.args.size() == 3) {
    if (!protocol::ParseInt64(c.args[2], &bits)) return c.reply.Error(errors::kNotInteger);
    if (bits <= 0 || bits > 4096) {
      return c.reply.Error(
          "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096");
    }
  }
  size_t chars = static_cast<size_t>((bits + 3) / 4);
  std::vector<unsigned char> random((chars + 1) / 2);
  RAND_bytes(random.data(), static_cast<int>(random.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string password;
  for (unsigned char byte : random) {
    password.push_back(kHex[byte >> 4]);
    password.push_back(kHex[byte & 15]);
  }
  password.resize(chars);
  c.reply.Bulk(password);
}

// ACL DRYRUN user command [arg ...]: whether the user could run it, without running it.
void AclDryRun(ConnCommand& c) {
  std::shared_ptr<const AclUser> user = c.server.acl().Find(c.args[2]);
  if (user == nullptr) return c.reply.Error("ERR User '" + std::string(c.args[2]) + "' not found");
  Args command = c.args.subspan(3);
  const CommandSpec* spec = c.server.commands().Find(command[0]);
  if (spec == nullptr) return c.reply.Error("ERR Command '" + std::string(command[0]) + "' not found");
  const std::string* name = &spec->name;
  uint32_t stat_id = spec->stat_id;
  int arity = spec->arity;
  // As Redis's lookupCommand: a command with subcommands names one, or there is no command.
  if (!spec->subcommands.empty() && command.size() > 1) {
    const SubcommandSpec* sub = spec->FindSubcommand(command[1]);
    if (sub == nullptr) return c.reply.Error("ERR Command '" + std::string(command[0]) + "' not found");
    name = &sub->name;
    stat_id = sub->stat_id;
    arity = sub->arity;
  }
  if (!ArityOk(arity, command.size())) return c.reply.Error(errors::WrongArity(*name));
  std::optional<AclDenial> denial = CheckCommand(*user, *spec, stat_id, *name, command);
  if (!denial) return c.reply.Ok();
  switch (denial->reason) {
    case AclDenial::kCommand:
      return c.reply.Bulk("This user has no permissions to run the '" + denial->object + "' command");
    case AclDenial::kKey:
      return c.reply.Bulk("This user has no permissions to access the '" + denial->object + "' key");
    case AclDenial::kChannel:
      break;
  }
  c.reply.Bulk("This user has no permissions to access the '" + denial->object + "' channel");
}

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
    "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to "
    "store users in the Redis configuration.";

void AclSaveOrLoad(ConnCommand& c, bool save) {
  const std::string& path = c.server.settings().aclfile;
  if (path.empty()) return c.reply.Error(kNoAclFile);
  std::string error = save ? c.server.acl().SaveFile(path) : c.server.acl().LoadFile(path);
  if (!error.empty()) return c.reply.Error("ERR " + error);
  c.reply.Ok();
}

void AclHelp(ConnCommand& c) {
  ReplyHelp(c.reply, {"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "CAT [<category>]",
                      "    List all commands that belong to <category>, or all command categories",
                      "    when no category is specified.",
                      "DELUSER <username> [<username> ...]",
                      "    Delete a list of users.",
                      "DRYRUN <username> <command> [<arg> ...]",
                      "    Returns whether the user can execute the given command without executing the command.",
                      "GETUSER <username>",
                      "    Get the user's details.",
                      "GENPASS [<bits>]",
                      "    Generate a secure 256-bit user password. The optional `bits` argument can",
                      "    be used to specify a different size.",
                      "LIST",
                      "    Show users details in config file format.",
                      "LOAD",
                      "    Reload users from the ACL file.",
                      "LOG [<count> | RESET]",
                      "    Show the ACL log entries.",
                      "SAVE",
                      "    Save the current config to the ACL file.",
                      "SETUSER <username> <attribute> [<attribute> ...]",
                      "    Create or modify a user with the specified attributes.",
                      "USERS",
                      "    List all the registered usernames.",
                      "WHOAMI",
                      "    Return the current connection username."});
}

// The dispatcher has checked the subcommand and its arity against the table.
void CmdAcl(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "SETUSER")) return AclSetUser(c);
  if (EqualsIgnoreCase(sub, "GETUSER")) return AclGetUser(c);
  if (EqualsIgnoreCase(sub, "DELUSER")) return AclDelUser(c);
  if (EqualsIgnoreCase(sub, "LIST")) return AclList(c);
  if (EqualsIgnoreCase(sub, "USERS")) return AclUsers(c);
  if (EqualsIgnoreCase(sub, "WHOAMI")) return c.reply.Bulk(c.session.user);
  if (EqualsIgnoreCase(sub, "CAT")) return AclCat(c);
  if (EqualsIgnoreCase(sub, "LOG")) return AclLog(c);
  if (EqualsIgnoreCase(sub, "GENPASS")) return AclGenPass(c);
  if (EqualsIgnoreCase(sub, "DRYRUN")) return AclDryRun(c);
  if (EqualsIgnoreCase(sub, "SAVE")) return AclSaveOrLoad(c, true);
  if (EqualsIgnoreCase(sub, "LOAD")) return AclSaveOrLoad(c, false);
  AclHelp(c);
}

}  // namespace

void RegisterAclCommands(CommandTable& table) {
  table.Add({"acl", -2, kAdmin | kNoScript, 0, 0, 0, CmdAcl, "server", "A container for Access List Control commands."},
            {{"cat", -2}, {"deluser", -3}, {"dryrun", -4}, {"genpass", -2}, {"getuser", 3}, {"help", 2}, {"list", 2},
             {"load", 2}, {"log", -2}, {"save", 2}, {"setuser", -3}, {"users", 2}, {"whoami", 2}});
}

}  // namespace lapse::server
