#include "service/metrics.h"

#include "verify/gpu_floor.h"

namespace kz::service {
using nlohmann::json;

namespace {
constexpr const char* kCounterNames[] = {"accepted", "deduplicated", "rejected_queue_full",
                                         "bad_request", "failed", "batch_too_large"};
static_assert(std::size(kCounterNames) == static_cast<size_t>(Counter::kCount));
constexpr const char* kStageNames[] = {"queue_wait", "screen", "extract", "compile", "run", "total", "slot_wait"};
static_assert(std::size(kStageNames) == static_cast<size_t>(Stage::kCount));
// The run child's stages (docs/verdict.md, `profile.stages`), in the order they run.
constexpr const char* kChildStages[] = {"load", "parameters", "correctness", "trace", "extra_checks", "timing"};
// Child wall / GPU-time floor: 1 would be a slot that does nothing but the checks' GPU work.
const std::vector<double> kRatioBuckets = {1, 1.5, 2, 3, 5, 10, 20, 50, 100, 1000};

std::optional<double> Seconds(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return std::nullopt;
  return obj[key].get<double>();
}

std::string Header(const char* name, const char* type, const char* help) {
  return std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}
}  // namespace

Metrics::Metrics() : gpu_floor_(StageBuckets()), wall_over_floor_(kRatioBuckets) {
  for (size_t i = 0; i < static_cast<size_t>(Stage::kCount); ++i) stages_.emplace_back(StageBuckets());
  for (size_t i = 0; i < std::size(kChildStages); ++i) child_stages_.emplace_back(StageBuckets());
}

void Metrics::ObserveChild(const json& v) {
  const json profile = v.value("profile", json());
  const json stages = profile.is_object() ? profile.value("stages", json()) : json();
  for (size_t i = 0; i < std::size(kChildStages) && stages.is_object(); ++i)
    if (auto s = Seconds(stages.value(kChildStages[i], json()), "seconds")) child_stages_[i].Observe(*s);
  auto floor = verify::GpuFloorSeconds(v);
  if (!floor) return;
  gpu_floor_.Observe(*floor);
  auto wall = Seconds(v.value("child", json()), "wall_s");
  if (wall && *floor > 0) wall_over_floor_.Observe(*wall / *floor);
}

void Metrics::CountVerdict(std::string_view status) {
  if (auto s = verify::ParseStatus(status))
    verdicts_[static_cast<size_t>(*s)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::AddBusy(double seconds) {
  if (seconds > 0) busy_us_.fetch_add(static_cast<uint64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void Metrics::ObserveVerdict(const json& v, std::optional<double> queue_wait_s) {
  CountVerdict(v.value("status", ""));
  const json error = v.value("error", json());
  if (error.is_object() && error.value("kind", "") == "too_large") too_large_.fetch_add(1, std::memory_order_relaxed);
  if (queue_wait_s) Observe(Stage::kQueueWait, *queue_wait_s);
  const json stages = v.value("stages", json::object());
  if (auto s = Seconds(stages.value("screen", json()), "seconds")) Observe(Stage::kScreen, *s);
  if (auto s = Seconds(stages.value("extract", json()), "seconds")) Observe(Stage::kExtract, *s);
  const json compile = stages.value("compile", json());
  if (compile.is_object() && compile.contains("libraries") && compile["libraries"].is_array()) {
    double total = 0;
    for (const auto& lib : compile["libraries"]) {
      total += Seconds(lib, "seconds").value_or(0);
      std::string cache = lib.is_object() ? lib.value("cache", "") : "";
      if (cache == "hit") cache_hits_.fetch_add(1, std::memory_order_relaxed);
      if (cache == "miss") cache_misses_.fetch_add(1, std::memory_order_relaxed);
    }
    if (!compile["libraries"].empty()) Observe(Stage::kCompile, total);
  }
  if (auto s = Seconds(v.value("child", json()), "wall_s")) Observe(Stage::kRun, *s);
  if (auto s = Seconds(v, "seconds")) Observe(Stage::kTotal, *s);
  ObserveChild(v);
}

std::string Metrics::RenderHistograms() const {
  std::string out = Header("kz_stage_seconds", "histogram",
                           "Seconds per stage of finished jobs (queue_wait: accepted to started).");
  for (size_t i = 0; i < stages_.size(); ++i)
    out += stages_[i].Render("kz_stage_seconds", std::string("stage=\"") + kStageNames[i] + "\"");
  out += Header("kz_child_stage_seconds", "histogram", "Seconds per stage inside the run child (its profile).");
  for (size_t i = 0; i < child_stages_.size(); ++i)
    out += child_stages_[i].Render("kz_child_stage_seconds", std::string("stage=\"") + kChildStages[i] + "\"");
  out += Header("kz_gpu_floor_seconds", "histogram",
                "GPU-time floor of timed verdicts: the device time their checked calls needed at the measured medians.");
  out += gpu_floor_.Render("kz_gpu_floor_seconds", "");
  out += Header("kz_run_over_gpu_floor", "histogram", "The run child's wall time over its GPU-time floor (timed verdicts).");
  out += wall_over_floor_.Render("kz_run_over_gpu_floor", "");
  return out;
}

std::string Metrics::RenderGates(const std::vector<std::pair<std::string, verify::GateHub::Stats>>& gates) {
  std::string out;
  auto each = [&](const char* name, const char* type, const char* help, auto value) {
    out += Header(name, type, help);
    for (const auto& [device, st] : gates) out += std::string(name) + "{device=\"" + device + "\"} " + value(st) + "\n";
  };
  using S = verify::GateHub::Stats;
  each("kz_gate_shared_holders", "gauge", "Children in their shared (correctness) stages on the device now.",
       [](const S& s) { return std::to_string(s.shared); });
  each("kz_gate_exclusive", "gauge", "1 while a child is timed with the device to itself.",
       [](const S& s) { return std::string(s.exclusive ? "1" : "0"); });
  each("kz_gate_queued", "gauge", "Gate requests waiting.", [](const S& s) { return std::to_string(s.queued); });
  each("kz_gate_bytes_held", "gauge", "Footprints of the shared holders, summed.",
       [](const S& s) { return std::to_string(s.bytes_held); });
  each("kz_gate_max_shared", "gauge", "The most shared holders at once so far.",
       [](const S& s) { return std::to_string(s.max_shared_seen); });
  each("kz_gate_exclusive_total", "counter", "Timings granted the device alone.",
       [](const S& s) { return std::to_string(s.exclusive_grants); });
  each("kz_gate_held_seconds_total", "counter",
       "Children's seconds held by the gate (waiting for a grant or stopped for another's timing), summed; not counted "
       "against their wall limits.",
       [](const S& s) { return PromNumber(s.held_s); });
  return out;
}

std::string Metrics::Render(const MetricsSnapshot& snap) const {
  auto load = [](const std::atomic<uint64_t>& a) { return std::to_string(a.load(std::memory_order_relaxed)); };
  std::string out = Header("kz_queue_depth", "gauge", "Jobs accepted and waiting for a slot (queued, being staged, or staged).");
  out += "kz_queue_depth " + std::to_string(snap.queue_depth) + "\n";
  out += Header("kz_jobs_staging", "gauge", "Jobs being screened, extracted and compiled now.");
  out += "kz_jobs_staging " + std::to_string(snap.building) + "\n";
  out += Header("kz_jobs_staged", "gauge", "Staged jobs waiting for a free slot.");
  out += "kz_jobs_staged " + std::to_string(snap.staged) + "\n";
  out += Header("kz_jobs_running", "gauge", "Jobs running in slots now.");
  out += "kz_jobs_running " + std::to_string(snap.running) + "\n";
  out += Header("kz_requests_total", "counter", "Submitted samples (verify and batch) by outcome.");
  for (size_t i = 0; i < counters_.size(); ++i)
    out += "kz_requests_total{outcome=\"" + std::string(kCounterNames[i]) + "\"} " + load(counters_[i]) + "\n";
  out += Header("kz_jobs_done_total", "counter", "Jobs finished by this process, by verdict status.");
  for (size_t i = 0; i < verdicts_.size(); ++i)
    out += "kz_jobs_done_total{status=\"" + std::string(verify::StatusName(static_cast<verify::Status>(i))) +
           "\"} " + load(verdicts_[i]) + "\n";
  if (!snap.jobs_by_state.empty()) {
    out += Header("kz_jobs", "gauge", "Jobs in the store by state.");
    for (const auto& [state, n] : snap.jobs_by_state)
      out += "kz_jobs{state=\"" + state + "\"} " + std::to_string(n) + "\n";
  }
  out += Header("kz_footprint_bytes", "gauge",
                "Summed footprint need (3 x (inputs + outputs) + 2 x params, meta device) of staged and running jobs.");
  out += "kz_footprint_bytes{jobs=\"staged\"} " + std::to_string(snap.staged_footprint_bytes) + "\n";
  out += "kz_footprint_bytes{jobs=\"running\"} " + std::to_string(snap.running_footprint_bytes) + "\n";
  out += Header("kz_footprint_unknown_jobs", "gauge", "Staged or running jobs whose footprint is unknown.");
  out += "kz_footprint_unknown_jobs " + std::to_string(snap.footprint_unknown) + "\n";
  out += Header("kz_footprint_refused_total", "counter", "Jobs refused before their run: the task cannot fit the device.");
  out += "kz_footprint_refused_total " + load(too_large_) + "\n";
  out += Header("kz_compile_cache_total", "counter", "CUDA extension builds of finished jobs by cache result.");
  out += "kz_compile_cache_total{result=\"hit\"} " + load(cache_hits_) + "\n";
  out += "kz_compile_cache_total{result=\"miss\"} " + load(cache_misses_) + "\n";
  double busy = busy_us_.load(std::memory_order_relaxed) / 1e6 + snap.running_for_s;
  out += Header("kz_gpu_slot_busy_seconds_total", "counter",
                "Seconds the slots (GPUs, or CPU slots with --cpu) spent running jobs, summed; / (uptime x slots) = utilisation.");
  out += "kz_gpu_slot_busy_seconds_total " + PromNumber(busy) + "\n";
  if (!snap.slots.empty()) {
    out += Header("kz_slots", "gauge", "Slots: one per GPU (or --cpu-slots).");
    out += "kz_slots " + std::to_string(snap.slots.size()) + "\n";
    out += Header("kz_slot_busy_seconds_total", "counter", "Seconds each slot spent running jobs.");
    for (const auto& [label, s] : snap.slots)
      out += "kz_slot_busy_seconds_total{slot=\"" + label + "\"} " + PromNumber(s) + "\n";
  }
  if (!snap.gates.empty()) out += RenderGates(snap.gates);
  double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  out += Header("kz_uptime_seconds", "gauge", "Seconds since the server started.");
  out += "kz_uptime_seconds " + PromNumber(up) + "\n";
  return out + RenderHistograms();
}

}  // namespace kz::service
