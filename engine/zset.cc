#include "engine/zset.h"

namespace lapse::engine::zset {

// No sorted set exists yet, so no entry of this type owns a table.
void DestroyTable(const Entry*) {}
size_t TableBytes(const Entry*) { return 0; }
std::string CopyTable(const Entry*) { return {}; }
const char* EncodingName(const Entry*) { return "listpack"; }

}  // namespace lapse::engine::zset
