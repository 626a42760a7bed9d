// File: server/migrate.h
//
// MIGRATE (server/migrate_command.cc) and the connections it keeps open to its targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/command_table.h"

namespace lapse::server {

void RegisterMigrateCommand(CommandTable& table);

// MIGRATE's keys, as Redis's migrateGetKeys finds them: argument 3, or every argument after
// KEYS (none when argument 3 is not empty then); AUTH's password and AUTH2's user and
// password are skipped on the way. The command table's finder, and COMMAND GETKEYS's.
void MigrateKeyPositions(Args args, std::vector<size_t>* out);

// INFO's migrate_cached_sockets: connections MIGRATE keeps open for its next call.
size_t MigrateCachedSockets();
// Closes the cached connections idle for more than 10 s, as Redis's cron does.
void CloseIdleMigrateSockets(int64_t now_ms);

}  // namespace lapse::server
