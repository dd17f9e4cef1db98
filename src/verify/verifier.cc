#include "verify/verifier.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "compile/builder.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/finding.h"
#include "verify/run_channel.h"
#include "verify/verdict.h"
#include "worker/bytecode.h"

namespace kz::verify {
using nlohmann::json;
namespace {
constexpr size_t kMaxTimedCalls = 2000;  // per side: the run request's max_calls, the timing judge's bound

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

Verifier::Verifier(worker::WorkerConfig worker, VerifyOptions options, std::vector<Gpu> gpus,
                   worker::LauncherPtr launcher)
    : worker_(std::move(worker)),
      launcher_(std::move(launcher)),
      options_(std::move(options)),
      cache_(options_.cache_dir) {
  worker::PrepareBytecode(&worker_, options_.cache_dir);
  if (!options_.cpu_only)
    for (auto& g : gpus)
      if (!options_.device || g.index == *options_.device) {
        gpu_ = std::move(g);
        break;
      }
  if (options_.gpu_concurrency > 1)  // 10 % of the device's memory kept back for contexts and fragmentation
    gate_ = std::make_shared<GateHub>(gpu_ ? gpu_->memory_bytes / 10 * 9 : 0, options_.gpu_concurrency);
}

void Verifier::Prepare(const Sample& sample, Work& w) const {
  w.sample = &sample;
  w.start = std::chrono::steady_clock::now();
  std::string task, cand, err;
  bool ok_task = util::ReadFile(sample.task_path, &task, &err);
  bool ok_cand = ok_task && util::ReadFile(sample.candidate_path, &cand, &err);
  w.backend = sample.backend.empty() ? DetectBackend(cand) : sample.backend;
  w.candidate_text = cand;
  w.verdict = NewVerdict(sample, w.backend, task, cand);
  w.verdict["policy"] = options_.integrity ? options_.policy : "none";
  if (sample.self_check) {
    w.backend = "triton";  // the reference runs as it is: nothing to extract or build
    w.verdict["backend"] = w.backend;
    w.verdict["self_check"] = true;
  }
  if (!ok_task || !ok_cand) {
    SetOutcome(w.verdict, ok_task ? Status::kCompileError : Status::kInvalidTask, "cannot read " + err,
               "unreadable_file");
    w.done = true;
    return;
  }
  for (const auto& [text, is_task] : {std::pair{&task, true}, std::pair{&cand, false}}) {
    if (text->size() <= options_.max_source_bytes) continue;
    SetOutcome(w.verdict, is_task ? Status::kInvalidTask : Status::kCompileError,
               std::string(is_task ? "task" : "candidate") + " source is " + std::to_string(text->size() >> 20) +
                   " MiB, over the limit of " + std::to_string(options_.max_source_bytes >> 20) +
                   " MiB (--max-source-mib)",
               "source_too_large");
    w.done = true;
    return;
  }
}

namespace {
// "rule at line N: message; ..." for the screen's reject findings, and whether any of them
// is more than a Python syntax error (which the load stage reports as compile_error).
std::pair<std::string, bool> Rejections(const json& screen) {
  std::string text;
  bool integrity = false;
  for (const auto& f : screen.value("findings", json::array())) {
    if (f.value("severity", "") != "reject") continue;
    if (f.value("rule", "") != "py.syntax") integrity = true;
    if (!text.empty()) text += "; ";
    text += f.value("rule", "?") + " " + FindingLocation(f) + ": " + f.value("message", "");
  }
  return {text, integrity};
}
}  // namespace

void Verifier::RunPerSample(std::vector<Work>& work, const MakeCall& make_call, const OnReply& on_reply) const {
  // At most max(jobs, 2) children at once: each imports Python (and maybe torch), so a
  // manifest of hundreds of samples must not start hundreds of interpreters together.
  const size_t limit = size_t(std::max(options_.jobs, 2));
  std::unique_ptr<worker::CallSet> set = launcher_->NewSet(worker_);
  std::map<worker::CallSet::Id, std::pair<Work*, std::string>> running;  // work, token
  size_t next = 0;
  auto start_more = [&] {
    for (; next < work.size() && set->running() < limit && !Cancelled(); ++next)
      if (auto call = make_call(work[next])) running[set->Start(*call)] = {&work[next], call->token};
  };
  start_more();
  while (set->running() > 0) {
    for (auto& [id, proc] : set->WaitAny(cancelled_ ? kCancelPollMs : -1)) {
      auto [w, token] = running[id];
      on_reply(*w, worker::ParseWorkerReply(std::move(proc), token));
    }
    if (Cancelled())
      set->KillAll();  // the killed children are collected by the next WaitAny
    else
      start_more();
  }
}

void Verifier::ScreenAll(std::vector<Work>& work) const {
  auto make = [&](const Work& w) -> std::optional<worker::WorkerCall> {
    if (w.done) return std::nullopt;
    if (w.sample->self_check) return std::nullopt;  // the reference is not screened
    worker::WorkerCall call;
    call.request = {{"op", "screen"},
                    {"candidate_path", util::AbsolutePath(w.sample->candidate_path)},
                    {"backend", w.backend},
                    {"policy", options_.policy},
                    {"extract", w.backend == "cuda"}};  // and read the load_inline calls if it can
    call.wall_limit_s = 60;
    return call;
  };
  RunPerSample(work, make, [&](Work& w, const worker::WorkerReply& reply) {
    if (!reply.result || !reply.result->value("ok", false) || !reply.result->contains("screen")) {
      w.verdict["stages"]["screen"] = {{"status", "error"}};
      SetOutcome(w.verdict, Status::kRuntimeError,
                 "the static screen could not run: " + worker::DescribeEnd(reply.process), "screen_failed");
      w.done = true;
      return;
    }
    if (reply.result->contains("calls") && (*reply.result)["calls"].is_array())
      w.screen_read = {{"calls", (*reply.result)["calls"]}, {"env", reply.result->value("env", json::object())}};
    json screen = (*reply.result)["screen"];
    auto [text, integrity] = Rejections(screen);
    screen["status"] = screen.value("verdict", "pass");
    w.verdict["stages"]["screen"] = screen;
    if (integrity) {
      SetOutcome(w.verdict, Status::kRejected, "screen (" + options_.policy + "): " + text, "screen");
      w.done = true;
    }
  });
}

namespace {
// The cache's LRU bound. Eviction walks the whole cache: at most every 30 s per cache in a
// long-lived process (kz serve stages one job at a time).
void EvictThrottled(const compile::ExtensionCache& cache, uint64_t max_bytes) {
  {
    static std::mutex mu;
    static std::map<std::string, std::chrono::steady_clock::time_point> last_evict;
    auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu);
    auto [it, fresh] = last_evict.emplace(cache.root(), now);
    if (!fresh && now - it->second < std::chrono::seconds(30)) return;
    it->second = now;
  }
  auto ev = cache.Evict(max_bytes);
  if (ev.entries_removed || ev.staging_removed || ev.extract_removed || ev.pch_removed)
    util::LogInfo("cache: evicted " + std::to_string(ev.entries_removed) + " entries, " +
                  std::to_string(ev.extract_removed) + " extractions, " + std::to_string(ev.pch_removed) +
                  " precompiled headers and " + std::to_string(ev.staging_removed) + " stale staging dirs; " +
                  std::to_string(ev.bytes_after >> 20) + " MiB left");
}
}  // namespace

void Verifier::CompileAll(std::vector<Work>& work) const {
  std::vector<json> calls;
  std::vector<std::pair<Work*, size_t>> owner;  // call -> (sample, index in its calls)
  for (auto& w : work) {
    if (w.done || w.backend != "cuda") continue;
    for (size_t i = 0; i < w.calls.size(); ++i) {
      calls.push_back(w.calls[i]);
      owner.emplace_back(&w, i);
    }
    if (w.calls.empty())
      w.verdict["stages"]["compile"] = {
          {"status", "skipped"},
          {"reason", "no load_inline call ran at import; compiled in the child if called later"}};
  }
  if (calls.empty()) return;
  compile::BuilderOptions bo;
  bo.jobs = options_.jobs;
  bo.timeout_s = options_.compile_timeout_s;
  bo.max_rss_bytes = options_.max_host_mem_mib << 20;
  bo.accelerate = options_.accelerate_builds;
  bo.pch_root = cache_.root() + "/pch";
  const json& env = owner.front().first->build_env;
  bo.env = {env.value("torch", ""), env.value("cuda", ""), env.value("python", ""),
            !options_.arch_list.empty() ? options_.arch_list
            : gpu_                      ? gpu_->capability
                                        : "9.0"};
  util::LogInfo("compiling " + std::to_string(calls.size()) + " CUDA extension(s) with " + std::to_string(bo.jobs) +
                " job(s), cache " + cache_.root());
  auto results = compile::BuildExtensions(
      calls, cache_, worker_, bo,
      [](const compile::BuildResult& r, size_t done, size_t total) {
        util::LogInfo("[" + std::to_string(done) + "/" + std::to_string(total) + "] " + r.name + ": " +
                      (r.ok ? (r.cache_hit ? "cache hit" : "built") : "failed (" + r.error_kind + ")") + " in " +
                      std::to_string(r.seconds).substr(0, 5) + " s");
      },
      launcher_);
  for (size_t i = 0; i < results.size(); ++i) ApplyBuild(*owner[i].first, results[i]);
  EvictThrottled(cache_, options_.cache_max_bytes);
}

void Verifier::ApplyBuild(Work& w, const compile::BuildResult& r) const {
  json& stage = w.verdict["stages"]["compile"];
  if (!stage.is_object()) stage = {{"status", "ok"}, {"libraries", json::array()}};
  stage["libraries"].push_back({{"name", r.name},
                                {"digest", r.digest},
                                {"key", r.key},
                                {"cache", r.cache_hit ? "hit" : "miss"},
                                {"seconds", r.seconds},
                                {"ok", r.ok},
                                {"build", r.build}});
  if (r.ok) {
    w.prebuilt.push_back({{"digest", r.digest}, {"name", r.name}, {"library", r.library}});
    return;
  }
  stage["status"] = "error";
  stage["diagnostics"] = r.diagnostics;
  if (w.done) return;
  Status s = r.error_kind == "timeout" ? Status::kTimeout : Status::kCompileError;
  SetOutcome(w.verdict, s, "building extension '" + r.name + "' failed (" + r.error_kind + ")", r.error_kind,
             r.diagnostics);
  w.done = true;
}

json Verifier::RunOptions(bool on_gpu) const {
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"trials", options_.trials},
          {"seed", options_.seed},
          {"atol", opt(options_.atol)},
          {"rtol", opt(options_.rtol)},
          {"rel_l2", opt(options_.rel_l2)},
          {"timing", options_.timing && on_gpu},
          {"warmup", 3},
          {"min_calls", options_.timing_ci_rel > 0 ? 10 : 30},
          {"ci_rel", options_.timing_ci_rel},
          {"max_calls", kMaxTimedCalls},
          {"timing_budget_s", options_.timing_budget_s},
          {"stable_rel", 0.01},
          {"gpu_mem_fraction", nullptr},
          {"policy", options_.policy},
          {"min_candidate_share", options_.min_candidate_share},
          {"integrity", options_.integrity}};
}

std::vector<std::pair<std::string, std::string>> Verifier::RunEnv(const std::optional<Gpu>& gpu,
                                                                  const std::string& scratch) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_VISIBLE_DEVICES", gpu ? std::to_string(gpu->index) : ""}};
  if (!scratch.empty()) env.emplace_back("TORCH_EXTENSIONS_DIR", scratch);  // else the sandbox's
  if (!gpu) env.emplace_back("TRITON_INTERPRET", "1");
  return env;
}

Verifier::Prestarted Verifier::Prestart(const worker::WorkerConfig& worker, const VerifyOptions& options,
                                        const std::optional<Gpu>& gpu, const worker::LauncherPtr& launcher) {
  Prestarted p;
  std::string err;
  p.gpu = gpu;
  worker::WorkerCall call;  // its request comes with the sample (Release)
  call.sandboxed = true;
  call.devices = gpu ? worker::GpuDevices(gpu->index) : std::vector<std::string>();
  if (worker.sandbox.active())
    p.jail = call.jail = worker::NewJail(worker, call);
  else
    p.scratch = util::MakeTempDir(compile::ExtensionCache(options.cache_dir).root() + "/tmp", "run-", &err);
  call.env = RunEnv(gpu, p.scratch);
  call.env.emplace_back("KZ_PRELOAD", "1");
  call.max_rss_bytes = options.max_host_mem_mib << 20;
  p.gated = options.gpu_concurrency > 1;
  p.set = launcher->NewSet(worker);
  // Stream: its gate and judge frames are answered while it runs.
  p.id = p.set->Start(call, worker::CallMode{/*hold=*/true, /*stream=*/true});
  return p;
}

Verifier::Prestarted& Verifier::Prestarted::operator=(Prestarted&& o) noexcept {
  if (this == &o) return *this;
  Reset();
  set = std::move(o.set);
  id = o.id;
  scratch = std::exchange(o.scratch, std::string());
  jail = std::move(o.jail);
  gpu = o.gpu;
  gated = o.gated;
  return *this;
}

void Verifier::Prestarted::Reset() {
  set.reset();   // kills a child that never got its sample
  jail.reset();  // its stage goes with the last reference (the CallSet's, just dropped)
  if (!scratch.empty()) util::RemoveAll(scratch);
  scratch.clear();
}

namespace {
// The run child under a wrapper command (ncu, verify/profiler.h), with the paths it needs.
void ApplyRunWrapper(const VerifyOptions::RunWrapper& wrap, worker::WorkerCall* call) {
  call->argv_prefix = wrap.argv;
  call->read_only.insert(call->read_only.end(), wrap.read_only.begin(), wrap.read_only.end());
  call->writable.insert(call->writable.end(), wrap.writable.begin(), wrap.writable.end());
}
}  // namespace

void Verifier::Run(Work& w, const std::optional<Gpu>& gpu, Prestarted* pre) const {
  bool cuda = w.backend == "cuda";
  if (cuda && !gpu) {
    SetOutcome(w.verdict, Status::kNotRun, "CUDA candidate compiled; it cannot run here: no GPU on this host");
    return;
  }
  worker::WorkerCall call;
  call.request = {{"op", "run"},
                  {"task_path", util::AbsolutePath(w.sample->task_path)},
                  {"candidate_path", util::AbsolutePath(w.sample->candidate_path)},
                  {"backend", w.backend},
                  {"device", gpu ? "cuda" : "cpu"},
                  {"prebuilt", w.prebuilt},
                  {"options", RunOptions(gpu.has_value())}};
  if (w.sample->self_check) call.request["options"]["self_check"] = true;
  if (gate_) {
    call.request["options"]["gate"] = true;
    const json& fp = w.verdict["footprint"];
    if (fp.is_object() && fp.contains("need_bytes") && fp["need_bytes"].is_number_unsigned())
      call.request["options"]["footprint_bytes"] = fp["need_bytes"];
  }
  call.wall_limit_s = options_.timeout_s;
  call.max_rss_bytes = options_.max_host_mem_mib << 20;
  call.sandboxed = true;
  call.inputs = {util::AbsolutePath(w.sample->task_path), util::AbsolutePath(w.sample->candidate_path)};
  for (const auto& lib : w.prebuilt) call.inputs.push_back(lib.value("library", ""));
  call.devices = gpu ? worker::GpuDevices(gpu->index) : std::vector<std::string>();
  ApplyRunWrapper(options_.run_wrapper, &call);
  Prestarted own;
  bool used_pre = false;
  bool same_device = call.argv_prefix.empty() && pre && pre->set &&
                     (pre->gpu ? pre->gpu->index : -1) == (gpu ? gpu->index : -1) && pre->gated == (gate_ != nullptr);
  if (same_device) {
    worker::WorkerCall into = call;
    into.jail = pre->jail;  // inputs staged into the running child's jail
    used_pre = pre->set->Release(pre->id, into);
  }
  worker::CallSet::Id id = 0;
  if (used_pre) {
    own = std::move(*pre);
    id = own.id;
  } else {
    std::string err;
    if (!worker_.sandbox.active()) own.scratch = util::MakeTempDir(cache_.root() + "/tmp", "run-", &err);
    call.env = RunEnv(gpu, own.scratch);
    own.set = launcher_->NewSet(worker_);
    // Stream: its gate and judge frames are answered while it runs.
    id = own.set->Start(call, worker::CallMode{/*hold=*/false, /*stream=*/true});
  }
  if (pre) *pre = Prestarted();  // consumed (or stale: dropped)
  double gate_held_s = -1;
  RunJudges judges({options_.integrity,
                    {options_.policy, options_.min_candidate_share},
                    kMaxTimedCalls,
                    TraceRequired(gpu.has_value(), options_.integrity, worker_.runtime_lib)});
  util::ProcessResult proc =
      WaitRunChild(*own.set, id, call.token, gate_.get(), &judges, cancelled_, gate_ ? &gate_held_s : nullptr);
  ApplyRunReply(w.verdict, worker::ParseWorkerReply(std::move(proc), call.token));
  judges.Apply(w.verdict);  // the trace and timing judges (run_judges.h)
  if (used_pre && w.verdict["child"].is_object()) w.verdict["child"]["prestarted"] = true;
  // Time the GPU gate held the child (not counted against its wall limit).
  if (gate_held_s >= 0 && w.verdict["child"].is_object()) w.verdict["child"]["gate_held_s"] = gate_held_s;
}

std::vector<Verifier::Work> Verifier::Stage(const std::vector<Sample>& samples) const {
  std::vector<Work> work(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) Prepare(samples[i], work[i]);
  if (options_.footprint) FootprintAll(work);
  if (options_.screen) ScreenAll(work);
  ExtractAll(work);
  CompileAll(work);
  return work;
}

json Verifier::Finish(Work& w, const std::optional<Gpu>& gpu_override, Prestarted* pre) const {
  const std::optional<Gpu>& gpu = gpu_override ? gpu_override : gpu_;
  if (!w.done && Cancelled())
    SetOutcome(w.verdict, Status::kRuntimeError, "verification cancelled", "cancelled");
  else if (!w.done)
    Run(w, gpu, pre);
  if (w.verdict["device"].empty())
    w.verdict["device"] = gpu ? json{{"kind", "cuda"}, {"index", gpu->index}, {"name", gpu->name}}
                              : json{{"kind", "cpu"}, {"triton_interpret", w.backend == "triton"}};
  else if (gpu && w.verdict["device"].is_object() && w.verdict["device"].value("kind", "") == "cuda")
    w.verdict["device"]["index"] = gpu->index;  // the child sees only its GPU, as index 0
  FinishChecks(w.verdict, gpu.has_value());
  w.verdict["stages"]["sandbox"] = worker_.sandbox.Describe();
  w.verdict["seconds"] = Since(w.start);
  return std::move(w.verdict);
}

}  // namespace kz::verify
