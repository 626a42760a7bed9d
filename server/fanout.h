// File: server/fanout.h
//
// Helpers for commands that touch keys on several shards (MGET, DEL k1 k2, EXISTS ...):
// group the key positions by owning shard, run one closure per shard holding it, and let the
// handler assemble per-key results in argument order.
#pragma once

#include <cstdint>
#include <vector>

#include "server/command_table.h"
#include "server/shard_set.h"

namespace lapse::server {

struct KeyGroups {
  std::vector<uint32_t> shards;                  // shards with at least one key
  std::vector<std::vector<size_t>> positions;    // per shard id: argument positions
  // Per argument position: the shard of the key there (0 where no key is). A command that
  // holds all its shards at once walks its keys in argument order with it, so that what it
  // reports per key (keyspace events) comes in Redis's order.
  std::vector<uint32_t> shard_of;
};

// Keys are args[first], args[first + step], ... up to the end.
inline KeyGroups GroupKeys(const ShardSet& set, Args args, size_t first, size_t step) {
  KeyGroups g;
  g.positions.resize(set.size());
  g.shard_of.resize(args.size());
  for (size_t i = first; i < args.size(); i += step) {
    uint32_t s = set.ShardFor(args[i]);
    g.shard_of[i] = s;
    if (g.positions[s].empty()) g.shards.push_back(s);
    g.positions[s].push_back(i);
  }
  return g;
}

}  // namespace lapse::server
