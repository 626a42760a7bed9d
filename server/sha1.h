// File: server/sha1.h
//
// SHA-1 (FIPS 180-4), for the script cache (Redis names scripts by the SHA-1 of their body
// in lower-case hex, and clients compute the same name to call EVALSHA) and DEBUG DIGEST.
// Not for security.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace lapse::server {

// The 20 bytes of the SHA-1 of `data`.
std::array<unsigned char, 20> Sha1(std::string_view data);
// The 40 lower-case hex digits of the SHA-1 of `data`.
std::string Sha1Hex(std::string_view data);
// `bytes` as lower-case hex, two digits a byte.
std::string LowerHex(std::span<const unsigned char> bytes);

}  // namespace lapse::server
