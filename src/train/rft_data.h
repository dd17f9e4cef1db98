// Diversity-preserving rejection fine-tuning's data (issue 22, docs/training.md "RFT data"):
// `kz train rft RUN_DIR... --out sft.jsonl` collects every verified-correct sample of the runs'
// rollouts (all units, turns and retries), checks each against the hashes its verdict recorded
// (candidate code and task file unchanged), and keeps a diverse set: exact duplicates
// (normalised source) dropped, at most `per_task` per task, distinct kernel structures first
// (rewards::SelectForRft), the fastest first within a structure. Each record is an SFT pair in
// the Coder's own prompt ({"prompt", "completion"} plus provenance), ready as a next run's
// [sft] data.
#pragma once
#include <string>
#include <vector>

namespace kz::train {

struct RftDataOptions {
  std::vector<std::string> runs;  // kz train run directories
  std::string out;                // the SFT file (JSON lines), replaced atomically
  size_t per_task = 4;
  std::string prompt_template;  // the Coder's template text
  std::string backend = "triton";
  bool allow_no_verdicts = false;  // a run with no verdict yet gives an empty set, not an error
};

struct RftDataReport {
  size_t verdicts = 0;    // verdict lines read
  size_t correct = 0;     // of them correct
  size_t unreadable = 0;  // correct, but the candidate or task is gone or changed since
  size_t duplicates = 0;  // same normalised source as an earlier one
  size_t over_cap = 0;    // distinct, past the task's cap
  size_t written = 0, tasks = 0;
};

// false with *err when no run directory has rollouts, or the output cannot be written. A run
// without a correct sample gives an empty file and written = 0 (not an error: the report says so).
bool BuildRftData(const RftDataOptions& o, RftDataReport* report, std::string* err);

}  // namespace kz::train
