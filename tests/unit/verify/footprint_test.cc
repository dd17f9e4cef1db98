#include "verify/footprint.h"

#include <gtest/gtest.h>

namespace kz::verify {
namespace {
using nlohmann::json;

json OpResult(uint64_t in, uint64_t out, uint64_t params, bool complete = true) {
  return {{"type", "result"}, {"ok", true},
          {"footprint", {{"method", "meta"}, {"seconds", 0.01},
                         {"inputs", {{"bytes", in}}}, {"outputs", {{"bytes", out}}}, {"params", {{"bytes", params}}}}},
          {"budget", {{"need_bytes", 3 * (in + out) + 2 * params}, {"complete", complete}}}};
}

TEST(FootprintTest, SummaryTakesTheGroupsAndTheNeed) {
  json r = OpResult(6ull << 30, 6ull << 30, 1 << 20);
  json s = FootprintSummary(&r, "");
  EXPECT_EQ(s["method"], "meta");
  EXPECT_EQ(s["inputs_bytes"], 6ull << 30);
  EXPECT_EQ(s["params_bytes"], 1u << 20);
  EXPECT_EQ(s["need_bytes"], (36ull << 30) + (2u << 20));
  EXPECT_TRUE(s["complete"].get<bool>());
}

TEST(FootprintTest, AFailedOpIsUnknownWithItsReason) {
  json s = FootprintSummary(nullptr, "killed: timed out after 120 s");
  EXPECT_EQ(s["method"], "unknown");
  EXPECT_FALSE(s["complete"].get<bool>());
  EXPECT_EQ(s["reason"], "killed: timed out after 120 s");
  json bad = {{"ok", false}, {"error", {{"kind", "invalid_task"}, {"message", "task: does not define get_inputs"}}}};
  EXPECT_EQ(FootprintSummary(&bad, "")["reason"], "task: does not define get_inputs");
}

TEST(FootprintTest, RefusesOnlyACompleteFootprintOverTheLimit) {
  json big = FootprintSummary(&*std::make_unique<json>(OpResult(100ull << 30, 100ull << 30, 0)), "");
  auto why = FootprintRefusal(big, 139ull << 30, "the GPU (NVIDIA H200)");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs 600.0 GiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("the GPU (NVIDIA H200) has 139.0 GiB"), std::string::npos) << *why;
  EXPECT_FALSE(FootprintRefusal(big, 0, "x"));  // no limit known
  json partial = FootprintSummary(&*std::make_unique<json>(OpResult(100ull << 30, 100ull << 30, 0, false)), "");
  EXPECT_FALSE(FootprintRefusal(partial, 1ull << 30, "x"));  // a lower bound proves nothing
  json small = FootprintSummary(&*std::make_unique<json>(OpResult(1 << 20, 1 << 20, 0)), "");
  EXPECT_FALSE(FootprintRefusal(small, 139ull << 30, "x"));
}

TEST(FootprintTest, CacheKeepsOneSummaryPerTask) {
  FootprintCache cache;
  EXPECT_FALSE(cache.Find("abc"));
  cache.Put("abc", {{"method", "meta"}});
  EXPECT_EQ((*cache.Find("abc"))["method"], "meta");
}

}  // namespace
}  // namespace kz::verify
