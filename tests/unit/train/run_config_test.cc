// kz train's run config, schedule and task rotation (src/train/run_config.h, schedule.h,
// units.h StepTasks): pure functions, hand-worked cases.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "train/run_config.h"
#include "train/schedule.h"
#include "train/units.h"

namespace kz::train {
namespace {

RunConfig Parse(const std::string& text, std::string* err) {
  RunConfig c;
  err->clear();
  ParseRunConfig(text, &c, err);
  return c;
}

TEST(RunConfigTest, DefaultsAndValuesAreRead) {
  std::string err;
  RunConfig c = Parse("[run]\nrounds = 2\nseed = 9\n[model]\npath = \"m.gguf\"\nlora_r = 8\n"
                      "[coder]\ntasks = \"t\"\nsamples_per_task = 8\ntemperature = 0.7\n"
                      "[rewards]\nalpha = 0\nbaseline = \"loo\"\nbeta = 2\n",
                      &err);
  ASSERT_EQ(err, "");
  EXPECT_EQ(c.rounds, 2);
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.model, "m.gguf");
  EXPECT_EQ(c.lora_r, 8);
  EXPECT_EQ(c.samples_per_task, 8);
  EXPECT_DOUBLE_EQ(c.temperature, 0.7);
  EXPECT_EQ(c.rewards.alpha, 0);
  EXPECT_EQ(c.rewards.beta, 2);
  EXPECT_EQ(c.rewards.baseline, rewards::Baseline::kLeaveOneOut);
  EXPECT_EQ(c.tasks_per_step, 4) << "a default";
  EXPECT_EQ(c.backend, "triton");
  EXPECT_EQ(c.sft_lr, 0) << "unset: [model] lr";
  c = Parse("[model]\npath = \"m\"\nlr = 1e-4\n[sft]\nlr = 2e-4\n[coder]\ntasks = \"t\"\nlr = 1e-6\n", &err);
  ASSERT_EQ(err, "");
  EXPECT_DOUBLE_EQ(c.lr, 1e-4);
  EXPECT_DOUBLE_EQ(c.sft_lr, 2e-4);
  EXPECT_DOUBLE_EQ(c.coder_lr, 1e-6);
  EXPECT_EQ(c.verify_concurrency, 1) << "a default";
  c = Parse("[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[verify]\nconcurrency = 4\n", &err);
  ASSERT_EQ(err, "");
  EXPECT_EQ(c.verify_concurrency, 4);
  EXPECT_EQ(c.verify_timing_ci, 0) << "the fixed timing rule by default";
  c = Parse("[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[verify]\ntiming_ci = 0.02\n", &err);
  ASSERT_EQ(err, "");
  EXPECT_DOUBLE_EQ(c.verify_timing_ci, 0.02);
  EXPECT_TRUE(c.eval_baseline) << "r0.eval by default";
  c = Parse("[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[eval]\ntasks = \"h\"\nbaseline = false\n", &err);
  ASSERT_EQ(err, "");
  EXPECT_FALSE(c.eval_baseline);
}

TEST(RunConfigTest, EveryFaultIsNamed) {
  const std::map<std::string, std::string> cases = {
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\nsamples = 4\n", "[coder]: unknown key 'samples'"},
      {"[modle]\npath = \"m\"\n", "unknown table [modle]"},
      {"[coder]\ntasks = \"t\"\n", "[model] path is required"},
      {"[model]\npath = \"m\"\n", "[coder] tasks is required"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\nsamples_per_task = 0\n", "samples_per_task = 0 is out of range"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\nsamples_per_task = \"4\"\n", "samples_per_task must be an integer"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\nbackend = \"hip\"\n", "backend = \"hip\" is not one of: triton, cuda"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[rewards]\nspeedup_cap = 0.5\n", "speedup_cap = 0.5 is out of range"},
      {"[model]\npath = \"m\"\ndevice = \"tpu\"\n[coder]\ntasks = \"t\"\n", "device = \"tpu\""},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[verify]\ncpu = 1\n", "[verify] cpu must be true or false"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\nlr = 2.0\n", "[coder] lr = 2"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[verify]\nconcurrency = 0\n", "[verify] concurrency = 0 is out of range"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[verify]\ntiming_ci = 0.9\n", "[verify] timing_ci = 0.9 is out of range"},
      {"[model]\npath = \"m\"\n[coder]\ntasks = \"t\"\n[eval]\nbaseline = 0\n", "[eval] baseline must be true or false"},
      {"[model\n", "not valid TOML"},
      {"model = 3\n", "[model] must be a table"},
  };
  for (const auto& [text, want] : cases) {
    std::string err;
    RunConfig c;
    EXPECT_FALSE(ParseRunConfig(text, &c, &err)) << text;
    EXPECT_NE(err.find(want), std::string::npos) << text << "\n got: " << err;
  }
}

TEST(ScheduleTest, UnitsInOrderWithGlobalSteps) {
  RunConfig c;
  c.rounds = 2;
  c.steps_per_round = 2;
  c.sft_data = "sft.jsonl";
  c.eval_tasks = "held";
  std::vector<std::string> ids;
  std::vector<int> steps;
  for (const auto& u : Schedule(c)) {
    ids.push_back(u.id);
    if (u.kind == "coder") steps.push_back(u.global_step);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"sft", "r0.eval", "r1.coder.1", "r1.coder.2", "r1.eval", "r2.coder.1", "r2.coder.2",
                                           "r2.eval"}));
  EXPECT_EQ(steps, (std::vector<int>{0, 1, 2, 3}));
  c.sft_data.clear();
  c.eval_tasks.clear();
  EXPECT_EQ(Schedule(c).size(), 4u);
}

TEST(ScheduleTest, RftFollowsEachRoundsCoderStepsBeforeItsEvaluation) {
  RunConfig c;
  c.rounds = 2;
  c.steps_per_round = 1;
  c.eval_tasks = "held";
  c.rft_per_task = 4;
  std::vector<std::string> ids;
  for (const auto& u : Schedule(c)) ids.push_back(u.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"r0.eval", "r1.coder.1", "r1.rft", "r1.eval", "r2.coder.1", "r2.rft",
                                           "r2.eval"}));
  c.steps_per_round = 0;  // no Coder steps: no samples to fine-tune on
  ids.clear();
  for (const auto& u : Schedule(c)) ids.push_back(u.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"r0.eval", "r1.eval", "r2.eval"}));
  c.eval_baseline = false;  // [eval] baseline = false: runs that share one baseline skip theirs
  ids.clear();
  for (const auto& u : Schedule(c)) ids.push_back(u.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"r1.eval", "r2.eval"}));
}

TEST(ScheduleTest, TheProposerPhaseComesBeforeEachRoundsCoderPhase) {
  RunConfig c;
  c.rounds = 2;
  c.steps_per_round = 1;
  c.proposer.steps_per_round = 2;
  std::vector<std::string> ids;
  std::vector<int> proposer_steps;
  for (const auto& u : Schedule(c)) {
    ids.push_back(u.id);
    if (u.kind == "proposer") proposer_steps.push_back(u.global_step);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"r1.proposer.1", "r1.proposer.2", "r1.coder.1", "r2.proposer.1",
                                           "r2.proposer.2", "r2.coder.1"}));
  EXPECT_EQ(proposer_steps, (std::vector<int>{0, 1, 2, 3}));
}

TEST(RunConfigTest, ProposerTable) {
  std::string err;
  RunConfig c = Parse("[model]\npath = \"m\"\n[proposer]\nsteps_per_round = 2\nsets_per_step = 8\nk = 2\nrho = 0.5\n"
                      "freeze_after_round = 1\ninvalid_penalty = -0.5\n", &err);
  ASSERT_EQ(err, "") << "no [coder] tasks needed: the Proposer makes them";
  EXPECT_EQ(c.proposer.steps_per_round, 2);
  EXPECT_EQ(c.proposer.sets_per_step, 8);
  EXPECT_EQ(c.proposer.k, 2);
  EXPECT_DOUBLE_EQ(c.proposer.rho, 0.5);
  EXPECT_EQ(c.proposer.freeze_after_round, 1);
  EXPECT_DOUBLE_EQ(c.proposer.invalid_penalty, -0.5);
  EXPECT_EQ(c.proposer.samples_per_set, 4) << "a default";
  for (const char* bad : {"rho = 1.0", "k = 0", "invalid_penalty = 1", "steps = 1"}) {
    RunConfig d;
    EXPECT_FALSE(ParseRunConfig(std::string("[model]\npath = \"m\"\n[proposer]\nsteps_per_round = 1\n") + bad + "\n", &d,
                                &err))
        << bad;
    EXPECT_NE(err.find("[proposer]"), std::string::npos) << err;
  }
}

TEST(StepTasksTest, EveryTaskOncePerPassAndReproducible) {
  const size_t pool = 10;
  std::map<size_t, int> seen;
  for (int step = 0; step < 5; ++step)  // 5 steps x 4 tasks = 2 passes of 10
    for (size_t t : StepTasks(pool, 4, step, 7)) {
      EXPECT_LT(t, pool);
      ++seen[t];
    }
  EXPECT_EQ(seen.size(), pool);
  for (const auto& [t, n] : seen) EXPECT_EQ(n, 2) << t;
  EXPECT_EQ(StepTasks(pool, 4, 3, 7), StepTasks(pool, 4, 3, 7));
  EXPECT_NE(StepTasks(pool, 4, 0, 7), StepTasks(pool, 4, 0, 8)) << "another seed, another order";
}

}  // namespace
}  // namespace kz::train
