// report.json, report.md and the fast_p figures of a bench run, computed from the stored
// verdict records (verdict_log.h) and the bad inputs of the run (generations.h).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/baseline.h"
#include "scoring/metrics.h"

namespace kz::scoring {

// What the report is computed from. `run` is <out>/run.json: {"suite", "policy",
// "keys": [resume keys of the selected samples], "bad_inputs": [...],
// "samples": {"total", "verified", "resumed", "bad_input"},
// "tasks": {"L1_19": {"level", "file", "xxh128"}}}. `baseline`: the torch.compile baseline
// (`--baseline`); without it the report has no vs-compile parts.
struct ReportInput {
  nlohmann::json run;
  std::vector<nlohmann::json> records;  // the stored record of each key that has one
  std::optional<CompileBaseline> baseline = std::nullopt;
};

// One TaskResult per task that has samples, samples sorted by id: a record is correct
// when its "status" is "correct"; scored bad inputs (empty code, not UTF-8) are incorrect.
// With `compile` (CompileRefs of a baseline), tasks found there get has_compile_baseline
// and their samples speedup_vs_compile (SpeedupVsCompile).
std::vector<TaskResult> BuildTaskResults(const std::vector<nlohmann::json>& records,
                                         const nlohmann::json& bad_inputs,
                                         const std::map<std::string, CompileRef>* compile = nullptr);

// fast_p against p (0 to 2.5, step 0.05) for k in {1, 5, 10} with k ≤ the scope's smallest
// n: {"overall": {"1": [[p, v], ...], "5": ...}, "level_1": {...}}. vs_compile: the same
// against torch.compile, over the tasks with a compile baseline (scopes without one left out).
nlohmann::json FastPCurves(const std::vector<TaskResult>& tasks, bool vs_compile = false);

// The report object (docs/bench.md); "plots" is filled in by WriteReport.
nlohmann::json BuildReport(const ReportInput& in, const std::string& generated_at);

// Table 1-like Markdown of a report.
std::string ReportMarkdown(const nlohmann::json& report);

// Writes report.json, report.md, fast_p_<scope>.svg (and .png when rsvg-convert is on
// PATH) into `out_dir`. False with *err when a file cannot be written.
bool WriteReport(const std::string& out_dir, const ReportInput& in, nlohmann::json* report, std::string* err);

// "2024-05-01T12:00:00Z".
std::string UtcNow();

}  // namespace kz::scoring
