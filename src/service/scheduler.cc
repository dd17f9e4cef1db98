#include "service/scheduler.h"

#include <algorithm>

#include "util/fs.h"
#include "util/clock.h"
#include "util/log.h"
#include "verify/verifier.h"

namespace kz::service {
using nlohmann::json;

using util::UnixMs;

Scheduler::Scheduler(store::JobStore* store, Config config)
    : store_(store), config_(std::move(config)), fingerprint_(Fingerprint()), rng_(std::random_device{}()) {}

std::string Scheduler::Fingerprint() const {
  const auto& o = config_.base;
  std::string device = config_.gpus.empty() || o.cpu_only ? "cpu" : config_.gpus.front().name;
  return "device=" + device + ";policy=" + o.policy + ";trials=" + std::to_string(o.trials) +
         ";timing=" + (o.timing ? "1" : "0") + ";timeout=" + std::to_string(o.timeout_s) +
         ";screen=" + (o.screen ? "1" : "0");
}

bool Scheduler::Start(std::string* err) {
  if (!util::MakeDirs(config_.work_dir, err)) return false;
  std::vector<store::Job> pending;
  if (!store_->RequeuePending(&pending, err)) return false;
  {
    std::lock_guard lock(mu_);
    for (auto& j : pending) queue_.push_back({j.id, j.priority, j.client, seq_++});
  }
  if (!pending.empty()) util::LogInfo("serve: resuming " + std::to_string(pending.size()) + " queued job(s)");
  if (config_.run_jobs) worker_ = std::thread([this] { WorkerLoop(); });
  else util::LogWarn("serve: --no-run: jobs are accepted and stored but not run");
  return true;
}

void Scheduler::Drain() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
}

void Scheduler::Stop() {
  Drain();
  if (worker_.joinable()) worker_.join();
}

size_t Scheduler::QueueDepth() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

bool Scheduler::Busy() const {
  std::lock_guard lock(mu_);
  return !running_.empty();
}

std::string Scheduler::RenderMetrics() const {
  MetricsSnapshot snap;
  {
    std::lock_guard lock(mu_);
    snap.queue_depth = queue_.size();
    snap.running = !running_.empty();
    if (snap.running)
      snap.running_for_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - running_since_).count();
  }
  std::string err;
  if (!store_->CountByState(&snap.jobs_by_state, &err)) util::LogWarn("serve: metrics: " + err);
  return metrics_.Render(snap);
}

void Scheduler::WorkerLoop() {
  for (;;) {
    std::string id;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // queued jobs stay queued in the store
      size_t i = *PickNext(queue_, served_);
      id = queue_[i].id;
      served_[queue_[i].client] = ++tick_;
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
      running_ = id;
      running_since_ = std::chrono::steady_clock::now();
      cancel_running_ = false;
    }
    RunJob(id);
    {
      std::lock_guard lock(mu_);
      metrics_.AddBusy(std::chrono::duration<double>(std::chrono::steady_clock::now() - running_since_).count());
      running_.clear();
    }
    done_cv_.notify_all();
  }
}

void Scheduler::RunJob(const std::string& id) {
  std::string err;
  bool started = false;
  auto job = store_->Get(id, &err);
  if (!job || !store_->MarkRunning(id, &started, &err) || !started) {
    if (!started && err.empty()) return util::LogInfo("serve: job " + id + " cancelled before it started");
    return util::LogWarn("serve: job " + id + ": " + (err.empty() ? "not in the store" : err));
  }
  double queue_wait_s = static_cast<double>(UnixMs() - job->submitted_at_ms) / 1000.0;
  util::LogInfo("serve: job " + id + " running (client " + job->client + ", priority " +
                std::to_string(job->priority) + ")");
  std::string state(store::kDone);
  json verdict;
  try {
    verdict = Verify(*job);
  } catch (const std::exception& e) {
    state = store::kFailed;
    verdict = {{"error", std::string("internal error: ") + e.what()}};
  }
  std::lock_guard lock(mu_);  // Cancel() writes the store and the flag under mu_ too
  if (cancel_running_) return util::LogInfo("serve: job " + id + " cancelled while running");
  if (!store_->Finish(id, state, verdict.dump(), &err)) return util::LogWarn("serve: job " + id + ": " + err);
  if (state == store::kDone) metrics_.ObserveVerdict(verdict, queue_wait_s);
  else metrics_.Count(Counter::kFailed);
  util::LogInfo("serve: job " + id + " " + state + ": " + verdict.value("status", "-"));
}

json Scheduler::Verify(const store::Job& job) {
  std::string err, dir = config_.work_dir + "/" + job.id;
  if (!util::MakeDirs(dir, &err) || !util::WriteFileAtomic(dir + "/task.py", job.task_source, &err) ||
      !util::WriteFileAtomic(dir + "/candidate.py", job.candidate_source, &err))
    throw std::runtime_error(err);
  verify::VerifyOptions o = config_.base;
  if (!ApplyOptions(json::parse(job.options_json), &o, &err)) throw std::runtime_error(err);
  verify::Sample s{dir + "/task.py", dir + "/candidate.py", job.backend, std::nullopt, job.id};
  verify::Verifier verifier(config_.worker, o, config_.gpus);
  verifier.SetCancel([this] { return cancel_running_.load(); });
  json verdict = verifier.VerifyAll({s}).front();
  util::RemoveAll(dir);
  return verdict;
}

}  // namespace kz::service
