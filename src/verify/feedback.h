// What a verdict says, as facts a model can act on (docs/verdict.md): the speedup and its
// interval, and a short structured text for the next prompt — `kz optimize`'s diagnostics and
// `kz train`'s multi-turn feedback. Pure functions of the verdict: a replayed run reads the
// same facts.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kz::verify {

struct SpeedupFacts {
  double median = 0, lo = 0, hi = 0;  // 0 when the verdict was not timed (the CPU verifier)
  bool timed = false;
};
// stages.timing.speedup and speedup_ci95 of a correct verdict; an untimed one gives zeros.
SpeedupFacts ReadSpeedup(const nlohmann::json& verdict);

// The facts of a verdict for the model, at most `max_chars` (cut at a line end, marked
// "[... cut]"): status and reason; compile diagnostics with the candidate's line numbers; the
// mismatch (first failing trial: which output, how many elements, the error); failed extra
// checks; timing (medians, speedup and interval); the launch trace's kernels when present;
// the ncu counters of `profile` when present (a line per kernel, or why there are none).
std::string Diagnose(const nlohmann::json& verdict, size_t max_chars = 1500);

}  // namespace kz::verify
