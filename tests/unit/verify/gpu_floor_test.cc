#include "verify/gpu_floor.h"

#include <gtest/gtest.h>

#include <limits>

namespace kz::verify {
namespace {
using nlohmann::json;

// 5 trials; reference 100 us x 40 calls, candidate 50 us x 30 calls.
json Timed() {
  return {{"status", "correct"},
          {"stages",
           {{"correctness", {{"status", "ok"}, {"trials", json::array({{}, {}, {}, {}, {}})}}},
            {"timing",
             {{"status", "ok"},
              {"reference", {{"median_us", 100.0}, {"calls", 40}}},
              {"candidate", {{"median_us", 50.0}, {"calls", 30}}}}}}}};
}

TEST(GpuFloor, TrialsAndTimedCallsAtTheMedians) {
  // 5 x (100 + 50) us + 40 x 100 us + 30 x 50 us = 750 + 4000 + 1500 us
  EXPECT_NEAR(*GpuFloorSeconds(Timed()), 6250e-6, 1e-12);
  json v = Timed();
  v["stages"].erase("correctness");  // no trials known: the timing calls alone
  EXPECT_NEAR(*GpuFloorSeconds(v), 5500e-6, 1e-12);
}

TEST(GpuFloor, NoneWithoutTimingOrWithMalformedFields) {
  json v = Timed();
  v["stages"]["timing"]["status"] = "skipped";
  EXPECT_FALSE(GpuFloorSeconds(v));
  for (auto bad : {json("100"), json(-1.0), json(nullptr), json(std::numeric_limits<double>::infinity())}) {
    json w = Timed();
    w["stages"]["timing"]["candidate"]["median_us"] = bad;
    EXPECT_FALSE(GpuFloorSeconds(w)) << bad.dump();
  }
  json w = Timed();
  w["stages"]["timing"]["reference"]["calls"] = 2.5;  // calls must be an integer
  EXPECT_FALSE(GpuFloorSeconds(w));
  w["stages"]["timing"]["reference"] = "x";
  EXPECT_FALSE(GpuFloorSeconds(w));
  EXPECT_FALSE(GpuFloorSeconds(json::array()));
  EXPECT_FALSE(GpuFloorSeconds(json{{"stages", "x"}}));
  EXPECT_FALSE(GpuFloorSeconds(json{{"stages", {{"timing", 3}}}}));
}

}  // namespace
}  // namespace kz::verify
