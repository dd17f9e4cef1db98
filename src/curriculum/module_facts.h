// The AST facts of one module file, as the worker's `module_scan` op reports them
// (python/kz_worker/screen/module_scan.py, docs/curriculum.md "Module facts"), and the catalog
// APIs they use, aliases resolved.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "curriculum/catalog.h"

namespace kz::curriculum {

struct FunctionFacts {
  std::vector<std::string> calls;  // resolved call names: torch.relu, Tensor.view, builtins.open
  std::vector<std::string> ops;    // operators as torch names: torch.matmul for `@`
  int line = 0;
};

struct ModuleFacts {
  std::string path;
  std::string status;  // ok | unreadable | too_large | not_utf8 | syntax_error | missing
  std::string error;
  int line = 0;
  std::vector<std::string> imports;
  std::vector<std::string> classes, functions;  // top level
  bool has_model = false;
  std::vector<std::string> model_methods;
  std::map<std::string, FunctionFacts> by_function;  // "Model.forward", "get_inputs", "<module>"
  std::string canonical_hash;
  std::vector<uint64_t> sketch;  // bottom-k of the canonical dump's shingle hashes, sorted
};

// Estimated Jaccard similarity of two modules from their bottom-k sketches: of the k
// smallest hashes of the union, the share found in both. 0 when either is empty.
double SketchSimilarity(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, size_t k = 128);

// One entry of the op's `modules` array. A malformed entry is status "missing" with a reason.
ModuleFacts ParseModuleFacts(const nlohmann::json& entry);

enum class Scope {
  kModel,    // every method of class Model (mining: what the module is made of)
  kForward,  // forward and what it reaches: other Model methods but __init__, the module's helper
             // functions and the methods of its helper classes but their __init__
};

// Sorted, unique catalog indices the module uses in `scope`; operators count when
// `with_ops`. Local helper functions called from the scope are followed (transitively).
std::vector<size_t> ApisUsed(const ModuleFacts& m, const Catalog& catalog, Scope scope, bool with_ops);

// Every resolved name (calls, and ops when asked) of the scope, helpers followed.
std::vector<std::string> NamesIn(const ModuleFacts& m, Scope scope, bool with_ops);

}  // namespace kz::curriculum
