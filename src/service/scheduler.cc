#include "service/scheduler.h"

#include <algorithm>
#include <cstdio>

#include "util/fs.h"
#include "util/hash.h"
#include "util/log.h"
#include "verify/verifier.h"

namespace kz::service {
using nlohmann::json;

namespace {
int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}
}  // namespace

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
    for (auto& j : pending) queue_.push_back(j.id);
  }
  if (!pending.empty()) util::LogInfo("serve: resuming " + std::to_string(pending.size()) + " queued job(s)");
  worker_ = std::thread([this] { WorkerLoop(); });
  return true;
}

std::string Scheduler::NewId() {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng_()));
  return buf;
}

Scheduler::SubmitResult Scheduler::Submit(const VerifyRequest& r) {
  SubmitResult res;
  std::string key = JobKey(r, fingerprint_);
  std::lock_guard lock(mu_);  // find + insert + enqueue as one step: no duplicate of a key
  if (auto existing = store_->FindByKey(key, &res.error)) {
    metrics_.Count(Counter::kDeduplicated);
    return {SubmitKind::kExisting, existing->id, existing->state, ""};
  }
  if (!res.error.empty()) return res;
  if (stopping_) return {SubmitKind::kClosed, "", "", "the server is shutting down"};
  if (queue_.size() >= config_.max_queue) {
    metrics_.Count(Counter::kRejectedFull);
    return {SubmitKind::kFull, "", "", "the queue is full (" + std::to_string(queue_.size()) + " jobs)"};
  }
  store::Job j;
  j.id = NewId();
  j.key = key;
  j.state = store::kQueued;
  j.submitted_at_ms = NowMs();
  j.backend = r.backend;
  j.options_json = r.options.dump();
  j.task_hash = util::Hash128Hex(r.task);
  j.candidate_hash = util::Hash128Hex(r.candidate);
  j.task_source = r.task;
  j.candidate_source = r.candidate;
  if (!store_->Insert(j, &res.error)) return res;
  queue_.push_back(j.id);
  metrics_.Count(Counter::kAccepted);
  work_cv_.notify_one();
  return {SubmitKind::kQueued, j.id, j.state, ""};
}

std::optional<store::Job> Scheduler::Wait(const std::string& id, std::chrono::milliseconds timeout,
                                          std::string* err) {
  {
    std::unique_lock lock(mu_);
    done_cv_.wait_for(lock, timeout, [&] {
      bool queued = std::find(queue_.begin(), queue_.end(), id) != queue_.end();
      return running_ != id && (stopping_ || !queued);
    });
  }
  return store_->Get(id, err);
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

void Scheduler::WorkerLoop() {
  for (;;) {
    std::string id;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // queued jobs stay queued in the store
      id = queue_.front();
      queue_.pop_front();
      running_ = id;
    }
    RunJob(id);
    {
      std::lock_guard lock(mu_);
      running_.clear();
    }
    done_cv_.notify_all();
  }
}

void Scheduler::RunJob(const std::string& id) {
  std::string err;
  auto job = store_->Get(id, &err);
  if (!job || !store_->SetState(id, store::kRunning, &err)) {
    util::LogWarn("serve: job " + id + ": " + (err.empty() ? "not in the store" : err));
    return;
  }
  util::LogInfo("serve: job " + id + " running");
  std::string state(store::kDone);
  json verdict;
  try {
    verdict = Verify(*job);
    metrics_.CountVerdict(verdict.value("status", ""));
  } catch (const std::exception& e) {
    state = store::kFailed;
    verdict = {{"error", std::string("internal error: ") + e.what()}};
    metrics_.Count(Counter::kFailed);
  }
  if (!store_->Finish(id, state, verdict.dump(), &err)) util::LogWarn("serve: job " + id + ": " + err);
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
  json verdict = verifier.VerifyAll({s}).front();
  util::RemoveAll(dir);
  return verdict;
}

}  // namespace kz::service
