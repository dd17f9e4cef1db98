// The report of a sequential run, `kz bench --generate RUN --turns T` (docs/bench.md,
// "Sequential refinement"): each (task, sample) is a chain of turns; turn 1's verdicts are in
// OUT/verdicts.jsonl, turn t's in OUT/turn<t>/verdicts.jsonl (only the chains still open after
// turn t-1: a correct sample closes its chain). Three readings per task over its n chains:
//   first turn   the chain's turn-1 verdict (the single-turn result)
//   best turn    correct at any turn (best-of-turns)
//   last turn    the verdict of the last turn the chain reached
// each as pass@1 (mean c/n), pass@n (PassAtK) and fast_1 (correct and speedup > 1), and per
// turn the samples asked and correct. The samples asked at turn t are those of the generation
// run's RUN/turn<t>/generations.jsonl (RUN/generations.jsonl for turn 1); one without a
// verdict (a reply without code) failed that turn. Writes OUT/turns.json (kz.bench_turns/1)
// and OUT/turns.md. Reads only; a later record of the same (task, sample) wins.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kz::scoring {

// false with *err when turn 1 has no sample, or a file cannot be written.
bool WriteTurnsReport(const std::string& out_dir, const std::string& run_dir, int turns, nlohmann::json* summary,
                      std::string* err);

}  // namespace kz::scoring
