// Execution, remote mode (kz serve --queue redis://…): the dispatcher hands queued jobs to
// Redis Streams in the picker's order, and the verdict reader stores what the workers send
// back (docs/queue.md). Enqueue is idempotent per job id, so a job requeued by a restart is
// never run twice for the same verdict.
#include <thread>

#include "service/execution.h"
#include "util/clock.h"
#include "util/log.h"

namespace kz::service {
using nlohmann::json;

bool Execution::StartRemote(std::string* err) {
  redis_ = queue::RedisJobQueue::Open(config_.remote, err);
  if (!redis_) return false;
  if (!redis_->Setup(err)) return *err = "cannot set up the Redis queue at " + config_.remote.url + ": " + *err, false;
  verdicts_ = std::make_unique<queue::VerdictReader>(
      config_.remote, "front", [this](const queue::Verdict& v) { return OnRemoteVerdict(v); });
  if (!verdicts_->Start(err)) return false;
  threads_.emplace_back([this] { DispatchLoop(); });
  util::LogInfo("serve: jobs go to kz workers through " + config_.remote.url + " (prefix " + config_.remote.prefix + ")");
  return true;
}

void Execution::DispatchLoop() {
  for (;;) {
    QueuedJob q;
    {
      util::MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) work_cv_.Wait(mu_);
      if (stopping_) return;
      size_t i = *PickNext(queue_, served_);
      q = queue_[i];
      served_[q.client] = ++tick_;
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
      dispatched_.insert(q.id);
    }
    std::string err, entry;
    auto job = store_->Get(q.id, &err);
    bool pending = job && (job->state == store::JobState::kQueued || job->state == store::JobState::kRunning);
    auto r = pending ? redis_->Enqueue({job->id, job->task_source, job->candidate_source, job->backend,
                                        job->options_json}, &entry, &err)
                     : queue::EnqueueResult::kError;
    if (pending && r != queue::EnqueueResult::kError) {
      bool started = false;  // a job requeued by a restart may be "running" already
      if (job->state == store::JobState::kQueued && store_->MarkRunning(q.id, &started, &err) && started &&
          job->submitted_at_ms > 0)
        metrics_.Observe(Stage::kQueueWait, static_cast<double>(util::UnixMs() - job->submitted_at_ms) / 1000.0);
      util::LogInfo("serve: job " + q.id + (r == queue::EnqueueResult::kDuplicate ? " already" : "") +
                    " in the Redis queue (entry " + entry + ")");
      continue;
    }
    util::MutexLock lock(mu_);
    dispatched_.erase(q.id);
    if (!pending) {  // cancelled meanwhile, or a store error: nothing to send
      if (!err.empty()) util::LogWarn("serve: job " + q.id + ": " + err);
      done_cv_.NotifyAll();
      continue;
    }
    queue_.push_back(q);  // Redis away: keep it, retry after the connection's backoff
    util::LogWarn("serve: cannot enqueue job " + q.id + " in Redis (will retry): " + err);
    auto delay = std::max(redis_->RetryDelay(), std::chrono::milliseconds(200));
    const auto until = std::chrono::steady_clock::now() + delay;
    while (!stopping_ && work_cv_.WaitUntil(mu_, until)) {
    }
  }
}

bool Execution::OnRemoteVerdict(const queue::Verdict& v) {
  std::string err;
  auto job = store_->Get(v.job_id, &err);
  if (!job && !err.empty()) return false;  // store error: offered again later
  bool open = job && (job->state == store::JobState::kQueued || job->state == store::JobState::kRunning);
  if (open) {
    if (!store_->Finish(v.job_id, v.state == queue::VerdictState::kDone ? store::JobState::kDone : store::JobState::kFailed, v.verdict_json, &err)) {
      auto now = store_->Get(v.job_id, &err);
      if (!now || now->state == store::JobState::kQueued || now->state == store::JobState::kRunning) return false;
    } else {
      json verdict = json::parse(v.verdict_json, nullptr, false);
      if (v.state == queue::VerdictState::kDone && verdict.is_object()) metrics_.ObserveVerdict(verdict, std::nullopt);
      else metrics_.Count(Counter::kFailed);
      util::LogInfo("serve: job " + v.job_id + " " + queue::ToString(v.state) + " by worker " + v.worker + ": " +
                    (verdict.is_object() ? verdict.value("status", "-") : "-"));
    }
  } else {
    util::LogInfo("serve: verdict for job " + v.job_id + " dropped: " + (job ? "it is " + store::ToString(job->state) : "unknown job"));
  }
  {
    util::MutexLock lock(mu_);
    dispatched_.erase(v.job_id);
  }
  done_cv_.NotifyAll();
  work_cv_.NotifyAll();
  return true;
}

}  // namespace kz::service
