// The decisions of the three-stage validation of a proposed module (docs/curriculum.md,
// "Validation"): stage `ast` from the module facts (module_scan), stages `runnable` and
// `numeric` from the facts of the worker's `validate` op. Pure functions: every refusal
// names its stage and rule; the first failing rule decides.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "curriculum/catalog.h"
#include "curriculum/module_facts.h"

namespace kz::curriculum {

struct Refusal {
  std::string stage;   // ast | runnable | numeric
  std::string rule;    // e.g. unused_api, timeout, non_finite
  std::string detail;  // a sentence for people
};

struct ValidationOptions {
  uint64_t min_total_bytes = 4096;     // size band: inputs + params + outputs (footprint)
  uint64_t max_total_bytes = 1ull << 30;
  double fp64_rel_l2 = 1e-4;           // fp32 against fp64: largest relative L2 error
  double timeout_s = 30;               // per module, stages 2 and 3
  uint64_t memory_bytes = 4ull << 30;  // per module: address space beyond torch's
  int seed = 42;
};

// Hashes seen before: the pool's and this run's (duplicates), and an evaluation suite's
// (decontamination: the value names the suite file).
struct EvalModule {
  std::string name;
  std::vector<uint64_t> sketch;
};

struct KnownHashes {
  std::map<std::string, std::string> seen;
  std::map<std::string, std::string> eval;
  std::vector<EvalModule> eval_sketches;  // near copies: similarity >= near_copy
  double near_copy = 0.85;
};

// Stage 1. `apis`: the module's API set (catalog indices).
std::optional<Refusal> CheckAst(const ModuleFacts& m, const std::vector<size_t>& apis, const Catalog& catalog,
                                const KnownHashes& known);

// Stages 2 and 3 from one entry of the validate op's `modules`.
std::optional<Refusal> CheckRun(const nlohmann::json& facts, const ValidationOptions& options);

// The imports a module may have: torch (and its submodules), math, __future__.
bool AllowedImport(const std::string& module);

}  // namespace kz::curriculum
