// Nsight Compute's output, read (docs/optimize.md, "ncu counters"): the command line kz runs
// (`ncu --csv --page raw --print-units base --metrics ...`), its raw-page CSV parsed into
// per-kernel counters, its failures classified into one reason line, and the counters
// rendered as a line for the model. Pure functions: tested on hand-written outputs.
// The text comes from a child that also ran candidate code, so it is untrusted: anything
// unparseable is dropped, never trusted; the counters are advice for a prompt, never a verdict.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::verify {

// The metrics kz asks for: duration, DRAM and SM throughput (% of peak), achieved and
// theoretical occupancy, L1 and L2 hit rates, registers per thread, the occupancy limits.
const std::vector<std::string>& NcuMetrics();

// One kernel's counters: the launch with the longest duration among the profiled launches
// of that function name (`launches` counts them). A metric ncu did not report, or reported
// as "n/a" or non-numeric, is absent from `metrics`.
struct KernelCounters {
  std::string name;
  int launches = 0;
  std::map<std::string, double> metrics;
};

enum class NcuOutcome {
  kCounters,      // at least one kernel with counters
  kNoPermission,  // ERR_NVGPUCTRPERM
  kNoKernels,     // ncu ran but profiled nothing (the filter matched no launch)
  kFailed,        // anything else: `reason` says what
};

struct NcuParse {
  NcuOutcome outcome = NcuOutcome::kFailed;
  std::vector<KernelCounters> kernels;  // in first-launch order
  std::string reason;                   // "ncu: ..." when not kCounters
};

// Parses ncu's output (its log file: `==PROF==`/`==ERROR==`/`==WARNING==` lines and the raw
// page's CSV: a header row starting "ID", a units row, one row per profiled launch). Kernels
// are grouped by "Kernel Name". `stderr_text` (the child's stderr) is used for the reason when
// the log says nothing.
NcuParse ParseNcuOutput(const std::string& log_text, const std::string& stderr_text = "");

// The reason line for ncu output without counters: "ncu: no permission for GPU performance
// counters (ERR_NVGPUCTRPERM)", "ncu: no kernels profiled", or "ncu: failed (<the first
// ==ERROR== line, else the first non-empty line of `text`>)" (at most 200 characters).
std::string NcuFailureReason(const std::string& text);

// ncu's argv before the profiled command: one process tree, only the kernels whose function
// name is one of `kernel_names` (none: every kernel), at most `launch_count` launches, the
// output to `log_path`.
std::vector<std::string> NcuArgs(const std::string& ncu, const std::vector<std::string>& kernel_names, int launch_count,
                                 const std::string& log_path);

// "void ns::k<4>(float*, int)" -> "k": the unqualified function name (ncu's
// --kernel-name-base function matches it).
std::string KernelShortName(const std::string& name);

// "kernel k: 1.52 ms, DRAM 72% of peak, SM 18%, occupancy 41% of 50% theoretical (limited by
// registers: 40/thread), L1 hit 30%, L2 hit 80%" — the parts whose metrics are present.
std::string CountersLine(const KernelCounters& k);
// The occupancy limiter ("registers", "shared memory", "warps", "blocks"), or "" when the
// four limits are not all present.
std::string OccupancyLimiter(const KernelCounters& k);

nlohmann::json CountersToJson(const KernelCounters& k);    // {"name", "launches", "metrics"}
KernelCounters CountersFromJson(const nlohmann::json& j);  // tolerant: wrong types are dropped

// The lines for a prompt from a stored profile ({"available", "reason", "kernels"}, see
// verify/profiler.h): one CountersLine per kernel, else its reason ("ncu: not installed" ...).
std::string ProfileFeedback(const nlohmann::json& profile);

}  // namespace kz::verify
