#include "cli/commands.h"

#include <csignal>
#include <filesystem>
#include <iostream>

#include "generate/generator.h"
#include "generate/openai_endpoint.h"
#include "generate/prompt.h"
#include "generate/proposer.h"
#include "generate/replay_endpoint.h"
#include "verify/status.h"

namespace kz::cli {
namespace {

std::atomic<bool> g_cancel{false};
extern "C" void OnSigint(int) { g_cancel = true; }

class GenerateCommandImpl : public Command {
 public:
  GenerateCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("generate", "Sample kernels from an OpenAI-compatible model for a suite");
    c->add_option("--suite", o_.suite_dir, "Suite directory (level1/, level2/, ... of task files); Coder mode");
    c->add_flag("--proposer", proposer_, "Proposer mode: API sets in, KernelBench-format modules out");
    c->add_option("--api-sets", api_sets_, "With --proposer: JSONL of API sets, one {\"id\", \"apis\"} per line");
    c->add_option("--out", o_.out_dir, "Run directory: generations.jsonl, KernelBench-layout files")->required();
    c->add_option("--model", o_.model, "Model name sent to the endpoint")->required();
    c->add_option("--endpoint", opt_.base_url, "Base URL, e.g. http://127.0.0.1:8080/v1 (not needed with --replay)");
    c->add_option("--backend", o_.backend, "cuda (load_inline) or triton")->check(CLI::IsMember({"cuda", "triton"}));
    c->add_option("-n,--samples", o_.samples, "Samples per task (default 1)")->check(CLI::Range(1, 100000));
    c->add_option("--concurrency", o_.concurrency, "Requests in flight at most (default 4)")
        ->check(CLI::Range(1, 1024));
    c->add_option("--temperature", temperature_, "Sampling temperature (default: the server's)");
    c->add_option("--top-p", top_p_, "Nucleus sampling (default: the server's)");
    c->add_option("--max-tokens", max_tokens_, "Completion tokens at most per sample")->check(CLI::PositiveNumber);
    c->add_option("--seed", seed_, "Seed; sample S is sent seed + S (default: none sent)");
    c->add_option("--stop", o_.sampling.stop, "Stop sequence (repeatable)");
    c->add_option("--api", api_, "chat (default) or completions")->check(CLI::IsMember({"chat", "completions"}));
    c->add_option("--api-key-env", opt_.api_key_env,
                  "Environment variable holding the API key (default OPENAI_API_KEY)");
    c->add_option("--prompt", prompt_file_, "Prompt template file (default: prompts/ for the backend)");
    c->add_option("--task", o_.task_ids, "Only these task ids, like L1_19 (repeatable)");
    c->add_option("--deadline", o_.deadline_s, "Seconds per request, retries included (default 600)")
        ->check(CLI::PositiveNumber);
    c->add_option("--max-response-mib", max_mib_, "Largest reply body accepted, MiB (default 8)")
        ->check(CLI::PositiveNumber);
    c->add_option("--retries", retries_, "Retries per request on 429, 5xx and connection errors (default 5)")
        ->check(CLI::Range(0, 100));
    c->add_option("--replay", replay_, "Answer from this transcript instead of an endpoint");
    c->add_option("--record", record_, "Append every request and its result to this transcript");
    c->add_option("--refine", refine_.prev_run,
                  "Sequential refinement: the next turn of this run (its incorrect samples asked again with the "
                  "verifier's feedback; kz bench --turns drives it)");
    c->add_option("--verdicts", refine_.verdicts, "With --refine: kz bench's verdicts.jsonl of that run");
    c->add_option("--feedback-chars", refine_.prompt.feedback_chars,
                  "With --refine: the verifier's facts per feedback at most (default 1500)")
        ->check(CLI::Range(100, 100000));
    c->add_option("--context-chars", refine_.prompt.context_chars,
                  "With --refine: the conversation's bound; earlier replies are omitted first (default 24000)")
        ->check(CLI::Range(1000, 10000000));
  }

  int Run() override {
    if (replay_.empty() == opt_.base_url.empty()) return Usage("give exactly one of --endpoint and --replay");
    if (proposer_ != o_.suite_dir.empty() || proposer_ == api_sets_.empty())
      return Usage(proposer_ ? "--proposer takes --api-sets FILE and no --suite"
                             : "give --suite (or --proposer --api-sets FILE)");
    if (!refine_.prev_run.empty()) {
      if (refine_.verdicts.empty()) return Usage("--refine needs --verdicts (kz bench's verdicts.jsonl of that run)");
      if (proposer_ || api_ == "completions") return Usage("--refine is for the Coder over the chat API");
      o_.refine = refine_;
    } else if (!refine_.verdicts.empty()) {
      return Usage("--verdicts needs --refine RUN");
    }
    generate::PromptTemplate prompt;
    std::string err;
    if (!LoadPrompt(&prompt, &err)) return Usage(err);
    std::vector<generate::ApiSet> sets;
    std::vector<std::string> bad;
    if (proposer_ && !generate::ReadApiSets(api_sets_, &sets, &bad, &err)) return Usage("--api-sets: " + err);
    for (const auto& b : bad) std::cerr << "kz generate: " << b << "; skipped\n";
    if (proposer_ && sets.empty()) return Usage("--api-sets: " + api_sets_ + " holds no valid API set");
    SetSampling();
    std::unique_ptr<generate::Endpoint> inner;
    if (!MakeEndpoint(&inner, &err)) return Usage(err);
    generate::Endpoint* endpoint = inner.get();
    generate::RecordingEndpoint recorder(inner.get(), o_.model);
    if (!record_.empty()) {
      if (!recorder.Open(record_, &err)) return Usage(err);
      endpoint = &recorder;
    }
    std::signal(SIGINT, OnSigint);
    std::signal(SIGTERM, OnSigint);
    if (proposer_) return generate::RunPropose(ProposeOptions(bad.size()), sets, prompt, endpoint, &g_cancel);
    return generate::RunGenerate(o_, prompt, endpoint, &g_cancel);
  }

 private:
  bool LoadPrompt(generate::PromptTemplate* prompt, std::string* err) const {
    std::string path = prompt_file_;
    if (path.empty()) {
      std::string dir = generate::LocatePromptsDir(argv0_);
      if (dir.empty()) return *err = "no prompts/ directory found (set KZ_PROMPTS_DIR or give --prompt)", false;
      path = dir + "/" + generate::DefaultTemplateName(o_.backend, proposer_);
    }
    return generate::LoadTemplate(path, prompt, err);
  }

  void SetSampling() {
    o_.api = api_ == "completions" ? generate::Api::kCompletions : generate::Api::kChat;
    if (temperature_ >= 0) o_.sampling.temperature = temperature_;
    if (top_p_ >= 0) o_.sampling.top_p = top_p_;
    if (max_tokens_ > 0) o_.sampling.max_tokens = max_tokens_;
    if (seed_ >= 0) o_.sampling.seed = seed_;
    opt_.model = o_.model;
    opt_.max_response_bytes = static_cast<size_t>(max_mib_ * (1 << 20));
    opt_.retry.max_attempts = retries_ + 1;
  }

  bool MakeEndpoint(std::unique_ptr<generate::Endpoint>* out, std::string* err) const {
    if (replay_.empty()) return *out = std::make_unique<generate::OpenAiEndpoint>(opt_), true;
    auto replay = std::make_unique<generate::ReplayEndpoint>();
    if (!replay->Load(replay_, o_.model, err)) return false;
    if (replay->bad_lines())
      std::cerr << "kz generate: " << replay->bad_lines() << " unreadable transcript lines skipped\n";
    *out = std::move(replay);
    return true;
  }

  generate::ProposeOptions ProposeOptions(size_t bad_lines) const {
    generate::ProposeOptions p;
    p.out_dir = o_.out_dir;
    p.model = o_.model;
    p.samples = o_.samples;
    p.concurrency = o_.concurrency;
    p.api = o_.api;
    p.sampling = o_.sampling;
    p.deadline_s = o_.deadline_s;
    p.skipped = bad_lines * static_cast<size_t>(o_.samples);
    return p;
  }

  static int Usage(const std::string& msg) { return UsageError("kz generate", msg); }

  std::string argv0_, prompt_file_, replay_, record_, api_sets_, api_ = "chat";
  bool proposer_ = false;
  double temperature_ = -1, top_p_ = -1, max_mib_ = 8;
  int max_tokens_ = 0, retries_ = 5;
  long long seed_ = -1;
  generate::GenerateOptions o_;
  generate::RefineSource refine_;
  generate::OpenAiOptions opt_;
};
}  // namespace

std::unique_ptr<Command> AddGenerateCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<GenerateCommandImpl>(app, argv0);
}

}  // namespace kz::cli
