// File: server/pubsub_commands.cc
//
// The Pub/Sub family: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH,
// SPUBLISH and PUBSUB, as Redis 7.0 answers them. Every subscription change is confirmed by
// its own push (a RESP2 array, a RESP3 push), one per channel, each with the client's
// subscription count after it. Channels and patterns count together; shard channels count
// apart, as in Redis.
//
// The session keeps what the client has subscribed to; the server's registry
// (server/pubsub.h) keeps the reverse map that PUBLISH reads.
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

struct KindNames {
  const char* subscribe;
  const char* unsubscribe;
};

KindNames NamesOf(SubscriptionKind kind) {
  switch (kind) {
    case SubscriptionKind::kChannel:
      return {"subscribe", "unsubscribe"};
    case SubscriptionKind::kPattern:
      return {"psubscribe", "punsubscribe"};
    case SubscriptionKind::kShardChannel:
      break;
  }
  return {"ssubscribe", "sunsubscribe"};
}

// What a confirmation reports: channels and patterns count together, shard channels apart.
size_t CountFor(const Subscriptions& subs, SubscriptionKind kind) {
  return kind == SubscriptionKind::kShardChannel ? subs.shard_channels.size()
                                                 : subs.channels.size() + subs.patterns.size();
}

void Confirm(protocol::ReplyWriter& reply, const char* what, const std::string* name, size_t count) {
  reply.PushHeader(3);
  reply.Bulk(what);
  if (name) {
    reply.Bulk(*name);
  } else {
    reply.Null();
  }
  reply.Integer(static_cast<int64_t>(count));
}

void SubscribeAll(ConnCommand& c, SubscriptionKind kind) {
  Subscriptions& subs = c.session.subscriptions;
  for (size_t i = 1; i < c.args.size(); ++i) {
    std::string name(c.args[i]);
    if (subs.Of(kind).insert(name).second) {
      if (kind == SubscriptionKind::kPattern) subs.pattern_order.push_back(name);
      c.server.pubsub().Subscribe(*c.session.info, kind, name);
    }
    Confirm(c.reply, NamesOf(kind).subscribe, &name, CountFor(subs, kind));
  }
}

// Drops one subscription the client has; false when it had none by that name.
bool Drop(Server& server, ClientSession& session, SubscriptionKind kind, const std::string& name) {
  if (session.subscriptions.Of(kind).erase(name) == 0) return false;
  if (kind == SubscriptionKind::kPattern) std::erase(session.subscriptions.pattern_order, name);
  server.pubsub().Unsubscribe(*session.info, kind, name);
  return true;
}

void UnsubscribeFrom(ConnCommand& c, SubscriptionKind kind) {
  Subscriptions& subs = c.session.subscriptions;
  const char* what = NamesOf(kind).unsubscribe;
  if (c.args.size() > 1) {
    for (size_t i = 1; i < c.args.size(); ++i) {
      std::string name(c.args[i]);
      Drop(c.server, c.session, kind, name);
      Confirm(c.reply, what, &name, CountFor(subs, kind));
    }
    return;
  }
  // Without names: every subscription of the kind, and still one confirmation when none.
  std::vector<std::string> names = kind == SubscriptionKind::kPattern
                                       ? subs.pattern_order
                                       : std::vector<std::string>(subs.Of(kind).begin(), subs.Of(kind).end());
  for (const std::string& name : names) {
    Drop(c.server, c.session, kind, name);
    Confirm(c.reply, what, &name, CountFor(subs, kind));
  }
  if (names.empty()) Confirm(c.reply, what, nullptr, CountFor(subs, kind));
}

// Redis refuses a subscription inside a transaction's EXEC only for shard channels; the
// others stay allowed there for backward compatibility.
bool InsideExec() { return ShardSet::CurrentStep() != nullptr; }

void CmdSubscribe(ConnCommand& c) { SubscribeAll(c, SubscriptionKind::kChannel); }
void CmdPsubscribe(ConnCommand& c) { SubscribeAll(c, SubscriptionKind::kPattern); }
void CmdSsubscribe(ConnCommand& c) {
  if (InsideExec()) return c.reply.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
  SubscribeAll(c, SubscriptionKind::kShardChannel);
}
void CmdUnsubscribe(ConnCommand& c) { UnsubscribeFrom(c, SubscriptionKind::kChannel); }
void CmdPunsubscribe(ConnCommand& c) { UnsubscribeFrom(c, SubscriptionKind::kPattern); }
void CmdSunsubscribe(ConnCommand& c) { UnsubscribeFrom(c, SubscriptionKind::kShardChannel); }

void CmdPublish(ConnCommand& c) {
  c.reply.Integer(static_cast<int64_t>(c.server.pubsub().Publish(c.args[1], c.args[2], false)));
}
void CmdSpublish(ConnCommand& c) {
  c.reply.Integer(static_cast<int64_t>(c.server.pubsub().Publish(c.args[1], c.args[2], true)));
}

void ReplyChannels(ConnCommand& c, bool sharded) {
  // Redis checks this count itself, after the subcommand's arity.
  if (c.args.size() > 3) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "PUBSUB"));
  std::string pattern = c.args.size() == 3 ? std::string(c.args[2]) : std::string();
  std::vector<std::string> channels = c.server.pubsub().Channels(sharded, c.args.size() == 3 ? &pattern : nullptr);
  c.reply.ArrayHeader(channels.size());
  for (const std::string& name : channels) c.reply.Bulk(name);
}

void ReplyNumSub(ConnCommand& c, bool sharded) {
  c.reply.ArrayHeader((c.args.size() - 2) * 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    c.reply.Bulk(c.args[i]);
    c.reply.Integer(static_cast<int64_t>(c.server.pubsub().SubscriberCount(sharded, c.args[i])));
  }
}

void CmdPubsub(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "CHANNELS")) return ReplyChannels(c, false);
  if (EqualsIgnoreCase(sub, "SHARDCHANNELS")) return ReplyChannels(c, true);
  if (EqualsIgnoreCase(sub, "NUMSUB")) return ReplyNumSub(c, false);
  if (EqualsIgnoreCase(sub, "SHARDNUMSUB")) return ReplyNumSub(c, true);
  if (EqualsIgnoreCase(sub, "NUMPAT")) return c.reply.Integer(static_cast<int64_t>(c.server.pubsub().PatternCount()));
  ReplyHelp(c.reply, {"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "CHANNELS [<pattern>]",
                      "    Return the currently active channels matching a <pattern> (default: '*').",
                      "NUMPAT",
                      "    Return number of subscriptions to patterns.",
                      "NUMSUB [<channel> ...]",
                      "    Return the number of subscribers for the specified channels, excluding",
                      "    pattern subscriptions(default: no channels).",
                      "SHARDCHANNELS [<pattern>]",
                      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                      "SHARDNUMSUB [<shardchannel> ...]",
                      "    Return the number of subscribers for the specified shard level channel(s)"});
}

}  // namespace

void LeaveAllSubscriptions(Server& server, ClientSession& session) {
  for (SubscriptionKind kind : {SubscriptionKind::kChannel, SubscriptionKind::kPattern, SubscriptionKind::kShardChannel}) {
    for (const std::string& name : session.subscriptions.Of(kind)) server.pubsub().Unsubscribe(*session.info, kind, name);
    session.subscriptions.Of(kind).clear();
  }
  session.subscriptions.pattern_order.clear();
}

void RegisterPubSubCommands(CommandTable& table) {
  constexpr uint32_t kP = kPubSub, kNS = kNoScript, kF = kFast;
  table.Add({"subscribe", -2, kP | kNS, 0, 0, 0, CmdSubscribe, "pubsub",
             "Listens for messages published to channels."});
  table.Add({"unsubscribe", -1, kP | kNS, 0, 0, 0, CmdUnsubscribe, "pubsub",
             "Stops listening to messages posted to channels."});
  table.Add({"psubscribe", -2, kP | kNS, 0, 0, 0, CmdPsubscribe, "pubsub",
             "Listens for messages published to channels that match one or more patterns."});
  table.Add({"punsubscribe", -1, kP | kNS, 0, 0, 0, CmdPunsubscribe, "pubsub",
             "Stops listening to messages published to channels that match one or more patterns."});
  table.Add({"ssubscribe", -2, kP | kNS, 1, -1, 1, CmdSsubscribe, "pubsub",
             "Listens for messages published to shard channels."});
  table.Add({"sunsubscribe", -1, kP | kNS, 1, -1, 1, CmdSunsubscribe, "pubsub",
             "Stops listening to messages posted to shard channels."});
  table.Add({"publish", 3, kP | kF, 0, 0, 0, CmdPublish, "pubsub", "Posts a message to a channel."});
  table.Add({"spublish", 3, kP | kF, 1, 1, 1, CmdSpublish, "pubsub", "Post a message to a shard channel"});
  table.Add({"pubsub", -2, kP, 0, 0, 0, CmdPubsub, "pubsub", "A container for Pub/Sub commands."},
            {{"channels", -2}, {"numpat", 2}, {"numsub", -2}, {"shardchannels", -2}, {"shardnumsub", -2}, {"help", 2}});
}

}  // namespace lapse::server
