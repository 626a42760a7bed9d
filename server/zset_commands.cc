// Sorted-set family (ZADD, ZRANGE, ...): not built yet.
#include "server/command_table.h"

namespace lapse::server {

void RegisterZSetCommands(CommandTable&) {}

}  // namespace lapse::server
