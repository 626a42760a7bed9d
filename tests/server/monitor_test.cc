// MONITOR's line (server/monitor.h): Redis 7.0's format and its sdscatrepr quoting.
#include <gtest/gtest.h>

#include "server/monitor.h"

namespace lapse::server {
namespace {

TEST(MonitorLineTest, FormatsAsRedis) {
  std::vector<std::string_view> args = {"SET", "k", "v"};
  EXPECT_EQ(FormatMonitorLine(1700000000, 123456, 0, "127.0.0.1:5555", args),
            "+1700000000.123456 [0 127.0.0.1:5555] \"SET\" \"k\" \"v\"\r\n");
  EXPECT_EQ(FormatMonitorLine(1700000000, 7, 3, "lua", {"get", ""}), "+1700000000.000007 [3 lua] \"get\" \"\"\r\n");
}

TEST(MonitorLineTest, QuotesLikeSdscatrepr) {
  std::string_view arg("a\"\\\n\r\t\a\b\x01\xff~ ");
  EXPECT_EQ(FormatMonitorLine(1, 0, 0, "lua", {arg}), "+1.000000 [0 lua] \"a\\\"\\\\\\n\\r\\t\\a\\b\\x01\\xff~ \"\r\n");
}

TEST(MonitorLineTest, HidesRedisAdminCommands) {
  EXPECT_TRUE(HiddenFromMonitor("config|get"));
  EXPECT_TRUE(HiddenFromMonitor("debug"));
  EXPECT_TRUE(HiddenFromMonitor("client|kill"));
  EXPECT_FALSE(HiddenFromMonitor("client|id"));
  EXPECT_FALSE(HiddenFromMonitor("get"));
}

}  // namespace
}  // namespace lapse::server
