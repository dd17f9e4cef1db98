// A stored verification job turned into the verifier's input — the one way kz serve's
// scheduler and kz worker (the Redis queue) do it: the job's options object validated and
// applied over the server's or worker's base options, the backend checked, and the sources
// written as <dir>/task.py and <dir>/candidate.py. Expected failures (bad options, a bad
// backend, a full disk) come back as false with a reason, never as exceptions.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/sample.h"

namespace kz::verify {

// Applies a job's "options" object over *o: trials (1..1000), seed (>= 0), timing (bool),
// atol / rtol / rel_l2 (>= 0), policy (strict | kernelbench), timing_ci (0..0.5),
// min_candidate_share (0..1), self_check (bool: read by PrepareJob). false with the reason for the client on an unknown
// or mistyped option (docs/api.md, "Options").
bool ApplyJobOptions(const nlohmann::json& options, VerifyOptions* o, std::string* err);

struct JobSources {
  std::string id;               // names the sample in logs and the verdict
  std::string task, candidate;  // Python sources
  std::string backend;          // "cuda", "triton" or "" (detected)
  std::string options_json = "{}";
};

struct JobInput {
  VerifyOptions options;
  std::vector<Sample> samples;  // one
};

// `dir` is created; false with *err when the backend or options are refused, the options are
// not JSON, or the files cannot be written. Option self_check = true verifies the task against
// itself (Sample::self_check); its candidate must then be the task's source.
bool PrepareJob(const JobSources& job, const VerifyOptions& base, const std::string& dir, JobInput* out,
                std::string* err);

}  // namespace kz::verify
