// Assembling the verdict object of docs/verdict.md from what each stage reported.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "verify/sample.h"
#include "verify/status.h"
#include "worker/worker_client.h"

namespace kz::verify {

inline constexpr const char* kVerdictSchema = "kz.verdict/1";

// A verdict with the inputs' identity and every "checked" flag false.
nlohmann::json NewVerdict(const Sample& sample, const std::string& backend,
                          const std::string& task_text, const std::string& candidate_text);

// Sets status, reason and (optionally) error {kind, message}.
void SetOutcome(nlohmann::json& verdict, Status status, const std::string& reason,
                const std::string& error_kind = "", const std::string& error_message = "");

// Folds a run child's reply into the verdict: its result if it sent one, otherwise a
// timeout / crash / memory verdict built from the events it sent before it died.
void ApplyRunReply(nlohmann::json& verdict, const worker::WorkerReply& reply);

// Recomputes "checked" (compiled, ran, correctness, trace, timing) and "not_checked"
// from the stages present.
void FinishChecks(nlohmann::json& verdict, bool on_gpu);

Status VerdictStatus(const nlohmann::json& verdict);

}  // namespace kz::verify
