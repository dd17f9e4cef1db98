#include "scoring/selfcheck.h"

#include <gtest/gtest.h>

namespace kz::scoring {
namespace {
using nlohmann::json;

json Verdict() {
  return json::parse(R"({
    "status": "correct", "reason": "matched the reference on 5 trials", "seconds": 12.5,
    "device": {"kind": "cuda", "name": "NVIDIA H200"}, "not_checked": ["screen: self-check"],
    "stages": {"correctness": {"bytes": {"inputs": 6442450944, "outputs": 1048576}},
               "timing": {"reference": {"median_us": 4100.5}}},
    "profile": {"stages": {"correctness": {"seconds": 5.0, "peak_gpu_bytes": 20000000000},
                           "timing": {"seconds": 1.0, "peak_gpu_bytes": 30000000000},
                           "load": {"seconds": 0.1}}}})");
}

TEST(SelfCheckTest, RecordTakesStatusSizesTimeAndTheLargestStagePeak) {
  json r = SelfCheckRecord("L1_19", "abc", Verdict());
  EXPECT_EQ(r["task"], "L1_19");
  EXPECT_EQ(r["sample"], 0);
  EXPECT_EQ(r["code_xxh"], "abc");
  EXPECT_EQ(r["status"], "correct");
  EXPECT_EQ(r["bytes"]["inputs"], 6442450944ull);
  EXPECT_EQ(r["peak_gpu_bytes"], 30000000000ull);
  EXPECT_DOUBLE_EQ(r["reference_median_us"].get<double>(), 4100.5);
  EXPECT_EQ(r["device"], "NVIDIA H200");
}

TEST(SelfCheckTest, RecordOfAVerdictWithoutStagesHasNulls) {
  json r = SelfCheckRecord("L1_3", "x", json{{"status", "invalid_task"}, {"reason", "task: no get_inputs"}});
  EXPECT_EQ(r["status"], "invalid_task");
  EXPECT_TRUE(r["bytes"].is_null());
  EXPECT_TRUE(r["peak_gpu_bytes"].is_null());
  EXPECT_TRUE(r["reference_median_us"].is_null());
}

TEST(SelfCheckTest, TableHasOneRowPerRecordInMiB) {
  std::string t = SelfCheckTable({SelfCheckRecord("L1_19", "a", Verdict()),
                                  SelfCheckRecord("L1_3", "b", json{{"status", "timeout"}, {"reason", "a|b"}})});
  EXPECT_NE(t.find("| L1_19 | correct | 6144.0 | 1.0 | 12.5 | 28610.2 | 4100.5 |"), std::string::npos) << t;
  EXPECT_NE(t.find("| L1_3 | timeout | - | - | - | - | - | a/b |"), std::string::npos) << t;
}

}  // namespace
}  // namespace kz::scoring
