// Metrics of `kz serve`, rendered in the Prometheus text format. Counters are lock-free
// (relaxed atomics); the histograms take a mutex each. Any thread may count or render.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/histogram.h"
#include "verify/gate_hub.h"
#include "verify/status.h"

namespace kz::service {

enum class Counter { kAccepted, kDeduplicated, kRejectedFull, kBadRequest, kFailed, kBatchTooLarge, kCount };

// The stages of kz_stage_seconds: the job's wait in the queue, the verdict's stages and
// its total.
// kSlotWait: a staged job's wait for a free slot (near zero: the slots are the bottleneck).
enum class Stage { kQueueWait, kScreen, kExtract, kCompile, kRun, kTotal, kSlotWait, kCount };

// What Render needs from the scheduler and the store at the time of the scrape.
struct MetricsSnapshot {
  size_t queue_depth = 0;
  size_t staged = 0, building = 0;  // staged jobs waiting for a slot; jobs being staged
  size_t running = 0;               // slots running a job
  double running_for_s = 0;         // the running jobs' time so far, summed (counted as busy)
  std::vector<std::pair<std::string, double>> slots;  // label -> busy seconds, running included
  std::vector<std::pair<std::string, int64_t>> jobs_by_state;  // from the store; may be empty
  // Summed footprint need (verdict "footprint".need_bytes, docs/memory.md) of the staged
  // jobs and of the running ones; jobs without a known footprint count in *_unknown.
  uint64_t staged_footprint_bytes = 0, running_footprint_bytes = 0;
  size_t footprint_unknown = 0;
  // --gpu-concurrency > 1: each device's gate (docs/throughput.md), by device label.
  std::vector<std::pair<std::string, verify::GateHub::Stats>> gates;
};

class Metrics {
 public:
  Metrics();
  void Count(Counter c) { counters_[static_cast<size_t>(c)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t Get(Counter c) const { return counters_[static_cast<size_t>(c)].load(std::memory_order_relaxed); }
  // A finished verdict: counts its status, observes its stages' seconds (screen, extract,
  // compile = the sum of its libraries, run = the child's wall time, total) and the
  // queue wait, the run child's own stages (profile.stages), the GPU-time floor of a timed
  // verdict and the child's wall over it, and counts its compile-cache hits and misses.
  void ObserveVerdict(const nlohmann::json& verdict, std::optional<double> queue_wait_s);
  void Observe(Stage s, double seconds) { stages_[static_cast<size_t>(s)].Observe(seconds); }
  // Seconds a slot spent on a job (finished, failed or cancelled), summed over slots.
  void AddBusy(double seconds);
  std::string Render(const MetricsSnapshot& snap) const;

 private:
  void CountVerdict(std::string_view status);
  void ObserveChild(const nlohmann::json& verdict);
  std::string RenderHistograms() const;
  static std::string RenderGates(const std::vector<std::pair<std::string, verify::GateHub::Stats>>& gates);
  static constexpr size_t kStatuses = static_cast<size_t>(verify::Status::kNotRun) + 1;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> counters_{};
  std::array<std::atomic<uint64_t>, kStatuses> verdicts_{};
  std::atomic<uint64_t> cache_hits_{0}, cache_misses_{0};
  std::atomic<uint64_t> too_large_{0};  // verdicts refused up front by their footprint
  std::atomic<uint64_t> busy_us_{0};
  std::deque<Histogram> stages_;  // by Stage (a deque: Histogram holds a mutex)
  // Where a run child's slot time goes (issue 18): its own stages (profile.stages), and for
  // timed verdicts the GPU-time floor (verify/gpu_floor.h) and the child's wall over it.
  std::deque<Histogram> child_stages_;  // by kChildStages
  Histogram gpu_floor_, wall_over_floor_;
};

}  // namespace kz::service
