// The verifier's flags that kz verify, kz serve and kz worker share (one help text and one
// check each): run and build limits, the cache, the sandbox, build jobs and the policy.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "cli/sandbox_flags.h"
#include "verify/sample.h"

namespace kz::cli {

struct VerifierFlagTexts {
  const char* sandbox_default;  // "require" (services) or "best-effort" (local tools)
  const char* policy_help;      // the default policy's wording differs: a default for requests, or the policy
};

// Adds --timeout, --compile-timeout, --max-host-mem, --cache-dir, the sandbox flags,
// -j/--jobs and --policy, writing into `o` and `sandbox`.
void AddVerifierOptions(CLI::App* c, verify::VerifyOptions* o, SandboxFlags* sandbox, const VerifierFlagTexts& texts);

// --timing-ci into `ci` (0 to 0.5): adaptive timing stops once both medians' 95 % intervals
// are within this fraction; 0, the default, keeps the fixed rule. `whose` ends the help text
// (e.g. "the request option timing_ci overrides it").
void AddTimingCiOption(CLI::App* c, double* ci, const std::string& whose);

// The options kz serve and kz worker start from: jobs left to FinishVerifierOptions (0), and
// footprints on (a sample's footprint decides its GPU slot).
verify::VerifyOptions ServiceVerifyDefaults();

// After parsing: the default cache directory (made absolute) and jobs = cores / 2 when unset.
void FinishVerifierOptions(verify::VerifyOptions* o);

}  // namespace kz::cli
