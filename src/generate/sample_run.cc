#include "generate/sample_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "scoring/progress.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::generate {
namespace {
using nlohmann::json;

struct Job {
  size_t unit;
  int sample;
};

// Errors every later request would hit too: the run stops asking (in-flight ones finish).
bool StopsRun(const Error& e) {
  if (e.kind == ErrorKind::kDns || e.kind == ErrorKind::kTls) return true;
  return e.kind == ErrorKind::kHttpStatus && (e.http_status == 401 || e.http_status == 403 || e.http_status == 404);
}

class Run {
 public:
  Run(const SampleRunOptions& o, const std::vector<Unit>& units, const SampleWriter& w, Endpoint* e,
      std::atomic<bool>* cancel)
      : o_(o), units_(units), writer_(w), endpoint_(e), cancel_(cancel) {}

  int Execute() {
    std::string err;
    if (!Prepare(&err)) return std::cerr << o_.label << ": " << err << "\n", 2;
    std::cerr << o_.label << ": " << endpoint_->Describe() << "; " << jobs_.size() << " to request, " << resumed_
              << " done before" << (loaded_.ignored_lines ? " (" + std::to_string(loaded_.ignored_lines) + " torn or unreadable lines ignored)" : "")
              << ", prompt " << o_.prompt_name << "\n";
    progress_ = std::make_unique<scoring::Progress>(o_.label, "samples", jobs_.size());
    start_ = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    int k = std::max(1, std::min<int>(o_.concurrency, static_cast<int>(jobs_.size())));
    for (int i = 0; i < k && !jobs_.empty(); ++i) threads.emplace_back([this] { Worker(); });
    for (auto& t : threads) t.join();
    return Summarize();
  }

 private:
  bool Prepare(std::string* err);
  void Worker();
  Request MakeRequest(const Job& job) const;
  void Finish(const Job& job, const Result& r);
  void Fail(const Job& job, const Result& r);
  std::string Name(const Job& job) const { return units_[job.unit].key + "/" + std::to_string(job.sample); }
  std::string Detail() const;
  int Summarize();

  const SampleRunOptions& o_;
  const std::vector<Unit>& units_;
  const SampleWriter& writer_;
  Endpoint* endpoint_;
  std::atomic<bool>* cancel_;
  LoadedRun loaded_;
  std::vector<Job> jobs_;
  size_t resumed_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards everything below and the files
  scoring::VerdictLog log_, failures_;
  std::unique_ptr<scoring::Progress> progress_;
  size_t done_ = 0, failed_ = 0, no_code_ = 0;
  long completion_tokens_ = 0, prompt_tokens_ = 0;
  std::chrono::steady_clock::time_point start_;
};

bool Run::Prepare(std::string* err) {
  if (!util::MakeDirs(o_.out_dir, err)) return false;
  const std::string jsonl = o_.out_dir + "/" + o_.format.jsonl;
  loaded_ = LoadRun(jsonl, o_.format);
  if (!log_.Open(jsonl, err) || !failures_.Open(o_.out_dir + "/failures.jsonl", err)) return false;
  for (size_t u = 0; u < units_.size(); ++u)
    for (int s = 0; s < o_.samples; ++s) {
      const auto& convs = units_[u].conversations;
      if (!convs.empty() && (size_t(s) >= convs.size() || convs[size_t(s)].empty())) continue;  // closed
      if (loaded_.records.count({units_[u].key, s})) ++resumed_;
      else jobs_.push_back({u, s});
    }
  return true;
}

Request Run::MakeRequest(const Job& job) const {
  Request r;
  r.id = Name(job);
  r.api = o_.api;
  const Unit& unit = units_[job.unit];
  if (!unit.conversations.empty()) r.messages = unit.conversations[size_t(job.sample)];  // chat only (the CLI checks)
  else if (o_.api == Api::kChat) r.messages = {{"user", unit.prompt}};
  else r.prompt = unit.prompt;
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
  const Unit& unit = units_[job.unit];
  json messages;
  if (!unit.conversations.empty())
    for (const auto& m : unit.conversations[size_t(job.sample)]) messages.push_back({{"role", m.role}, {"content", m.content}});
  SampleOutcome s{job.sample, o_.backend, o_.model, o_.prompt_name,
                  messages.is_null() ? unit.prompt_xxh : util::Hash128Hex(messages.dump()), &c, &reply.usage,
                  r.latency_s, r.attempts, ExtractCode(c.text, c.finish_reason, o_.proposer)};
  std::lock_guard<std::mutex> lock(mu_);
  json record = writer_.Record(job.unit, s);
  if (!messages.is_null()) record.update({{"turn", o_.turn}, {"messages", std::move(messages)}});
  std::string err, file = o_.out_dir + "/" + writer_.CodeFile(job.unit, job.sample);
  if (!util::MakeDirs(std::filesystem::path(file).parent_path().string(), &err) ||
      !util::WriteFileAtomic(file, s.extraction.code, &err) || !log_.Append(record, &err)) {
    ++failed_;
    progress_->Note(o_.label + ": " + Name(job) + ": cannot write: " + err);
    return;
  }
  loaded_.records.emplace(std::make_pair(unit.key, job.sample), std::move(record));
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
  std::string err;
  failures_.Append({{o_.format.key_field, units_[job.unit].key}, {"sample", job.sample},
                    {"kind", ErrorKindName(e.kind)}, {"http_status", e.http_status}, {"message", e.message},
                    {"attempts", r.attempts}, {"latency_s", r.latency_s}}, &err);
  progress_->Note(o_.label + ": " + Name(job) + ": " + ErrorKindName(e.kind) + ": " + e.message);
  if (StopsRun(e) && !stop_.exchange(true))
    progress_->Note(o_.label + ": stopping: every other request would fail the same way");
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
  json summary = {{"format", "kz.generate_summary/1"}, {"model", o_.model}, {"records", o_.format.format},
                  {"prompt", o_.prompt_name}, {"run", RunTotals(loaded_)},
                  {"this_invocation", {{"requested", jobs_.size()}, {"done", done_}, {"failed", failed_},
                                       {"resumed", resumed_}, {"skipped", o_.skipped}, {"no_code", no_code_},
                                       {"prompt_tokens", prompt_tokens_}, {"completion_tokens", completion_tokens_},
                                       {"wall_s", wall}, {"tokens_per_s", wall > 0 ? completion_tokens_ / wall : 0.0}}}};
  summary.update(o_.summary_extra);
  std::string err;
  if (missing == 0 && o_.skipped == 0 && !RewriteSorted(o_.out_dir + "/" + o_.format.jsonl, loaded_, &err))
    std::cerr << o_.label << ": cannot sort " << o_.format.jsonl << ": " << err << "\n";
  if (!util::WriteFileAtomic(o_.out_dir + "/summary.json", summary.dump(2) + "\n", &err))
    std::cerr << o_.label << ": " << err << "\n";
  std::fprintf(stderr, "%s: %zu new samples (%zu without code), %zu resumed, %zu failed, %zu not asked; "
               "%ld prompt + %ld completion tokens in %.1f s (%.1f tok/s)\n", o_.label.c_str(), done_, no_code_,
               resumed_, failed_, missing - std::min(missing, failed_), prompt_tokens_, completion_tokens_, wall,
               wall > 0 ? completion_tokens_ / wall : 0.0);
  if (*cancel_) return 130;
  return missing == 0 && o_.skipped == 0 ? 0 : 1;
}
}  // namespace

int RunSamples(const SampleRunOptions& options, const std::vector<Unit>& units, const SampleWriter& writer,
               Endpoint* endpoint, std::atomic<bool>* cancel) {
  Run run(options, units, writer, endpoint, cancel);
  return run.Execute();
}

}  // namespace kz::generate
