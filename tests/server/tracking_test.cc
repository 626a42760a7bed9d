// Tracking (server/tracking.h) in-process: what each client's PushOutbox receives when keys
// change, for every mode, without sockets. The exact bytes are Redis 7.0's (the integration
// tests compare them with redis-server's).
#include "server/tracking.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "server/client_session.h"

namespace lapse::server {
namespace {

constexpr std::string_view kInvalidateK = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n";

Tracking::CommandContext ContextOf(ClientInfo* client) {
  Tracking::CommandContext context;
  context.client = client;
  return context;
}

class TrackingTest : public ::testing::Test {
 protected:
  std::shared_ptr<ClientInfo> Connect(int resp = 3) {
    auto info = clients_.Add("127.0.0.1:1", "127.0.0.1:2", 0);
    info->resp.store(resp);
    return info;
  }
  std::string Received(ClientInfo& c) { return c.push.Take(); }

  ClientRegistry clients_;
  Tracking tracking_{clients_, [](bool) { return OutputBufferLimit{}; }, [] { return int64_t{0}; }};
};

TEST_F(TrackingTest, AReaderIsToldOnceOfAChange) {
  auto reader = Connect();
  tracking_.Enable(*reader, 0, 0, {});
  tracking_.Remember(*reader, "k");
  EXPECT_EQ(tracking_.keys(), 1u);
  tracking_.KeyModified("k");
  EXPECT_EQ(Received(*reader), kInvalidateK);
  tracking_.KeyModified("k");
  EXPECT_EQ(Received(*reader), "");
  EXPECT_EQ(tracking_.keys(), 0u);
}

TEST_F(TrackingTest, ResolvesTheRedirectTargetAtSendTime) {
  auto tracker = Connect(2);
  auto subscriber = Connect(2);
  subscriber->subscribed_channels.store(1);
  tracking_.Enable(*tracker, subscriber->id, 0, {});
  tracking_.Remember(*tracker, "k");
  tracking_.KeyModified("k");
  EXPECT_EQ(Received(*tracker), "");
  EXPECT_EQ(Received(*subscriber), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n");
  // Gone: a RESP3 tracker hears that its redirect is broken, and CLIENT LIST shows R.
  tracker->resp.store(3);
  clients_.Remove(subscriber->id);
  tracking_.Remember(*tracker, "k");
  tracking_.KeyModified("k");
  EXPECT_EQ(Received(*tracker), ">2\r\n$21\r\ntracking-redir-broken\r\n:" + std::to_string(subscriber->id) + "\r\n");
  EXPECT_TRUE(tracker->tracking.load() & kTrackingBrokenRedirect);
}

TEST_F(TrackingTest, OwnChangesWaitForTheReplyOrAreSkippedWithNoloop) {
  auto me = Connect();
  tracking_.Enable(*me, 0, 0, {});
  tracking_.Remember(*me, "k");
  Tracking::CommandContext context = ContextOf(me.get());
  {
    TrackingScope scope(&context);
    tracking_.KeyModified("k");
  }
  EXPECT_EQ(Received(*me), "");
  tracking_.DeliverPending(context);
  EXPECT_EQ(Received(*me), kInvalidateK);

  tracking_.Enable(*me, 0, kTrackingNoloop, {});
  tracking_.Remember(*me, "k");
  {
    TrackingScope scope(&context);
    tracking_.KeyModified("k");
  }
  tracking_.DeliverPending(context);
  EXPECT_EQ(Received(*me), "");
}

TEST_F(TrackingTest, AReadDeletingAKeyItOnlyJustRecordedTellsNothing) {
  auto me = Connect();
  tracking_.Enable(*me, 0, 0, {});
  Tracking::CommandContext context = ContextOf(me.get());
  // Recorded before the read runs; the read then deletes it as expired.
  context.provisional.push_back("k");
  ASSERT_TRUE(tracking_.Remember(*me, "k"));
  {
    TrackingScope scope(&context);
    tracking_.KeyModified("k");
  }
  tracking_.DeliverPending(context);
  EXPECT_EQ(Received(*me), "");
  // Another client's change to it is told at once.
  tracking_.Remember(*me, "k");
  tracking_.KeyModified("k");
  EXPECT_EQ(Received(*me), kInvalidateK);
}

TEST_F(TrackingTest, FlushSendsNullsInTheTrackersProtocolAndEmptiesTheTable) {
  auto resp3 = Connect(3);
  auto resp2 = Connect(2);
  auto subscriber = Connect(2);
  subscriber->subscribed_channels.store(1);
  tracking_.Enable(*resp3, 0, 0, {});
  tracking_.Enable(*resp2, subscriber->id, 0, {});
  tracking_.Remember(*resp3, "a");
  tracking_.Remember(*resp2, "b");
  tracking_.Flushed();
  EXPECT_EQ(Received(*resp3), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  EXPECT_EQ(Received(*subscriber), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n");
  EXPECT_EQ(tracking_.keys(), 0u);
  EXPECT_EQ(tracking_.items(), 0u);
}

TEST_F(TrackingTest, BroadcastsBatchPerPrefixWithKeysInByteOrder) {
  auto bcast = Connect();
  auto writer = Connect();
  tracking_.Enable(*bcast, 0, kTrackingBcast, {"a", "b"});
  EXPECT_EQ(tracking_.prefixes(), 2u);
  Tracking::CommandContext context = ContextOf(writer.get());
  {
    TrackingScope scope(&context);
    for (const char* key : {"b2", "a1", "zz", "b1", "b2"}) tracking_.KeyModified(key);
  }
  EXPECT_EQ(Received(*bcast), "");  // held until the batch ends
  tracking_.FlushBroadcasts();
  EXPECT_EQ(Received(*bcast),
            ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\na1\r\n"
            ">2\r\n$10\r\ninvalidate\r\n*2\r\n$2\r\nb1\r\n$2\r\nb2\r\n");
  tracking_.Disable(*bcast);
  EXPECT_EQ(tracking_.prefixes(), 0u);
  EXPECT_EQ(tracking_.clients(), 0u);
}

TEST_F(TrackingTest, BroadcastWithNoloopLeavesOutTheClientsOwnLastChanges) {
  auto bcast = Connect();
  auto other = Connect();
  tracking_.Enable(*bcast, 0, kTrackingBcast | kTrackingNoloop, {});
  Tracking::CommandContext mine = ContextOf(bcast.get()), theirs = ContextOf(other.get());
  {
    TrackingScope scope(&mine);
    tracking_.KeyModified("x");
    tracking_.KeyModified("y");
  }
  {
    TrackingScope scope(&theirs);
    tracking_.KeyModified("y");  // the last change to y is not the client's own
  }
  tracking_.FlushBroadcasts();
  EXPECT_EQ(Received(*bcast), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ny\r\n");
  // Its script's changes and expiry met by its own read are not its own, as in Redis.
  {
    TrackingScope scope(&mine);
    tracking_.KeyModified("e", /*by_expiry=*/true);
    mine.in_script = true;
    tracking_.KeyModified("s");
    mine.in_script = false;
  }
  tracking_.FlushBroadcasts();
  EXPECT_EQ(Received(*bcast), ">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\ne\r\n$1\r\ns\r\n");
  // Outside any command (expiry by the reclaimer) a change is sent at once.
  tracking_.KeyModified("z");
  EXPECT_EQ(Received(*bcast), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nz\r\n");
}

TEST_F(TrackingTest, OptionsAreRefusedInRedisOrder) {
  auto c = Connect();
  EXPECT_EQ(tracking_.CheckOptions(*c, kTrackingOptin | kTrackingOptout, {"p"}),
            "ERR PREFIX option requires BCAST mode to be enabled");
  EXPECT_EQ(tracking_.CheckOptions(*c, kTrackingBcast | kTrackingOptin | kTrackingOptout, {}),
            "ERR OPTIN and OPTOUT are not compatible with BCAST");
  EXPECT_EQ(tracking_.CheckOptions(*c, kTrackingOptin | kTrackingOptout, {}),
            "ERR You can't specify both OPTIN mode and OPTOUT mode");
  // Like Redis's %s, a prefix ends at its first NUL in the message.
  EXPECT_EQ(tracking_.CheckOptions(*c, kTrackingBcast, {std::string("a\0b", 3), "a"}),
            "ERR Prefix 'a' overlaps with another provided prefix 'a'. Prefixes for a single client must not "
            "overlap.");
  tracking_.Enable(*c, 0, kTrackingOptin, {});
  EXPECT_TRUE(tracking_.CheckOptions(*c, kTrackingBcast, {}).has_value());
  EXPECT_TRUE(tracking_.CheckOptions(*c, kTrackingOptout, {}).has_value());
  EXPECT_FALSE(tracking_.CheckOptions(*c, kTrackingOptin | kTrackingNoloop, {}).has_value());
}

TEST_F(TrackingTest, MaxKeysEvictsUntilUnderTheLimitTellingTheReaders) {
  auto reader = Connect();
  tracking_.Enable(*reader, 0, 0, {});
  for (int i = 0; i < 10; ++i) tracking_.Remember(*reader, "key" + std::to_string(i));
  tracking_.set_max_keys(4);
  tracking_.EnforceMaxKeys(nullptr);
  EXPECT_EQ(tracking_.keys(), 4u);
  std::string got = Received(*reader);
  size_t messages = 0;
  for (size_t at = got.find("invalidate"); at != std::string::npos; at = got.find("invalidate", at + 1)) ++messages;
  EXPECT_EQ(messages, 6u);
  tracking_.set_max_keys(0);  // no limit
  for (int i = 0; i < 10; ++i) tracking_.Remember(*reader, "more" + std::to_string(i));
  tracking_.EnforceMaxKeys(nullptr);
  EXPECT_EQ(tracking_.keys(), 14u);
}

}  // namespace
}  // namespace lapse::server
