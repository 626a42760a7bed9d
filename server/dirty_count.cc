#include "server/dirty_count.h"

#include <string>
#include <unordered_map>

#include "protocol/arg_reader.h"
#include "protocol/reply_reader.h"

namespace lapse::server {

namespace {

using protocol::EqualsIgnoreCase;

// How a command's count is read.
enum class Rule {
  kOne,           // one change unless it replied nil (LPOP of a missing key, SET NX refused)
  kAlwaysOne,     // one change, nil reply or not (GETSET of a missing key replies nil and sets it)
  kReplyCount,    // the integer reply is the count (DEL, SADD, SREM, EXPIRE, SETNX, ...)
  kReplyNonZero,  // one change when the integer reply is positive (LINSERT)
  kKeyValuePairs,    // one per key-value pair after the name (MSET)
  kFieldValuePairs,  // one per field-value pair after the key (HSET, HMSET)
  kMsetnx,        // every pair when it set them (reply 1), else none
  kPushed,        // one per element pushed, when it pushed (LPUSHX on a missing key: none)
  kPopped,        // one per element popped (LPOP, SPOP, ZPOPMIN, with or without a count)
  kMultiPopped,   // LMPOP / ZMPOP: one per element in the reply's second part
  kSet,           // SET: whether NX / XX let it set (SetChanged)
  kRename,        // none for a key renamed to itself
  kSetRange,      // none for an empty value (Redis changes nothing then)
  // The handler counts them: its reply does not tell (ZADD without CH counts updated
  // scores, LTRIM the elements removed, PFADD the registers raised; ShardCommand::changes),
  // or it counts them itself (FLUSHDB, FLUSHALL: the keys removed).
  kByHandler,
};

const std::unordered_map<std::string_view, Rule>& Rules() {
  static const std::unordered_map<std::string_view, Rule> rules = {
      {"del", Rule::kReplyCount},          {"unlink", Rule::kReplyCount},
      {"expire", Rule::kReplyCount},       {"pexpire", Rule::kReplyCount},
      {"expireat", Rule::kReplyCount},     {"pexpireat", Rule::kReplyCount},
      {"persist", Rule::kReplyCount},      {"renamenx", Rule::kReplyCount},
      {"rename", Rule::kRename},
      {"move", Rule::kReplyCount},         {"copy", Rule::kReplyCount},
      {"setnx", Rule::kReplyCount},        {"hsetnx", Rule::kReplyCount},
      {"sadd", Rule::kReplyCount},         {"srem", Rule::kReplyCount},
      {"hdel", Rule::kReplyCount},         {"lrem", Rule::kReplyCount},
      {"zrem", Rule::kReplyCount},         {"zremrangebyscore", Rule::kReplyCount},
      {"zremrangebyrank", Rule::kReplyCount}, {"zremrangebylex", Rule::kReplyCount},
      {"xdel", Rule::kReplyCount},         {"xtrim", Rule::kReplyCount},
      {"geoadd", Rule::kByHandler},        {"pfadd", Rule::kByHandler},
      {"linsert", Rule::kReplyNonZero},
      {"sinterstore", Rule::kByHandler},   {"sunionstore", Rule::kByHandler},
      {"sdiffstore", Rule::kByHandler},    {"zunionstore", Rule::kByHandler},
      {"zinterstore", Rule::kByHandler},   {"zdiffstore", Rule::kByHandler},
      {"zrangestore", Rule::kByHandler},   {"bitop", Rule::kByHandler},
      {"georadius", Rule::kByHandler},     {"georadiusbymember", Rule::kByHandler},
      {"geosearchstore", Rule::kByHandler},
      {"xclaim", Rule::kByHandler},        {"xautoclaim", Rule::kByHandler},
      {"xgroup", Rule::kByHandler},        {"xack", Rule::kReplyCount},
      {"xreadgroup", Rule::kByHandler},    {"migrate", Rule::kByHandler},
      {"flushdb", Rule::kByHandler},       {"flushall", Rule::kByHandler},
      {"mset", Rule::kKeyValuePairs},      {"hset", Rule::kFieldValuePairs},
      {"hmset", Rule::kFieldValuePairs},   {"msetnx", Rule::kMsetnx},
      {"lpush", Rule::kPushed},            {"rpush", Rule::kPushed},
      {"lpushx", Rule::kPushed},           {"rpushx", Rule::kPushed},
      {"lpop", Rule::kPopped},             {"rpop", Rule::kPopped},
      {"spop", Rule::kPopped},             {"zpopmin", Rule::kPopped},
      {"zpopmax", Rule::kPopped},          {"lmpop", Rule::kMultiPopped},
      {"zmpop", Rule::kMultiPopped},       {"blmpop", Rule::kMultiPopped},
      {"bzmpop", Rule::kMultiPopped},      {"set", Rule::kSet},
      {"setrange", Rule::kSetRange},       {"setbit", Rule::kByHandler},
      {"getex", Rule::kByHandler},         {"sort", Rule::kByHandler},
      {"zadd", Rule::kByHandler},          {"smove", Rule::kByHandler},
      {"zincrby", Rule::kByHandler},       {"ltrim", Rule::kByHandler},
      {"bitfield", Rule::kByHandler},      {"getset", Rule::kAlwaysOne},
      {"hexpire", Rule::kByHandler},       {"hpexpire", Rule::kByHandler},
      {"hexpireat", Rule::kByHandler},     {"hpexpireat", Rule::kByHandler},
      {"hpersist", Rule::kByHandler},
  };
  return rules;
}

bool IsNil(std::string_view reply) {
  return reply.starts_with("$-1\r") || reply.starts_with("*-1\r") || reply.starts_with("_\r");
}

// The integer of a `:n` reply; 0 for any other reply.
int64_t IntegerReply(std::string_view reply) {
  if (!reply.starts_with(':')) return 0;
  size_t end = reply.find('\r');
  int64_t n = 0;
  return protocol::ParseInt64(reply.substr(1, end - 1), &n) ? n : 0;
}

uint64_t Count(int64_t n) { return n > 0 ? static_cast<uint64_t>(n) : 0; }

bool HasOption(Args args, size_t from, std::string_view option) {
  for (size_t i = from; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], option)) return true;
  }
  return false;
}

// A pop's reply: nil, one element, or an array of them. ZPOPMIN's is flat member-score pairs
// (RESP2, and RESP3 without a count) or one pair per element (RESP3 with a count).
uint64_t Popped(std::string_view name, std::string_view reply) {
  if (IsNil(reply)) return 0;
  if (!reply.starts_with('*')) return 1;
  protocol::Reply decoded = protocol::DecodeReply(reply);
  bool pairs = name.starts_with("zpop");
  bool nested = !decoded.elements.empty() && decoded.elements[0].type == protocol::ReplyType::kArray;
  return pairs && !nested ? decoded.elements.size() / 2 : decoded.elements.size();
}

uint64_t MultiPopped(std::string_view reply) {
  if (IsNil(reply)) return 0;
  protocol::Reply decoded = protocol::DecodeReply(reply);
  return decoded.elements.size() == 2 ? decoded.elements[1].elements.size() : 0;
}

// Without GET a refused SET replies nil. With GET the reply is the old value: NX set only a
// missing key (nil), XX only an existing one.
bool SetChanged(Args args, std::string_view reply) {
  bool nil = IsNil(reply);
  if (!HasOption(args, 3, "GET")) return !nil;
  if (HasOption(args, 3, "NX")) return nil;
  if (HasOption(args, 3, "XX")) return !nil;
  return true;
}

uint64_t ByRule(Rule rule, std::string_view name, Args args, std::string_view reply) {
  switch (rule) {
    case Rule::kOne:
      return IsNil(reply) ? 0 : 1;
    case Rule::kAlwaysOne:
      return 1;
    case Rule::kReplyCount:
      return Count(IntegerReply(reply));
    case Rule::kReplyNonZero:
      return IntegerReply(reply) > 0 ? 1 : 0;
    case Rule::kKeyValuePairs:
      return (args.size() - 1) / 2;
    case Rule::kFieldValuePairs:
      return (args.size() - 2) / 2;
    case Rule::kMsetnx:
      return IntegerReply(reply) == 1 ? (args.size() - 1) / 2 : 0;
    case Rule::kPushed:
      return IntegerReply(reply) > 0 ? args.size() - 2 : 0;
    case Rule::kPopped:
      return Popped(name, reply);
    case Rule::kMultiPopped:
      return MultiPopped(reply);
    case Rule::kSet:
      return SetChanged(args, reply) ? 1 : 0;
    case Rule::kRename:
      return args.size() > 2 && args[1] == args[2] ? 0 : 1;
    case Rule::kSetRange:
      return args.size() > 3 && args[3].empty() ? 0 : 1;
    case Rule::kByHandler:
      return 0;
  }
  return 1;
}

}  // namespace

uint64_t DirtyChanges(std::string_view name, Args args, std::string_view reply) {
  auto it = Rules().find(name);
  return ByRule(it == Rules().end() ? Rule::kOne : it->second, name, args, reply);
}

}  // namespace lapse::server
