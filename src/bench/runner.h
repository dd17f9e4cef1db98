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
  std::string baseline;               // --baseline: compile baseline file or directory ("" = none)
  std::string server;                 // --server URL: verify through kz serve ("" = in process)
  std::string client = "kz-bench";    // --client: X-KZ-Client with --server
  bool trials_given = false, policy_given = false;  // sent as job options with --server
  std::vector<int> levels;            // empty: all
  std::vector<std::string> task_ids;  // empty: all
  int batch = 32;                     // samples per Verifier::VerifyAll call (compile, then run)
  verify::VerifyOptions verify;
  bool use_gpu = true;                // false: CPU mode (--cpu or none found)
};

inline constexpr int kExitServer = 4;  // --server: unreachable at the start or for too long

// Exit code: 0 the run finished and the report is written, 2 usage (unreadable suite,
// generations or baseline, bad server URL), 3 internal (a file under --out cannot be
// written), 4 (--server) the server could not be reached at the start or stayed
// unreachable during the run (the report of what is done is written; run again to resume).
int RunBench(const BenchOptions& options, const worker::WorkerConfig& worker);

// `kz bench report`: recomputes report.* from <out>/run.json and <out>/verdicts.jsonl,
// against `baseline` when given, else the run's own --baseline (if any).
int RecomputeReport(const std::string& out_dir, const std::string& baseline = "");

}  // namespace kz::bench
