#include "engine/lcs.h"

#include <memory>
#include <new>

namespace lapse::engine {

std::optional<LcsResult> ComputeLcs(std::string_view a, std::string_view b, bool want_text, bool want_matches,
                                    uint64_t min_match_len) {
  const auto alen = static_cast<uint32_t>(a.size()), blen = static_cast<uint32_t>(b.size());
  const size_t width = static_cast<size_t>(blen) + 1;
  const size_t cells = (static_cast<size_t>(alen) + 1) * width;
  std::unique_ptr<uint32_t[]> table(new (std::nothrow) uint32_t[cells]);
  if (!table) return std::nullopt;
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t& { return table[static_cast<size_t>(i) * width + j]; };
  for (uint32_t j = 0; j <= blen; ++j) at(0, j) = 0;
  for (uint32_t i = 1; i <= alen; ++i) {
    at(i, 0) = 0;
    for (uint32_t j = 1; j <= blen; ++j) {
      if (a[i - 1] == b[j - 1]) {
        at(i, j) = at(i - 1, j - 1) + 1;
      } else {
        uint32_t up = at(i - 1, j), left = at(i, j - 1);
        at(i, j) = up > left ? up : left;
      }
    }
  }
  LcsResult result;
  result.length = at(alen, blen);
  if (!want_text && !want_matches) return result;
  if (want_text) result.text.assign(result.length, '\0');

  // Walk back from the corner. A run grows backwards while matches stay on the diagonal; it
  // is closed at the first step off it, or when it reaches the start of either string.
  uint32_t idx = result.length;
  const uint32_t unset = alen;  // a_start == alen: no run open
  uint32_t a_start = unset, a_end = 0, b_start = 0, b_end = 0;
  uint32_t i = alen, j = blen;
  while (i > 0 && j > 0) {
    bool close = false;
    if (a[i - 1] == b[j - 1]) {
      if (want_text) result.text[idx - 1] = a[i - 1];
      if (a_start == unset) {
        a_start = a_end = i - 1;
        b_start = b_end = j - 1;
      } else if (a_start == i && b_start == j) {
        --a_start;
        --b_start;
      } else {
        close = true;
      }
      if (a_start == 0 || b_start == 0) close = true;
      --idx;
      --i;
      --j;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (a_start != unset) close = true;
    }
    if (close) {
      uint32_t len = a_end - a_start + 1;
      if (want_matches && (min_match_len == 0 || len >= min_match_len)) {
        result.matches.push_back({a_start, a_end, b_start, b_end, len});
      }
      a_start = unset;
    }
  }
  return result;
}

}  // namespace lapse::engine
