// Scheduler: accepting (Submit, SubmitBatch), cancelling and waiting for jobs.
#include <algorithm>
#include <cstdio>
#include <map>

#include "service/scheduler.h"
#include "util/hash.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"

namespace kz::service {
using nlohmann::json;

using util::UnixMs;

std::string Scheduler::NewId() {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng_()));
  return buf;
}

bool Scheduler::Queued(const std::string& id) const {
  return std::any_of(queue_.begin(), queue_.end(), [&](const QueuedJob& q) { return q.id == id; });
}

store::Job Scheduler::NewJob(const Submission& s, const std::string& key) {
  const VerifyRequest& r = s.request;
  store::Job j;
  j.id = NewId();
  j.key = key;
  j.state = store::kQueued;
  j.submitted_at_ms = UnixMs();
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

Scheduler::SubmitResult Scheduler::Submit(const Submission& s) {
  BatchResult b = SubmitBatch({s});
  if (b.kind != SubmitKind::kQueued) return {b.kind, "", "", b.error};
  return b.items.front();
}

Scheduler::BatchResult Scheduler::SubmitBatch(const std::vector<Submission>& batch) {
  BatchResult res;
  std::vector<std::string> keys;
  for (const auto& s : batch) keys.push_back(JobKey(s.request, fingerprint_));
  std::lock_guard lock(mu_);  // find + insert + enqueue as one step: no duplicate of a key
  std::vector<store::Job> fresh;
  std::map<std::string, size_t> fresh_by_key;  // key -> index in fresh
  size_t deduplicated = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (auto existing = store_->FindByKey(keys[i], &res.error)) {
      res.items.push_back({SubmitKind::kExisting, existing->id, existing->state, ""});
      ++deduplicated;
    } else if (!res.error.empty()) {
      return {SubmitKind::kError, res.error, {}};
    } else if (auto it = fresh_by_key.find(keys[i]); it != fresh_by_key.end()) {
      res.items.push_back({SubmitKind::kExisting, fresh[it->second].id, std::string(store::kQueued), ""});
      ++deduplicated;
    } else {
      fresh_by_key[keys[i]] = fresh.size();
      fresh.push_back(NewJob(batch[i], keys[i]));
      res.items.push_back({SubmitKind::kQueued, fresh.back().id, std::string(store::kQueued), ""});
    }
  }
  if (!fresh.empty() && stopping_) return {SubmitKind::kClosed, "the server is shutting down", {}};
  size_t waiting = queue_.size() + building_ + ready_.size() + dispatched_.size();
  if (waiting + fresh.size() > config_.max_queue) {
    for (size_t i = 0; i < fresh.size(); ++i) metrics_.Count(Counter::kRejectedFull);
    std::string need = batch.size() > 1 ? ", the batch needs " + std::to_string(fresh.size()) : "";
    return {SubmitKind::kFull,
            "the queue is full (" + std::to_string(waiting) + " of " + std::to_string(config_.max_queue) +
                " jobs queued" + need + ")",
            {}};
  }
  if (!fresh.empty() && !store_->InsertAll(fresh, &res.error)) return {SubmitKind::kError, res.error, {}};
  for (const auto& j : fresh) queue_.push_back({j.id, j.priority, j.client, seq_++});
  for (size_t i = 0; i < fresh.size(); ++i) metrics_.Count(Counter::kAccepted);
  for (size_t i = 0; i < deduplicated; ++i) metrics_.Count(Counter::kDeduplicated);
  if (!fresh.empty()) work_cv_.notify_one();
  res.kind = SubmitKind::kQueued;
  return res;
}

Scheduler::CancelResult Scheduler::Cancel(const std::string& id) {
  CancelResult res;
  std::unique_lock lock(mu_);
  auto job = store_->Get(id, &res.error);
  if (!job) {
    res.kind = res.error.empty() ? CancelKind::kNotFound : CancelKind::kError;
    if (res.error.empty()) res.error = "no job " + id;
    return res;
  }
  auto active = active_.find(id);  // being staged, staged, or running in a slot
  bool is_dispatched = dispatched_.count(id) > 0;  // remote mode: its verdict will be dropped
  bool is_active = active != active_.end() || is_dispatched;
  if (job->state != store::kQueued && !(job->state == store::kRunning && is_active)) {
    res.kind = CancelKind::kConflict;
    res.error = "job " + id + " is " + job->state + ": only queued or running jobs can be cancelled";
    res.job = std::move(job);
    return res;
  }
  bool changed = false;
  std::string where = InSlot(id) || (is_dispatched && job->state == store::kRunning) ? "running" : "queued";
  json note = {{"cancelled_while", where}};
  if (!store_->Cancel(id, note.dump(), &changed, &res.error)) return res;
  std::erase_if(queue_, [&](const QueuedJob& q) { return q.id == id; });
  std::string staged_dir;
  dispatched_.erase(id);
  if (active != active_.end()) {
    ActivePtr a = active->second;
    a->cancel = true;  // a build or slot thread drops it; its children are killed
    if (std::erase(ready_, a) > 0) {  // staged: nobody else holds it
      active_.erase(id);
      staged_dir = a->dir;
    }
  }
  lock.unlock();
  if (!staged_dir.empty()) util::RemoveAll(staged_dir);
  done_cv_.notify_all();
  work_cv_.notify_all();
  util::LogInfo("serve: job " + id + " cancelled (" + note["cancelled_while"].get<std::string>() + ")");
  res.job = store_->Get(id, &res.error);
  res.kind = changed && res.job ? CancelKind::kCancelled : CancelKind::kError;
  if (!changed) res.error = "job " + id + " changed state while being cancelled";
  return res;
}

std::optional<store::Job> Scheduler::Wait(const std::string& id, std::chrono::milliseconds timeout,
                                          std::string* err) {
  {
    std::unique_lock lock(mu_);
    done_cv_.wait_for(lock, timeout, [&] {
      return stopping_ ? !InSlot(id) : !Queued(id) && !active_.count(id) && !dispatched_.count(id);
    });
  }
  return store_->Get(id, err);
}

}  // namespace kz::service
