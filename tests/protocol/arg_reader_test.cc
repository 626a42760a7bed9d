#include "protocol/arg_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "protocol/errors.h"

namespace lapse::protocol {
namespace {

using namespace std::string_literals;

bool Int64Ok(std::string_view s, int64_t expected) {
  int64_t v = 12345;
  return ParseInt64(s, &v) && v == expected;
}

bool Int64Rejects(std::string_view s) {
  int64_t v = 12345;
  return !ParseInt64(s, &v) && v == 12345;
}

TEST(ParseInt64Test, AcceptsCanonicalIntegers) {
  EXPECT_TRUE(Int64Ok("0", 0));
  EXPECT_TRUE(Int64Ok("1", 1));
  EXPECT_TRUE(Int64Ok("-1", -1));
  EXPECT_TRUE(Int64Ok("1234567890", 1234567890));
  EXPECT_TRUE(Int64Ok("9223372036854775807", std::numeric_limits<int64_t>::max()));
  EXPECT_TRUE(Int64Ok("-9223372036854775808", std::numeric_limits<int64_t>::min()));
}

TEST(ParseInt64Test, RejectsWhatString2llRejects) {
  for (std::string s : {"", "-", "+1", "01", "00", "-0", "-01", " 1", "1 ", "1a", "a", "1.0",
                        "1e3", "0x10", "9223372036854775808", "-9223372036854775809",
                        "18446744073709551616", "99999999999999999999", "000000000000000000001"}) {
    EXPECT_TRUE(Int64Rejects(s)) << "'" << s << "'";
  }
  EXPECT_TRUE(Int64Rejects("1\0"s));
  EXPECT_TRUE(Int64Rejects("\0"s));
}

TEST(ParseLongDoubleTest, Accepts) {
  long double v = 0;
  ASSERT_TRUE(ParseLongDouble("1.5", &v));
  EXPECT_EQ(v, 1.5L);
  ASSERT_TRUE(ParseLongDouble("-10", &v));
  EXPECT_EQ(v, -10.0L);
  ASSERT_TRUE(ParseLongDouble("+3", &v));  // strtold accepts it, so Redis does
  EXPECT_EQ(v, 3.0L);
  ASSERT_TRUE(ParseLongDouble("1e3", &v));
  EXPECT_EQ(v, 1000.0L);
  ASSERT_TRUE(ParseLongDouble("0x10", &v));
  EXPECT_EQ(v, 16.0L);
  ASSERT_TRUE(ParseLongDouble("inf", &v));
  EXPECT_TRUE(std::isinf(v) && v > 0);
  ASSERT_TRUE(ParseLongDouble("-inf", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  ASSERT_TRUE(ParseLongDouble("1e400", &v));  // fits a long double, not a double
  ASSERT_TRUE(ParseLongDouble(std::string(5000, '0') + "1", &v));  // under the 5k cap
  EXPECT_EQ(v, 1.0L);
}

TEST(ParseLongDoubleTest, Rejects) {
  long double v = 7;
  for (std::string s : {"", " 1", "\t1", "1 ", "1a", "abc", "nan", "-nan", "1e99999", "-1e99999",
                        "1e-99999", "."}) {
    EXPECT_FALSE(ParseLongDouble(s, &v)) << "'" << s << "'";
  }
  EXPECT_FALSE(ParseLongDouble("1\0"s, &v));
  EXPECT_FALSE(ParseLongDouble(std::string(5120, '1'), &v));  // Redis's 5k buffer
  EXPECT_EQ(v, 7);
}

TEST(ParseDoubleTest, Accepts) {
  double v = 0;
  ASSERT_TRUE(ParseDouble("3.25", &v));
  EXPECT_EQ(v, 3.25);
  ASSERT_TRUE(ParseDouble("-0", &v));
  EXPECT_TRUE(v == 0 && std::signbit(v));
  ASSERT_TRUE(ParseDouble("+inf", &v));
  EXPECT_TRUE(std::isinf(v));
  ASSERT_TRUE(ParseDouble("-Infinity", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  ASSERT_TRUE(ParseDouble("1e-310", &v));  // denormal: ERANGE but not zero, as in Redis
  EXPECT_GT(v, 0);
  ASSERT_TRUE(ParseDouble("0." + std::string(300, '0') + "1", &v));  // longer than the stack buffer
  EXPECT_GT(v, 0);
}

TEST(ParseDoubleTest, Rejects) {
  double v = 7;
  for (std::string s : {"", " 1", "\n1", "1 ", "1x", "nan", "NaN", "1e400", "-1e400", "1e-400",
                        "--1", "e1"}) {
    EXPECT_FALSE(ParseDouble(s, &v)) << "'" << s << "'";
  }
  EXPECT_FALSE(ParseDouble("1\0"s, &v));
  EXPECT_FALSE(ParseDouble(std::string(300, '1') + "x", &v));
  EXPECT_EQ(v, 7);
}

TEST(EqualsIgnoreCaseTest, AsciiOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("GET", "get"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_TRUE(EqualsIgnoreCase("nX1", "Nx1"));
  EXPECT_FALSE(EqualsIgnoreCase("get", "gets"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));  // differ by 0x20 but are not letters
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
}

class ArgReaderTest : public testing::Test {
 protected:
  ArgReader Reader(std::vector<std::string> args) {
    storage_ = std::move(args);
    views_.assign(storage_.begin(), storage_.end());
    return ArgReader(views_);
  }

  std::vector<std::string> storage_;
  std::vector<std::string_view> views_;
};

TEST_F(ArgReaderTest, ReadsInOrder) {
  ArgReader r = Reader({"key", "EX", "10", "2.5", "tail"});
  EXPECT_EQ(r.remaining(), 5u);
  EXPECT_EQ(r.Next(), "key");
  EXPECT_FALSE(r.NextIf("PX"));
  EXPECT_TRUE(r.NextIf("ex"));
  EXPECT_EQ(r.NextInt64(), 10);
  EXPECT_EQ(r.NextDouble(), 2.5);
  EXPECT_EQ(r.position(), 4u);
  EXPECT_TRUE(r.HasMore());
  EXPECT_EQ(r.Next(), "tail");
  EXPECT_FALSE(r.HasMore());
  EXPECT_FALSE(r.NextIf("tail"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.error(), "");
}

TEST_F(ArgReaderTest, NextPastEndLatchesSyntaxError) {
  ArgReader r = Reader({});
  EXPECT_EQ(r.Next(), "");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), errors::kSyntax);
}

TEST_F(ArgReaderTest, BadInteger) {
  ArgReader r = Reader({"01", "5"});
  EXPECT_EQ(r.NextInt64(), 0);
  EXPECT_EQ(r.error(), errors::kNotInteger);
}

TEST_F(ArgReaderTest, BadFloat) {
  ArgReader r = Reader({"nan"});
  EXPECT_EQ(r.NextDouble(), 0);
  EXPECT_EQ(r.error(), errors::kNotFloat);
}

TEST_F(ArgReaderTest, MissingNumberIsSyntaxError) {
  ArgReader r = Reader({});
  EXPECT_EQ(r.NextInt64(), 0);
  EXPECT_EQ(r.error(), errors::kSyntax);
  ArgReader d = Reader({});
  EXPECT_EQ(d.NextDouble(), 0);
  EXPECT_EQ(d.error(), errors::kSyntax);
}

TEST_F(ArgReaderTest, FirstErrorWinsAndLaterReadsAreNeutral) {
  ArgReader r = Reader({"x", "7", "NX", "1.5"});
  EXPECT_EQ(r.NextInt64(), 0);
  EXPECT_EQ(r.NextInt64(), 0);
  EXPECT_FALSE(r.NextIf("NX"));
  EXPECT_EQ(r.NextDouble(), 0);
  EXPECT_EQ(r.Next(), "");
  r.Fail(errors::kWrongType);
  EXPECT_EQ(r.error(), errors::kNotInteger);
}

TEST_F(ArgReaderTest, FailExhaustsTheReaderSoOptionLoopsEnd) {
  ArgReader r = Reader({"NX", "BOGUS", "XX"});
  int iterations = 0;
  bool nx = false, xx = false;
  while (r.HasMore() && ++iterations < 10) {
    if (r.NextIf("NX")) {
      nx = true;
    } else if (r.NextIf("XX")) {
      xx = true;
    } else {
      r.Fail(errors::kSyntax);
    }
  }
  EXPECT_EQ(iterations, 2);
  EXPECT_TRUE(nx);
  EXPECT_FALSE(xx);
  EXPECT_EQ(r.error(), errors::kSyntax);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST_F(ArgReaderTest, ExplicitFail) {
  ArgReader r = Reader({"a"});
  r.Fail(errors::kNoSuchKey);
  r.Fail(errors::kSyntax);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), errors::kNoSuchKey);
}

}  // namespace
}  // namespace lapse::protocol
