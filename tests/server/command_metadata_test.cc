// The command metadata of server/command_metadata.h: every command and subcommand of the table
// has some (redis-cli shows no hint and COMMAND DOCS no entry for one without), the tables stay
// sorted for their binary search, the token format renders in both protocols, and key specs
// find keys as Redis 7.0 does.
#include "server/command_metadata.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"

namespace lapse::server {
namespace {

TEST(CommandMetadataTest, EveryCommandAndSubcommandHasMetadata) {
  CommandTable table = BuildCommandTable();
  for (const CommandSpec* spec : table.All()) {
    if (spec->flags & kNotListed) continue;
    const CommandMetadata* meta = FindCommandMetadata(spec->name);
    ASSERT_NE(meta, nullptr) << spec->name << " has no docs: add it to scripts/lapse_command_docs.py";
    EXPECT_NE(meta->docs.find("^summary^"), std::string_view::npos) << spec->name;
    for (const SubcommandSpec& sub : spec->subcommands) {
      EXPECT_NE(FindCommandMetadata(sub.name), nullptr) << sub.name << " has no docs";
    }
  }
}

TEST(CommandMetadataTest, TablesAreSortedWithoutDuplicates) {
  for (const auto* metadata : {&RedisCommandMetadata(), &LapseCommandMetadata()}) {
    for (size_t i = 1; i < metadata->size(); ++i) {
      EXPECT_LT((*metadata)[i - 1].name, (*metadata)[i].name);
    }
  }
}

TEST(CommandMetadataTest, LookupIsCaseInsensitiveAndPrefersLapse) {
  const CommandMetadata* set = FindCommandMetadata("SeT");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->name, "set");
  EXPECT_NE(FindCommandMetadata("client|list"), nullptr);
  EXPECT_NE(FindCommandMetadata("iput"), nullptr);
  EXPECT_EQ(FindCommandMetadata("nosuch"), nullptr);
}

std::string Render(std::string_view tokens, protocol::RespVersion version) {
  std::string out;
  protocol::ReplyWriter writer(&out, version);
  WriteMetadataTokens(writer, tokens);
  return out;
}

TEST(CommandMetadataTest, TokensRenderInBothProtocols) {
  std::string_view tokens = "%2^name^$%odd^flags^~2^+optional^:-3^*1^";
  EXPECT_EQ(Render(tokens, protocol::RespVersion::kResp3),
            "%2\r\n$4\r\nname\r\n$4\r\n%odd\r\n$5\r\nflags\r\n~2\r\n+optional\r\n:-3\r\n*1\r\n$0\r\n\r\n");
  EXPECT_EQ(Render(tokens, protocol::RespVersion::kResp2),
            "*4\r\n$4\r\nname\r\n$4\r\n%odd\r\n$5\r\nflags\r\n*2\r\n+optional\r\n:-3\r\n*1\r\n$0\r\n\r\n");
}

std::vector<std::string> Keys(std::string_view command, std::vector<std::string_view> args) {
  const CommandMetadata* meta = FindCommandMetadata(command);
  EXPECT_NE(meta, nullptr);
  std::vector<std::string> keys;
  for (const FoundKey& key : FindKeys(command, ParseKeySpecs(meta->info_tail), args)) {
    keys.emplace_back(args[key.index]);
  }
  return keys;
}

TEST(CommandMetadataTest, KeySpecsFindKeysAsRedisDoes) {
  // index + range
  EXPECT_EQ(Keys("mset", {"MSET", "a", "1", "b", "2"}), (std::vector<std::string>{"a", "b"}));
  // keyword searched backwards from the end
  EXPECT_EQ(Keys("xread", {"XREAD", "COUNT", "2", "STREAMS", "s1", "s2", "0", "0"}),
            (std::vector<std::string>{"s1", "s2"}));
  // keynum
  EXPECT_EQ(Keys("zunionstore", {"ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"}),
            (std::vector<std::string>{"d", "a", "b"}));
  // an unparsable numkeys falls back to Redis's own finder, which reads it as atoi does
  EXPECT_EQ(Keys("zunion", {"ZUNION", "2x", "a", "b"}), (std::vector<std::string>{"a", "b"}));
  // unknown specs: SORT's STORE is found by Redis's own finder
  EXPECT_EQ(Keys("sort", {"SORT", "k", "BY", "w", "STORE", "d"}), (std::vector<std::string>{"k", "d"}));
  // lapse's own: the container
  EXPECT_EQ(Keys("iput", {"IPUT", "c", "id", "{}", "NX"}), (std::vector<std::string>{"c"}));
}

TEST(CommandMetadataTest, VariableFlagsComeFromTheArguments) {
  const CommandMetadata* set = FindCommandMetadata("set");
  std::vector<std::string_view> plain = {"SET", "k", "v"};
  std::vector<std::string_view> get = {"SET", "k", "v", "get"};
  auto specs = ParseKeySpecs(set->info_tail);
  EXPECT_EQ(FindKeys("set", specs, plain)[0].flags, (std::vector<std::string_view>{"OW", "update"}));
  EXPECT_EQ(FindKeys("set", specs, get)[0].flags, (std::vector<std::string_view>{"RW", "access", "update"}));
}

}  // namespace
}  // namespace lapse::server
