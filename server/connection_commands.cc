// Connection family: commands that concern only the calling client (PING, ECHO, QUIT,
// HELLO, AUTH, SELECT, RESET, CLIENT). They run on the connection's thread and touch no shard.
#include <chrono>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/key_util.h"
#include "server/blocking.h"
#include "server/client_pause.h"
#include "server/server.h"
#include "server/tracking.h"
#include "server/transaction.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

void CmdPing(ConnCommand& c) {
  if (c.args.size() > 2) return c.reply.Error(errors::WrongArity("ping"));
  // In RESP2 subscribed mode a reply must look like a message: ["pong", argument or ""].
  if (c.session.in_subscribed_mode()) {
    c.reply.ArrayHeader(2);
    c.reply.Bulk("pong");
    return c.reply.Bulk(c.args.size() == 2 ? c.args[1] : std::string_view());
  }
  if (c.args.size() == 2) return c.reply.Bulk(c.args[1]);
  c.reply.SimpleString("PONG");
}

void CmdEcho(ConnCommand& c) { c.reply.Bulk(c.args[1]); }

void CmdQuit(ConnCommand& c) {
  c.reply.Ok();
  c.session.close_after_reply = true;
}

// "POST" and "Host:" are how an HTTP request (perhaps a cross-protocol attack from a browser)
// starts. Like Redis, answer nothing and close.
void CmdHttpRequest(ConnCommand& c) {
  spdlog::warn("possible security attack: a client ({}) sent an HTTP request ('{}'); connection closed",
               c.session.info->addr, c.args[0]);
  c.session.close_after_reply = true;
}

// Checks credentials for AUTH and HELLO ... AUTH and logs the client in as the user; writes
// the error itself, and an ACL LOG entry, on failure.
bool Authenticate(ConnCommand& c, std::string_view user_name, std::string_view password) {
  std::shared_ptr<const AclUser> user = c.server.acl().Find(user_name);
  if (user == nullptr || !user->enabled || !user->PasswordMatches(password)) {
    RecordAclRefusal(c.server, c.session, "auth", "toplevel", std::string(c.args[0]), std::string(user_name));
    c.reply.Error(errors::kWrongPass);
    return false;
  }
  c.session.authenticated = true;
  c.session.user = user->name;
  c.server.acl().Attach(*c.session.info, user->name);
  return true;
}

void CmdAuth(ConnCommand& c) {
  if (c.args.size() > 3) return c.reply.Error(errors::kSyntax);
  if (c.args.size() == 2 && c.server.acl().Find("default")->nopass) return c.reply.Error(errors::kAuthNoPassword);
  std::string_view user = c.args.size() == 3 ? c.args[1] : "default";
  if (Authenticate(c, user, c.args.back())) c.reply.Ok();
}

bool ValidClientName(std::string_view name) {
  for (char ch : name) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

void CmdHello(ConnCommand& c) {
  protocol::ArgReader reader(c.args.subspan(1));
  protocol::RespVersion version = c.session.resp;
  if (reader.HasMore()) {
    int64_t v = 0;
    if (!protocol::ParseInt64(reader.Next(), &v)) {
      return c.reply.Error("ERR Protocol version is not an integer or out of range");
    }
    if (v != 2 && v != 3) return c.reply.Error(errors::kUnsupportedProtocol);
    version = v == 3 ? protocol::RespVersion::kResp3 : protocol::RespVersion::kResp2;
  }
  // Each option takes effect as it is read, as in Redis 7.0: a name set before a failed AUTH
  // or a syntax error stays set.
  for (size_t i = 2; i < c.args.size(); ++i) {
    std::string_view opt = c.args[i];
    size_t left = c.args.size() - i - 1;
    if (EqualsIgnoreCase(opt, "AUTH") && left >= 2) {
      if (!Authenticate(c, c.args[i + 1], c.args[i + 2])) return;
      i += 2;
    } else if (EqualsIgnoreCase(opt, "SETNAME") && left >= 1) {
      std::string_view name = c.args[++i];
      if (!ValidClientName(name)) return c.reply.Error(errors::kClientNameSpaces);
      c.server.clients().SetName(*c.session.info, std::string(name));
    } else {
      return c.reply.Error("ERR Syntax error in HELLO option '" + std::string(opt) + "'");
    }
  }
  if (!c.session.authenticated) return c.reply.Error(errors::kHelloNoAuth);
  c.session.resp = version;
  c.session.info->resp.store(static_cast<int>(version));
  c.reply.set_version(version);
  c.reply.MapHeader(7);
  c.reply.Bulk("server");
  c.reply.Bulk("redis");
  c.reply.Bulk("version");
  c.reply.Bulk("7.0.0");
  c.reply.Bulk("proto");
  c.reply.Integer(static_cast<int>(version));
  c.reply.Bulk("id");
  c.reply.Integer(static_cast<int64_t>(c.session.info->id));
  c.reply.Bulk("mode");
  c.reply.Bulk("standalone");
  c.reply.Bulk("role");
  c.reply.Bulk("master");
  c.reply.Bulk("modules");
  c.reply.ArrayHeader(0);
}

void CmdSelect(ConnCommand& c) {
  int index = 0;
  if (auto error = ParseDbIndex(c.args[1], c.server.settings().databases, &index)) return c.reply.Error(*error);
  c.session.db = index;
  c.session.info->db.store(c.session.db);
  c.reply.Ok();
}

// Back to a fresh connection's state: no transaction or watched keys, database 0, RESP2,
// no name, and authenticated only if the default user needs no password (Redis 7.0's
// clearClientConnectionState).
void CmdReset(ConnCommand& c) {
  EndTransaction(c.server, c.session);
  LeaveAllSubscriptions(c.server, c.session);
  c.server.monitors().Remove(*c.session.info);
  c.server.tracking().Disable(*c.session.info);
  c.session.db = 0;
  c.session.info->db.store(0);
  c.session.resp = protocol::RespVersion::kResp2;
  c.session.info->resp.store(2);
  c.server.clients().SetName(*c.session.info, "");
  c.session.user = "default";
  c.server.acl().Attach(*c.session.info, "default");
  c.session.authenticated = !c.server.acl().DefaultNeedsAuth();
  c.reply.set_version(protocol::RespVersion::kResp2);
  c.reply.SimpleString("RESET");
}

// Without cluster support Redis refuses both.
void CmdReadOnlyOrWrite(ConnCommand& c) { c.reply.Error(errors::kClusterDisabled); }

// Redis's client types. lapse has every one but master: it follows no master.
bool KnownClientType(std::string_view type) {
  for (std::string_view known : {"normal", "master", "replica", "slave", "pubsub"}) {
    if (EqualsIgnoreCase(type, known)) return true;
  }
  return false;
}

// CLIENT LIST [TYPE <type> | ID <id> [<id> ...]]
void ClientList(ConnCommand& c, int64_t now) {
  ClientRegistry& clients = c.server.clients();
  if (c.args.size() == 2) return c.reply.Verbatim(clients.Describe(now));
  if (c.args.size() == 4 && EqualsIgnoreCase(c.args[2], "TYPE")) {
    std::string_view type = protocol::AsCString(c.args[3]);
    if (!KnownClientType(type)) return c.reply.Error(errors::UnknownClientType(type));
    using Filter = ClientRegistry::TypeFilter;
    if (EqualsIgnoreCase(type, "normal")) return c.reply.Verbatim(clients.Describe(now, 0, Filter::kNormal));
    if (EqualsIgnoreCase(type, "pubsub")) return c.reply.Verbatim(clients.Describe(now, 0, Filter::kPubSub));
    if (EqualsIgnoreCase(type, "replica") || EqualsIgnoreCase(type, "slave")) {
      return c.reply.Verbatim(clients.Describe(now, 0, Filter::kReplica));
    }
    return c.reply.Verbatim("");  // lapse follows no master
  }
  if (c.args.size() < 4 || !EqualsIgnoreCase(c.args[2], "ID")) return c.reply.Error(errors::kSyntax);
  std::vector<int64_t> ids;
  for (size_t i = 3; i < c.args.size(); ++i) {
    int64_t id = 0;
    if (!protocol::ParseInt64(c.args[i], &id)) return c.reply.Error(errors::kInvalidClientId);
    ids.push_back(id);
  }
  // In the order asked, repeats included; no client has an id below 1.
  std::string out;
  for (int64_t id : ids) {
    if (id > 0) out += clients.Describe(now, static_cast<uint64_t>(id));
  }
  c.reply.Verbatim(out);
}

// CLIENT KILL's filters: a client is killed when it matches every filter given.
struct KillFilter {
  std::optional<std::string_view> addr, laddr;
  std::optional<std::string> user;
  // Redis's client types; a lapse client is never a master.
  enum class Type { kAny, kNormal, kPubSub, kReplica, kNone } type = Type::kAny;
  uint64_t id = 0;         // 0: any
  int64_t min_age_s = 0;   // MAXAGE; 0: any
  bool skip_me = true;

  // Reads the client's user: call holding the registry's lock, or for the caller itself.
  bool Matches(const ClientInfo& client, int64_t now_ms) const {
    if (addr && client.addr != *addr) return false;
    if (user && client.user != *user) return false;
    if (laddr && client.laddr != *laddr) return false;
    if (type == Type::kNone) return false;
    if (type != Type::kAny) {
      ClientInfo::Type want = type == Type::kNormal   ? ClientInfo::Type::kNormal
                              : type == Type::kPubSub ? ClientInfo::Type::kPubSub
                                                      : ClientInfo::Type::kReplica;
      if (client.type() != want) return false;
    }
    if (id != 0 && client.id != id) return false;
    return min_age_s == 0 || (now_ms - client.created_ms) / 1000 >= min_age_s;
  }
};

KillFilter::Type KillType(std::string_view type) {
  if (EqualsIgnoreCase(type, "normal")) return KillFilter::Type::kNormal;
  if (EqualsIgnoreCase(type, "pubsub")) return KillFilter::Type::kPubSub;
  if (EqualsIgnoreCase(type, "replica") || EqualsIgnoreCase(type, "slave")) return KillFilter::Type::kReplica;
  return KillFilter::Type::kNone;
}

// One `<filter> <value>` pair of CLIENT KILL's new form; false, with Redis's error written,
// on a bad one. Values are read as C strings, as Redis compares them.
bool ParseKillFilter(ConnCommand& c, std::string_view name, std::string_view value, KillFilter* filter) {
  std::string_view text = protocol::AsCString(value);
  if (EqualsIgnoreCase(name, "ID")) {
    int64_t id = 0;
    if (!protocol::ParseInt64(value, &id) || id < 1) return c.reply.Error(errors::kClientIdNotPositive), false;
    filter->id = static_cast<uint64_t>(id);
  } else if (EqualsIgnoreCase(name, "TYPE")) {
    if (!KnownClientType(text)) return c.reply.Error(errors::UnknownClientType(text)), false;
    filter->type = KillType(text);
  } else if (EqualsIgnoreCase(name, "ADDR")) {
    filter->addr = text;
  } else if (EqualsIgnoreCase(name, "LADDR")) {
    filter->laddr = text;
  } else if (EqualsIgnoreCase(name, "USER")) {
    if (c.server.acl().Find(text) == nullptr) return c.reply.Error("ERR No such user '" + std::string(text) + "'"), false;
    filter->user = std::string(text);
  } else if (EqualsIgnoreCase(name, "SKIPME")) {
    if (!EqualsIgnoreCase(text, "yes") && !EqualsIgnoreCase(text, "no")) return c.reply.Error(errors::kSyntax), false;
    filter->skip_me = EqualsIgnoreCase(text, "yes");
  } else if (EqualsIgnoreCase(name, "MAXAGE")) {
    // Redis 7.4's filter: clients connected for at least this many seconds.
    int64_t seconds = 0;
    if (!protocol::ParseInt64(value, &seconds) || seconds < 0) {
      return c.reply.Error("ERR maxage is not an integer or out of range"), false;
    }
    filter->min_age_s = seconds;
  } else {
    return c.reply.Error(errors::kSyntax), false;
  }
  return true;
}

// CLIENT KILL <ip:port>, which may kill the caller and answers OK or an error, and
// CLIENT KILL <filter> <value> [...], which spares the caller unless SKIPME no and answers
// how many it killed. The caller, when killed, is closed after its reply.
void ClientKill(ConnCommand& c, int64_t now_ms) {
  KillFilter filter;
  bool old_form = c.args.size() == 3;
  if (old_form) {
    filter.addr = protocol::AsCString(c.args[2]);
    filter.skip_me = false;
  }
  for (size_t i = 2; !old_form && i < c.args.size(); i += 2) {
    if (i + 1 == c.args.size()) return c.reply.Error(errors::kSyntax);
    if (!ParseKillFilter(c, c.args[i], c.args[i + 1], &filter)) return;
  }
  ClientInfo& me = *c.session.info;
  size_t killed = c.server.clients().KillMatching(
      [&](const ClientInfo& client) { return !(filter.skip_me && &client == &me) && filter.Matches(client, now_ms); },
      me.id);
  if (filter.Matches(me, now_ms) && !filter.skip_me) c.session.close_after_reply = true;
  if (!old_form) return c.reply.Integer(static_cast<int64_t>(killed));
  if (killed == 0) return c.reply.Error("ERR No such client");
  c.reply.Ok();
}

// CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: 1 when the client was blocked and is no longer.
void ClientUnblock(ConnCommand& c) {
  if (c.args.size() > 4) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "client"));
  bool with_error = false;
  if (c.args.size() == 4) {
    std::string_view reason = protocol::AsCString(c.args[3]);
    if (EqualsIgnoreCase(reason, "ERROR")) {
      with_error = true;
    } else if (!EqualsIgnoreCase(reason, "TIMEOUT")) {
      return c.reply.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  }
  int64_t id = 0;
  if (!protocol::ParseInt64(c.args[2], &id)) return c.reply.Error(errors::kNotInteger);
  std::shared_ptr<ClientInfo> target = id > 0 ? c.server.clients().Find(static_cast<uint64_t>(id)) : nullptr;
  c.reply.Integer(target && UnblockClient(*target, with_error) ? 1 : 0);
}

// The dispatcher has checked the subcommand and its arity against the table.
// CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2), checked as Redis 7.2 checks it. Redis
// 7.0's CLIENT LIST and INFO, which lapse answers, have no field that shows the values, so they
// are not kept.
void ClientSetInfo(ConnCommand& c) {
  std::string_view attribute = c.args[2], value = c.args[3];
  if (!EqualsIgnoreCase(attribute, "LIB-NAME") && !EqualsIgnoreCase(attribute, "LIB-VER")) {
    return c.reply.Error("ERR Unrecognized option '" + std::string(attribute) + "'");
  }
  for (char ch : value) {
    if (ch < '!' || ch > '~') {
      return c.reply.Error("ERR " + std::string(attribute) + " cannot contain spaces, newlines or special characters.");
    }
  }
  c.reply.Ok();
}

void CmdClient(ConnCommand& c) {
  std::string_view sub = c.args[1];
  ClientRegistry& clients = c.server.clients();
  ClientInfo& me = *c.session.info;
  int64_t now = c.server.clock().NowMs();
  if (EqualsIgnoreCase(sub, "ID")) return c.reply.Integer(static_cast<int64_t>(me.id));
  if (EqualsIgnoreCase(sub, "GETNAME")) {
    std::string name = clients.Name(me);
    return name.empty() ? c.reply.Null() : c.reply.Bulk(name);
  }
  if (EqualsIgnoreCase(sub, "SETNAME")) {
    if (!ValidClientName(c.args[2])) return c.reply.Error(errors::kClientNameSpaces);
    clients.SetName(me, std::string(c.args[2]));
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "SETINFO")) return ClientSetInfo(c);
  if (EqualsIgnoreCase(sub, "LIST")) return ClientList(c, now);
  if (EqualsIgnoreCase(sub, "INFO")) return c.reply.Verbatim(clients.Describe(now, me.id));
  if (EqualsIgnoreCase(sub, "KILL")) return ClientKill(c, now);
  if (EqualsIgnoreCase(sub, "UNBLOCK")) return ClientUnblock(c);
  if (RunTrackingSubcommand(c) || RunClientControlSubcommand(c)) return;
  // Redis 7.0.15's text and order, line for line (MAXAGE, a Redis 7.4 filter, is in the README).
  ReplyHelp(c.reply, {"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "CACHING (YES|NO)",
                      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
                      "GETREDIR",
                      "    Return the client ID we are redirecting to when tracking is enabled.",
                      "GETNAME", "    Return the name of the current connection.",
                      "ID", "    Return the ID of the current connection.",
                      "INFO", "    Return information about the current client connection.",
                      "KILL <ip:port>", "    Kill connection made from <ip:port>.",
                      "KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are:",
                      "    * ADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made from the specified address",
                      "    * LADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made to specified local address",
                      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Kill connections by type.",
                      "    * USER <username>", "      Kill connections authenticated by <username>.",
                      "    * SKIPME (YES|NO)", "      Skip killing current connection (default: yes).",
                      "LIST [options ...]", "    Return information about client connections. Options:",
                      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Return clients of specified type.",
                      "UNPAUSE", "    Stop the current client pause, resuming traffic.",
                      "PAUSE <timeout> [WRITE|ALL]",
                      "    Suspend all, or just write, clients for <timeout> milliseconds.",
                      "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
                      "SETNAME <name>", "    Assign the name <name> to the current connection.",
                      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                      "    Unblock the specified blocked client.",
                      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
                      "         [OPTIN] [OPTOUT] [NOLOOP]",
                      "    Control server assisted client side caching.",
                      "TRACKINGINFO",
                      "    Report tracking status for the current connection.",
                      "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction."});
}

}  // namespace

void RegisterConnectionCommands(CommandTable& table) {
  // name, arity, flags, first key, last key, step, handler, group, summary
  table.Add({"ping", -1, kFast | kConnection, 0, 0, 0, CmdPing, "connection", "Returns the server's liveliness response."});
  table.Add({"echo", 2, kFast | kConnection, 0, 0, 0, CmdEcho, "connection", "Returns the given string."});
  table.Add({"quit", -1, kAllowBusy | kNoAuth | kFast | kConnection | kNotQueued | kNoScript, 0, 0, 0, CmdQuit, "connection", "Closes the connection."});
  table.Add({"post", -1, kNoAuth | kConnection | kNotListed, 0, 0, 0, CmdHttpRequest, "connection", "Closes a connection that sent an HTTP request."});
  table.Add({"host:", -1, kNoAuth | kConnection | kNotListed, 0, 0, 0, CmdHttpRequest, "connection", "Closes a connection that sent an HTTP request."});
  table.Add({"auth", -2, kAllowBusy | kNoAuth | kFast | kConnection | kNoScript, 0, 0, 0, CmdAuth, "connection", "Authenticates the connection."});
  table.Add({"hello", -1, kAllowBusy | kNoAuth | kFast | kConnection | kNoScript, 0, 0, 0, CmdHello, "connection", "Handshakes with the server."});
  table.Add({"select", 2, kFast | kConnection, 0, 0, 0, CmdSelect, "connection", "Changes the selected database."});
  table.Add({"reset", 1, kAllowBusy | kNoAuth | kFast | kConnection | kNotQueued | kNoScript, 0, 0, 0, CmdReset, "connection",
             "Reset the connection"});
  table.Add({"readonly", 1, kFast | kConnection, 0, 0, 0, CmdReadOnlyOrWrite, "cluster",
             "Enables read queries for a connection to a cluster replica node"});
  table.Add({"readwrite", 1, kFast | kConnection, 0, 0, 0, CmdReadOnlyOrWrite, "cluster",
             "Disables read queries for a connection to a cluster replica node"});
  // CLIENT SETINFO is Redis 7.2's; clients that send it on connecting expect an OK.
  table.Add({"client", -2, kNoScript, 0, 0, 0, CmdClient, "connection", "A container for client connection commands."},
            {{"caching", 3}, {"getname", 2}, {"getredir", 2}, {"help", 2}, {"id", 2}, {"info", 2}, {"kill", -3}, {"list", -2},
             {"setinfo", 4}, {"setname", 3}, {"tracking", -3}, {"trackinginfo", 2}, {"unblock", -3},
             {"pause", -3}, {"unpause", 2}, {"reply", 3}, {"no-evict", 3}});
}

}  // namespace lapse::server
