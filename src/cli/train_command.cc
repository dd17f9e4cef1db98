#include "cli/commands.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "curriculum/catalog.h"
#include "generate/prompt.h"
#include "scoring/verdict_log.h"
#include "train/report.h"
#include "train/rft_data.h"
#include "train/rollout.h"
#include "train/run_compare.h"
#include "train/run_config.h"
#include "train/teacher.h"
#include "train/train_loop.h"
#include "util/fs.h"
#include "util/hash.h"
#include "verify/device.h"
#include "verify/status.h"
#include "verify/verifier.h"

namespace kz::cli {
namespace {
using nlohmann::json;

constexpr const char* kTeacherFormat = "kz.teacher/1";

json OptionsJson(const train::TeacherOptions& o) {
  return {{"format", kTeacherFormat},        {"seed", o.seed},
          {"families", o.families},          {"max_chain", o.max_chain},
          {"max_elements", o.max_elements},  {"rows", {o.min_rows, o.max_rows}},
          {"cols", {o.min_cols, o.max_cols}}};
}

// The SFT record of a correct pair: the Coder's own prompt (the shipped Triton template,
// rendered by the same function as kz train's rollouts) and the kernel as the answer the template asks for.
json SftRecord(const train::TeacherPair& p, const generate::PromptTemplate& t) {
  train::RolloutTask task{p.id, "", p.task_source};
  train::RolloutOptions o;
  o.prompt_template = t.text;
  std::string prompt, err;
  train::RenderCoderPrompt(task, o, &prompt, &err);  // the shipped template renders (it was loaded)
  return {{"id", p.id},
          {"family", p.family},
          {"prompt", prompt},
          {"completion", "```python\n" + p.kernel_source + "```"},
          {"template", t.name}};
}

class TrainCommandImpl : public Command {
 public:
  TrainCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* train = app.add_subcommand("train", "Training (docs/training.md): kz train --config RUN.toml --out RUN_DIR");
    train->require_subcommand(0, 1);
    train->add_option("--config", config_path_, "The run config (TOML; docs/training.md, \"The run config\")");
    train->add_option("--out", run_out_, "The run directory (created, or resumed)");
    auto* t = teacher_ =
        train->add_subcommand("teacher", "Template teacher: (task, Triton kernel) pairs for the SFT cold start");
    t->add_option("--out", out_, "Run directory (tasks/, kernels/, pairs.jsonl, verdicts.jsonl, sft.jsonl)")
        ->required();
    t->add_option("--pairs", pairs_, "Pairs to make")->required()->check(CLI::Range(1, 1000000));
    t->add_option("--seed", o_.seed, "Seed (default 1)");
    t->add_option("--families", o_.families, "Only these: elementwise, broadcast, row_reduce, softmax")->delimiter(',');
    t->add_option("--max-chain", o_.max_chain, "Unary ops per chain at most (default 3)");
    t->add_option("--max-elements", o_.max_elements, "M * N at most (default 65536)");
    t->add_option("--max-rows", o_.max_rows, "M at most (default 256)");
    t->add_option("--max-cols", o_.max_cols, "N at most (default 1024)");
    t->add_flag("--verify", verify_, "Verify every pair (resumable) and write sft.jsonl from the correct ones");
    t->add_flag("--cpu", v_.cpu_only, "Verify on the CPU (Triton under the interpreter) even with a GPU");
    t->add_option("--timeout", v_.timeout_s, "Wall-time limit of one pair's run, seconds (default 300)");
    t->add_option("-j,--jobs", v_.jobs, "Builds and screens at once (default 1)");
    auto* f = rft_ =
        train->add_subcommand("rft", "Diversity-preserving RFT data: the runs' verified-correct samples as SFT pairs");
    f->add_option("runs", rft_o_.runs, "kz train run directories")->required();
    f->add_option("--out", rft_o_.out, "The SFT file to write (JSON lines; a next run's [sft] data)")->required();
    f->add_option("--per-task", rft_o_.per_task, "Samples per task at most (default 4)")->check(CLI::Range(1, 10000));
    f->add_option("--backend", rft_o_.backend, "The Coder's kernel language, for its prompt (default triton)")
        ->check(CLI::IsMember({"triton", "cuda"}));
    auto* cmp = compare_ =
        train->add_subcommand("compare", "Two runs' evaluations task by task (B - A, paired intervals)");
    cmp->add_option("a", compare_o_.run_a, "Run A (the baseline), a kz train run directory")->required();
    cmp->add_option("b", compare_o_.run_b, "Run B")->required();
    cmp->add_option("--unit", compare_o_.unit, "The evaluation unit (default: the last one both finished)");
    cmp->add_option("--out", compare_o_.out_dir, "Where to write compare.md and compare.json (default B/compare)");
    cmp->add_option("--resamples", compare_o_.resamples, "Bootstrap resamples (default 10000)")
        ->check(CLI::Range(100, 10000000));
    cmp->add_option("--level", compare_o_.level, "Interval level (default 0.95)")->check(CLI::Range(0.5, 0.999));
    cmp->add_option("--seed", compare_o_.seed, "Bootstrap seed (default 1)");
    auto* r = report_ =
        train->add_subcommand("report", "Tables, paired bootstrap intervals and plots of a run directory");
    r->add_option("run", report_o_.run_dir, "The run directory (kz train --out)")->required();
    r->add_option("--out", report_o_.out_dir,
                  "Where to write report.md, report.json, coder.svg, eval.svg (default RUN/report)");
    r->add_option("--resamples", report_o_.resamples, "Bootstrap resamples (default 10000)")
        ->check(CLI::Range(100, 10000000));
    r->add_option("--level", report_o_.level, "Interval level (default 0.95)")->check(CLI::Range(0.5, 0.999));
    r->add_option("--seed", report_o_.seed, "Bootstrap seed (default 1)");
  }

  int Run() override {
    if (report_->parsed()) return RunReport();
    if (rft_->parsed()) return RunRft();
    if (compare_->parsed()) return RunCompare();
    return teacher_->parsed() ? RunTeacher() : RunLoop();
  }

 private:
  int RunLoop();
  int RunReport() {
    json summary;
    std::string err;
    if (!train::WriteTrainReport(report_o_, &summary, &err)) {
      std::cerr << "kz train report: " << err << "\n";
      return verify::kExitUsage;
    }
    std::string out = report_o_.out_dir.empty() ? report_o_.run_dir + "/report" : report_o_.out_dir, md;
    if (util::ReadFile(out + "/report.md", &md, &err)) std::cout << md;
    std::cerr << "kz train report: " << out << "/{report.md,report.json,coder.svg,eval.svg}\n";
    return 0;
  }
  int RunCompare() {
    json summary;
    std::string err, md;
    if (!train::WriteTrainCompare(compare_o_, &summary, &err)) {
      std::cerr << "kz train compare: " << err << "\n";
      return verify::kExitUsage;
    }
    std::string out = compare_o_.out_dir.empty() ? compare_o_.run_b + "/compare" : compare_o_.out_dir;
    if (util::ReadFile(out + "/compare.md", &md, &err)) std::cout << md;
    std::cerr << "kz train compare: " << out << "/{compare.md,compare.json}\n";
    return 0;
  }
  int RunRft() {
    auto fail = [](const std::string& why) {
      std::cerr << "kz train rft: " << why << "\n";
      return verify::kExitUsage;
    };
    generate::PromptTemplate t;
    std::string err;
    if (!generate::LoadTemplate(
            generate::LocatePromptsDir(argv0_) + "/" + generate::DefaultTemplateName(rft_o_.backend, false), &t, &err))
      return fail(err);
    rft_o_.prompt_template = t.text;
    train::RftDataReport r;
    if (!train::BuildRftData(rft_o_, &r, &err)) return fail(err);
    std::cerr << "kz train rft: " << r.verdicts << " verdicts, " << r.correct << " correct (" << r.unreadable
              << " whose candidate or task changed since), " << r.duplicates << " duplicates, " << r.over_cap
              << " past the cap of " << rft_o_.per_task << " per task; " << r.written << " pairs over " << r.tasks
              << " tasks in " << rft_o_.out << "\n";
    if (r.written == 0) std::cerr << "kz train rft: no correct sample: the file is empty\n";
    return 0;
  }
  int RunTeacher() {
    if (std::string why = train::Validate(o_); !why.empty()) return Usage(why);
    std::string err;
    for (const char* sub : {"/tasks", "/kernels"})
      if (!util::MakeDirs(out_ + sub, &err)) return Usage(err);
    if (int rc = CheckOptions(); rc != 0) return rc;
    std::vector<train::TeacherPair> pairs;
    std::string listing;
    for (int64_t i = 0; i < pairs_; ++i) {
      pairs.push_back(train::MakePair(o_, i));
      const auto& p = pairs.back();
      if (!util::WriteFileAtomic(TaskPath(p), p.task_source, &err) ||
          !util::WriteFileAtomic(KernelPath(p), p.kernel_source, &err))
        return Usage(err);
      listing += json{{"id", p.id},
                      {"family", p.family},
                      {"ops", p.ops},
                      {"rows", p.rows},
                      {"cols", p.cols},
                      {"task", TaskPath(p)},
                      {"candidate", KernelPath(p)},
                      {"backend", "triton"}}
                     .dump() +
                 "\n";
    }
    if (!util::WriteFileAtomic(out_ + "/pairs.jsonl", listing, &err)) return Usage(err);
    std::cerr << "kz train teacher: " << pairs.size() << " pairs in " << out_ << "\n";
    return verify_ ? VerifyPairs(pairs) : 0;
  }

  std::string TaskPath(const train::TeacherPair& p) const { return out_ + "/tasks/" + p.id + ".py"; }
  std::string KernelPath(const train::TeacherPair& p) const { return out_ + "/kernels/" + p.id + ".py"; }
  static int Usage(const std::string& why) { return UsageError("kz train teacher", why); }

  // A run directory holds one option set: another one would mix two sequences.
  int CheckOptions() {
    std::string path = out_ + "/teacher.json", text, err;
    json want = OptionsJson(o_);
    if (util::ReadFile(path, &text, &err)) {
      json have = json::parse(text, nullptr, false);
      if (have != want)
        return Usage(path + " holds another run's options (" + (have.is_discarded() ? "unparsable" : have.dump()) +
                     "); use a new --out or the same options");
      return 0;
    }
    return util::WriteFileAtomic(path, want.dump(1) + "\n", &err) ? 0 : Usage(err);
  }

  int VerifyPairs(const std::vector<train::TeacherPair>& pairs);

  CLI::App* teacher_ = nullptr;
  CLI::App* report_ = nullptr;
  CLI::App* rft_ = nullptr;
  CLI::App* compare_ = nullptr;
  train::TrainCompareOptions compare_o_;
  train::RftDataOptions rft_o_;
  train::TrainReportOptions report_o_;
  std::string config_path_, run_out_;
  std::string argv0_, out_;
  int64_t pairs_ = 0;
  bool verify_ = false;
  train::TeacherOptions o_;
  verify::VerifyOptions v_;
};

// A relative path of the config is relative to the config file's directory.
std::string Resolve(const std::string& path, const std::string& base) {
  if (path.empty() || path.front() == '/') return path;
  return (std::filesystem::path(base) / path).lexically_normal().string();
}

int TrainCommandImpl::RunLoop() {
  auto usage = [](const std::string& why) {
    std::cerr << "kz train: " << why << "\n";
    return verify::kExitUsage;
  };
  if (config_path_.empty() || run_out_.empty())
    return usage("--config and --out are required (or a subcommand: teacher)");
  train::TrainLoopOptions o;
  std::string err;
  if (!util::ReadFile(config_path_, &o.config_text, &err)) return usage(err);
  if (!train::ParseRunConfig(o.config_text, &o.config, &err)) return usage(config_path_ + ": " + err);
  std::string base = std::filesystem::absolute(config_path_).parent_path().string();
  auto& pr = o.config.proposer;
  for (std::string* p : {&o.config.model, &o.config.sft_data, &o.config.coder_tasks, &o.config.eval_tasks, &pr.model,
                         &pr.catalog, &pr.stats})
    *p = Resolve(*p, base);
  if (!util::PathExists(o.config.model)) return usage("[model] path " + o.config.model + " does not exist");
  generate::PromptTemplate t;
  std::string prompts = generate::LocatePromptsDir(argv0_);
  if (!generate::LoadTemplate(prompts + "/" + generate::DefaultTemplateName(o.config.backend, false), &t, &err))
    return usage(err);
  o.prompt_template = t.text;
  o.worker = worker::LocateWorker(argv0_);
  if (pr.steps_per_round > 0) {  // the Proposer phase: its model, catalog, statistics, prompt
    if (pr.catalog.empty()) pr.catalog = curriculum::DefaultCatalogPath(argv0_);
    for (const auto& [what, path] : {std::pair{"model", pr.model}, {"catalog", pr.catalog}, {"stats", pr.stats}})
      if (!path.empty() && !util::PathExists(path))
        return usage(std::string("[proposer] ") + what + " " + path + " does not exist");
    generate::PromptTemplate pt;
    if (!generate::LoadTemplate(prompts + "/proposer_module.v1.txt", &pt, &err)) return usage(err);
    o.proposer_template = pt.text;
  }
  o.out = std::filesystem::absolute(run_out_).lexically_normal().string();
  o.trainer = train::DefaultTrainerConfig(argv0_);
  verify::VerifyOptions v;
  v.cpu_only = o.config.verify_cpu;
  v.timeout_s = o.config.verify_timeout_s;
  v.jobs = o.config.verify_jobs;
  v.gpu_concurrency = o.config.verify_concurrency;
  v.timing_ci_rel = o.config.verify_timing_ci;
  auto gpus = v.cpu_only ? std::vector<verify::Gpu>{} : verify::DetectGpus();
  verify::Verifier verifier(worker::LocateWorker(argv0_), v, gpus);
  o.verify = [&](const std::vector<verify::Sample>& samples, const std::function<void(size_t, const json&)>& cb) {
    verifier.VerifyAll(samples, cb);
  };
  return train::RunTraining(o);
}

int TrainCommandImpl::VerifyPairs(const std::vector<train::TeacherPair>& pairs) {
  std::string log_path = out_ + "/verdicts.jsonl", err;
  auto done = scoring::LoadVerdictLog(log_path).records;
  auto key = [](const train::TeacherPair& p) { return scoring::ResumeKey(p.id, 0, util::Hash128Hex(p.kernel_source)); };
  std::vector<verify::Sample> samples;
  std::vector<const train::TeacherPair*> pending;
  for (const auto& p : pairs)
    if (!done.count(key(p))) {
      samples.push_back({TaskPath(p), KernelPath(p), "triton", std::nullopt, p.id});
      pending.push_back(&p);
    }
  scoring::VerdictLog log;
  if (!log.Open(log_path, &err)) return Usage(err);
  if (!samples.empty()) {
    auto gpus = v_.cpu_only ? std::vector<verify::Gpu>{} : verify::DetectGpus();
    std::cerr << "kz train teacher: verifying " << samples.size() << " pairs (" << (pairs.size() - samples.size())
              << " resumed) on " << (gpus.empty() ? "the CPU" : "GPU " + std::to_string(gpus.front().index)) << "\n";
    verify::Verifier verifier(worker::LocateWorker(argv0_), v_, gpus);
    verifier.VerifyAll(samples, [&](size_t i, const json& v) {
      const auto& p = *pending[i];
      json r = {{"task", p.id},
                {"sample", 0},
                {"code_xxh", util::Hash128Hex(p.kernel_source)},
                {"family", p.family},
                {"status", v.value("status", "?")},
                {"reason", v.value("reason", "")}};
      if (!log.Append(r, &err)) std::cerr << "kz train teacher: " << err << "\n";
      done[key(p)] = r;
      std::cerr << "kz train teacher: " << i + 1 << "/" << samples.size() << " " << p.id << ": "
                << r["status"].get<std::string>() << "\n";
    });
  }
  generate::PromptTemplate t;
  std::string prompts = generate::LocatePromptsDir(argv0_);
  if (!generate::LoadTemplate(prompts + "/" + generate::DefaultTemplateName("triton", false), &t, &err))
    return Usage(err);
  std::string sft;
  std::map<std::string, std::pair<int, int>> by_family;  // correct, all
  for (const auto& p : pairs) {
    bool ok = done.count(key(p)) && done[key(p)].value("status", "") == "correct";
    by_family[p.family].second++;
    if (!ok) continue;
    by_family[p.family].first++;
    sft += SftRecord(p, t).dump() + "\n";
  }
  if (!util::WriteFileAtomic(out_ + "/sft.jsonl", sft, &err)) return Usage(err);
  int correct = 0;
  std::cout << "family        correct / pairs\n";
  for (const auto& [f, n] : by_family) {
    std::printf("%-13s %7d / %d\n", f.c_str(), n.first, n.second);
    correct += n.first;
  }
  std::cout << "all           " << correct << " / " << pairs.size() << "; sft.jsonl holds the " << correct
            << " correct\n";
  return correct == int(pairs.size()) ? 0 : 1;
}

}  // namespace

std::unique_ptr<Command> AddTrainCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<TrainCommandImpl>(app, argv0);
}

}  // namespace kz::cli
