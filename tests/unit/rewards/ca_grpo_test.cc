// CA-GRPO rewards and advantages against groups worked out by hand (docs/rewards.md).
#include "rewards/ca_grpo.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kz::rewards {
namespace {

SampleOutcome Ok(std::optional<double> s = std::nullopt) { return {true, s}; }
SampleOutcome Wrong(std::optional<double> s = std::nullopt) { return {false, s}; }

TEST(CaGrpo, SpeedTermIsACappedLogOfTheSpeedup) {
  EXPECT_DOUBLE_EQ(SpeedTerm(10.0, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(SpeedTerm(100.0, 10.0), 1.0);          // capped
  EXPECT_DOUBLE_EQ(SpeedTerm(1.0, 10.0), 0.0);
  EXPECT_NEAR(SpeedTerm(std::sqrt(10.0), 10.0), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(SpeedTerm(0.1, 10.0), -1.0);           // 10x slower
  EXPECT_DOUBLE_EQ(SpeedTerm(0.001, 10.0), -1.0);
  EXPECT_DOUBLE_EQ(SpeedTerm(std::nullopt, 10.0), 0.0);   // not timed
  EXPECT_DOUBLE_EQ(SpeedTerm(0.0, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(SpeedTerm(-2.0, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(SpeedTerm(NAN, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(SpeedTerm(INFINITY, 10.0), 0.0);
}

// Four samples, two correct (one 10x faster, one untimed): accuracy 0.5 opens the gate.
// r = [2, 1, 0, 0]; mean 0.75; population sd = sqrt(((1.25)^2 + 0.25^2 + 2 * 0.75^2) / 4)
//   = sqrt((1.5625 + 0.0625 + 1.125) / 4) = sqrt(0.6875).
TEST(CaGrpo, HalfCorrectOpensTheGateAtAlphaOneHalf) {
  CaGrpoOptions o;
  o.eps = 0;  // exact hand values (Validate refuses 0; ScoreGroup does not need it)
  auto g = ScoreGroup({Ok(10.0), Ok(), Wrong(10.0), Wrong()}, o);
  EXPECT_DOUBLE_EQ(g.accuracy, 0.5);
  EXPECT_TRUE(g.gate);
  EXPECT_FALSE(g.zero_variance);
  EXPECT_EQ(g.rewards, (std::vector<double>{2, 1, 0, 0}));  // a wrong sample's speed never counts
  const double sd = std::sqrt(0.6875);
  EXPECT_NEAR(g.advantages[0], 1.25 / sd, 1e-12);
  EXPECT_NEAR(g.advantages[1], 0.25 / sd, 1e-12);
  EXPECT_NEAR(g.advantages[2], -0.75 / sd, 1e-12);
  EXPECT_NEAR(g.advantages[3], -0.75 / sd, 1e-12);
}

TEST(CaGrpo, BelowAlphaTheSpeedTermIsOff) {
  auto g = ScoreGroup({Ok(10.0), Wrong(), Wrong(), Wrong()}, CaGrpoOptions{});
  EXPECT_DOUBLE_EQ(g.accuracy, 0.25);
  EXPECT_FALSE(g.gate);
  EXPECT_EQ(g.rewards, (std::vector<double>{1, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(g.speed_terms[0], 1.0);  // computed, not used
}

TEST(CaGrpo, AllWrongIsZeroVariance) {
  auto g = ScoreGroup({Wrong(), Wrong(3.0), Wrong()}, CaGrpoOptions{});
  EXPECT_DOUBLE_EQ(g.accuracy, 0.0);
  EXPECT_FALSE(g.gate);
  EXPECT_TRUE(g.zero_variance);
  EXPECT_EQ(g.rewards, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(g.advantages, (std::vector<double>{0, 0, 0}));
}

TEST(CaGrpo, AllCorrectSpeedSeparatesThem) {
  CaGrpoOptions o;
  o.beta = 0.5;
  o.baseline = Baseline::kLeaveOneOut;
  // S = [1, 0, -1] -> r = [1.5, 1, 0.5]; leave-one-out: 1.5 - 0.75, 1 - 1, 0.5 - 1.25.
  auto g = ScoreGroup({Ok(10.0), Ok(1.0), Ok(0.1)}, o);
  EXPECT_TRUE(g.gate);
  EXPECT_NEAR(g.rewards[0], 1.5, 1e-12);
  EXPECT_NEAR(g.rewards[1], 1.0, 1e-12);
  EXPECT_NEAR(g.rewards[2], 0.5, 1e-12);
  EXPECT_NEAR(g.advantages[0], 0.75, 1e-12);
  EXPECT_NEAR(g.advantages[1], 0.0, 1e-12);
  EXPECT_NEAR(g.advantages[2], -0.75, 1e-12);
}

TEST(CaGrpo, AllCorrectAtTheSameSpeedIsZeroVariance) {
  auto g = ScoreGroup({Ok(2.0), Ok(2.0)}, CaGrpoOptions{});
  EXPECT_TRUE(g.zero_variance);
  EXPECT_EQ(g.advantages, (std::vector<double>{0, 0}));
  EXPECT_NEAR(g.rewards[0], 1 + std::log(2.0) / std::log(10.0), 1e-12);
}

TEST(CaGrpo, TiedRewardsGetTiedAdvantages) {
  auto g = ScoreGroup({Ok(), Ok(), Wrong(), Wrong()}, CaGrpoOptions{});
  EXPECT_DOUBLE_EQ(g.advantages[0], g.advantages[1]);
  EXPECT_DOUBLE_EQ(g.advantages[2], g.advantages[3]);
  EXPECT_NEAR(g.advantages[0], 0.5 / (0.5 + 1e-6), 1e-12);  // mean 0.5, sd 0.5
  EXPECT_NEAR(g.advantages[0] + g.advantages[2], 0.0, 1e-12);
}

TEST(CaGrpo, SingleSampleGroupCarriesNoSignal) {
  for (auto baseline : {Baseline::kGroupNormalised, Baseline::kLeaveOneOut}) {
    CaGrpoOptions o;
    o.baseline = baseline;
    auto g = ScoreGroup({Ok(5.0)}, o);
    EXPECT_DOUBLE_EQ(g.accuracy, 1.0);
    EXPECT_TRUE(g.zero_variance);
    EXPECT_EQ(g.advantages, (std::vector<double>{0}));
  }
}

TEST(CaGrpo, AlphaZeroAlwaysGatesOnAndAlphaAboveOneNever) {
  CaGrpoOptions zero;
  zero.alpha = 0;
  EXPECT_TRUE(ScoreGroup({Wrong(), Wrong()}, zero).gate);
  EXPECT_EQ(ScoreGroup({Ok(10.0), Wrong(), Wrong(), Wrong()}, zero).rewards[0], 2.0);
  CaGrpoOptions above;
  above.alpha = 1.5;
  auto g = ScoreGroup({Ok(10.0), Ok(10.0)}, above);
  EXPECT_FALSE(g.gate);
  EXPECT_EQ(g.rewards, (std::vector<double>{1, 1}));
  EXPECT_EQ(Validate(above), "");
}

TEST(CaGrpo, EmptyGroup) {
  auto g = ScoreGroup({}, CaGrpoOptions{});
  EXPECT_TRUE(g.rewards.empty());
  EXPECT_TRUE(g.advantages.empty());
  EXPECT_FALSE(g.gate);
}

TEST(CaGrpo, ValidateNamesTheBadOption) {
  CaGrpoOptions o;
  EXPECT_EQ(Validate(o), "");
  o.alpha = -0.1;
  EXPECT_NE(Validate(o).find("alpha"), std::string::npos);
  o = {};
  o.beta = NAN;
  EXPECT_NE(Validate(o).find("beta"), std::string::npos);
  o = {};
  o.speedup_cap = 1.0;
  EXPECT_NE(Validate(o).find("speedup_cap"), std::string::npos);
  o = {};
  o.eps = 0;
  EXPECT_NE(Validate(o).find("eps"), std::string::npos);
}

}  // namespace
}  // namespace kz::rewards
