// Parsing `POST /v1/rewards` bodies and turning a group's verdicts into the reply
// (docs/api.md, "Rewards"). Pure functions: callable from any thread.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewards/ca_grpo.h"
#include "service/request.h"

namespace kz::service {

// {"task": SRC, "samples": [{"candidate": SRC, "backend"?}, ...], "backend"?, "options"?,
//  "reward"?: {"alpha", "beta", "speedup_cap", "eps", "baseline": "group"|"leave_one_out"},
//  "priority"?, "client"?}: one group of samples of one task.
struct RewardsRequest {
  std::vector<VerifyRequest> samples;  // each with the group's task, backend and options
  rewards::CaGrpoOptions reward;
  std::optional<int64_t> priority;
  std::optional<std::string> client;
};

// False with a reason for the client in *err: malformed JSON, a missing task, an empty or
// non-array "samples", a sample that is not {"candidate": string}, bad verify options, an
// unknown or out-of-range reward option.
bool ParseRewardsRequest(const std::string& body, size_t max_samples, RewardsRequest* out, std::string* err);

// One sample's outcome as the reward sees it: status, correct, speedup; a null verdict
// (the job failed inside the verifier) is neither correct nor timed.
rewards::SampleOutcome OutcomeOf(const nlohmann::json& verdict);

// The reply: gate, accuracy, zero_variance, the reward options, and per sample its job
// id, status, speedup, speed_term, reward, advantage and verdict.
nlohmann::json RewardsReply(const std::vector<std::string>& ids, const std::vector<nlohmann::json>& verdicts,
                            const rewards::CaGrpoOptions& options);

}  // namespace kz::service
