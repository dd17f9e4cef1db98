// The paired bootstrap against hand-worked cases, and `kz train report` on a written
// metrics.jsonl (docs/training.md, "The report").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "train/paired_bootstrap.h"
#include "train/report.h"
#include "train/schedule.h"
#include "util/fs.h"

namespace kz::train {
namespace {

TEST(PairedBootstrap, NoChangeGivesAZeroInterval) {
  std::vector<double> a = {1, 0, 1, 0, 1};
  auto i = PairedBootstrap(a, a, 2000, 0.95, 7);
  EXPECT_EQ(i.delta, 0);
  EXPECT_EQ(i.lo, 0);
  EXPECT_EQ(i.hi, 0);
  EXPECT_FALSE(i.excludes_zero());
  EXPECT_EQ(i.tasks, 5);
}

TEST(PairedBootstrap, EveryTaskGainedGivesOneExactly) {
  std::vector<double> a(8, 0), b(8, 1);
  auto i = PairedBootstrap(a, b, 1000, 0.95, 1);
  EXPECT_EQ(i.delta, 1);
  EXPECT_EQ(i.lo, 1);
  EXPECT_EQ(i.hi, 1);
  EXPECT_TRUE(i.excludes_zero());
}

TEST(PairedBootstrap, MixedChangeStraddlesZeroAndIsSeeded) {
  // 2 tasks gained, 2 lost, 16 unchanged: delta 0, an interval around it.
  std::vector<double> a(20, 0), b(20, 0);
  a[0] = a[1] = 1;
  b[2] = b[3] = 1;
  auto i = PairedBootstrap(a, b, 5000, 0.95, 3);
  EXPECT_DOUBLE_EQ(i.delta, 0);
  EXPECT_LT(i.lo, 0);
  EXPECT_GT(i.hi, 0);
  EXPECT_FALSE(i.excludes_zero());
  auto j = PairedBootstrap(a, b, 5000, 0.95, 3);
  EXPECT_EQ(i.lo, j.lo);
  EXPECT_EQ(i.hi, j.hi);
}

TEST(PairedBootstrap, ClearGainExcludesZeroAndPairingMatters) {
  // 12 of 40 tasks gained, none lost: delta 0.3; the paired interval excludes zero.
  std::vector<double> a(40, 0), b(40, 0);
  for (int t = 0; t < 20; ++t) a[size_t(t)] = b[size_t(t)] = 1;  // solved by both
  for (int t = 20; t < 32; ++t) b[size_t(t)] = 1;
  auto i = PairedBootstrap(a, b, 10000, 0.95, 1);
  EXPECT_NEAR(i.delta, 0.3, 1e-12);
  EXPECT_GT(i.lo, 0.1);
  EXPECT_LT(i.hi, 0.5);
  EXPECT_TRUE(i.excludes_zero());
}

TEST(PairedBootstrap, EmptyInputIsAllZero) {
  auto i = PairedBootstrap({}, {}, 100, 0.95, 1);
  EXPECT_EQ(i.tasks, 0);
  EXPECT_FALSE(i.excludes_zero());
}

TEST(Schedule, BaselineEvaluationComesBeforeTheFirstRound) {
  RunConfig c;
  c.sft_data = "sft.jsonl";
  c.eval_tasks = "eval";
  c.rounds = 2;
  auto u = Schedule(c);
  std::vector<std::string> ids;
  for (const auto& x : u) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"sft", "r0.eval", "r1.coder.1", "r1.eval", "r2.coder.1", "r2.eval"}));
  c.eval_tasks.clear();
  EXPECT_EQ(Schedule(c).size(), 3u);
}

TEST(TrainReport, TablesIntervalsAndPlotsFromMetrics) {
  std::string dir = std::filesystem::temp_directory_path() / ("kz_report_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto outcomes = [](int solved, int n) {
    nlohmann::json o = nlohmann::json::array();
    for (int t = 0; t < n; ++t) o.push_back({"task" + std::to_string(t), t < solved, false});
    return o;
  };
  std::ofstream m(dir + "/metrics.jsonl");
  m << nlohmann::json{{"unit", "sft"}, {"kind", "sft"}, {"records", 8}, {"steps", 2}, {"loss_first", 2.0}, {"loss_last", 1.0}}.dump() << "\n";
  m << nlohmann::json{{"unit", "r0.eval"}, {"kind", "eval"}, {"round", 0}, {"tasks", 30}, {"pass_at_1", 0.2},
                      {"fast_1_at_1", 0.0}, {"outcomes", outcomes(6, 30)}}.dump() << "\n";
  m << nlohmann::json{{"unit", "r1.coder.1"}, {"kind", "coder"}, {"tasks", 2}, {"samples", 8}, {"accuracy", 0.25},
                      {"reward_mean", 0.25}, {"loss", 0.1}}.dump() << "\n";
  m << nlohmann::json{{"unit", "r1.eval"}, {"kind", "eval"}, {"round", 1}, {"tasks", 30}, {"pass_at_1", 0.6},
                      {"fast_1_at_1", 0.0}, {"outcomes", outcomes(18, 30)}}.dump() << "\n";
  m << "{\"unit\": \"r2.co";  // a torn last line (a kill mid-write) is skipped
  m.close();
  nlohmann::json s;
  std::string err;
  TrainReportOptions o;
  o.run_dir = dir;
  ASSERT_TRUE(WriteTrainReport(o, &s, &err)) << err;
  ASSERT_EQ(s["eval"].size(), 2u);
  const auto& cmp = s["eval"][1]["compare"];
  EXPECT_EQ(cmp["against"], "r0.eval");
  EXPECT_EQ(cmp["paired_tasks"], 30);
  EXPECT_NEAR(cmp["pass_at_1"]["delta"].get<double>(), 0.4, 1e-12);
  EXPECT_TRUE(cmp["pass_at_1"]["excludes_zero"].get<bool>());
  EXPECT_FALSE(cmp["fast_1_at_1"]["excludes_zero"].get<bool>());
  std::string md, svg;
  ASSERT_TRUE(util::ReadFile(dir + "/report/report.md", &md, &err));
  EXPECT_NE(md.find("| r1.eval | 1 | 30 | 0.600 |"), std::string::npos) << md;
  EXPECT_NE(md.find("0.400 ["), std::string::npos) << md;
  ASSERT_TRUE(util::ReadFile(dir + "/report/eval.svg", &svg, &err));
  EXPECT_NE(svg.find("class=\"series\""), std::string::npos);
  ASSERT_TRUE(util::ReadFile(dir + "/report/coder.svg", &svg, &err));
  std::filesystem::remove_all(dir);
}

TEST(TrainReport, ARunWithoutMetricsIsAClearError) {
  nlohmann::json s;
  std::string err;
  TrainReportOptions o;
  o.run_dir = "/nonexistent/run";
  EXPECT_FALSE(WriteTrainReport(o, &s, &err));
  EXPECT_NE(err.find("no metrics.jsonl"), std::string::npos) << err;
}

}  // namespace
}  // namespace kz::train
