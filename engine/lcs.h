// File: engine/lcs.h
//
// The longest common subsequence of two strings (Redis 7.0's LCS command), by the classic
// dynamic programme: a table of (|a|+1) x (|b|+1) 32-bit lengths, O(|a| * |b|) time and
// memory, then one walk back from the corner that spells the subsequence and cuts it into
// the runs that are contiguous in both strings. The walk prefers Redis's direction at every
// tie, so the subsequence and its runs are the ones Redis reports.
//
// The caller bounds the table first (Redis refuses one larger than proto-max-bulk-len);
// strings must be shorter than UINT32_MAX - 1 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::engine {

// A run of the subsequence, contiguous in both strings; positions inclusive.
struct LcsMatch {
  uint32_t a_start, a_end, b_start, b_end, len;
};

struct LcsResult {
  uint32_t length = 0;
  std::string text;                // when asked for
  std::vector<LcsMatch> matches;   // when asked for: last run first, as Redis emits them
};

// Bytes the table for strings of these lengths needs; UINT64_MAX when that overflows.
inline uint64_t LcsTableBytes(size_t a_len, size_t b_len) {
  uint64_t cells = 0, bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(a_len) + 1, static_cast<uint64_t>(b_len) + 1, &cells) ||
      __builtin_mul_overflow(cells, uint64_t{sizeof(uint32_t)}, &bytes))
    return UINT64_MAX;
  return bytes;
}

// nullopt when the table cannot be allocated. Runs shorter than `min_match_len` are left
// out of `matches` (0 keeps every run).
std::optional<LcsResult> ComputeLcs(std::string_view a, std::string_view b, bool want_text, bool want_matches,
                                    uint64_t min_match_len);

}  // namespace lapse::engine
