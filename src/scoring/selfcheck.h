// `kz bench selfcheck`: verifies each selected task of a suite against itself as the
// candidate (verify::Sample::self_check: every check but the screen and the launch trace),
// so that a user learns in one command which tasks kz can judge on this device, and what
// each costs: status, one call's inputs and outputs, wall time, peak GPU memory
// (docs/bench.md). Records go to <out>/selfcheck.jsonl (resumable: a task whose source is
// unchanged is not verified again) and the table to <out>/selfcheck.md.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/sample.h"
#include "worker/worker_client.h"

namespace kz::scoring {

struct SelfCheckOptions {
  std::string suite_dir, out_dir;
  std::vector<int> levels;            // empty: all
  std::vector<std::string> task_ids;  // empty: all
  verify::VerifyOptions verify;
  bool use_gpu = true;                // false: CPU mode (--cpu or none found)
};

// One record of selfcheck.jsonl from a self-check verdict (pure; unit-tested).
nlohmann::json SelfCheckRecord(const std::string& task_id, const std::string& task_xxh,
                               const nlohmann::json& verdict);

// The Markdown table of selfcheck.md over `records` (in the order given).
std::string SelfCheckTable(const std::vector<nlohmann::json>& records);

// Exit code: 0 every selected task is recorded (whatever its status), 2 usage (unreadable
// suite, nothing selected), 3 a file under --out cannot be written.
int RunSelfCheck(const SelfCheckOptions& options, const worker::WorkerConfig& worker);

}  // namespace kz::scoring
