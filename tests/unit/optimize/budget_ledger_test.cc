// kz optimize's budget ledger (src/optimize/budget_ledger.h): reservations before calls,
// settlement after, never past a limit even with calls in flight from many threads; a zero
// budget refused; persistence and resume; a call that used more than it reserved counted.
#include "optimize/budget_ledger.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kz::optimize {
namespace {

Amounts Of(double tokens, double requests, double gpu_s, double compile_s) {
  Amounts a;
  a[Resource::kTokens] = tokens, a[Resource::kRequests] = requests;
  a[Resource::kGpuSeconds] = gpu_s, a[Resource::kCompileSeconds] = compile_s;
  return a;
}

TEST(BudgetLedgerTest, AZeroOrNegativeBudgetIsRefused) {
  std::string err;
  EXPECT_FALSE(BudgetLedger::Create(Of(1000, 10, 0, 60), &err));
  EXPECT_NE(err.find("gpu_s"), std::string::npos) << err;
  EXPECT_FALSE(BudgetLedger::Create(Of(-1, 10, 5, 60), &err));
  EXPECT_NE(err.find("tokens"), std::string::npos) << err;
  EXPECT_TRUE(BudgetLedger::Create(Of(1000, 10, 5, 60), &err));
}

TEST(BudgetLedgerTest, ReservationsInFlightCountAndSettlementReturnsTheRest) {
  std::string err;
  auto b = BudgetLedger::Create(Of(1000, 10, 100, 60), &err);
  auto r1 = b->Reserve(Of(600, 1, 0, 0), &err);  // a request of max_tokens 600
  ASSERT_TRUE(r1) << err;
  EXPECT_FALSE(b->Reserve(Of(600, 1, 0, 0), &err)) << "600 in flight + 600 > 1000";
  EXPECT_NE(err.find("tokens"), std::string::npos) << err;
  ASSERT_TRUE(b->Settle(*r1, Of(250, 1, 0, 0), &err)) << err;  // it used 250
  EXPECT_DOUBLE_EQ(b->spent()[Resource::kTokens], 250);
  EXPECT_DOUBLE_EQ(b->reserved()[Resource::kTokens], 0);
  EXPECT_DOUBLE_EQ(b->remaining()[Resource::kTokens], 750);
  auto r2 = b->Reserve(Of(600, 1, 0, 0), &err);
  EXPECT_TRUE(r2) << "the rest came back: " << err;
  EXPECT_TRUE(b->Exhausted(Of(600, 1, 0, 0)));
  EXPECT_TRUE(b->Cancel(*r2)) << "the call was never made";
  EXPECT_FALSE(b->Cancel(*r2));
  EXPECT_FALSE(b->Exhausted(Of(600, 1, 0, 0)));
  EXPECT_FALSE(b->Settle(999, Of(1, 0, 0, 0), &err)) << "unknown reservation";
  EXPECT_FALSE(b->Reserve(Of(-1, 0, 0, 0), &err)) << "a negative reservation";
}

TEST(BudgetLedgerTest, AnOverrunIsSpentAndCounted) {
  std::string err;
  auto b = BudgetLedger::Create(Of(100, 10, 10, 10), &err);
  auto r = b->Reserve(Of(0, 0, 2, 0), &err);  // a verification with a 2 s limit
  ASSERT_TRUE(b->Settle(*r, Of(0, 0, 2.5, 0), &err));
  EXPECT_EQ(b->overruns(), 1u);
  EXPECT_DOUBLE_EQ(b->spent()[Resource::kGpuSeconds], 2.5);
  auto over = b->Reserve(Of(0, 0, 8, 0), &err);  // 2.5 + 8 > 10
  EXPECT_FALSE(over);
  auto r2 = b->Reserve(Of(0, 0, 7.5, 0), &err);
  ASSERT_TRUE(r2) << err;
  ASSERT_TRUE(b->Settle(*r2, Of(0, 0, 9, 0), &err));  // GPU-seconds now past the budget
  EXPECT_TRUE(b->Reserve(Of(50, 1, 0, 0), &err)) << "a call that needs no GPU time still fits: " << err;
  EXPECT_FALSE(b->Reserve(Of(0, 0, 0.1, 0), &err));
}

// Many threads reserving and settling at once: the sum of what was spent never passes any
// limit, and every refusal happened with the budget really held.
TEST(BudgetLedgerTest, ConcurrentCallsNeverOverrunTheBudget) {
  std::string err;
  auto b = BudgetLedger::Create(Of(10000, 400, 50, 1e9), &err);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      std::string why;
      for (int i = 0; i < 200; ++i) {
        auto r = b->Reserve(Of(64, 1, 0.25, 0), &why);
        if (!r) continue;
        b->Settle(*r, Of(32 + i % 33, 1, 0.1 + 0.15 * (i % 2), 0), &why);
      }
    });
  for (auto& t : threads) t.join();
  Amounts s = b->spent();
  EXPECT_LE(s[Resource::kTokens], 10000);
  EXPECT_LE(s[Resource::kRequests], 400);
  EXPECT_LE(s[Resource::kGpuSeconds], 50 + 1e-9);
  EXPECT_GT(s[Resource::kRequests], 100) << "calls did run";
  EXPECT_EQ(b->overruns(), 0u);
  EXPECT_DOUBLE_EQ(b->reserved()[Resource::kTokens], 0);
}

TEST(BudgetLedgerTest, PersistedSpendingResumesAndAnotherBudgetIsRefused) {
  std::string err;
  auto b = BudgetLedger::Create(Of(1000, 10, 100, 60), &err);
  auto r = b->Reserve(Of(100, 1, 5, 1), &err);
  b->Settle(*r, Of(80, 1, 4, 0.5), &err);
  b->Reserve(Of(100, 1, 5, 1), &err);  // in flight at the kill: not spent
  nlohmann::json j = b->ToJson();
  auto resumed = BudgetLedger::FromJson(j, Of(1000, 10, 100, 60), &err);
  ASSERT_TRUE(resumed) << err;
  EXPECT_DOUBLE_EQ(resumed->spent()[Resource::kTokens], 80);
  EXPECT_DOUBLE_EQ(resumed->reserved()[Resource::kTokens], 0);
  EXPECT_FALSE(BudgetLedger::FromJson(j, Of(2000, 10, 100, 60), &err));
  EXPECT_NE(err.find("another budget"), std::string::npos) << err;
  j["spent"]["gpu_s"] = "x";
  EXPECT_FALSE(BudgetLedger::FromJson(j, Of(1000, 10, 100, 60), &err));
  EXPECT_NE(err.find("corrupted"), std::string::npos) << err;
}

}  // namespace
}  // namespace kz::optimize
