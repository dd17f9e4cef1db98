#include "curriculum/coder_tally.h"

namespace kz::curriculum {

std::map<std::string, CoderTally> TallyCoder(const std::vector<nlohmann::json>& verdicts,
                                             const std::vector<nlohmann::json>& bad) {
  std::map<std::pair<std::string, int>, std::string> last;  // (task, sample) -> status
  for (const auto& v : verdicts) {
    if (!v.is_object() || !v.contains("task") || !v["task"].is_string() || !v.contains("sample") ||
        !v["sample"].is_number_integer())
      continue;
    last[{v["task"], v["sample"].get<int>()}] = v.value("status", "unknown");
  }
  for (const auto& b : bad) {
    if (!b.is_object() || !b.value("scored_as_incorrect", false) || !b["task"].is_string() ||
        !b["sample"].is_number_integer())
      continue;
    last.emplace(std::make_pair(b["task"].get<std::string>(), b["sample"].get<int>()), b.value("kind", "bad_input"));
  }
  std::map<std::string, CoderTally> out;
  for (const auto& [key, status] : last) {
    if (status == "server_error") continue;
    CoderTally& t = out[key.first];
    ++t.attempts;
    t.successes += status == "correct";
    ++t.statuses[status];
  }
  return out;
}

std::string TallyReason(const CoderTally& t) {
  std::string s = std::to_string(t.successes) + " of " + std::to_string(t.attempts) + " correct (";
  bool first = true;
  for (const auto& [status, n] : t.statuses) s += (first ? "" : ", ") + status + "=" + std::to_string(n), first = false;
  return s + ")";
}

std::optional<double> ProposalReward(bool valid, const CoderTally* tally, int samples, const rewards::RewardOptions& options,
                                     std::string* why) {
  double r = 0;
  if (!valid) {
    rewards::FrontierReward({false, 0, 0}, options, &r, why);
    return r;
  }
  int attempts = tally ? tally->attempts : 0;
  if (attempts < samples || attempts == 0)
    return *why = std::to_string(attempts) + " of " + std::to_string(samples) + " Coder samples verified", std::nullopt;
  if (!rewards::FrontierReward({true, tally->attempts, tally->successes}, options, &r, why)) return std::nullopt;
  return r;
}

}  // namespace kz::curriculum
