#include "cli/commands.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/optimize_experience.h"
#include "cli/optimize_remote.h"
#include "cli/sandbox_flags.h"
#include "generate/openai_endpoint.h"
#include "generate/prompt.h"
#include "generate/replay_endpoint.h"
#include "optimize/optimize_loop.h"
#include "optimize/suite_summary.h"
#include "optimize/transcript_endpoint.h"
#include "scoring/suite.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/key_lock.h"
#include "verify/calibrate.h"
#include "verify/profiler.h"
#include "verify/status.h"
#include "verify/verifier.h"

namespace kz::cli {
namespace {
using json = nlohmann::json;

class OptimizeCommandImpl : public Command {
 public:
  OptimizeCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("optimize", "Test-time search for one task's kernel (docs/optimize.md)");
    c->add_option("--task", c_.task_path, "Task file (KernelBench format)");
    c->add_option("--suite", suite_,
                  "A KernelBench-layout suite: every task with the same budget, into --out/<task id>");
    c->add_option("--task-id", task_ids_, "With --suite: only these task ids, like L1_19 (repeatable)");
    c->add_option("--backend", c_.backend, "cuda (load_inline) or triton (default)")
        ->check(CLI::IsMember({"cuda", "triton"}));
    c->add_option("--endpoint", endpoint_, "OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1");
    c->add_option("--model", c_.model, "Model name sent to the endpoint");
    c->add_option("--out", out_, "Run directory (new)");
    c->add_option("--resume", resume_, "Continue the run in this directory (its run.json holds the settings)");
    c->add_option("--replay", replay_,
                  "Redo the run in this directory from its transcript and verdicts (no model, no GPU) into --out");
    c->add_option("--initial", c_.initial, "A seed kernel verified before the first request");
    c->add_option("--experience", experience_,
                  "The experience library (SQLite; default <cache dir>/experience.db; 'none' for none)");
    c->add_option("--budget-tokens", c_.budget.v[0], "Prompt + completion tokens at most")->check(CLI::PositiveNumber);
    c->add_option("--budget-requests", c_.budget.v[1], "LLM requests at most (default 1000)")
        ->check(CLI::PositiveNumber);
    c->add_option("--budget-gpu-s", c_.budget.v[2], "Seconds of verification at most")->check(CLI::PositiveNumber);
    c->add_option("--budget-compile-s", c_.budget.v[3], "Seconds of extension builds at most (default 3600)")
        ->check(CLI::PositiveNumber);
    c->add_option("--iterations", c_.iterations, "LLM iterations at most (default 8)")->check(CLI::Range(1, 1000000));
    c->add_option("--islands", c_.islands, "Islands (default 2)")->check(CLI::Range(1, 64));
    c->add_option("--migrate-every", c_.migrate_every, "Iterations between migrations (default 4; 0 never)")
        ->check(CLI::NonNegativeNumber);
    c->add_option("--seed", c_.seed, "Seed of parents, mutations and the requests' seeds (default 0)");
    c->add_option("--temperature", c_.temperature, "Sampling temperature (default 0.8)")->check(CLI::NonNegativeNumber);
    c->add_option("--max-tokens", c_.max_tokens, "Completion tokens per request (default 1024)")
        ->check(CLI::PositiveNumber);
    c->add_option("--deadline", c_.request_deadline_s, "Seconds per request, retries included (default 300)")
        ->check(CLI::PositiveNumber);
    c->add_option("--timeout", c_.verify_timeout_s, "A verification's wall limit, s (default 120)")
        ->check(CLI::PositiveNumber);
    c->add_option("--timing-ci", timing_ci_, "Adaptive timing's relative interval half-width (default 0.02)")
        ->check(CLI::NonNegativeNumber);
    c->add_flag("--cpu", cpu_, "Verify on the CPU (references on the CPU, Triton interpreted; no timing)");
    c->add_option("--server", server_,
                  "Verify through the kz serve at this URL (e.g. http://127.0.0.1:8000) instead of in process; "
                  "not kept in run.json: give it again with --resume");
    c->add_flag("--ncu", ncu_,
                "Profile each kept candidate's kernels with Nsight Compute (a separate child; "
                "its seconds are charged as GPU-seconds) and feed the counters back");
    c->add_option("--ncu-timeout", ncu_timeout_s_, "A profiling child's wall limit, s (default 120)")
        ->check(CLI::PositiveNumber);
    AddSandboxOptions(c, &sandbox_, "best-effort");
  }

  int Run() override {
    if (!suite_.empty()) return RunSuite();
    return RunOne();
  }

 private:
  // Each task in turn, sequentially, into out_/<id> (resumed when it already holds a run:
  // rerunning the same command continues the suite); then suite.json and suite.md.
  int RunSuite() {
    if (out_.empty() || !resume_.empty() || !replay_.empty() || !c_.task_path.empty())
      return Usage("--suite DIR takes --out RUN (rerun the same command to continue), not --task/--resume/--replay");
    scoring::Suite suite;
    std::string err;
    if (!scoring::ReadSuite(suite_, &suite, &err)) return Usage("--suite: " + err);
    auto tasks = scoring::SelectTasks(suite, {}, task_ids_);
    if (tasks.empty()) return Usage("--suite " + suite_ + ": no task selected");
    if (!util::MakeDirs(out_, &err)) return Usage(err);
    const optimize::OptimizeConfig flags = c_;
    const std::string root = out_;
    std::vector<optimize::SuiteTaskResult> results;
    for (size_t i = 0; i < tasks.size(); ++i) {
      std::string dir = root + "/" + tasks[i]->id;
      std::cerr << "kz optimize: suite task " << i + 1 << "/" << tasks.size() << ": " << tasks[i]->id << "\n";
      c_ = flags;
      c_.task_path = tasks[i]->path;
      bool resume = optimize::RunStore(dir).HasRun();
      out_ = resume ? "" : dir;
      resume_ = resume ? dir : "";
      results.push_back({tasks[i]->id, dir, RunOne()});
    }
    json summary = optimize::SummariseSuite(results);
    if (!util::WriteFileAtomic(root + "/suite.json", summary.dump(1) + "\n", &err) ||
        !util::WriteFileAtomic(root + "/suite.md", optimize::SuiteMarkdown(summary), &err))
      return Usage(err);
    std::cerr << optimize::SuiteMarkdown(summary);
    bool failed = std::any_of(results.begin(), results.end(), [](const auto& r) { return r.exit_code == 3; });
    return failed ? int(optimize::OptimizeExit::kFailed) : 0;
  }

  int RunOne() {
    std::string err;
    if (int(!out_.empty()) + int(!resume_.empty()) != 1 || (!replay_.empty() && out_.empty()))
      return Usage("give --out DIR (a new run), --resume DIR, or --replay DIR --out DIR2");
    std::string dir = resume_.empty() ? out_ : resume_;
    if (!resume_.empty() && !util::PathExists(dir)) return Usage("--resume " + dir + ": no such directory");
    if (!util::MakeDirs(dir, &err)) return Usage(err);
    bool busy = false;
    auto lock = util::KeyLock::TryAcquire(dir + "/lock", &busy, /*keep_file=*/true);
    if (busy) return Usage(dir + " is in use by another kz optimize (its lock is held)");
    if (!lock) return Usage(dir + "/lock cannot be created: the run directory is not writable");
    optimize::RunStore store(std::filesystem::absolute(dir).string());
    if (!Configure(store, &err)) return Usage(err);
    std::string prompts = generate::LocatePromptsDir(argv0_), tmpl_err;
    generate::PromptTemplate tmpl;
    if (!generate::LoadTemplate(prompts + "/optimize.v1.txt", &tmpl, &tmpl_err)) return Usage(tmpl_err);
    // The model: the live endpoint, or for a replay the source run's transcript; either way
    // behind this run's own transcript (answered first, appended to).
    generate::OpenAiOptions oo;
    oo.base_url = c_.endpoint;
    oo.model = c_.model;
    std::unique_ptr<generate::Endpoint> live;
    if (replay_.empty()) {
      live = std::make_unique<generate::OpenAiEndpoint>(oo);
    } else {
      auto source = std::make_unique<generate::ReplayEndpoint>();
      if (!source->Load(replay_ + "/transcript.jsonl", c_.model, &err)) return Usage(err);
      live = std::move(source);
    }
    optimize::TranscriptEndpoint endpoint(live.get(), c_.model);
    if (!endpoint.Open(store.Path("transcript.jsonl"), &err)) return Usage(err);
    optimize::OptimizeIo io;
    io.endpoint = &endpoint;
    io.prompt_template = tmpl.text;
    io.progress = [](const std::string& line) { std::cerr << "kz optimize: " << line << "\n"; };
    if (!MakeVerify(&io, &err)) return Usage(err);
    ExperienceParts experience;
    if (!MakeExperienceIo(c_.experience, replay_, store.dir(), worker::LocateWorker(argv0_), &io, &experience, &err))
      return Usage(err);
    auto e = optimize::RunOptimize(c_, store, io, &err);
    if (e != optimize::OptimizeExit::kDone) std::cerr << "kz optimize: " << err << "\n";
    return int(e);
  }

  // A new run writes run.json from the flags; --resume reads it (a different --endpoint is
  // allowed: a restarted server); --replay copies the source run's.
  bool Configure(const optimize::RunStore& store, std::string* err) {
    if (!resume_.empty() || !replay_.empty()) {
      json run;
      optimize::RunStore src(resume_.empty() ? replay_ : resume_);
      if (!src.HasRun()) return *err = src.dir() + " holds no kz optimize run (no run.json)", false;
      if (!src.ReadRun(&run, err)) return false;
      auto c = optimize::OptimizeConfig::FromJson(run, err);
      if (!c) return false;
      c_ = *c;
      if (!endpoint_.empty()) c_.endpoint = endpoint_;  // a restarted server may have moved
      if (replay_.empty() && c_.endpoint.empty()) return *err = "--resume needs --endpoint (run.json has none)", false;
      if (!replay_.empty()) {
        if (store.HasRun()) return *err = store.dir() + " already holds a run", false;
        if (!c_.initial.empty()) c_.initial = src.Path("candidates/init.py");  // the source's copy
        return store.WriteRun(run, err);
      }
      return true;
    }
    if (store.HasRun()) return *err = store.dir() + " already holds a run: --resume it or give another --out", false;
    if (c_.task_path.empty() || c_.model.empty() || endpoint_.empty())
      return *err = "a new run needs --task, --model and --endpoint", false;
    if (c_.budget.v[0] <= 0 || c_.budget.v[2] <= 0)
      return *err = "a new run needs --budget-tokens and --budget-gpu-s (> 0)", false;
    if (!util::PathExists(c_.task_path)) return *err = "--task " + c_.task_path + " does not exist", false;
    if (!c_.initial.empty() && !util::PathExists(c_.initial))
      return *err = "--initial " + c_.initial + " does not exist", false;
    c_.task_path = std::filesystem::absolute(c_.task_path).string();
    if (!c_.initial.empty()) c_.initial = std::filesystem::absolute(c_.initial).string();
    c_.endpoint = endpoint_;
    c_.cpu = cpu_;
    c_.timing_ci = timing_ci_;
    c_.sandbox = sandbox_.mode;
    c_.ncu = ncu_;
    c_.ncu_timeout_s = ncu_timeout_s_;
    c_.experience = experience_.empty() ? verify::DefaultCacheDir() + "/experience.db" : experience_;
    if (c_.experience != "none") {
      if (!util::MakeDirs(std::filesystem::path(c_.experience).parent_path().string(), err)) return false;
      c_.experience = std::filesystem::absolute(c_.experience).string();
    }
    return store.WriteRun(c_.ToJson(), err);
  }

  // The verification (and with --ncu the profile) of a candidate: in process, through
  // --server, or for a replay the source run's verdicts and profiles.
  bool MakeVerify(optimize::OptimizeIo* io, std::string* err) {
    optimize::VerifyOne* out = &io->verify;
    if (!server_.empty() && replay_.empty()) {
      io->profile = [](const verify::Sample&, const json&, double) {
        return json{{"available", false}, {"reason", "ncu: not run through --server (the GPU is the server's)"}};
      };
      return MakeRemoteVerify(server_, c_.timing_ci, out, err);
    }
    if (!replay_.empty()) {  // the source run's verdicts by code hash; the task check by its file
      io->profile = ReplayProfiles(replay_);
      auto verdicts = std::make_shared<std::map<std::string, json>>(optimize::RunStore(replay_).LoadVerdicts());
      std::string src = replay_;
      *out = [verdicts, src](const verify::Sample& s, double, double) {
        std::string path = s.self_check ? src + "/task_check.json" : s.candidate_path, text, e;
        if (s.self_check) {
          json v;
          if (util::ReadFile(path, &text, &e)) v = json::parse(text, nullptr, false);
          return v.is_object() ? v : json{{"status", "not_recorded"}, {"reason", "replay: no task_check.json"}};
        }
        util::ReadFile(path, &text, &e);
        auto it = verdicts->find(util::Hash128Hex(text));
        return it != verdicts->end()
                   ? it->second
                   : json{{"status", "not_recorded"}, {"reason", "replay: the source run has no verdict for " + path}};
      };
      return true;
    }
    verify::VerifyOptions v;
    v.cpu_only = c_.cpu;
    v.timing_ci_rel = c_.timing_ci;
    v.cache_dir = verify::DefaultCacheDir();
    worker::WorkerConfig w = worker::LocateWorker(argv0_);
    SandboxFlags sandbox = sandbox_;
    sandbox.mode = c_.sandbox;
    if (!ApplySandbox(sandbox, v.cache_dir, &w, err)) return false;
    v.footprint = true;  // the roofline's cost (bytes, FLOPs); one CPU child per run
    auto gpus = c_.cpu ? std::vector<verify::Gpu>{} : verify::DetectGpus();
    std::shared_ptr<verify::RooflineAnnotator> roof;
    if (!gpus.empty())
      roof = std::make_shared<verify::RooflineAnnotator>(
          w, v.cache_dir, gpus.front().index,
          [](const std::string& line) { std::cerr << "kz optimize: " << line << "\n"; });
    auto profiler =
        std::make_shared<verify::Profiler>(verify::ProfilerOptions{"", !gpus.empty(), 8, 120, v.cache_dir + "/tmp"});
    io->profile = [w, v, gpus, profiler](const verify::Sample& s, const json& verdict, double timeout_s) {
      int launches = 0;
      std::vector<std::string> names = verify::CandidateKernelNames(verdict, &launches);
      return profiler->Profile(names, launches, verify::VerifierProfileChild(w, v, gpus, s), timeout_s).ToJson();
    };
    *out = [w, v, gpus, roof](const verify::Sample& s, double timeout_s, double compile_s) {
      verify::VerifyOptions o = v;
      o.timeout_s = timeout_s;
      o.compile_timeout_s = compile_s;
      verify::Verifier verifier(w, o, gpus);
      json verdict = verifier.VerifyAll({s}).at(0);
      if (roof) roof->Annotate(&verdict);
      return verdict;
    };
    return true;
  }

  // A replay's profiles: the source run's, by code hash (its seconds charged again, as its verdicts').
  static optimize::ProfileOne ReplayProfiles(const std::string& source) {
    auto by_hash = std::make_shared<std::map<std::string, json>>();
    std::string text, e, line;
    util::ReadFile(source + "/candidates.jsonl", &text, &e);
    std::istringstream in(text);
    while (std::getline(in, line)) {
      json r = json::parse(line, nullptr, false);
      if (r.is_object() && r.contains("profile") && r.contains("code_xxh") && r["code_xxh"].is_string())
        by_hash->emplace(r["code_xxh"].get<std::string>(), r["profile"]);
    }
    return [by_hash](const verify::Sample& s, const json&, double) {
      std::string code, e2;
      util::ReadFile(s.candidate_path, &code, &e2);
      auto it = by_hash->find(util::Hash128Hex(code));
      return it != by_hash->end() ? it->second : json{{"available", false}, {"reason", "replay: no profile recorded"}};
    };
  }

  static int Usage(const std::string& msg) { return UsageError("kz optimize", msg); }

  std::string argv0_, endpoint_, out_, resume_, replay_, experience_, suite_;
  std::vector<std::string> task_ids_;
  optimize::OptimizeConfig c_ = Defaults();
  double timing_ci_ = 0.02;
  bool cpu_ = false, ncu_ = false;
  double ncu_timeout_s_ = 120;
  std::string server_;  // --server: kz serve's URL
  SandboxFlags sandbox_;

  static optimize::OptimizeConfig Defaults() {
    optimize::OptimizeConfig c;
    c.budget.v = {0, 1000, 0, 3600};
    return c;
  }
};
}  // namespace

std::unique_ptr<Command> AddOptimizeCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<OptimizeCommandImpl>(app, argv0);
}

}  // namespace kz::cli
