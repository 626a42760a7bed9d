#include <gtest/gtest.h>

#include "tests/server/test_server.h"

namespace lapse::server::testing {
namespace {

TEST(DispatcherTest, UnknownCommandAndArityAnswerLikeRedis) {
  TestServer t(1);
  EXPECT_EQ(t.Run({"foo", "a", "b"}), Err("ERR unknown command 'foo', with args beginning with: 'a' 'b' "));
  EXPECT_EQ(t.Run({"foo"}), Err("ERR unknown command 'foo', with args beginning with: "));
  EXPECT_EQ(t.Run({"GET"}), Err("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(t.Run({"PiNg"}), "+PONG\r\n");
}

// A container's subcommand is checked like a command of its own, before authentication.
TEST(DispatcherTest, SubcommandsHaveTheirOwnNameAndArity) {
  TestServer t(1, {{"requirepass", "secret"}});
  EXPECT_EQ(t.Run({"COMMAND", "COUNT", "x"}), Err("ERR wrong number of arguments for 'command|count' command"));
  EXPECT_EQ(t.Run({"client", "nope"}), Err("ERR unknown subcommand 'nope'. Try CLIENT HELP."));
  EXPECT_EQ(t.Run({"CLIENT"}), Err("ERR wrong number of arguments for 'client' command"));
  EXPECT_EQ(t.Run({"CLIENT", "ID"}), Err("NOAUTH Authentication required."));
}

std::string LastCommand(ClientSession& session) {
  const std::string* name = session.info->last_command.load();
  return name ? *name : "NULL";
}

// CLIENT LIST's cmd=: the full name of the last command, refused ones included; nothing
// for an unknown command or subcommand.
TEST(DispatcherTest, RecordsTheLastCommand) {
  TestServer t(2);
  EXPECT_EQ(LastCommand(t.session()), "NULL");
  t.Run({"GET", "k"});
  EXPECT_EQ(LastCommand(t.session()), "get");
  t.Run({"Config", "GET", "x"});
  EXPECT_EQ(LastCommand(t.session()), "config|get");
  t.Run({"SET", "k"});
  EXPECT_EQ(LastCommand(t.session()), "set");
  t.Run({"NOPE"});
  EXPECT_EQ(LastCommand(t.session()), "NULL");
  t.Run({"OBJECT", "ENCODING", "k"});
  EXPECT_EQ(LastCommand(t.session()), "object|encoding");
  t.Run({"OBJECT", "NOPE", "k"});
  EXPECT_EQ(LastCommand(t.session()), "NULL");
  // Keys on other shards queue; the name is recorded when the command is admitted.
  t.RunBatch({{"SET", "a", "1"}, {"SET", "b", "2"}, {"SET", "c", "3"}, {"INCR", "d"}});
  EXPECT_EQ(LastCommand(t.session()), "incr");
}

// Replies of a pipelined batch come back in order even when its keys live on every shard
// and errors are interleaved.
TEST(DispatcherTest, PipelineAcrossShardsKeepsOrder) {
  for (int threads : {1, 2, 4}) {
    TestServer t(threads);
    std::vector<std::vector<std::string>> batch;
    std::string expected;
    for (int i = 0; i < 2000; ++i) {
      std::string k = "k" + std::to_string((i / 5) % 97);
      switch (i % 5) {
        case 0:
          batch.push_back({"SET", k, std::to_string(i)});
          expected += kOk;
          break;
        case 1:
          batch.push_back({"GET", k});
          expected += Bulk(std::to_string(i - 1));
          break;
        case 2:
          batch.push_back({"NOPE"});
          expected += Err("ERR unknown command 'NOPE', with args beginning with: ");
          break;
        case 3:
          batch.push_back({"PING"});
          expected += "+PONG\r\n";
          break;
        case 4:
          batch.push_back({"DEL", k});
          expected += Int(1);
          break;
      }
    }
    EXPECT_EQ(t.RunBatch(batch), expected) << threads << " threads";
  }
}

TEST(DispatcherTest, RequirePassGatesEverythingButAuthHelloQuit) {
  TestServer t(2, {{"requirepass", "secret"}});
  EXPECT_EQ(t.Run({"GET", "k"}), Err("NOAUTH Authentication required."));
  EXPECT_EQ(t.Run({"PING"}), Err("NOAUTH Authentication required."));
  EXPECT_EQ(t.Run({"AUTH", "wrong"}), Err("WRONGPASS invalid username-password pair or user is disabled."));
  EXPECT_EQ(t.Run({"AUTH", "secret"}), kOk);
  EXPECT_EQ(t.Run({"PING"}), "+PONG\r\n");
}

TEST(DispatcherTest, Resp3ViaHello) {
  TestServer t(1);
  std::string reply = t.Run({"HELLO", "3"});
  EXPECT_EQ(reply.substr(0, 4), "%7\r\n");
  EXPECT_EQ(t.Run({"GET", "missing"}), "_\r\n");
  EXPECT_EQ(t.Run({"HELLO", "4"}), Err("NOPROTO unsupported protocol version"));
  EXPECT_EQ(t.Run({"HELLO", "2"}).substr(0, 5), "*14\r\n");
  EXPECT_EQ(t.Run({"GET", "missing"}), kNil);
}

TEST(DispatcherTest, SelectIsPerSession) {
  TestServer t(2);
  auto other = t.NewSession();
  EXPECT_EQ(t.Run({"SELECT", "3"}), kOk);
  EXPECT_EQ(t.Run({"SET", "k", "in3"}), kOk);
  EXPECT_EQ(t.Run({"GET", "k"}, other.get()), kNil);
  EXPECT_EQ(t.Run({"SELECT", "3"}, other.get()), kOk);
  EXPECT_EQ(t.Run({"GET", "k"}, other.get()), Bulk("in3"));
}

TEST(DispatcherTest, DebugNeedsTheFlag) {
  TestServer off(1);
  EXPECT_EQ(off.Run({"DEBUG", "ADVANCE", "10"}).substr(0, 30), "-ERR DEBUG command not allowed");
  TestServer on(1, {{"enable-debug-command", "yes"}});
  int64_t before = on.clock().NowMs();
  EXPECT_EQ(on.Run({"DEBUG", "ADVANCE", "1000"}), kOk);
  EXPECT_EQ(on.clock().NowMs(), before + 1000);
}

}  // namespace
}  // namespace lapse::server::testing
