// File: server/sha1.h
//
// SHA-1 (FIPS 180-4), for the script cache: Redis names scripts by the SHA-1 of their body
// in lower-case hex, and clients compute the same name to call EVALSHA. Not for security.
#pragma once

#include <string>
#include <string_view>

namespace lapse::server {

// The 40 lower-case hex digits of the SHA-1 of `data`.
std::string Sha1Hex(std::string_view data);

}  // namespace lapse::server
