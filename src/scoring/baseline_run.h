// `kz bench baseline`: times each selected task's reference Model (eager and/or
// torch.compile) in a fresh worker child per task (op `baseline`) and keeps the results in
// KernelBench-shape files under --out, reusing entries whose key still matches
// (docs/bench.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "worker/worker_client.h"

namespace kz::scoring {

struct BaselineOptions {
  std::string suite_dir, out_dir;
  std::vector<int> levels;            // empty: all
  std::vector<std::string> task_ids;  // empty: all
  std::vector<std::string> modes = {"eager", "compile"};
  int trials = 100;                   // timed calls per task and mode
  int warmup = 3;
  double budget_s = 60;               // timing budget per mode (at least one block is timed)
  double timeout_s = 900;             // wall-time limit of one task's child (both modes)
  uint64_t max_host_mem_mib = 32768;
  bool cpu = false;                   // --cpu (or no GPU found)
  std::optional<int> device;          // GPU index; default the first
  bool force = false;                 // --force: re-time even when an entry matches
};

// Exit code: 0 the files are written (tasks that failed are entries with an "error"),
// 2 usage (unreadable suite or baseline file, unknown mode, no such GPU), 3 a file cannot be written.
int RunBaselines(const BaselineOptions& options, const worker::WorkerConfig& worker);

}  // namespace kz::scoring
