// File: server/debug_digest.h
//
// DEBUG DIGEST and DEBUG DIGEST-VALUE, with Redis 7.0's algorithm (server/debug_digest.cc).
#pragma once

#include "server/command_table.h"

namespace lapse::server {

// DEBUG DIGEST-VALUE key...: each value's digest, 40 zeros for a missing key.
void ReplyValueDigests(ConnCommand& c);
// DEBUG DIGEST: the digest of every database's keys and values, 40 zeros when empty.
void ReplyDatasetDigest(ConnCommand& c);

}  // namespace lapse::server
