// `kz optimize --suite`'s report (docs/optimize.md, "Suite mode"): over the tasks' run
// directories, each task's best kept kernel, and fast_p at equal budget — the share of tasks
// whose best verified-correct kernel is more than p times as fast as the reference (fast_0:
// the share with any correct kernel). A task whose run was refused (its reference cannot be
// verified) counts as unsolved. Written as suite.json and suite.md.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::optimize {

struct SuiteTaskResult {
  std::string id, dir;
  int exit_code = 0;  // kz optimize's for this task
};

// Reads each run directory; nlohmann::json {"format": "kz.optimize.suite/1", "tasks": [...],
// "fast_p": {"0": x, "1": x, "1.5": x, "2": x}, "budget_per_task": {...}}.
nlohmann::json SummariseSuite(const std::vector<SuiteTaskResult>& tasks);
std::string SuiteMarkdown(const nlohmann::json& summary);

}  // namespace kz::optimize
