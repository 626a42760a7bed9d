// File: tests/engine/bitops_test.cc
//
// The bit algorithms behind the bitmap commands and LCS. Fixed cases pin Redis's documented
// answers (the examples of its BITCOUNT, BITPOS, BITFIELD and LCS pages); randomized cases
// cross-check the word-at-a-time code against a bit-by-bit model of Redis's range rules, and
// the overflow checks against 128-bit arithmetic.

#include "engine/bitops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/lcs.h"

namespace lapse::engine::bitops {
namespace {

using namespace std::string_literals;
using namespace std::string_view_literals;

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Redis's range normalisation, written out bit by bit as a model.
bool ModelRange(size_t len, int64_t start, int64_t end, bool bit_unit, int64_t* first, int64_t* last) {
  int64_t total = static_cast<int64_t>(len) * (bit_unit ? 8 : 1);
  if (start < 0) start += total;
  if (end < 0) end += total;
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  end = std::min(end, total - 1);
  if (start > end) return false;
  *first = bit_unit ? start : start * 8;
  *last = bit_unit ? end : end * 8 + 7;
  return true;
}

uint64_t ModelCount(const std::string& s, int64_t start, int64_t end, bool bit_unit) {
  if (start < 0 && end < 0 && start > end) return 0;
  int64_t first = 0, last = 0;
  if (!ModelRange(s.size(), start, end, bit_unit, &first, &last)) return 0;
  uint64_t n = 0;
  for (int64_t b = first; b <= last; ++b) n += static_cast<uint64_t>(GetBit(s, static_cast<uint64_t>(b)));
  return n;
}

int64_t ModelFind(const std::string& s, int bit, int64_t start, int64_t end, bool end_given, bool bit_unit) {
  int64_t first = 0, last = 0;
  if (!ModelRange(s.size(), start, end, bit_unit, &first, &last)) return -1;
  for (int64_t b = first; b <= last; ++b) {
    if (GetBit(s, static_cast<uint64_t>(b)) == bit) return b;
  }
  return bit == 0 && !end_given ? last + 1 : -1;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  int style = static_cast<int>(rng() % 4);  // runs of 0x00 / 0xff exercise the word skipping
  for (char& c : s) {
    uint64_t r = rng();
    c = static_cast<char>(style == 0 ? r : style == 1 ? (r % 16 == 0 ? r >> 8 : 0) : style == 2 ? (r % 16 == 0 ? r >> 8 : 0xff) : (r & 1 ? 0xff : 0));
  }
  return s;
}

TEST(BitopsTest, SetAndGetBitUseRedisBitOrder) {
  std::string s(2, '\0');
  EXPECT_EQ(SetBit(reinterpret_cast<uint8_t*>(s.data()), 7, 1), 0);
  EXPECT_EQ(s, "\x01\x00"s);
  EXPECT_EQ(SetBit(reinterpret_cast<uint8_t*>(s.data()), 8, 1), 0);
  EXPECT_EQ(s, "\x01\x80"s);
  EXPECT_EQ(SetBit(reinterpret_cast<uint8_t*>(s.data()), 7, 0), 1);
  EXPECT_EQ(GetBit(s, 8), 1);
  EXPECT_EQ(GetBit(s, 9), 0);
  EXPECT_EQ(GetBit(s, 1000), 0);  // past the end
}

TEST(BitopsTest, PopcountCountsEveryLength) {
  for (size_t n = 0; n < 80; ++n) {
    std::string s(n, '\xff');
    EXPECT_EQ(Popcount(U(s), n), n * 8) << n;
  }
}

TEST(BitopsTest, CountRangeMatchesRedisExamples) {
  std::string s = "foobar";
  EXPECT_EQ(CountRange(s, 0, -1, false), 26u);
  EXPECT_EQ(CountRange(s, 0, 0, false), 4u);
  EXPECT_EQ(CountRange(s, 1, 1, false), 6u);
  EXPECT_EQ(CountRange(s, 1, 1, true), 1u);
  EXPECT_EQ(CountRange(s, 5, 30, true), 17u);
  EXPECT_EQ(CountRange(s, -1, -5, false), 0u);     // out of order, both negative
  EXPECT_EQ(CountRange(s, -100, -200, false), 0u);  // ... even when both would clamp to 0
  EXPECT_EQ(CountRange(s, -200, -100, false), 4u);  // clamps to [0, 0]
  EXPECT_EQ(CountRange("", 0, -1, false), 0u);
}

TEST(BitopsTest, FindBitMatchesRedisExamples) {
  EXPECT_EQ(FindBit("\xff\xf0\x00"s, 0, 0, -1, false, false), 12);
  EXPECT_EQ(FindBit("\x00\xff\xf0"s, 1, 2, -1, false, false), 16);
  EXPECT_EQ(FindBit("\x00\xff\xf0"s, 1, 7, 15, true, true), 8);
  EXPECT_EQ(FindBit("\x00\x00\x00"s, 1, 0, -1, false, false), -1);
  // No 0 in a run of ones: past the end without an explicit end, -1 with one.
  EXPECT_EQ(FindBit("\xff\xff"s, 0, 0, -1, false, false), 16);
  EXPECT_EQ(FindBit("\xff\xff"s, 0, 0, -1, true, false), -1);
  EXPECT_EQ(FindBit("\xff\xff"s, 0, 0, -1, true, true), -1);
  EXPECT_EQ(FindBit("", 0, 0, -1, false, false), -1);  // an empty range holds no bit at all
}

TEST(BitopsTest, CountAndFindAgreeWithABitByBitModel) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = RandomBytes(rng, rng() % 70);
    auto pick = [&] { return static_cast<int64_t>(rng() % 1200) - 600; };
    int64_t start = pick() / (rng() % 2 ? 1 : 8), end = pick() / (rng() % 2 ? 1 : 8);
    bool bit_unit = rng() % 2;
    ASSERT_EQ(CountRange(s, start, end, bit_unit), ModelCount(s, start, end, bit_unit)) << iter;
    int bit = static_cast<int>(rng() % 2);
    bool end_given = bit_unit || rng() % 2;
    if (!end_given) end = -1;
    ASSERT_EQ(FindBit(s, bit, start, end, end_given, bit_unit), ModelFind(s, bit, start, end, end_given, bit_unit))
        << iter;
  }
}

TEST(BitopsTest, CombinePadsShorterSourcesWithZeros) {
  std::vector<std::string_view> two = {"\xff\x0f"sv, "\xf0"sv};
  EXPECT_EQ(Combine(BitOp::kAnd, two), "\xf0\x00"s);
  EXPECT_EQ(Combine(BitOp::kOr, two), "\xff\x0f"s);
  EXPECT_EQ(Combine(BitOp::kXor, two), "\x0f\x0f"s);
  std::vector<std::string_view> one = {"\x0f\xff"sv};
  EXPECT_EQ(Combine(BitOp::kNot, one), "\xf0\x00"s);
  std::vector<std::string_view> empty = {""sv, ""sv};
  EXPECT_EQ(Combine(BitOp::kOr, empty), "");
  std::string long_a(100, '\x55'), long_b(90, '\xff');
  std::vector<std::string_view> longs = {long_a, long_b};
  std::string anded = Combine(BitOp::kAnd, longs);
  EXPECT_EQ(anded, std::string(90, '\x55') + std::string(10, '\0'));
}

TEST(BitopsTest, FieldsReadAndWriteAtAnyOffset) {
  std::string s(16, '\0');
  auto* p = reinterpret_cast<uint8_t*>(s.data());
  SetField(p, 0, 8, 0xAB);
  EXPECT_EQ(s[0], '\xab');
  SetField(p, 13, 64, 0x0123456789ABCDEFull);
  EXPECT_EQ(GetUnsignedField(p, 13, 64), 0x0123456789ABCDEFull);
  EXPECT_EQ(GetUnsignedField(s, 13, 64), 0x0123456789ABCDEFull);
  SetField(p, 3, 5, 0x1F);
  EXPECT_EQ(GetSignedField(p, 3, 5), -1);
  EXPECT_EQ(GetUnsignedField(p, 3, 5), 31u);
  // Reading from a string pads past its end with zeros.
  EXPECT_EQ(GetUnsignedField("\xff"s, 4, 8), 0xF0u);
  EXPECT_EQ(GetSignedField("\xff"s, 4, 8), -16);
  EXPECT_EQ(GetUnsignedField("", 1000, 63), 0u);
}

TEST(BitopsTest, FieldsRoundTripRandomly) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string s = RandomBytes(rng, 24);
    std::string before = s;
    unsigned bits = 1 + static_cast<unsigned>(rng() % 64);
    uint64_t offset = rng() % 120;
    uint64_t value = rng();
    SetField(reinterpret_cast<uint8_t*>(s.data()), offset, bits, value);
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    ASSERT_EQ(GetUnsignedField(s, offset, bits), value & mask);
    for (uint64_t b = 0; b < 192; ++b) {  // nothing outside the field changed
      if (b < offset || b >= offset + bits) {
        ASSERT_EQ(GetBit(s, b), GetBit(before, b));
      }
    }
  }
}

TEST(BitopsTest, OverflowMatchesWideArithmetic) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 20000; ++iter) {
    unsigned bits = 1 + static_cast<unsigned>(rng() % 64);
    __int128 smax = bits == 64 ? INT64_MAX : (__int128{1} << (bits - 1)) - 1, smin = -smax - 1;
    int64_t value = static_cast<int64_t>(smin + static_cast<__int128>(rng() % static_cast<uint64_t>(smax - smin)));
    int64_t incr = static_cast<int64_t>(rng()) >> (rng() % 64);
    __int128 sum = static_cast<__int128>(value) + incr;
    int64_t limit = 0;
    int expect = sum > smax ? 1 : sum < smin ? -1 : 0;
    ASSERT_EQ(CheckSignedOverflow(value, incr, bits, Overflow::kSat, &limit), expect) << bits << " " << value << " " << incr;
    if (expect) {
      ASSERT_EQ(limit, expect > 0 ? smax : smin);
      CheckSignedOverflow(value, incr, bits, Overflow::kWrap, &limit);
      __int128 span = __int128{1} << bits;
      __int128 wrapped = ((sum - smin) % span + span) % span + smin;
      ASSERT_EQ(limit, wrapped);
    }
    if (bits == 64) continue;
    uint64_t umax = (1ull << bits) - 1;
    uint64_t uvalue = rng() % (umax + 1);
    __int128 usum = static_cast<__int128>(uvalue) + incr;
    uint64_t ulimit = 0;
    int uexpect = usum > static_cast<__int128>(umax) ? 1 : usum < 0 ? -1 : 0;
    ASSERT_EQ(CheckUnsignedOverflow(uvalue, incr, bits, Overflow::kSat, &ulimit), uexpect);
    if (uexpect) {
      ASSERT_EQ(ulimit, uexpect > 0 ? umax : 0u);
      CheckUnsignedOverflow(uvalue, incr, bits, Overflow::kWrap, &ulimit);
      ASSERT_EQ(ulimit, static_cast<uint64_t>(usum) & umax);
    }
  }
}

TEST(BitopsTest, OverflowKeepsRedisQuirksForSet) {
  uint64_t ulimit = 0;
  // A negative SET on an unsigned field overflows "above": SAT stores the maximum.
  EXPECT_EQ(CheckUnsignedOverflow(static_cast<uint64_t>(-5), 0, 8, Overflow::kSat, &ulimit), 1);
  EXPECT_EQ(ulimit, 255u);
  EXPECT_EQ(CheckUnsignedOverflow(static_cast<uint64_t>(-5), 0, 8, Overflow::kWrap, &ulimit), 1);
  EXPECT_EQ(ulimit, 251u);
  int64_t limit = 0;
  EXPECT_EQ(CheckSignedOverflow(INT64_MIN, 0, 8, Overflow::kSat, &limit), 1);  // Redis's wrap-around compare
  EXPECT_EQ(limit, 127);
  EXPECT_EQ(CheckSignedOverflow(300, 0, 8, Overflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, 44);
  EXPECT_EQ(CheckSignedOverflow(-1, INT64_MIN, 64, Overflow::kSat, &limit), -1);
  EXPECT_EQ(limit, INT64_MIN);
  EXPECT_EQ(CheckSignedOverflow(INT64_MAX, 1, 64, Overflow::kFail, &limit), 1);
}

}  // namespace
}  // namespace lapse::engine::bitops

namespace lapse::engine {
namespace {

uint32_t NaiveLcsLength(std::string_view a, std::string_view b) {
  std::vector<std::vector<uint32_t>> t(a.size() + 1, std::vector<uint32_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

TEST(LcsTest, RedisDocumentationExample) {
  auto r = ComputeLcs("ohmytext", "mynewtext", true, true, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "mytext");
  EXPECT_EQ(r->length, 6u);
  ASSERT_EQ(r->matches.size(), 2u);
  EXPECT_EQ(r->matches[0].a_start, 4u);
  EXPECT_EQ(r->matches[0].a_end, 7u);
  EXPECT_EQ(r->matches[0].b_start, 5u);
  EXPECT_EQ(r->matches[0].b_end, 8u);
  EXPECT_EQ(r->matches[0].len, 4u);
  EXPECT_EQ(r->matches[1].a_start, 2u);
  EXPECT_EQ(r->matches[1].b_start, 0u);
  EXPECT_EQ(r->matches[1].len, 2u);
  auto min4 = ComputeLcs("ohmytext", "mynewtext", false, true, 4);
  ASSERT_EQ(min4->matches.size(), 1u);
  EXPECT_EQ(ComputeLcs("", "abc", true, true, 0)->text, "");
}

TEST(LcsTest, RunsSpellTheSubsequence) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string a(rng() % 20, 'a'), b(rng() % 20, 'a');
    for (char& c : a) c = static_cast<char>('a' + rng() % 3);
    for (char& c : b) c = static_cast<char>('a' + rng() % 3);
    auto r = ComputeLcs(a, b, true, true, 0);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->length, NaiveLcsLength(a, b));
    ASSERT_EQ(r->text.size(), r->length);
    std::string spelled;
    for (auto it = r->matches.rbegin(); it != r->matches.rend(); ++it) {
      ASSERT_EQ(it->a_end - it->a_start, it->b_end - it->b_start);
      ASSERT_EQ(a.substr(it->a_start, it->len), b.substr(it->b_start, it->len));
      spelled += a.substr(it->a_start, it->len);
    }
    ASSERT_EQ(spelled, r->text) << a << " " << b;
  }
}

}  // namespace
}  // namespace lapse::engine

namespace lapse::engine {
namespace {

// BITOP passes a missing key as a default string_view, whose data() is null.
TEST(BitopsTest, CombineTakesAMissingKeyAsEmpty) {
  std::string_view none;
  std::string_view one("\x0f", 1);
  std::string_view sources[] = {none, one};
  EXPECT_EQ(bitops::Combine(bitops::BitOp::kOr, sources), std::string("\x0f", 1));
  EXPECT_EQ(bitops::Combine(bitops::BitOp::kAnd, sources), std::string("\x00", 1));
  std::string_view only_none[] = {none};
  EXPECT_EQ(bitops::Combine(bitops::BitOp::kNot, only_none), "");
}

}  // namespace
}  // namespace lapse::engine
