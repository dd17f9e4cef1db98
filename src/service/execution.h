// Execution, the second half of kz serve's scheduler (issue 20): the admitted jobs' way from
// the queue to a verdict.
//   queue --(picker: priority, per-client round-robin)--> build threads: screen, extract,
//   compile on CPU workers (verify::Verifier::Stage) --> ready list --(the same picker)-->
//   slots: one per GPU (or N CPU slots), each running one staged sample at a time in a
//   fresh child pinned to its GPU (Verifier::Finish). With base.gpu_concurrency K > 1,
//   K slots per GPU share that GPU's gate (verify::GateHub, docs/throughput.md): their
//   correctness stages run at once, a sample being timed has the GPU to itself.
// The build threads work ahead of the slots (at most max_ready staged jobs wait), so a GPU
// never waits for nvcc while queued work exists; a sample whose verdict is known before the
// run (bad input, screen rejection, compile error) never takes a slot. A job stays "queued"
// in the store while it is staged, and is "running" from the moment a slot takes it (or its
// verdict is known); on Start, jobs a previous process left queued or running are queued
// again (cancelled ones are final and stay so).
// With SchedulerConfig::remote set (kz serve --queue), a dispatcher thread hands jobs to
// Redis instead (they are "running" once enqueued) and a verdict reader stores what workers
// send back; the queue, store, fairness and backpressure are the same.
// Jobs come in through JobIntake (service::Admission); Cancel and Wait are about the jobs in
// this pipeline.
#pragma once
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "queue/job_queue.h"
#include "queue/verdict_reader.h"
#include "service/admission.h"
#include "service/metrics.h"
#include "service/picker.h"
#include "store/job_store.h"
#include "util/thread_annotations.h"
#include "verify/device.h"
#include "verify/verifier.h"
#include "worker/call_set.h"
#include "worker/worker_client.h"

namespace kz::service {

struct SchedulerConfig {
  worker::WorkerConfig worker;
  worker::LauncherPtr launcher = worker::ProcessLauncher();  // every worker call (tests: a scripted fake)
  verify::VerifyOptions base;      // the server's options; requests may override some
  std::vector<verify::Gpu> gpus;   // one slot each; empty: CPU mode
  size_t cpu_slots = 1;            // CPU mode: slots (children at once)
  size_t build_threads = 1;        // samples staged (screened, compiled) at once
  size_t max_ready = 0;            // staged jobs waiting for a slot at most; 0: 2 x slots + builds
  bool prestart = true;            // each slot keeps its next run child started (torch imported)
  std::string work_dir;            // per-job directories for the sources
  size_t max_queue = 4096;         // jobs waiting for a slot (remote: for a verdict) at most; more is kFull (429)
  bool run_jobs = true;            // false (--no-run): accept and store, never run (load tests)
  // Stop(): jobs running in slots get this long to finish; then their children are killed
  // and the jobs stay "running" in the store, queued again by the next start.
  double shutdown_grace_s = 20;
  // Non-empty (--queue redis://…): no local slots; jobs go to `kz worker`s through Redis
  // Streams (docs/queue.md) and their verdicts come back to the store.
  queue::QueueConfig remote;
};

enum class CancelKind { kCancelled, kNotFound, kConflict, kError };
struct CancelResult {
  CancelKind kind = CancelKind::kError;
  std::optional<store::Job> job;  // as stored after the cancel (kCancelled, kConflict)
  std::string error;
};

class Execution final : public JobIntake {
 public:
  // `store` and `metrics` outlive it.
  Execution(store::JobStore* store, SchedulerConfig config, Metrics* metrics);
  ~Execution() override { Stop(); }

  // Main thread, once: requeues pending jobs and starts the build, slot (or dispatch) threads.
  bool Start(std::string* err);
  // Any thread: cancels a queued job (it never runs), a staged one, or a running one (its
  // process groups are killed within Verifier::kCancelPollMs; the slot takes the next job).
  // A final job is kConflict.
  CancelResult Cancel(const std::string& id);
  // Any thread: waits up to `timeout` for job `id` to leave queued/running, then returns
  // it as stored. nullopt: unknown id (err empty) or a store error.
  std::optional<store::Job> Wait(const std::string& id, std::chrono::milliseconds timeout, std::string* err);
  // Any thread (the signal thread): stop taking jobs; Wait() callers return at once
  // unless theirs is running in a slot. Idempotent; does not block.
  void Drain();
  // Main thread: Drain(), then wait for the jobs running in slots to finish, for at most
  // SchedulerConfig::shutdown_grace_s (then their children are killed and they stay
  // "running" in the store); builds in flight are abandoned (their screen/extract children killed);
  // queued, staged and interrupted jobs are queued again by the next start. Idempotent.
  void Stop();

  size_t QueueDepth() const;   // waiting for a slot: queued, being staged, staged (remote: no verdict yet)
  size_t Running() const;      // slots running a job now
  size_t Slots() const { return slots_.size(); }
  std::string RenderMetrics() const;  // any thread: /metrics

  // JobIntake (service::Admission's side): any thread.
  Room Look() const override EXCLUDES(mu_);
  void Enqueue(const std::vector<store::Job>& jobs) override EXCLUDES(mu_);

 private:
  // A job taken from the queue: being staged, staged and waiting for a slot, or running.
  struct ActiveJob {
    std::string id, client, dir;
    int64_t priority = 0;
    uint64_t seq = 0;     // arrival order
    double queue_wait_s = 0;
    std::vector<verify::Sample> samples;       // one; Work points into it
    std::unique_ptr<verify::Verifier> verifier;
    std::vector<verify::Verifier::Work> work;  // one: this job's sample
    std::chrono::steady_clock::time_point staged_at;
    // From the staged verdict's footprint (docs/memory.md); set before the job is ready,
    // read only afterwards (metrics), so it needs no lock of its own.
    std::optional<uint64_t> footprint_need;
    std::atomic<bool> cancel{false};  // DELETE: the verifier's children are killed
  };
  using ActivePtr = std::shared_ptr<ActiveJob>;
  struct Slot {
    std::optional<verify::Gpu> gpu;  // nullopt: a CPU slot
    std::string label;               // "cuda:0", "cpu:1"
    std::string running;             // guarded by mu_: the job id, or ""
    std::chrono::steady_clock::time_point since;  // guarded by mu_
    double busy_s = 0;               // guarded by mu_: finished jobs' seconds
    std::shared_ptr<verify::GateHub> gate;  // gpu_concurrency > 1: its device's gate (shared)
  };
  // The gates by device label ("cuda:0", "cpu"), for /metrics; fixed at construction.
  std::vector<std::pair<std::string, std::shared_ptr<verify::GateHub>>> gates_;

  void BuildLoop();                    // a build thread
  void DispatchLoop();                 // remote mode: queue -> Redis
  bool OnRemoteVerdict(const queue::Verdict& v);  // remote mode: the verdict reader's thread
  bool StartRemote(std::string* err);
  bool remote() const { return !config_.remote.url.empty(); }
  void SlotLoop(size_t slot);          // a slot's thread
  // What staging a job came to: staged (or its verdict known), dropped (cancelled, or no
  // longer queued in the store), or failed: the job cannot run (bad options or backend, a
  // full disk) and is failed with `reason`.
  struct Staging {
    enum class Kind { kStaged, kDropped, kFailed } kind = Kind::kDropped;
    std::string reason;  // kFailed
  };
  // Build thread: files + Verifier::Stage. Expected failures are a result; an exception is a
  // bug (BuildLoop fails the job with "internal error").
  Staging StageJob(ActiveJob& a);
  // Build thread: the staged job into the ready list, or finished without a slot.
  void HandOver(const ActivePtr& a, const Staging& staging) EXCLUDES(mu_);
  // Records the verdict (state done, or failed with `verdict` = {"error"}) unless the job
  // was cancelled, and forgets the job.
  void Complete(const ActivePtr& a, store::JobState state, const nlohmann::json& verdict) REQUIRES(mu_);
  void Forget(const ActivePtr& a) EXCLUDES(mu_);
  // A running job interrupted by Stop(): left "running" in the store (queued again by the
  // next start), no verdict recorded.
  void Interrupted(const ActivePtr& a) REQUIRES(mu_);
  // The next queued job to stage, as active: the picker's choice, or, when the staged list
  // is full, the queued job a slot would run before every staged one (UrgentIndex), so the
  // lookahead never holds back a job of higher priority or a client's turn by more than the
  // staging of that job.
  ActivePtr Take() REQUIRES(mu_);
  std::optional<size_t> UrgentIndex() const REQUIRES(mu_);
  ActivePtr TakeReady() REQUIRES(mu_);  // the staged job a free slot runs next
  bool MarkRunning(const ActiveJob& a);  // the store's queued -> running; false if cancelled
  bool Queued(const std::string& id) const REQUIRES(mu_);
  bool InSlot(const std::string& id) const REQUIRES(mu_);
  size_t RunningLocked() const REQUIRES(mu_);
  size_t WaitingLocked() const REQUIRES(mu_);  // queued, being staged, staged, dispatched
  size_t MaxReady() const;

  store::JobStore* store_;
  const SchedulerConfig config_;
  Metrics& metrics_;

  mutable util::Mutex mu_;
  util::CondVar work_cv_;   // build threads: queue_ and room in ready_, or stopping_
  util::CondVar ready_cv_;  // slots: ready_, or stopping_
  util::CondVar done_cv_;   // Wait() callers: a job left the pipeline
  std::vector<QueuedJob> queue_ GUARDED_BY(mu_);            // queued jobs, in arrival order
  std::vector<ActivePtr> ready_ GUARDED_BY(mu_);            // staged, waiting for a slot
  std::map<std::string, ActivePtr> active_ GUARDED_BY(mu_);  // taken and not yet final
  std::vector<Slot> slots_;  // fixed at construction; its fields marked "guarded by mu_" are (by hand)
  std::set<std::string> dispatched_ GUARDED_BY(mu_);  // remote mode: enqueued in Redis, no verdict yet
  std::unique_ptr<queue::RedisJobQueue> redis_;     // remote mode: the dispatcher's connection
  std::unique_ptr<queue::VerdictReader> verdicts_;  // remote mode
  size_t building_ GUARDED_BY(mu_) = 0;
  ServiceRecord served_ GUARDED_BY(mu_);       // client -> tick last staged
  ServiceRecord slot_served_ GUARDED_BY(mu_);  // client -> tick last given a slot
  uint64_t tick_ GUARDED_BY(mu_) = 0;
  uint64_t seq_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<bool> abandon_builds_{false};  // set with stopping_: builds' children are killed
  std::atomic<bool> abandon_runs_{false};    // Stop() past the grace: running children are killed
  std::vector<std::thread> threads_;
};

}  // namespace kz::service
