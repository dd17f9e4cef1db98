// Frontier Reward (ARCHITECTURE.md §6): for a valid module the Coder solved s of n times,
// p = s / n and r = 1 - 2 |p - 0.5| (1 at p = 0.5, 0 at p = 0 or 1); an invalid module
// gets `invalid_penalty`. Pure functions. The one home of the Frontier Reward (the curriculum
// and `kz propose` call it), beside CA-GRPO (ca_grpo.h).
#pragma once
#include <string>

namespace kz::rewards {

struct RewardOptions {
  double invalid_penalty = -1.0;
};

struct FrontierOutcome {
  bool valid = false;
  int attempts = 0;   // n Coder samples verified
  int successes = 0;  // s of them correct
};

// p = s / n; false with *err when n < 1, s < 0 or s > n.
bool SuccessRate(int attempts, int successes, double* p, std::string* err);

// False with *err for a valid outcome without a usable p (see SuccessRate).
bool FrontierReward(const FrontierOutcome& o, const RewardOptions& options, double* reward, std::string* err);

}  // namespace kz::rewards
