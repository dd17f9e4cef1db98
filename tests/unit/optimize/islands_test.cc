// kz optimize's island populations (src/optimize/islands.h): one elite per behaviour cell
// ranked by the speedup's lower bound, a bounded archive, a tournament that favours the
// better parent, ring migration, and a resume that draws the same parents.
#include "optimize/islands.h"

#include <gtest/gtest.h>

#include <map>

namespace kz::optimize {
namespace {

Elite E(const std::string& id, std::vector<int> cell, double lo) { return {id, std::move(cell), lo * 1.1, lo}; }

TEST(IslandsTest, OneElitePerCellByTheLowerBound) {
  Islands is(1, 8, 1);
  EXPECT_TRUE(is.Offer(0, E("a", {0, 1}, 1.2)));
  EXPECT_FALSE(is.Offer(0, E("b", {0, 1}, 1.1))) << "worse in an occupied cell";
  EXPECT_FALSE(is.Offer(0, E("b2", {0, 1}, 1.2))) << "a tie keeps the incumbent";
  EXPECT_TRUE(is.Offer(0, E("c", {0, 1}, 1.5)));
  EXPECT_TRUE(is.Offer(0, E("d", {1, 1}, 0.9))) << "a new cell is kept even when slower: diversity";
  EXPECT_EQ(is.archive(0).size(), 2u);
  EXPECT_EQ(is.archive(0).at({0, 1}).id, "c");
  EXPECT_EQ(is.Best()->id, "c");
}

TEST(IslandsTest, AFullArchiveDropsItsWeakestOnlyForABetterNewCell) {
  Islands is(1, 2, 1);
  is.Offer(0, E("a", {0}, 1.0));
  is.Offer(0, E("b", {1}, 2.0));
  EXPECT_FALSE(is.Offer(0, E("c", {2}, 0.5)));
  EXPECT_TRUE(is.Offer(0, E("d", {3}, 1.5)));
  EXPECT_EQ(is.archive(0).size(), 2u);
  EXPECT_EQ(is.archive(0).count({0}), 0u) << "a, the weakest, went";
}

TEST(IslandsTest, TheTournamentFavoursTheBetterParent) {
  Islands is(1, 8, 42);
  EXPECT_FALSE(is.PickParent(0)) << "empty";
  is.Offer(0, E("slow", {0}, 1.0));
  is.Offer(0, E("fast", {1}, 3.0));
  std::map<std::string, int> n;
  for (int i = 0; i < 4000; ++i) ++n[is.PickParent(0)->id];
  // Two draws, the better wins: P(fast) = 1 - 1/4.
  EXPECT_NEAR(n["fast"] / 4000.0, 0.75, 0.03);
  EXPECT_GT(n["slow"], 0) << "the weaker one still gets chosen";
}

TEST(IslandsTest, MigrationMovesEachBestAlongTheRing) {
  Islands is(3, 8, 1);
  is.Offer(0, E("a", {0}, 2.0));
  is.Offer(1, E("b", {0}, 1.0));
  EXPECT_EQ(is.Migrate(), 2);  // a beats b in island 1's cell; b fills island 2's empty cell
  EXPECT_EQ(is.archive(1).at({0}).id, "a");
  EXPECT_EQ(is.archive(2).at({0}).id, "b");
  EXPECT_TRUE(is.archive(0).count({0}));
  Islands one(1, 8, 1);
  one.Offer(0, E("x", {0}, 1.0));
  EXPECT_EQ(one.Migrate(), 0) << "one island: nowhere to go";
}

TEST(IslandsTest, AResumedRunDrawsTheSameParents) {
  Islands is(2, 8, 7);
  for (int c = 0; c < 5; ++c) is.Offer(c % 2, E("e" + std::to_string(c), {c}, 1.0 + c));
  for (int i = 0; i < 13; ++i) is.PickParent(i % 2);
  std::string err;
  auto resumed = Islands::FromJson(is.ToJson(), &err);
  ASSERT_TRUE(resumed) << err;
  for (int i = 0; i < 50; ++i) EXPECT_EQ(is.PickParent(i % 2)->id, resumed->PickParent(i % 2)->id) << i;
  auto j = is.ToJson();
  j["islands"] = "x";
  EXPECT_FALSE(Islands::FromJson(j, &err));
  EXPECT_NE(err.find("corrupted"), std::string::npos) << err;
}

}  // namespace
}  // namespace kz::optimize
