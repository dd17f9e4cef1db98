// Multi-turn refinement's reward math against hand-worked cases: PrimeEcho, returns-to-go,
// per-turn advantages, Buffered Dynamic Retry, MirrorPop, diversity-preserving RFT selection.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rewards/mirror_pop.h"
#include "rewards/multi_turn.h"
#include "rewards/retry_buffer.h"
#include "rewards/rft_select.h"

namespace kz::rewards {
namespace {

TEST(MultiTurnTest, PrimeEchoCreditsRepairAndPenalisesRegression) {
  MultiTurnOptions o;  // eta 0.5
  // fail, then repaired: 0 -> 1 gets 1 + 0.5 * (1 - 0) = 1.5
  EXPECT_EQ(PrimeEcho({0, 1}, o), (std::vector<double>{0, 1.5}));
  // right, then broken: 1 -> 0 gets 0 + 0.5 * (0 - 1) = -0.5; right again: 1 + 0 = 1
  EXPECT_EQ(PrimeEcho({1, 0, 1}, o), (std::vector<double>{1, -0.5, 1}));
  o.prime_echo = false;
  EXPECT_EQ(PrimeEcho({1, 0, 1}, o), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(PrimeEcho({}, o), std::vector<double>{});
}

TEST(MultiTurnTest, ReturnsToGoByHand) {
  // gamma 0.5: G3 = 4, G2 = 2 + 0.5*4 = 4, G1 = 1 + 0.5*4 = 3
  EXPECT_EQ(ReturnsToGo({1, 2, 4}, 0.5), (std::vector<double>{3, 4, 4}));
  EXPECT_EQ(ReturnsToGo({1, 2, 4}, 0.0), (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(ReturnsToGo({1, 2, 4}, 1.0), (std::vector<double>{7, 6, 4}));
}

TEST(MultiTurnTest, TurnAdvantagesOverTheTrajectoriesThatReachedTheTurn) {
  MultiTurnOptions o;
  o.gamma = 0.5;
  o.baseline = Baseline::kLeaveOneOut;
  // A: [0, 1] -> shaped [0, 1.5] -> G [0.75, 1.5]; B: [1] -> G [1]; C: [0, 0] -> G [0, 0]
  auto s = ScoreTrajectories({{0, 1}, {1}, {0, 0}}, o);
  ASSERT_EQ(s.returns[0], (std::vector<double>{0.75, 1.5}));
  // turn 1 (A, B, C): 0.75 - (1 + 0)/2 = 0.25; 1 - 0.375 = 0.625; 0 - 0.875 = -0.875
  EXPECT_DOUBLE_EQ(s.advantages[0][0], 0.25);
  EXPECT_DOUBLE_EQ(s.advantages[1][0], 0.625);
  EXPECT_DOUBLE_EQ(s.advantages[2][0], -0.875);
  // turn 2 (A, C): 1.5 - 0 = 1.5; 0 - 1.5 = -1.5; B has no turn 2
  EXPECT_DOUBLE_EQ(s.advantages[0][1], 1.5);
  EXPECT_DOUBLE_EQ(s.advantages[2][1], -1.5);
  EXPECT_EQ(s.advantages[1].size(), 1u);
  EXPECT_FALSE(s.zero_variance_turns[1]);
  auto all_fail = ScoreTrajectories({{0, 0}, {0, 0}}, o);
  EXPECT_TRUE(all_fail.zero_variance_turns[0] && all_fail.zero_variance_turns[1]);
  EXPECT_EQ(all_fail.advantages[0], (std::vector<double>{0, 0}));
}

TEST(MultiTurnTest, AStoppedCorrectTrajectoryKeepsItsAnswerForTheTurnsItSkipped) {
  // Horizon 2, gamma 0.8, eta 0.5. Right at once, stopped: rewards [1], padded to [1, 1]:
  // e = [1, 1], G_1 = 1 + 0.8 = 1.8. Repaired: [0, 1], e = [0, 1.5], G = [1.2, 1.5].
  // Failed twice: G = [0, 0]. Without the pad the repaired one (1.2) would beat the right one (1).
  MultiTurnOptions o;
  auto s = ScoreTrajectories({{1}, {0, 1}, {0, 0}}, o, 2, {true, false, false});
  ASSERT_EQ(s.returns[0].size(), 1u);  // one turn taken: one return, one advantage
  EXPECT_NEAR(s.returns[0][0], 1.8, 1e-12);
  EXPECT_NEAR(s.returns[1][0], 1.2, 1e-12);
  EXPECT_NEAR(s.returns[1][1], 1.5, 1e-12);
  EXPECT_GT(s.advantages[0][0], s.advantages[1][0]);
  EXPECT_GT(s.advantages[1][0], s.advantages[2][0]);
  // Turn 2's group is the two that took it (the padded turn is no sample): 1.5 vs 0.
  EXPECT_NEAR(s.advantages[1][1], -s.advantages[2][1], 1e-9);
  EXPECT_GT(s.advantages[1][1], 0.99);
  // Horizon 3, repaired at 2: [0, 1, 1(pad)] -> e = [0, 1.5, 1.5], G_1 = 0.8*1.5 + 0.64*1.5 = 2.16;
  // right at once: [1, 1, 1], G_1 = 1 + 0.8 + 0.64 = 2.44.
  auto h3 = ScoreTrajectories({{1}, {0, 1}}, o, 3, {true, true});
  EXPECT_NEAR(h3.returns[0][0], 2.44, 1e-12);
  EXPECT_NEAR(h3.returns[1][0], 2.16, 1e-12);
  EXPECT_NEAR(h3.returns[1][1], 2.7, 1e-12);
}

TEST(MultiTurnTest, OptionsValidated) {
  MultiTurnOptions o;
  EXPECT_EQ(Validate(o), "");
  o.gamma = 1.5;
  EXPECT_NE(Validate(o), "");
  o.gamma = 0.9;
  o.eta = -1;
  EXPECT_NE(Validate(o), "");
  o.eta = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(Validate(o), "");
}

TEST(RetryBufferTest, AllFailGroupsComeBackBoundedAndCounted) {
  RetryBuffer b(2, 1);
  b.OfferAllFail("a");
  b.OfferAllFail("b");
  b.OfferAllFail("c");  // full: dropped
  b.OfferAllFail("a");  // already waiting
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.stats().dropped_full, 1);
  EXPECT_EQ(b.Take(5), (std::vector<std::string>{"a", "b"}));
  b.RecordRetry("a", true);   // recovered
  b.RecordRetry("b", false);
  b.OfferAllFail("b");        // its one retry is used: given up
  EXPECT_EQ(b.stats().exhausted, 1);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_DOUBLE_EQ(b.stats().yield(), 0.5);
  std::string err;
  auto back = RetryBuffer::FromJson(b.ToJson(), &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->ToJson(), b.ToJson());
  EXPECT_EQ(back->retries("b"), 1);
  auto bad = b.ToJson();
  bad["queue"] = {"x", "y", "z"};
  EXPECT_FALSE(RetryBuffer::FromJson(bad, &err));  // longer than its capacity
}

TEST(MirrorPopTest, SequenceRatioTokenVetoAndNan) {
  MirrorPopOptions o;  // c = 2, veto 20
  EXPECT_TRUE(MirrorPop({-1, -2}, {-1, -2}, o).kept());
  // mean log ratio ln 3 > ln 2: filtered
  double l3 = std::log(3.0);
  EXPECT_EQ(MirrorPop({-1 + l3, -2 + l3}, {-1, -2}, o).reason, PopReason::kSequenceRatio);
  // one token at ratio 30 (> 20) while the mean stays within ln 2 (three neutral tokens beside it)
  double l30 = std::log(30.0);
  auto v = MirrorPop({l30 - 5, -1, -1, -1, -1, -1, -1, -1}, {-5, -1, -1, -1, -1, -1, -1, -1}, o);
  EXPECT_EQ(v.reason, PopReason::kTokenVeto);
  EXPECT_NEAR(v.log_ratio, l30 / 8, 1e-12);
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(MirrorPop({nan, -1}, {-1, -1}, o).reason, PopReason::kNan);
  EXPECT_EQ(MirrorPop({-1}, {-1, -1}, o).reason, PopReason::kLengthMismatch);
  PopSummary s;
  for (auto d : {MirrorPop({-1}, {-1}, o), MirrorPop({nan}, {-1}, o), MirrorPop({-1 + l3}, {-1}, o)}) Count(d, &s);
  EXPECT_EQ(s.kept, 1u);
  EXPECT_EQ(s.nan, 1u);
  EXPECT_NEAR(s.filtered_share(), 2.0 / 3.0, 1e-12);
}

TEST(RftSelectTest, DistinctStructuresFirstDuplicatesDroppedCapped) {
  std::vector<RftCandidate> c = {
      {"t1", "h1", "A"}, {"t1", "h2", "A"}, {"t1", "h1", "A"},  // h1 again: duplicate
      {"t1", "h3", "B"}, {"t1", "h4", "A"}, {"t1", "h5", "C"}, {"t2", "h6", "A"}};
  auto s = SelectForRft(c, 3);
  // t1: structures A (0, 1, 4), B (3), C (5); round robin: 0 (A), 3 (B), 5 (C); cap 3
  EXPECT_EQ(s.chosen, (std::vector<size_t>{0, 3, 5, 6}));
  EXPECT_EQ(s.duplicates, 1u);
  EXPECT_EQ(s.over_cap, 2u);  // 1 and 4
  auto all = SelectForRft(c, 10);
  EXPECT_EQ(all.chosen, (std::vector<size_t>{0, 3, 5, 1, 4, 6}));
  EXPECT_EQ(all.over_cap, 0u);
}

}  // namespace
}  // namespace kz::rewards
