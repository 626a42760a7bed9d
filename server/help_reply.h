// File: server/help_reply.h
//
// The `<COMMAND> HELP` reply: an array of simple-string lines, as Redis sends it. Like Redis's
// addReplyHelp, it ends every help with the lines for HELP itself.
#pragma once

#include <initializer_list>

#include "protocol/reply_writer.h"

namespace lapse::server {

// Like Redis's addReplyHelp, ends with the entry for HELP itself.
inline void ReplyHelp(protocol::ReplyWriter& reply, std::initializer_list<const char*> lines) {
  reply.ArrayHeader(lines.size() + 2);
  for (const char* line : lines) reply.SimpleString(line);
  reply.SimpleString("HELP");
  reply.SimpleString("    Prints this help.");
}

}  // namespace lapse::server
