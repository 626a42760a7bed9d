#include "engine/frequency_sketch.h"

#include <algorithm>
#include <cstring>

namespace lapse::engine {

namespace {
constexpr size_t kWordsPerBlock = FrequencySketch::kBlockBytes / sizeof(uint64_t);

// The shard was chosen by the hash's high bits and the key table's bucket by its low ones:
// mixed again, so that neither correlates with where a key's counters are.
uint64_t Remix(uint64_t h) {
  h ^= h >> 31;
  h *= 0x7FB5D329728EA185ull;
  h ^= h >> 27;
  h *= 0x81DADEF4BC2DD44Dull;
  return h ^ (h >> 33);
}
}  // namespace

void FrequencySketch::Resize(size_t bytes, uint64_t window) {
  size_t blocks = bytes / kBlockBytes;
  window_ = std::max<uint64_t>(window, 1);
  increments_ = 0;
  if (blocks != blocks_) {
    words_.reset(blocks == 0 ? nullptr : new uint64_t[blocks * kWordsPerBlock]);
    blocks_ = blocks;
  }
  Clear();
}

void FrequencySketch::Clear() {
  if (blocks_ != 0) std::memset(words_.get(), 0, blocks_ * kBlockBytes);
  increments_ = 0;
}

// Row i of the four uses words 2i and 2i+1 of the key's block: 32 counters a row.
FrequencySketch::Slots FrequencySketch::Locate(uint64_t hash) const {
  uint64_t h = Remix(hash);
  size_t block = static_cast<size_t>((static_cast<unsigned __int128>(h >> 32) * blocks_) >> 32);
  Slots s;
  for (unsigned i = 0; i < 4; ++i) {
    unsigned bits = static_cast<unsigned>(h >> (i * 5)) & 31;
    s.word[i] = block * kWordsPerBlock + 2 * i + (bits & 1);
    s.shift[i] = (bits >> 1) * 4;
  }
  return s;
}

void FrequencySketch::Increment(uint64_t hash) {
  if (blocks_ == 0) return;
  Slots s = Locate(hash);
  uint8_t count[4];
  uint8_t least = kMaxCount;
  for (int i = 0; i < 4; ++i) {
    count[i] = static_cast<uint8_t>((words_[s.word[i]] >> s.shift[i]) & 15);
    least = std::min(least, count[i]);
  }
  if (least == kMaxCount) return;
  for (int i = 0; i < 4; ++i) {
    if (count[i] == least) words_[s.word[i]] += uint64_t{1} << s.shift[i];
  }
  if (++increments_ >= window_) Halve();
}

uint8_t FrequencySketch::Estimate(uint64_t hash) const {
  if (blocks_ == 0) return 0;
  Slots s = Locate(hash);
  uint8_t least = kMaxCount;
  for (int i = 0; i < 4; ++i) least = std::min(least, static_cast<uint8_t>((words_[s.word[i]] >> s.shift[i]) & 15));
  return least;
}

void FrequencySketch::Halve() {
  for (size_t i = 0; i < blocks_ * kWordsPerBlock; ++i) words_[i] = (words_[i] >> 1) & 0x7777777777777777ull;
  increments_ /= 2;
}

}  // namespace lapse::engine
