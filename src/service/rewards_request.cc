#include "service/rewards_request.h"

namespace kz::service {
using nlohmann::json;

namespace {
bool ParseRewardOptions(const json& j, rewards::CaGrpoOptions* o, std::string* err) {
  if (!j.is_object()) return *err = "field 'reward' must be an object", false;
  for (const auto& [k, v] : j.items()) {
    if (k == "baseline") {
      if (v == "group") o->baseline = rewards::Baseline::kGroupNormalised;
      else if (v == "leave_one_out") o->baseline = rewards::Baseline::kLeaveOneOut;
      else return *err = "reward option 'baseline' must be \"group\" or \"leave_one_out\"", false;
      continue;
    }
    double* slot = k == "alpha" ? &o->alpha : k == "beta" ? &o->beta : k == "speedup_cap" ? &o->speedup_cap
                 : k == "eps" ? &o->eps : nullptr;
    if (!slot) return *err = "unknown reward option '" + k + "'", false;
    if (!v.is_number()) return *err = "reward option '" + k + "' must be a number", false;
    *slot = v.get<double>();
  }
  if (std::string why = rewards::Validate(*o); !why.empty()) return *err = "reward options: " + why, false;
  return true;
}

// The sample's own verify request: the group's task, backend and options around it.
bool ParseSample(const json& group, const json& s, size_t i, VerifyRequest* out, std::string* err) {
  if (!s.is_object() || !s.contains("candidate"))
    return *err = "samples[" + std::to_string(i) + "]: expected {\"candidate\": string}", false;
  json one = {{"task", group["task"]}, {"candidate", s["candidate"]}};
  if (s.contains("backend")) one["backend"] = s["backend"];
  else if (group.contains("backend")) one["backend"] = group["backend"];
  if (group.contains("options")) one["options"] = group["options"];
  if (!ParseVerifyJson(one, out, err)) return *err = "samples[" + std::to_string(i) + "]: " + *err, false;
  return true;
}
}  // namespace

bool ParseRewardsRequest(const std::string& body, size_t max_samples, RewardsRequest* out, std::string* err) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return *err = "body is not a JSON object", false;
  if (!j.contains("task") || !j["task"].is_string()) return *err = "missing string field 'task'", false;
  if (!j.contains("samples") || !j["samples"].is_array() || j["samples"].empty())
    return *err = "field 'samples' must be a non-empty array", false;
  if (j["samples"].size() > max_samples)
    return *err = "group of " + std::to_string(j["samples"].size()) + " samples is over the limit of " +
                  std::to_string(max_samples) + " (--max-batch)", false;
  if (!ParseScheduling(j, &out->priority, &out->client, err)) return false;
  if (j.contains("reward") && !ParseRewardOptions(j["reward"], &out->reward, err)) return false;
  for (size_t i = 0; i < j["samples"].size(); ++i) {
    VerifyRequest r;
    if (!ParseSample(j, j["samples"][i], i, &r, err)) return false;
    r.priority = out->priority;
    r.client = out->client;
    out->samples.push_back(std::move(r));
  }
  return true;
}

rewards::SampleOutcome OutcomeOf(const json& verdict) {
  rewards::SampleOutcome o;
  if (!verdict.is_object()) return o;
  o.correct = verdict.value("status", "") == "correct";
  const json& stages = verdict.value("stages", json::object());
  if (stages.contains("timing") && stages["timing"].is_object() && stages["timing"].contains("speedup") &&
      stages["timing"]["speedup"].is_number())
    o.speedup = stages["timing"]["speedup"].get<double>();
  return o;
}

json RewardsReply(const std::vector<std::string>& ids, const std::vector<json>& verdicts,
                  const rewards::CaGrpoOptions& options) {
  std::vector<rewards::SampleOutcome> outcomes;
  for (const auto& v : verdicts) outcomes.push_back(OutcomeOf(v));
  auto g = rewards::ScoreGroup(outcomes, options);
  json samples = json::array();
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const json& v = verdicts[i];
    samples.push_back({{"index", i}, {"id", ids[i]},
                       {"status", v.is_object() ? v.value("status", "") : "failed"},
                       {"speedup", outcomes[i].speedup ? json(*outcomes[i].speedup) : json(nullptr)},
                       {"speed_term", g.speed_terms[i]}, {"reward", g.rewards[i]},
                       {"advantage", g.advantages[i]}, {"verdict", v}});
  }
  return {{"gate", g.gate}, {"accuracy", g.accuracy}, {"zero_variance", g.zero_variance},
          {"reward", {{"scheme", "ca_grpo"}, {"alpha", options.alpha}, {"beta", options.beta},
                      {"speedup_cap", options.speedup_cap}, {"eps", options.eps},
                      {"baseline", options.baseline == rewards::Baseline::kLeaveOneOut ? "leave_one_out" : "group"}}},
          {"samples", samples}};
}

}  // namespace kz::service
