// The supervisor's judges over one run child's facts (docs/decisions.md, "Judges in the
// supervisor"). The child measures and reports raw facts; the rules that turn them into a
// verdict run here:
// - the launch trace (docs/trace.md): the child sends its traced windows in a `judge` frame
//   and waits for the answer (it stops on a rejection, as before the move), Answer();
// - the timing statistics and the host-time cross-check (docs/verdict.md): from the raw
//   per-call times in the child's `timing` stage, Apply() after the child ended.
// Apply() also keeps the child from writing its own judgements: a `trace` stage it was not
// judged for, or a `timing` stage with statistics instead of times, is a worker error; so is
// a trace never judged (no stage, or "skipped") when JudgeOptions::trace_required.
// Which statuses are overruled: the trace judgement answered to the child (reject, or
// invalid facts: runtime_error, kind worker_internal) replaces any status the child reported,
// as the child was told and should have stopped there; the worker errors found after the
// child ended (a stage it must not have written, malformed timing facts, a required trace
// never judged) replace only `correct`: a sample that failed on its own keeps its failure.
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
  bool trace_required = false;    // a correct sample needs a trace judgement (TraceRequired)
};

// Whether a run must have its trace judged (docs/trace.md, "When the trace is required"): on
// a GPU, with integrity checks on, a native runtime to trace with (`runtime_lib` not empty),
// and the trace not switched off (KZ_TRACE=0 in this process's environment).
bool TraceRequired(bool on_gpu, bool integrity, const std::string& runtime_lib);

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
