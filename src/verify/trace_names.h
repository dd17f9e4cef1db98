// Whose kernel is a trace record (docs/trace.md, "Whose kernel is it"): pure functions over
// demangled kernel names. A kernel is the candidate's when the unqualified function name of
// its demangled name is one of the candidate's kernel names (exact match) and it is neither
// qualified by a PyTorch/vendor namespace nor named like a vendor library kernel, so a
// candidate cannot claim cuBLAS's kernels by reusing their names.
#pragma once
#include <set>
#include <string>
#include <utility>

#include "verify/trace_facts.h"

namespace kz::verify {

// (qualified, unqualified) function name of a demangled kernel name: return type, parameter
// list and trailing template arguments removed. "void at::native::foo<4, float>(float*, int)"
// -> ("at::native::foo", "foo"); a name cut short (no balanced parameter list) is cut at its
// first '(' or '<'.
std::pair<std::string, std::string> KernelFunctionName(const std::string& name);

// "marker" | "memory" (memsets, memcpys, PyTorch fill/copy kernels) | "candidate" | "foreign"
// for a record of `kind` named `name`.
const char* ClassifyRecord(TraceKind kind, const std::string& name, const std::set<std::string>& candidate_names);

}  // namespace kz::verify
