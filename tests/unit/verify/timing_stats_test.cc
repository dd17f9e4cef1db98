// The timing judge (verify/timing_stats.h): the statistics and the host-time cross-check on
// the hand-worked cases the Python worker's tests used, and raw facts that are malformed.
#include "verify/timing_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace kz::verify {
using nlohmann::json;
namespace {

std::vector<double> Repeat(double v, size_t n) { return std::vector<double>(n, v); }

// Raw facts of `n` calls a side with constant times (ms), as the child reports them.
json Facts(double ref, double ref_host, double cand, double cand_host, size_t n = 40) {
  return {{"status", "measured"},     {"method", kTimingMethod},          {"stop_rule", "stable"},
          {"stable", true},           {"flush_bytes", 268435456},         {"reference_ms", Repeat(ref, n)},
          {"candidate_ms", Repeat(cand, n)}, {"reference_host_ms", Repeat(ref_host, n)},
          {"candidate_host_ms", Repeat(cand_host, n)}};
}

json Check(double ref_ev, double ref_host, double cand_ev, double cand_host, size_t n = 40) {
  return HostCheck(Repeat(ref_ev, n), Repeat(cand_ev, n), Repeat(ref_host, n), Repeat(cand_host, n));
}

TEST(TimingStats, QuantileInterpolatesLikeNumpy) {
  std::vector<double> xs = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(Quantile(xs, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Quantile(xs, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(Quantile(xs, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile(xs, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(Quantile(xs, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Quantile({0.6718212205620061}, 0.25), 0.6718212205620061);
  // numpy.quantile of the Python test's sorted uniform(0, 5) sample of 2 (seed 2)
  EXPECT_DOUBLE_EQ(Quantile({4.739137435296747, 4.780171359446247}, 0.25), 4.749395916334121);
}

TEST(TimingStats, RoundsLikePython) {
  EXPECT_DOUBLE_EQ(RoundDecimals(2.5005, 3), 2.501);  // 2.5005000000000001669... in binary
  EXPECT_DOUBLE_EQ(RoundDecimals(0.0625, 3), 0.062);  // an exact tie: to even
  EXPECT_DOUBLE_EQ(RoundDecimals(-1.0005, 3), -1.0);
  EXPECT_DOUBLE_EQ(RoundDecimals(1.23456, 4), 1.2346);
}

TEST(TimingStats, SummarizeInMicroseconds) {
  json s = SummarizeTimes({0.004, 0.001, 0.002, 0.003});
  EXPECT_EQ(s, json::parse(R"({"median_us": 2.5, "median_ci95_us": [1.0, 4.0], "q1_us": 1.75, "q3_us": 3.25,
                              "mean_us": 2.5, "min_us": 1.0, "calls": 4})"));
}

TEST(TimingStats, MedianCiCoversTheTrueMedianAbout95Percent) {
  // Skewed (lognormal) per-call times, as kernels have: the order-statistic interval holds
  // the true median (e^0 = 1) in ~95 % of samples of 30 and of 200 calls.
  for (size_t n : {30u, 200u}) {
    std::mt19937 rng{static_cast<unsigned>(n)};
    std::lognormal_distribution<double> dist(0.0, 0.5);
    int hits = 0;
    for (int k = 0; k < 2000; ++k) {
      std::vector<double> xs(n);
      for (auto& x : xs) x = dist(rng);
      std::sort(xs.begin(), xs.end());
      auto [lo, hi] = MedianCi(xs);
      hits += lo <= 1.0 && 1.0 <= hi;
    }
    EXPECT_GE(hits / 2000.0, 0.93) << n;
    EXPECT_LE(hits / 2000.0, 0.985) << n;
  }
  EXPECT_EQ(MedianCi({3.0}), std::make_pair(3.0, 3.0));
}

TEST(TimingStats, HostCheckPassesHonestCandidates) {
  // Same ~85 µs flush remainder + sync latency on both sides; candidate 2x faster.
  json c = Check(0.200, 0.290, 0.100, 0.192);
  EXPECT_TRUE(c["pass"].get<bool>());
  EXPECT_NEAR(c["excess_us"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(c["limit_us"].get<double>(), 50.0, 1e-9);  // 0.5 x 100 µs
  EXPECT_NEAR(c["reference_gap_us"].get<double>(), 90.0, 1e-9);
}

TEST(TimingStats, HostCheckCatchesWorkTheEventsMiss) {
  // Side-stream matmul: events see ~5 µs, the device-wide sync waits ~1 ms more.
  json c = Check(1.000, 1.090, 0.005, 1.095);
  EXPECT_FALSE(c["pass"].get<bool>());
  EXPECT_NEAR(c["excess_us"].get<double>(), 1000.0, 1e-9);
  EXPECT_NEAR(c["limit_us"].get<double>(), 20.0, 1e-9);
}

TEST(TimingStats, HostCheckFloorRelativeLimitAndReferenceGap) {
  EXPECT_TRUE(Check(0.100, 1.500, 0.100, 0.190)["pass"].get<bool>());  // the reference's own gap is larger
  EXPECT_TRUE(Check(0.010, 0.100, 0.010, 0.119)["pass"].get<bool>());   // 19 µs excess < 20 µs floor
  EXPECT_FALSE(Check(0.010, 0.100, 0.010, 0.121)["pass"].get<bool>());  // 21 µs
  EXPECT_TRUE(Check(1.0, 1.09, 1.0, 1.58)["pass"].get<bool>());         // 490 µs < 0.5 x 1 ms
  EXPECT_FALSE(Check(1.0, 1.09, 1.0, 1.60)["pass"].get<bool>());        // 510 µs
}

TEST(TimingStats, HostCheckUsesMedians) {
  std::vector<double> cand_host = Repeat(0.19, 30);
  cand_host.insert(cand_host.end(), 11, 5.0);  // a few preempted calls
  EXPECT_TRUE(HostCheck(Repeat(0.1, 41), Repeat(0.1, 41), Repeat(0.19, 41), cand_host)["pass"].get<bool>());
}

TEST(TimingStats, StageFromConstantTimes) {
  std::string error;
  json f = Facts(0.5, 0.505, 0.25, 0.255, 30);
  f["rechecked_rounds"] = 3;
  f["pool"] = {{"sets", 3}, {"shared", false}};
  auto stage = BuildTimingStage(f, 2000, &error);
  ASSERT_TRUE(stage) << error;
  EXPECT_EQ((*stage)["status"], "ok");
  EXPECT_EQ((*stage)["reference"]["median_us"], 500.0);
  EXPECT_EQ((*stage)["reference"]["calls"], 30);
  EXPECT_EQ((*stage)["speedup"], 2.0);
  EXPECT_EQ((*stage)["speedup_ci95"], json({2.0, 2.0}));
  EXPECT_NEAR((*stage)["host_median_us"]["candidate"].get<double>(), 255.0, 1e-3);
  EXPECT_EQ((*stage)["flush_bytes"], 268435456);
  EXPECT_EQ((*stage)["rechecked_rounds"], 3);
  EXPECT_EQ((*stage)["pool"]["sets"], 3);
  EXPECT_FALSE(stage->contains("reference_ms"));  // the raw times stay out of the verdict
  EXPECT_EQ(HostMismatchReason(*stage), std::nullopt);
}

TEST(TimingStats, ZeroCandidateMedianGivesNoSpeedup) {
  std::string error;
  auto stage = BuildTimingStage(Facts(0.5, 0.6, 0.0, 0.1), 2000, &error);
  ASSERT_TRUE(stage) << error;
  EXPECT_TRUE((*stage)["speedup"].is_null());
  EXPECT_TRUE((*stage)["speedup_ci95"].is_null());
}

TEST(TimingStats, HostMismatchIsARejectionReason) {
  std::string error;
  auto stage = BuildTimingStage(Facts(1.0, 1.09, 0.005, 1.095), 2000, &error);
  ASSERT_TRUE(stage) << error;
  auto reason = HostMismatchReason(*stage);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("timing.host_mismatch: host wall time around a device-wide sync exceeds the CUDA-event "
                          "time by 1090.0 µs per call (median) vs 90.0 µs for the reference: 1000.0 µs more, limit "
                          "20.0 µs",
                          0),
            0u)
      << *reason;
}

TEST(TimingStats, MalformedFactsAreRefusedWithAReason) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto refused = [](json f, const std::string& expect) {
    std::string error;
    EXPECT_FALSE(BuildTimingStage(f, 2000, &error)) << f.dump();
    EXPECT_NE(error.find(expect), std::string::npos) << error;
  };
  json f = Facts(0.5, 0.6, 0.25, 0.3);
  refused(json::array(), "expected an object");
  json missing = f;
  missing.erase("candidate_host_ms");
  refused(missing, "candidate_host_ms");
  json bad = f;
  bad["reference_ms"][3] = nan;
  refused(bad, "is not a time in");
  bad = f;
  bad["candidate_ms"][0] = -0.001;
  refused(bad, "is not a time in");
  bad = f;
  bad["candidate_ms"][0] = "0.1";
  refused(bad, "is not a time in");
  bad = f;
  bad["reference_ms"] = json::array();
  refused(bad, "0 calls");
  bad = f;
  bad["candidate_ms"].push_back(0.25);
  refused(bad, "differ in length");
  refused(Facts(0.5, 0.6, 0.25, 0.3, 2001), "2001 calls");
  bad = f;
  bad["stop_rule"] = "whenever";
  refused(bad, "stop_rule");
  bad = f;
  bad["stable"] = "yes";
  refused(bad, "stable");
  bad = f;
  bad["flush_bytes"] = -1;
  refused(bad, "flush_bytes");
  bad = f;
  bad["pool"] = 3;
  refused(bad, "pool");
}

}  // namespace
}  // namespace kz::verify
