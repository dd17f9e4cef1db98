// The launch-trace rules (docs/trace.md), run by the supervisor over the facts a run child
// traced: trace.no_candidate_kernel, trace.side_stream (joins from the dependency records,
// and late work), trace.foreign_compute (policy strict). Pure functions of the facts.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/trace_facts.h"

namespace kz::verify {

inline constexpr uint64_t kLateSlackNs = 2000;  // cross-engine timestamp slack; unjoined work overlaps far more
inline constexpr size_t kMaxKernelGroups = 24;  // kernel groups listed per call
inline constexpr const char* kJoinsChecked = "dependency records";

struct TraceRuleOptions {
  std::string policy = "strict";     // strict | kernelbench
  double min_candidate_share = 0.5;  // strict: the candidate's share of compute kernel time
};

// "dependency records" when the window's joins can be judged from dependency records, else
// "timing only: <why>" (not collected, or records were dropped).
std::string JoinCheck(const TraceWindow& window);

// One call's summary: time by class, share, late work, unjoined streams (null when not
// judged from dependency records), grouped kernels (docs/trace.md, `calls`).
nlohmann::json SummarizeCall(const TraceWindow& window, const std::set<std::string>& names);

// The verdict's stages.trace object for the traced calls (without "library"); status
// "reject" when a rule fires (findings ordered by rule, then call).
nlohmann::json AnalyzeTrace(const TraceFacts& facts, const TraceRuleOptions& options);

// "<rule>: <message>" of the first finding (plus the other rules' ids), or nullopt.
std::optional<std::string> TraceFailureReason(const nlohmann::json& stage);

}  // namespace kz::verify
