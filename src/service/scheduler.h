// The in-process scheduler of `kz serve`: admission (service::Admission: submit, group
// commit, deduplication) in front of execution (service::Execution: the queue, build
// threads, one slot per GPU or remote dispatch through Redis; cancel, wait, metrics). The
// two meet at JobIntake: admission asks how many jobs wait and hands over the jobs it has
// stored. Every accepted job is in the store before Submit returns.
// Thread-safety: Submit, SubmitBatch, Cancel, Wait, Drain and the counters from any thread;
// Start and Stop from the main thread.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "service/admission.h"
#include "service/execution.h"
#include "service/metrics.h"
#include "store/job_store.h"

namespace kz::service {

// The server's settings that change a verdict: part of every deduplication key.
inline std::string Fingerprint(const SchedulerConfig& config) {
  const auto& o = config.base;
  std::string device = config.gpus.empty() || o.cpu_only ? "cpu" : config.gpus.front().name;
  return "device=" + device + ";policy=" + o.policy + ";trials=" + std::to_string(o.trials) +
         ";timing=" + (o.timing ? "1" : "0") + ";timeout=" + std::to_string(o.timeout_s) +
         ";screen=" + (o.screen ? "1" : "0") +
         (o.timing_ci_rel > 0 ? ";timing_ci=" + std::to_string(o.timing_ci_rel) : "");
}

class Scheduler {
 public:
  using Config = SchedulerConfig;
  using SubmitKind = service::SubmitKind;
  using SubmitResult = service::SubmitResult;
  using Submission = service::Submission;
  using BatchResult = service::BatchResult;
  using CancelKind = service::CancelKind;
  using CancelResult = service::CancelResult;

  // `store` outlives it.
  Scheduler(store::JobStore* store, const Config& config)
      : max_queue_(config.max_queue),
        on_gpu_(!config.gpus.empty()),
        execution_(store, config, &metrics_),
        admission_(store, &execution_, &metrics_, Fingerprint(config), config.max_queue) {}
  ~Scheduler() { Stop(); }

  // Main thread, once: requeues pending jobs and starts the threads.
  bool Start(std::string* err) { return execution_.Start(err); }
  SubmitResult Submit(const Submission& s) { return admission_.Submit(s); }
  BatchResult SubmitBatch(const std::vector<Submission>& batch) { return admission_.SubmitBatch(batch); }
  CancelResult Cancel(const std::string& id) { return execution_.Cancel(id); }
  std::optional<store::Job> Wait(const std::string& id, std::chrono::milliseconds timeout, std::string* err) {
    return execution_.Wait(id, timeout, err);
  }
  void Drain() { execution_.Drain(); }
  void Stop() { execution_.Stop(); }

  size_t QueueDepth() const { return execution_.QueueDepth(); }
  size_t max_queue() const { return max_queue_; }
  size_t Running() const { return execution_.Running(); }
  size_t Slots() const { return execution_.Slots(); }
  bool Busy() const { return Running() > 0; }
  bool on_gpu() const { return on_gpu_; }
  Metrics& metrics() { return metrics_; }
  std::string RenderMetrics() const { return execution_.RenderMetrics(); }

 private:
  const size_t max_queue_;
  const bool on_gpu_;
  Metrics metrics_;
  Execution execution_;  // before admission_, which hands it jobs
  Admission admission_;
};

}  // namespace kz::service
