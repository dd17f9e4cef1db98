// The units of a `kz train` schedule (schedule.h), each run against the policy held by the
// trainer backend. Each fills `metrics` (one metrics.jsonl line) and says whether it changed
// the weights (then the driver saves a checkpoint before marking it done).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/rollout.h"
#include "train/run_config.h"
#include "train/schedule.h"

namespace kz::train {

struct ProposerContext;

struct UnitContext {
  TrainerBackend* backend = nullptr;    // the Coder policy
  VerifyFn verify;
  const RunConfig* config = nullptr;
  std::string prompt_template;          // the Coder's template text
  std::vector<RolloutTask> coder_pool;  // [coder] tasks and the Proposer's valid modules
  ProposerContext* proposer = nullptr;  // with a [proposer] phase
  std::vector<RolloutTask> eval_tasks;  // [eval] tasks
  std::string run_dir;                  // the run directory (retry_buffer.json)
};

struct UnitResult {
  nlohmann::json metrics;
  bool trained = false;  // the weights changed: checkpoint before marking the unit done
};

// The cold start: [sft] epochs over the teacher's sft.jsonl in batches.
bool RunSft(UnitContext& ctx, const Unit& u, UnitResult* out, std::string* err, TrainerError* terr);
// One CA-GRPO step (coder_step.cc): tasks_per_step tasks of the pool (a seeded permutation
// per pass) and those Buffered Dynamic Retry brings back, a rollout of samples_per_task
// trajectories each (one turn, or [multi_turn] refinement), rewards and advantages per (task,
// turn) (src/rewards), MirrorPop's filter, train_step. A step with no learning signal left
// trains nothing and says why.
bool RunCoderStep(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
                  TrainerError* terr);
// [rft] between rounds: kz train rft's diverse set of the run's verified-correct samples so
// far (<unit>/sft.jsonl), then [rft] epochs of SFT on it; skipped (and said) when there is none.
bool RunRft(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
            TrainerError* terr);
// Held-out evaluation: one greedy sample per task; pass@1 and fast_1@1 (correct and faster
// than the reference), and each task's outcome (metrics "outcomes": [task, correct, fast]).
// With [eval] turns > 1, failing tasks are refined with the verifier's feedback: pass@1 stays
// the first turn's, and pass_at_1_best_turn, pass_by_turn, outcomes_best_turn are added.
bool RunEval(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
             TrainerError* terr);

double Mean(const std::vector<double>& xs);  // 0 for none
// A clipped policy-gradient step's request from the run config: `phase_lr` (0: [model] lr) and
// the sampling temperature the samples were drawn at (0, greedy: 1).
TrainStepRequest PolicyStep(const RunConfig& c, double phase_lr, double temperature);

// The indices of the step's tasks: positions global_step * k .. + k - 1 of an endless
// sequence of seeded permutations of the pool (every task once per pass).
std::vector<size_t> StepTasks(size_t pool, int k, int global_step, uint64_t seed);

}  // namespace kz::train
