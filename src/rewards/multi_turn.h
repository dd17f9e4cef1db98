// Multi-turn refinement's reward math (issue 22, docs/rewards.md "Multi-turn"): a trajectory
// is the Coder's turns on one task, each answered with the verifier's feedback; each turn is a
// training sample. Pure functions.
//
//   PrimeEcho (anchored to the first turn):  e_1 = r_1;  e_t = r_t + eta * (r_t - r_1), t > 1
//     a later turn earns extra for improving on turn 1 and loses for regressing, so the policy
//     learns both to be right the first time (r_1 is every turn's anchor) and to repair.
//   Return-to-go:                            G_t = sum_{k >= t} gamma^(k - t) * e_k
//   Advantages per (task, turn):             A_{i,t} from the G_{j,t} of the trajectories of the
//     group that reached turn t (group-normalised or leave-one-out, as CA-GRPO).
// A turn whose reply had no code has reward 0 (it counts as a failed sample).
#pragma once
#include <string>
#include <vector>

#include "rewards/ca_grpo.h"

namespace kz::rewards {

struct MultiTurnOptions {
  double gamma = 0.8;   // discount of later turns' rewards in a turn's return, in [0, 1]
  double eta = 0.5;     // PrimeEcho's weight of the change against turn 1, >= 0 (0: off)
  bool prime_echo = true;
  double eps = 1e-6;
  Baseline baseline = Baseline::kGroupNormalised;
};

// "" when usable, else why not (gamma outside [0, 1], eta < 0 or not finite, eps <= 0).
std::string Validate(const MultiTurnOptions& o);

// PrimeEcho's shaped rewards of one trajectory (the rewards unchanged when prime_echo is off
// or the trajectory has one turn).
std::vector<double> PrimeEcho(const std::vector<double>& turn_rewards, const MultiTurnOptions& o);

// Discounted returns-to-go of one trajectory's (shaped) rewards.
std::vector<double> ReturnsToGo(const std::vector<double>& rewards, double gamma);

struct TurnAdvantages {
  std::vector<std::vector<double>> returns;     // [trajectory][turn]
  std::vector<std::vector<double>> advantages;  // [trajectory][turn]
  std::vector<bool> zero_variance_turns;        // [turn]: every return equal at that turn
};

// Advantages of a group of trajectories of one task (trajectories may differ in length: a
// turn's group is the trajectories that reached it; a turn reached by one only has advantage 0).
//
// A trajectory that stopped early because it was correct (absorbed[i]; refinement stops on a
// correct answer) keeps its last reward for the turns it did not take, up to `horizon`: the
// answer stands. Those padded turns count in its returns (so being right at turn 1 earns
// more than being repaired at turn 2) but are no samples: they join no turn's group and get
// no advantage. returns and advantages have one entry per turn taken.
TurnAdvantages ScoreTrajectories(const std::vector<std::vector<double>>& turn_rewards, const MultiTurnOptions& o,
                                 size_t horizon = 0, const std::vector<bool>& absorbed = {});

}  // namespace kz::rewards
