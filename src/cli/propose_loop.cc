#include "cli/propose_loop.h"

#include <atomic>
#include <memory>

#include <nlohmann/json.hpp>

#include "curriculum/cooccur.h"
#include "curriculum/frontier_pool.h"
#include "curriculum/proposals.h"
#include "generate/openai_endpoint.h"
#include "generate/prompt.h"
#include "generate/proposer.h"
#include "generate/replay_endpoint.h"
#include "util/fs.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;
namespace gen = kz::generate;

// Draws the sets (DIR/sets.jsonl, rewritten: the same seed, statistics and pool give the same).
bool DrawSets(const LoopArgs& a, const cur::Catalog& c, const std::string& out, std::vector<json>* sets,
              std::string* err) {
  cur::Stats stats;
  if (!a.stats.empty() && !cur::LoadStats(a.stats, c, &stats, err)) return false;
  std::vector<std::vector<size_t>> frontier;
  if (!a.pool_for_sets.empty()) {
    auto pool = cur::FrontierPool::Open(a.pool_for_sets, err);
    if (!pool || !cur::FrontierIndexSets(*pool, c, &frontier, err)) return false;
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
  std::vector<json> lines;
  gen::PromptTemplate t;
  std::string prompt = a.prompt.empty() ? gen::LocatePromptsDir(argv0) + "/proposer_module.v1.txt" : a.prompt;
  if (!util::MakeDirs(out, &err) || !DrawSets(a, c, out, &lines, &err) || !gen::LoadTemplate(prompt, &t, &err))
    return Bad(err);
  std::vector<gen::ApiSet> sets;
  for (const auto& l : lines) sets.push_back({l["id"], l["apis"].get<std::vector<std::string>>()});
  auto inner = MakeEndpoint(a, &err);
  if (!inner) return Bad(err);
  std::unique_ptr<gen::RecordingEndpoint> recording;
  gen::Endpoint* ep = inner.get();
  if (!a.record.empty()) {
    recording = std::make_unique<gen::RecordingEndpoint>(inner.get(), a.model);
    if (!recording->Open(a.record, &err)) return Bad(err);
    ep = recording.get();
  }
  gen::ProposeOptions o;
  o.out_dir = out, o.model = a.model, o.samples = a.samples, o.concurrency = a.concurrency;
  o.sampling.temperature = a.temperature, o.sampling.max_tokens = a.max_tokens, o.sampling.seed = a.seed;
  o.deadline_s = a.deadline_s;
  std::atomic<bool> cancel{false};
  int asked = gen::RunPropose(o, sets, t, ep, &cancel);  // resumable: asks only what is missing
  if (asked == 2 || asked == 130) return asked;
  int rc = RunValidate(v, c, argv0);
  return asked != 0 ? 1 : rc;
}

}  // namespace kz::cli
