#include <gtest/gtest.h>

#include "tests/server/test_server.h"

namespace lapse::server::testing {
namespace {

std::string Charge(std::string_view ru) { return Bulk(ru); }  // RESP2: a bulk string

TEST(RequestUnitCommandsTest, LastChargeForEachCommandClass) {
  TestServer t(2);
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("0"));
  t.Run({"SET", "k", "v"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("5"));   // insert
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("5"));   // LASTCHARGE leaves it alone
  t.Run({"SET", "k", "w"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("10"));  // replace
  t.Run({"GET", "k"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("1"));   // point read
  t.Run({"SET", "big", std::string(3000, 'x')});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("15"));  // 3 started KiB
  t.Run({"DEL", "big"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("15"));  // delete, 5 per KiB
  t.Run({"GET"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("1"));   // rejected
  t.Run({"IPUT", "c", "a", "{\"ttl\":0}"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("1"));   // rejected
  t.Run({"IPUT", "c", "a", "{\"v\":1}"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("5"));
  t.Run({"IPUT", "c", "a", "{\"v\":2}"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("10"));
  t.Run({"IGET", "c", "a"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("1"));
  t.Run({"PING"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("0"));
  EXPECT_EQ(t.Run({"HELLO", "3"}).substr(0, 4), "%7\r\n");
  t.Run({"GET", "k"});
  EXPECT_EQ(t.Run({"LASTCHARGE"}), ",1\r\n");      // RESP3 double
}

TEST(RequestUnitCommandsTest, OverBudgetContainerIsThrottledAndNothingChanges) {
  TestServer t(1);
  EXPECT_EQ(t.Run({"CSETRU", "c", "10"}), kOk);
  EXPECT_EQ(t.Run({"CGETRU", "c"}), Int(10));
  EXPECT_EQ(t.Run({"CGETRU", "other"}), kNil);
  EXPECT_EQ(t.Run({"CSETRU", "c", "0"}).substr(0, 5), "-ERR ");
  EXPECT_EQ(t.Run({"IPUT", "c", "a", "{\"v\":1}"}).substr(0, 1), "$");  // 5 RU
  EXPECT_EQ(t.Run({"IPUT", "c", "a", "{\"v\":2}"}).substr(0, 1), "$");  // 10 RU: budget spent
  std::string reply = t.Run({"IPUT", "c", "a", "{\"v\":3}"});
  EXPECT_EQ(reply.rfind("-THROTTLED Request rate is large. Retry after ", 0), 0u) << reply;
  EXPECT_EQ(t.Run({"LASTCHARGE"}), Charge("0"));
  t.clock().Advance(1000);
  EXPECT_NE(t.Run({"IGET", "c", "a"}).find("\"v\":2"), std::string::npos);
  // Containers on the server-wide budget are never throttled.
  for (int i = 0; i < 20; ++i) ASSERT_EQ(t.Run({"IPUT", "free", "a", "{\"v\":1}"}).substr(0, 1), "$");
  EXPECT_EQ(t.Run({"CSETRU", "c", "OFF"}), kOk);
  EXPECT_EQ(t.Run({"CGETRU", "c"}), kNil);
}

// Serverless billing has no provisioned throughput: nothing is throttled, and CSETRU is refused
// (changing nothing). A budget set while provisioned sleeps until billing is provisioned again.
TEST(RequestUnitCommandsTest, ServerlessNeverThrottlesAndRefusesCSetRu) {
  TestServer t(1);
  const std::string refused = Err(
      "ERR setting a container's request units per second is not supported with serverless billing, which has no "
      "provisioned throughput: use CONFIG SET billing provisioned first");
  EXPECT_EQ(t.Run({"CSETRU", "c", "10"}), kOk);
  EXPECT_EQ(t.Run({"IPUT", "c", "a", "{\"v\":1}"}).substr(0, 1), "$");  // 5 RU
  EXPECT_EQ(t.Run({"IPUT", "c", "a", "{\"v\":2}"}).substr(0, 1), "$");  // 10 RU: budget spent
  EXPECT_EQ(t.Run({"IGET", "c", "a"}).rfind("-THROTTLED ", 0), 0u);
  EXPECT_EQ(t.Run({"CONFIG", "SET", "billing", "serverless"}), kOk);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(t.Run({"IPUT", "c", "a", "{\"v\":3}"}).substr(0, 1), "$") << i;
    ASSERT_EQ(t.Run({"IGET", "c", "a"}).substr(0, 1), "$") << i;
  }
  EXPECT_EQ(t.Run({"ICOUNT", "c"}), Int(1));
  for (const char* value : {"20", "OFF", "0", "x"}) {
    EXPECT_EQ(t.Run({"CSETRU", "c", value}), refused) << value;
    EXPECT_EQ(t.Run({"CGETRU", "c"}), Int(10)) << value;
    EXPECT_EQ(t.Run({"CSETRU", "new", value}), refused) << value;
    EXPECT_EQ(t.Run({"CLIST"}), "*1\r\n" + Bulk("c")) << value;  // "new" was not created
  }
  EXPECT_EQ(t.Run({"CONFIG", "SET", "billing", "provisioned"}), kOk);
  EXPECT_EQ(t.Run({"IGET", "c", "a"}).rfind("-THROTTLED ", 0), 0u);  // this second is long spent
}

}  // namespace
}  // namespace lapse::server::testing
