// The part of `kz train report` about multi-turn refinement and MusaCoder's stabilisers
// (issue 22, docs/training.md "Multi-turn refinement"): present only when a Coder step or
// evaluation carries their metrics. Pure: metrics lines in, Markdown and SVG out.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::train {

// True when any line has "multi_turn", "retry" or "mirror_pop" (Coder steps) or
// "pass_at_1_best_turn" (evaluations).
bool HasStabilisers(const std::vector<nlohmann::json>& coder, const std::vector<nlohmann::json>& evals);

// A table per Coder step (first-turn and any-turn accuracy, repaired trajectories, feedback
// cut, retried/recovered groups and the buffer, MirrorPop's filtered share) and, for refining
// evaluations, first- and best-turn pass@1; a reference to stabilisers.svg.
std::string StabilisersMarkdown(const std::vector<nlohmann::json>& coder, const std::vector<nlohmann::json>& evals);

// Per Coder step: first-turn and any-turn accuracy, MirrorPop's filtered share, the retry
// buffer's cumulative yield.
std::string StabilisersSvg(const std::vector<nlohmann::json>& coder);

}  // namespace kz::train
