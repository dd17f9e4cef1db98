#include "rewards/frontier.h"

#include <cmath>

namespace kz::rewards {

bool SuccessRate(int attempts, int successes, double* p, std::string* err) {
  if (attempts < 1) return *err = "no Coder attempts: the success rate is undefined", false;
  if (successes < 0 || successes > attempts)
    return *err = std::to_string(successes) + " successes of " + std::to_string(attempts) + " attempts", false;
  *p = static_cast<double>(successes) / attempts;
  return true;
}

bool FrontierReward(const FrontierOutcome& o, const RewardOptions& options, double* reward, std::string* err) {
  if (!o.valid) return *reward = options.invalid_penalty, true;
  double p;
  if (!SuccessRate(o.attempts, o.successes, &p, err)) return false;
  *reward = 1.0 - 2.0 * std::fabs(p - 0.5);
  return true;
}

}  // namespace kz::rewards
