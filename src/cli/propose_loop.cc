#include "cli/propose_loop.h"

#include <atomic>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/verdict_log.h"
#include "curriculum/cooccur.h"
#include "curriculum/frontier_pool.h"
#include "curriculum/proposals.h"
#include "generate/extract.h"
#include "generate/openai_endpoint.h"
#include "generate/prompt.h"
#include "generate/replay_endpoint.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;
namespace gen = kz::generate;

struct Item {
  json set;  // a kz.api_sets line
  int sample;
};

// Draws the sets (DIR/sets.jsonl, rewritten: the same seed, statistics and pool give the same).
bool DrawSets(const LoopArgs& a, const cur::Catalog& c, const std::string& out, std::vector<json>* sets,
              std::string* err) {
  cur::Stats stats;
  if (!a.stats.empty() && !cur::LoadStats(a.stats, c, &stats, err)) return false;
  std::vector<std::vector<size_t>> frontier;
  if (!a.pool_for_sets.empty()) {
    auto pool = cur::FrontierPool::Open(a.pool_for_sets, err);
    std::vector<std::vector<std::string>> named;
    if (!pool || !pool->FailedSets(&named, err)) return false;
    for (const auto& n : named) {
      std::vector<size_t> s;
      if (cur::ParseApiSet(c, n, &s, err)) frontier.push_back(std::move(s));
    }
  }
  cur::Sampler sampler;
  if (!sampler.Init(c.size(), a.stats.empty() ? nullptr : &stats, a.sampler, err)) return false;
  std::string text;
  for (size_t j = 0; j < a.sets; ++j) {
    sets->push_back(cur::ApiSetLine(c, j, sampler.Next(frontier)));
    text += sets->back().dump() + "\n";
  }
  return util::WriteFileAtomic(out + "/sets.jsonl", text, err);
}

std::string Joined(const json& apis) {
  std::string s;
  for (const auto& a : apis) s += (s.empty() ? "" : ", ") + a.get<std::string>();
  return s;
}

json Record(const Item& it, const gen::Result& r, const gen::PromptTemplate& t, const std::string& prompt,
            const std::string& model) {
  const gen::Choice& ch = r.reply()->choices.front();
  gen::Extraction x = gen::ExtractCode(ch.text, ch.finish_reason, true);
  return {{"format", "kz.proposal/1"}, {"set", it.set["id"]}, {"apis", it.set["apis"]}, {"sample", it.sample},
          {"code", x.code}, {"reason", x.reason ? json(gen::ReasonName(*x.reason)) : json(nullptr)},
          {"output_tokens", ch.completion_tokens}, {"finish_reason", ch.finish_reason},
          {"tokens", {{"prompt", r.reply()->usage.prompt_tokens}, {"completion", r.reply()->usage.completion_tokens}}},
          {"latency_s", r.latency_s}, {"attempts", r.attempts}, {"model", model}, {"prompt", t.name},
          {"prompt_xxh", util::Hash128Hex(prompt)}};
}

class Asker {
 public:
  Asker(const LoopArgs& a, gen::Endpoint* ep, const gen::PromptTemplate& t, const std::string& out, bench::VerdictLog* log)
      : a_(a), ep_(ep), t_(t), out_(out), log_(log) {}

  // One request; the record appended (under the lock) unless the request failed.
  void Ask(const Item& it) {
    std::string prompt, err;
    gen::RenderTemplate(t_.text, {{"api_set", Joined(it.set["apis"])}, {"set_id", it.set["id"]}}, &prompt, &err);
    gen::Request rq;
    rq.id = it.set["id"].get<std::string>() + "/" + std::to_string(it.sample);
    rq.messages = {{"user", prompt}};
    rq.sampling.temperature = a_.temperature;
    rq.sampling.max_tokens = a_.max_tokens;
    if (a_.seed) rq.sampling.seed = *a_.seed + it.sample;
    rq.deadline_s = a_.deadline_s;
    gen::Result r = ep_->Complete(rq, cancel_);
    std::lock_guard<std::mutex> lock(mu_);
    if (!r.ok()) {
      ++failed_;
      std::cerr << "kz propose: " << rq.id << ": " << gen::ErrorKindName(r.error()->kind) << ": " << r.error()->message << "\n";
      return;
    }
    json rec = Record(it, r, t_, prompt, a_.model);
    std::string file = out_ + "/modules/" + rq.id.substr(0, rq.id.find('/')) + "_sample_" + std::to_string(it.sample) + ".py";
    if (!util::WriteFileAtomic(file, rec["code"].get<std::string>(), &err) || !log_->Append(rec, &err)) ++failed_;
  }

  int failed() const { return failed_; }

 private:
  const LoopArgs& a_;
  gen::Endpoint* ep_;
  const gen::PromptTemplate& t_;
  std::string out_;
  bench::VerdictLog* log_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  int failed_ = 0;  // GUARDED_BY(mu_)
};

std::unique_ptr<gen::Endpoint> MakeEndpoint(const LoopArgs& a, std::string* err) {
  if (!a.replay.empty()) {
    auto r = std::make_unique<gen::ReplayEndpoint>();
    if (!r->Load(a.replay, a.model, err)) return nullptr;
    return r;
  }
  gen::OpenAiOptions o;
  o.base_url = a.endpoint, o.model = a.model, o.api_key_env = a.api_key_env;
  return std::make_unique<gen::OpenAiEndpoint>(o);
}
}  // namespace

int RunProposeLoop(const LoopArgs& a, ValidateArgs v, const cur::Catalog& c, const std::string& argv0) {
  std::string err, out = v.proposals;
  if (a.model.empty() || a.sets == 0) return Bad("--endpoint (or --replay) needs --model and --sets N");
  std::vector<json> sets;
  gen::PromptTemplate t;
  std::string prompt = a.prompt.empty() ? gen::LocatePromptsDir(argv0) + "/proposer_module.v1.txt" : a.prompt;
  if (!util::MakeDirs(out + "/modules", &err) || !DrawSets(a, c, out, &sets, &err) || !gen::LoadTemplate(prompt, &t, &err))
    return Bad(err);
  std::vector<cur::ProposalRecord> have;
  std::vector<std::string> bad;
  std::set<std::pair<std::string, int>> done;
  if (util::PathExists(out + "/proposals.jsonl") && cur::ReadProposals(out, &have, &bad, &err))
    for (const auto& r : have) done.insert({r.set, r.sample});
  std::vector<Item> todo;
  for (const auto& s : sets)
    for (int k = 0; k < a.samples; ++k)
      if (!done.count({s["id"].get<std::string>(), k})) todo.push_back({s, k});
  auto inner = MakeEndpoint(a, &err);
  if (!inner) return Bad(err);
  std::unique_ptr<gen::RecordingEndpoint> recording;
  gen::Endpoint* ep = inner.get();
  if (!a.record.empty()) {
    recording = std::make_unique<gen::RecordingEndpoint>(inner.get(), a.model);
    if (!recording->Open(a.record, &err)) return Bad(err);
    ep = recording.get();
  }
  bench::VerdictLog log;
  if (!log.Open(out + "/proposals.jsonl", &err)) return Bad(err);
  Asker asker(a, ep, t, out, &log);
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < std::max(1, a.concurrency); ++i)
    threads.emplace_back([&] {
      for (size_t j; (j = next++) < todo.size();) asker.Ask(todo[j]);
    });
  for (auto& th : threads) th.join();
  std::cerr << "kz propose: " << sets.size() << " sets x " << a.samples << " samples: " << done.size()
            << " there before, " << todo.size() - asker.failed() << " asked now, " << asker.failed() << " failed\n";
  int rc = RunValidate(v, c, argv0);
  return asker.failed() ? 1 : rc;
}

}  // namespace kz::cli
