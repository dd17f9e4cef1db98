// CA-GRPO: the Coder's Correctness-Aware group rewards and advantages (docs/rewards.md).
// Pure functions: a group of G samples of one task in, rewards and advantages out.
//
//   c_i  = 1 if sample i is correct, else 0
//   T    = 1[mean(c) >= alpha]                      the group is reliably correct
//   S_i  = clamp(log(s_i) / log(cap), -1, 1)        s_i = t_ref / t_i; 0 when not timed
//   r_i  = c_i * (1 + T * beta * S_i)
//   A_i  = (r_i - mean r) / (std r + eps)           or leave-one-out: r_i - mean_{j != i} r_j
//
// A group whose rewards are all equal (all wrong, all correct at the same speed, a single
// sample) is "zero-variance": its advantages are 0 and it carries no learning signal.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kz::rewards {

enum class Baseline { kGroupNormalised, kLeaveOneOut };

struct CaGrpoOptions {
  double alpha = 0.5;        // gate: least group accuracy for the speed term to count
  double beta = 1.0;         // weight of the speed term
  double speedup_cap = 10.0; // s >= cap gives S = 1, s <= 1/cap gives S = -1 (> 1)
  double eps = 1e-6;         // added to the standard deviation
  Baseline baseline = Baseline::kGroupNormalised;
};

// "" when the options are usable, else why not (alpha < 0 or not finite, beta < 0,
// speedup_cap <= 1, eps <= 0). alpha > 1 is allowed: the gate never opens.
std::string Validate(const CaGrpoOptions& o);

struct SampleOutcome {
  bool correct = false;
  std::optional<double> speedup;  // t_ref / t_candidate when timed; ignored unless correct
};

struct GroupRewards {
  double accuracy = 0;        // mean(c)
  bool gate = false;          // T
  bool zero_variance = true;  // every reward equal: advantages all 0
  std::vector<double> speed_terms;  // S_i
  std::vector<double> rewards;      // r_i
  std::vector<double> advantages;   // A_i
};

// S for one speedup: 0 when absent, not finite or not positive.
double SpeedTerm(const std::optional<double>& speedup, double cap);

// Rewards and advantages of one group (options already validated). An empty group gives
// empty vectors, accuracy 0, gate false.
GroupRewards ScoreGroup(const std::vector<SampleOutcome>& group, const CaGrpoOptions& o);

// Advantages of `rewards` under `baseline` (exposed for other reward schemes).
std::vector<double> Advantages(const std::vector<double>& rewards, Baseline baseline, double eps,
                               bool* zero_variance);

}  // namespace kz::rewards
