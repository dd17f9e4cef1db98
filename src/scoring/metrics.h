// Metrics of a model's generations on a suite (docs/bench-metrics.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::scoring {

// One verified sample: correct or not, its speedup (reference / candidate median) when it
// was correct and timed, and the output tokens the model spent on it, if known.
// speedup_vs_compile: the task's torch.compile baseline time / the candidate's median, when
// a baseline was given, has the task, and the sample is correct and timed on its hardware.
struct SampleResult {
  bool correct = false;
  std::optional<double> speedup;
  std::optional<double> output_tokens;
  std::optional<double> speedup_vs_compile = std::nullopt;
};

// All samples of one task, in sample-id order. has_compile_baseline: the compile baseline
// has a usable entry for the task (only such tasks enter the vs-compile metrics).
// has_sample0: samples.front() is sample id 0 (fast_p over sample 0 counts a task without
// it as not fast: an interrupted run, or generations numbered from 1).
struct TaskResult {
  std::string task_id;
  int level = 0;
  std::vector<SampleResult> samples;
  bool has_compile_baseline = false;
  bool has_sample0 = true;
};

// Unbiased estimator of P(at least one of k draws, without replacement from n samples of
// which c are good, is good) = 1 − C(n−c, k) / C(n, k), computed as a stable product.
// Requires 0 ≤ c ≤ n and 1 ≤ k ≤ n.
double PassAtK(int n, int c, int k);

// Samples that are correct with speedup strictly greater than p.
int FastCount(const std::vector<SampleResult>& samples, double p);

// "fast_1.5"-style name; p printed with at least one decimal ("fast_1.0", "fast_0.25").
std::string FastName(double p);
// "fast_1.5@5"-style key.
std::string FastKey(double p, int k);

struct MetricsOptions {
  std::vector<double> ps = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
  std::vector<int> ks;  // empty: every k from 1 to the smallest n among the tasks
  bool vs_compile = false;  // ComputeReport adds "vs_compile" to every scope
};

// {"tasks": N, "samples": M, "pass@k": ..., "fast_p@k": ..., "fast_p_sample0": {...},
//  "geomean_speedup_correct": x | null, "mean_output_tokens": x | null}: each per-task
// metric averaged over the tasks.
nlohmann::json ComputeMetrics(const std::vector<TaskResult>& tasks, const MetricsOptions& options = {});

// The same fast_p metrics against torch.compile, over the tasks that have a compile
// baseline: {"tasks", "tasks_without_baseline", "samples", "fast_<p>@k": ...,
// "fast_p_sample0": {...}, "geomean_speedup_vs_compile": x | null, "correct_timed_samples"}
// where a sample is fast when it is correct with speedup_vs_compile > p. ks default to
// every k up to the smallest n among those tasks.
nlohmann::json ComputeCompileMetrics(const std::vector<TaskResult>& tasks, const MetricsOptions& options = {});

// {"overall": ComputeMetrics(all), "level_1": ComputeMetrics(level 1 tasks), ...}; with
// options.vs_compile each scope also holds "vs_compile": ComputeCompileMetrics(its tasks).
nlohmann::json ComputeReport(const std::vector<TaskResult>& tasks, const MetricsOptions& options = {});

}  // namespace kz::scoring
