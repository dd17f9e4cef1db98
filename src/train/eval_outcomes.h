// Reading a run's metrics.jsonl, an evaluation's per-task outcomes, and two evaluations
// compared task by task: `kz train report` (every evaluation against r0.eval) and `kz train
// compare` (two runs) share them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::train {

// metrics.jsonl's lines by unit, units in order of first appearance; a later line of the same
// unit wins (a unit retried after a crash); a torn or foreign line is skipped.
std::vector<nlohmann::json> MetricsUnits(const std::string& text);

using TaskOutcomes = std::map<std::string, std::pair<double, double>>;  // task -> (correct, fast), 0 or 1

// From an evaluation line's `key` ([[task, correct, fast], ...]); "outcomes" when the line has
// no `key` (a run that did not refine has no "outcomes_best_turn"). Malformed rows are skipped.
TaskOutcomes EvalOutcomes(const nlohmann::json& eval, const std::string& key = "outcomes");

// B − A over the tasks both hold, with a paired bootstrap interval over them:
// {"paired_tasks", "pass_at_1": {"a", "b", "delta", "lo", "hi", "excludes_zero"}, "fast_1_at_1": {...}}.
nlohmann::json ComparePaired(const TaskOutcomes& a, const TaskOutcomes& b, int resamples, double level, uint64_t seed);

}  // namespace kz::train
