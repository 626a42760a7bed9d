// File: fuzz/hll_fuzz.cc
//
// libFuzzer target over the HyperLogLog module (engine/hyperloglog.h) with client-supplied
// values, as SET can store anything that PFADD, PFCOUNT and PFMERGE then walk. The input is
// the HLL after its "HYLL" magic; its last bytes also pick registers, counts and a sparse
// limit. The module is held to its contract: it never reads or writes out of bounds (the
// sanitizers watch), every walk agrees on whether a sparse code is valid, a valid HLL stays
// valid under updates and holds what was set, and a refused update changes nothing.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "engine/hyperloglog.h"

namespace {

namespace hll = lapse::engine::hll;

void Check(bool ok) {
  if (!ok) std::abort();
}

// Whether a sparse code's last opcode is whole. One cut short reads as Redis reads it, and
// an update that splits it loses a byte as Redis's does: such codes may turn corrupt.
bool EndsWhole(const std::string& value) {
  if (hll::IsDense(value)) return true;
  size_t pos = hll::kHeaderSize;
  while (pos < value.size()) pos += (static_cast<uint8_t>(value[pos]) & 0xc0) == 0x40 ? 2 : 1;
  return pos == value.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  // The last four bytes steer the updates; the rest is the value after the magic.
  const uint8_t* steer = data + size - 4;
  std::string value = "HYLL" + std::string(reinterpret_cast<const char*>(data), size - 4);
  if (!hll::LooksLikeHll(value)) return 0;

  std::optional<uint64_t> estimate = hll::Estimate(value);
  hll::RawRegisters merged{};
  bool valid = hll::MergeInto(value, &merged);
  Check(valid == estimate.has_value());
  std::string dense = value;
  Check(hll::SparseToDense(&dense) == valid);
  if (!valid) Check(dense == value);
  if (valid) {
    hll::RawRegisters again{};
    Check(hll::MergeInto(dense, &again) && again == merged);
  }
  if (hll::CacheValid(value)) (void)hll::CachedCardinality(value);

  size_t max_bytes = steer[0] * 16;
  std::string work = value;
  for (int round = 0; round < 3; ++round) {
    uint32_t index = ((steer[1] << 8 | steer[2]) * (round + 1)) % hll::kRegisters;
    uint8_t count = static_cast<uint8_t>((steer[3] + round * 17) % (hll::kQ + 1) + 1);
    std::string before = work;
    bool valid_before = hll::Estimate(before).has_value();
    hll::SetResult r = hll::SetRegister(&work, index, count, max_bytes);
    if (r == hll::SetResult::kCorrupt) {
      Check(!valid_before && work == before);
      break;
    }
    Check(hll::LooksLikeHll(work));
    if (!valid_before || !EndsWhole(before)) continue;  // a corrupt code may take updates where readable
    hll::RawRegisters now{};
    Check(hll::MergeInto(work, &now));
    Check(now[index] >= count);
    Check(hll::IsDense(work) || work.size() <= std::max(before.size(), max_bytes));
  }
  return 0;
}
