#include "engine/rdb_codec.h"

#include <string>

#include <gtest/gtest.h>

namespace lapse::engine::rdb {
namespace {

TEST(RdbCodecTest, Crc64IsRedisJonesCrc) {
  // The check value in Redis's crc64.c self-test.
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64(0, ""), 0u);
}

TEST(RdbCodecTest, LengthsAndStringsRoundTrip) {
  for (size_t n : {0u, 1u, 63u, 64u, 16383u, 16384u, 70000u}) {
    std::string out;
    AppendString(out, std::string(n, 'x'));
    Reader reader(out);
    auto back = reader.String();
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(back->size(), n);
    EXPECT_TRUE(reader.AtEnd());
  }
  std::string out;
  AppendLength(out, 16384);
  EXPECT_EQ(out, std::string("\x80\x00\x00\x40\x00", 5));
}

TEST(RdbCodecTest, ReadsIntegerAndLzfStrings) {
  const std::string int_bytes("\xc0\xfb\xc1\x39\x30\xc2\x15\xcd\x5b\x07", 10);
  Reader ints(int_bytes);  // a Reader views its bytes: they must outlive it
  EXPECT_EQ(ints.String(), "-5");
  EXPECT_EQ(ints.String(), "12345");
  EXPECT_EQ(ints.String(), "123456789");
  // "aaaaaaaaaa" as LZF (5 bytes): literal "a", then a back reference of 9 bytes at distance 1.
  const std::string lzf_bytes("\xc3\x05\x0a\x00\x61\xe0\x00\x00", 8);
  Reader lzf(lzf_bytes);
  EXPECT_EQ(lzf.String(), std::string(10, 'a'));
  // A back reference before the start is refused.
  EXPECT_FALSE(LzfDecompress(std::string("\x20\x05", 2), 3));
}

TEST(RdbCodecTest, PayloadsAreSealedAndChecked) {
  std::string payload = SealPayload("body");
  ASSERT_EQ(payload.size(), 14u);
  EXPECT_EQ(OpenPayload(payload), "body");
  payload[1] ^= 1;
  EXPECT_FALSE(OpenPayload(payload));
  EXPECT_FALSE(OpenPayload("short"));
}

}  // namespace
}  // namespace lapse::engine::rdb
