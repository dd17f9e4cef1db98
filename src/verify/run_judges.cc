#include "verify/run_judges.h"

#include <cstdio>
#include <cstdlib>

#include "verify/timing_stats.h"
#include "verify/trace_facts.h"
#include "verify/verdict.h"

namespace kz::verify {
using nlohmann::json;

namespace {
json* Stage(json& verdict, const char* name) {
  json& stages = verdict["stages"];
  if (!stages.is_object() || !stages.contains(name)) return nullptr;
  return &stages[name];
}

std::string StatusOf(const json* stage) {
  if (!stage || !stage->is_object()) return "";
  auto it = stage->find("status");
  return it != stage->end() && it->is_string() ? it->get<std::string>() : "";
}

// The run's outcome decided here: `kind` "" keeps no error object.
void Decide(json& verdict, Status status, const std::string& reason, const std::string& kind) {
  SetOutcome(verdict, status, reason, kind);
  verdict["error"]["traceback"] = nullptr;  // the worker's Failure.error() shape
}

// A stage the child must not have written (a judgement of its own, or malformed facts), or
// one it must have had judged: stage `name` becomes an error. Found after the child ended, so
// only a `correct` verdict is overruled (a sample that failed on its own keeps its failure).
void Refuse(json& verdict, const char* name, const std::string& why) {
  verdict["stages"][name] = {{"status", "error"}, {"reason", why}};
  if (verdict.value("status", "") == "correct")
    Decide(verdict, Status::kRuntimeError, "worker error: " + why, "worker_internal");
}
}  // namespace

bool TraceRequired(bool on_gpu, bool integrity, bool self_check, const std::string& runtime_lib) {
  const char* off = std::getenv("KZ_TRACE");
  return on_gpu && integrity && !self_check && !runtime_lib.empty() && !(off && std::string(off) == "0");
}

json RunJudges::Answer(const json& frame) {
  json reply = {{"type", "judge"}, {"stage", "trace"}};
  if (!frame.is_object() || frame.value("stage", json()) != "trace") {
    reply["verdict"] = "invalid";
    reply["reason"] = "the supervisor judges only stage trace";
    return reply;
  }
  if (!trace_stage_) {
    std::string error;
    auto facts = frame.contains("facts") ? ParseTraceFacts(frame["facts"], &error) : std::nullopt;
    if (!facts) {
      trace_invalid_ = "malformed trace facts: " + (error.empty() ? std::string("no facts") : error);
      trace_stage_ = json{{"status", "error"}, {"reason", trace_invalid_}};
    } else {
      trace_stage_ = AnalyzeTrace(*facts, options_.trace);
      (*trace_stage_)["library"] = facts->library;
      trace_reject_ = TraceFailureReason(*trace_stage_);
    }
  }
  reply["verdict"] = !trace_invalid_.empty() ? "invalid" : trace_reject_ ? "reject" : "pass";
  reply["reason"] = !trace_invalid_.empty() ? json(trace_invalid_)
                    : trace_reject_         ? json(*trace_reject_)
                                            : json(nullptr);
  return reply;
}

void RunJudges::ApplyTrace(json& verdict) const {
  json* stage = Stage(verdict, "trace");
  if (trace_stage_) {
    // Answered while the child waited: it was told and should have stopped there, so what it
    // reported afterwards is overruled, whatever the status.
    verdict["stages"]["trace"] = *trace_stage_;
    if (!trace_invalid_.empty())
      Decide(verdict, Status::kRuntimeError, "worker error: " + trace_invalid_, "worker_internal");
    else if (trace_reject_)
      Decide(verdict, Status::kRejected, *trace_reject_, "trace");
    return;
  }
  std::string status = StatusOf(stage);
  if (stage && status != "skipped") {
    Refuse(verdict, "trace", "the worker reported a trace stage it did not ask the supervisor to judge");
  } else if (options_.trace_required && verdict.value("status", "") == "correct") {
    // Only a correct sample needs the judgement: one that failed before the trace keeps its
    // failure and its stages as they were (session 17: every failed example read "error").
    json reason = stage ? stage->value("reason", json()) : json();  // a skipped stage is an object
    std::string why = reason.is_string() ? Utf8Prefix(reason.get<std::string>(), 200) : std::string("no trace stage");
    Refuse(verdict, "trace", "the trace was required but never judged (" + why + ")");
  }
}

void RunJudges::ApplyTiming(json& verdict) const {
  json* stage = Stage(verdict, "timing");
  std::string status = StatusOf(stage);
  if (!stage || status == "skipped") return;
  if (status != "measured") {
    Refuse(verdict, "timing", "timing stage with status " + QuoteFact(json(status)) + ": the worker reports raw times");
    return;
  }
  std::string error;
  auto built = BuildTimingStage(*stage, options_.max_timed_calls, &error);
  if (!built) {
    Refuse(verdict, "timing", "malformed timing facts: " + error);
    return;
  }
  *stage = std::move(*built);
  if (verdict.value("status", "") != "correct") return;
  if (auto mismatch = options_.integrity ? HostMismatchReason(*stage) : std::nullopt) {
    Decide(verdict, Status::kRejected, *mismatch, "timing");
  } else if ((*stage)["speedup"].is_number()) {
    char b[64];
    std::snprintf(b, sizeof b, "; speedup %.2fx", (*stage)["speedup"].get<double>());
    verdict["reason"] = verdict.value("reason", "") + b;
  }
}

void RunJudges::Apply(json& verdict) const {
  ApplyTrace(verdict);
  ApplyTiming(verdict);
}

}  // namespace kz::verify
