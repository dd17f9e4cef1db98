// Multi-turn refinement's rollout (docs/training.md, "Multi-turn refinement"): turn 1 is the
// ordinary rollout (n samples per task); each later turn answers every trajectory still open
// with the verifier's feedback (refine_prompt.h) and samples one reply per trajectory, up to
// `turns` turns. A trajectory closes when a turn is correct (stop_on_correct) — else it goes
// on, asked to be faster. Resumable like the rollout: turn 1 lives in unit_dir, turn t in
// unit_dir/turn<t>/ (generation.json, candidates/, verdicts.jsonl).
#pragma once
#include <string>
#include <vector>

#include "generate/refine_prompt.h"
#include "train/rollout.h"

namespace kz::train {

struct RefineRolloutOptions {
  RolloutOptions base;  // turn 1's (n, temperature, tokens, seed, backend, template)
  int turns = 1;        // 1: the single-turn rollout
  bool stop_on_correct = true;
  generate::RefineOptions prompt;
};

struct Trajectory {
  size_t task = 0;
  int sample = 0;
  std::vector<RolloutSample> turns;  // at least one
  // Closed early on a correct turn: its answer stands for the turns it did not take.
  bool absorbed(int horizon) const { return int(turns.size()) < horizon && turns.back().correct; }
};

struct RefineStats {
  std::vector<int> open_per_turn;  // trajectories sampled at each turn
  int omitted_replies = 0;         // the context rule's markers, all later-turn prompts
  int feedback_cut = 0;            // feedbacks cut to feedback_chars
};

// false with *err (and *terr for a backend failure) when it cannot finish; what was done stays
// on disk. `out` is in (task, sample) order.
bool RefineRollout(TrainerBackend& backend, const VerifyFn& verify, const std::vector<RolloutTask>& tasks,
                   const RefineRolloutOptions& o, const std::string& unit_dir, std::vector<Trajectory>* out,
                   RefineStats* stats, std::string* err, TrainerError* terr);

}  // namespace kz::train
