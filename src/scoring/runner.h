// `kz bench`: reads a suite and generations, verifies every sample not already in
// <out>/verdicts.jsonl through verify::Verifier, and writes the report (docs/bench.md).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/sample.h"
#include "worker/worker_client.h"

namespace kz::scoring {

class RemoteBackend;

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
  RemoteBackend* remote = nullptr;    // --server's verifier (kz-bench's; kz has none, it execs kz-bench)
};

// One sample sent to a remote verifier.
struct RemoteJob {
  std::string task_path, code, backend;
};

// `kz bench --server`: verification through kz serve (remote_run.h, on libcurl). Only the
// kz-bench executable has one: kz stays libc-only and execs kz-bench for --server.
class RemoteBackend {
 public:
  virtual ~RemoteBackend() = default;
  // Reaches the server and says on stderr what it is; false with *err (kExitServer) or
  // *usage (a bad URL).
  virtual bool Check(const BenchOptions& o, bool* usage, std::string* err) = 0;
  // Verifies `jobs`; on_done(index, verdict, server) once per finished job (`server`: the
  // record's "server" field), note(line) for retries and per-sample server errors. False
  // with *err when the server stayed unreachable: the rest is not verified.
  virtual bool VerifyAll(const BenchOptions& o, const std::vector<RemoteJob>& jobs,
                         const std::function<void(size_t, const nlohmann::json&, const nlohmann::json&)>& on_done,
                         const std::function<void(const std::string&)>& note, std::string* err) = 0;
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

}  // namespace kz::scoring
