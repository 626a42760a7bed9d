// The ACL registry on its own (server/acl.h): rules, checks, descriptions, loading, and what
// a change does to the clients of a user. The replies of the ACL command are tested against
// redis-server in tests/integration/test_acl.py.
#include <gtest/gtest.h>

#include "server/acl.h"
#include "server/client_session.h"

namespace lapse::server {
namespace {

class AclTest : public ::testing::Test {
 protected:
  std::optional<std::string> Set(std::string_view name, std::vector<std::string_view> rules) {
    return acl_.SetUser(name, rules);
  }
  std::optional<AclDenial> Check(std::string_view user, std::vector<std::string_view> args) {
    const CommandSpec* spec = table_.Find(args[0]);
    uint32_t stat_id = spec->stat_id;
    std::string name = spec->name;
    if (!spec->subcommands.empty()) {
      const SubcommandSpec* sub = spec->FindSubcommand(args[1]);
      stat_id = sub->stat_id;
      name = sub->name;
    }
    return CheckCommand(*acl_.Find(user), *spec, stat_id, name, Args(args));
  }

  CommandTable table_ = BuildCommandTable();
  ClientRegistry clients_;
  Acl acl_{table_, clients_};
};

TEST_F(AclTest, PasswordsAreSha256) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ASSERT_EQ(Set("alice", {"on", ">abc"}), std::nullopt);
  EXPECT_TRUE(acl_.Find("alice")->PasswordMatches("abc"));
  EXPECT_FALSE(acl_.Find("alice")->PasswordMatches("abd"));
}

TEST_F(AclTest, AFailingRuleChangesNothing) {
  ASSERT_EQ(Set("alice", {"on", "~k*", "+get"}), std::nullopt);
  std::string before = Acl::Describe(*acl_.Find("alice"), table_);
  EXPECT_EQ(Set("alice", {"resetkeys", "+set", "+nosuch"}),
            "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  EXPECT_EQ(Acl::Describe(*acl_.Find("alice"), table_), before);
}

TEST_F(AclTest, KeysNeedTheRightPermission) {
  ASSERT_EQ(Set("alice", {"+@all", "%R~r*", "%W~w*", "~app-*"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"get", "r1"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"set", "r1", "v"})->reason, AclDenial::kKey);
  EXPECT_EQ(Check("alice", {"set", "w1", "v"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"incr", "w1"})->object, "w1");  // reads too
  // EVAL's keys are those its count names, and each needs read and write (its key spec is
  // RW ACCESS UPDATE): Redis refuses r1, the first; a container command's key is the container.
  EXPECT_EQ(Check("alice", {"eval", "return 1", "2", "r1", "x"})->object, "r1");
  EXPECT_EQ(Check("alice", {"eval", "return 1", "1", "x", "r1"})->object, "x");
  EXPECT_EQ(Check("alice", {"eval", "return 1", "0", "x"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"iget", "app-1", "id"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"iget", "other", "id"})->object, "other");
}

TEST_F(AclTest, ChannelPatternsAreLiteralForPsubscribe) {
  ASSERT_EQ(Set("alice", {"+@all", "&news.*"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"publish", "news.a", "m"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"psubscribe", "news.*"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"psubscribe", "news.?"})->reason, AclDenial::kChannel);
}

TEST_F(AclTest, SubcommandsHaveBitsOfTheirOwn) {
  ASSERT_EQ(Set("alice", {"-@all", "+client|id", "+config", "-config|set"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"client", "id"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"client", "kill", "ID", "1"})->object, "client|kill");
  EXPECT_EQ(Check("alice", {"config", "get", "x"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"config", "set", "x", "y"})->object, "config|set");
  EXPECT_EQ(Acl::DescribeCommands(*acl_.Find("alice"), table_), "-@all +client|id +config -config|set");
}

TEST_F(AclTest, DescriptionAppliesCategoriesBestFit) {
  ASSERT_EQ(Set("alice", {"+@all", "-@hash", "+@string", "-@hash"}), std::nullopt);
  EXPECT_EQ(Acl::DescribeCommands(*acl_.Find("alice"), table_), "+@all -@hash");
  ASSERT_EQ(Set("alice", {"-@all", "+@read", "-@write"}), std::nullopt);
  EXPECT_EQ(Acl::DescribeCommands(*acl_.Find("alice"), table_), "-@all +@read");
}

TEST_F(AclTest, ASelectorAllowsACommandWhole) {
  ASSERT_EQ(Set("alice", {"~a*", "+get", "(~b*", "+get", "+mget)", "(%W~w* +set)"}), std::nullopt);
  ASSERT_EQ(acl_.Find("alice")->selectors.size(), 2u);
  EXPECT_EQ(Check("alice", {"get", "a1"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"get", "b1"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"mget", "b1", "b2"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"set", "w1", "v"}), std::nullopt);
  EXPECT_EQ(Check("alice", {"get", "w1"})->reason, AclDenial::kKey);
  EXPECT_EQ(Check("alice", {"hget", "a1", "f"})->reason, AclDenial::kCommand);
  // the root may not MGET, the first selector refuses a1 (argument 1), the second MGET
  std::optional<AclDenial> denial = Check("alice", {"mget", "b1", "a1", "b2"});
  ASSERT_TRUE(denial);
  EXPECT_EQ(denial->object, "a1");
  EXPECT_EQ(denial->arg_index, 2u);
}

TEST_F(AclTest, SelectorsDoNotMakeAUserUnrestricted) {
  ASSERT_EQ(Set("alice", {"(~* &* +@all)"}), std::nullopt);
  EXPECT_FALSE(acl_.Find("alice")->Unrestricted());
  EXPECT_EQ(Check("alice", {"get", "k"}), std::nullopt);
  ASSERT_EQ(Set("bob", {"~*", "&*", "+@all", "(+get)"}), std::nullopt);
  EXPECT_TRUE(acl_.Find("bob")->Unrestricted());
}

TEST_F(AclTest, SelectorArgumentsAreMerged) {
  std::vector<std::string_view> args = {"on", "(~a", "+get)", "(+set)", "(~x"};
  size_t unmatched = 0;
  EXPECT_EQ(MergeSelectorArguments(std::span(args).first(4), &unmatched),
            (std::vector<std::string>{"on", "(~a +get)", "(+set)"}));
  EXPECT_EQ(MergeSelectorArguments(args, &unmatched), std::nullopt);
  EXPECT_EQ(unmatched, 4u);
  EXPECT_EQ(Set("alice", args), "ERR Unmatched parenthesis in acl selector starting at '(~x'.");
  EXPECT_EQ(acl_.Find("alice"), nullptr);
}

TEST_F(AclTest, LoadingReadsSelectorsBack) {
  ASSERT_EQ(Set("alice", {"on", "nopass", "~a", "(~b*", "&c", "+get)"}), std::nullopt);
  std::string line = Acl::Describe(*acl_.Find("alice"), table_);
  EXPECT_EQ(line, "user alice on nopass ~a resetchannels -@all (~b* resetchannels &c -@all +get)");
  ASSERT_EQ(acl_.LoadUsers(line + "\n", "f"), std::nullopt);
  EXPECT_EQ(Acl::Describe(*acl_.Find("alice"), table_), line);
  EXPECT_EQ(acl_.LoadUsers("user bob (~a on)\n", "f"), "f:1: Syntax error.");
  EXPECT_EQ(acl_.LoadUsers("user bob (~a\n", "f"), "f:1: Unmatched parenthesis in acl selector starting at '(~a'.");
}

TEST_F(AclTest, LoadingKeepsTheDefaultUserUnlessDescribed) {
  acl_.SetRequirePass("secret");
  ASSERT_EQ(acl_.LoadUsers("user alice on nopass +get\n", "f"), std::nullopt);
  EXPECT_TRUE(acl_.Find("default")->PasswordMatches("secret"));
  ASSERT_EQ(acl_.LoadUsers("user default on nopass +@all ~*\n", "f"), std::nullopt);
  EXPECT_EQ(acl_.Find("alice"), nullptr);
  EXPECT_EQ(Acl::Describe(*acl_.Find("default"), table_), "user default on nopass ~* resetchannels +@all");
  EXPECT_EQ(acl_.LoadUsers("user bob on +nosuch\n", "f"),
            "f:1: Error in applying operation '+nosuch': Unknown command or category name in ACL.");
  EXPECT_NE(acl_.Find("default"), nullptr);
}

TEST_F(AclTest, ChangesReachTheUsersClients) {
  auto client = clients_.Add("a", "b", 0);
  int killed = 0;
  client->kill = [&] { ++killed; };
  ASSERT_EQ(Set("alice", {"on", "+@all", "~*", "&*"}), std::nullopt);
  acl_.Attach(*client, "alice");
  EXPECT_FALSE(client->acl_restricted.load());
  EXPECT_EQ(clients_.User(*client), "alice");
  ASSERT_EQ(Set("alice", {"-get"}), std::nullopt);
  EXPECT_TRUE(client->acl_restricted.load());
  ASSERT_EQ(Set("alice", {"off"}), std::nullopt);
  EXPECT_EQ(killed, 0);  // as in Redis 7.0, turning a user off keeps its connections
  std::vector<std::string_view> names = {"alice"};
  EXPECT_EQ(acl_.DeleteUsers(names), 1u);
  EXPECT_EQ(killed, 1);
}

}  // namespace
}  // namespace lapse::server
