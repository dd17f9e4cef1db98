#include "service/metrics.h"

#include <gtest/gtest.h>

#include "service/histogram.h"

namespace kz::service {
namespace {
using nlohmann::json;

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(HistogramTest, RendersCumulativeBucketsSumAndCount) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.Observe(v);
  std::string t = h.Render("kz_x_seconds", "stage=\"run\"");
  EXPECT_EQ(t,
            "kz_x_seconds_bucket{stage=\"run\",le=\"0.1\"} 2\n"
            "kz_x_seconds_bucket{stage=\"run\",le=\"1\"} 3\n"
            "kz_x_seconds_bucket{stage=\"run\",le=\"10\"} 4\n"
            "kz_x_seconds_bucket{stage=\"run\",le=\"+Inf\"} 5\n"
            "kz_x_seconds_sum{stage=\"run\"} 55.65\n"
            "kz_x_seconds_count{stage=\"run\"} 5\n");
  EXPECT_EQ(h.count(), 5u);
}

TEST(HistogramTest, WithoutLabels) {
  Histogram h({1});
  std::string t = h.Render("h", "");
  EXPECT_TRUE(Has(t, "h_bucket{le=\"1\"} 0")) << t;
  EXPECT_TRUE(Has(t, "h_bucket{le=\"+Inf\"} 0")) << t;
  EXPECT_TRUE(Has(t, "h_sum 0")) << t;
  EXPECT_TRUE(Has(t, "h_count 0")) << t;
}

TEST(HistogramTest, PromNumbers) {
  EXPECT_EQ(PromNumber(0.005), "0.005");
  EXPECT_EQ(PromNumber(30), "30");
  EXPECT_EQ(PromNumber(1.0 / 0.0), "+Inf");
}

TEST(MetricsTest, VerdictStagesQueueWaitAndCacheCounts) {
  Metrics m;
  json v = {{"status", "correct"},
            {"seconds", 3.5},
            {"child", {{"wall_s", 2.0}}},
            {"stages",
             {{"screen", {{"seconds", 0.01}}},
              {"extract", {{"seconds", 0.3}, {"cache", "miss"}}},
              {"compile", {{"libraries", {{{"cache", "hit"}, {"seconds", 0.1}}, {{"cache", "miss"}, {"seconds", 40.0}}}}}}}}};
  m.ObserveVerdict(v, 1.25);
  m.AddBusy(3.5);
  MetricsSnapshot snap;
  snap.jobs_by_state = {{"queued", 2}, {"cancelled", 1}};
  std::string t = m.Render(snap);
  EXPECT_TRUE(Has(t, "# TYPE kz_stage_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_bucket{stage=\"queue_wait\",le=\"1\"} 0")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_bucket{stage=\"queue_wait\",le=\"2.5\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_sum{stage=\"compile\"} 40.1")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_count{stage=\"run\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_sum{stage=\"total\"} 3.5")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_count{stage=\"screen\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_count{stage=\"extract\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_compile_cache_total{result=\"hit\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_compile_cache_total{result=\"miss\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_jobs_done_total{status=\"correct\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_jobs{state=\"cancelled\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_gpu_slot_busy_seconds_total 3.5")) << t;
  EXPECT_NE(t.find("kz_uptime_seconds "), std::string::npos) << t;
}

TEST(MetricsTest, ChildStagesAndTheGpuFloor) {
  Metrics m;
  json timed = {{"status", "correct"},
                {"child", {{"wall_s", 130.0}}},
                {"profile", {{"stages", {{"load", {{"seconds", 0.2}}}, {"timing", {{"seconds", 0.1}}}}}}},
                {"stages",
                 {{"correctness", {{"trials", json::array({{}, {}})}}},
                  {"timing",
                   {{"status", "ok"},
                    {"reference", {{"median_us", 250000.0}, {"calls", 30}}},
                    {"candidate", {{"median_us", 250000.0}, {"calls", 18}}}}}}}};
  m.ObserveVerdict(timed, std::nullopt);  // floor 2 x 0.5 s + 48 x 0.25 s = 13 s; wall / floor = 10
  m.ObserveVerdict({{"status", "incorrect"}, {"child", {{"wall_s", 1.0}}}, {"profile", "garbage"}}, std::nullopt);
  std::string t = m.Render(MetricsSnapshot{});
  EXPECT_TRUE(Has(t, "kz_child_stage_seconds_sum{stage=\"load\"} 0.2")) << t;
  EXPECT_TRUE(Has(t, "kz_child_stage_seconds_count{stage=\"correctness\"} 0")) << t;
  EXPECT_TRUE(Has(t, "kz_gpu_floor_seconds_sum 13")) << t;
  EXPECT_TRUE(Has(t, "kz_gpu_floor_seconds_count 1")) << t;
  EXPECT_TRUE(Has(t, "kz_run_over_gpu_floor_bucket{le=\"5\"} 0")) << t;
  EXPECT_TRUE(Has(t, "kz_run_over_gpu_floor_bucket{le=\"10\"} 1")) << t;
}

TEST(MetricsTest, RunningJobCountsAsBusySoFar) {
  Metrics m;
  m.AddBusy(1);
  MetricsSnapshot snap;
  snap.running = 1;
  snap.running_for_s = 0.5;
  EXPECT_TRUE(Has(m.Render(snap), "kz_gpu_slot_busy_seconds_total 1.5"));
  EXPECT_TRUE(Has(m.Render(snap), "kz_jobs_running 1"));
  snap.running = 0;
  snap.running_for_s = 0;
  EXPECT_TRUE(Has(m.Render(snap), "kz_gpu_slot_busy_seconds_total 1"));
}

TEST(MetricsTest, EachSlotHasItsBusySeconds) {
  Metrics m;
  MetricsSnapshot snap;
  snap.slots = {{"cuda:0", 2.5}, {"cuda:1", 1}};
  snap.staged = 3;
  std::string t = m.Render(snap);
  EXPECT_TRUE(Has(t, "kz_slots 2")) << t;
  EXPECT_TRUE(Has(t, "kz_slot_busy_seconds_total{slot=\"cuda:0\"} 2.5")) << t;
  EXPECT_TRUE(Has(t, "kz_slot_busy_seconds_total{slot=\"cuda:1\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_jobs_staged 3")) << t;
}

TEST(MetricsTest, EachGateHasItsGauges) {
  Metrics m;
  MetricsSnapshot snap;
  verify::GateHub::Stats st;
  st.shared = 3;
  st.exclusive = true;
  st.queued = 2;
  st.max_shared_seen = 4;
  st.exclusive_grants = 7;
  st.held_s = 1.25;
  snap.gates = {{"cuda:0", st}, {"cuda:1", verify::GateHub::Stats{}}};
  std::string t = m.Render(snap);
  EXPECT_TRUE(Has(t, "kz_gate_shared_holders{device=\"cuda:0\"} 3")) << t;
  EXPECT_TRUE(Has(t, "kz_gate_exclusive{device=\"cuda:0\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_gate_queued{device=\"cuda:0\"} 2")) << t;
  EXPECT_TRUE(Has(t, "kz_gate_max_shared{device=\"cuda:0\"} 4")) << t;
  EXPECT_TRUE(Has(t, "kz_gate_exclusive_total{device=\"cuda:0\"} 7")) << t;
  EXPECT_TRUE(Has(t, "kz_gate_held_seconds_total{device=\"cuda:0\"} 1.25")) << t;
  EXPECT_TRUE(Has(t, "kz_gate_exclusive{device=\"cuda:1\"} 0")) << t;
  EXPECT_FALSE(Has(m.Render(MetricsSnapshot{}), "kz_gate_")) << "no gate, no gauges";
}

TEST(MetricsTest, AVerdictWithoutStagesObservesOnlyWhatItHas) {
  Metrics m;
  m.ObserveVerdict({{"status", "compile_error"}, {"seconds", 0.2}}, std::nullopt);
  std::string t = m.Render({});
  EXPECT_TRUE(Has(t, "kz_stage_seconds_count{stage=\"total\"} 1")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_count{stage=\"queue_wait\"} 0")) << t;
  EXPECT_TRUE(Has(t, "kz_stage_seconds_count{stage=\"compile\"} 0")) << t;
}

}  // namespace
}  // namespace kz::service
