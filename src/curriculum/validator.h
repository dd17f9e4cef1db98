// Validation of proposed modules, all three stages (docs/curriculum.md "Validation"):
// stage 1 on the facts of one `module_scan` child for the batch; the modules that pass it
// go to one `validate` child (a fresh forked process per module, under time and memory
// limits) for stages 2 and 3; validate_rules decides. The worker behind interfaces.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "curriculum/scan.h"
#include "curriculum/validate_rules.h"

namespace kz::curriculum {

// Stages 2 and 3 facts of many modules: one JSON object per path, in order.
class RunFactsSource {
 public:
  virtual ~RunFactsSource() = default;
  virtual bool Run(const std::vector<std::string>& paths, const ValidationOptions& options,
                   std::vector<nlohmann::json>* out, std::string* err) = 0;
};

class WorkerRunFacts : public RunFactsSource {
 public:
  WorkerRunFacts(worker::WorkerConfig config, bool cuda) : config_(std::move(config)), cuda_(cuda) {}
  bool Run(const std::vector<std::string>& paths, const ValidationOptions& options, std::vector<nlohmann::json>* out,
           std::string* err) override;

 private:
  worker::WorkerConfig config_;
  bool cuda_;
};

struct Proposal {
  std::string path;
  std::vector<size_t> apis;
};

struct Outcome {
  std::string path;
  std::vector<size_t> apis;
  std::string canonical_hash;
  std::optional<Refusal> refusal;  // none: valid
  nlohmann::json facts;            // stages 2-3 facts, when it got there
};

// Validates in order; `known` gains the hash of every module that passes stage 1 (later
// copies in the batch are duplicates). False only when a worker call itself failed.
bool ValidateAll(const std::vector<Proposal>& proposals, const Catalog& catalog, Scanner& scanner,
                 RunFactsSource& runner, const ValidationOptions& options, KnownHashes* known,
                 std::vector<Outcome>* out, std::string* err);

// An evaluation suite's modules for decontamination: canonical hash -> relative path
// (`eval`) and their sketches (`eval_sketches`, near copies).
bool EvalHashes(const std::vector<std::string>& roots, Scanner& scanner, KnownHashes* out, std::string* err);

nlohmann::json OutcomeJson(const Outcome& o, const Catalog& catalog);

}  // namespace kz::curriculum
