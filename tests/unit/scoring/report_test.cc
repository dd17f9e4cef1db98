// Report: records to task results (scored bad inputs count as incorrect), curves, Markdown.
#include "scoring/report.h"

#include <gtest/gtest.h>

namespace kz::scoring {
namespace {
using nlohmann::json;

json Rec(const std::string& task, int level, int sample, const std::string& status, json speedup = nullptr) {
  return {{"task", task}, {"level", level}, {"sample", sample}, {"status", status}, {"speedup", speedup},
          {"output_tokens", 10 * (sample + 1)}};
}

TEST(Report, TaskResultsSortedWithScoredBadInputs) {
  std::vector<json> recs = {Rec("L1_1", 1, 2, "correct", 1.5), Rec("L1_1", 1, 0, "incorrect"),
                            Rec("L2_4", 2, 0, "correct", 0.5)};
  json bad = json::array({{{"task", "L1_1"}, {"level", 1}, {"sample", 1}, {"scored_as_incorrect", true}},
                          {{"task", nullptr}, {"sample", 0}, {"scored_as_incorrect", false}}});
  auto tasks = BuildTaskResults(recs, bad);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].task_id, "L1_1");
  ASSERT_EQ(tasks[0].samples.size(), 3u);
  EXPECT_FALSE(tasks[0].samples[0].correct);  // sample 0 first
  EXPECT_FALSE(tasks[0].samples[1].correct);  // the scored bad input
  EXPECT_TRUE(tasks[0].samples[2].correct);
  EXPECT_DOUBLE_EQ(*tasks[0].samples[2].speedup, 1.5);
  EXPECT_EQ(tasks[1].level, 2);
}

TEST(Report, PassAt1MatchesHandComputation) {
  json run = {{"suite", "s"}, {"policy", "strict"}, {"keys", json::array({"a", "b", "c", "d"})},
              {"bad_inputs", json::array()}, {"samples", {{"total", 4}}}};
  std::vector<json> recs = {Rec("L1_1", 1, 0, "correct", 2.0), Rec("L1_1", 1, 1, "incorrect"),
                            Rec("L2_1", 2, 0, "not_run")};
  json r = BuildReport({run, recs}, "now");
  EXPECT_DOUBLE_EQ(r["metrics"]["overall"]["pass@1"].get<double>(), (0.5 + 0.0) / 2);
  EXPECT_DOUBLE_EQ(r["metrics"]["level_1"]["fast_1.5@1"].get<double>(), 0.5);
  EXPECT_EQ(r["samples"]["pending"], 1);
  EXPECT_EQ(r["samples"]["statuses"]["not_run"], 1);
  EXPECT_TRUE(r.contains("warnings"));
  // Curves: k = 1 only (L2_1 has one sample), 51 points from p = 0 to 2.5.
  ASSERT_EQ(r["fast_p_curves"]["overall"].size(), 1u);
  ASSERT_EQ(r["fast_p_curves"]["overall"]["1"].size(), 51u);
  EXPECT_DOUBLE_EQ(r["fast_p_curves"]["overall"]["1"][0][1].get<double>(), 0.25);   // p = 0
  EXPECT_DOUBLE_EQ(r["fast_p_curves"]["overall"]["1"][50][1].get<double>(), 0.0);   // p = 2.5
  EXPECT_FALSE(r["fast_p_curves"]["level_1"].contains("2"));  // k in {1, 5, 10} only
  std::string md = ReportMarkdown(r);
  EXPECT_NE(md.find("| overall | 2 | 3 | 0.250 |"), std::string::npos) << md;
  EXPECT_LT(md.find("| overall"), md.find("| level_1"));
  EXPECT_EQ(md.find("pass@5"), std::string::npos);
}

TEST(Report, FastPOverSample0NeedsSampleIdZero) {
  // L1_1 lacks sample 0 (numbered from 1, or interrupted): its sample 1 is fast but is not
  // sample 0, so the task counts as not fast; L1_2's sample 0 is fast.
  json run = {{"keys", json::array({"a", "b", "c"})}, {"bad_inputs", json::array()}, {"samples", {{"total", 3}}}};
  std::vector<json> recs = {Rec("L1_1", 1, 1, "correct", 2.0), Rec("L1_2", 1, 0, "correct", 2.0),
                            Rec("L1_2", 1, 1, "incorrect")};
  json r = BuildReport({run, recs}, "now");
  EXPECT_DOUBLE_EQ(r["metrics"]["overall"]["fast_p_sample0"]["fast_1.0"].get<double>(), 0.5);
  EXPECT_FALSE(BuildTaskResults(recs, json::array())[0].has_sample0);
}

TEST(Report, NoRecordsIsNotAnError) {
  json r = BuildReport({json{{"keys", json::array()}}, {}}, "now");
  EXPECT_TRUE(r["metrics"].empty());
  EXPECT_NE(ReportMarkdown(r).find("No verified samples"), std::string::npos);
}

}  // namespace
}  // namespace kz::scoring

namespace kz::scoring {
namespace {
using nlohmann::json;

// A correct record timed on `gpu` at `median_us`, with the verifier's vs-eager speedup.
json Timed(const std::string& task, int level, int sample, double median_us, double speedup,
           const std::string& gpu = "NVIDIA H200") {
  return {{"task", task}, {"level", level}, {"sample", sample}, {"status", "correct"}, {"speedup", speedup},
          {"verdict", {{"device", {{"name", gpu}}},
                       {"stages", {{"timing", {{"status", "ok"}, {"candidate", {{"median_us", median_us}}}}}}}}}};
}

TEST(ReportBaseline, SpeedupsAgainstCompileHandWorked) {
  CompileBaseline b;
  b.path = "/x/baseline_time_torch_compile_inductor_default.json";
  b.table = {{"level1", {{"1_A.py", {{"mean", 0.3}, {"median", 0.2}, {"hardware", "NVIDIA H200"}}}}},
             {"level2", {{"1_B.py", {{"mean", 1.0}, {"hardware", "NVIDIA H200"}}}}}};
  json run = {{"suite", "s"}, {"policy", "strict"}, {"keys", json::array({"1", "2", "3", "4"})},
              {"bad_inputs", json::array()}, {"samples", {{"total", 4}}},
              {"tasks", {{"L1_1", {{"level", 1}, {"file", "1_A.py"}}},
                         {"L2_1", {{"level", 2}, {"file", "1_B.py"}}},
                         {"L2_2", {{"level", 2}, {"file", "2_C.py"}}}}}};
  // L1_1: 0.2 ms compile (median); samples at 100 µs (2.0x) and 400 µs (0.5x).
  // L2_1: 1.0 ms compile (mean); one sample at 800 µs (1.25x), one on an H100 (not compared).
  // L2_2: no baseline entry.
  std::vector<json> recs = {Timed("L1_1", 1, 0, 100, 3.0), Timed("L1_1", 1, 1, 400, 0.7),
                            Timed("L2_1", 2, 0, 800, 1.1), Timed("L2_1", 2, 1, 10, 50, "NVIDIA H100 80GB HBM3"),
                            Timed("L2_2", 2, 0, 5, 9.0)};
  ReportInput in{run, recs, b};
  json r = BuildReport(in, "now");
  const json& vc = r["metrics"]["overall"]["vs_compile"];
  EXPECT_EQ(vc["tasks"], 2);
  EXPECT_EQ(vc["tasks_without_baseline"], 1);
  // fast_1.0@1: L1_1 1 of 2, L2_1 1 of 2 (the H100 sample is not fast) → 0.5.
  EXPECT_DOUBLE_EQ(vc["fast_1.0@1"].get<double>(), 0.5);
  // fast_1.5@1: only L1_1's 2.0 → (0.5 + 0) / 2.
  EXPECT_DOUBLE_EQ(vc["fast_1.5@1"].get<double>(), 0.25);
  // geomean over 2.0, 0.5, 1.25 = 1.25^(1/3).
  EXPECT_NEAR(vc["geomean_speedup_vs_compile"].get<double>(), std::cbrt(1.25), 1e-12);
  EXPECT_EQ(vc["correct_timed_samples"], 3);
  EXPECT_EQ(r["metrics"]["level_2"]["vs_compile"]["tasks"], 1);
  EXPECT_DOUBLE_EQ(r["metrics"]["overall"]["fast_1.0@1"].get<double>(), 5.0 / 6) << "vs eager unchanged";
  EXPECT_EQ(r["baseline"]["missing"], json({"L2_2"}));
  EXPECT_EQ(r["baseline"]["samples_other_hardware"], 1);
  EXPECT_EQ(r["baseline"]["statistic"], json({"mean", "median"}));
  ASSERT_TRUE(r.contains("warnings"));
  EXPECT_NE(r["warnings"].dump().find("other hardware"), std::string::npos);
  EXPECT_TRUE(r["fast_p_curves_vs_compile"].contains("overall"));
  EXPECT_FALSE(r["fast_p_curves_vs_compile"].contains("level_3"));
  std::string md = ReportMarkdown(r);
  EXPECT_NE(md.find("## Against torch.compile"), std::string::npos) << md;
  EXPECT_NE(md.find("| overall | 2 | 3 | 0.750 | 0.500 | 0.250 | 1.000 | 1.08 |"), std::string::npos) << md;
}

TEST(ReportBaseline, AbsentBaselineLeavesTheReportAsBefore) {
  json run = {{"keys", json::array({"1"})}, {"tasks", {{"L1_1", {{"level", 1}, {"file", "1_A.py"}}}}}};
  json r = BuildReport({run, {Timed("L1_1", 1, 0, 100, 3.0)}}, "now");
  EXPECT_FALSE(r.contains("baseline"));
  EXPECT_FALSE(r.contains("fast_p_curves_vs_compile"));
  EXPECT_FALSE(r["metrics"]["overall"].contains("vs_compile"));
  EXPECT_EQ(ReportMarkdown(r).find("torch.compile"), std::string::npos);
}

TEST(ReportBaseline, ServerErrorsAreWarned) {
  json run = {{"keys", json::array({"1", "2"})}};
  json r = BuildReport({run, {Timed("L1_1", 1, 0, 100, 3.0),
                              {{"task", "L1_1"}, {"level", 1}, {"sample", 1}, {"status", "server_error"}}}},
                       "now");
  EXPECT_DOUBLE_EQ(r["metrics"]["overall"]["pass@1"].get<double>(), 0.5) << "a server error counts as incorrect";
  EXPECT_NE(r["warnings"].dump().find("server_error"), std::string::npos);
}

}  // namespace
}  // namespace kz::scoring
