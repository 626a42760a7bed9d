// File: server/function_snapshot.h
//
// Function libraries in RDB snapshots, as Redis 7.0 keeps them: one FUNCTION2 record (the
// library's code) per library, before the keys. Defined with the FUNCTION commands
// (function_commands.cc), which own the checks a library's code goes through. An AOF base of
// commands holds them as FUNCTION LOAD commands instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lapse::server {

class Server;

// The code of every library loaded now.
std::vector<std::string> LibraryCodes(Server& server);
// Loads libraries read from a snapshot, replacing any of the same name; an error message
// when one does not load (its code is checked as FUNCTION LOAD checks it).
std::optional<std::string> LoadLibraryCodes(Server& server, std::vector<std::string> codes);
// The libraries as an AOF base of commands holds them, as Redis's rewrite writes them: a
// FUNCTION LOAD of each one's code (server/aof_snapshot.cc).
std::string FunctionLoadCommands(const std::vector<std::string>& codes);

}  // namespace lapse::server
