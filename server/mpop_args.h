// File: server/mpop_args.h
//
// The arguments LMPOP, BLMPOP, ZMPOP and BZMPOP share, from `numkeys` on:
//   numkeys key [key ...] <end> [COUNT count]
// where <end> is LEFT|RIGHT for lists and MIN|MAX for sorted sets. Parsed in Redis's order,
// with its errors.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"

namespace lapse::server {

struct MPopArgs {
  std::vector<std::string_view> keys;
  bool second_end = false;  // RIGHT or MAX
  int64_t count = 1;
};

// Parses args[first...]; replies Redis's error and returns false on bad input.
inline bool ParseMPopArgs(Args args, size_t first, std::string_view first_end, std::string_view second_end,
                          MPopArgs* out, protocol::ReplyWriter& reply) {
  int64_t numkeys = 0;
  if (!protocol::ParseInt64(args[first], &numkeys) || numkeys < 1) {
    return reply.Error("ERR numkeys should be greater than 0"), false;
  }
  if (static_cast<uint64_t>(numkeys) >= args.size() - first - 1) return reply.Error(protocol::errors::kSyntax), false;
  size_t where = first + 1 + static_cast<size_t>(numkeys);
  out->keys.assign(args.begin() + static_cast<std::ptrdiff_t>(first) + 1, args.begin() + static_cast<std::ptrdiff_t>(where));
  std::string_view end = protocol::AsCString(args[where]);
  out->second_end = protocol::EqualsIgnoreCase(end, second_end);
  if (!out->second_end && !protocol::EqualsIgnoreCase(end, first_end)) return reply.Error(protocol::errors::kSyntax), false;
  bool counted = false;
  for (size_t i = where + 1; i < args.size(); ++i) {
    if (!counted && protocol::EqualsIgnoreCase(protocol::AsCString(args[i]), "COUNT") && i + 1 < args.size()) {
      if (!protocol::ParseInt64(args[++i], &out->count) || out->count < 1) {
        return reply.Error("ERR count should be greater than 0"), false;
      }
      counted = true;
    } else {
      return reply.Error(protocol::errors::kSyntax), false;
    }
  }
  return true;
}

}  // namespace lapse::server
