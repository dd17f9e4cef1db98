// One Proposer step of `kz train` (docs/training.md, "The Proposer phase"), the paper's
// frontier-driven generation with the Proposer in the loop:
//   1. sets_per_step API sets from the sampler (co-occurrence weighted; a share rho repeats
//      API sets of modules the Coder has not solved, from the frontier pool);
//   2. samples_per_set modules per set from the Proposer policy (the Proposer prompt);
//   3. the three-stage validation (AST, runnable, numerically stable), decontaminated
//      against the held-out tasks and deduplicated against the pool;
//   4. coder_samples attempts of the (frozen) Coder at every valid module, verified;
//   5. the Frontier Reward r = 1 - 2|p - 1/2| (p = the Coder's success rate; an invalid
//      module gets invalid_penalty), group-normalised advantages over each set's samples,
//      and a clipped policy-gradient step of the Proposer (none once it is frozen).
// The valid modules join the frontier pool (with the Coder's attempts) and RUN/tasks, the
// Coder phase's tasks from then on. Resumable inside the unit: sets.json, generation.json,
// validation.json, the Coder's rollout (coder/) and a marker once the pool has the attempts.
#pragma once
#include <string>

#include "curriculum/catalog.h"
#include "curriculum/cooccur.h"
#include "curriculum/validate_rules.h"
#include "train/units.h"
#include "worker/worker_client.h"

namespace kz::train {

struct ProposerContext {
  TrainerBackend* backend = nullptr;  // the Proposer policy (its own process and weights)
  std::string prompt_template;        // prompts/proposer_module.v1.txt
  curriculum::Catalog catalog;
  curriculum::Stats stats;
  bool has_stats = false;
  std::string pool_path;              // RUN/frontier.db
  std::string tasks_dir;              // RUN/tasks: the valid modules, Coder tasks
  worker::WorkerConfig worker;        // the module_scan and validate children
  curriculum::KnownHashes known;      // the held-out tasks (decontamination)
};

bool RunProposerStep(UnitContext& ctx, ProposerContext& pc, const Unit& u, const std::string& unit_dir,
                     UnitResult* out, std::string* err, TrainerError* terr);

// The Coder's task pool: [coder] tasks (may be empty) and RUN/tasks (may not exist yet), each
// sorted by name, in that order. False when neither has a task.
bool LoadCoderPool(const std::string& coder_tasks, const std::string& run_tasks, std::vector<RolloutTask>* out,
                   std::string* err);

}  // namespace kz::train
