#include "curriculum/coder_tally.h"

#include <gtest/gtest.h>

namespace kz::curriculum {
namespace {
using nlohmann::json;

json V(const std::string& task, int sample, const std::string& status) {
  return {{"task", task}, {"sample", sample}, {"status", status}};
}

TEST(CoderTally, CountsVerdictsAndScoredBadInputs) {
  std::vector<json> verdicts = {V("L1_1", 0, "correct"), V("L1_1", 1, "incorrect"), V("L1_1", 2, "correct"),
                                V("L1_2", 0, "compile_error")};
  std::vector<json> bad = {{{"task", "L1_1"}, {"sample", 3}, {"kind", "empty_code"}, {"scored_as_incorrect", true}},
                           {{"task", "L1_2"}, {"sample", 1}, {"kind", "malformed_line"}, {"scored_as_incorrect", false}}};
  auto t = TallyCoder(verdicts, bad);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t["L1_1"].attempts, 4);
  EXPECT_EQ(t["L1_1"].successes, 2);
  EXPECT_EQ(t["L1_1"].statuses["empty_code"], 1);
  EXPECT_EQ(t["L1_2"].attempts, 1);  // the unscored bad line is no attempt
  EXPECT_EQ(t["L1_2"].successes, 0);
  EXPECT_EQ(TallyReason(t["L1_1"]), "2 of 4 correct (correct=2, empty_code=1, incorrect=1)");
}

TEST(CoderTally, LaterVerdictWinsAndServerErrorsAreNotAttempts) {
  auto t = TallyCoder({V("L1_1", 0, "incorrect"), V("L1_1", 0, "correct"), V("L1_1", 1, "server_error"),
                       json("not an object"), {{"task", 3}}},
                      {});
  EXPECT_EQ(t["L1_1"].attempts, 1);
  EXPECT_EQ(t["L1_1"].successes, 1);
}

TEST(CoderTally, ProposalRewardFromTheCoderSamples) {
  rewards::RewardOptions o{-0.5};
  std::string why;
  CoderTally half{4, 2, {}}, none{4, 0, {}}, quarter{4, 1, {}}, partial{1, 1, {}};
  EXPECT_DOUBLE_EQ(*ProposalReward(true, &half, 4, o, &why), 1.0);
  EXPECT_DOUBLE_EQ(*ProposalReward(true, &none, 4, o, &why), 0.0);
  EXPECT_DOUBLE_EQ(*ProposalReward(true, &quarter, 4, o, &why), 0.5);
  EXPECT_DOUBLE_EQ(*ProposalReward(false, nullptr, 4, o, &why), -0.5);
  EXPECT_FALSE(ProposalReward(true, &partial, 4, o, &why));
  EXPECT_EQ(why, "1 of 4 Coder samples verified");
  EXPECT_FALSE(ProposalReward(true, nullptr, 4, o, &why));
  EXPECT_EQ(why, "0 of 4 Coder samples verified");
}

}  // namespace
}  // namespace kz::curriculum
