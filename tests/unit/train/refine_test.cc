// Multi-turn refinement in kz train (issue 22): the feedback prompt and its truncation rule
// (refine_prompt.h), the scoring of a task's trajectories (coder_step.h ScoreTaskGroup) and
// the run config's [multi_turn], [retry], [mirror_pop] tables. Hand-worked cases.
#include <gtest/gtest.h>

#include <string>

#include "train/coder_step.h"
#include "generate/refine_prompt.h"
#include "train/run_config.h"

namespace kz::train {
namespace {
using nlohmann::json;
using generate::BuildConversation;
using generate::Conversation;
using generate::RefineOptions;
using generate::TurnFeedback;

json Incorrect() {
  return json::parse(R"({"status": "incorrect", "reason": "output 0 differs",
    "stages": {"correctness": {"trials": [{"pass": false,
      "outputs": [{"mismatched": 12, "max_abs_err": 0.5, "rel_l2": 0.1}]}]}}})");
}

TEST(RefinePromptTest, FeedbackSaysWhatHappenedAndWhatToDo) {
  std::string none = TurnFeedback({{"status", "no_code"}, {"reason", "no_code_block"}}, 1500);
  EXPECT_NE(none.find("no code the verifier could run (no_code_block)"), std::string::npos) << none;
  EXPECT_NE(none.find("```python"), std::string::npos);
  std::string bad = TurnFeedback(Incorrect(), 1500);
  EXPECT_NE(bad.find("it is not correct"), std::string::npos) << bad;
  EXPECT_NE(bad.find("mismatch: output 0 12 elements differ"), std::string::npos) << bad;
  EXPECT_NE(bad.find("Fix the problem"), std::string::npos);
  std::string good = TurnFeedback({{"status", "correct"}, {"reason", ""}}, 1500);
  EXPECT_NE(good.find("it is correct"), std::string::npos);
  EXPECT_NE(good.find("faster"), std::string::npos);
}

TEST(RefinePromptTest, ConversationAlternatesAndEndsWithFeedback) {
  Conversation c = BuildConversation("TASK", {{"reply one", Incorrect()}, {"reply two", {{"status", "no_code"}}}}, {});
  ASSERT_EQ(c.messages.size(), 5u);
  EXPECT_EQ(c.messages[0].role, "user");
  EXPECT_EQ(c.messages[0].content, "TASK");
  EXPECT_EQ(c.messages[1].role, "assistant");
  EXPECT_EQ(c.messages[1].content, "reply one");
  EXPECT_EQ(c.messages[3].content, "reply two");
  EXPECT_EQ(c.messages[4].role, "user");
  EXPECT_EQ(c.omitted_replies, 0);
}

TEST(RefinePromptTest, LongFeedbackIsCutAndOldRepliesGoFirst) {
  json v = {{"status", "compile_error"}, {"reason", "nvcc failed"},
            {"error", {{"kind", "compile"}, {"message", std::string(5000, 'e') + "\n" + std::string(10, 'f')}}}};
  RefineOptions o;
  o.feedback_chars = 300;
  o.context_chars = 2000;
  std::string long_reply(1500, 'r');
  Conversation c = BuildConversation("TASK", {{long_reply, v}, {long_reply, v}, {long_reply, v}}, o);
  EXPECT_EQ(c.feedback_cut, 3);
  for (size_t i = 2; i < c.messages.size(); i += 2) {
    EXPECT_NE(c.messages[i].content.find("[... cut]"), std::string::npos);
    EXPECT_LT(c.messages[i].content.size(), 600u);
  }
  // Over 2000 characters: the two earlier replies are replaced, the latest is kept whole.
  EXPECT_EQ(c.omitted_replies, 2);
  EXPECT_EQ(c.messages[1].content, "[earlier reply omitted: 1500 characters]");
  EXPECT_EQ(c.messages[3].content, "[earlier reply omitted: 1500 characters]");
  EXPECT_EQ(c.messages[5].content, long_reply);
  EXPECT_EQ(c.messages[0].content, "TASK");
  size_t chars = 0;
  for (const auto& m : c.messages) chars += m.content.size();
  EXPECT_EQ(chars, c.chars);
}

TEST(RefinePromptTest, ExtendingKeepsEarlierMarkersAndCountsOnlyNewOmissions) {
  RefineOptions o;
  o.context_chars = 1200;
  std::string reply(500, 'r');
  json v = {{"status", "incorrect"}, {"reason", "wrong"}};
  generate::Conversation c = generate::ExtendConversation({{"user", "TASK"}}, reply, v, o);
  EXPECT_EQ(c.omitted_replies, 0);
  c = generate::ExtendConversation(c.messages, reply, v, o);
  c = generate::ExtendConversation(c.messages, reply, v, o);
  EXPECT_EQ(c.omitted_replies, 1) << "one more reply to drop this time";
  size_t markers = 0;
  for (const auto& m : c.messages) markers += m.content.rfind("[earlier reply omitted: 500 characters]", 0) == 0;
  EXPECT_EQ(markers, 2u) << "the earlier marker is kept as it was, not re-marked";
  EXPECT_EQ(c.messages[c.messages.size() - 2].content, reply);
}

RolloutSample Turn(bool correct, bool code = true) {
  RolloutSample s;
  s.correct = correct;
  s.verdict = {{"status", correct ? "correct" : code ? "incorrect" : "no_code"}};
  s.completion_ids = {1, 2};
  return s;
}

TEST(ScoreTaskGroupTest, RepairIsCreditedAndRightAtOnceStaysBest) {
  RunConfig c;
  c.multi_turn.turns = 2;
  // Right at turn 1 (closed), repaired at turn 2, failed twice. CA-GRPO rewards without timing:
  // turn 1: [1, 0, 0]; turn 2 (the two that took it): [1, 0].
  Trajectory right{0, 0, {Turn(true)}}, repaired{0, 1, {Turn(false), Turn(true)}}, failed{0, 2, {Turn(false), Turn(false, false)}};
  ScoredGroup g = ScoreTaskGroup({&right, &repaired, &failed}, c);
  ASSERT_EQ(g.rewards[0], std::vector<double>({1}));
  ASSERT_EQ(g.rewards[1], std::vector<double>({0, 1}));
  ASSERT_EQ(g.rewards[2], std::vector<double>({0, 0}));
  EXPECT_NEAR(g.turns.returns[0][0], 1.8, 1e-12);  // 1 + 0.8 * 1 (its answer stands)
  EXPECT_NEAR(g.turns.returns[1][0], 1.2, 1e-12);  // 0 + 0.8 * (1 + 0.5 * (1 - 0))
  EXPECT_TRUE(g.any_correct);
  EXPECT_FALSE(g.turns.zero_variance_turns[0]);
  EXPECT_GT(g.turns.advantages[0][0], g.turns.advantages[1][0]);
  EXPECT_GT(g.turns.advantages[1][0], g.turns.advantages[2][0]);
  EXPECT_GT(g.turns.advantages[1][1], 0);
  EXPECT_LT(g.turns.advantages[2][1], 0);
  // One turn: exactly CA-GRPO's group advantages.
  RunConfig one;
  Trajectory a{0, 0, {Turn(true)}}, b{0, 1, {Turn(false)}};
  ScoredGroup s = ScoreTaskGroup({&a, &b}, one);
  auto ca = rewards::ScoreGroup({{true, std::nullopt}, {false, std::nullopt}}, one.rewards);
  EXPECT_NEAR(s.turns.advantages[0][0], ca.advantages[0], 1e-12);
  EXPECT_NEAR(s.turns.advantages[1][0], ca.advantages[1], 1e-12);
}

TEST(ScoreTaskGroupTest, AllFailEverywhereIsZeroVarianceAndNotCorrect) {
  RunConfig c;
  c.multi_turn.turns = 2;
  Trajectory a{0, 0, {Turn(false), Turn(false)}}, b{0, 1, {Turn(false, false), Turn(false)}};
  ScoredGroup g = ScoreTaskGroup({&a, &b}, c);
  EXPECT_FALSE(g.any_correct);
  EXPECT_TRUE(g.turns.zero_variance_turns[0]);
  EXPECT_TRUE(g.turns.zero_variance_turns[1]);
}

TEST(RunConfigStabilisersTest, TablesReadCheckedAndDefaulted) {
  RunConfig c;
  std::string err;
  ASSERT_TRUE(ParseRunConfig("[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n", &c, &err)) << err;
  EXPECT_EQ(c.multi_turn.turns, 1);
  EXPECT_EQ(c.retry.capacity, 0);
  EXPECT_FALSE(c.mirror_pop.enabled);
  ASSERT_TRUE(ParseRunConfig("[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[rewards]\nbaseline = \"loo\"\n"
                             "[multi_turn]\nturns = 3\ngamma = 0.5\neta = 0\nstop_on_correct = false\n"
                             "[retry]\ncapacity = 8\nmax_retries = 3\n[mirror_pop]\nenabled = true\ntoken_veto = 5\n"
                             "[eval]\nturns = 2\n",
                             &c, &err))
      << err;
  EXPECT_EQ(c.multi_turn.turns, 3);
  EXPECT_EQ(c.multi_turn.returns.gamma, 0.5);
  EXPECT_EQ(c.multi_turn.returns.baseline, rewards::Baseline::kLeaveOneOut);
  EXPECT_FALSE(c.multi_turn.stop_on_correct);
  EXPECT_EQ(c.retry.capacity, 8);
  EXPECT_EQ(c.retry.max_retries, 3);
  EXPECT_TRUE(c.mirror_pop.enabled);
  EXPECT_EQ(c.mirror_pop.bounds.token_veto, 5);
  EXPECT_EQ(c.eval_turns, 2);
  const std::pair<const char*, const char*> bad[] = {
      {"[multi_turn]\nturns = 9\n", "[multi_turn] turns = 9 is out of range"},
      {"[multi_turn]\ngamma = 1.5\n", "[multi_turn] gamma = 1.5 is out of range"},
      {"[mirror_pop]\nseq_ratio_bound = 1\n", "[mirror_pop]: seq_ratio_bound must be > 1"},
      {"[retry]\ncapacty = 3\n", "[retry]: unknown key 'capacty'"},
      {"[multi_turn]\nfeedback_chars = 10\n", "[multi_turn] feedback_chars = 10 is out of range"}};
  for (const auto& [text, why] : bad) {
    EXPECT_FALSE(ParseRunConfig(std::string("[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n") + text, &c, &err)) << text;
    EXPECT_NE(err.find(why), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace kz::train
