#include "train/proposer_step.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "curriculum/frontier_pool.h"
#include "curriculum/proposals.h"
#include "curriculum/sampler.h"
#include "curriculum/validator.h"
#include "generate/extract.h"
#include "generate/prompt.h"
#include "rewards/frontier.h"
#include "util/fs.h"
#include "util/log.h"

namespace kz::train {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;

// One proposed module: its set, its sample and what became of it.
struct Proposed {
  size_t set = 0;
  int sample = 0;
  const GeneratedSample* gen = nullptr;
  std::string path, code;  // path "" when the reply had no module
  json outcome;            // OutcomeJson, or {"valid": false, "stage": "extract", ...}
  std::string task_id;     // valid: its name in RUN/tasks
  int attempts = 0, successes = 0;
  double reward = 0;
};

// The step's API sets: sets.json, or drawn now and written there. The sampler replays the
// steps before this one as fresh draws, so its coverage queue continues across steps; the
// frontier slots of those steps drew from the pool instead, so once the pool has failed sets
// the replay is an approximation of the state (deterministic all the same: sets.json is kept).
bool StepSets(const RunConfig& c, ProposerContext& pc, const Unit& u, const std::string& unit_dir,
              std::vector<json>* sets, std::string* err) {
  std::string path = unit_dir + "/sets.json", text, why;
  if (util::ReadFile(path, &text, &why)) {
    json j = json::parse(text, nullptr, false);
    if (j.is_array() && j.size() == size_t(c.proposer.sets_per_step)) {
      *sets = j.get<std::vector<json>>();
      return true;
    }
  }
  std::vector<std::vector<size_t>> frontier;
  auto pool = cur::FrontierPool::Open(pc.pool_path, err);
  if (!pool || !cur::FrontierIndexSets(*pool, pc.catalog, &frontier, err)) return false;
  cur::Sampler sampler;
  cur::SamplerOptions so{size_t(c.proposer.k), c.proposer.rho, c.seed, 0.5};
  if (!sampler.Init(pc.catalog.size(), pc.has_stats ? &pc.stats : nullptr, so, err)) return false;
  const size_t before = size_t(u.global_step) * size_t(c.proposer.sets_per_step);
  for (size_t j = 0; j < before; ++j) sampler.Next({});
  sets->clear();
  for (int j = 0; j < c.proposer.sets_per_step; ++j)
    sets->push_back(cur::ApiSetLine(pc.catalog, before + size_t(j), sampler.Next(frontier)));
  return util::WriteFileAtomic(path, json(*sets).dump(1) + "\n", err);
}

bool ProposerPrompts(const ProposerContext& pc, const std::vector<json>& sets, std::vector<std::string>* out,
                     std::string* err) {
  for (const auto& s : sets) {
    std::string apis, prompt, why;
    for (const auto& a : s["apis"]) apis += (apis.empty() ? "" : ", ") + a.get<std::string>();
    if (!generate::RenderTemplate(pc.prompt_template, {{"api_set", apis}, {"set_id", s["id"].get<std::string>()}},
                                  &prompt, &why))
      return *err = "proposer prompt template: " + why, false;
    out->push_back(prompt);
  }
  return true;
}

// Stages 1-3 of every extracted module (validation.json once complete).
bool Validate(ProposerContext& pc, const std::vector<json>& sets, const std::string& unit_dir,
              std::vector<Proposed>& ps, std::string* err) {
  std::string path = unit_dir + "/validation.json", text, why;
  if (util::ReadFile(path, &text, &why)) {
    json j = json::parse(text, nullptr, false);
    if (j.is_array() && j.size() == ps.size()) {
      for (size_t i = 0; i < ps.size(); ++i) ps[i].outcome = j[i];
      return true;
    }
  }
  cur::KnownHashes known = pc.known;  // the held-out tasks, and the pool's modules (duplicates)
  auto pool = cur::FrontierPool::Open(pc.pool_path, err);
  if (!pool || !cur::AddPoolHashes(*pool, &known, err)) return false;
  std::vector<cur::Proposal> proposals;
  std::vector<size_t> index;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (ps[i].path.empty()) continue;
    cur::Proposal p{ps[i].path, {}};
    if (!cur::ParseApiSet(pc.catalog, sets[ps[i].set]["ids"].get<std::vector<std::string>>(), &p.apis, err))
      return false;
    proposals.push_back(std::move(p));
    index.push_back(i);
  }
  std::vector<cur::Outcome> outcomes;
  cur::WorkerScanner scanner(pc.worker);
  cur::WorkerRunFacts runner(pc.worker, false);
  if (!proposals.empty() &&
      !cur::ValidateAll(proposals, pc.catalog, scanner, runner, cur::ValidationOptions{}, &known, &outcomes, err))
    return false;
  for (size_t k = 0; k < outcomes.size(); ++k) ps[index[k]].outcome = cur::OutcomeJson(outcomes[k], pc.catalog);
  json all = json::array();
  for (const auto& p : ps) all.push_back(p.outcome);
  return util::WriteFileAtomic(path, all.dump(1) + "\n", err);
}

// The Coder's attempts at the valid modules (its own rollout under unit_dir/coder).
bool CoderAttempts(UnitContext& ctx, ProposerContext& pc, const Unit& u, const std::string& unit_dir,
                   std::vector<Proposed>& ps, std::string* err, TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  std::vector<RolloutTask> tasks;
  std::vector<size_t> owner;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!ps[i].outcome.value("valid", false)) continue;
    RolloutTask t{ps[i].task_id, pc.tasks_dir + "/" + ps[i].task_id + ".py", ps[i].code};
    if (!util::WriteFileAtomic(t.path, t.source, err)) return false;
    tasks.push_back(std::move(t));
    owner.push_back(i);
  }
  if (tasks.empty()) return true;
  std::string dir = unit_dir + "/coder";
  if (!util::MakeDirs(dir + "/candidates", err)) return false;
  RolloutOptions o{c.proposer.coder_samples, c.temperature > 0 ? c.temperature : 1.0, c.max_new_tokens,
                   int((c.seed + 7919 * uint64_t(u.global_step + 1)) % 1000000007), c.backend, ctx.prompt_template};
  std::vector<RolloutSample> samples;
  if (!Rollout(*ctx.backend, ctx.verify, tasks, o, dir, &samples, err, terr)) return false;
  for (const auto& s : samples) {
    ps[owner[s.task]].attempts += 1;
    ps[owner[s.task]].successes += s.correct;
  }
  return true;
}

// The pool gets the valid modules and the Coder's attempts, once per module: the attempts are
// keyed "<unit>/<module>" in the pool itself, in the same transaction (a replay after a kill
// anywhere adds nothing twice; Add is idempotent by hash).
bool RecordInPool(ProposerContext& pc, const Unit& u, const std::vector<json>& sets, const std::vector<Proposed>& ps,
                  std::string* err) {
  auto pool = cur::FrontierPool::Open(pc.pool_path, err);
  if (!pool) return false;
  for (const auto& p : ps) {
    if (!p.outcome.value("valid", false)) continue;
    cur::PoolModule m{p.outcome.value("canonical_hash", ""), p.task_id,
                      sets[p.set]["ids"].get<std::vector<std::string>>(), pc.catalog.version(), p.code, u.round};
    int64_t id = 0;
    bool inserted = false;
    bool already = false;
    if (!pool->Add(m, &id, &inserted, err) ||
        !pool->RecordAttemptsOnce(u.id + "/" + p.task_id, id, u.round, p.attempts, p.successes, &already, err))
      return false;
  }
  return true;
}

}  // namespace

bool RunProposerStep(UnitContext& ctx, ProposerContext& pc, const Unit& u, const std::string& unit_dir,
                     UnitResult* out, std::string* err, TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  const auto& pcfg = c.proposer;
  std::vector<json> sets;
  std::vector<std::string> prompts;
  if (!util::MakeDirs(pc.tasks_dir, err) || !util::MakeDirs(unit_dir + "/modules", err) ||
      !StepSets(c, pc, u, unit_dir, &sets, err) ||
      !ProposerPrompts(pc, sets, &prompts, err))
    return false;
  GenerateRequest req;
  req.prompts = prompts;
  req.n = pcfg.samples_per_set;
  req.temperature = pcfg.temperature;
  req.max_new_tokens = pcfg.max_new_tokens;
  req.seed = int((c.seed + 104729 * uint64_t(u.global_step + 1)) % 1000000007);
  req.chat = true;
  GenerateResult g;
  if (!GenerateOnce(*pc.backend, req, unit_dir + "/generation.json", &g, err, terr)) return false;
  std::vector<Proposed> ps(g.samples.size());
  std::map<std::string, int> refusals;
  std::map<size_t, int> per_set;  // samples seen per set so far: the sample's index in its set
  for (size_t k = 0; k < g.samples.size(); ++k) {
    Proposed& p = ps[k];
    p.gen = &g.samples[k];
    p.set = size_t(p.gen->prompt_index);
    if (p.set >= sets.size()) return *err = "generation.json: a sample of prompt " + std::to_string(p.set) +
                                            " (only " + std::to_string(sets.size()) + " sets)", false;
    p.sample = per_set[p.set]++;
    const std::string set_id = sets.at(p.set)["id"].get<std::string>();
    p.task_id = "r" + std::to_string(u.round) + "p" + std::to_string(u.step) + "_" + set_id + "_" + std::to_string(p.sample);
    auto x = generate::ExtractCode(p.gen->text, p.gen->finish_reason, true);
    if (x.reason) {
      const std::string rule(generate::ReasonName(*x.reason));
      p.outcome = {{"valid", false}, {"stage", "extract"}, {"rule", rule}, {"reason", "extract." + rule}};
      continue;
    }
    p.code = x.code;
    p.path = unit_dir + "/modules/" + set_id + "_" + std::to_string(p.sample) + ".py";
    if (!util::WriteFileAtomic(p.path, p.code, err)) return false;
  }
  if (!Validate(pc, sets, unit_dir, ps, err) || !CoderAttempts(ctx, pc, u, unit_dir, ps, err, terr) ||
      !RecordInPool(pc, u, sets, ps, err))
    return false;
  // Rewards and advantages per API set (the group), then the Proposer's step.
  const bool frozen = pcfg.freeze_after_round > 0 && u.round > pcfg.freeze_after_round;
  TrainStepRequest step = PolicyStep(c, pcfg.lr, pcfg.temperature);
  int valid = 0, zero_var = 0, attempts = 0, successes = 0;
  std::vector<double> all_rewards, valid_rewards;
  for (size_t s = 0; s < sets.size(); ++s) {
    std::vector<Proposed*> group;
    std::vector<double> rewards;
    for (auto& p : ps) {
      if (p.set != s) continue;
      bool ok = p.outcome.value("valid", false);
      rewards::FrontierOutcome fo{ok, p.attempts, p.successes};
      std::string why;
      if (!rewards::FrontierReward(fo, {pcfg.invalid_penalty}, &p.reward, &why)) p.reward = pcfg.invalid_penalty;
      if (!ok) ++refusals[p.outcome.value("stage", "?") + "." + p.outcome.value("rule", "?")];
      valid += ok;
      attempts += p.attempts;
      successes += p.successes;
      if (ok) valid_rewards.push_back(p.reward);
      all_rewards.push_back(p.reward);
      rewards.push_back(p.reward);
      group.push_back(&p);
    }
    bool zv = false;
    auto adv = rewards::Advantages(rewards, c.rewards.baseline, c.rewards.eps, &zv);
    zero_var += zv;
    if (zv || frozen) continue;
    for (size_t i = 0; i < group.size(); ++i)
      if (!group[i]->gen->token_ids.empty())
        step.samples.push_back({g.prompt_ids.at(group[i]->set), group[i]->gen->token_ids, adv[i], group[i]->gen->logprobs, {}});
  }
  const double n = double(ps.size());
  json m = {{"unit", u.id},
            {"kind", "proposer"},
            {"round", u.round},
            {"step", u.step},
            {"sets", sets.size()},
            {"proposals", ps.size()},
            {"valid", valid},
            {"validity_rate", n > 0 ? valid / n : 0.0},
            {"refusals", refusals},
            {"coder_attempts", attempts},
            {"coder_accuracy", attempts > 0 ? double(successes) / attempts : 0.0},
            {"frontier_reward_mean", Mean(all_rewards)},
            {"frontier_reward_valid_mean", Mean(valid_rewards)},
            {"groups_zero_variance", zero_var},
            {"frozen", frozen},
            {"trained_samples", step.samples.size()}};
  if (!step.samples.empty()) {
    TrainStepResult r;
    if (!pc.backend->TrainStep(step, &r, terr)) return *err = "proposer train_step: " + terr->message, false;
    m.update({{"loss", r.loss}, {"grad_norm", r.grad_norm}, {"tokens", r.tokens}, {"train_s", r.wall_s}});
    out->trained = true;
  } else {
    m["skipped"] = frozen ? "the Proposer is frozen after round " + std::to_string(pcfg.freeze_after_round)
                          : "every group was zero-variance: no learning signal, no step";
  }
  out->metrics = m;
  util::LogInfo("train: " + u.id + ": " + std::to_string(valid) + "/" + std::to_string(ps.size()) +
                " valid modules, Coder " + std::to_string(successes) + "/" + std::to_string(attempts));
  std::string why;  // the new valid modules are Coder tasks from now on
  if (!LoadCoderPool(c.coder_tasks, pc.tasks_dir, &ctx.coder_pool, &why)) util::LogWarn("train: " + why);
  return true;
}

bool LoadCoderPool(const std::string& coder_tasks, const std::string& run_tasks, std::vector<RolloutTask>* out,
                   std::string* err) {
  std::vector<RolloutTask> pool, more;
  std::string why;
  if (!coder_tasks.empty() && !LoadTasks(coder_tasks, &pool, err)) return false;
  if (std::filesystem::exists(run_tasks) && LoadTasks(run_tasks, &more, &why))
    pool.insert(pool.end(), more.begin(), more.end());
  if (pool.empty()) return *err = "no Coder tasks yet ([coder] tasks is empty and the Proposer made none)", false;
  *out = std::move(pool);
  return true;
}

}  // namespace kz::train
