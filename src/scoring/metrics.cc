#include "scoring/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace kz::scoring {
using nlohmann::json;

double PassAtK(int n, int c, int k) {
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument("PassAtK needs 0 <= c <= n and 1 <= k <= n");
  if (n - c < k) return 1.0;  // every draw of k contains a good sample
  double none = 1.0;          // C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i)
  for (int i = n - c + 1; i <= n; ++i) none *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none;
}

int FastCount(const std::vector<SampleResult>& samples, double p) {
  return static_cast<int>(std::count_if(samples.begin(), samples.end(), [&](const SampleResult& s) {
    return s.correct && s.speedup && *s.speedup > p;
  }));
}

std::string FastName(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  std::string ps = buf;
  if (ps.find('.') == std::string::npos && ps.find('e') == std::string::npos) ps += ".0";
  return "fast_" + ps;
}

std::string FastKey(double p, int k) { return FastName(p) + "@" + std::to_string(k); }

namespace {
std::vector<int> KsFor(const std::vector<TaskResult>& tasks, const MetricsOptions& o) {
  if (!o.ks.empty()) return o.ks;
  size_t min_n = tasks.front().samples.size();
  for (const auto& t : tasks) min_n = std::min(min_n, t.samples.size());
  std::vector<int> ks;
  for (size_t k = 1; k <= min_n; ++k) ks.push_back(static_cast<int>(k));
  return ks;
}

double Mean(const std::vector<double>& xs) {
  double sum = 0;
  for (double x : xs) sum += x;
  return xs.empty() ? 0.0 : sum / xs.size();
}

// Mean over tasks of a per-task estimator; tasks with fewer than k samples are skipped.
template <typename F>
json MeanOverTasks(const std::vector<TaskResult>& tasks, int k, F per_task) {
  std::vector<double> vals;
  for (const auto& t : tasks)
    if (static_cast<int>(t.samples.size()) >= k) vals.push_back(per_task(t));
  return vals.empty() ? json(nullptr) : json(Mean(vals));
}

json Aggregates(const std::vector<TaskResult>& tasks) {
  double log_sum = 0, tokens = 0;
  int timed = 0, counted = 0;
  for (const auto& t : tasks)
    for (const auto& s : t.samples) {
      if (s.correct && s.speedup && *s.speedup > 0) log_sum += std::log(*s.speedup), ++timed;
      if (s.output_tokens) tokens += *s.output_tokens, ++counted;
    }
  return {{"geomean_speedup_correct", timed ? json(std::exp(log_sum / timed)) : json(nullptr)},
          {"correct_timed_samples", timed},
          {"mean_output_tokens", counted ? json(tokens / counted) : json(nullptr)}};
}
}  // namespace

json ComputeMetrics(const std::vector<TaskResult>& tasks, const MetricsOptions& options) {
  json out = {{"tasks", tasks.size()}};
  size_t samples = 0;
  for (const auto& t : tasks) samples += t.samples.size();
  out["samples"] = samples;
  if (tasks.empty() || samples == 0) return out;
  for (int k : KsFor(tasks, options)) {
    out["pass@" + std::to_string(k)] = MeanOverTasks(tasks, k, [&](const TaskResult& t) {
      int c = static_cast<int>(std::count_if(t.samples.begin(), t.samples.end(),
                                             [](const SampleResult& s) { return s.correct; }));
      return PassAtK(static_cast<int>(t.samples.size()), c, k);
    });
    for (double p : options.ps)
      out[FastKey(p, k)] = MeanOverTasks(tasks, k, [&](const TaskResult& t) {
        return PassAtK(static_cast<int>(t.samples.size()), FastCount(t.samples, p), k);
      });
  }
  json sample0 = json::object();
  for (double p : options.ps)
    sample0[FastName(p)] = MeanOverTasks(tasks, 1, [&](const TaskResult& t) {
      return t.has_sample0 && FastCount({t.samples.front()}, p) ? 1.0 : 0.0;
    });
  out["fast_p_sample0"] = sample0;
  out.update(Aggregates(tasks));
  return out;
}

json ComputeCompileMetrics(const std::vector<TaskResult>& tasks, const MetricsOptions& options) {
  std::vector<TaskResult> with;  // speedup replaced by speedup_vs_compile
  int without = 0;
  for (const auto& t : tasks) {
    if (!t.has_compile_baseline) {
      ++without;
      continue;
    }
    TaskResult c = t;
    for (auto& s : c.samples) s.speedup = s.speedup_vs_compile;
    with.push_back(std::move(c));
  }
  MetricsOptions o = options;
  o.vs_compile = false;
  json m = ComputeMetrics(with, o);
  json out = {{"tasks", with.size()}, {"tasks_without_baseline", without}, {"samples", m["samples"]}};
  for (const auto& [key, value] : m.items())
    if (key.rfind("fast_", 0) == 0) out[key] = value;
  out["geomean_speedup_vs_compile"] = m.value("geomean_speedup_correct", json(nullptr));
  out["correct_timed_samples"] = m.value("correct_timed_samples", 0);
  return out;
}

json ComputeReport(const std::vector<TaskResult>& tasks, const MetricsOptions& options) {
  auto scope = [&](const std::vector<TaskResult>& group) {
    json m = ComputeMetrics(group, options);
    if (options.vs_compile) m["vs_compile"] = ComputeCompileMetrics(group, options);
    return m;
  };
  json report = {{"overall", scope(tasks)}};
  std::map<int, std::vector<TaskResult>> by_level;
  for (const auto& t : tasks) by_level[t.level].push_back(t);
  for (const auto& [level, group] : by_level) report["level_" + std::to_string(level)] = scope(group);
  return report;
}

}  // namespace kz::scoring
