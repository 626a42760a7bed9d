// File: server/migrate.h
//
// MIGRATE (server/migrate_command.cc) and the connections it keeps open to its targets.
#pragma once

#include <cstddef>
#include <cstdint>

#include "server/command_table.h"

namespace lapse::server {

void RegisterMigrateCommand(CommandTable& table);

// INFO's migrate_cached_sockets: connections MIGRATE keeps open for its next call.
size_t MigrateCachedSockets();
// Closes the cached connections idle for more than 10 s, as Redis's cron does.
void CloseIdleMigrateSockets(int64_t now_ms);

}  // namespace lapse::server
