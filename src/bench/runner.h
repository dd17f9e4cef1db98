// `kz bench`: reads a suite and generations, verifies every sample not already in
// <out>/verdicts.jsonl through verify::Verifier, and writes the report (docs/bench.md).
#pragma once
#include <string>
#include <vector>

#include "verify/sample.h"
#include "worker/worker_client.h"

namespace kz::bench {

struct BenchOptions {
  std::string suite_dir, generations, out_dir;
  std::vector<int> levels;            // empty: all
  std::vector<std::string> task_ids;  // empty: all
  int batch = 32;                     // samples per Verifier::VerifyAll call (compile, then run)
  verify::VerifyOptions verify;
  bool use_gpu = true;                // false: CPU mode (--cpu or none found)
};

// Exit code: 0 the run finished and the report is written, 2 usage (unreadable suite or
// generations), 3 internal (a file under --out cannot be written).
int RunBench(const BenchOptions& options, const worker::WorkerConfig& worker);

// `kz bench report`: recomputes report.* from <out>/run.json and <out>/verdicts.jsonl.
int RecomputeReport(const std::string& out_dir);

}  // namespace kz::bench
