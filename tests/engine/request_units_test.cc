// File: tests/engine/request_units_test.cc
//
// Request-unit charges and RU-governed reclamation, deterministically: an ItemStore driven
// by a manual time value, with admission decided by a RuMeter exactly as the server wires
// it (provisioned: leftover of the current second; serverless: never held back, billed).

#include "engine/request_units.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/container.h"
#include "engine/item_store.h"

namespace lapse::engine {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;  // on a second boundary

TEST(RuChargeTest, RatesPerStartedKiB) {
  EXPECT_EQ(RuCharge(RuOp::kRead, 0), 1);
  EXPECT_EQ(RuCharge(RuOp::kRead, 1024), 1);
  EXPECT_EQ(RuCharge(RuOp::kRead, 1025), 2);
  EXPECT_EQ(RuCharge(RuOp::kInsert, 100), 5);
  EXPECT_EQ(RuCharge(RuOp::kInsert, 2048), 10);
  EXPECT_EQ(RuCharge(RuOp::kReplace, 1000), 10);
  EXPECT_EQ(RuCharge(RuOp::kDelete, 1024), 5);
  EXPECT_EQ(RuCharge(RuOp::kQuery, 0, 0), 1);
  EXPECT_EQ(RuCharge(RuOp::kQuery, 3000, 50), 3);
  EXPECT_EQ(RuCharge(RuOp::kQuery, 100, 250), 3);
  EXPECT_EQ(kRejectedRu, 1);
}

TEST(RuMeterTest, BudgetRefillsEachSecondWithoutCarryOver) {
  RuMeter m;
  m.set_limit(10);
  int64_t retry = 0;
  EXPECT_FALSE(m.Exhausted(kStart, &retry));
  m.ChargeUser(10, kStart + 10);
  EXPECT_TRUE(m.Exhausted(kStart + 250, &retry));
  EXPECT_EQ(retry, 750);
  EXPECT_FALSE(m.TryChargeReclaim(1, kStart + 300));
  // An idle second does not buy a double budget later.
  EXPECT_TRUE(m.TryChargeReclaim(10, kStart + 5000));
  EXPECT_FALSE(m.TryChargeReclaim(1, kStart + 5001));
  EXPECT_EQ(m.reclaim_total(), 10);
  EXPECT_EQ(m.user_total(), 10);
}

TEST(RuMeterTest, ATimeFromAnEarlierSecondChargesTheNewestSecond) {
  RuMeter m;
  m.set_limit(10);
  EXPECT_TRUE(m.TryChargeReclaim(8, kStart + 1000));
  // A slice that read the clock just before the boundary gets no fresh budget for it.
  EXPECT_FALSE(m.TryChargeReclaim(5, kStart + 999));
  EXPECT_TRUE(m.TryChargeReclaim(2, kStart + 999));
  int64_t retry = 0;
  EXPECT_TRUE(m.Exhausted(kStart + 998, &retry));
  EXPECT_EQ(retry, 1002);  // until the newest second ends
  EXPECT_EQ(m.reclaim_total(), 10);
}

class ReclaimBudgetTest : public ::testing::Test {
 protected:
  // 1,000 items of about 1 KiB with a 1-second ttl, all expired by the time it returns.
  void Fill() {
    catalog_.FindOrCreate(0, "c")->default_ttl.store(-1);
    ContainerPart* part = store_.FindOrCreate(0, "c");
    std::string payload(900, 'x');
    for (int i = 0; i < 1000; ++i) {
      ParsedItem body{"\"v\":\"" + payload + "\",\"ttl\":1", 1};
      ASSERT_TRUE(store_.Put(*part, "item" + std::to_string(i), std::move(body), PutCondition::kAlways, std::nullopt, now_).written);
    }
    now_ += 2000;
    ASSERT_EQ(store_.Figures(*part, now_).expired_unreclaimed, 1000u);
  }
  // Runs the reclaimer to a standstill within the current second, as the server's loop does.
  void ReclaimThisSecond(bool serverless = false) {
    auto admit = [&](const Item& item) {
      double ru = RuCharge(RuOp::kDelete, item.Bytes());
      if (serverless) {
        meter_.ChargeReclaimUnmetered(ru);
        return true;
      }
      return meter_.TryChargeReclaim(ru, now_);
    };
    while (store_.Reclaim(now_, 64, admit)) {
    }
  }
  uint64_t Backlog() { return store_.Figures(*store_.Find(0, "c"), now_).expired_unreclaimed; }

  ContainerCatalog catalog_;
  ItemStore store_{0, catalog_, kStart};
  RuMeter meter_;
  int64_t now_ = kStart;
};

TEST_F(ReclaimBudgetTest, IdleContainerAt400RuPerSecondTakesAbout13Seconds) {
  Fill();
  meter_.set_limit(400);
  int seconds = 0;
  while (Backlog() > 0) {
    uint64_t before = Backlog();
    ReclaimThisSecond();
    // 5 RU per 1 KiB item: exactly 80 items per second's budget.
    EXPECT_EQ(before - Backlog(), std::min<uint64_t>(before, 80));
    now_ += 1000;
    ++seconds;
    ASSERT_LT(seconds, 100);
  }
  EXPECT_EQ(seconds, 13);
  EXPECT_EQ(meter_.reclaim_total(), 5000);
}

TEST_F(ReclaimBudgetTest, UsersSpendingTheWholeBudgetStopReclamationUntilTheyStop) {
  Fill();
  meter_.set_limit(400);
  for (int s = 0; s < 5; ++s) {
    meter_.ChargeUser(400, now_);
    ReclaimThisSecond();
    EXPECT_EQ(Backlog(), 1000u);
    EXPECT_TRUE(store_.reclaim_blocked());
    now_ += 1000;
  }
  meter_.ChargeUser(200, now_);  // half the budget left: 40 items
  ReclaimThisSecond();
  EXPECT_EQ(Backlog(), 960u);
  now_ += 1000;
  ReclaimThisSecond();
  EXPECT_EQ(Backlog(), 880u);
}

TEST_F(ReclaimBudgetTest, ServerlessIsNotHeldBackAndBillsTheDeleteRate) {
  Fill();
  meter_.set_limit(400);
  meter_.ChargeUser(400, now_);
  ReclaimThisSecond(/*serverless=*/true);
  EXPECT_EQ(Backlog(), 0u);
  EXPECT_EQ(meter_.reclaim_total(), 5000);  // 5 RU per reclaimed 1 KiB item
}

TEST(LagHistogramTest, QuantilesWithinABucket) {
  LagHistogram h;
  EXPECT_EQ(h.Quantile(0.5), 0u);
  for (uint64_t ms = 1; ms <= 100; ++ms) h.Record(ms);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_EQ(h.count(), 100u);
  uint64_t p50 = h.Quantile(0.5);
  EXPECT_GE(p50, 50u);
  EXPECT_LE(p50, 60u);
  EXPECT_EQ(h.Quantile(1.0), 100u);
}

}  // namespace
}  // namespace lapse::engine
