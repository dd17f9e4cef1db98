// The supervisor's judges over one run child's facts (docs/decisions.md, "Judges in the
// supervisor"). The child measures and reports raw facts; the rules that turn them into a
// verdict run here:
// - the launch trace (docs/trace.md): the child sends its traced windows in a `judge` frame
//   and waits for the answer (it stops on a rejection, as before the move), Answer();
// - the timing statistics and the host-time cross-check (docs/verdict.md): from the raw
//   per-call times in the child's `timing` stage, Apply() after the child ended.
// Apply() also keeps the child from writing its own judgements: a `trace` stage it was not
// judged for, or a `timing` stage with statistics instead of times, is a worker error.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/trace_judge.h"

namespace kz::verify {

struct JudgeOptions {
  bool integrity = true;          // false: no host cross-check (timing.host_mismatch)
  TraceRuleOptions trace;         // policy and min_candidate_share
  size_t max_timed_calls = 2000;  // per side (the run request's max_calls)
};

class RunJudges {
 public:
  explicit RunJudges(JudgeOptions options) : options_(std::move(options)) {}

  // The reply to a `judge` frame (its token already checked): {"type": "judge", "stage":
  // "trace", "verdict": "pass" | "reject" | "invalid", "reason": null | "..."}. Only the
  // first trace judgement counts; a repeated request gets the same answer.
  nlohmann::json Answer(const nlohmann::json& frame);

  // After ApplyRunReply: stages.trace and stages.timing from the facts, and the outcome
  // they decide (a trace rejection, a host mismatch, malformed facts; the speedup in the
  // reason of a correct verdict).
  void Apply(nlohmann::json& verdict) const;

  bool trace_judged() const { return trace_stage_.has_value(); }

 private:
  void ApplyTrace(nlohmann::json& verdict) const;
  void ApplyTiming(nlohmann::json& verdict) const;
  JudgeOptions options_;
  std::optional<nlohmann::json> trace_stage_;
  std::optional<std::string> trace_reject_;  // the rejection reason (rule id first)
  std::string trace_invalid_;                // why the facts were refused, or ""
};

}  // namespace kz::verify
