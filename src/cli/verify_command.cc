#include "cli/commands.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "cli/verifier_flags.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/device.h"
#include "verify/status.h"
#include "verify/summary.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kz::cli {
namespace {
using nlohmann::json;

class VerifyCommandImpl : public Command {
 public:
  VerifyCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("verify", "Verify candidate kernels against PyTorch reference tasks");
    c->option_defaults()->always_capture_default();
    c->add_option("--ref", ref_, "Reference task file (Model, get_inputs, get_init_inputs)");
    c->add_option("--candidate", candidate_, "Candidate file (ModelNew)");
    c->add_option("--manifest", manifest_, "JSONL file of samples: {task, candidate, backend, expect_gpu, expect_cpu}");
    c->add_option("--backend", backend_, "cuda or triton (default: detected from the candidate)")
        ->check(CLI::IsMember({"cuda", "triton"}));
    c->add_option("--device", device_, "GPU index to run on (default: the first GPU)");
    c->add_flag("--cpu", o_.cpu_only, "Never use a GPU, even if one is present");
    c->add_flag("--json", json_, "Print verdicts as JSON (one object a line)");
    c->add_option("--trials", o_.trials, "Correctness trials with fresh seeds")->check(CLI::Range(1, 1000));
    c->add_option("--seed", o_.seed, "Base seed of the trials");
    c->add_option("--atol", atol_, "Absolute tolerance (default per dtype)");
    c->add_option("--rtol", rtol_, "Relative tolerance (default per dtype)");
    c->add_option("--rel-l2", rel_l2_, "Bound on ||out-ref||/||ref|| (default per dtype)");
    c->add_flag("--no-timing", no_timing_, "Skip timing");
    c->add_option("--timing-budget", o_.timing_budget_s, "Seconds of timing per sample at most");
    AddTimingCiOption(c, &o_.timing_ci_rel, "for every sample of this run");
    AddVerifierOptions(c, &o_, &sandbox_, {"best-effort", "Integrity policy: strict (default) or kernelbench"});
    c->add_option("--max-source-mib", max_source_mib_, "Largest task or candidate file accepted, MiB (default 8)")
        ->check(CLI::PositiveNumber);
    c->add_option(
         "--gpu-concurrency", o_.gpu_concurrency,
         "Samples run at once on the device: correctness shared, timing exclusive (default 1; docs/throughput.md)")
        ->check(CLI::Range(1, 64));
    c->add_option(
         "--cache-max-gib", cache_max_gib_,
         "Size bound of the cache directory (extensions, extractions, precompiled headers), GiB (LRU; default 20)")
        ->check(CLI::PositiveNumber);
    c->add_option("--arch", o_.arch_list, "CUDA arch to build for (default: the GPU's, else 9.0)");
    c->add_option("--min-candidate-share", o_.min_candidate_share,
                  "strict policy: least share of a call's compute-kernel time the candidate's "
                  "own kernels must carry (default 0.5)")
        ->check(CLI::Range(0.0, 1.0));
    c->add_flag("--no-screen", no_screen_, "Skip the static screen (integrity rules)");
    c->add_flag("--no-integrity", no_integrity_,
                "Skip every integrity check (screen, trace, dataflow, extra inputs, timed recheck, "
                "host cross-check): correctness and timing only, as a baseline");
    c->add_flag("--plain-build", plain_build_, "Build extensions exactly as load_inline does (no PCH, full headers)");
    c->add_flag("--footprint", o_.footprint,
                "Measure each task's footprint (meta device) before its run, refuse what cannot fit "
                "(on in kz serve, kz worker and kz bench)");
    c->add_flag("--self-check", self_check_,
                "Verify the task's reference against itself (no --candidate): can kz judge this "
                "task here, and at what cost? The screen and the launch trace are lifted");
    cmd_ = c;
  }

  int Run() override {
    if (!cmd_->parsed()) return verify::kExitUsage;
    std::vector<verify::Sample> samples;
    auto gpus = o_.cpu_only ? std::vector<verify::Gpu>{} : verify::DetectGpus();
    if (int rc = CollectSamples(!gpus.empty(), &samples); rc != 0) return rc;
    FinishOptions();
    if (device_ && std::none_of(gpus.begin(), gpus.end(), [&](auto& g) { return g.index == *device_; })) {
      std::cerr << "kz verify: no GPU with index " << *device_ << " on this host (" << gpus.size() << " found)\n";
      return verify::kExitUsage;
    }
    worker::WorkerConfig worker = worker::LocateWorker(argv0_);
    if (std::string err; !ApplySandbox(sandbox_, o_.cache_dir, &worker, &err)) return Usage(err);
    verify::Verifier verifier(worker, o_, gpus);
    if (!verifier.on_gpu())
      util::LogInfo(
          "no GPU in use: references run on the CPU, Triton under TRITON_INTERPRET=1, CUDA candidates are compiled "
          "only");
    int mismatches = 0;
    std::map<std::string, int> counts;
    auto verdicts = verifier.VerifyAll(samples, [&](size_t i, const json& v) {
      std::cout << (json_ ? v.dump() + "\n" : verify::Summarize(v)) << std::flush;
      counts[v.value("status", "?")]++;
      if (samples[i].expect && *samples[i].expect != v.value("status", "")) {
        ++mismatches;
        std::cerr << "kz verify: " << samples[i].label << ": expected " << *samples[i].expect << ", got "
                  << v.value("status", "?") << "\n";
      }
    });
    if (manifest_.empty()) return verify::ExitCode(verify::VerdictStatus(verdicts.front()));
    std::string tally;
    for (auto& [k, n] : counts) tally += " " + k + "=" + std::to_string(n);
    std::cerr << "kz verify: " << verdicts.size() << " samples:" << tally << "; " << (verdicts.size() - mismatches)
              << "/" << verdicts.size() << " as expected\n";
    return mismatches == 0 ? 0 : 1;
  }

 private:
  int CollectSamples(bool on_gpu, std::vector<verify::Sample>* samples) {
    std::string err;
    if (!manifest_.empty()) {
      if (!ref_.empty() || !candidate_.empty()) return Usage("use either --manifest or --ref/--candidate");
      std::string base = std::filesystem::current_path().string();
      if (!verify::ReadManifest(manifest_, base, on_gpu, samples, &err)) return Usage(err);
      if (samples->empty()) return Usage(manifest_ + ": no samples");
    } else {
      if (self_check_ && !candidate_.empty()) return Usage("--self-check takes --ref only");
      if (self_check_ && !ref_.empty()) candidate_ = ref_;
      if (ref_.empty() || candidate_.empty()) return Usage("--ref and --candidate are required (or --manifest)");
      samples->push_back({ref_, candidate_, backend_, std::nullopt, candidate_});
      samples->back().self_check = self_check_;
    }
    for (auto& s : *samples) {
      if (!backend_.empty()) s.backend = backend_;
      for (const auto& p : {s.task_path, s.candidate_path}) {
        std::string text;
        if (!util::ReadFile(p, &text, &err)) return Usage("cannot read " + err);
      }
    }
    return 0;
  }

  void FinishOptions() {
    o_.device = device_;
    o_.atol = atol_;
    o_.rtol = rtol_;
    o_.rel_l2 = rel_l2_;
    o_.timing = !no_timing_;
    o_.accelerate_builds = !plain_build_;
    o_.screen = !no_screen_ && !no_integrity_;
    o_.integrity = !no_integrity_;
    o_.max_source_bytes = static_cast<uint64_t>(max_source_mib_ * double(1u << 20));
    o_.cache_max_bytes = static_cast<uint64_t>(cache_max_gib_ * double(1ull << 30));
    if (o_.cache_dir.empty()) o_.cache_dir = verify::DefaultCacheDir();
    if (o_.jobs <= 0) o_.jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
  }

  int Usage(const std::string& msg) { return UsageError("kz verify", msg); }

  std::string argv0_;
  CLI::App* cmd_ = nullptr;
  std::string ref_, candidate_, manifest_, backend_;
  std::optional<int> device_;
  std::optional<double> atol_, rtol_, rel_l2_;
  double cache_max_gib_ = 20;
  double max_source_mib_ = 8;
  bool json_ = false, no_timing_ = false, plain_build_ = false, no_screen_ = false, no_integrity_ = false;
  bool self_check_ = false;
  SandboxFlags sandbox_;
  verify::VerifyOptions o_ = [] {
    verify::VerifyOptions o;
    o.jobs = 0;
    return o;
  }();
};
}  // namespace

std::unique_ptr<Command> AddVerifyCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<VerifyCommandImpl>(app, argv0);
}

}  // namespace kz::cli
