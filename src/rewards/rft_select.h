// Diversity-preserving rejection fine-tuning (issue 22, docs/rewards.md "Multi-turn"): from
// verified-correct samples, the SFT set: exact duplicates (same normalised source) dropped, at
// most `per_task` samples per task, chosen so that distinct kernel structures come first —
// round robin over a task's structures (in the order each structure was first seen), taking
// within a structure the samples in their given order (e.g. the fastest first). Pure.
#pragma once
#include <string>
#include <vector>

namespace kz::rewards {

struct RftCandidate {
  std::string task;
  std::string source_hash;  // normalised source (comments and whitespace do not count)
  std::string structure;    // e.g. "triton k2 l1": kernels defined, launches, fused ops
};

struct RftSelection {
  std::vector<size_t> chosen;  // indices into the candidates, in task order then pick order
  size_t duplicates = 0;       // dropped as an exact duplicate of an earlier one
  size_t over_cap = 0;         // correct and distinct, but past the task's cap
};

RftSelection SelectForRft(const std::vector<RftCandidate>& candidates, size_t per_task);

}  // namespace kz::rewards
