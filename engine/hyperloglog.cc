#include "engine/hyperloglog.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace lapse::engine::hll {

namespace {

constexpr char kMagic[4] = {'H', 'Y', 'L', 'L'};
constexpr uint64_t kSeed = 0xadc83b19ULL;
constexpr double kAlphaInf = 0.721347520444481703680;  // 1 / (2 ln 2)

// ---- Sparse opcodes ----
constexpr uint8_t kXZeroBit = 0x40;
constexpr uint8_t kValBit = 0x80;
constexpr uint32_t kZeroMaxLen = 64;
constexpr uint32_t kValMaxLen = 4;

bool IsXZero(uint8_t b) { return (b & 0xc0) == kXZeroBit; }
bool IsZero(uint8_t b) { return (b & 0xc0) == 0; }
bool IsVal(uint8_t b) { return (b & kValBit) != 0; }
uint8_t ValValue(uint8_t b) { return static_cast<uint8_t>(((b >> 2) & 0x1f) + 1); }
uint32_t ValLen(uint8_t b) { return (b & 0x3u) + 1; }
uint8_t MakeVal(uint32_t value, uint32_t len) { return static_cast<uint8_t>(((value - 1) << 2) | (len - 1) | kValBit); }

// One decoded opcode: the registers it covers, their value (0 for a zero run), its size.
struct Op {
  uint32_t span;
  uint8_t value;
  uint8_t bytes;
};

// Decodes the opcode at data[pos], pos < size. An XZERO cut short by the end of the string
// reads its missing byte as 0, as Redis reads the NUL that terminates its strings.
Op Decode(const uint8_t* data, size_t size, size_t pos) {
  uint8_t b = data[pos];
  if (IsZero(b)) return {(b & 0x3fu) + 1, 0, 1};
  if (IsVal(b)) return {ValLen(b), ValValue(b), 1};
  uint32_t low = pos + 1 < size ? data[pos + 1] : 0;
  return {(((b & 0x3fu) << 8) | low) + 1, 0, 2};
}

// Appends a run of `len` zero registers: ZERO up to 64, XZERO beyond.
void PutZeroRun(uint8_t* out, size_t* n, uint32_t len) {
  if (len > kZeroMaxLen) {
    out[(*n)++] = static_cast<uint8_t>(((len - 1) >> 8) | kXZeroBit);
    out[(*n)++] = static_cast<uint8_t>((len - 1) & 0xff);
  } else {
    out[(*n)++] = static_cast<uint8_t>(len - 1);
  }
}

uint8_t* Bytes(std::string* s) { return reinterpret_cast<uint8_t*>(s->data()); }
const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Writes a dense register unconditionally. The last register's bits end in the last byte,
// so the byte after it is never needed.
void DenseWrite(uint8_t* registers, uint32_t index, uint8_t value) {
  size_t byte = index * 6 / 8;
  unsigned fb = index * 6 & 7;
  unsigned v = value;
  registers[byte] = static_cast<uint8_t>((registers[byte] & ~(63u << fb)) | (v << fb));
  if (byte + 1 < kRegisterBytes) {
    registers[byte + 1] = static_cast<uint8_t>((registers[byte + 1] & ~(63u >> (8 - fb))) | (v >> (8 - fb)));
  }
}

// Calls fn(i, value) for every dense register, four registers per three bytes.
template <typename Fn>
void ForEachDense(const uint8_t* r, Fn&& fn) {
  for (uint32_t i = 0; i < kRegisters; i += 4, r += 3) {
    fn(i, r[0] & 63);
    fn(i + 1, ((r[0] >> 6) | (r[1] << 2)) & 63);
    fn(i + 2, ((r[1] >> 4) | (r[2] << 4)) & 63);
    fn(i + 3, r[2] >> 2);
  }
}

// Sparse-to-dense promotion followed by the update that required it.
SetResult Promote(std::string* hll, uint32_t index, uint8_t count) {
  if (!SparseToDense(hll)) return SetResult::kCorrupt;
  DenseSet(Bytes(hll) + kHeaderSize, index, count);
  return SetResult::kChanged;
}

// After an edit at the opcode that followed `from`: fuses adjacent VALs of one value whose
// runs fit one opcode, looking at no more than five opcodes, as Redis does.
void FuseValues(std::string* hll, size_t from) {
  size_t p = from;
  int budget = 5;
  while (p < hll->size() && budget-- > 0) {
    const uint8_t* d = Bytes(hll);
    uint8_t b = d[p];
    if (IsXZero(b)) {
      p += 2;
      continue;
    }
    if (IsZero(b)) {
      ++p;
      continue;
    }
    if (p + 1 < hll->size() && IsVal(d[p + 1]) && ValValue(b) == ValValue(d[p + 1])) {
      uint32_t len = ValLen(b) + ValLen(d[p + 1]);
      if (len <= kValMaxLen) {
        Bytes(hll)[p + 1] = MakeVal(ValValue(b), len);
        hll->erase(p, 1);
        continue;  // the fused opcode may fuse again with the next one
      }
    }
    ++p;
  }
}

SetResult SparseSet(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
  if (count > kSparseMaxValue) return Promote(hll, index, count);

  // Step 1: find the opcode covering `index`, and the one before it.
  const uint8_t* d = Bytes(hll);
  size_t end = hll->size();
  size_t pos = kHeaderSize;
  size_t prev = kHeaderSize;  // where the fusing scan starts: the previous opcode, or the first
  uint64_t first = 0;         // the first register the opcode at `pos` covers
  Op op{0, 0, 1};
  while (pos < end) {
    op = Decode(d, end, pos);
    if (index <= first + op.span - 1) break;
    prev = pos;
    pos += op.bytes;
    first += op.span;
  }
  if (op.span == 0 || pos >= end) return SetResult::kCorrupt;

  // Step 2: the cases that rewrite one byte in place.
  bool is_val = IsVal(d[pos]);
  if (is_val) {
    if (op.value >= count) return SetResult::kUnchanged;
    if (op.span == 1) {
      Bytes(hll)[pos] = MakeVal(count, 1);
      FuseValues(hll, prev);
      InvalidateCache(hll->data());
      return SetResult::kChanged;
    }
  }
  if (IsZero(d[pos]) && op.span == 1) {
    Bytes(hll)[pos] = MakeVal(count, 1);
    FuseValues(hll, prev);
    InvalidateCache(hll->data());
    return SetResult::kChanged;
  }

  // Step 3: split the opcode into (run before) VAL (run after); at most 5 bytes.
  uint8_t seq[5];
  size_t n = 0;
  uint64_t last = first + op.span - 1;
  uint32_t before = static_cast<uint32_t>(index - first), after = static_cast<uint32_t>(last - index);
  if (!is_val) {
    if (before > 0) PutZeroRun(seq, &n, before);
    seq[n++] = MakeVal(count, 1);
    if (after > 0) PutZeroRun(seq, &n, after);
  } else {
    if (before > 0) seq[n++] = MakeVal(op.value, before);
    seq[n++] = MakeVal(count, 1);
    if (after > 0) seq[n++] = MakeVal(op.value, after);
  }
  size_t old_len = IsXZero(d[pos]) ? 2 : 1;
  ptrdiff_t delta = static_cast<ptrdiff_t>(n) - static_cast<ptrdiff_t>(old_len);
  if (delta > 0 && end + static_cast<size_t>(delta) > sparse_max_bytes) return Promote(hll, index, count);
  // An XZERO cut short by the end counts its missing byte: the string ends up end + delta long.
  hll->replace(pos, std::min(old_len, end - pos), reinterpret_cast<const char*>(seq), n);
  hll->resize(static_cast<size_t>(static_cast<ptrdiff_t>(end) + delta));

  // Step 4: fuse neighbouring VALs.
  FuseValues(hll, prev);
  InvalidateCache(hll->data());
  return SetResult::kChanged;
}

// Adds the sparse code's registers to `histogram`; false if they do not number 16384.
bool SparseHistogram(std::string_view hll, int64_t* histogram) {
  const uint8_t* d = Bytes(hll);
  uint64_t idx = 0;
  for (size_t pos = kHeaderSize; pos < hll.size();) {
    Op op = Decode(d, hll.size(), pos);
    histogram[op.value] += op.span;
    idx += op.span;
    pos += op.bytes;
  }
  return idx == kRegisters;
}

// Ertl's sigma and tau, iterated to a fixed point exactly as Redis computes them.
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prev;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prev = z;
    z += x * y;
    y += y;
  } while (z_prev != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prev;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prev = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prev != z);
  return z / 3;
}

// The estimate from a histogram of register values (64 slots).
uint64_t EstimateFromHistogram(const int64_t* histogram) {
  double m = kRegisters;
  double z = m * Tau((m - static_cast<double>(histogram[kQ + 1])) / m);
  for (int j = kQ; j >= 1; --j) {
    z += static_cast<double>(histogram[j]);
    z *= 0.5;
  }
  z += m * Sigma(static_cast<double>(histogram[0]) / m);
  double e = static_cast<double>(std::llroundl(kAlphaInf * m * m / z));
  return static_cast<uint64_t>(e);
}

}  // namespace

uint64_t MurmurHash64A(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const uint8_t* p = Bytes(data);
  size_t len = data.size();
  // Redis passes the length as an int; lengths here fit one (proto-max-bulk-len).
  uint64_t h = seed ^ (static_cast<uint64_t>(static_cast<int64_t>(static_cast<int>(len))) * m);
  const uint8_t* end = p + (len - (len & 7));
  for (; p != end; p += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | p[i];  // little endian on every host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t tail = len & 7;
  if (tail > 0) {
    for (size_t i = tail; i-- > 0;) h ^= static_cast<uint64_t>(p[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

Pattern PatternOf(std::string_view element) {
  uint64_t hash = MurmurHash64A(element, kSeed);
  uint32_t index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // bounds the run at kQ + 1
  uint8_t count = 1;
  while ((hash & 1) == 0) {
    ++count;
    hash >>= 1;
  }
  return {index, count};
}

bool LooksLikeHll(std::string_view value) {
  if (value.size() < kHeaderSize) return false;
  if (std::memcmp(value.data(), kMagic, 4) != 0) return false;
  uint8_t encoding = static_cast<uint8_t>(value[4]);
  if (encoding > kEncodingSparse) return false;
  return encoding != kEncodingDense || value.size() == kDenseSize;
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(s.data(), kMagic, 4);
  s[4] = static_cast<char>(kEncodingSparse);
  uint8_t code[2];
  size_t n = 0;
  PutZeroRun(code, &n, kRegisters);
  s.append(reinterpret_cast<const char*>(code), n);
  return s;
}

bool CacheValid(std::string_view hll) { return (static_cast<uint8_t>(hll[15]) & 0x80) == 0; }

uint64_t CachedCardinality(std::string_view hll) {
  uint64_t card = 0;
  for (int i = 7; i >= 0; --i) card = (card << 8) | static_cast<uint8_t>(hll[8 + i]);
  return card;
}

void StoreCachedCardinality(char* header, uint64_t card) {
  for (int i = 0; i < 8; ++i) header[8 + i] = static_cast<char>((card >> (8 * i)) & 0xff);
}

void InvalidateCache(char* header) { header[15] = static_cast<char>(static_cast<uint8_t>(header[15]) | 0x80); }

uint8_t DenseGet(const uint8_t* registers, uint32_t index) {
  size_t byte = index * 6 / 8;
  unsigned fb = index * 6 & 7;
  unsigned b0 = registers[byte];
  unsigned b1 = byte + 1 < kRegisterBytes ? registers[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & 63);
}

bool DenseSet(uint8_t* registers, uint32_t index, uint8_t count) {
  if (count <= DenseGet(registers, index)) return false;
  DenseWrite(registers, index, count);
  return true;
}

SetResult SetRegister(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
  if (IsDense(*hll)) {
    return DenseSet(Bytes(hll) + kHeaderSize, index, count) ? SetResult::kChanged : SetResult::kUnchanged;
  }
  return SparseSet(hll, index, count, sparse_max_bytes);
}

SetResult Add(std::string* hll, std::string_view element, size_t sparse_max_bytes) {
  Pattern p = PatternOf(element);
  return SetRegister(hll, p.index, p.count, sparse_max_bytes);
}

bool SparseToDense(std::string* hll) {
  if (IsDense(*hll)) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), hll->data(), kHeaderSize);  // magic, unused bytes and cache
  dense[4] = static_cast<char>(kEncodingDense);
  uint8_t* registers = Bytes(&dense) + kHeaderSize;
  const uint8_t* d = Bytes(*hll);
  uint64_t idx = 0;
  for (size_t pos = kHeaderSize; pos < hll->size() && idx <= kRegisters;) {
    Op op = Decode(d, hll->size(), pos);
    if (op.value != 0) {
      if (idx + op.span > kRegisters) return false;
      for (uint32_t i = 0; i < op.span; ++i) DenseWrite(registers, static_cast<uint32_t>(idx + i), op.value);
    }
    idx += op.span;
    pos += op.bytes;
  }
  if (idx != kRegisters) return false;
  *hll = std::move(dense);
  return true;
}

bool MergeInto(std::string_view hll, RawRegisters* max) {
  uint8_t* out = max->data();
  if (IsDense(hll)) {
    ForEachDense(Bytes(hll) + kHeaderSize, [out](uint32_t i, unsigned v) {
      if (v > out[i]) out[i] = static_cast<uint8_t>(v);
    });
    return true;
  }
  const uint8_t* d = Bytes(hll);
  uint64_t idx = 0;
  for (size_t pos = kHeaderSize; pos < hll.size() && idx <= kRegisters;) {
    Op op = Decode(d, hll.size(), pos);
    if (op.value != 0) {
      if (idx + op.span > kRegisters) return false;
      for (uint32_t i = 0; i < op.span; ++i) out[idx + i] = std::max(out[idx + i], op.value);
    }
    idx += op.span;
    pos += op.bytes;
  }
  return idx == kRegisters;
}

std::optional<uint64_t> Estimate(std::string_view hll) {
  int64_t histogram[64] = {};
  if (IsDense(hll)) {
    ForEachDense(Bytes(hll) + kHeaderSize, [&histogram](uint32_t, unsigned v) { ++histogram[v]; });
  } else if (!SparseHistogram(hll, histogram)) {
    return std::nullopt;
  }
  return EstimateFromHistogram(histogram);
}

uint64_t EstimateRaw(const RawRegisters& registers) {
  int64_t histogram[64] = {};
  for (uint8_t v : registers) ++histogram[v & 63];
  return EstimateFromHistogram(histogram);
}

}  // namespace lapse::engine::hll
