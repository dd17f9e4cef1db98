// ncu's output read (verify/ncu_report.h) on hand-written outputs: one kernel, several,
// missing metrics, "n/a", garbage, the permission error, an empty file.
#include "verify/ncu_report.h"

#include <gtest/gtest.h>

#include "verify/feedback.h"

namespace kz::verify {
namespace {
using json = nlohmann::json;

const char* kHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"gpu__time_duration.sum\",\"launch__occupancy_limit_blocks\",\"launch__occupancy_limit_registers\","
    "\"launch__occupancy_limit_shared_mem\",\"launch__occupancy_limit_warps\",\"launch__registers_per_thread\","
    "\"l1tex__t_sector_hit_rate.pct\",\"lts__t_sector_hit_rate.pct\",\"sm__maximum_warps_per_active_cycle_pct\","
    "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%\",\"nsecond\",\"block\",\"block\",\"block\",\"block\","
    "\"register/thread\",\"%\",\"%\",\"%\",\"%\",\"%\"\n";

std::string Row(int id, const std::string& name, const std::string& dram, const std::string& ns) {
  return "\"" + std::to_string(id) + "\",\"4242\",\"python3.12\",\"127.0.0.1\",\"" + name +
         "\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\",\"" + dram + "\",\"" + ns +
         "\",\"32\",\"3\",\"8\",\"8\",\"40\",\"30.5\",\"80.25\",\"50\",\"18.2\",\"41.3\"\n";
}

TEST(NcuReportTest, OneKernelWithEveryMetric) {
  std::string log =
      "==PROF== Connected to process 4242 (/usr/bin/python3.12)\n==PROF== Profiling \"relu\": 0%....100% - 9 passes\n" +
      std::string(kHeader) + Row(0, "relu_kernel(float const*, float*, int)", "72.31", "1,520,000") +
      "==PROF== Disconnected from process 4242\n";
  NcuParse p = ParseNcuOutput(log);
  ASSERT_EQ(p.outcome, NcuOutcome::kCounters) << p.reason;
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelCounters& k = p.kernels[0];
  EXPECT_EQ(k.name, "relu_kernel(float const*, float*, int)");
  EXPECT_EQ(k.launches, 1);
  EXPECT_DOUBLE_EQ(k.metrics.at("gpu__time_duration.sum"), 1520000);  // thousands separators
  EXPECT_DOUBLE_EQ(k.metrics.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 72.31);
  EXPECT_EQ(OccupancyLimiter(k), "registers");
  EXPECT_EQ(CountersLine(k),
            "kernel relu_kernel: 1.52 ms, DRAM 72% of peak, SM 18%, occupancy 41% of 50% theoretical (limited by "
            "registers: 40 registers/thread), L1 hit 30%, L2 hit 80%");
}

TEST(NcuReportTest, SeveralKernelsAndRepeatedLaunchesGroupByName) {
  std::string log = std::string(kHeader) + Row(0, "void ns::gemm<64>(float*)", "10", "2000") +
                    Row(1, "softmax", "55", "900") + Row(2, "void ns::gemm<64>(float*)", "12", "3000");
  NcuParse p = ParseNcuOutput(log);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].launches, 2);
  EXPECT_DOUBLE_EQ(p.kernels[0].metrics.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 12);  // the longest
  EXPECT_EQ(p.kernels[1].name, "softmax");
  EXPECT_NE(CountersLine(p.kernels[0]).find("kernel gemm: 3.0 us"), std::string::npos) << CountersLine(p.kernels[0]);
  EXPECT_NE(CountersLine(p.kernels[0]).find("(2 launches, the longest shown)"), std::string::npos);
}

TEST(NcuReportTest, MissingMetricsAndNaAreAbsentNotZero) {
  std::string log =
      "\"ID\",\"Kernel "
      "Name\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"sm__throughput.avg.pct_of_peak_sustained_"
      "elapsed\"\n"
      "\"\",\"\",\"%\",\"%\"\n"
      "\"0\",\"k\",\"n/a\",\"33.3\"\n";
  NcuParse p = ParseNcuOutput(log);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].metrics.count("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 0u);
  EXPECT_EQ(OccupancyLimiter(p.kernels[0]), "");
  EXPECT_EQ(CountersLine(p.kernels[0]), "kernel k: SM 33%");
  json j = CountersToJson(p.kernels[0]);
  EXPECT_EQ(CountersFromJson(j).metrics, p.kernels[0].metrics);
  EXPECT_EQ(CountersLine(CountersFromJson(json{{"name", "z"}, {"metrics", {{"x", "bad"}}}})), "kernel z: no counters");
}

TEST(NcuReportTest, GarbageRowsAreDropped) {
  std::string log = std::string(kHeader) + "not,a,row\n\"0\",\"short\"\n" + "\x01\x02\xff garbage\n" +
                    Row(3, "ok_kernel", "abc", "1e400");
  NcuParse p = ParseNcuOutput(log);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].metrics.count("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 0u);
  EXPECT_EQ(p.kernels[0].metrics.count("gpu__time_duration.sum"), 0u);  // not finite
  NcuParse none = ParseNcuOutput("complete nonsense\nmore\n");
  EXPECT_EQ(none.outcome, NcuOutcome::kFailed);
  EXPECT_EQ(none.reason, "ncu: failed (complete nonsense)");
  NcuParse header_only = ParseNcuOutput(kHeader);
  EXPECT_EQ(header_only.outcome, NcuOutcome::kFailed);
  EXPECT_EQ(header_only.reason, "ncu: failed (no kernel row in its CSV)");
}

TEST(NcuReportTest, ThePermissionErrorIsNamed) {
  std::string log =
      "==PROF== Connected to process 9012 (/usr/bin/python3)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
      "the target device 0. For instructions on enabling permissions and to get more information see "
      "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n==PROF== Disconnected from process 9012\n";
  NcuParse p = ParseNcuOutput(log);
  EXPECT_EQ(p.outcome, NcuOutcome::kNoPermission);
  EXPECT_EQ(p.reason, "ncu: no permission for GPU performance counters (ERR_NVGPUCTRPERM)");
  EXPECT_EQ(ParseNcuOutput("", log).outcome, NcuOutcome::kNoPermission);  // from stderr too
}

TEST(NcuReportTest, EmptyAndNoKernelsAndOtherErrors) {
  EXPECT_EQ(ParseNcuOutput("").reason, "ncu: failed (no output)");
  EXPECT_EQ(ParseNcuOutput("", "  \n").reason, "ncu: failed (no output)");
  EXPECT_EQ(ParseNcuOutput("==PROF== Disconnected\n==WARNING== No kernels were profiled.\n").outcome,
            NcuOutcome::kNoKernels);
  NcuParse e = ParseNcuOutput("==PROF== x\n==ERROR== Failed to prepare kernel for profiling\n");
  EXPECT_EQ(e.reason, "ncu: failed (==ERROR== Failed to prepare kernel for profiling)");
  EXPECT_LE(ParseNcuOutput(std::string(1000, 'x')).reason.size(), 215u);
}

TEST(NcuReportTest, ShortNamesForDisplayAndFilters) {
  EXPECT_EQ(KernelShortName("void ns::gemm<64>(float*)"), "gemm");
  EXPECT_EQ(KernelShortName("void k<float, 4>(float*, int)"), "k");
  EXPECT_EQ(KernelShortName("plain"), "plain");
  EXPECT_EQ(KernelShortName("(anonymous)"), "(anonymous)");  // nothing better: the name itself
}

TEST(NcuReportTest, ArgsBoundTheRun) {
  auto a = NcuArgs("/opt/ncu", {"k1", "k2"}, 3, "/tmp/x/ncu.csv");
  std::string all;
  for (const auto& s : a) all += s + " ";
  EXPECT_EQ(a[0], "/opt/ncu");
  EXPECT_NE(all.find("--csv --page raw --print-units base --metrics gpu__time_duration.sum,"), std::string::npos)
      << all;
  EXPECT_NE(all.find("--launch-count 3 --log-file /tmp/x/ncu.csv --kernel-name regex:^(k1|k2)$"), std::string::npos)
      << all;
  EXPECT_EQ(NcuArgs("n", {}, 0, "l").back(), "l");  // no filter; launch count at least 1
}

TEST(NcuReportTest, FeedbackStatesCountersOrTheFallback) {
  json none = {{"available", false}, {"reason", "ncu: not installed"}};
  EXPECT_EQ(ProfileFeedback(none), "ncu: not installed");
  EXPECT_EQ(ProfileFeedback(json{{"available", true}, {"kernels", json::array()}}), "ncu: no counters");
  json v = {{"status", "correct"}, {"reason", "matched"}, {"profile", none}};
  EXPECT_NE(Diagnose(v).find("\nncu: not installed\n"), std::string::npos) << Diagnose(v);
  v["profile"] = {
      {"available", true},
      {"kernels",
       {{{"name", "k"}, {"launches", 1}, {"metrics", {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 18.0}}}}}}};
  EXPECT_NE(Diagnose(v).find("ncu counters:\nkernel k: SM 18%\n"), std::string::npos) << Diagnose(v);
  v["profile"] = "garbage";
  EXPECT_EQ(Diagnose(v).find("ncu"), std::string::npos);
}

}  // namespace
}  // namespace kz::verify
