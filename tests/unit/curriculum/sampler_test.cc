#include "curriculum/sampler.h"

#include <gtest/gtest.h>

#include <set>

#include "curriculum/test_catalog.h"

namespace kz::curriculum {
namespace {

SamplerOptions Opt(size_t k, double rho, uint64_t seed, double smoothing = 0.5) {
  SamplerOptions o;
  o.k = k, o.rho = rho, o.seed = seed, o.smoothing = smoothing;
  return o;
}

Stats PairStats(size_t n, const std::vector<std::vector<size_t>>& modules) {
  Stats s;
  s.count.assign(n, 0);
  s.pair.assign(n * n, 0);
  for (const auto& m : modules) CountModule(&s, "m", m);
  return s;
}

// Sets until every API has appeared (0: never within `limit`).
size_t SetsToCover(Sampler& sampler, size_t n, size_t limit, const std::vector<std::vector<size_t>>& frontier = {}) {
  std::set<size_t> seen;
  for (size_t j = 1; j <= limit; ++j) {
    for (size_t a : sampler.Next(frontier).apis) seen.insert(a);
    if (seen.size() == n) return j;
  }
  return 0;
}

TEST(Sampler, SameSeedSameSets) {
  Stats s = PairStats(40, {{0, 1, 2}, {1, 2}, {5, 6}});
  Sampler a, b, c;
  std::string err;
  ASSERT_TRUE(a.Init(40, &s, Opt(3, 0, 7), &err)) << err;
  ASSERT_TRUE(b.Init(40, &s, Opt(3, 0, 7), &err));
  ASSERT_TRUE(c.Init(40, &s, Opt(3, 0, 8), &err));
  bool differs = false;
  for (int i = 0; i < 50; ++i) {
    auto x = a.Next({}), y = b.Next({}), z = c.Next({});
    EXPECT_EQ(x.apis, y.apis);
    EXPECT_EQ(x.apis.size(), 3u);
    EXPECT_EQ(std::set<size_t>(x.apis.begin(), x.apis.end()).size(), 3u);  // no API twice
    differs |= x.apis != z.apis;
  }
  EXPECT_TRUE(differs);
}

// The documented bound B = ceil(n / (1 - rho)), for many seeds, k, rho, with and without a
// frontier (frontier sets here never hold API n-1, so it must come from fresh sets).
TEST(Sampler, CoverageWithinTheBound) {
  const size_t n = 64;
  Stats s = PairStats(n, {{0, 1}, {0, 1}, {0, 1}, {2, 3}});  // heavy pairs pull draws away
  std::vector<std::vector<size_t>> frontier = {{0, 1}, {2, 3, 4}};
  for (double rho : {0.0, 0.25, 0.5, 0.9})
    for (size_t k : {1, 2, 5})
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        Sampler sampler;
        std::string err;
        ASSERT_TRUE(sampler.Init(n, &s, Opt(k, rho, seed), &err)) << err;
        size_t bound = Sampler::CoverageBound(n, rho);
        size_t took = SetsToCover(sampler, n, bound, frontier);
        EXPECT_GT(took, 0u) << "rho " << rho << " k " << k << " seed " << seed << " bound " << bound;
      }
  EXPECT_EQ(Sampler::CoverageBound(64, 0.0), 64u);
  EXPECT_EQ(Sampler::CoverageBound(64, 0.5), 128u);
  EXPECT_EQ(Sampler::CoverageBound(10, 0.25), 14u);
}

TEST(Sampler, EveryWindowOfTwoBoundsCoversAgain) {
  const size_t n = 30;
  Sampler sampler;
  std::string err;
  ASSERT_TRUE(sampler.Init(n, nullptr, Opt(2, 0.2, 3), &err));
  std::vector<std::vector<size_t>> frontier = {{1, 2}};
  std::vector<std::vector<size_t>> sets;
  for (int j = 0; j < 1000; ++j) sets.push_back(sampler.Next(frontier).apis);
  size_t window = 2 * Sampler::CoverageBound(n, 0.2);
  for (size_t lo = 0; lo + window <= sets.size(); lo += 17) {
    std::set<size_t> seen;
    for (size_t j = lo; j < lo + window; ++j) seen.insert(sets[j].begin(), sets[j].end());
    EXPECT_EQ(seen.size(), n) << "window at " << lo;
  }
}

TEST(Sampler, FrontierShareAndFallback) {
  Sampler sampler;
  std::string err;
  ASSERT_TRUE(sampler.Init(10, nullptr, Opt(2, 0.25, 1), &err));
  int from_frontier = 0;
  for (int j = 0; j < 100; ++j) from_frontier += sampler.Next({{3, 4}}).from_frontier;
  EXPECT_EQ(from_frontier, 25);
  Sampler empty;
  ASSERT_TRUE(empty.Init(10, nullptr, Opt(2, 0.5, 1), &err));
  for (int j = 0; j < 10; ++j) EXPECT_FALSE(empty.Next({}).from_frontier);  // no frontier: fresh sets
}

TEST(Sampler, CoOccurrenceWeighsPartners) {
  const size_t n = 20;
  std::vector<std::vector<size_t>> modules(50, {0, 1});
  Stats s = PairStats(n, modules);
  Sampler sampler;
  std::string err;
  ASSERT_TRUE(sampler.Init(n, &s, Opt(2, 0, 5, 0.5), &err));
  int with_partner = 0, anchored = 0;
  for (int j = 0; j < 400; ++j) {
    auto d = sampler.Next({});
    if (d.anchor != 0) continue;
    ++anchored;
    with_partner += d.apis == std::vector<size_t>{0, 1};
  }
  ASSERT_GT(anchored, 10);
  EXPECT_GT(with_partner, anchored * 8 / 10);  // weight 50.5 against 18 x 0.5
}

TEST(Sampler, BadOptions) {
  Sampler s;
  std::string err;
  EXPECT_FALSE(s.Init(5, nullptr, Opt(0, 0, 1), &err));
  EXPECT_FALSE(s.Init(5, nullptr, Opt(6, 0, 1), &err));
  EXPECT_FALSE(s.Init(5, nullptr, Opt(2, 1.0, 1), &err));
  EXPECT_FALSE(s.Init(0, nullptr, Opt(1, 0, 1), &err));
  Stats other = PairStats(4, {});
  EXPECT_FALSE(s.Init(5, &other, Opt(2, 0, 1), &err));
  EXPECT_NE(err.find("statistics of 4 APIs"), std::string::npos);
}

}  // namespace
}  // namespace kz::curriculum
