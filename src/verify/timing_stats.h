// The timing stage's statistics (docs/verdict.md, stages.timing; docs/trace.md, host-time
// cross-check), computed by the supervisor from the raw per-call times the run child
// measured. Pure functions; the child's facts are untrusted input: BuildTimingStage checks
// their types and bounds and says what is wrong instead of judging malformed facts.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::verify {

inline constexpr const char* kTimingMethod = "cuda-events, device sync around each call, L2 flush";
inline constexpr double kHostGapRel = 0.5;        // allowed excess gap, relative to the candidate's median
inline constexpr double kHostGapFloorMs = 0.020;  // ... but never less than 20 µs (sync/launch jitter)
inline constexpr double kMaxCallMs = 1e7;         // a timed call's bound (2.8 h): sums and ratios stay finite

// `v` rounded to `digits` decimals as Python's round(v, digits) does (the exact binary value,
// ties to even), so the verdict's numbers are the ones the Python worker used to write.
double RoundDecimals(double v, int digits);

// q-quantile of an ascending non-empty list, linear interpolation between the two nearest
// ranks (numpy's default). Precondition: !sorted.empty().
double Quantile(const std::vector<double>& sorted, double q);

// Distribution-free ~95 % interval of the median of an ascending non-empty list: the order
// statistics of ranks n/2 -/+ z*sqrt(n)/2 (the binomial's normal approximation), clamped.
std::pair<double, double> MedianCi(const std::vector<double>& sorted, double z = 1.959964);

// Per-call times in ms -> {median_us, median_ci95_us, q1_us, q3_us, mean_us, min_us, calls}
// in µs rounded to 1 ns. Precondition: !ms.empty().
nlohmann::json SummarizeTimes(const std::vector<double>& ms);

// The host-time cross-check: per side gap = median(host - event); it fails when the
// candidate's gap exceeds the reference's by more than max(kHostGapRel x candidate event
// median, kHostGapFloorMs). {reference_gap_us, candidate_gap_us, excess_us, limit_us, pass}.
// Preconditions: all four non-empty, host lists as long as their event lists.
nlohmann::json HostCheck(const std::vector<double>& ref_ms, const std::vector<double>& cand_ms,
                         const std::vector<double>& ref_host_ms, const std::vector<double>& cand_host_ms);

// The verdict's stages.timing object from the child's raw timing facts (status "measured":
// reference_ms, candidate_ms, reference_host_ms, candidate_host_ms, stable, stop_rule,
// flush_bytes, method; passed through: rechecked_rounds, recheck, pool; `method` is written
// as kTimingMethod, not copied). nullopt with *error set when the facts are malformed (wrong
// types, times outside [0, kMaxCallMs] or not numbers, unequal or empty lists, more than
// `max_calls` calls a side).
std::optional<nlohmann::json> BuildTimingStage(const nlohmann::json& facts, size_t max_calls, std::string* error);

// "timing.host_mismatch: ..." when a timing stage's host_check failed, else nullopt.
std::optional<std::string> HostMismatchReason(const nlohmann::json& stage);

}  // namespace kz::verify
