// File: server/reply_errors.h
//
// The error replies a command wrote, for INFO commandstats (failed_calls) and errorstats,
// when its reply's first byte does not tell them. A script's result is one such reply, as in
// Redis 7.0: every error it holds counts, nested in an array or not, except those that came
// from a redis.call or redis.pcall, which were counted when that command failed (Redis marks
// their tables with ignore_error_stats_update); the script still counts as failed for them.
#pragma once

#include <string>
#include <vector>

namespace lapse::server {

struct ReplyErrors {
  bool failed = false;               // the command counts as failed
  std::vector<std::string> counted;  // the error lines ("-ERR ...\r\n") that count in errorstats
};

}  // namespace lapse::server
