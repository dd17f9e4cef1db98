#include "rewards/frontier.h"

#include <gtest/gtest.h>

namespace kz::rewards {
namespace {

double R(bool valid, int n, int s, double penalty = -1.0) {
  double r = 99;
  std::string err;
  EXPECT_TRUE(FrontierReward({valid, n, s}, {penalty}, &r, &err)) << err;
  return r;
}

// Hand-worked: r = 1 - 2|s/n - 0.5|.
TEST(FrontierReward, HandWorkedCases) {
  EXPECT_DOUBLE_EQ(R(true, 8, 0), 0.0);   // p = 0: too hard
  EXPECT_DOUBLE_EQ(R(true, 8, 8), 0.0);   // p = 1: too easy
  EXPECT_DOUBLE_EQ(R(true, 8, 4), 1.0);   // p = 0.5: the frontier
  EXPECT_DOUBLE_EQ(R(true, 4, 1), 0.5);   // p = 0.25: 1 - 2 * 0.25
  EXPECT_DOUBLE_EQ(R(true, 4, 3), 0.5);   // p = 0.75
  EXPECT_DOUBLE_EQ(R(true, 10, 3), 0.6);  // p = 0.3: 1 - 2 * 0.2
  EXPECT_DOUBLE_EQ(R(true, 1, 0), 0.0);   // n = 1: p is 0 or 1, never rewarded
  EXPECT_DOUBLE_EQ(R(true, 1, 1), 0.0);
  EXPECT_NEAR(R(true, 3, 1), 2.0 / 3.0, 1e-15);  // p = 1/3: 1 - 2/6
}

TEST(FrontierReward, InvalidGetsThePenalty) {
  EXPECT_DOUBLE_EQ(R(false, 0, 0), -1.0);
  EXPECT_DOUBLE_EQ(R(false, 8, 4, -0.25), -0.25);  // attempts of an invalid module do not matter
  EXPECT_DOUBLE_EQ(R(false, 0, 0, 0.0), 0.0);
}

TEST(FrontierReward, UndefinedRateIsAnError) {
  double r;
  std::string err;
  EXPECT_FALSE(FrontierReward({true, 0, 0}, {}, &r, &err));
  EXPECT_NE(err.find("no Coder attempts"), std::string::npos);
  EXPECT_FALSE(FrontierReward({true, 2, 3}, {}, &r, &err));
  EXPECT_FALSE(FrontierReward({true, 2, -1}, {}, &r, &err));
}

}  // namespace
}  // namespace kz::rewards
