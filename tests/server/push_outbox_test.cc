// PushOutbox (server/pubsub.h): messages may go before a reply, invalidations only after.
#include <string>

#include <gtest/gtest.h>

#include "server/pubsub.h"

namespace lapse::server {
namespace {

void Append(PushOutbox& box, std::string_view bytes, bool after_reply, const OutputBufferLimit& limit = {},
            const std::function<void()>& kill = nullptr) {
  box.Append(bytes, limit, 0, 0, kill, after_reply);
}

TEST(PushOutboxTest, TakeMessagesLeavesWhatMustFollowTheReply) {
  PushOutbox box;
  Append(box, "m1", false);
  Append(box, "i1", true);
  Append(box, "m2", false);
  EXPECT_EQ(box.TakeMessages(), "m1m2");
  EXPECT_FALSE(box.empty());
  Append(box, "i2", true);
  EXPECT_EQ(box.Take(), "i1i2");
  EXPECT_TRUE(box.empty());
}

TEST(PushOutboxTest, TakeHandsOverMessagesFirst) {
  PushOutbox box;
  Append(box, "i", true);
  Append(box, "m", false);
  EXPECT_EQ(box.Take(), "mi");
  EXPECT_TRUE(box.empty());
}

TEST(PushOutboxTest, WakesOnlyWhenNothingOfItsKindWasWaiting) {
  PushOutbox box;
  int wakes = 0;
  box.SetWaker([&wakes] { ++wakes; });
  Append(box, "i", true);
  EXPECT_EQ(wakes, 1);
  // A message wakes the client even behind invalidations: a blocked client writes messages
  // at once and keeps invalidations for after its reply.
  Append(box, "m", false);
  EXPECT_EQ(wakes, 2);
  Append(box, "m", false);
  Append(box, "i", true);
  EXPECT_EQ(wakes, 2);
  box.Take();
  Append(box, "m", false);
  EXPECT_EQ(wakes, 3);
}

TEST(PushOutboxTest, TheLimitCountsBothKinds) {
  PushOutbox box;
  int kills = 0;
  // The first 16 KiB are not counted (CountedOutputBytes), as Redis's fixed reply buffer.
  OutputBufferLimit limit{10, 0, 0};
  const std::string half(16 * 1024 / 2 + 3, 'x');
  Append(box, half, false, limit, [&kills] { ++kills; });
  EXPECT_EQ(kills, 0);
  Append(box, half, true, limit, [&kills] { ++kills; });
  EXPECT_EQ(kills, 0);  // 16 KiB + 6: still within the limit of 10 counted bytes
  Append(box, "12345", true, limit, [&kills] { ++kills; });
  EXPECT_EQ(kills, 1);
  EXPECT_TRUE(box.empty());
  Append(box, "x", true, limit, [&kills] { ++kills; });  // dropped: the client is going
  EXPECT_TRUE(box.empty());
}

}  // namespace
}  // namespace lapse::server
