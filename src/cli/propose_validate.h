// `kz propose validate`: the three-stage validation of proposed modules (docs/curriculum.md).
#pragma once
#include <string>
#include <vector>

#include "curriculum/catalog.h"
#include "curriculum/validate_rules.h"
#include "curriculum/validator.h"

namespace kz::cli {

struct ValidateArgs {
  std::vector<std::string> files;          // with `apis`
  std::string apis;                        // "relu,conv2d": the set of every file
  std::string manifest;                    // JSONL {"path", "apis", "expect"?}; paths relative to it
  std::string proposals;                   // a `kz generate --proposer` run directory
  std::vector<std::string> decontaminate;  // evaluation suites (default $KZ_KERNELBENCH levels)
  bool no_decontaminate = false;
  double near_copy = 0.85;  // structural similarity from which a module is a near copy
  std::string pool;         // frontier pool: dedup against it, add the valid modules
  int round = 0;
  bool cuda = false;
  curriculum::ValidationOptions options;
};

// Prints one JSON line per module; 0 when every module is valid (or, with a manifest that
// has `expect`, when every module matched it), 1 otherwise, 2 for bad input.
int RunValidate(const ValidateArgs& args, const curriculum::Catalog& catalog, const std::string& argv0);

// --proposals RUN (propose_proposals.cc): RUN/validation.jsonl, valid modules in
// RUN/valid/level1; a summary line on stdout; 0, or 1 when proposals.jsonl had bad lines.
int RunValidateProposals(const ValidateArgs& args, const curriculum::Catalog& catalog, curriculum::KnownHashes known,
                         const std::string& argv0);

// With --pool: adds the valid outcomes' modules to the frontier pool (dedup by hash).
bool AddToPool(const ValidateArgs& args, const curriculum::Catalog& catalog,
               const std::vector<curriculum::Outcome>& outcomes, std::string* err);

// "kz propose validate: <what>" on stderr; the usage exit code.
int Bad(const std::string& what);

}  // namespace kz::cli
