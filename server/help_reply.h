// File: server/help_reply.h
//
// The `<COMMAND> HELP` reply: an array of simple-string lines, as Redis sends it.
#pragma once

#include <initializer_list>

#include "protocol/reply_writer.h"

namespace lapse::server {

inline void ReplyHelp(protocol::ReplyWriter& reply, std::initializer_list<const char*> lines) {
  reply.ArrayHeader(lines.size());
  for (const char* line : lines) reply.SimpleString(line);
}

}  // namespace lapse::server
