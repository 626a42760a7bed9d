// File: server/transaction.h
//
// What the dispatcher and the connection need of MULTI/EXEC/WATCH state
// (transaction_commands.cc has the commands and the design).
#pragma once

#include <cstdint>

#include "server/client_session.h"

namespace lapse::server {

class Server;

// Withdraws the client from every key it watches and clears its dirty mark (UNWATCH).
void UnwatchAll(Server& server, ClientSession& session);
// Leaves MULTI, dropping the queue, and unwatches everything (EXEC, DISCARD, disconnect).
void EndTransaction(Server& server, ClientSession& session);
// True when a key the client watched while it was live has expired since (EXEC then fails,
// as in Redis 7.0). Needs the watched keys' shards: call it inside EXEC's atomic step.
bool WatchedKeyExpired(Server& server, ClientSession& session, int64_t now_ms);

}  // namespace lapse::server
