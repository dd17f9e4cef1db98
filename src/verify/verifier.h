// The pipeline: every CUDA candidate's load_inline calls are extracted and compiled on CPU
// workers first (all samples at once, through the cache), then each sample runs in its
// own fresh child pinned to one GPU (or on the CPU): one at a time, or with
// options.gpu_concurrency > 1 that many at once through a GPU gate (docs/throughput.md).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/builder.h"
#include "compile/cache.h"
#include "util/subprocess.h"
#include "verify/device.h"
#include "verify/footprint.h"
#include "verify/gate_hub.h"
#include "verify/sample.h"
#include "worker/call_set.h"
#include "worker/worker_client.h"

namespace kz::verify {

using VerdictCallback = std::function<void(size_t index, const nlohmann::json& verdict)>;

class Verifier {
 public:
  // `gpus` empty (or options.cpu_only) means CPU mode: references on the CPU, Triton under
  // the interpreter, CUDA candidates compiled but not run. Every worker call (screen,
  // extraction, builds of the worker, runs) goes through `launcher` (tests: a scripted fake).
  Verifier(worker::WorkerConfig worker, VerifyOptions options, std::vector<Gpu> gpus,
           worker::LauncherPtr launcher = worker::ProcessLauncher());

  // One verdict per sample, in order; `on_verdict` is called as each one is final.
  std::vector<nlohmann::json> VerifyAll(const std::vector<Sample>& samples,
                                        const VerdictCallback& on_verdict = nullptr);

  bool on_gpu() const { return gpu_.has_value(); }

  // A sample between the two halves of VerifyAll. Opaque to callers: they hold it, ask
  // Final(), and hand it to Finish. It points at its Sample, which must outlive it.
  struct Work {
    const Sample* sample = nullptr;
    std::string backend;
    nlohmann::json verdict;
    bool done = false;                               // final before running (bad input, screen, compile)
    nlohmann::json calls = nlohmann::json::array();  // extracted load_inline calls
    nlohmann::json build_env;                        // torch/cuda/python versions from extraction
    nlohmann::json screen_read;                      // {"calls", "env"} the screen child read statically (null: none)
    nlohmann::json prebuilt = nlohmann::json::array();
    std::string candidate_text;
    std::chrono::steady_clock::time_point start;
  };
  // The halves of VerifyAll, for a pipeline (kz serve): Stage does everything before the
  // run — read, screen, extract, compile — for all samples at once on CPU workers (no GPU
  // is touched); Finish runs one staged sample on `gpu` (nullopt: this verifier's own
  // device, or the CPU in CPU mode) unless it is already final, and returns its verdict.
  // Final(w): the verdict is known without a run (no GPU slot needed). Each Work points
  // into `samples`: the vector must outlive it (not a temporary).
  std::vector<Work> Stage(const std::vector<Sample>& samples) const;
  static bool Final(const Work& w) { return w.done; }
  // `pre` (may be null): a run child started ahead for this GPU; used if still alive,
  // else a fresh child is started as usual. Consumed either way.
  struct Prestarted;
  nlohmann::json Finish(Work& w, const std::optional<Gpu>& gpu, Prestarted* pre = nullptr) const;

  // A run child started ahead of its sample (for a kz serve slot): it imports torch and
  // waits for its request (KZ_PRELOAD=1), in the environment a run child on `gpu` gets; its
  // wall limit starts when Finish hands it a sample. Dropping it kills it.
  struct Prestarted {
    Prestarted() = default;
    Prestarted(Prestarted&& o) noexcept { *this = std::move(o); }
    Prestarted& operator=(Prestarted&& o) noexcept;
    ~Prestarted() { Reset(); }
    void Reset();
    std::unique_ptr<worker::CallSet> set;
    worker::CallSet::Id id = 0;
    std::string scratch;                  // its TORCH_EXTENSIONS_DIR; removed with it ("" when sandboxed)
    std::shared_ptr<sandbox::Jail> jail;  // its sandbox (null when off): the sample's inputs are staged into it
    std::optional<Gpu> gpu;
    bool gated = false;  // started to speak to a GPU gate (stream_channel): used only with one
  };
  static Prestarted Prestart(const worker::WorkerConfig& worker, const VerifyOptions& options,
                             const std::optional<Gpu>& gpu,
                             const worker::LauncherPtr& launcher = worker::ProcessLauncher());

  // Cancellation (kz serve's DELETE of a running job): `cancelled` is polled (from the
  // thread running VerifyAll, every kCancelPollMs) while children run; once it returns
  // true every running child's process group is killed and no further sample is run
  // (its verdict says "cancelled"). CUDA extension builds are not interrupted.
  static constexpr int kCancelPollMs = 100;
  void SetCancel(std::function<bool()> cancelled) { cancelled_ = std::move(cancelled); }

  // The GPU gate Finish's run child shares (kz serve: one hub per GPU for all its slots and
  // their per-job Verifiers, docs/throughput.md); null: none (one child on the GPU at a time).
  void ShareGate(std::shared_ptr<GateHub> hub) { gate_ = std::move(hub); }

 private:
  void Prepare(const Sample& sample, Work& w) const;
  void ScreenAll(std::vector<Work>& work) const;
  // One worker call per sample for which make_call returns one, all at once in one
  // CallSet; on_reply gets each reply (token-checked) as it arrives.
  using MakeCall = std::function<std::optional<worker::WorkerCall>(Work&)>;
  using OnReply = std::function<void(Work&, const worker::WorkerReply&)>;
  void RunPerSample(std::vector<Work>& work, const MakeCall& make_call, const OnReply& on_reply) const;
  bool Cancelled() const { return cancelled_ && cancelled_(); }
  // A staged sample that still needs a run child (without a GPU a CUDA sample never runs).
  bool NeedsRun(const Work& w) const { return !w.done && (gpu_ || w.backend != "cuda"); }
  void ExtractAll(std::vector<Work>& work) const;
  // The footprint step (verify/footprint.h): one CPU-only child per distinct task not yet
  // in footprints_; every sample gets verdict["footprint"], and a task that cannot fit is
  // final (invalid_task) before it is screened or built.
  void FootprintAll(std::vector<Work>& work) const;
  void CompileAll(std::vector<Work>& work) const;
  void ApplyBuild(Work& w, const compile::BuildResult& r) const;
  void Run(Work& w, const std::optional<Gpu>& gpu, Prestarted* pre) const;
  // The run child's environment on `gpu` with `scratch` as its extensions directory.
  static std::vector<std::pair<std::string, std::string>> RunEnv(const std::optional<Gpu>& gpu,
                                                                 const std::string& scratch);
  nlohmann::json RunOptions(bool on_gpu) const;

  worker::WorkerConfig worker_;
  worker::LauncherPtr launcher_;
  VerifyOptions options_;
  std::optional<Gpu> gpu_;
  compile::ExtensionCache cache_;
  std::function<bool()> cancelled_;
  std::shared_ptr<GateHub> gate_;  // gpu_concurrency > 1: the device's gate, else null
  // VerifyAll with gate_: gpu_concurrency threads, each with its own run child started ahead.
  std::vector<nlohmann::json> VerifyConcurrently(std::vector<Work>& work, const VerdictCallback& on_verdict);
  FootprintCache* footprints_ = &ProcessFootprints();  // one per process: kz serve makes a
                                                       // Verifier per job
};

}  // namespace kz::verify
