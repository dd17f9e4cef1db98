// Metrics against hand-worked cases.
#include "scoring/metrics.h"

#include <gtest/gtest.h>

namespace kz::scoring {
namespace {
SampleResult Ok(double speedup) { return {true, speedup, std::nullopt, std::nullopt}; }
SampleResult Bad() { return {false, std::nullopt, std::nullopt, std::nullopt}; }
}  // namespace

TEST(PassAtK, HandWorkedValues) {
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 1), 0.4);                 // 2 of 5
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 2), 1.0 - 3.0 / 10.0);    // 1 - C(3,2)/C(5,2)
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 3), 1.0 - 1.0 / 10.0);    // 1 - C(3,3)/C(5,3)
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 4), 1.0);                 // n - c < k
  EXPECT_DOUBLE_EQ(PassAtK(10, 0, 5), 0.0);
  EXPECT_DOUBLE_EQ(PassAtK(10, 10, 1), 1.0);
  EXPECT_NEAR(PassAtK(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-12);  // 1 - C(7,5)/C(10,5)
  EXPECT_THROW(PassAtK(5, 6, 1), std::invalid_argument);
  EXPECT_THROW(PassAtK(5, 2, 6), std::invalid_argument);
}

TEST(FastCount, StrictlyGreaterAndOnlyCorrect) {
  std::vector<SampleResult> s = {Ok(2.0), Ok(1.0), Bad(), Ok(1.2), {false, 5.0, std::nullopt, std::nullopt}};
  EXPECT_EQ(FastCount(s, 1.0), 2);  // 2.0 and 1.2; exactly 1.0 does not count; incorrect 5.0 neither
  EXPECT_EQ(FastCount(s, 0.0), 3);
  EXPECT_EQ(FastCount(s, 2.0), 0);
}

TEST(FastKey, Format) {
  EXPECT_EQ(FastKey(1.0, 1), "fast_1.0@1");
  EXPECT_EQ(FastKey(1.5, 5), "fast_1.5@5");
  EXPECT_EQ(FastKey(0.0, 1), "fast_0.0@1");
  EXPECT_EQ(FastKey(0.25, 2), "fast_0.25@2");
  EXPECT_EQ(FastKey(2, 10), "fast_2.0@10");
}

TEST(ComputeMetrics, TwoTasksAveraged) {
  // Task A: 4 samples, 2 correct (speedups 2.0, 0.5). Task B: 4 samples, 1 correct (1.5).
  std::vector<TaskResult> tasks = {
      {"a", 1, {Ok(2.0), Bad(), Ok(0.5), Bad()}},
      {"b", 1, {Bad(), Ok(1.5), Bad(), Bad()}},
  };
  auto m = ComputeMetrics(tasks);
  EXPECT_EQ(m["tasks"], 2);
  EXPECT_EQ(m["samples"], 8);
  EXPECT_DOUBLE_EQ(m["pass@1"].get<double>(), (0.5 + 0.25) / 2);
  // pass@2: A 1 - C(2,2)/C(4,2) = 5/6; B 1 - C(3,2)/C(4,2) = 1/2.
  EXPECT_NEAR(m["pass@2"].get<double>(), (5.0 / 6 + 0.5) / 2, 1e-12);
  EXPECT_TRUE(m.contains("pass@4") && !m.contains("pass@5"));
  // fast_1.0@1: A has 1 of 4 (2.0), B 1 of 4 (1.5).
  EXPECT_DOUBLE_EQ(m["fast_1.0@1"].get<double>(), 0.25);
  // fast_1.5@1: only A's 2.0 (B's 1.5 is not > 1.5).
  EXPECT_DOUBLE_EQ(m["fast_1.5@1"].get<double>(), 0.125);
  // fast over sample 0: A's sample 0 is 2.0 (> 1), B's sample 0 is wrong.
  EXPECT_DOUBLE_EQ(m["fast_p_sample0"]["fast_1.0"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["fast_p_sample0"]["fast_2.0"].get<double>(), 0.0);
  // geomean over correct samples: (2.0 * 0.5 * 1.5)^(1/3) = 1.5^(1/3).
  EXPECT_NEAR(m["geomean_speedup_correct"].get<double>(), std::cbrt(1.5), 1e-12);
  EXPECT_TRUE(m["mean_output_tokens"].is_null());
}

TEST(ComputeMetrics, TasksWithFewerSamplesAreLeftOutOfLargerK) {
  std::vector<TaskResult> tasks = {{"a", 1, {Ok(1.2), Bad()}}, {"b", 1, {Bad(), Bad(), Ok(3), Bad()}}};
  MetricsOptions o;
  o.ks = {1, 4};
  auto m = ComputeMetrics(tasks, o);
  EXPECT_DOUBLE_EQ(m["pass@1"].get<double>(), (0.5 + 0.25) / 2);
  EXPECT_DOUBLE_EQ(m["pass@4"].get<double>(), 1.0) << "only task b has 4 samples";
}

TEST(ComputeReport, OverallAndPerLevel) {
  std::vector<TaskResult> tasks = {
      {"l1", 1, {{true, 2.0, 100.0, std::nullopt}}, false}, {"l2", 2, {{false, std::nullopt, 300.0, std::nullopt}}, false}};
  auto r = ComputeReport(tasks);
  EXPECT_DOUBLE_EQ(r["overall"]["pass@1"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(r["level_1"]["pass@1"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["level_2"]["pass@1"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r["overall"]["mean_output_tokens"].get<double>(), 200.0);
}

TEST(ComputeMetrics, EmptyInputsGiveCountsOnly) {
  auto m = ComputeMetrics({});
  EXPECT_EQ(m["tasks"], 0);
  EXPECT_FALSE(m.contains("pass@1"));
}

}  // namespace kz::scoring

namespace kz::scoring {
namespace {
SampleResult Vc(double vs_eager, std::optional<double> vs_compile) { return {true, vs_eager, std::nullopt, vs_compile}; }
SampleResult Wrong() { return {false, std::nullopt, std::nullopt, std::nullopt}; }
}  // namespace

TEST(ComputeCompileMetrics, OnlyTasksWithABaselineHandWorked) {
  // a: baseline; 4 samples, vs compile 2.0, 0.8 (correct), 2 wrong.  b: baseline; 4 samples,
  // vs compile 1.2 (correct but 3.0 vs eager), 3 wrong.  c: no baseline (ignored, counted).
  std::vector<TaskResult> tasks = {
      {"a", 1, {Vc(4.0, 2.0), Wrong(), Vc(1.6, 0.8), Wrong()}, true},
      {"b", 2, {Wrong(), Vc(3.0, 1.2), Wrong(), Wrong()}, true},
      {"c", 2, {Vc(9.0, std::nullopt)}, false},
  };
  auto m = ComputeCompileMetrics(tasks);
  EXPECT_EQ(m["tasks"], 2);
  EXPECT_EQ(m["tasks_without_baseline"], 1);
  EXPECT_EQ(m["samples"], 8);
  EXPECT_FALSE(m.contains("pass@1")) << "pass@k is not a vs-compile metric";
  // fast_1.0@1: a 1/4 (2.0), b 1/4 (1.2) → 0.25. fast_1.5@1: a 1/4, b 0 → 0.125.
  EXPECT_DOUBLE_EQ(m["fast_1.0@1"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(m["fast_1.5@1"].get<double>(), 0.125);
  // fast_0.5@2: a has 2 of 4 → 1 - C(2,2)/C(4,2) = 5/6; b 1 of 4 → 1/2.
  EXPECT_NEAR(m["fast_0.5@2"].get<double>(), (5.0 / 6 + 0.5) / 2, 1e-12);
  // sample 0: a's is 2.0 vs compile (> 1, not > 2), b's is wrong.
  EXPECT_DOUBLE_EQ(m["fast_p_sample0"]["fast_1.0"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["fast_p_sample0"]["fast_2.0"].get<double>(), 0.0);
  // geomean over correct samples with a vs-compile speedup: (2.0 * 0.8 * 1.2)^(1/3).
  EXPECT_NEAR(m["geomean_speedup_vs_compile"].get<double>(), std::cbrt(1.92), 1e-12);
  EXPECT_EQ(m["correct_timed_samples"], 3);
}

TEST(ComputeCompileMetrics, ReportScopesAndNoBaseline) {
  std::vector<TaskResult> tasks = {{"a", 1, {Vc(1.0, 3.0)}, true}, {"b", 2, {Vc(1.0, 0.5)}, false}};
  MetricsOptions o;
  auto plain = ComputeReport(tasks, o);
  EXPECT_FALSE(plain["overall"].contains("vs_compile"));
  o.vs_compile = true;
  auto r = ComputeReport(tasks, o);
  EXPECT_DOUBLE_EQ(r["overall"]["vs_compile"]["fast_1.0@1"].get<double>(), 1.0);
  EXPECT_EQ(r["level_2"]["vs_compile"]["tasks"], 0);
  EXPECT_TRUE(r["level_2"]["vs_compile"]["geomean_speedup_vs_compile"].is_null());
  EXPECT_DOUBLE_EQ(r["overall"]["fast_1.0@1"].get<double>(), 0.0) << "vs-eager metrics unchanged";
}

}  // namespace kz::scoring
