// File: server/reply_errors.h
//
// The error replies a command wrote, for INFO commandstats (failed_calls) and errorstats,
// when its reply's first byte does not tell them. A script's result is one such reply, as in
// Redis 7.0: every error it holds counts in errorstats, nested in an array or not, except those
// that came from a redis.call or redis.pcall, which were counted when that command failed
// (Redis marks their tables with ignore_error_stats_update). The script's failed_calls grows by
// one for each of those and by one more when any other error counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lapse::server {

struct ReplyErrors {
  uint64_t already_counted = 0;      // errors from a redis.call, counted when it failed
  std::vector<std::string> counted;  // the error lines ("-ERR ...\r\n") that count in errorstats
  uint64_t FailedCalls() const { return already_counted + (counted.empty() ? 0 : 1); }
};

}  // namespace lapse::server
