#include "rewards/multi_turn.h"

#include <algorithm>
#include <cmath>

namespace kz::rewards {

std::string Validate(const MultiTurnOptions& o) {
  if (!(o.gamma >= 0 && o.gamma <= 1)) return "gamma must be in [0, 1]";
  if (!(o.eta >= 0) || !std::isfinite(o.eta)) return "eta must be >= 0 and finite";
  if (!(o.eps > 0)) return "eps must be > 0";
  return "";
}

std::vector<double> PrimeEcho(const std::vector<double>& r, const MultiTurnOptions& o) {
  std::vector<double> e = r;
  if (!o.prime_echo) return e;
  for (size_t t = 1; t < r.size(); ++t) e[t] = r[t] + o.eta * (r[t] - r[0]);
  return e;
}

std::vector<double> ReturnsToGo(const std::vector<double>& rewards, double gamma) {
  std::vector<double> g(rewards.size());
  double acc = 0;
  for (size_t k = rewards.size(); k-- > 0;) g[k] = acc = rewards[k] + gamma * acc;
  return g;
}

TurnAdvantages ScoreTrajectories(const std::vector<std::vector<double>>& turn_rewards, const MultiTurnOptions& o,
                                 size_t horizon, const std::vector<bool>& absorbed) {
  TurnAdvantages out;
  size_t turns = 0;
  for (size_t i = 0; i < turn_rewards.size(); ++i) {
    const auto& tr = turn_rewards[i];
    std::vector<double> padded = tr;
    if (i < absorbed.size() && absorbed[i] && !tr.empty())
      while (padded.size() < horizon) padded.push_back(tr.back());
    std::vector<double> g = ReturnsToGo(PrimeEcho(padded, o), o.gamma);
    g.resize(tr.size());
    out.returns.push_back(std::move(g));
    out.advantages.emplace_back(tr.size(), 0.0);
    turns = std::max(turns, tr.size());
  }
  out.zero_variance_turns.assign(turns, true);
  for (size_t t = 0; t < turns; ++t) {
    std::vector<size_t> who;
    std::vector<double> g;
    for (size_t i = 0; i < out.returns.size(); ++i)
      if (t < out.returns[i].size()) {
        who.push_back(i);
        g.push_back(out.returns[i][t]);
      }
    bool zero = true;
    std::vector<double> a = Advantages(g, o.baseline, o.eps, &zero);
    out.zero_variance_turns[t] = zero;
    for (size_t j = 0; j < who.size(); ++j) out.advantages[who[j]][t] = a[j];
  }
  return out;
}

}  // namespace kz::rewards
