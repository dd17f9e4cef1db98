#include "rewards/ca_grpo.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kz::rewards {

std::string Validate(const CaGrpoOptions& o) {
  if (!std::isfinite(o.alpha) || o.alpha < 0) return "alpha must be a finite number >= 0";
  if (!std::isfinite(o.beta) || o.beta < 0) return "beta must be a finite number >= 0";
  if (!std::isfinite(o.speedup_cap) || o.speedup_cap <= 1) return "speedup_cap must be a finite number > 1";
  if (!std::isfinite(o.eps) || o.eps <= 0) return "eps must be a finite number > 0";
  return "";
}

double SpeedTerm(const std::optional<double>& speedup, double cap) {
  if (!speedup || !std::isfinite(*speedup) || *speedup <= 0) return 0;
  return std::clamp(std::log(*speedup) / std::log(cap), -1.0, 1.0);
}

std::vector<double> Advantages(const std::vector<double>& r, Baseline baseline, double eps,
                               bool* zero_variance) {
  const size_t n = r.size();
  std::vector<double> a(n, 0.0);
  auto [lo, hi] = std::minmax_element(r.begin(), r.end());
  *zero_variance = n < 2 || *hi - *lo <= 1e-12;
  if (*zero_variance) return a;
  const double sum = std::accumulate(r.begin(), r.end(), 0.0);
  const double mean = sum / double(n);
  if (baseline == Baseline::kLeaveOneOut) {
    for (size_t i = 0; i < n; ++i) a[i] = r[i] - (sum - r[i]) / double(n - 1);
    return a;
  }
  double var = 0;
  for (double x : r) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / double(n));  // population: the group is the whole sample
  for (size_t i = 0; i < n; ++i) a[i] = (r[i] - mean) / (sd + eps);
  return a;
}

GroupRewards ScoreGroup(const std::vector<SampleOutcome>& group, const CaGrpoOptions& o) {
  GroupRewards g;
  if (group.empty()) return g;
  size_t correct = std::count_if(group.begin(), group.end(), [](const SampleOutcome& s) { return s.correct; });
  g.accuracy = double(correct) / double(group.size());
  g.gate = g.accuracy >= o.alpha;
  for (const auto& s : group) {
    double term = s.correct ? SpeedTerm(s.speedup, o.speedup_cap) : 0.0;
    g.speed_terms.push_back(term);
    g.rewards.push_back(s.correct ? 1.0 + (g.gate ? o.beta * term : 0.0) : 0.0);
  }
  g.advantages = Advantages(g.rewards, o.baseline, o.eps, &g.zero_variance);
  return g;
}

}  // namespace kz::rewards
