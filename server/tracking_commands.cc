// CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and CLIENT TRACKINGINFO: the commands of
// client-side caching (server/tracking.h), with Redis 7.0's replies and errors, checked in
// its order. The dispatcher has already checked each one's arity.
#include <string>
#include <vector>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/server.h"
#include "server/tracking.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

struct TrackingRequest {
  uint64_t redirect = 0;
  uint32_t options = 0;
  std::vector<std::string> prefixes;
};

// Reads the options after ON|OFF; on a bad one writes Redis's error and returns false. Like
// Redis it reads them all, and checks the redirect target, before looking at ON|OFF.
bool ParseTrackingOptions(ConnCommand& c, TrackingRequest& req) {
  for (size_t i = 3; i < c.args.size(); ++i) {
    std::string_view opt = c.args[i];
    bool has_value = i + 1 < c.args.size();
    if (EqualsIgnoreCase(opt, "REDIRECT") && has_value) {
      if (req.redirect != 0) {
        c.reply.Error("ERR A client can only redirect to a single other client");
        return false;
      }
      int64_t id = 0;
      if (!protocol::ParseInt64(c.args[++i], &id)) {
        c.reply.Error(errors::kNotInteger);
        return false;
      }
      // The target must exist now, though it may go later (then the redirect is "broken").
      if (id <= 0 || c.server.clients().Find(static_cast<uint64_t>(id)) == nullptr) {
        c.reply.Error("ERR The client ID you want redirect to does not exist");
        return false;
      }
      req.redirect = static_cast<uint64_t>(id);
    } else if (EqualsIgnoreCase(opt, "BCAST")) {
      req.options |= kTrackingBcast;
    } else if (EqualsIgnoreCase(opt, "OPTIN")) {
      req.options |= kTrackingOptin;
    } else if (EqualsIgnoreCase(opt, "OPTOUT")) {
      req.options |= kTrackingOptout;
    } else if (EqualsIgnoreCase(opt, "NOLOOP")) {
      req.options |= kTrackingNoloop;
    } else if (EqualsIgnoreCase(opt, "PREFIX") && has_value) {
      req.prefixes.emplace_back(c.args[++i]);
    } else {
      c.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP]
void ClientTracking(ConnCommand& c) {
  TrackingRequest req;
  if (!ParseTrackingOptions(c, req)) return;
  Tracking& tracking = c.server.tracking();
  ClientInfo& me = *c.session.info;
  if (EqualsIgnoreCase(c.args[2], "ON")) {
    if (auto refusal = tracking.CheckOptions(me, req.options, req.prefixes)) return c.reply.Error(*refusal);
    tracking.Enable(me, req.redirect, req.options, req.prefixes);
  } else if (EqualsIgnoreCase(c.args[2], "OFF")) {
    // Redis ignores the options here once they parse.
    tracking.Disable(me);
  } else {
    return c.reply.Error(errors::kSyntax);
  }
  c.reply.Ok();
}

// CLIENT CACHING YES|NO: whether the next command's reads are tracked (OPTIN / OPTOUT).
void ClientCaching(ConnCommand& c) {
  ClientInfo& me = *c.session.info;
  uint32_t flags = me.tracking.load(std::memory_order_relaxed);
  if (!(flags & kTrackingOn)) {
    return c.reply.Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode "
        "enabled");
  }
  std::string_view answer = c.args[2];
  if (EqualsIgnoreCase(answer, "YES")) {
    if (!(flags & kTrackingOptin)) {
      return c.reply.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    }
  } else if (EqualsIgnoreCase(answer, "NO")) {
    if (!(flags & kTrackingOptout)) {
      return c.reply.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    }
  } else {
    return c.reply.Error(errors::kSyntax);
  }
  me.tracking.fetch_or(kTrackingCaching, std::memory_order_relaxed);
  c.reply.Ok();
}

int64_t RedirectOf(const ClientInfo& me) {
  if (!(me.tracking.load(std::memory_order_relaxed) & kTrackingOn)) return -1;
  return static_cast<int64_t>(me.tracking_redirect.load(std::memory_order_relaxed));
}

void ClientGetRedir(ConnCommand& c) { c.reply.Integer(RedirectOf(*c.session.info)); }

// A map of flags (a set, in Redis's order), redirect and prefixes (in byte order).
void ClientTrackingInfo(ConnCommand& c) {
  const ClientInfo& me = *c.session.info;
  uint32_t flags = me.tracking.load(std::memory_order_relaxed);
  std::vector<std::string_view> names{flags & kTrackingOn ? "on" : "off"};
  if (flags & kTrackingBcast) names.push_back("bcast");
  if (flags & kTrackingOptin) {
    names.push_back("optin");
    if (flags & kTrackingCaching) names.push_back("caching-yes");
  }
  if (flags & kTrackingOptout) {
    names.push_back("optout");
    if (flags & kTrackingCaching) names.push_back("caching-no");
  }
  if (flags & kTrackingNoloop) names.push_back("noloop");
  if (flags & kTrackingBrokenRedirect) names.push_back("broken_redirect");
  c.reply.MapHeader(3);
  c.reply.Bulk("flags");
  c.reply.SetHeader(names.size());
  for (std::string_view name : names) c.reply.Bulk(name);
  c.reply.Bulk("redirect");
  c.reply.Integer(RedirectOf(me));
  c.reply.Bulk("prefixes");
  std::vector<std::string> prefixes = c.server.tracking().Prefixes(me);
  c.reply.ArrayHeader(prefixes.size());
  for (const std::string& prefix : prefixes) c.reply.Bulk(prefix);
}

}  // namespace

bool RunTrackingSubcommand(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "TRACKING")) return ClientTracking(c), true;
  if (EqualsIgnoreCase(sub, "CACHING")) return ClientCaching(c), true;
  if (EqualsIgnoreCase(sub, "GETREDIR")) return ClientGetRedir(c), true;
  if (EqualsIgnoreCase(sub, "TRACKINGINFO")) return ClientTrackingInfo(c), true;
  return false;
}

}  // namespace lapse::server
