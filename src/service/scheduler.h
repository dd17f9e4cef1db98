// The in-process scheduler of `kz serve`: the queued jobs and one worker thread that runs
// them one at a time (one GPU slot, or CPU mode) through verify::Verifier, picking the
// next by priority and per-client round-robin (picker.h). Every accepted job is in the
// store before Submit returns; on Start, jobs a previous process left queued or running
// are queued again (cancelled ones are final and stay so).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "service/metrics.h"
#include "service/picker.h"
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
    size_t max_queue = 4096;         // queued jobs at most; more is kFull (HTTP 429)
    bool run_jobs = true;            // false (--no-run): accept and store, never run (load tests)
  };
  enum class SubmitKind { kQueued, kExisting, kFull, kClosed, kError };
  struct SubmitResult {
    SubmitKind kind = SubmitKind::kError;
    std::string id, state, error;
  };
  // A validated request with its scheduling fields resolved.
  struct Submission {
    VerifyRequest request;
    int64_t priority = 0;
    std::string client = "anonymous";
  };
  struct BatchResult {
    SubmitKind kind = SubmitKind::kError;  // kQueued: accepted (see items); else refused whole
    std::string error;
    std::vector<SubmitResult> items;       // one per submission when accepted
  };
  enum class CancelKind { kCancelled, kNotFound, kConflict, kError };
  struct CancelResult {
    CancelKind kind = CancelKind::kError;
    std::optional<store::Job> job;  // as stored after the cancel (kCancelled, kConflict)
    std::string error;
  };

  Scheduler(store::JobStore* store, Config config);
  ~Scheduler() { Stop(); }

  // Main thread, once: requeues pending jobs and starts the worker thread.
  bool Start(std::string* err);
  // Any thread; does not wait for the job (one SQLite write at most). A job with the same
  // key (same inputs) already stored is returned instead (kExisting), in any state but
  // failed or cancelled.
  SubmitResult Submit(const Submission& s);
  // Any thread: Submit for many, atomically with respect to the queue: either every new
  // job is stored and queued (one transaction), or none is (kFull when they do not all
  // fit). Samples deduplicated to stored jobs, or to an earlier sample of the batch, take
  // no room.
  BatchResult SubmitBatch(const std::vector<Submission>& batch);
  // Any thread: cancels a queued job (it never runs) or the running one (its process
  // groups are killed within Verifier::kCancelPollMs; the slot then takes the next job).
  // A final job is kConflict.
  CancelResult Cancel(const std::string& id);
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
  size_t max_queue() const { return config_.max_queue; }
  bool Busy() const;
  bool on_gpu() const { return !config_.gpus.empty(); }
  Metrics& metrics() { return metrics_; }
  std::string RenderMetrics() const;  // any thread: /metrics

 private:
  void WorkerLoop();                          // the worker thread
  void RunJob(const std::string& id);         // worker thread
  nlohmann::json Verify(const store::Job& job);  // worker thread; throws on kz errors
  store::Job NewJob(const Submission& s, const std::string& key);  // REQUIRES mu_
  bool Queued(const std::string& id) const;   // REQUIRES mu_
  std::string NewId();                        // REQUIRES mu_
  std::string Fingerprint() const;

  store::JobStore* store_;
  const Config config_;
  const std::string fingerprint_;
  Metrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits for queue_ or stopping_
  std::condition_variable done_cv_;  // Wait() callers wait for a job to finish
  std::vector<QueuedJob> queue_;     // GUARDED_BY(mu_): queued jobs, in arrival order
  ServiceRecord served_;             // GUARDED_BY(mu_): client -> tick last picked
  uint64_t tick_ = 0, seq_ = 0;      // GUARDED_BY(mu_)
  std::string running_;              // GUARDED_BY(mu_): the running job id, or ""
  std::chrono::steady_clock::time_point running_since_;  // GUARDED_BY(mu_)
  std::atomic<bool> cancel_running_{false};  // written under mu_; read by the verifier
  bool stopping_ = false;            // GUARDED_BY(mu_)
  std::mt19937_64 rng_;              // GUARDED_BY(mu_)
  std::thread worker_;
};

}  // namespace kz::service
