// `kz train report`: a run directory's metrics.jsonl turned into what a reader looks at
// (docs/training.md, "The report"): report.md (tables of the SFT, every Coder step and
// every held-out evaluation, each evaluation against the first one with a paired bootstrap
// interval over tasks; with a Proposer phase, every Proposer step), report.json (the same
// figures) and SVG plots (coder.svg: the Coder's group accuracy and mean reward per step;
// eval.svg: held-out pass@1 and fast_1@1 per round; proposer.svg: validity rate, the Coder's
// accuracy on the valid modules and the mean Frontier Reward per Proposer step, the paper's
// Figure 3); with multi-turn refinement or a stabiliser on, their table and stabilisers.svg
// (report_stabilisers.h). Reads only; works on a run that is still going.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::train {

struct TrainReportOptions {
  std::string run_dir;
  std::string out_dir;     // default: <run_dir>/report
  int resamples = 10000;   // bootstrap resamples
  double level = 0.95;     // interval level
  uint64_t seed = 1;
};

// Writes the four files; *summary = report.json's content. false with *err when the run
// has no metrics.jsonl or a file cannot be written (a torn last line is skipped).
bool WriteTrainReport(const TrainReportOptions& o, nlohmann::json* summary, std::string* err);

}  // namespace kz::train
