#include "optimize/short_memory.h"

#include <algorithm>
#include <unordered_set>

#include "optimize/dedup.h"
#include "util/hash.h"

namespace kz::optimize {

Change ChangeOf(const std::string& parent_source, const std::string& child_source) {
  auto parent = SourceTokens(parent_source);
  std::unordered_set<std::string> before(parent.begin(), parent.end());
  std::set<std::string> added;
  for (const auto& t : SourceTokens(child_source))
    if (!before.count(t)) added.insert(t);
  Change c;
  if (added.empty()) return c;
  std::string joined;
  for (const auto& t : added) joined += t + '\n';
  c.signature = util::Hash128Hex(joined);
  size_t shown = 0;
  for (const auto& t : added) {
    if (shown++ == 12) {
      c.summary += " ...";
      break;
    }
    c.summary += (c.summary.empty() ? "" : " ") + t.substr(0, 40);
  }
  return c;
}

void ShortTermMemory::RecordFailure(const std::string& lineage, const Change& change, const std::string& outcome) {
  if (!change.signature.empty()) signatures_[lineage].insert(change.signature);
  notes_[lineage].push_back((change.summary.empty() ? "(no new tokens)" : "added {" + change.summary + "}") + " -> " +
                            outcome);
}

bool ShortTermMemory::Failed(const std::string& lineage, const Change& change) const {
  auto it = signatures_.find(lineage);
  return !change.signature.empty() && it != signatures_.end() && it->second.count(change.signature);
}

std::vector<std::string> ShortTermMemory::Failures(const std::string& lineage, size_t max) const {
  auto it = notes_.find(lineage);
  if (it == notes_.end()) return {};
  const auto& v = it->second;
  return {v.end() - std::ptrdiff_t(std::min(max, v.size())), v.end()};
}

}  // namespace kz::optimize
