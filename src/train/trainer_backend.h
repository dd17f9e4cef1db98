// The client of one trainer backend process (`python -m kz_train`, docs/train-protocol.md):
// starts it, sends one op at a time as a frame on its stdin and reads the reply frame from
// its stdout, with a deadline per op. A process that crashes, hangs past its deadline or
// answers with something that is not a valid reply is killed (its whole process group)
// and reported; Restart() starts a fresh one and Recover() also loads the last checkpoint.
//
// Thread-safety: one TrainerBackend belongs to one thread.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/protocol.h"
#include "util/frame.h"
#include "util/subprocess.h"

namespace kz::train {

struct TrainerTimeouts {  // seconds per op, from the request written to the reply read
  double start_s = 120;   // process start + hello (imports torch)
  double load_s = 900, generate_s = 900, score_s = 600, train_step_s = 900, sft_s = 900;
  double save_s = 600, shutdown_s = 30;
};

struct TrainerConfig {
  std::vector<std::string> argv;  // the backend command; empty: {python, "-m", "kz_train"}
  std::string python = "python3";
  std::string package_dir;        // put on PYTHONPATH (holds kz_train and kz_worker)
  std::vector<std::pair<std::string, std::string>> env;
  TrainerTimeouts timeouts;
  size_t stderr_tail_bytes = 16384;
};

// The interpreter and package as the worker finds them (worker::LocateWorker).
TrainerConfig DefaultTrainerConfig(const std::string& exe);

enum class TrainerFailure {
  kNone,
  kNotRunning,  // no process: Start() or Restart() first
  kSpawn,       // the process could not start
  kCrashed,     // it ended during an op (or before answering hello)
  kTimeout,     // an op passed its deadline: the process was killed
  kProtocol,    // a reply that is not a valid frame, JSON object or answer: killed
  kBackend,     // the backend answered ok=false (kind says why); it is still usable
};
const char* TrainerFailureName(TrainerFailure f);

struct TrainerError {
  TrainerFailure failure = TrainerFailure::kNone;
  std::string kind;         // kBackend: the backend's error kind (load_error, not_loaded, ...)
  std::string message;      // one line for logs and reasons
  std::string stderr_tail;  // kCrashed/kTimeout/kProtocol: the end of the process's stderr
  // The process is gone (crashed, killed): Restart() or Recover() before the next op.
  bool needs_restart() const {
    return failure == TrainerFailure::kCrashed || failure == TrainerFailure::kTimeout ||
           failure == TrainerFailure::kProtocol || failure == TrainerFailure::kSpawn;
  }
};

class TrainerBackend {
 public:
  explicit TrainerBackend(TrainerConfig config);
  ~TrainerBackend();  // asks the backend to shut down (briefly), then kills its group
  TrainerBackend(const TrainerBackend&) = delete;
  TrainerBackend& operator=(const TrainerBackend&) = delete;

  // Starts the process and exchanges hello (protocol version checked).
  bool Start(HelloInfo* hello, TrainerError* err);
  // Kills the current process if any, then Start().
  bool Restart(HelloInfo* hello, TrainerError* err);
  // Restart(), then load the last checkpoint saved through this client (else the model of
  // the last successful Load()) with that Load()'s options.
  bool Recover(LoadResult* out, TrainerError* err);

  bool Load(const LoadRequest& req, LoadResult* out, TrainerError* err);
  bool Generate(const GenerateRequest& req, GenerateResult* out, TrainerError* err);
  bool Score(const ScoreRequest& req, ScoreResult* out, TrainerError* err);
  bool TrainStep(const TrainStepRequest& req, TrainStepResult* out, TrainerError* err);
  bool Sft(const SftRequest& req, SftResult* out, TrainerError* err);
  bool Save(const SaveRequest& req, SaveResult* out, TrainerError* err);
  // Asks the process to exit and waits for it (kill after timeouts.shutdown_s).
  bool Shutdown(TrainerError* err);

  // One raw op: `fields` plus protocol, op and id; `reply` is the whole result frame.
  bool Call(std::string_view op, nlohmann::json fields, double timeout_s, nlohmann::json* reply,
            TrainerError* err);

  bool running() const { return set_ != nullptr; }
  const std::string& last_checkpoint() const { return last_checkpoint_; }
  const TrainerConfig& config() const { return config_; }

 private:
  void Kill();
  // The process ended: `failure` with its exit status and stderr tail.
  bool Ended(util::ProcessResult result, TrainerFailure failure, const std::string& what, TrainerError* err);
  bool Fail(TrainerFailure failure, std::string message, TrainerError* err);
  // train_step and sft: Call, decode, and the client's wall time.
  template <typename Out, typename F>
  bool TimedStep(nlohmann::json fields, std::string_view op, double timeout_s, F from_json, Out* out,
                 TrainerError* err);

  TrainerConfig config_;
  std::unique_ptr<util::ProcessSet> set_;
  util::ProcessSet::Id id_ = 0;
  util::FrameDecoder decoder_;
  int64_t next_request_ = 0;
  std::optional<LoadRequest> last_load_;
  std::string last_checkpoint_;
};

}  // namespace kz::train
