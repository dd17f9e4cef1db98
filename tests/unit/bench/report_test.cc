// Report: records to task results (scored bad inputs count as incorrect), curves, Markdown.
#include "bench/report.h"

#include <gtest/gtest.h>

namespace kz::bench {
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

TEST(Report, NoRecordsIsNotAnError) {
  json r = BuildReport({json{{"keys", json::array()}}, {}}, "now");
  EXPECT_TRUE(r["metrics"].empty());
  EXPECT_NE(ReportMarkdown(r).find("No verified samples"), std::string::npos);
}

}  // namespace
}  // namespace kz::bench
