// The Proposer's output as the curriculum reads it: a `kz generate --proposer` run
// directory (docs/generate.md, "Proposer mode": <run>/proposals.jsonl, format
// "kz.proposal/1", and <run>/modules/<set>_sample_<S>.py), and the API-set file it reads
// (format "kz.api_sets": {"id", "apis"} a line). docs/curriculum.md, "The Proposer loop".
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "curriculum/catalog.h"
#include "curriculum/sampler.h"

namespace kz::curriculum {

struct ProposalRecord {
  std::string set;                // the API set's id
  int sample = 0;
  std::vector<std::string> apis;  // as the set file named them (qualified names)
  std::string code, code_xxh;     // code "" when the reply had none
  std::string reason;             // extraction's reason, "" when there is code
  std::string module_path;        // <run>/modules/<set>_sample_<S>.py
};

// Reads <run>/proposals.jsonl; a later record of the same (set, sample) wins (a resumed
// run). Bad lines are described in *bad and skipped; false with *err only when the file
// cannot be read.
bool ReadProposals(const std::string& run_dir, std::vector<ProposalRecord>* out, std::vector<std::string>* bad,
                   std::string* err);

// One line of an API-set file for a draw: {"id": "s000042", "apis": [qualified names],
// "ids": [catalog ids], "source": "fresh" | "frontier", "epoch"} (the last three are the
// curriculum's own; `kz generate` ignores them).
nlohmann::json ApiSetLine(const Catalog& catalog, size_t index, const ApiSetDraw& draw);

}  // namespace kz::curriculum
