// CONFIG parameter kinds (server/config_options.h) and Config's set/get: each number is read
// by the rule Redis 7.0 uses for that kind of parameter, checked against redis-server 7.0.15.
#include <gtest/gtest.h>

#include "server/config.h"
#include "server/config_options.h"

namespace lapse::server {
namespace {

TEST(ConfigOptionsTest, StrtollAcceptsWhatCStrtollReadsWhole) {
  EXPECT_EQ(ParseStrtoll("5"), 5);
  EXPECT_EQ(ParseStrtoll("+5"), 5);
  EXPECT_EQ(ParseStrtoll("-0"), 0);
  EXPECT_EQ(ParseStrtoll("010"), 10);
  EXPECT_EQ(ParseStrtoll(" \t7"), 7);
  EXPECT_EQ(ParseStrtoll(""), 0);  // no digits, and the end is the string's end
  EXPECT_EQ(ParseStrtoll("99999999999999999999"), INT64_MAX);
  EXPECT_EQ(ParseStrtoll("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseStrtoll("-99999999999999999999"), INT64_MIN);
  EXPECT_EQ(ParseStrtoll("+"), std::nullopt);
  EXPECT_EQ(ParseStrtoll(" "), std::nullopt);
  EXPECT_EQ(ParseStrtoll("5 "), std::nullopt);
  EXPECT_EQ(ParseStrtoll("10abc"), std::nullopt);
  EXPECT_EQ(ParseStrtoll("0x10"), std::nullopt);
  EXPECT_EQ(ParseStrtoll("1e3"), std::nullopt);
}

TEST(ConfigOptionsTest, MemoryValuesFollowMemtoull) {
  EXPECT_EQ(ParseMemory("1kb"), 1024u);
  EXPECT_EQ(ParseMemory("1K"), 1000u);
  EXPECT_EQ(ParseMemory("gb"), 0u);
  EXPECT_EQ(ParseMemory(""), 0u);
  EXPECT_EQ(ParseMemory("-1"), std::nullopt);
  EXPECT_EQ(ParseMemory("1tb"), std::nullopt);
  EXPECT_EQ(ParseMemory("18446744073709551616"), UINT64_MAX);
}

TEST(ConfigOptionsTest, IntegerParametersAreReadByString2ll) {
  Config config;
  EXPECT_EQ(config.Set("maxmemory-samples", "7"), std::nullopt);
  for (const char* bad : {"010", "-0", "+5", " 5", "5abc", "00", "99999999999999999999", ""}) {
    EXPECT_EQ(config.Set("maxmemory-samples", bad),
              "ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument couldn't be "
              "parsed into an integer")
        << bad;
  }
  EXPECT_EQ(config.Set("maxmemory-samples", "0"),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument must be between 1 "
            "and 2147483647 inclusive");
  EXPECT_EQ(config.Get("maxmemory-samples")[0].second, "7");
  EXPECT_NE(config.Set("hz", "010"), std::nullopt);
  EXPECT_EQ(config.Set("hz", "0"), std::nullopt);
  EXPECT_EQ(config.Get("hz")[0].second, "1");
}

TEST(ConfigOptionsTest, OutputLimitSecondsAreStrtollKeptInACInt) {
  Config config;
  auto normal = [&] { return config.Get("client-output-buffer-limit")[0].second.substr(0, 30); };
  EXPECT_EQ(config.Set("client-output-buffer-limit", "normal 0 0 +5"), std::nullopt);
  EXPECT_EQ(normal().substr(0, 13), "normal 0 0 5 ");
  EXPECT_EQ(config.Set("client-output-buffer-limit", "normal 0 0 010"), std::nullopt);
  EXPECT_EQ(normal().substr(0, 14), "normal 0 0 10 ");
  EXPECT_EQ(config.Set("client-output-buffer-limit", "normal 0 0 "), std::nullopt);
  EXPECT_EQ(normal().substr(0, 13), "normal 0 0 0 ");
  EXPECT_EQ(config.Set("client-output-buffer-limit", "normal 0 0 100000000000000000"), std::nullopt);
  EXPECT_EQ(normal().substr(0, 22), "normal 0 0 1569325056 ");
  EXPECT_EQ(config.Set("client-output-buffer-limit", "normal 0 0 4294967296"), std::nullopt);
  EXPECT_EQ(normal().substr(0, 13), "normal 0 0 0 ");
  const std::string refused =
      "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, soft or "
      "soft_seconds setting in buffer limit configuration.";
  // Past INT_MAX the kept int is negative, and LLONG_MAX keeps -1.
  for (const char* bad : {"2147483648", "9223372036854775807", "99999999999999999999", "10abc", "abc", "-1"}) {
    EXPECT_EQ(config.Set("client-output-buffer-limit", std::string("normal 0 0 ") + bad), refused) << bad;
  }
  EXPECT_EQ(normal().substr(0, 13), "normal 0 0 0 ");
}

TEST(ConfigOptionsTest, SaveRulesAreStrtollWithChangesKeptInACInt) {
  Config config;
  auto save = [&] { return config.Get("save")[0].second; };
  EXPECT_EQ(config.Set("save", "+5 +1"), std::nullopt);
  EXPECT_EQ(save(), "5 1");
  EXPECT_EQ(config.Set("save", "05 -0"), std::nullopt);
  EXPECT_EQ(save(), "5 0");
  EXPECT_EQ(config.Set("save", "99999999999999999999 1"), std::nullopt);
  EXPECT_EQ(save(), "9223372036854775807 1");
  EXPECT_EQ(config.Set("save", "5 99999999999999999999"), std::nullopt);
  EXPECT_EQ(save(), "5 -1");
  EXPECT_EQ(config.Set("save", "5 4294967296"), std::nullopt);
  EXPECT_EQ(save(), "5 0");
  const std::string refused = "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters";
  for (const char* bad : {" 5 1", "5  1", "5 1 ", "5 1a", "0 1", "5 -1", "5"}) {
    EXPECT_EQ(config.Set("save", bad), refused) << bad;
  }
  EXPECT_EQ(save(), "5 0");
  EXPECT_EQ(config.Set("save", ""), std::nullopt);
  EXPECT_EQ(save(), "");
}

TEST(ConfigOptionsTest, AFileSaveLineAfterAnEmptyOneStartsTheRules) {
  Config config;
  EXPECT_EQ(config.LoadFromText("save \"\"\nsave 900 1\nsave 300 10\n"), std::nullopt);
  EXPECT_EQ(config.Get("save")[0].second, "900 1 300 10");
}

TEST(ConfigOptionsTest, EnumParametersListTheirChoices) {
  Config config;
  EXPECT_EQ(config.Set("appendfsync", "ALWAYS"), std::nullopt);
  EXPECT_EQ(config.Get("appendfsync")[0].second, "always");
  EXPECT_EQ(config.Set("appendfsync", "every"),
            "ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the "
            "following: everysec, always, no");
  EXPECT_EQ(config.Set("loglevel", "nothing"), std::nullopt);
  EXPECT_EQ(config.Get("loglevel")[0].second, "nothing");
}

TEST(ConfigOptionsTest, AFileCommentIsSkippedBeforeItsQuotesAreRead) {
  // Debian's redis.conf has comments with a lone quote ("partially ... resynchronize").
  Config config;
  EXPECT_EQ(config.LoadFromText("# a \"partially\n  # and 'another\nport 7000\n"), std::nullopt);
  EXPECT_EQ(config.Get("port")[0].second, "7000");
  EXPECT_EQ(config.LoadFromText("port \"7001\n"), "line 1: unbalanced quotes");
}

TEST(ConfigOptionsTest, LinesAreSplitAsSdssplitargsSplitsThem) {
  using Words = std::vector<std::string>;
  EXPECT_EQ(SplitConfigLine("  a  \"b c\"  'd e' "), (Words{"a", "b c", "d e"}));
  EXPECT_EQ(SplitConfigLine("x \"\\x41\\n\\\"\" 'it\\'s'"), (Words{"x", "A\n\"", "it's"}));
  EXPECT_EQ(SplitConfigLine("x \"\\xZZ\""), (Words{"x", "xZZ"}));
  EXPECT_EQ(SplitConfigLine("x \"a\"b"), std::nullopt);  // a closing quote must end the word
  EXPECT_EQ(SplitConfigLine("x 'a"), std::nullopt);
  // A quote inside a word opens a quoted part of it.
  EXPECT_EQ(SplitConfigLine("x a\"b c\" d"), (Words{"x", "ab c", "d"}));
  EXPECT_EQ(SplitConfigLine("x a\"b"), std::nullopt);
}

TEST(ConfigOptionsTest, MultiWordParametersTakeSeveralWordsOnAFileLine) {
  Config config;
  EXPECT_EQ(config.LoadFromText("bind 127.0.0.1 -::1\nlatency-tracking-info-percentiles 50 99 99.9\n"
                                "oom-score-adj-values 0 200 800\n"),
            std::nullopt);
  EXPECT_EQ(config.Get("bind")[0].second, "127.0.0.1 -::1");
  EXPECT_EQ(config.Get("latency-tracking-info-percentiles")[0].second, "50 99 99.9");
  EXPECT_EQ(config.LoadFromText("port 1 2\n"), "line 1: 'port' takes one argument");
}

TEST(ConfigOptionsTest, BindKeepsItsAddressesAsGivenUpToSixteen) {
  EXPECT_EQ(SplitBindAddresses(""), std::vector<std::string>{});
  EXPECT_EQ(SplitBindAddresses("* -::*"), (std::vector<std::string>{"*", "-::*"}));
  // Single spaces separate: a double one leaves an empty address, which then fails to bind.
  EXPECT_EQ(SplitBindAddresses("a  b"), (std::vector<std::string>{"a", "", "b"}));
  Config config;
  std::string sixteen, seventeen;
  for (int i = 0; i < 16; ++i) sixteen += (i ? " " : "") + std::string("127.0.0.1");
  seventeen = sixteen + " 127.0.0.1";
  EXPECT_EQ(config.Set("bind", sixteen), std::nullopt);
  EXPECT_EQ(config.Set("bind", seventeen),
            "ERR CONFIG SET failed (possibly related to argument 'bind') - Too many bind addresses specified.");
  EXPECT_EQ(config.Get("bind")[0].second, sixteen);
}

TEST(ConfigOptionsTest, UnixSocketPermIsOctal) {
  Config config;
  EXPECT_EQ(config.LoadFromText("unixsocketperm 0750\n"), std::nullopt);
  EXPECT_EQ(config.Get("unixsocketperm")[0].second, "750");
  EXPECT_EQ(config.LoadFromText("unixsocketperm 8\n"),
            "line 1: ERR CONFIG SET failed (possibly related to argument 'unixsocketperm') - argument couldn't be "
            "parsed into an integer");
  EXPECT_EQ(config.LoadFromText("unixsocketperm 1000\n"),
            "line 1: ERR CONFIG SET failed (possibly related to argument 'unixsocketperm') - argument must be between "
            "0 and 777 inclusive");
  EXPECT_EQ(config.Get("unixsocketperm")[0].second, "750");
}

}  // namespace
}  // namespace lapse::server
