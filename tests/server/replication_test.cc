// The master side of replication (server/replication.h), in-process: a session that sends
// PSYNC is a replica whose outbox receives exactly what a socket would carry.
#include "server/replication.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "test_server.h"

namespace lapse::server {
namespace {

using testing::Bulk;
using testing::kOk;
using testing::TestServer;

std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += Bulk(a);
  return out;
}

const std::string kPing = Resp({"ping"});

// What a replica's socket has received so far, gathered from its outbox.
class ReplicaPeer {
 public:
  ReplicaPeer(TestServer& server) : server_(server), session_(server.NewSession()) {}

  ClientSession& session() { return *session_; }
  // Runs a command of the replica's; what the connection would write (a reply, and the
  // stream pushed meanwhile, which the dispatcher adds to it) is received.
  std::string Run(std::vector<std::string> command) {
    std::string out = server_.Run(std::move(command), session_.get());
    received_ += out;
    return out;
  }

  // Waits (the sync thread works in the background) until `pred(received)` holds.
  bool WaitFor(const std::function<bool(const std::string&)>& pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      received_ += session_->info->push.Take();
      if (pred(received_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  bool WaitForText(const std::string& text) {
    return WaitFor([&](const std::string& r) { return r.find(text) != std::string::npos; });
  }
  // The stream after `from`, without the master's PINGs (their timing is the cron's).
  std::string StreamAfter(size_t from) const {
    std::string s = received_.substr(from);
    for (size_t at; (at = s.find(kPing)) != std::string::npos;) s.erase(at, kPing.size());
    return s;
  }
  const std::string& received() const { return received_; }

  // What a full resynchronisation told: the replication id, the offset, and where in
  // received() the stream starts (after the payload).
  struct Synced {
    std::string replid;
    int64_t offset = 0;
    size_t stream = 0;
  };
  // PSYNC ? -1, until the whole payload has arrived.
  Synced FullSync() {
    EXPECT_EQ(Run({"REPLCONF", "capa", "psync2"}), kOk);
    received_.clear();
    Run({"PSYNC", "?", "-1"});  // the replies go through the outbox
    std::smatch m;
    static const std::regex kHead("^\n*\\+FULLRESYNC ([0-9a-f]{40}) ([0-9]+)\r\n\n*\\$([0-9]+)\r\n");
    bool whole = WaitFor([&](const std::string& r) {
      return std::regex_search(r, m, kHead) && r.size() >= m[0].length() + std::stoul(m[3].str());
    });
    EXPECT_TRUE(whole) << received_;
    if (!whole) return {};
    size_t payload_at = m[0].length();
    EXPECT_EQ(received_.substr(payload_at, 9), "REDIS0010");
    return {m[1].str(), std::stoll(m[2].str()), payload_at + std::stoul(m[3].str())};
  }

 private:
  TestServer& server_;
  std::unique_ptr<ClientSession> session_;
  std::string received_;
};

TEST(ReplicationTest, FullSyncThenTheStreamWithSelect) {
  TestServer server;
  EXPECT_EQ(server.Run({"SET", "before", "1"}), kOk);
  EXPECT_FALSE(server.server().replication().active());  // no replica yet: writes pay nothing
  ReplicaPeer replica(server);
  auto [replid, offset, stream] = replica.FullSync();
  (void)replid;
  EXPECT_TRUE(server.server().replication().active());
  EXPECT_NE(replica.received().find("before"), std::string::npos);  // in the payload
  EXPECT_EQ(server.Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(server.Run({"SELECT", "2"}), kOk);
  EXPECT_EQ(server.Run({"SET", "k2", "v2"}), kOk);
  EXPECT_EQ(server.Run({"SELECT", "0"}), kOk);
  std::string expected = Resp({"SELECT", "0"}) + Resp({"SET", "k", "v"}) + Resp({"SELECT", "2"}) +
                         Resp({"SET", "k2", "v2"});
  ASSERT_TRUE(replica.WaitForText(Resp({"SET", "k2", "v2"})));
  EXPECT_EQ(replica.StreamAfter(stream), expected);
  // Every byte of the stream after the payload counts in the offset.
  EXPECT_EQ(server.server().replication().offset(), offset + static_cast<int64_t>(replica.received().size() - stream));
}

TEST(ReplicationTest, RelativeDeadlinesAreAbsoluteAndExpiryIsADel) {
  TestServer server;
  ReplicaPeer replica(server);
  size_t stream = replica.FullSync().stream;
  int64_t now = server.clock().NowMs();
  EXPECT_EQ(server.Run({"SET", "k", "v", "EX", "10"}), kOk);
  std::string deadline = std::to_string(now + 10000);
  ASSERT_TRUE(replica.WaitForText(deadline)) << replica.StreamAfter(stream);
  EXPECT_NE(replica.StreamAfter(stream).find("PXAT"), std::string::npos) << replica.StreamAfter(stream);
  server.clock().Advance(11000);
  EXPECT_EQ(server.Run({"GET", "k"}), testing::kNil);
  EXPECT_TRUE(replica.WaitForText(Resp({"DEL", "k"}))) << replica.StreamAfter(stream);
}

TEST(ReplicationTest, TransactionsAreWrappedAndLapseCommandsLeftOut) {
  TestServer server;
  ReplicaPeer replica(server);
  size_t stream = replica.FullSync().stream;
  server.RunBatch({{"MULTI"}, {"SET", "a", "1"}, {"INCR", "a"}, {"EXEC"}});
  EXPECT_EQ(server.Run({"CSETTTL", "c", "100"}), kOk);
  server.Run({"IPUT", "c", "1", "{}"});
  EXPECT_EQ(server.Run({"SET", "last", "1"}), kOk);
  ASSERT_TRUE(replica.WaitForText(Resp({"SET", "last", "1"})));
  EXPECT_EQ(replica.StreamAfter(stream), Resp({"SELECT", "0"}) + Resp({"MULTI"}) + Resp({"SET", "a", "1"}) +
                                             Resp({"INCR", "a"}) + Resp({"EXEC"}) + Resp({"SET", "last", "1"}));
}

TEST(ReplicationTest, PsyncWithinTheBacklogContinues) {
  TestServer server;
  std::string replid;
  int64_t offset = 0;
  {
    ReplicaPeer first(server);
    ReplicaPeer::Synced synced = first.FullSync();
    replid = synced.replid;
    offset = synced.offset;
    size_t stream = synced.stream;
    EXPECT_EQ(server.Run({"SET", "k", "v"}), kOk);
    ASSERT_TRUE(first.WaitForText(Resp({"SET", "k", "v"})));
    offset += static_cast<int64_t>(first.received().size() - stream);
    server.server().replication().Detach(first.session().info->id);
  }
  EXPECT_EQ(server.Run({"SET", "missed", "1"}), kOk);
  ReplicaPeer again(server);
  EXPECT_EQ(again.Run({"REPLCONF", "capa", "psync2"}), kOk);
  again.Run({"PSYNC", replid, std::to_string(offset + 1)});
  ASSERT_TRUE(again.WaitForText(Resp({"SET", "missed", "1"})));
  EXPECT_NE(again.received().find(kOk + "+CONTINUE " + replid + "\r\n"), std::string::npos) << again.received();
  // An offset past what the master has, or a history it never had: a full resynchronisation.
  ReplicaPeer ahead(server);
  ahead.Run({"PSYNC", replid, std::to_string(server.server().replication().offset() + 2)});
  EXPECT_TRUE(ahead.WaitForText("+FULLRESYNC " + replid));
  EXPECT_EQ(server.server().replication().sync_partial_ok(), 1u);
  EXPECT_EQ(server.server().replication().sync_partial_err(), 1u);
}

TEST(ReplicationTest, AcknowledgementsFeedWaitAndRole) {
  TestServer server;
  ReplicaPeer replica(server);
  replica.FullSync();
  EXPECT_EQ(server.Run({"SET", "k", "v"}), kOk);
  int64_t now = server.server().replication().offset();
  EXPECT_EQ(server.Run({"WAIT", "1", "1"}), ":0\r\n");  // not acknowledged yet
  EXPECT_EQ(replica.Run({"REPLCONF", "ACK", std::to_string(now)}).find("+OK"), std::string::npos);
  EXPECT_EQ(server.Run({"WAIT", "1", "0"}), ":1\r\n");
  std::string role = server.Run({"ROLE"});
  EXPECT_NE(role.find(Bulk(std::to_string(now))), std::string::npos) << role;
  // A replica that gets a reply is closed, and its reply never sent.
  EXPECT_EQ(replica.Run({"PING"}).find("PONG"), std::string::npos);
  EXPECT_TRUE(replica.session().close_after_reply);
}

}  // namespace
}  // namespace lapse::server
