// POST /v1/rewards bodies and replies (service/rewards_request.h).
#include "service/rewards_request.h"

#include <gtest/gtest.h>

namespace kz::service {
namespace {
using nlohmann::json;

std::string Body(json samples, json extra = json::object()) {
  json j = {{"task", "T"}, {"samples", samples}};
  j.update(extra);
  return j.dump();
}

TEST(RewardsRequest, EachSampleGetsTheGroupsTaskBackendAndOptions) {
  RewardsRequest r;
  std::string err;
  ASSERT_TRUE(ParseRewardsRequest(Body({{{"candidate", "A"}}, {{"candidate", "B"}, {"backend", "cuda"}}},
                                       {{"backend", "triton"}, {"options", {{"trials", 2}}}, {"client", "rl"}}),
                                  64, &r, &err)) << err;
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].task, "T");
  EXPECT_EQ(r.samples[0].candidate, "A");
  EXPECT_EQ(r.samples[0].backend, "triton");
  EXPECT_EQ(r.samples[1].backend, "cuda");  // its own wins
  EXPECT_EQ(r.samples[1].options["trials"], 2);
  EXPECT_EQ(*r.samples[1].client, "rl");
  EXPECT_DOUBLE_EQ(r.reward.alpha, 0.5);
}

TEST(RewardsRequest, RewardOptions) {
  RewardsRequest r;
  std::string err;
  ASSERT_TRUE(ParseRewardsRequest(Body({{{"candidate", "A"}}}, {{"reward", {{"alpha", 0.25}, {"beta", 2},
      {"speedup_cap", 4}, {"baseline", "leave_one_out"}}}}), 64, &r, &err)) << err;
  EXPECT_DOUBLE_EQ(r.reward.alpha, 0.25);
  EXPECT_DOUBLE_EQ(r.reward.beta, 2);
  EXPECT_DOUBLE_EQ(r.reward.speedup_cap, 4);
  EXPECT_EQ(r.reward.baseline, rewards::Baseline::kLeaveOneOut);
}

TEST(RewardsRequest, BadBodiesNameTheirFault) {
  struct Case { std::string body; std::string says; };
  for (const auto& c : std::vector<Case>{
           {"[]", "not a JSON object"},
           {json{{"samples", json::array({{{"candidate", "A"}}})}}.dump(), "'task'"},
           {Body(json::array()), "non-empty array"},
           {Body({{{"candidate", "A"}}, {{"backend", "cuda"}}}), "samples[1]"},
           {Body({{{"candidate", 3}}}), "samples[0]"},
           {Body({{{"candidate", "A"}}}, {{"reward", {{"alpha", "high"}}}}), "must be a number"},
           {Body({{{"candidate", "A"}}}, {{"reward", {{"speedup_cap", 1}}}}), "speedup_cap"},
           {Body({{{"candidate", "A"}}}, {{"reward", {{"baseline", "median"}}}}), "baseline"},
           {Body({{{"candidate", "A"}}}, {{"reward", 3}}), "'reward' must be an object"},
           {Body({{{"candidate", "A"}}}, {{"options", {{"trials", 0}}}}), "samples[0]"},
           {Body({{{"candidate", "A"}}, {{"candidate", "B"}}, {{"candidate", "C"}}}), "over the limit of 2"}}) {
    RewardsRequest r;
    std::string err;
    EXPECT_FALSE(ParseRewardsRequest(c.body, 2, &r, &err)) << c.body;
    EXPECT_NE(err.find(c.says), std::string::npos) << err;
  }
}

TEST(RewardsRequest, OutcomeFromTheVerdict) {
  auto o = OutcomeOf({{"status", "correct"}, {"stages", {{"timing", {{"speedup", 2.5}}}}}});
  EXPECT_TRUE(o.correct);
  EXPECT_DOUBLE_EQ(*o.speedup, 2.5);
  o = OutcomeOf({{"status", "correct"}, {"stages", {{"timing", {{"status", "skipped"}}}}}});
  EXPECT_TRUE(o.correct);
  EXPECT_FALSE(o.speedup);
  EXPECT_FALSE(OutcomeOf({{"status", "rejected"}}).correct);
  EXPECT_FALSE(OutcomeOf(json()).correct);  // a failed job
}

TEST(RewardsRequest, ReplyCarriesRewardsAdvantagesAndVerdicts) {
  std::vector<json> verdicts = {{{"status", "correct"}, {"stages", {{"timing", {{"speedup", 10.0}}}}}},
                                {{"status", "incorrect"}}, json()};
  json reply = RewardsReply({"a", "b", "c"}, verdicts, rewards::CaGrpoOptions{});
  EXPECT_FALSE(reply["gate"]);  // 1 of 3 < 0.5
  EXPECT_NEAR(reply["accuracy"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_EQ(reply["samples"][0]["reward"], 1.0);  // gate closed: no speed term
  EXPECT_EQ(reply["samples"][0]["speed_term"], 1.0);
  EXPECT_EQ(reply["samples"][2]["status"], "failed");
  EXPECT_EQ(reply["samples"][1]["id"], "b");
  EXPECT_GT(reply["samples"][0]["advantage"].get<double>(), 0);
  EXPECT_EQ(reply["reward"]["baseline"], "group");
}

}  // namespace
}  // namespace kz::service
