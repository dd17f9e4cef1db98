#include "cli/commands.h"

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/exec_sibling.h"
#include "cli/sandbox_flags.h"
#include "scoring/baseline_run.h"
#include "scoring/follow.h"
#include "scoring/runner.h"
#include "scoring/selfcheck.h"
#include "scoring/turns_report.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "verify/status.h"

namespace kz::cli {
namespace {

class BenchCommandImpl : public Command {
 public:
  BenchCommandImpl(CLI::App& app, std::string argv0, scoring::RemoteBackend* remote) : argv0_(std::move(argv0)) {
    o_.remote = remote;
    auto* c = app.add_subcommand("bench", "Score generations on a KernelBench-format suite: pass@k, fast_p@k");
    c->add_option("--suite", o_.suite_dir, "Suite directory (level1/, level2/, ... of task files)");
    c->add_option("--generations", o_.generations,
                  "Directory of level_<L>_problem_<P>_sample_<S>_kernel.py files, or a JSONL file");
    c->add_option("--out", o_.out_dir, "Output directory (verdicts.jsonl, report.json, report.md, plots)");
    c->add_option("--level", o_.levels, "Only these levels (repeatable)");
    c->add_option("--task", o_.task_ids, "Only these task ids, like L1_19 (repeatable)");
    c->add_option("-j,--jobs", o_.verify.jobs, "Builds at once (default: cores / 2)");
    c->add_option(
         "--gpu-concurrency", o_.verify.gpu_concurrency,
         "Samples run at once on the device: correctness shared, timing exclusive (default 1; docs/throughput.md)")
        ->check(CLI::Range(1, 64));
    c->add_flag("--cpu", o_.verify.cpu_only, "Never use a GPU, even if one is present");
    c->add_option("--timeout", o_.verify.timeout_s, "Wall-time limit of one sample's run, seconds");
    trials_ = c->add_option("--trials", o_.verify.trials, "Correctness trials per sample")->check(CLI::Range(1, 1000));
    policy_ = c->add_option("--policy", o_.verify.policy, "Integrity policy: strict (default) or kernelbench")
                  ->check(CLI::IsMember({"strict", "kernelbench"}));
    c->add_option("--cache-dir", o_.verify.cache_dir, "Compiled-extension cache (default ~/.cache/kernelzero)");
    AddSandboxOptions(c, &sandbox_, "best-effort");
    c->add_option("--batch", o_.batch,
                  "Samples compiled together before they run; with --server, samples per POST /v1/batch (default 32)")
        ->check(CLI::Range(1, 100000));
    c->add_option("--baseline", o_.baseline,
                  "torch.compile baseline: a kz bench baseline directory, or a KernelBench-shape JSON file; "
                  "adds speedups against torch.compile to the report");
    c->add_option("--server", o_.server, "Verify through a running kz serve at this URL (http://host:port)");
    c->add_option("--client", o_.client, "With --server: the client name for the server's fairness (default kz-bench)");
    c->add_option("--generate", generate_run_,
                  "Generate into this run directory while verifying: runs `kz generate --suite SUITE --out RUN` "
                  "with the arguments after --, and verifies each sample as it arrives");
    c->add_option("--turns", turns_,
                  "With --generate: sequential refinement, up to this many turns (samples not yet correct are asked "
                  "again with the verifier's feedback; OUT/turns.md: first-, best- and last-turn metrics)")
        ->check(CLI::Range(1, 16));
    c->add_option("generate_args", generate_args_, "After --: the arguments of kz generate (--endpoint, --model, ...)");
    local_only_ = {c->get_option("--jobs"), c->get_option("--cpu"), c->get_option("--timeout"),
                   c->get_option("--cache-dir")};
    auto* r = c->add_subcommand("report", "Recompute report.* from <out>/verdicts.jsonl (verifies nothing)");
    r->add_option("--out", report_out_, "Output directory of a kz bench run")->required();
    r->add_option("--baseline", report_baseline_, "torch.compile baseline (default: the run's --baseline)");
    AddBaseline(c);
    AddSelfCheck(c);
    cmd_ = c;
    report_ = r;
  }

  void AddBaseline(CLI::App* c) {
    auto* b = c->add_subcommand("baseline",
                                "Time each task's reference eager and under torch.compile into KernelBench-shape "
                                "baseline files (cached)");
    AddSuiteSelection(b, &b_.suite_dir, &b_.levels, &b_.task_ids);
    b->add_option("--out", b_.out_dir,
                  "Output directory: baseline_time_torch.json and "
                  "baseline_time_torch_compile_inductor_default.json (existing entries are reused)")
        ->required();
    b->add_option("--modes", b_.modes, "Comma-separated: eager, compile (default both)")->delimiter(',');
    b->add_option("--trials", b_.trials, "Timed calls per task and mode (default 100)")->check(CLI::Range(1, 100000));
    b->add_option("--warmup", b_.warmup, "Untimed calls before timing (default 3)")->check(CLI::Range(0, 10000));
    b->add_option("--timing-budget", b_.budget_s, "Seconds of timing per task and mode at most (default 60)")
        ->check(CLI::PositiveNumber);
    b->add_option("--timeout", b_.timeout_s, "Wall-time limit of one task's child, seconds (default 900)")
        ->check(CLI::PositiveNumber);
    b->add_option("--device", b_.device, "GPU index (default: the first GPU)");
    b->add_flag("--cpu", b_.cpu, "Time on the CPU, even if a GPU is present");
    b->add_flag("--force", b_.force, "Time again even where a matching entry exists");
    baseline_ = b;
  }

  // --suite (required), --level and --task: which tasks of a suite a subcommand runs.
  template <class Levels, class Ids>
  static void AddSuiteSelection(CLI::App* c, std::string* suite, Levels* levels, Ids* task_ids) {
    c->add_option("--suite", *suite, "Suite directory (level1/, level2/, ... of task files)")->required();
    c->add_option("--level", *levels, "Only these levels (repeatable)");
    c->add_option("--task", *task_ids, "Only these task ids, like L1_19 (repeatable)");
  }

  void AddSelfCheck(CLI::App* c) {
    auto* s = c->add_subcommand("selfcheck",
                                "Verify each task's reference against itself: which tasks kz can judge here, "
                                "their footprint, wall time and peak GPU memory (resumable)");
    AddSuiteSelection(s, &sc_.suite_dir, &sc_.levels, &sc_.task_ids);
    s->add_option("--out", sc_.out_dir, "Output directory: selfcheck.jsonl, selfcheck.md")->required();
    s->add_option("--timeout", sc_.verify.timeout_s, "Wall-time limit of one task's run, seconds (default 300)")
        ->check(CLI::PositiveNumber);
    s->add_option("--device", sc_.verify.device, "GPU index (default: the first GPU)");
    s->add_option("-j,--jobs", sc_.verify.jobs, "Footprint children at once (default: cores / 2)");
    s->add_flag("--cpu", sc_.verify.cpu_only, "Run on the CPU, even if a GPU is present");
    selfcheck_ = s;
  }

  bool Parsed() const override { return cmd_->parsed(); }

  int Run() override {
    if (report_->parsed()) return scoring::RecomputeReport(report_out_, report_baseline_);
    if (baseline_->parsed()) return scoring::RunBaselines(b_, worker::LocateWorker(argv0_));
    if (selfcheck_->parsed()) {
      if (sc_.verify.cache_dir.empty()) sc_.verify.cache_dir = verify::DefaultCacheDir();
      if (sc_.verify.jobs <= 0) sc_.verify.jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
      sc_.use_gpu = !sc_.verify.cpu_only;
      sc_.verify.footprint = true;
      worker::WorkerConfig worker = worker::LocateWorker(argv0_);
      if (std::string err; !ApplySandbox(sandbox_, sc_.verify.cache_dir, &worker, &err)) {
        std::cerr << "kz bench: " << err << "\n";
        return verify::kExitUsage;
      }
      return scoring::RunSelfCheck(sc_, worker);
    }
    if (!generate_run_.empty() && !o_.generations.empty()) return Usage("give --generations or --generate, not both");
    if (generate_run_.empty() && !generate_args_.empty()) return Usage("arguments after -- need --generate RUN");
    if (generate_run_.empty() && turns_ > 1) return Usage("--turns needs --generate RUN (the model is asked again)");
    if (o_.suite_dir.empty() || (o_.generations.empty() && generate_run_.empty()) || o_.out_dir.empty())
      return Usage("--suite, --generations (or --generate) and --out are required");
    if (o_.verify.cache_dir.empty()) o_.verify.cache_dir = verify::DefaultCacheDir();
    o_.verify.footprint = true;  // known before a sample runs; too large: refused up front
    if (o_.verify.jobs <= 0) o_.verify.jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
    o_.use_gpu = !o_.verify.cpu_only;
    o_.trials_given = trials_->count() > 0;
    o_.policy_given = policy_->count() > 0;
    if (!o_.server.empty())
      for (const auto* opt : local_only_)
        if (opt->count() > 0)
          std::cerr << "kz bench: " << opt->get_name()
                    << " has no effect with --server (the server's settings apply)\n";
    worker::WorkerConfig worker = worker::LocateWorker(argv0_);
    if (std::string err; !ApplySandbox(sandbox_, o_.verify.cache_dir, &worker, &err)) return Usage(err);
    if (!generate_run_.empty()) return RunFollowing(worker);
    return scoring::RunBench(o_, worker);
  }

  // Turn 1 as a plain --generate run; with --turns T, turn t (2..T) asks kz generate --refine for
  // the samples not yet correct and verifies them into OUT/turn<t>, then the turns report.
  int RunFollowing(const worker::WorkerConfig& worker) {
    auto dir = [](const std::string& base, int t) { return t == 1 ? base : base + "/turn" + std::to_string(t); };
    int rc = 0;
    for (int t = 1; t <= turns_ && rc == 0; ++t) {
      scoring::FollowOptions f;
      f.generator_argv = {SiblingPath(argv0_.c_str(), "kz-generate"),
                          "generate",
                          "--suite",
                          o_.suite_dir,
                          "--out",
                          dir(generate_run_, t)};
      f.generator_argv.insert(f.generator_argv.end(), generate_args_.begin(), generate_args_.end());
      if (t > 1) {
        if (AllCorrect(dir(o_.out_dir, t - 1) + "/verdicts.jsonl")) break;  // every chain closed
        for (const std::string& a : {std::string("--refine"), dir(generate_run_, t - 1), std::string("--verdicts"),
                                     dir(o_.out_dir, t - 1) + "/verdicts.jsonl"})
          f.generator_argv.push_back(a);
        std::cerr << "kz bench: turn " << t << " of " << turns_ << "\n";
      }
      f.jsonl = dir(generate_run_, t) + "/generations.jsonl";
      scoring::BenchOptions o = o_;
      o.out_dir = dir(o_.out_dir, t);
      rc = scoring::RunBenchFollowing(o, f, worker);
    }
    if (turns_ == 1) return rc;
    nlohmann::json summary;
    std::string err, md;
    if (!scoring::WriteTurnsReport(o_.out_dir, generate_run_, turns_, &summary, &err)) return Usage(err);
    if (util::ReadFile(o_.out_dir + "/turns.md", &md, &err)) std::cout << md;
    return rc;
  }

  static bool AllCorrect(const std::string& log) {
    auto records = scoring::LoadVerdictLog(log).records;
    for (const auto& [key, r] : records)
      if (r.value("status", "") != "correct") return false;
    return true;
  }

  static int Usage(const std::string& msg) { return UsageError("kz bench", msg); }

 private:
  SandboxFlags sandbox_;
  std::string argv0_, report_out_, report_baseline_, generate_run_;
  std::vector<std::string> generate_args_;
  int turns_ = 1;
  CLI::App* cmd_ = nullptr;
  CLI::App* report_ = nullptr;
  CLI::App* baseline_ = nullptr;
  CLI::App* selfcheck_ = nullptr;
  scoring::SelfCheckOptions sc_ = [] {
    scoring::SelfCheckOptions o;
    o.verify.jobs = 0;
    return o;
  }();
  CLI::Option* trials_ = nullptr;
  CLI::Option* policy_ = nullptr;
  std::vector<const CLI::Option*> local_only_;
  scoring::BaselineOptions b_;
  scoring::BenchOptions o_ = [] {
    scoring::BenchOptions o;
    o.verify.jobs = 0;
    return o;
  }();
};
}  // namespace

std::unique_ptr<Command> AddBenchCommand(CLI::App& app, const std::string& argv0, scoring::RemoteBackend* remote) {
  return std::make_unique<BenchCommandImpl>(app, argv0, remote);
}

bool IsBenchServerInvocation(int argc, char** argv) {
  if (!IsInvocationOf(argc, argv, "bench")) return false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return false;
    if (a == "--server" || a.rfind("--server=", 0) == 0) return true;
  }
  return false;
}

}  // namespace kz::cli
