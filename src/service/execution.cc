// Execution: construction, start/stop, metrics, and the two kinds of thread (build, slot).
#include "service/execution.h"

#include <algorithm>

#include "util/fs.h"
#include "util/log.h"

namespace kz::service {
using nlohmann::json;

namespace {
double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

Execution::Execution(store::JobStore* store, SchedulerConfig config, Metrics* metrics)
    : store_(store), config_(std::move(config)), metrics_(*metrics) {
  if (remote()) return;  // no local slots: kz workers run the jobs
  const int k = std::max(1, config_.base.gpu_concurrency);
  auto new_gate = [&](const std::string& device, uint64_t memory_bytes) {
    if (k == 1) return std::shared_ptr<verify::GateHub>();
    // 10 % of the device's memory kept back for contexts and fragmentation (as kz verify)
    auto hub = std::make_shared<verify::GateHub>(memory_bytes / 10 * 9, k);
    gates_.emplace_back(device, hub);
    return hub;
  };
  if (config_.gpus.empty() || config_.base.cpu_only) {
    // CPU mode: the --cpu-slots share one gate (every stage is shared there; for tests).
    slots_.resize(std::max<size_t>(1, config_.cpu_slots));
    auto gate = new_gate("cpu", 0);
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].label = "cpu:" + std::to_string(i);
      slots_[i].gate = gate;
    }
  } else {
    for (const auto& g : config_.gpus) {
      const std::string device = "cuda:" + std::to_string(g.index);
      auto gate = new_gate(device, g.memory_bytes);
      for (int j = 0; j < k; ++j) {
        Slot slot;
        slot.gpu = g;
        slot.label = k == 1 ? device : device + "/" + std::to_string(j);
        slot.gate = gate;
        slots_.push_back(std::move(slot));
      }
    }
  }
}

size_t Execution::MaxReady() const {
  return config_.max_ready > 0 ? config_.max_ready : 2 * slots_.size() + config_.build_threads;
}

bool Execution::Start(std::string* err) {
  if (!util::MakeDirs(config_.work_dir, err)) return false;
  std::vector<store::Job> pending;
  if (!store_->RequeuePending(&pending, err)) return false;
  {
    util::MutexLock lock(mu_);
    for (auto& j : pending) queue_.push_back({j.id, j.priority, j.client, seq_++});
  }
  if (!pending.empty()) util::LogInfo("serve: resuming " + std::to_string(pending.size()) + " queued job(s)");
  if (!config_.run_jobs) {
    util::LogWarn("serve: --no-run: jobs are accepted and stored but not run");
    return true;
  }
  if (remote()) return StartRemote(err);
  for (size_t i = 0; i < std::max<size_t>(1, config_.build_threads); ++i)
    threads_.emplace_back([this] { BuildLoop(); });
  for (size_t i = 0; i < slots_.size(); ++i) threads_.emplace_back([this, i] { SlotLoop(i); });
  return true;
}

void Execution::Drain() {
  {
    util::MutexLock lock(mu_);
    stopping_ = true;
    abandon_builds_ = true;
  }
  work_cv_.NotifyAll();
  ready_cv_.NotifyAll();
  done_cv_.NotifyAll();
}

void Execution::Stop() {
  Drain();
  {
    util::MutexLock lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                 std::chrono::duration<double>(config_.shutdown_grace_s));
    bool idle = RunningLocked() == 0;
    while (!idle && done_cv_.WaitUntil(mu_, deadline)) idle = RunningLocked() == 0;
    if (!idle && RunningLocked() > 0)
      util::LogWarn("serve: jobs still running after the shutdown grace (" +
                    std::to_string(static_cast<int>(config_.shutdown_grace_s)) +
                    " s): their children are killed; they run again at the next start");
  }
  abandon_runs_ = true;  // seen by the running verifiers within Verifier::kCancelPollMs
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  if (verdicts_) verdicts_->Stop();  // verdicts not read yet stay pending in Redis
}

size_t Execution::QueueDepth() const {
  util::MutexLock lock(mu_);
  return WaitingLocked();
}

size_t Execution::WaitingLocked() const { return queue_.size() + building_ + ready_.size() + dispatched_.size(); }

size_t Execution::Running() const {
  util::MutexLock lock(mu_);
  return RunningLocked();
}

size_t Execution::RunningLocked() const {
  return static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.running.empty(); }));
}

std::string Execution::RenderMetrics() const {
  MetricsSnapshot snap;
  {
    util::MutexLock lock(mu_);
    snap.queue_depth = WaitingLocked();
    snap.staged = ready_.size();
    snap.building = building_;
    auto need = [&snap](const ActivePtr& a, uint64_t* sum) {
      if (a && a->footprint_need) *sum += *a->footprint_need;
      else ++snap.footprint_unknown;
    };
    for (const auto& a : ready_) need(a, &snap.staged_footprint_bytes);
    for (const auto& s : slots_)
      if (auto it = active_.find(s.running); !s.running.empty() && it != active_.end())
        need(it->second, &snap.running_footprint_bytes);
    for (const auto& s : slots_) {
      double running_for = s.running.empty() ? 0 : Since(s.since);
      snap.running += s.running.empty() ? 0 : 1;
      snap.running_for_s += running_for;
      snap.slots.push_back({s.label, s.busy_s + running_for});
    }
  }
  for (const auto& [device, hub] : gates_) snap.gates.emplace_back(device, hub->stats());
  std::string err;
  if (!store_->CountByState(&snap.jobs_by_state, &err)) util::LogWarn("serve: metrics: " + err);
  return metrics_.Render(snap);
}

std::optional<size_t> Execution::UrgentIndex() const {
  if (queue_.empty()) return std::nullopt;
  // What a free slot would pick if every queued job were staged. When that pick is a
  // queued job, it is also the pick among the queued jobs alone (PickNext's order is a
  // per-client minimum), so only that one joins the staged ones: no copy of the queue.
  size_t q = *PickNext(queue_, slot_served_);
  std::vector<QueuedJob> view;
  view.reserve(ready_.size() + 1);
  for (const auto& r : ready_) view.push_back({r->id, r->priority, r->client, r->seq});
  view.push_back(queue_[q]);
  return *PickNext(view, slot_served_) == view.size() - 1 ? std::optional(q) : std::nullopt;
}

Execution::ActivePtr Execution::Take() {
  std::optional<size_t> urgent = ready_.size() + building_ < MaxReady() ? std::nullopt : UrgentIndex();
  size_t i = urgent ? *urgent : *PickNext(queue_, served_);
  auto a = std::make_shared<ActiveJob>();
  a->id = queue_[i].id;
  a->client = queue_[i].client;
  a->priority = queue_[i].priority;
  a->seq = queue_[i].seq;
  served_[a->client] = ++tick_;
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
  active_[a->id] = a;
  return a;
}

Execution::ActivePtr Execution::TakeReady() {
  std::vector<QueuedJob> view;  // fairness again: the build threads' lookahead must not undo it
  for (const auto& r : ready_) view.push_back({r->id, r->priority, r->client, r->seq});
  size_t i = *PickNext(view, slot_served_);
  ActivePtr a = ready_[i];
  slot_served_[a->client] = ++tick_;
  ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
  return a;
}

void Execution::BuildLoop() {
  for (;;) {
    ActivePtr a;
    {
      util::MutexLock lock(mu_);
      while (!(stopping_ || (!queue_.empty() && (ready_.size() + building_ < MaxReady() || UrgentIndex()))))
        work_cv_.Wait(mu_);
      if (stopping_) return;  // queued jobs stay queued in the store
      a = Take();
      ++building_;
    }
    Staging staging;
    try {
      staging = StageJob(*a);
    } catch (const std::exception& e) {  // unexpected: a bug, not a bad job
      staging = {Staging::Kind::kFailed, std::string("internal error: ") + e.what()};
    }
    HandOver(a, staging);
  }
}

void Execution::HandOver(const ActivePtr& a, const Staging& staging) {
  util::MutexLock lock(mu_);
  --building_;
  if (staging.kind == Staging::Kind::kFailed) return Complete(a, store::JobState::kFailed, {{"error", staging.reason}});
  if (staging.kind == Staging::Kind::kDropped || a->cancel || stopping_) {  // stopping: requeued at next start
    lock.Unlock();
    return Forget(a);
  }
  if (verify::Verifier::Final(a->work.front())) {  // no run needed: no slot either
    lock.Unlock();
    if (!MarkRunning(*a)) return Forget(a);
    json verdict = a->verifier->Finish(a->work.front(), std::nullopt);
    lock.Lock();
    return Complete(a, store::JobState::kDone, verdict);
  }
  a->staged_at = std::chrono::steady_clock::now();
  ready_.push_back(a);
  ready_cv_.NotifyOne();
}

void Execution::SlotLoop(size_t k) {
  Slot& slot = slots_[k];
  // The slot's next run child, started ahead: it imports torch while the slot is idle or
  // running the previous sample, and gets its sample (and its wall clock) in Finish.
  auto prestart = [&] {
    return config_.prestart ? verify::Verifier::Prestart(config_.worker, config_.base, slot.gpu, config_.launcher)
                            : verify::Verifier::Prestarted();
  };
  verify::Verifier::Prestarted next = prestart();
  for (;;) {
    ActivePtr a;
    {
      util::MutexLock lock(mu_);
      while (!stopping_ && ready_.empty()) ready_cv_.Wait(mu_);
      if (stopping_) return;  // staged jobs stay "running" in the store: requeued at next start
      a = TakeReady();
      slot.running = a->id;
      slot.since = std::chrono::steady_clock::now();
      metrics_.Observe(Stage::kSlotWait, Since(a->staged_at));
    }
    work_cv_.NotifyOne();  // room in ready_: a build thread may stage the next job
    if (!MarkRunning(*a)) {  // cancelled between the pick and now
      {
        util::MutexLock lock(mu_);
        slot.running.clear();
      }
      Forget(a);
      continue;
    }
    util::LogInfo("serve: job " + a->id + " on " + slot.label);
    verify::Verifier::Prestarted child = std::move(next);
    next = prestart();
    store::JobState state = store::JobState::kDone;
    json verdict;
    try {
      a->verifier->ShareGate(slot.gate);  // the job's Verifier: this GPU's gate (or none)
      verdict = a->verifier->Finish(a->work.front(), slot.gpu, &child);
    } catch (const std::exception& e) {
      state = store::JobState::kFailed;
      verdict = {{"error", std::string("internal error: ") + e.what()}};
    }
    util::MutexLock lock(mu_);
    slot.busy_s += Since(slot.since);
    metrics_.AddBusy(Since(slot.since));
    slot.running.clear();
    // Killed by Stop() past its grace (or just finished as the grace ended: it runs again).
    if (abandon_runs_ && !a->cancel) Interrupted(a);
    else Complete(a, state, verdict);
  }
}

}  // namespace kz::service
