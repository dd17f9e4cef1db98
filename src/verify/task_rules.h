// The rules of `kz task check` (docs/worker-protocol.md, op `task_check`; docs/decisions.md,
// "Judges in the supervisor"): the child reports facts (task_facts.h), these functions build
// the public `task_check` object (version 1) from them: the checks in order (load, footprint,
// fits, reference_runs, inputs_reproducible, deterministic, input_sensitive, finite, weak_task,
// fits_measured, footprint_matches), each {check, status, detail}; the first `fail` makes the
// status `invalid_task` and is the reason; `warn` and `skip` only add flags. Pure functions.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/task_facts.h"

namespace kz::verify {

inline constexpr const char* kUpFrontRule = "3 x (inputs + outputs) + 2 x params";
inline constexpr const char* kMeasuredRule = "reference peak + 2 x (inputs + outputs) + params";

// Python's format(x, ".<digits>g") of a float: C's %g, but every NaN prints "nan".
std::string FormatG(double x, int digits);
// Python's human_bytes: 1536 -> "1.5 KiB", 10 -> "10 B" (truncated), "?" for anything not a
// number; units up to PiB.
std::string HumanBytes(const nlohmann::json& n);

// The task_check object, less `task` (the caller's: path and hash), from parsed facts.
// `finished` false (facts of a `footprint` event): only the checks up to `fits`.
nlohmann::json JudgeTask(const TaskFacts& facts, bool finished);

// The task_check object from a result frame's `task_facts`; nullopt with *error when the
// facts are malformed.
std::optional<nlohmann::json> TaskCheckFromFacts(const nlohmann::json& facts, std::string* error);

// The object for a child that ended without a result (timeout, memory limit, crash): the
// checks its `footprint` event allows (none without one, or when it is malformed), then a
// failing `reference_runs` with `reason`; status `status`, error kind timeout or crash.
nlohmann::json TaskCheckWithoutResult(const std::vector<nlohmann::json>& events, const std::string& status,
                                      const std::string& reason);

}  // namespace kz::verify
