// What `kz optimize` reads from a verdict and a source (docs/optimize.md, "Diagnostics fed
// back"): the behaviour cell that places a candidate in an island's archive. Pure functions:
// a replayed run reads the same facts.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/feedback.h"

namespace kz::optimize {

// The verdict's facts (ReadSpeedup, Diagnose) live in verify/feedback.h, shared with kz train.
using verify::Diagnose;
using verify::ReadSpeedup;
using verify::SpeedupFacts;

// The behaviour cell: {kernels defined in the source (1, 2, 3+), kernel launches per forward
// of the candidate in the first traced call (0 when not traced, 1, 2, 3+), bound (0 unknown, 1 memory, 2 compute:
// the candidate's attained rate against the measured ceilings when the verdict carries them)}.
std::vector<int> BehaviourCell(const std::string& source, const nlohmann::json& verdict);

// Counts `__global__` functions and `@triton.jit` / `@triton.autotune`-decorated functions.
int KernelsDefined(const std::string& source);

}  // namespace kz::optimize
