// The schedule of a `kz train` run: its units in order, a pure function of the config, so a
// resumed run finds where it stopped by the units its state lists as done.
//   "sft"                      the cold start (when [sft] data is set)
//   "r0.eval"                  held-out evaluation of the model RL starts from (when [eval]
//                              tasks is set): the baseline every later evaluation is compared to
//   "r<R>.proposer.<S>"        Proposer step S of round R (when [proposer] steps_per_round > 0):
//                              modules from API sets, validated, attempted by the Coder,
//                              Frontier Reward, a Proposer update (none once frozen)
//   "r<R>.coder.<S>"           CA-GRPO step S of round R (1-based), after the round's Proposer phase
//   "r<R>.rft"                 an SFT on the run's verified-correct samples so far, diverse
//                              (kz train rft's set; when [rft] per_task > 0)
//   "r<R>.eval"                held-out evaluation after round R (when [eval] tasks is set)
#pragma once
#include <string>
#include <vector>

#include "train/run_config.h"

namespace kz::train {

struct Unit {
  std::string id;    // as above; also a directory name under the run's rollouts/
  std::string kind;  // "sft" | "proposer" | "coder" | "rft" | "eval"
  int round = 0, step = 0;  // step: 1-based within the round (coder); 0 otherwise
  int global_step = 0;      // steps of its kind before this one, all rounds (seeds its sampling)
};

std::vector<Unit> Schedule(const RunConfig& c);

}  // namespace kz::train
