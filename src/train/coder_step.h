// One Coder step of `kz train` (docs/training.md, "A Coder step"): the step's tasks (a seeded
// share of the pool, plus tasks Buffered Dynamic Retry brings back), a rollout of
// samples_per_task trajectories each (one turn, or multi-turn refinement with the verifier's
// feedback), CA-GRPO rewards per (task, turn), returns-to-go with PrimeEcho and advantages
// per (task, turn) (src/rewards/multi_turn.h), MirrorPop's filter, one train_step.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewards/multi_turn.h"
#include "train/refine_rollout.h"
#include "train/run_config.h"

namespace kz::train {

// The scored group of one task: each trajectory's turn rewards and advantages, and counts.
struct ScoredGroup {
  rewards::TurnAdvantages turns;             // [trajectory][turn]
  std::vector<std::vector<double>> rewards;  // CA-GRPO's r per [trajectory][turn]
  bool gate_open = false;                    // turn 1's group reliably correct
  bool any_correct = false;                  // some turn of some trajectory
};

// Turn t's rewards come from the CA-GRPO group of the trajectories that took turn t.
ScoredGroup ScoreTaskGroup(const std::vector<const Trajectory*>& group, const RunConfig& c);

}  // namespace kz::train
