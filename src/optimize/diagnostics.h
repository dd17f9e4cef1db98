// What `kz optimize` reads from a verdict (docs/optimize.md, "Diagnostics fed back"): the
// speedup and its interval, the behaviour cell that places a candidate in an island's
// archive, and a short structured text for the next prompt. Pure functions of the verdict
// and the source: a replayed run reads the same facts.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::optimize {

struct SpeedupFacts {
  double median = 0, lo = 0, hi = 0;  // 0 when the verdict was not timed (the CPU verifier)
  bool timed = false;
};
// stages.timing.speedup and speedup_ci95 of a correct verdict; an untimed one gives zeros.
SpeedupFacts ReadSpeedup(const nlohmann::json& verdict);

// The behaviour cell: {kernels defined in the source (1, 2, 3+), kernel launches per forward
// of the candidate in the first traced call (0 when not traced, 1, 2, 3+), bound (0 unknown, 1 memory, 2 compute:
// the candidate's attained rate against the measured ceilings when the verdict carries them)}.
std::vector<int> BehaviourCell(const std::string& source, const nlohmann::json& verdict);

// The facts of a verdict for the model, at most `max_chars` (cut at a line end, marked):
// status and reason; compile diagnostics with the candidate's line numbers; the mismatch
// (first failing trial: which output, how many elements, the error); timing (medians,
// speedup and interval, calls); the launch trace's kernels when present.
std::string Diagnose(const nlohmann::json& verdict, size_t max_chars = 1500);

// Counts `__global__` functions and `@triton.jit` / `@triton.autotune`-decorated functions.
int KernelsDefined(const std::string& source);

}  // namespace kz::optimize
