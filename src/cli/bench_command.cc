#include "cli/bench_command.h"

#include <algorithm>
#include <iostream>
#include <thread>

#include "bench/runner.h"
#include "verify/status.h"

namespace kz::cli {
namespace {

class BenchCommandImpl : public BenchCommand {
 public:
  BenchCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("bench", "Score generations on a KernelBench-format suite: pass@k, fast_p@k");
    c->add_option("--suite", o_.suite_dir, "Suite directory (level1/, level2/, ... of task files)");
    c->add_option("--generations", o_.generations,
                  "Directory of level_<L>_problem_<P>_sample_<S>_kernel.py files, or a JSONL file");
    c->add_option("--out", o_.out_dir, "Output directory (verdicts.jsonl, report.json, report.md, plots)");
    c->add_option("--level", o_.levels, "Only these levels (repeatable)");
    c->add_option("--task", o_.task_ids, "Only these task ids, like L1_19 (repeatable)");
    c->add_option("-j,--jobs", o_.verify.jobs, "Builds at once (default: cores / 2)");
    c->add_flag("--cpu", o_.verify.cpu_only, "Never use a GPU, even if one is present");
    c->add_option("--timeout", o_.verify.timeout_s, "Wall-time limit of one sample's run, seconds");
    c->add_option("--trials", o_.verify.trials, "Correctness trials per sample")->check(CLI::Range(1, 1000));
    c->add_option("--policy", o_.verify.policy, "Integrity policy: strict (default) or kernelbench")
        ->check(CLI::IsMember({"strict", "kernelbench"}));
    c->add_option("--cache-dir", o_.verify.cache_dir, "Compiled-extension cache (default ~/.cache/kernelzero)");
    c->add_option("--batch", o_.batch, "Samples compiled together before they run (default 32)")
        ->check(CLI::Range(1, 100000));
    auto* r = c->add_subcommand("report", "Recompute report.* from <out>/verdicts.jsonl (verifies nothing)");
    r->add_option("--out", report_out_, "Output directory of a kz bench run")->required();
    cmd_ = c;
    report_ = r;
  }

  bool Parsed() const override { return cmd_->parsed(); }

  int Run() override {
    if (report_->parsed()) return bench::RecomputeReport(report_out_);
    if (o_.suite_dir.empty() || o_.generations.empty() || o_.out_dir.empty()) {
      std::cerr << "kz bench: --suite, --generations and --out are required\n";
      return verify::kExitUsage;
    }
    if (o_.verify.cache_dir.empty()) o_.verify.cache_dir = verify::DefaultCacheDir();
    if (o_.verify.jobs <= 0) o_.verify.jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
    o_.use_gpu = !o_.verify.cpu_only;
    return bench::RunBench(o_, worker::LocateWorker(argv0_));
  }

 private:
  std::string argv0_, report_out_;
  CLI::App* cmd_ = nullptr;
  CLI::App* report_ = nullptr;
  bench::BenchOptions o_ = [] { bench::BenchOptions o; o.verify.jobs = 0; return o; }();
};
}  // namespace

std::unique_ptr<BenchCommand> AddBenchCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<BenchCommandImpl>(app, argv0);
}

}  // namespace kz::cli
