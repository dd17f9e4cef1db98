// The Coder's attempts on proposed modules (docs/curriculum.md, "Frontier Reward end to
// end"): `kz bench`'s verdict records and scored bad inputs of a run of n Coder samples per
// module, counted per task into attempts and successes, then the Frontier Reward. Pure.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewards/frontier.h"

namespace kz::curriculum {

struct CoderTally {
  int attempts = 0, successes = 0;
  std::map<std::string, int> statuses;  // verdict status (or bad-input kind) -> samples
};

// verdicts: kz bench's verdicts.jsonl records ({"task", "sample", "status"}); a later record
// of the same (task, sample) wins; `server_error` is not final and counts nothing. bad:
// report.json's `bad_inputs`; the ones `scored_as_incorrect` are attempts without success.
std::map<std::string, CoderTally> TallyCoder(const std::vector<nlohmann::json>& verdicts,
                                             const std::vector<nlohmann::json>& bad);

// "2 of 4 correct (correct=2, incorrect=1, empty_code=1)".
std::string TallyReason(const CoderTally& t);

// The reward of one proposal: the penalty when invalid; r(p̂) when the Coder made at least
// `samples` attempts on it; nullopt (with *why) while it has fewer.
std::optional<double> ProposalReward(bool valid, const CoderTally* tally, int samples, const rewards::RewardOptions& options,
                                     std::string* why);

}  // namespace kz::curriculum
