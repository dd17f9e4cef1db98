// Execution: the intake of admitted jobs, cancelling and waiting for them.
#include <algorithm>

#include "service/execution.h"
#include "util/fs.h"
#include "util/log.h"

namespace kz::service {
using nlohmann::json;

JobIntake::Room Execution::Look() const {
  util::MutexLock lock(mu_);
  return {WaitingLocked(), stopping_};
}

void Execution::Enqueue(const std::vector<store::Job>& jobs) {
  {
    util::MutexLock lock(mu_);
    for (const auto& j : jobs) queue_.push_back({j.id, j.priority, j.client, seq_++});
  }
  if (jobs.size() > 1)
    work_cv_.NotifyAll();  // every idle build thread has work
  else
    work_cv_.NotifyOne();
}

bool Execution::Queued(const std::string& id) const {
  return std::any_of(queue_.begin(), queue_.end(), [&](const QueuedJob& q) { return q.id == id; });
}

CancelResult Execution::Cancel(const std::string& id) {
  CancelResult res;
  util::MutexLock lock(mu_);
  auto job = store_->Get(id, &res.error);
  if (!job) {
    res.kind = res.error.empty() ? CancelKind::kNotFound : CancelKind::kError;
    if (res.error.empty()) res.error = "no job " + id;
    return res;
  }
  auto active = active_.find(id);                  // being staged, staged, or running in a slot
  bool is_dispatched = dispatched_.count(id) > 0;  // remote mode: its verdict will be dropped
  bool is_active = active != active_.end() || is_dispatched;
  if (job->state != store::JobState::kQueued && !(job->state == store::JobState::kRunning && is_active)) {
    res.kind = CancelKind::kConflict;
    res.error = "job " + id + " is " + store::ToString(job->state) + ": only queued or running jobs can be cancelled";
    res.job = std::move(job);
    return res;
  }
  bool changed = false;
  std::string where = InSlot(id) || (is_dispatched && job->state == store::JobState::kRunning) ? "running" : "queued";
  json note = {{"cancelled_while", where}};
  if (!store_->Cancel(id, note.dump(), &changed, &res.error)) return res;
  std::erase_if(queue_, [&](const QueuedJob& q) { return q.id == id; });
  std::string staged_dir;
  dispatched_.erase(id);
  if (active != active_.end()) {
    ActivePtr a = active->second;
    a->cancel = true;                 // a build or slot thread drops it; its children are killed
    if (std::erase(ready_, a) > 0) {  // staged: nobody else holds it
      active_.erase(id);
      staged_dir = a->dir;
    }
  }
  lock.Unlock();
  if (!staged_dir.empty()) util::RemoveAll(staged_dir);
  done_cv_.NotifyAll();
  work_cv_.NotifyAll();
  util::LogInfo("serve: job " + id + " cancelled (" + note["cancelled_while"].get<std::string>() + ")");
  res.job = store_->Get(id, &res.error);
  res.kind = changed && res.job ? CancelKind::kCancelled : CancelKind::kError;
  if (!changed) res.error = "job " + id + " changed state while being cancelled";
  return res;
}

std::optional<store::Job> Execution::Wait(const std::string& id, std::chrono::milliseconds timeout, std::string* err) {
  {
    util::MutexLock lock(mu_);
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!(stopping_ ? !InSlot(id) : !Queued(id) && !active_.count(id) && !dispatched_.count(id)) &&
           done_cv_.WaitUntil(mu_, until)) {
    }
  }
  return store_->Get(id, err);
}

}  // namespace kz::service
