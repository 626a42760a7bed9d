// File: server/aof_effects.cc
//
// What the append-only log keeps of a write that ran: a form that replays to the same state
// whenever it is replayed, as Redis 7.0 propagates it.
//  - A deadline relative to now becomes absolute (SET EX -> SET PXAT, EXPIRE -> PEXPIREAT,
//    SETEX, GETEX, HEXPIRE -> HPEXPIREAT), so a replay never extends a TTL.
//  - A command whose outcome is chosen at random or by the clock is logged as what it did,
//    read from its reply: SPOP as SREM, INCRBYFLOAT as SET ... KEEPTTL, HINCRBYFLOAT as
//    HSET, XADD * with the ID it made, a blocking pop as the plain pop it performed.
//  - Anything else is deterministic given the state it ran on: logged as sent.

#include "protocol/arg_reader.h"
#include "protocol/reply_reader.h"
#include "server/aof.h"

namespace lapse::server {

namespace {

using protocol::EqualsIgnoreCase;

protocol::Reply Decode(std::string_view reply) { return protocol::DecodeReply(reply); }

LoggedCommand Copy(Args args) { return LoggedCommand(args.begin(), args.end()); }

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t n = 0;
  if (!protocol::ParseInt64(s, &n)) return std::nullopt;
  return n;
}

// The absolute deadline in ms of a time given in `unit_ms` units, relative unless `absolute`.
std::string Deadline(std::string_view value, int64_t unit_ms, bool absolute, int64_t now_ms) {
  int64_t n = ParseInt(value).value_or(0);
  return std::to_string(n * unit_ms + (absolute ? 0 : now_ms));
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]: the deadline as PXAT.
LoggedCommand SetForm(Args args, int64_t now_ms) {
  LoggedCommand out{"SET", std::string(args[1]), std::string(args[2])};
  for (size_t i = 3; i < args.size(); ++i) {
    std::string_view opt = args[i];
    bool ex = EqualsIgnoreCase(opt, "EX"), px = EqualsIgnoreCase(opt, "PX");
    bool exat = EqualsIgnoreCase(opt, "EXAT"), pxat = EqualsIgnoreCase(opt, "PXAT");
    if ((ex || px || exat || pxat) && i + 1 < args.size()) {
      out.push_back("PXAT");
      out.push_back(Deadline(args[++i], (ex || exat) ? 1000 : 1, exat || pxat, now_ms));
    } else if (!EqualsIgnoreCase(opt, "GET")) {
      out.emplace_back(opt);
    }
  }
  return out;
}

// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX|XX|GT|LT].
LoggedCommand ExpireForm(Args args, int64_t unit_ms, bool absolute, int64_t now_ms) {
  LoggedCommand out{"PEXPIREAT", std::string(args[1]), Deadline(args[2], unit_ms, absolute, now_ms)};
  for (size_t i = 3; i < args.size(); ++i) out.emplace_back(args[i]);
  return out;
}

// HEXPIRE family: key time [NX|XX|GT|LT] FIELDS n field...
LoggedCommand HExpireForm(Args args, int64_t unit_ms, bool absolute, int64_t now_ms) {
  LoggedCommand out{"HPEXPIREAT", std::string(args[1]), Deadline(args[2], unit_ms, absolute, now_ms)};
  for (size_t i = 3; i < args.size(); ++i) out.emplace_back(args[i]);
  return out;
}

// GETEX key [EX|PX|EXAT|PXAT time|PERSIST]: only the deadline it set, if the key exists.
std::vector<LoggedCommand> GetExForm(Args args, std::string_view reply, int64_t now_ms) {
  if (Decode(reply).type == protocol::ReplyType::kNull || args.size() < 3) return {};
  std::string_view opt = args[2];
  if (EqualsIgnoreCase(opt, "PERSIST")) return {{"PERSIST", std::string(args[1])}};
  bool seconds = EqualsIgnoreCase(opt, "EX") || EqualsIgnoreCase(opt, "EXAT");
  bool absolute = EqualsIgnoreCase(opt, "EXAT") || EqualsIgnoreCase(opt, "PXAT");
  return {{"PEXPIREAT", std::string(args[1]), Deadline(args[3], seconds ? 1000 : 1, absolute, now_ms)}};
}

// SPOP key [count]: the members it popped.
std::vector<LoggedCommand> SpopForm(Args args, std::string_view reply) {
  protocol::Reply r = Decode(reply);
  LoggedCommand out{"SREM", std::string(args[1])};
  if (r.type == protocol::ReplyType::kBulk) out.push_back(r.text);
  for (const protocol::Reply& e : r.elements) out.push_back(e.text);
  if (out.size() == 2) return {};
  return {out};
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] id|* field value ...:
// the ID it made in place of * (or of ms-*).
LoggedCommand XaddForm(Args args, std::string_view reply) {
  LoggedCommand out = Copy(args);
  size_t i = 2;
  while (i < args.size()) {
    if (EqualsIgnoreCase(args[i], "NOMKSTREAM")) {
      ++i;
    } else if (EqualsIgnoreCase(args[i], "MAXLEN") || EqualsIgnoreCase(args[i], "MINID")) {
      i += (i + 1 < args.size() && (args[i + 1] == "=" || args[i + 1] == "~")) ? 3 : 2;
    } else if (EqualsIgnoreCase(args[i], "LIMIT")) {
      i += 2;
    } else {
      break;
    }
  }
  protocol::Reply r = Decode(reply);
  if (i < out.size() && r.type == protocol::ReplyType::kBulk) out[i] = r.text;
  return out;
}

// XREADGROUP ... BLOCK ms ...: the read it made, without the wait (a replay never waits).
LoggedCommand WithoutBlock(Args args) {
  LoggedCommand out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "BLOCK") && i + 1 < args.size()) {
      ++i;
      continue;
    }
    out.emplace_back(args[i]);
  }
  return out;
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] ...: a relative TTL becomes an absolute one, so
// that a replay never extends it.
LoggedCommand RestoreForm(Args args, int64_t now_ms) {
  LoggedCommand out = Copy(args);
  bool absolute = false;
  for (size_t i = 4; i < args.size(); ++i) absolute |= EqualsIgnoreCase(args[i], "ABSTTL");
  if (absolute || args[2] == "0") return out;
  out[2] = Deadline(args[2], 1, false, now_ms);
  out.emplace_back("ABSTTL");
  return out;
}

}  // namespace

std::vector<LoggedCommand> LoggedForm(const CommandSpec& spec, Args args, std::string_view reply, int64_t now_ms) {
  const std::string& name = spec.name;
  if (name == "set") return {SetForm(args, now_ms)};
  if (name == "setex" || name == "psetex") {
    int64_t unit = name == "setex" ? 1000 : 1;
    return {{"SET", std::string(args[1]), std::string(args[3]), "PXAT", Deadline(args[2], unit, false, now_ms)}};
  }
  if (name == "expire") return {ExpireForm(args, 1000, false, now_ms)};
  if (name == "pexpire") return {ExpireForm(args, 1, false, now_ms)};
  if (name == "expireat") return {ExpireForm(args, 1000, true, now_ms)};
  if (name == "hexpire") return {HExpireForm(args, 1000, false, now_ms)};
  if (name == "hpexpire") return {HExpireForm(args, 1, false, now_ms)};
  if (name == "hexpireat") return {HExpireForm(args, 1000, true, now_ms)};
  if (name == "getex") return GetExForm(args, reply, now_ms);
  if (name == "restore" || name == "restore-asking") return {RestoreForm(args, now_ms)};
  if (name == "spop") return SpopForm(args, reply);
  if (name == "incrbyfloat") return {{"SET", std::string(args[1]), Decode(reply).text, "KEEPTTL"}};
  if (name == "hincrbyfloat") return {{"HSET", std::string(args[1]), std::string(args[2]), Decode(reply).text}};
  if (name == "xadd") {
    if (Decode(reply).type == protocol::ReplyType::kNull) return {};  // NOMKSTREAM on no stream
    return {XaddForm(args, reply)};
  }
  if (name == "xreadgroup") return {WithoutBlock(args)};
  if (name == "migrate") return {};  // its handler logs the DEL of the keys it moved
  if (name == "iput") {
    // Logged unconditionally, with the _ts and _etag it was given: a replay keeps both.
    protocol::Reply r = Decode(reply);
    if (r.type != protocol::ReplyType::kBulk) return {};
    return {{"IPUT", std::string(args[1]), std::string(args[2]), std::string(args[3]), "REPLAYED",
             std::to_string(now_ms), r.text}};
  }
  return {Copy(args)};
}

std::vector<LoggedCommand> LoggedFormOfServedPop(const std::vector<std::string>& command, std::string_view reply) {
  protocol::Reply r = Decode(reply);
  if (command.empty()) return {};
  std::string name = protocol::AsciiLower(command[0]);
  if (r.type == protocol::ReplyType::kBulk && name == "blmove" && command.size() == 6) {
    return {{"LMOVE", command[1], command[2], command[3], command[4]}};
  }
  if (r.type == protocol::ReplyType::kBulk && name == "brpoplpush" && command.size() == 4) {
    return {{"RPOPLPUSH", command[1], command[2]}};
  }
  if (r.elements.size() < 2) return {};
  const std::string& key = r.elements[0].text;
  if (name == "blpop") return {{"LPOP", key}};
  if (name == "brpop") return {{"RPOP", key}};
  if (name == "bzpopmin" || name == "bzpopmax") return {{"ZREM", key, r.elements[1].text}};
  if (name == "blmpop" || name == "bzmpop") {
    // [key, [element, ...]] for lists, [key, [[member, score], ...]] for sorted sets.
    LoggedCommand out;
    if (name == "bzmpop") {
      out = {"ZREM", key};
      for (const protocol::Reply& pair : r.elements[1].elements) {
        out.push_back(pair.elements.empty() ? pair.text : pair.elements[0].text);
      }
      // RESP3 answers a map: member, score, member, score ...
      if (!r.elements[1].elements.empty() && r.elements[1].elements[0].elements.empty()) {
        out = {"ZREM", key};
        for (size_t i = 0; i < r.elements[1].elements.size(); i += 2) out.push_back(r.elements[1].elements[i].text);
      }
      return {out};
    }
    // BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT n]
    size_t where = 3 + static_cast<size_t>(ParseInt(command[2]).value_or(0));
    bool left = where < command.size() && EqualsIgnoreCase(command[where], "LEFT");
    return {{left ? "LPOP" : "RPOP", key, std::to_string(r.elements[1].elements.size())}};
  }
  return {};
}

}  // namespace lapse::server
