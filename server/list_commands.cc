// List family (LPUSH, BLPOP, ...): not built yet.
#include "server/command_table.h"

namespace lapse::server {

void RegisterListCommands(CommandTable&) {}

}  // namespace lapse::server
