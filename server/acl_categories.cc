// ACL categories of commands (server/acl.h). Redis derives @read, @write, @admin,
// @dangerous, @fast and @slow from a command's flags and declares the rest; lapse takes
// those from the command's group. A subcommand's categories cannot be told from its
// container's flags (ACL WHOAMI is @slow, ACL SETUSER @admin @slow @dangerous), so they are
// Redis 7.0's, listed here for every subcommand both have.
#include <string_view>
#include <unordered_map>

#include "server/acl.h"

namespace lapse::server {

namespace {

uint32_t CategoriesFromFlags(uint32_t f, const std::string& group) {
  uint32_t out = 0;
  if ((f & (kReadOnly | kWrite)) && (group == "generic" || group == "server")) out |= kCatKeyspace;
  if (f & kReadOnly) out |= kCatRead;
  if (f & kWrite) out |= kCatWrite;
  if (group == "string") out |= kCatString;
  if (group == "bitmap") out |= kCatBitmap;
  if (group == "hyperloglog") out |= kCatHyperLogLog;
  if (group == "geo") out |= kCatGeo;
  if (group == "hash") out |= kCatHash;
  if (group == "list") out |= kCatList;
  if (group == "set") out |= kCatSet;
  if (group == "sorted-set") out |= kCatSortedSet;
  if (f & kPubSub) out |= kCatPubSub;
  if (f & kAdmin) out |= kCatAdmin;
  out |= (f & kFast) ? kCatFast : kCatSlow;
  if (f & kBlocking) out |= kCatBlocking;
  if (f & (kAdmin | kDangerous)) out |= kCatDangerous;
  if (f & kConnection) out |= kCatConnection;
  if (group == "transactions") out |= kCatTransaction;
  if (group == "scripting") out |= kCatScripting;
  if (group == "container") out |= kCatContainer;
  return out;
}

const std::unordered_map<std::string_view, uint32_t>& RedisSubcommandCategories() {
  static const std::unordered_map<std::string_view, uint32_t> kTable = {
      {"acl|cat", kCatSlow},
      {"acl|deluser", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|dryrun", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|genpass", kCatSlow},
      {"acl|getuser", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|help", kCatSlow},
      {"acl|list", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|load", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|log", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|save", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|setuser", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|users", kCatAdmin | kCatSlow | kCatDangerous},
      {"acl|whoami", kCatSlow},
      {"client|caching", kCatSlow | kCatConnection},
      {"client|getname", kCatSlow | kCatConnection},
      {"client|getredir", kCatSlow | kCatConnection},
      {"client|help", kCatSlow | kCatConnection},
      {"client|id", kCatSlow | kCatConnection},
      {"client|info", kCatSlow | kCatConnection},
      {"client|kill", kCatAdmin | kCatSlow | kCatDangerous | kCatConnection},
      {"client|list", kCatAdmin | kCatSlow | kCatDangerous | kCatConnection},
      {"client|no-evict", kCatAdmin | kCatSlow | kCatDangerous | kCatConnection},
      {"client|pause", kCatAdmin | kCatSlow | kCatDangerous | kCatConnection},
      {"client|reply", kCatSlow | kCatConnection},
      {"client|setname", kCatSlow | kCatConnection},
      {"client|tracking", kCatSlow | kCatConnection},
      {"client|trackinginfo", kCatSlow | kCatConnection},
      {"client|unblock", kCatAdmin | kCatSlow | kCatDangerous | kCatConnection},
      {"client|unpause", kCatAdmin | kCatSlow | kCatDangerous | kCatConnection},
      {"cluster|addslots", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|addslotsrange", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|bumpepoch", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|count-failure-reports", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|countkeysinslot", kCatSlow},
      {"cluster|delslots", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|delslotsrange", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|failover", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|flushslots", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|forget", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|getkeysinslot", kCatSlow},
      {"cluster|help", kCatSlow},
      {"cluster|info", kCatSlow},
      {"cluster|keyslot", kCatSlow},
      {"cluster|links", kCatSlow},
      {"cluster|meet", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|myid", kCatSlow},
      {"cluster|nodes", kCatSlow},
      {"cluster|replicas", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|replicate", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|reset", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|saveconfig", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|set-config-epoch", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|setslot", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|shards", kCatSlow},
      {"cluster|slaves", kCatAdmin | kCatSlow | kCatDangerous},
      {"cluster|slots", kCatSlow},
      {"command|count", kCatSlow | kCatConnection},
      {"command|docs", kCatSlow | kCatConnection},
      {"command|getkeys", kCatSlow | kCatConnection},
      {"command|getkeysandflags", kCatSlow | kCatConnection},
      {"command|help", kCatSlow | kCatConnection},
      {"command|info", kCatSlow | kCatConnection},
      {"command|list", kCatSlow | kCatConnection},
      {"config|get", kCatAdmin | kCatSlow | kCatDangerous},
      {"config|help", kCatSlow},
      {"config|resetstat", kCatAdmin | kCatSlow | kCatDangerous},
      {"config|rewrite", kCatAdmin | kCatSlow | kCatDangerous},
      {"config|set", kCatAdmin | kCatSlow | kCatDangerous},
      {"function|delete", kCatWrite | kCatSlow | kCatScripting},
      {"function|dump", kCatSlow | kCatScripting},
      {"function|flush", kCatWrite | kCatSlow | kCatScripting},
      {"function|help", kCatSlow | kCatScripting},
      {"function|kill", kCatSlow | kCatScripting},
      {"function|list", kCatSlow | kCatScripting},
      {"function|load", kCatWrite | kCatSlow | kCatScripting},
      {"function|restore", kCatWrite | kCatSlow | kCatScripting},
      {"function|stats", kCatSlow | kCatScripting},
      {"latency|doctor", kCatAdmin | kCatSlow | kCatDangerous},
      {"latency|graph", kCatAdmin | kCatSlow | kCatDangerous},
      {"latency|help", kCatSlow},
      {"latency|histogram", kCatAdmin | kCatSlow | kCatDangerous},
      {"latency|history", kCatAdmin | kCatSlow | kCatDangerous},
      {"latency|latest", kCatAdmin | kCatSlow | kCatDangerous},
      {"latency|reset", kCatAdmin | kCatSlow | kCatDangerous},
      {"memory|doctor", kCatSlow},
      {"memory|help", kCatSlow},
      {"memory|malloc-stats", kCatSlow},
      {"memory|purge", kCatSlow},
      {"memory|stats", kCatSlow},
      {"memory|usage", kCatRead | kCatSlow},
      {"module|help", kCatSlow},
      {"module|list", kCatAdmin | kCatSlow | kCatDangerous},
      {"module|load", kCatAdmin | kCatSlow | kCatDangerous},
      {"module|loadex", kCatAdmin | kCatSlow | kCatDangerous},
      {"module|unload", kCatAdmin | kCatSlow | kCatDangerous},
      {"object|encoding", kCatKeyspace | kCatRead | kCatSlow},
      {"object|freq", kCatKeyspace | kCatRead | kCatSlow},
      {"object|help", kCatKeyspace | kCatSlow},
      {"object|idletime", kCatKeyspace | kCatRead | kCatSlow},
      {"object|refcount", kCatKeyspace | kCatRead | kCatSlow},
      {"pubsub|channels", kCatPubSub | kCatSlow},
      {"pubsub|help", kCatSlow},
      {"pubsub|numpat", kCatPubSub | kCatSlow},
      {"pubsub|numsub", kCatPubSub | kCatSlow},
      {"pubsub|shardchannels", kCatPubSub | kCatSlow},
      {"pubsub|shardnumsub", kCatPubSub | kCatSlow},
      {"script|debug", kCatSlow | kCatScripting},
      {"script|exists", kCatSlow | kCatScripting},
      {"script|flush", kCatSlow | kCatScripting},
      {"script|help", kCatSlow | kCatScripting},
      {"script|kill", kCatSlow | kCatScripting},
      {"script|load", kCatSlow | kCatScripting},
      {"slowlog|get", kCatAdmin | kCatSlow | kCatDangerous},
      {"slowlog|help", kCatSlow},
      {"slowlog|len", kCatAdmin | kCatSlow | kCatDangerous},
      {"slowlog|reset", kCatAdmin | kCatSlow | kCatDangerous},
      {"xgroup|create", kCatWrite | kCatStream | kCatSlow},
      {"xgroup|createconsumer", kCatWrite | kCatStream | kCatSlow},
      {"xgroup|delconsumer", kCatWrite | kCatStream | kCatSlow},
      {"xgroup|destroy", kCatWrite | kCatStream | kCatSlow},
      {"xgroup|help", kCatStream | kCatSlow},
      {"xgroup|setid", kCatWrite | kCatStream | kCatSlow},
      {"xinfo|consumers", kCatRead | kCatStream | kCatSlow},
      {"xinfo|groups", kCatRead | kCatStream | kCatSlow},
      {"xinfo|help", kCatStream | kCatSlow},
      {"xinfo|stream", kCatRead | kCatStream | kCatSlow},
  };
  return kTable;
}

// Commands whose categories their flags and group do not give: the read-only scripts
// (@read only for what they call), SORT (declared in every collection's category), ...
const std::unordered_map<std::string_view, uint32_t>& RedisCommandCategories() {
  static const std::unordered_map<std::string_view, uint32_t> kTable = {
      {"role", kCatAdmin | kCatFast | kCatDangerous},
      {"wait", kCatSlow | kCatConnection},
      {"lolwut", kCatRead | kCatFast},
      {"eval_ro", kCatSlow | kCatScripting},
      {"evalsha_ro", kCatSlow | kCatScripting},
      {"fcall_ro", kCatSlow | kCatScripting},
      {"sort", kCatWrite | kCatSet | kCatSortedSet | kCatList | kCatSlow | kCatDangerous},
      {"sort_ro", kCatRead | kCatSet | kCatSortedSet | kCatList | kCatSlow | kCatDangerous},
  };
  return kTable;
}

}  // namespace

uint32_t CommandCategories(const CommandSpec& spec) {
  // A container is only a name: its subcommands carry the categories.
  if (!spec.subcommands.empty()) return CategoriesFromFlags(spec.flags & kConnection, "");
  const auto& table = RedisCommandCategories();
  auto it = table.find(spec.name);
  return it != table.end() ? it->second : CategoriesFromFlags(spec.flags, spec.group);
}

uint32_t SubcommandCategories(const CommandSpec& container, const SubcommandSpec& sub) {
  const auto& table = RedisSubcommandCategories();
  auto it = table.find(sub.name);
  // lapse's own subcommands (CLIENT SETINFO) go by their container's flags.
  return it != table.end() ? it->second : CategoriesFromFlags(container.flags, container.group);
}

}  // namespace lapse::server
