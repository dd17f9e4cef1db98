#include "train/eval_outcomes.h"

#include <sstream>
#include <vector>

#include "train/paired_bootstrap.h"

namespace kz::train {
using nlohmann::json;

std::vector<json> MetricsUnits(const std::string& text) {
  std::vector<json> units;
  std::map<std::string, size_t> at;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("unit") || !j["unit"].is_string()) continue;
    std::string id = j["unit"];
    if (auto it = at.find(id); it != at.end())
      units[it->second] = j;
    else
      at[id] = units.size(), units.push_back(j);
  }
  return units;
}

TaskOutcomes EvalOutcomes(const json& eval, const std::string& key) {
  TaskOutcomes out;
  const char* k = eval.contains(key) ? key.c_str() : "outcomes";
  if (!eval.contains(k) || !eval[k].is_array()) return out;
  for (const auto& r : eval[k])
    if (r.is_array() && r.size() == 3 && r[0].is_string() && r[1].is_boolean() && r[2].is_boolean())
      out[r[0].get<std::string>()] = {r[1].get<bool>() ? 1.0 : 0.0, r[2].get<bool>() ? 1.0 : 0.0};
  return out;
}

json ComparePaired(const TaskOutcomes& a, const TaskOutcomes& b, int resamples, double level, uint64_t seed) {
  std::vector<double> pa, pb, fa, fb;
  for (const auto& [task, v] : a)
    if (auto it = b.find(task); it != b.end()) {
      pa.push_back(v.first), fa.push_back(v.second);
      pb.push_back(it->second.first), fb.push_back(it->second.second);
    }
  auto side = [&](const std::vector<double>& before, const std::vector<double>& after) {
    PairedInterval i = PairedBootstrap(before, after, resamples, level, seed);
    double n = before.empty() ? 1 : double(before.size()), sa = 0, sb = 0;
    for (size_t k = 0; k < before.size(); ++k) sa += before[k], sb += after[k];
    return json{{"a", sa / n}, {"b", sb / n}, {"delta", i.delta},
                {"lo", i.lo},  {"hi", i.hi},  {"excludes_zero", i.excludes_zero()}};
  };
  return {{"paired_tasks", pa.size()}, {"pass_at_1", side(pa, pb)}, {"fast_1_at_1", side(fa, fb)}};
}

}  // namespace kz::train
