// `kz propose validate`: the three-stage validation of proposed modules (docs/curriculum.md).
#pragma once
#include <string>
#include <vector>

#include "curriculum/catalog.h"
#include "curriculum/validate_rules.h"

namespace kz::cli {

struct ValidateArgs {
  std::vector<std::string> files;  // with `apis`
  std::string apis;                // "relu,conv2d": the set of every file
  std::string manifest;            // JSONL {"path", "apis", "expect"?}; paths relative to it
  std::vector<std::string> decontaminate;  // evaluation suites (default $KZ_KERNELBENCH levels)
  bool no_decontaminate = false;
  std::string pool;                // frontier pool: dedup against it, add the valid modules
  int round = 0;
  bool cuda = false;
  curriculum::ValidationOptions options;
};

// Prints one JSON line per module; 0 when every module is valid (or, with a manifest that
// has `expect`, when every module matched it), 1 otherwise, 2 for bad input.
int RunValidate(const ValidateArgs& args, const curriculum::Catalog& catalog, const std::string& argv0);

}  // namespace kz::cli
