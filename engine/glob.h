// File: engine/glob.h
//
// Glob matching with Redis's rules (stringmatchlen): `*`, `?`, `[abc]`, `[^a-z]`, `\x`.
// Used by KEYS, SCAN MATCH, ISCAN MATCH and CONFIG GET. Recursion on `*` is bounded by the
// pattern's star count, and consecutive stars collapse, so hostile patterns stay linear-ish.
#pragma once

#include <string_view>

namespace lapse::engine {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace lapse::engine
