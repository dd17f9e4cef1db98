#include "generate/generator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "bench/generations.h"
#include "bench/progress.h"
#include "bench/suite.h"
#include "bench/verdict_log.h"
#include "generate/run_log.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::generate {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

struct Job {
  const bench::SuiteTask* task;
  int sample;
  const std::string* prompt;  // rendered, owned by Run::prompts_
  const std::string* prompt_xxh;
};

// Errors every later request would hit too: the run stops asking (in-flight ones finish).
bool StopsRun(const Error& e) {
  if (e.kind == ErrorKind::kDns || e.kind == ErrorKind::kTls) return true;
  return e.kind == ErrorKind::kHttpStatus && (e.http_status == 401 || e.http_status == 403 || e.http_status == 404);
}

class Run {
 public:
  Run(const GenerateOptions& o, const PromptTemplate& t, Endpoint* e, std::atomic<bool>* cancel)
      : o_(o), template_(t), endpoint_(e), cancel_(cancel) {}

  int Execute() {
    std::string err;
    if (!Prepare(&err)) return std::cerr << "kz generate: " << err << "\n", 2;
    std::cerr << "kz generate: " << endpoint_->Describe() << "; " << jobs_.size() << " to request, " << resumed_
              << " done before" << (loaded_.ignored_lines ? " (" + std::to_string(loaded_.ignored_lines) + " torn or unreadable lines ignored)" : "")
              << ", prompt " << template_.name << "\n";
    progress_ = std::make_unique<bench::Progress>("kz generate", "samples", jobs_.size());
    start_ = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    int k = std::max(1, std::min<int>(o_.concurrency, static_cast<int>(jobs_.size())));
    for (int i = 0; i < k && !jobs_.empty(); ++i) threads.emplace_back([this] { Worker(); });
    for (auto& t : threads) t.join();
    return Summarize();
  }

 private:
  bool Prepare(std::string* err);
  bool RenderPrompts(std::string* err);
  void Worker();
  Request MakeRequest(const Job& job) const;
  void Finish(const Job& job, const Result& r);
  void Fail(const Job& job, const Result& r);
  std::string Detail() const;
  int Summarize();

  const GenerateOptions& o_;
  const PromptTemplate& template_;
  Endpoint* endpoint_;
  std::atomic<bool>* cancel_;
  bench::Suite suite_;
  LoadedRun loaded_;
  std::map<std::string, std::pair<std::string, std::string>> prompts_;  // task id -> (prompt, xxh)
  std::vector<Job> jobs_;
  size_t resumed_ = 0, skipped_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards everything below and the files
  bench::VerdictLog log_, failures_;
  std::unique_ptr<bench::Progress> progress_;
  size_t done_ = 0, failed_ = 0, no_code_ = 0;
  long completion_tokens_ = 0, prompt_tokens_ = 0;
  std::chrono::steady_clock::time_point start_;
};

bool Run::Prepare(std::string* err) {
  if (!bench::ReadSuite(o_.suite_dir, &suite_, err)) return false;
  for (const auto& w : suite_.warnings) std::cerr << "kz generate: " << w << "\n";
  if (!util::MakeDirs(o_.out_dir, err)) return false;
  const std::string jsonl = o_.out_dir + "/generations.jsonl";
  loaded_ = LoadRun(jsonl);
  if (!log_.Open(jsonl, err) || !failures_.Open(o_.out_dir + "/failures.jsonl", err)) return false;
  if (!RenderPrompts(err)) return false;
  std::vector<const bench::SuiteTask*> tasks;
  for (const auto& [id, t] : suite_.tasks)
    if (prompts_.count(id)) tasks.push_back(&t);
  std::sort(tasks.begin(), tasks.end(),
            [](auto* a, auto* b) { return std::tie(a->level, a->problem) < std::tie(b->level, b->problem); });
  for (const auto* t : tasks)
    for (int s = 0; s < o_.samples; ++s) {
      if (loaded_.records.count({t->id, s})) { ++resumed_; continue; }
      const auto& p = prompts_.at(t->id);
      jobs_.push_back({t, s, &p.first, &p.second});
    }
  return true;
}

bool Run::RenderPrompts(std::string* err) {
  size_t selected = 0;
  for (const auto& [id, t] : suite_.tasks) {
    if (!o_.task_ids.empty() && std::find(o_.task_ids.begin(), o_.task_ids.end(), id) == o_.task_ids.end()) continue;
    ++selected;
    std::string source, why;
    if (!util::ReadFile(t.path, &source, &why) || !bench::IsValidUtf8(source)) {
      std::cerr << "kz generate: " << id << ": " << (why.empty() ? t.path + " is not valid UTF-8" : why)
                << "; its samples are skipped\n";
      skipped_ += static_cast<size_t>(o_.samples);
      continue;
    }
    std::map<std::string, std::string> values = {{"task_source", source}, {"task_name", t.name}, {"task_id", id},
                                                 {"level", std::to_string(t.level)}, {"problem", std::to_string(t.problem)},
                                                 {"backend", o_.backend}};
    std::string text;
    if (!RenderTemplate(template_.text, values, &text, &why)) return *err = template_.name + ": " + why, false;
    prompts_[id] = {text, util::Hash128Hex(text)};
  }
  if (selected == 0) return *err = "no task of the suite matches --task", false;
  return true;
}

Request Run::MakeRequest(const Job& job) const {
  Request r;
  r.id = job.task->id + "/" + std::to_string(job.sample);
  r.api = o_.api;
  if (o_.api == Api::kChat) r.messages = {{"user", *job.prompt}};
  else r.prompt = *job.prompt;
  r.sampling = o_.sampling;
  r.sampling.n = 1;
  if (o_.sampling.seed) r.sampling.seed = *o_.sampling.seed + job.sample;
  r.deadline_s = o_.deadline_s;
  return r;
}

void Run::Worker() {
  for (;;) {
    if (*cancel_ || stop_) return;
    size_t i = next_++;
    if (i >= jobs_.size()) return;
    ++in_flight_;
    Result r = endpoint_->Complete(MakeRequest(jobs_[i]), *cancel_);
    --in_flight_;
    if (r.ok()) Finish(jobs_[i], r);
    else Fail(jobs_[i], r);
  }
}

void Run::Finish(const Job& job, const Result& r) {
  const Reply& reply = *r.reply();
  const Choice& c = reply.choices.front();
  SampleOutcome s{job.task, job.sample, o_.backend, o_.model, template_.name, *job.prompt_xxh, &c, &reply.usage,
                  r.latency_s, r.attempts, ExtractCode(c.text, c.finish_reason, o_.proposer)};
  json record = SampleRecord(s);
  std::lock_guard<std::mutex> lock(mu_);
  std::string err;
  std::string file = o_.out_dir + "/" + KernelFileName(job.task->level, job.task->problem, job.sample);
  if (!util::WriteFileAtomic(file, s.extraction.code, &err) || !log_.Append(record, &err)) {
    ++failed_;
    progress_->Note("kz generate: " + job.task->id + "/" + std::to_string(job.sample) + ": cannot write: " + err);
    return;
  }
  loaded_.records.emplace(std::make_pair(job.task->id, job.sample), std::move(record));
  ++done_;
  no_code_ += s.extraction.reason ? 1 : 0;
  completion_tokens_ += c.completion_tokens;
  prompt_tokens_ += reply.usage.prompt_tokens;
  progress_->Step(Detail());
}

void Run::Fail(const Job& job, const Result& r) {
  const Error& e = *r.error();
  if (e.kind == ErrorKind::kCancelled) return;  // not a failure: asked again on a rerun
  std::lock_guard<std::mutex> lock(mu_);
  ++failed_;
  std::string id = job.task->id + "/" + std::to_string(job.sample), err;
  failures_.Append({{"task", job.task->id}, {"sample", job.sample}, {"kind", ErrorKindName(e.kind)},
                    {"http_status", e.http_status}, {"message", e.message}, {"attempts", r.attempts},
                    {"latency_s", r.latency_s}}, &err);
  progress_->Note("kz generate: " + id + ": " + ErrorKindName(e.kind) + ": " + e.message);
  if (StopsRun(e) && !stop_.exchange(true))
    progress_->Note("kz generate: stopping: every other request would fail the same way");
  progress_->Step(Detail());
}

std::string Run::Detail() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d in flight, %zu failed, %.1f tok/s", in_flight_.load(), failed_,
                elapsed > 0 ? completion_tokens_ / elapsed : 0.0);
  return buf;
}

int Run::Summarize() {
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  size_t missing = jobs_.size() - done_;
  json totals = RunTotals(loaded_);
  json summary = {{"format", "kz.generate_summary/1"}, {"model", o_.model}, {"backend", o_.backend},
                  {"prompt", template_.name}, {"samples_per_task", o_.samples}, {"run", totals},
                  {"this_invocation", {{"requested", jobs_.size()}, {"done", done_}, {"failed", failed_},
                                       {"resumed", resumed_}, {"skipped", skipped_}, {"no_code", no_code_},
                                       {"prompt_tokens", prompt_tokens_}, {"completion_tokens", completion_tokens_},
                                       {"wall_s", wall}, {"tokens_per_s", wall > 0 ? completion_tokens_ / wall : 0.0}}}};
  std::string err;
  if (missing == 0 && skipped_ == 0 && !RewriteSorted(o_.out_dir + "/generations.jsonl", loaded_, &err))
    std::cerr << "kz generate: cannot sort generations.jsonl: " << err << "\n";
  if (!util::WriteFileAtomic(o_.out_dir + "/summary.json", summary.dump(2) + "\n", &err))
    std::cerr << "kz generate: " << err << "\n";
  std::fprintf(stderr, "kz generate: %zu new samples (%zu without code), %zu resumed, %zu failed, %zu not asked; "
               "%ld prompt + %ld completion tokens in %.1f s (%.1f tok/s)\n", done_, no_code_, resumed_, failed_,
               missing - std::min(missing, failed_), prompt_tokens_, completion_tokens_, wall,
               wall > 0 ? completion_tokens_ / wall : 0.0);
  if (*cancel_) return 130;
  return missing == 0 && skipped_ == 0 ? 0 : 1;
}
}  // namespace

int RunGenerate(const GenerateOptions& options, const PromptTemplate& prompt, Endpoint* endpoint,
                std::atomic<bool>* cancel) {
  Run run(options, prompt, endpoint, cancel);
  return run.Execute();
}

}  // namespace kz::generate
