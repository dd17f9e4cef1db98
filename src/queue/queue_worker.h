// The loop of `kz worker` (docs/queue.md): take a job (a dead consumer's idle one first,
// else a new one), verify it exactly as `kz serve`'s scheduler does (per-job directory,
// verify::PrepareJob: the job's options over the worker's base options, one verify::Verifier run), publish
// its verdict and ack it. While a job runs, a heartbeat thread keeps its entry from being
// reclaimed (Touch every `heartbeat`) and cancels the run if another worker took it over.
// Redis errors never end the loop: it logs them and waits (with the connection's backoff).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "queue/job_queue.h"
#include "util/thread_annotations.h"
#include "verify/device.h"
#include "verify/sample.h"
#include "verify/verifier.h"
#include "worker/worker_client.h"

namespace kz::queue {

class QueueWorker {
 public:
  struct Config {
    QueueConfig queue;
    std::string name;  // consumer name: unique among live workers
    worker::WorkerConfig worker;
    verify::VerifyOptions base;                     // jobs' options apply on top (verify::ApplyJobOptions)
    std::vector<verify::Gpu> gpus;                  // empty: CPU mode
    std::string work_dir;                           // per-job directories; emptied on start
    std::chrono::milliseconds block{2000};          // Claim's wait (also the shutdown latency when idle)
    std::chrono::milliseconds status_every{30000};  // an info heartbeat line this often
    int64_t max_deliveries = 5;                     // a job handed out more often fails (it kills workers)
    bool prestart = true;                           // keep the next run child started (torch imported)
    // `kz worker --gpu-concurrency K`: the K consumers of one process share their GPU's gate
    // (docs/throughput.md; base.gpu_concurrency = K); null: one job on the GPU at a time.
    std::shared_ptr<verify::GateHub> gate{};
  };
  struct Stats {
    uint64_t published = 0, duplicates = 0, failed = 0, reclaimed = 0, abandoned = 0;
  };

  explicit QueueWorker(Config config);
  ~QueueWorker();

  // Main thread: runs until Stop(). Returns the process exit code (0; 2 when the queue
  // cannot be opened or the work directory made).
  int Run();
  // Any thread (the signal thread): stop claiming; a running verification is cancelled
  // (its process groups killed) and its job left un-acked, so that another worker reclaims
  // it after reclaim_after. Idempotent; does not block.
  void Stop();
  Stats stats() const;

 private:
  std::optional<ClaimedJob> Next(std::string* err);
  // A job's verdict and, for the log, its status ("-" when failed).
  struct Outcome {
    Verdict verdict;
    std::string status;
  };
  void Process(const ClaimedJob& c);
  Outcome RunJob(const ClaimedJob& c);  // never throws
  Outcome Failed(const ClaimedJob& c, const std::string& why) const;
  // false with *err when the job cannot run (bad options or backend, files not written).
  bool Verify(const ClaimedJob& c, const std::string& dir, nlohmann::json* verdict, std::string* err);
  // Verify, with an unexpected exception turned into false and "internal error: ...".
  bool VerifyGuarded(const ClaimedJob& c, const std::string& dir, nlohmann::json* verdict, std::string* err);
  std::optional<verify::Gpu> RunGpu() const;  // the worker's GPU; nullopt in CPU mode
  void Publish(const ClaimedJob& c, const Verdict& v);
  void HeartbeatLoop();
  bool WaitSetup();
  void Pause(std::chrono::milliseconds d);  // sleeps, woken by Stop()
  void Event(const std::string& kv) const;  // "worker NAME: kv" at info
  void Warn(const std::string& msg);        // at warn, repeats within status_every dropped

  const Config config_;
  std::unique_ptr<RedisJobQueue> queue_, beat_queue_;  // main loop's, heartbeat thread's
  std::atomic<bool> stop_{false}, lost_{false};
  std::chrono::steady_clock::time_point next_reclaim_{}, last_status_{};
  verify::Verifier::Prestarted next_child_;  // main loop only: the next job's run child

  mutable util::Mutex mu_;
  util::CondVar cv_;                                                        // Stop() and the heartbeat's period
  std::string current_entry_ GUARDED_BY(mu_), current_id_ GUARDED_BY(mu_);  // the running job, or ""
  std::chrono::steady_clock::time_point current_since_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
  std::string last_warn_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_warn_at_ GUARDED_BY(mu_);
  std::thread beat_;
};

}  // namespace kz::queue
