// `kz train compare RUN_A RUN_B` (docs/training.md, "Comparing two runs"): two runs evaluated on
// the same held-out tasks — e.g. single-turn and multi-turn from one checkpoint with one Coder
// budget — compared task by task. For an evaluation unit both runs finished (default: the
// last one they share), B − A with a paired bootstrap interval over the tasks both evaluated,
// for pass@1 and fast_1@1 of the first turn ("outcomes") and of the best turn
// ("outcomes_best_turn", the first turn's where a run did not refine); and each run's Coder
// phase: steps run and skipped, seconds, samples, groups recovered by retry, MirrorPop's mean
// filtered share. Writes compare.md (also printed) and compare.json (kz.train_compare/1).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::train {

struct TrainCompareOptions {
  std::string run_a, run_b;
  std::string unit;     // "" : the last evaluation unit both runs finished
  std::string out_dir;  // default: <run_b>/compare
  int resamples = 10000;
  double level = 0.95;
  uint64_t seed = 1;
};

// false with *err when a run has no metrics.jsonl, they share no evaluation unit (or not
// `unit`), or a file cannot be written.
bool WriteTrainCompare(const TrainCompareOptions& o, nlohmann::json* summary, std::string* err);

}  // namespace kz::train
