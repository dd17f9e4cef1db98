// Admission: accepting jobs (Submit, SubmitBatch) with group commit and deduplication.
#include "service/admission.h"

#include <cstdio>
#include <utility>

#include "util/clock.h"
#include "util/hash.h"

namespace kz::service {

Admission::Admission(store::JobStore* store, JobIntake* intake, Metrics* metrics, std::string fingerprint,
                     size_t max_queue)
    : store_(store),
      intake_(intake),
      metrics_(metrics),
      fingerprint_(std::move(fingerprint)),
      max_queue_(max_queue),
      rng_(std::random_device{}()) {}

std::string Admission::NewId() {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng_()));
  return buf;
}

store::Job Admission::NewJob(const Submission& s, const std::string& key) {
  const VerifyRequest& r = s.request;
  store::Job j;
  j.id = NewId();
  j.key = key;
  j.state = store::JobState::kQueued;
  j.submitted_at_ms = util::UnixMs();
  j.backend = r.backend;
  j.options_json = r.options.dump();
  j.task_hash = util::Hash128Hex(r.task);
  j.candidate_hash = util::Hash128Hex(r.candidate);
  j.task_source = r.task;
  j.candidate_source = r.candidate;
  j.priority = s.priority;
  j.client = s.client;
  return j;
}

namespace {
// Whether two jobs verify the same thing: the deduplication key is a hash, this is the proof.
bool SameInputs(const store::Job& a, const store::Job& b) {
  return a.task_source == b.task_source && a.candidate_source == b.candidate_source &&
         a.options_json == b.options_json && a.backend == b.backend;
}
}  // namespace

SubmitResult Admission::Submit(const Submission& s) {
  BatchResult b = SubmitBatch({s});
  if (b.kind != SubmitKind::kQueued) return {b.kind, "", "", b.error};
  return b.items.front();
}

BatchResult Admission::SubmitBatch(const std::vector<Submission>& batch) {
  PendingBatch mine;
  mine.batch = &batch;
  for (const auto& s : batch) mine.keys.push_back(JobKey(s.request, fingerprint_));
  util::MutexLock sl(submit_mu_);
  submit_queue_.push_back(&mine);
  while (!mine.done && submit_leader_) submit_cv_.Wait(submit_mu_);
  if (mine.done) return std::move(mine.result);
  // The leader: this batch and those queued meanwhile (up to kMaxGroupSamples samples, so
  // that one acceptance stays short), accepted at once.
  submit_leader_ = true;
  std::vector<PendingBatch*> group;
  size_t samples = 0, taken = 0;
  for (; taken < submit_queue_.size() && (taken == 0 || samples < kMaxGroupSamples); ++taken) {
    group.push_back(submit_queue_[taken]);
    samples += submit_queue_[taken]->batch->size();
  }
  submit_queue_.erase(submit_queue_.begin(), submit_queue_.begin() + static_cast<std::ptrdiff_t>(taken));
  sl.Unlock();
  // Whatever happens while accepting, the group is answered and the leader's place freed:
  // otherwise every later submit would wait forever.
  try {
    AcceptGroup(group);
  } catch (...) {  // unexpected: stored jobs of this group (if any) stay queued in the store for a restart
    for (PendingBatch* p : group) p->result = {SubmitKind::kError, "internal error while accepting jobs", {}};
  }
  sl.Lock();
  for (PendingBatch* p : group) p->done = true;
  submit_leader_ = false;
  sl.Unlock();
  submit_cv_.NotifyAll();
  return std::move(mine.result);
}

void Admission::AcceptGroup(const std::vector<PendingBatch*>& group) {
  util::MutexLock lock(accept_mu_);  // find + insert + enqueue as one step: no duplicate of a key
  AcceptedGroup g;
  const JobIntake::Room room = intake_->Look();
  g.waiting = room.waiting;
  g.closed = room.closed;
  for (PendingBatch* p : group) AcceptBatch(*p, g);
  std::string err;
  bool stored = g.fresh.empty() || store_->InsertAll(g.fresh, &err);  // one transaction
  for (PendingBatch* p : group) {
    if (p->result.kind != SubmitKind::kQueued) continue;
    if (!stored && p->needs_insert) {  // its jobs, or the ones it was deduplicated to, are not stored
      p->result = {SubmitKind::kError, err, {}};
      continue;
    }
    for (size_t i = 0; i < p->deduplicated; ++i) metrics_->Count(Counter::kDeduplicated);
  }
  if (!stored || g.fresh.empty()) return;
  intake_->Enqueue(g.fresh);
  for (size_t i = 0; i < g.fresh.size(); ++i) metrics_->Count(Counter::kAccepted);
}

void Admission::AcceptBatch(PendingBatch& p, AcceptedGroup& g) {
  BatchResult& res = p.result;
  const auto& batch = *p.batch;
  std::vector<store::Job> mine;  // this batch's new jobs
  std::map<std::string, size_t> mine_by_key;
  for (size_t i = 0; i < batch.size() && res.error.empty(); ++i) {
    const std::string& key = p.keys[i];
    store::Job job = NewJob(batch[i], key);
    // A key match is a duplicate only when the stored inputs are the same too: the key is a
    // 128-bit hash of untrusted inputs, and a collision must not hand out another's verdict.
    auto earlier = g.by_key.find(key);
    auto own = mine_by_key.find(key);
    if (earlier != g.by_key.end() && SameInputs(g.fresh[earlier->second], job)) {  // an earlier batch's
      res.items.push_back(
          {SubmitKind::kExisting, g.fresh[earlier->second].id, store::ToString(store::JobState::kQueued), ""});
      ++p.deduplicated;
      p.needs_insert = true;
      continue;
    }
    if (own != mine_by_key.end() && SameInputs(mine[own->second], job)) {
      res.items.push_back({SubmitKind::kExisting, mine[own->second].id, store::ToString(store::JobState::kQueued), ""});
      ++p.deduplicated;
      continue;
    }
    auto existing = store_->FindByKey(key, &res.error);
    if (!res.error.empty()) break;
    if (existing && SameInputs(*existing, job)) {
      res.items.push_back({SubmitKind::kExisting, existing->id, store::ToString(existing->state), ""});
      ++p.deduplicated;
      continue;
    }
    mine_by_key[key] = mine.size();
    res.items.push_back({SubmitKind::kQueued, job.id, store::ToString(store::JobState::kQueued), ""});
    mine.push_back(std::move(job));
  }
  if (!res.error.empty()) {
    res = {SubmitKind::kError, res.error, {}};
  } else if (!mine.empty() && g.closed) {
    res = {SubmitKind::kClosed, "the server is shutting down", {}};
  } else if (size_t queued = g.waiting + g.fresh.size(); queued + mine.size() > max_queue_) {
    for (size_t i = 0; i < mine.size(); ++i) metrics_->Count(Counter::kRejectedFull);
    std::string need = batch.size() > 1 ? ", the batch needs " + std::to_string(mine.size()) : "";
    res = {SubmitKind::kFull,
           "the queue is full (" + std::to_string(queued) + " of " + std::to_string(max_queue_) + " jobs queued" +
               need + ")",
           {}};
  } else {
    res.kind = SubmitKind::kQueued;  // p.deduplicated is counted once the group is stored
    p.needs_insert = p.needs_insert || !mine.empty();
    for (auto& j : mine) {
      g.by_key[j.key] = g.fresh.size();
      g.fresh.push_back(std::move(j));
    }
  }
}

}  // namespace kz::service
