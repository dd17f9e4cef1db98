// Admission, the first half of kz serve's scheduler (issue 20): validated submissions in,
// each deduplicated against the store and the other submissions of its group, the new jobs
// stored in one transaction per group of concurrent submitters (group commit) and handed to
// the pipeline behind (JobIntake, implemented by service::Execution). A batch is accepted
// whole or refused whole (kFull when its new jobs do not fit the queue, kClosed while the
// server shuts down). Thread-safety: any thread may submit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "service/metrics.h"
#include "service/request.h"
#include "store/job_store.h"
#include "util/thread_annotations.h"

namespace kz::service {

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
  std::vector<SubmitResult> items;  // one per submission when accepted
};

// What admission needs of the pipeline behind it. Thread-safe.
class JobIntake {
 public:
  struct Room {
    size_t waiting = 0;   // jobs accepted and not yet run (remote: not yet answered)
    bool closed = false;  // shutting down: new jobs are refused
  };
  virtual ~JobIntake() = default;
  virtual Room Look() const = 0;
  // Jobs just stored as queued join the queue, in order.
  virtual void Enqueue(const std::vector<store::Job>& jobs) = 0;
};

class Admission {
 public:
  // `store`, `intake` and `metrics` outlive it. `fingerprint`: the server's settings that
  // change a verdict (part of every deduplication key). At most `max_queue` jobs wait.
  Admission(store::JobStore* store, JobIntake* intake, Metrics* metrics, std::string fingerprint, size_t max_queue);

  // A job with the same key (same inputs) already stored is returned instead (kExisting), in
  // any state but failed or cancelled. At most one SQLite transaction; does not wait for the job.
  SubmitResult Submit(const Submission& s) EXCLUDES(submit_mu_, accept_mu_);
  // Submit for many, atomically with respect to the queue: every new job is stored and
  // queued (one transaction), or none is. Samples deduplicated to stored jobs, or to an
  // earlier sample of the batch, take no room.
  BatchResult SubmitBatch(const std::vector<Submission>& batch) EXCLUDES(submit_mu_, accept_mu_);

 private:
  // Group commit: concurrent submitters queue their batches; one of them, the leader, accepts
  // every queued batch with one store transaction, then wakes the others with their results.
  // Each batch keeps its own all-or-nothing acceptance; deduplication spans the group.
  struct PendingBatch {
    const std::vector<Submission>* batch = nullptr;  // the owner's; outlives the group
    std::vector<std::string> keys;
    // Written only by the leader; read by the owner once it sees `done` under submit_mu_.
    BatchResult result;
    size_t deduplicated = 0;    // items that are existing jobs (counted once the group is stored)
    bool needs_insert = false;  // accepted with new jobs, or deduplicated to another batch's new job
    bool done = false;          // guarded by submit_mu_
  };
  static constexpr size_t kMaxGroupSamples = 2048;  // samples one leader accepts at most
  struct AcceptedGroup {
    size_t waiting = 0;                    // jobs waiting before the group
    bool closed = false;                   // the intake refuses new jobs
    std::vector<store::Job> fresh;         // the accepted batches' new jobs, in order
    std::map<std::string, size_t> by_key;  // key -> index in fresh
  };
  // The leader: the group's results, its new jobs stored and queued.
  void AcceptGroup(const std::vector<PendingBatch*>& group) EXCLUDES(accept_mu_);
  // p's result — its new jobs appended to g.fresh if it is accepted whole.
  void AcceptBatch(PendingBatch& p, AcceptedGroup& g) REQUIRES(accept_mu_);
  store::Job NewJob(const Submission& s, const std::string& key) REQUIRES(accept_mu_);
  std::string NewId() REQUIRES(accept_mu_);

  store::JobStore* store_;
  JobIntake* intake_;
  Metrics* metrics_;
  const std::string fingerprint_;
  const size_t max_queue_;

  util::Mutex submit_mu_;    // the group-commit queue below
  util::CondVar submit_cv_;  // a group was accepted, or the leader's place is free
  std::vector<PendingBatch*> submit_queue_ GUARDED_BY(submit_mu_);
  bool submit_leader_ GUARDED_BY(submit_mu_) = false;  // a leader is accepting a group
  // Held by the leader while it accepts (one at a time: find, insert and enqueue are one
  // step, so no key gets two jobs and the room it saw can only grow meanwhile).
  util::Mutex accept_mu_;
  std::mt19937_64 rng_ GUARDED_BY(accept_mu_);
};

}  // namespace kz::service
