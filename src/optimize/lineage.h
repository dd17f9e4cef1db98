// `kz optimize`'s outputs drawn from its candidate records (docs/optimize.md, "Outputs"):
// lineage.json (every candidate with its parent, mutation, outcome and speedup; the best),
// curve.tsv and curve.svg (the best correct candidate's speedup against the budget spent:
// tokens and GPU-seconds, one row per iteration). Rewritten after every iteration.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/run_store.h"

namespace kz::optimize {

bool WriteLineage(const RunStore& store, const std::vector<nlohmann::json>& records, const std::string& best_id,
                  std::string* err);

}  // namespace kz::optimize
