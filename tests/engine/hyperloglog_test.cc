// File: tests/engine/hyperloglog_test.cc
//
// The HLL module against Redis 7.0.15's own bytes (golden values taken from redis-server):
// the sparse code after PFADDs, the dense form, the estimates, merges; then the sparse
// editing rules one by one, promotion under hll-sparse-max-bytes, and corrupt codes, which
// must be reported and never read or written out of bounds.

#include "engine/hyperloglog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lapse::engine::hll {
namespace {

using namespace std::string_literals;

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string AddAll(std::string hll, const std::string& prefix, int n, size_t max_bytes = kDefaultSparseMaxBytes) {
  for (int i = 0; i < n; ++i) EXPECT_NE(Add(&hll, prefix + std::to_string(i), max_bytes), SetResult::kCorrupt);
  InvalidateCache(hll.data());
  return hll;
}

// The sparse code after the header, one opcode per byte pair as text, for readable checks.
std::string Code(const std::string& hll) { return hll.substr(kHeaderSize); }

TEST(HyperLogLogTest, EmptyIsOneXZero) {
  std::string h = NewSparse();
  EXPECT_EQ(h, "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"s);
  EXPECT_TRUE(LooksLikeHll(h));
  EXPECT_FALSE(IsDense(h));
  EXPECT_EQ(Estimate(h), 0u);
}

TEST(HyperLogLogTest, MatchesRedisBytesForThreeElements) {
  std::string h = NewSparse();
  for (const char* e : {"a", "b", "c"}) EXPECT_EQ(Add(&h, e, kDefaultSparseMaxBytes), SetResult::kChanged);
  InvalidateCache(h.data());
  EXPECT_EQ(h, FromHex("48594c4c01000000000000000000008060f38050b1844bfb80425a"));
  EXPECT_EQ(Estimate(h), 3u);
}

TEST(HyperLogLogTest, MatchesRedisSparseAndDense) {
  std::string sparse = AddAll(NewSparse(), "e", 1000);
  EXPECT_EQ(sparse.size(), 1906u);
  EXPECT_EQ(Estimate(sparse), 1008u);
  StoreCachedCardinality(sparse.data(), 1008);  // the goldens were taken after a PFCOUNT
  EXPECT_EQ(Fnv1a(sparse), 0x4ded8ea0046b668dULL);

  std::string dense = AddAll(NewSparse(), "e", 100000);
  ASSERT_TRUE(IsDense(dense));
  EXPECT_EQ(dense.size(), kDenseSize);
  EXPECT_EQ(Estimate(dense), 100853u);
  StoreCachedCardinality(dense.data(), 100853);
  EXPECT_EQ(Fnv1a(dense), 0xfd1fc23694773e63ULL);

  RawRegisters max{};
  ASSERT_TRUE(MergeInto(sparse, &max));
  ASSERT_TRUE(MergeInto(dense, &max));
  EXPECT_EQ(EstimateRaw(max), 100853u);
}

TEST(HyperLogLogTest, CachedCardinality) {
  std::string h = AddAll(NewSparse(), "e", 1000);
  EXPECT_FALSE(CacheValid(h));
  StoreCachedCardinality(h.data(), 1008);
  EXPECT_TRUE(CacheValid(h));
  EXPECT_EQ(h.substr(0, 16), FromHex("48594c4c01000000f003000000000000"));
  EXPECT_EQ(CachedCardinality(h), 1008u);
  InvalidateCache(h.data());
  EXPECT_FALSE(CacheValid(h));
}

TEST(HyperLogLogTest, DenseRegistersRoundTrip) {
  std::vector<uint8_t> regs(kRegisterBytes, 0);
  for (uint32_t i = 0; i < kRegisters; ++i) EXPECT_TRUE(DenseSet(regs.data(), i, static_cast<uint8_t>(i % 63 + 1)));
  for (uint32_t i = 0; i < kRegisters; ++i) EXPECT_EQ(DenseGet(regs.data(), i), i % 63 + 1) << i;
  EXPECT_FALSE(DenseSet(regs.data(), 5, 1));  // only raises
  EXPECT_TRUE(DenseSet(regs.data(), kRegisters - 1, 63));
  EXPECT_EQ(DenseGet(regs.data(), kRegisters - 1), 63);
  EXPECT_EQ(DenseGet(regs.data(), kRegisters - 2), (kRegisters - 2) % 63 + 1);
}

// The example of Redis's format description: registers 1000, 1020 and 1021 at 2, 3, 3.
TEST(HyperLogLogTest, SparseSplitsAndFuses) {
  std::string h = NewSparse();
  EXPECT_EQ(SetRegister(&h, 1000, 2, 3000), SetResult::kChanged);
  EXPECT_EQ(SetRegister(&h, 1020, 3, 3000), SetResult::kChanged);
  EXPECT_EQ(SetRegister(&h, 1021, 3, 3000), SetResult::kChanged);
  // XZERO:1000 VAL:2,1 ZERO:19 VAL:3,2 XZERO:15362
  EXPECT_EQ(Code(h), "\x43\xe7\x84\x12\x89\x7c\x01"s);
  EXPECT_EQ(SetRegister(&h, 1021, 2, 3000), SetResult::kUnchanged);
  EXPECT_EQ(SetRegister(&h, 1022, 3, 3000), SetResult::kChanged);  // fuses into VAL:3,3
  EXPECT_EQ(Code(h), "\x43\xe7\x84\x12\x8a\x7c\x00"s);
  RawRegisters max{};
  ASSERT_TRUE(MergeInto(h, &max));
  EXPECT_EQ(max[1000], 2);
  EXPECT_EQ(max[1022], 3);
  EXPECT_EQ(max[1023], 0);
  std::string dense = h;
  ASSERT_TRUE(SparseToDense(&dense));
  EXPECT_EQ(DenseGet(reinterpret_cast<const uint8_t*>(dense.data()) + kHeaderSize, 1021), 3);
  EXPECT_EQ(Estimate(dense), Estimate(h));
}

TEST(HyperLogLogTest, PromotesAboveValue32OrMaxBytes) {
  std::string h = NewSparse();
  EXPECT_EQ(SetRegister(&h, 7, 33, 3000), SetResult::kChanged);
  ASSERT_TRUE(IsDense(h));
  EXPECT_EQ(DenseGet(reinterpret_cast<const uint8_t*>(h.data()) + kHeaderSize, 7), 33);

  std::string small = NewSparse();
  EXPECT_EQ(SetRegister(&small, 100, 1, 20), SetResult::kChanged);  // 18 -> 21 bytes > 20
  EXPECT_TRUE(IsDense(small));

  std::string grown = AddAll(NewSparse(), "e", 2000, 3000);
  EXPECT_TRUE(IsDense(grown));
  std::string kept = AddAll(NewSparse(), "e", 2000, 100000);
  EXPECT_FALSE(IsDense(kept));
  EXPECT_EQ(Estimate(grown), Estimate(kept));
}

TEST(HyperLogLogTest, RecognisesHllStrings) {
  EXPECT_FALSE(LooksLikeHll(""));
  EXPECT_FALSE(LooksLikeHll("HYLL"));
  EXPECT_FALSE(LooksLikeHll("HYLX\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"s));
  EXPECT_FALSE(LooksLikeHll("HYLL\x02\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"s));
  EXPECT_FALSE(LooksLikeHll("HYLL\x00\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"s));  // dense of the wrong size
  EXPECT_TRUE(LooksLikeHll("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0"s));        // sparse data unchecked
  std::string dense(kDenseSize, '\0');
  dense.replace(0, 4, "HYLL");
  EXPECT_TRUE(LooksLikeHll(dense));
}

TEST(HyperLogLogTest, CorruptSparseIsReported) {
  std::vector<std::string> bad = {
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0"s,                  // no opcodes
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xfe"s,          // 16383 registers
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff\x00"s,      // 16385 registers
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f"s,              // XZERO cut short
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\xff\xff\xff"s,      // 12 registers of VAL only
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff\x80"s,      // a VAL past the last register
  };
  for (const std::string& b : bad) {
    ASSERT_TRUE(LooksLikeHll(b));
    EXPECT_FALSE(Estimate(b).has_value());
    RawRegisters max{};
    EXPECT_FALSE(MergeInto(b, &max));
    std::string copy = b;
    EXPECT_FALSE(SparseToDense(&copy));
    EXPECT_EQ(copy, b);
  }
  // A register beyond what the code covers cannot be set.
  std::string s = bad[1];
  EXPECT_EQ(SetRegister(&s, kRegisters - 1, 1, 3000), SetResult::kCorrupt);
  EXPECT_EQ(s, bad[1]);
  // A value above 32 needs promotion, which a corrupt code fails.
  s = bad[2];
  EXPECT_EQ(SetRegister(&s, 0, 40, 3000), SetResult::kCorrupt);
  EXPECT_EQ(s, bad[2]);
}

TEST(HyperLogLogTest, MurmurHashIsStable) {
  // Every tail length goes through its own path.
  std::string data = "0123456789abcdefXYZ";
  std::vector<uint64_t> seen;
  for (size_t n = 0; n <= data.size(); ++n) seen.push_back(MurmurHash64A(std::string_view(data).substr(0, n), 0xadc83b19));
  for (size_t i = 0; i < seen.size(); ++i)
    for (size_t j = i + 1; j < seen.size(); ++j) EXPECT_NE(seen[i], seen[j]);
  Pattern p = PatternOf("a");
  EXPECT_LT(p.index, kRegisters);
  EXPECT_GE(p.count, 1);
  EXPECT_LE(p.count, kQ + 1);
}

}  // namespace
}  // namespace lapse::engine::hll
