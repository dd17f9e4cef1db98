#include "queue/queue_worker.h"

#include <algorithm>

#include "util/fs.h"
#include "util/log.h"
#include "verify/job_input.h"
#include "verify/verifier.h"

namespace kz::queue {
namespace {
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
// The verdict's "status" for the log; "-" when it has none.
std::string StatusOf(const json& verdict) {
  auto it = verdict.find("status");  // end() on a non-object too
  return it != verdict.end() && it->is_string() ? it->get<std::string>() : "-";
}
std::string Fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
}  // namespace

QueueWorker::QueueWorker(Config config) : config_(std::move(config)) {}

QueueWorker::~QueueWorker() {
  Stop();
  if (beat_.joinable()) beat_.join();
}

void QueueWorker::Stop() {
  {
    util::MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
}

QueueWorker::Stats QueueWorker::stats() const {
  util::MutexLock lock(mu_);
  return stats_;
}

void QueueWorker::Event(const std::string& kv) const { util::LogInfo("worker " + config_.name + ": " + kv); }

// Logs `msg` unless it repeats the previous warning within status_every (a Redis outage
// would otherwise log every retry).
void QueueWorker::Warn(const std::string& msg) {
  {
    util::MutexLock lock(mu_);
    auto now = Clock::now();
    if (msg == last_warn_ && now - last_warn_at_ < config_.status_every) return;
    last_warn_ = msg;
    last_warn_at_ = now;
  }
  util::LogWarn("worker " + config_.name + ": " + msg);
}

void QueueWorker::Pause(milliseconds d) {
  util::MutexLock lock(mu_);
  const auto until = Clock::now() + d;
  while (!stop_ && cv_.WaitUntil(mu_, until)) {
  }
}

int QueueWorker::Run() {
  std::string err;
  queue_ = RedisJobQueue::Open(config_.queue, &err);
  beat_queue_ = queue_ ? RedisJobQueue::Open(config_.queue, &err) : nullptr;
  util::RemoveAll(config_.work_dir);  // directories a killed process of this name left
  if (!beat_queue_ || !util::MakeDirs(config_.work_dir, &err)) {
    util::Log(util::LogLevel::kError, "worker " + config_.name + ": " + err);
    return 2;
  }
  Event(std::string("event=start queue=") + config_.queue.url +
        " mode=" + (config_.gpus.empty() ? "cpu" : "gpu" + std::to_string(config_.gpus[0].index)) +
        " reclaim_after_ms=" + std::to_string(config_.queue.reclaim_after.count()));
  if (config_.prestart) next_child_ = verify::Verifier::Prestart(config_.worker, config_.base, RunGpu());
  beat_ = std::thread([this] { HeartbeatLoop(); });
  if (WaitSetup()) {
    while (!stop_) {
      auto job = Next(&err);
      if (job)
        Process(*job);
      else if (!err.empty()) {
        Warn(err + " (retrying)");
        Pause(std::max(queue_->RetryDelay(), milliseconds{200}));
      }
    }
  }
  cv_.NotifyAll();
  beat_.join();
  Stats s = stats();
  Event("event=stop published=" + std::to_string(s.published) + " duplicates=" + std::to_string(s.duplicates) +
        " failed=" + std::to_string(s.failed) + " reclaimed=" + std::to_string(s.reclaimed) +
        " abandoned=" + std::to_string(s.abandoned));
  return 0;
}

// Creates the streams and groups, retrying while Redis is unreachable. False on Stop().
bool QueueWorker::WaitSetup() {
  std::string err;
  while (!stop_) {
    if (queue_->Setup(&err)) return true;
    Warn(err + " (retrying)");
    Pause(std::max(queue_->RetryDelay(), milliseconds{200}));
  }
  return false;
}

// A dead consumer's idle job (looked for every min(reclaim_after / 2, 5 s)), else a new one.
std::optional<ClaimedJob> QueueWorker::Next(std::string* err) {
  auto now = Clock::now();
  if (now >= next_reclaim_) {
    next_reclaim_ = now + std::min<milliseconds>(config_.queue.reclaim_after / 2, milliseconds{5000});
    if (auto job = queue_->Reclaim(config_.name, err); job || !err->empty()) return job;
  }
  auto job = queue_->Claim(config_.name, config_.block, err);
  if (!job && err->empty() && Clock::now() - last_status_ >= config_.status_every) {
    last_status_ = Clock::now();
    Stats s = stats();
    Event("event=idle published=" + std::to_string(s.published) + " failed=" + std::to_string(s.failed));
  }
  return job;
}

void QueueWorker::Process(const ClaimedJob& c) {
  Event("event=claimed job=" + c.job.id + " entry=" + c.entry + " reclaimed=" + (c.reclaimed ? "1" : "0") +
        " deliveries=" + std::to_string(c.deliveries));
  lost_ = false;
  {
    util::MutexLock lock(mu_);
    current_entry_ = c.entry;
    current_id_ = c.job.id;
    current_since_ = Clock::now();
    if (c.reclaimed) ++stats_.reclaimed;
  }
  auto t0 = Clock::now();
  Outcome o = RunJob(c);
  {
    util::MutexLock lock(mu_);
    current_entry_.clear();
  }
  if (stop_ || lost_) {  // the run was (or may have been) cancelled: its verdict is not one
    util::MutexLock lock(mu_);
    ++stats_.abandoned;
    return Event("event=abandoned job=" + c.job.id + " entry=" + c.entry +
                 " reason=" + (lost_ ? "taken_over" : "shutdown") + " (not acked)");
  }
  Event("event=verified job=" + c.job.id + " state=" + ToString(o.verdict.state) + " status=" + o.status +
        " seconds=" + Fixed1(Seconds(Clock::now() - t0)));
  Publish(c, o.verdict);
}

QueueWorker::Outcome QueueWorker::Failed(const ClaimedJob& c, const std::string& why) const {
  return {{c.job.id, VerdictState::kFailed, json{{"error", why}}.dump(), config_.name}, "-"};
}

// Every expected way a job fails (given up, malformed, bad options or backend, a full
// disk) is a failed verdict built here from a returned reason.
QueueWorker::Outcome QueueWorker::RunJob(const ClaimedJob& c) {
  if (c.deliveries > config_.max_deliveries)  // each earlier run died or was stopped
    return Failed(c, "given up after " + std::to_string(c.deliveries) + " deliveries: no worker finished this job");
  if (!c.malformed.empty()) return Failed(c, c.malformed);
  std::string dir = config_.work_dir + "/" + c.entry;  // entry ids are "<ms>-<seq>"
  json verdict;
  std::string failure;
  bool ran = VerifyGuarded(c, dir, &verdict, &failure);
  util::RemoveAll(dir);
  if (!ran) return Failed(c, failure);
  return {{c.job.id, VerdictState::kDone, verdict.dump(), config_.name}, StatusOf(verdict)};
}

// The worker's one catch: an exception out of the verifier is a bug, not a bad job, and
// fails only this job ("internal error: ..."), so that the loop outlives it.
bool QueueWorker::VerifyGuarded(const ClaimedJob& c, const std::string& dir, json* verdict, std::string* err) {
  try {
    return Verify(c, dir, verdict, err);
  } catch (const std::exception& e) {
    *err = std::string("internal error: ") + e.what();
    return false;
  }
}

// As kz serve's scheduler (both through verify::PrepareJob): the sources in a fresh directory, the job's options over
// the worker's, one sample through the verifier (cancelled by Stop or a takeover).
bool QueueWorker::Verify(const ClaimedJob& c, const std::string& dir, json* verdict, std::string* err) {
  const Job& job = c.job;
  verify::JobInput in;
  if (!verify::PrepareJob({job.id, job.task, job.candidate, job.backend, job.options_json}, config_.base, dir, &in,
                          err))
    return false;
  std::vector<verify::Sample>& samples = in.samples;
  verify::Verifier verifier(config_.worker, in.options, config_.gpus);
  verifier.SetCancel([this] { return stop_.load() || lost_.load(); });
  verifier.ShareGate(config_.gate);
  // As a kz serve slot: stage, then run in the child started ahead (torch imported while
  // the previous job ran), and start the next one before this run.
  auto work = verifier.Stage(samples);
  std::optional<verify::Gpu> gpu = RunGpu();
  if (verify::Verifier::Final(work.front())) return *verdict = verifier.Finish(work.front(), gpu), true;
  verify::Verifier::Prestarted child = std::move(next_child_);
  if (config_.prestart) next_child_ = verify::Verifier::Prestart(config_.worker, config_.base, gpu);
  *verdict = verifier.Finish(work.front(), gpu, &child);
  return true;
}

std::optional<verify::Gpu> QueueWorker::RunGpu() const {
  return config_.gpus.empty() ? std::nullopt : std::optional<verify::Gpu>(config_.gpus.front());
}

// Complete, retried while Redis is away (it is idempotent). On Stop the job stays
// pending and is re-run elsewhere: at worst a second run, never a second verdict.
void QueueWorker::Publish(const ClaimedJob& c, const Verdict& v) {
  std::string err;
  for (;;) {
    CompleteResult r = queue_->Complete(c, v, &err);
    if (r != CompleteResult::kError) {
      util::MutexLock lock(mu_);
      if (r == CompleteResult::kPublished)
        ++(v.state == VerdictState::kDone ? stats_.published : stats_.failed);
      else
        ++stats_.duplicates;
      return Event("event=" + std::string(r == CompleteResult::kPublished ? "published" : "duplicate_dropped") +
                   " job=" + c.job.id + " entry=" + c.entry);
    }
    Warn("completing job " + c.job.id + ": " + err + " (retrying)");
    if (stop_) return Event("event=abandoned job=" + c.job.id + " reason=shutdown_during_complete (not acked)");
    Pause(std::max(queue_->RetryDelay(), milliseconds{200}));
  }
}

// While a job runs: Touch its entry every reclaim_after / 4 (so no other worker reclaims
// it), log progress every status_every, and cancel the run when the job was taken over.
void QueueWorker::HeartbeatLoop() {
  const milliseconds period =
      std::clamp<milliseconds>(config_.queue.reclaim_after / 4, milliseconds{200}, milliseconds{10000});
  auto last_log = Clock::now();
  util::MutexLock lock(mu_);
  while (!stop_) {
    const auto until = Clock::now() + period;
    while (!stop_ && cv_.WaitUntil(mu_, until)) {
    }
    if (stop_ || current_entry_.empty()) continue;
    std::string entry = current_entry_, id = current_id_;
    double running_s = Seconds(Clock::now() - current_since_);
    lock.Unlock();
    bool owned = true;
    std::string err;
    if (!beat_queue_->Touch(config_.name, entry, &owned, &err)) Warn("heartbeat for job " + id + ": " + err);
    if (Clock::now() - last_log >= config_.status_every) {
      last_log = Clock::now();
      Event("event=heartbeat job=" + id + " entry=" + entry + " running_s=" + Fixed1(running_s));
    }
    lock.Lock();
    if (!owned && current_entry_ == entry) {
      lost_ = true;
      util::LogWarn("worker " + config_.name + ": job " + id + " (entry " + entry +
                    ") was taken over by another worker or completed: cancelling this run");
    }
  }
}

}  // namespace kz::queue
