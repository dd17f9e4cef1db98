#include "rewards/rft_select.h"

#include <algorithm>
#include <map>
#include <set>

namespace kz::rewards {

RftSelection SelectForRft(const std::vector<RftCandidate>& c, size_t per_task) {
  RftSelection out;
  std::set<std::string> seen;
  std::vector<std::string> task_order;
  // task -> structures in first-seen order -> candidate indices
  std::map<std::string, std::vector<std::pair<std::string, std::vector<size_t>>>> by_task;
  for (size_t i = 0; i < c.size(); ++i) {
    if (!seen.insert(c[i].source_hash).second) {
      ++out.duplicates;
      continue;
    }
    auto [it, fresh] = by_task.try_emplace(c[i].task);
    if (fresh) task_order.push_back(c[i].task);
    auto& structs = it->second;
    auto s = std::find_if(structs.begin(), structs.end(), [&](const auto& x) { return x.first == c[i].structure; });
    if (s == structs.end()) structs.push_back({c[i].structure, {i}});
    else s->second.push_back(i);
  }
  for (const auto& task : task_order) {
    auto& structs = by_task[task];
    size_t total = 0, taken = 0;
    for (const auto& s : structs) total += s.second.size();
    for (size_t round = 0; taken < std::min(per_task, total); ++round)
      for (const auto& s : structs)
        if (round < s.second.size() && taken < per_task) {
          out.chosen.push_back(s.second[round]);
          ++taken;
        }
    out.over_cap += total - taken;
  }
  return out;
}

}  // namespace kz::rewards
