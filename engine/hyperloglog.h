// File: engine/hyperloglog.h
//
// HyperLogLog cardinality estimation in Redis's exact byte format, so that a value written
// by PFADD on Redis and read with GET can be SET on lapse (or the reverse) and go on
// counting the same, and the same PFADDs give byte-identical strings on both servers.
//
// An HLL is an ordinary string value:
//
//   | "HYLL" (4) | encoding (1) | unused (3) | cached cardinality (8, little endian) | data |
//
// The top bit of the last cardinality byte set means "cache stale". 16384 registers
// (P = 14) hold 6-bit run lengths of the 64-bit MurmurHash64A (seed 0xadc83b19) of each
// element: the low 14 bits pick the register, the run of zeros above them, plus one, is
// the value (at most Q + 1 = 51).
//
//  - Dense (encoding 0): 12288 bytes, register i in bits [6i, 6i + 6) counted from the
//    least significant bit of byte 0. Always exactly kDenseSize bytes.
//  - Sparse (encoding 1): a run-length code of opcodes, each covering a run of registers:
//      ZERO  00xxxxxx            xxxxxx + 1 (1..64) registers at 0
//      XZERO 01xxxxxx yyyyyyyy   the 14-bit xxxxxxyyyyyyyy + 1 (1..16384) registers at 0
//      VAL   1vvvvvxx            xx + 1 (1..4) registers at vvvvv + 1 (1..32)
//    Their spans must add up to 16384. An empty HLL is XZERO:16384 (18 bytes in all).
//    A register that needs a value above 32, or an edit that would make the string longer
//    than hll-sparse-max-bytes, promotes the HLL to dense for good.
//
// Byte identity with Redis depends on editing the sparse code exactly as Redis does: the
// opcode that covers a register is split in place (at most XZERO-VAL-XZERO) and then up to
// five opcodes from the one before it are scanned to fuse neighbouring VALs of one value.
// Sparse edits cost O(length) (at most hll-sparse-max-bytes); dense ones O(1); a count or
// a merge reads all 16384 registers.
//
// The estimate is Otmar Ertl's improved estimator over the register histogram ("New
// cardinality estimation algorithms for HyperLogLog sketches", arXiv:1702.01284), as
// Redis 4.0+ computes it, in the same floating-point order so that the results agree.
//
// Everything here works on plain bytes; it knows nothing of keys or replies. Values from a
// client may be corrupt: every function that walks sparse data reports corruption instead
// of reading or writing out of bounds. A sparse code is valid when the spans of all its
// opcodes add up to exactly 16384, as Debian's patched Redis 7.0.15 judges it (a VAL past
// the last register is corrupt, not ignored); an XZERO cut short by the end of the string
// reads its missing byte as 0, as Redis reads its strings' terminating NUL.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lapse::engine::hll {

inline constexpr int kP = 14;
inline constexpr uint32_t kRegisters = 1u << kP;
inline constexpr int kQ = 64 - kP;  // hash bits above the index; values are at most kQ + 1
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kRegisterBytes = (kRegisters * 6 + 7) / 8;  // 12288
inline constexpr size_t kDenseSize = kHeaderSize + kRegisterBytes;  // 12304
inline constexpr uint8_t kEncodingDense = 0;
inline constexpr uint8_t kEncodingSparse = 1;
inline constexpr uint8_t kSparseMaxValue = 32;
// Redis's default for hll-sparse-max-bytes.
inline constexpr size_t kDefaultSparseMaxBytes = 3000;

// Redis's endian-neutral MurmurHash2, 64-bit version.
uint64_t MurmurHash64A(std::string_view data, uint64_t seed);

// Where an element lands: its register and the value it offers that register (1..51).
struct Pattern {
  uint32_t index;
  uint8_t count;
};
Pattern PatternOf(std::string_view element);

// Whether a string value may be used as an HLL, by Redis's rules: at least a header, the
// magic, a known encoding, and exactly kDenseSize bytes if dense. The sparse data is not
// checked here (commands find out when they walk it). Anything else is WRONGTYPE.
bool LooksLikeHll(std::string_view value);
// For a value that LooksLikeHll.
inline bool IsDense(std::string_view hll) { return static_cast<uint8_t>(hll[4]) == kEncodingDense; }

// An empty sparse HLL (what PFADD or PFMERGE creates for a missing key).
std::string NewSparse();

// ---- The cached cardinality (bytes 8..15 of the header) ----
bool CacheValid(std::string_view hll);
uint64_t CachedCardinality(std::string_view hll);
// Stores `card` as the cached value (which marks it valid if card < 2^63). `header` points at
// the start of the HLL.
void StoreCachedCardinality(char* header, uint64_t card);
void InvalidateCache(char* header);

// ---- Dense registers (`registers` is the data after the header, kRegisterBytes long) ----
uint8_t DenseGet(const uint8_t* registers, uint32_t index);
// Raises register `index` to `count` if it is lower; true when it changed.
bool DenseSet(uint8_t* registers, uint32_t index, uint8_t count);

// ---- Updates of a whole HLL value (one that LooksLikeHll) ----
enum class SetResult { kUnchanged, kChanged, kCorrupt };

// Raises register `index` to `count` in either encoding. A sparse HLL may be rewritten in
// place or promoted to dense (when `count` exceeds 32 or the sparse code would outgrow
// `sparse_max_bytes`). kCorrupt when the sparse code does not cover the register or does not
// convert; the value is then unchanged. A sparse edit marks the cache stale; a dense one
// leaves that to the caller, as Redis does.
SetResult SetRegister(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes);
// SetRegister for an element's pattern (PFADD of one element).
SetResult Add(std::string* hll, std::string_view element, size_t sparse_max_bytes);

// Rewrites a sparse HLL as dense, keeping its header (cache bytes included). False, and
// `hll` unchanged, when the sparse code does not cover exactly 16384 registers. A dense HLL
// is left as it is.
bool SparseToDense(std::string* hll);

// ---- Reading ----
// One byte per register: the form PFMERGE and a multi-key PFCOUNT merge into.
using RawRegisters = std::array<uint8_t, kRegisters>;

// max[i] = max(max[i], register i of `hll`) for an HLL that LooksLikeHll. False when its
// sparse code is corrupt (`max` may then be partly updated).
bool MergeInto(std::string_view hll, RawRegisters* max);

// The estimate of an HLL that LooksLikeHll, ignoring its cache; nullopt when its sparse code
// is corrupt.
std::optional<uint64_t> Estimate(std::string_view hll);
// The estimate of merged registers.
uint64_t EstimateRaw(const RawRegisters& registers);

}  // namespace lapse::engine::hll
