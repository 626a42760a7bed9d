// File: engine/hash.h
//
// One 64-bit key hash serves three purposes: the shard that owns a key (high bits), the
// bucket inside that shard's table (low bits), and the payload of the key's timing-wheel
// record. It must therefore be well mixed in all bits; this is a small multiply-xorshift
// hash in the style of wyhash, reading 8 bytes at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace lapse::engine {

namespace hash_detail {
inline uint64_t Mix(uint64_t a, uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}
inline uint64_t Read64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
}  // namespace hash_detail

inline uint64_t HashKey(std::string_view key, uint64_t seed = 0x9E3779B97F4A7C15ull) {
  using hash_detail::Mix;
  using hash_detail::Read64;
  constexpr uint64_t kP1 = 0xa0761d6478bd642full, kP2 = 0xe7037ed1a0b428dbull;
  const char* p = key.data();
  size_t n = key.size();
  uint64_t h = seed ^ (n * kP1);
  while (n >= 8) {
    h = Mix(h ^ Read64(p), kP2);
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  if (n > 0) std::memcpy(&tail, p, n);
  h = Mix(h ^ tail ^ kP2, kP1 ^ n);
  return Mix(h, kP2);
}

// Shard owning a hash: uses the high bits so that shard choice and bucket choice (low bits)
// stay independent.
inline uint32_t ShardOf(uint64_t hash, uint32_t shard_count) {
  return static_cast<uint32_t>(((hash >> 32) * shard_count) >> 32);
}

}  // namespace lapse::engine
