// Execution: a job's way through the pipeline (staging on a build thread, completion).
#include "service/execution.h"

#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/job_input.h"

namespace kz::service {
using nlohmann::json;

Execution::Staging Execution::StageJob(ActiveJob& a) {
  std::string err;
  auto job = store_->Get(a.id, &err);
  if (!job || job->state != store::JobState::kQueued) {
    if (job) util::LogInfo("serve: job " + a.id + " is " + store::ToString(job->state) + ": not staged");
    else util::LogWarn("serve: job " + a.id + ": " + (err.empty() ? "not in the store" : err));
    return {Staging::Kind::kDropped, ""};
  }
  a.queue_wait_s = static_cast<double>(util::UnixMs() - job->submitted_at_ms) / 1000.0;
  util::LogInfo("serve: job " + a.id + " staging (client " + job->client + ", priority " +
                std::to_string(job->priority) + ")");
  a.dir = config_.work_dir + "/" + a.id;
  verify::JobInput in;
  if (!verify::PrepareJob({a.id, job->task_source, job->candidate_source, job->backend, job->options_json}, config_.base,
                          a.dir, &in, &err))
    return {Staging::Kind::kFailed, err};
  a.samples = std::move(in.samples);
  a.verifier = std::make_unique<verify::Verifier>(config_.worker, in.options, config_.gpus, config_.launcher);
  // While staging, a stop abandons the build too; once staged, only a cancel stops the run.
  a.verifier->SetCancel([&a, this] { return a.cancel.load() || abandon_builds_.load(); });
  a.work = a.verifier->Stage(a.samples);
  const json fp = a.work[0].verdict.value("footprint", json());
  if (fp.is_object() && fp.value("need_bytes", json()).is_number_unsigned())
    a.footprint_need = fp["need_bytes"].get<uint64_t>();
  // Once staged: a cancel, or a shutdown whose grace for running jobs has passed.
  a.verifier->SetCancel([&a, this] { return a.cancel.load() || abandon_runs_.load(); });
  return {Staging::Kind::kStaged, ""};
}

void Execution::Complete(const ActivePtr& a, store::JobState state, const json& verdict) {
  std::string err;
  active_.erase(a->id);
  if (!a->dir.empty()) util::RemoveAll(a->dir);
  done_cv_.NotifyAll();
  if (a->cancel) return util::LogInfo("serve: job " + a->id + " cancelled while running");
  if (!store_->Finish(a->id, state, verdict.dump(), &err)) return util::LogWarn("serve: job " + a->id + ": " + err);
  if (state == store::JobState::kDone) metrics_.ObserveVerdict(verdict, a->queue_wait_s);
  else metrics_.Count(Counter::kFailed);
  util::LogInfo("serve: job " + a->id + " " + store::ToString(state) + ": " + verdict.value("status", "-"));
}

void Execution::Interrupted(const ActivePtr& a) {
  active_.erase(a->id);
  if (!a->dir.empty()) util::RemoveAll(a->dir);
  done_cv_.NotifyAll();
  util::LogInfo("serve: job " + a->id + " interrupted by the shutdown; it runs again at the next start");
}

void Execution::Forget(const ActivePtr& a) {
  {
    util::MutexLock lock(mu_);
    active_.erase(a->id);
  }
  if (!a->dir.empty()) util::RemoveAll(a->dir);
  done_cv_.NotifyAll();
}

bool Execution::MarkRunning(const ActiveJob& a) {
  std::string err;
  bool started = false;
  if (store_->MarkRunning(a.id, &started, &err) && started) {
    util::LogInfo("serve: job " + a.id + " running");
    return true;
  }
  if (err.empty()) util::LogInfo("serve: job " + a.id + " cancelled before it started");
  else util::LogWarn("serve: job " + a.id + ": " + err);
  return false;
}

bool Execution::InSlot(const std::string& id) const {
  return std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.running == id; });
}

}  // namespace kz::service
