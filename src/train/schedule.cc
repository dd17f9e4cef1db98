#include "train/schedule.h"

namespace kz::train {

std::vector<Unit> Schedule(const RunConfig& c) {
  std::vector<Unit> units;
  if (!c.sft_data.empty()) units.push_back({"sft", "sft", 0, 0, 0});
  int global = 0, proposer_global = 0;
  if (!c.eval_tasks.empty() && c.eval_baseline && c.rounds > 0) units.push_back({"r0.eval", "eval", 0, 0, 0});  // the model RL starts from
  for (int r = 1; r <= c.rounds; ++r) {
    for (int s = 1; s <= c.proposer.steps_per_round; ++s)
      units.push_back({"r" + std::to_string(r) + ".proposer." + std::to_string(s), "proposer", r, s, proposer_global++});
    for (int s = 1; s <= c.steps_per_round; ++s)
      units.push_back({"r" + std::to_string(r) + ".coder." + std::to_string(s), "coder", r, s, global++});
    if (c.rft_per_task > 0 && c.steps_per_round > 0) units.push_back({"r" + std::to_string(r) + ".rft", "rft", r, 0, global});
    if (!c.eval_tasks.empty()) units.push_back({"r" + std::to_string(r) + ".eval", "eval", r, 0, global});
  }
  return units;
}

}  // namespace kz::train
