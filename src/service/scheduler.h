// The in-process scheduler of `kz serve`: a FIFO of accepted jobs and one worker thread
// that runs them one at a time (one GPU slot, or CPU mode) through verify::Verifier.
// Every accepted job is in the store before Submit returns; on Start, jobs a previous
// process left queued or running are queued again.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "service/metrics.h"
#include "service/request.h"
#include "store/job_store.h"
#include "verify/device.h"
#include "worker/worker_client.h"

namespace kz::service {

class Scheduler {
 public:
  struct Config {
    worker::WorkerConfig worker;
    verify::VerifyOptions base;      // the server's options; requests may override some
    std::vector<verify::Gpu> gpus;   // empty: CPU mode
    std::string work_dir;            // per-job directories for the sources
    size_t max_queue = 256;          // queued jobs at most; more is kFull (HTTP 429)
  };
  enum class SubmitKind { kQueued, kExisting, kFull, kClosed, kError };
  struct SubmitResult {
    SubmitKind kind = SubmitKind::kError;
    std::string id, state, error;
  };

  Scheduler(store::JobStore* store, Config config);
  ~Scheduler() { Stop(); }

  // Main thread, once: requeues pending jobs and starts the worker thread.
  bool Start(std::string* err);
  // Any thread; does not wait for the job (one SQLite write at most). A job with the same
  // key (same inputs) already stored is returned instead (kExisting), whatever its state.
  SubmitResult Submit(const VerifyRequest& request);
  // Any thread: waits up to `timeout` for job `id` to leave queued/running, then returns
  // it as stored. nullopt: unknown id (err empty) or a store error.
  std::optional<store::Job> Wait(const std::string& id, std::chrono::milliseconds timeout, std::string* err);
  // Any thread (the signal thread): stop taking jobs; Wait() callers return at once
  // unless theirs is the running job. Idempotent; does not block.
  void Drain();
  // Main thread: Drain(), then wait for the running job to finish; queued jobs stay
  // queued in the store for the next start. Idempotent.
  void Stop();

  size_t QueueDepth() const;
  bool Busy() const;
  bool on_gpu() const { return !config_.gpus.empty(); }
  Metrics& metrics() { return metrics_; }

 private:
  void WorkerLoop();                          // the worker thread
  void RunJob(const std::string& id);         // worker thread
  nlohmann::json Verify(const store::Job& job);  // worker thread; throws on kz errors
  std::string NewId();                        // REQUIRES mu_
  std::string Fingerprint() const;

  store::JobStore* store_;
  const Config config_;
  const std::string fingerprint_;
  Metrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits for queue_ or stopping_
  std::condition_variable done_cv_;  // Wait() callers wait for a job to finish
  std::deque<std::string> queue_;    // GUARDED_BY(mu_): queued job ids, FIFO
  std::string running_;              // GUARDED_BY(mu_): the running job id, or ""
  bool stopping_ = false;            // GUARDED_BY(mu_)
  std::mt19937_64 rng_;              // GUARDED_BY(mu_)
  std::thread worker_;
};

}  // namespace kz::service
