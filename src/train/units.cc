#include "train/units.h"

#include <cmath>
#include <numeric>

#include "rewards/ca_grpo.h"
#include "train/mix.h"
#include "util/fs.h"
#include "util/log.h"

namespace kz::train {
namespace {
using nlohmann::json;

bool ReadSft(const std::string& path, std::vector<SftSample>* out, std::string* err) {
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("prompt") || !j["prompt"].is_string() || !j.contains("completion") ||
        !j["completion"].is_string())
      return *err = path + ":" + std::to_string(line_no) + ": not a {\"prompt\", \"completion\"} record", false;
    SftSample s;
    s.prompt = j["prompt"].get<std::string>();
    s.completion = j["completion"].get<std::string>();
    out->push_back(std::move(s));
  }
  if (out->empty()) return *err = path + " holds no SFT records", false;
  return true;
}

}  // namespace

double Mean(const std::vector<double>& xs) {
  return xs.empty() ? 0 : std::accumulate(xs.begin(), xs.end(), 0.0) / double(xs.size());
}

TrainStepRequest PolicyStep(const RunConfig& c, double phase_lr, double temperature) {
  TrainStepRequest req;
  req.clip_eps = c.clip_eps;
  req.kl_coef = c.kl_coef;
  req.lr = phase_lr > 0 ? phase_lr : c.lr;
  req.temperature = temperature > 0 ? temperature : 1.0;
  return req;
}

std::vector<size_t> StepTasks(size_t pool, int k, int global_step, uint64_t seed) {
  std::vector<size_t> out;
  for (int j = 0; j < k; ++j) {
    size_t idx = size_t(global_step) * size_t(k) + size_t(j), pass = idx / pool;
    std::vector<size_t> perm(pool);
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = pool; i > 1; --i) std::swap(perm[i - 1], perm[Mix64(seed * 0x9E3779B97F4A7C15ull + pass * 31 + i) % i]);
    out.push_back(perm[idx % pool]);
  }
  return out;
}

bool RunSft(UnitContext& ctx, const Unit& u, UnitResult* out, std::string* err, TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  std::vector<SftSample> data;
  if (!ReadSft(c.sft_data, &data, err)) return false;
  std::vector<double> losses;
  int64_t tokens = 0;
  for (int e = 0; e < c.sft_epochs; ++e)
    for (size_t at = 0; at < data.size(); at += size_t(c.sft_batch)) {
      SftRequest req;
      req.samples.assign(data.begin() + long(at), data.begin() + long(std::min(data.size(), at + size_t(c.sft_batch))));
      req.chat = true;
      req.lr = c.sft_lr > 0 ? c.sft_lr : c.lr;  // always set: the backend keeps the last lr it was given
      SftResult r;
      if (!ctx.backend->Sft(req, &r, terr)) return *err = "sft: " + terr->message, false;
      losses.push_back(r.loss);
      tokens += r.tokens;
      util::LogInfo("train: sft epoch " + std::to_string(e + 1) + " batch " + std::to_string(at / size_t(c.sft_batch) + 1) +
                    ": loss " + std::to_string(r.loss));
    }
  out->metrics = {{"unit", u.id}, {"kind", "sft"}, {"records", data.size()}, {"epochs", c.sft_epochs},
                  {"steps", losses.size()}, {"loss_first", losses.front()}, {"loss_last", losses.back()},
                  {"loss_mean", Mean(losses)}, {"tokens", tokens}};
  out->trained = true;
  return true;
}

bool RunCoderStep(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
                  TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  if (ctx.coder_pool.empty()) {  // [coder] tasks unset and the Proposer made no valid module yet
    out->metrics = {{"unit", u.id}, {"kind", "coder"}, {"round", u.round}, {"step", u.step}, {"tasks", 0},
                    {"skipped", "no Coder tasks yet: the Proposer has made no valid module"}};
    return true;
  }
  std::vector<RolloutTask> tasks;
  for (size_t i : StepTasks(ctx.coder_pool.size(), c.tasks_per_step, u.global_step, c.seed)) tasks.push_back(ctx.coder_pool[i]);
  RolloutOptions o{c.samples_per_task, c.temperature, c.max_new_tokens, int((c.seed + uint64_t(u.global_step)) % 1000000007),
                   c.backend, ctx.prompt_template};
  std::vector<RolloutSample> samples;
  if (!Rollout(*ctx.backend, ctx.verify, tasks, o, unit_dir, &samples, err, terr)) return false;
  TrainStepRequest req = PolicyStep(c, c.coder_lr, c.temperature);
  int correct = 0, no_code = 0, zero_var = 0, gate_open = 0;
  std::vector<double> rewards;
  for (size_t t = 0; t < tasks.size(); ++t) {
    std::vector<const RolloutSample*> group;
    std::vector<rewards::SampleOutcome> outcomes;
    for (const auto& s : samples)
      if (s.task == t) {
        group.push_back(&s);
        outcomes.push_back({s.correct, s.speedup});
      }
    auto g = rewards::ScoreGroup(outcomes, c.rewards);
    zero_var += g.zero_variance;
    gate_open += g.gate;
    for (size_t i = 0; i < group.size(); ++i) {
      correct += group[i]->correct;
      no_code += group[i]->verdict.value("status", "") == "no_code";
      rewards.push_back(g.rewards[i]);
      if (g.zero_variance || group[i]->completion_ids.empty()) continue;
      req.samples.push_back({group[i]->prompt_ids, group[i]->completion_ids, g.advantages[i], group[i]->logprobs, {}});
    }
  }
  json m = {{"unit", u.id}, {"kind", "coder"}, {"round", u.round}, {"step", u.step}, {"tasks", tasks.size()},
            {"samples", samples.size()}, {"correct", correct}, {"accuracy", double(correct) / double(samples.size())},
            {"no_code", no_code}, {"groups_zero_variance", zero_var}, {"groups_gate_open", gate_open},
            {"reward_mean", Mean(rewards)}, {"trained_samples", req.samples.size()}};
  if (!req.samples.empty()) {
    TrainStepResult r;
    if (!ctx.backend->TrainStep(req, &r, terr)) return *err = "train_step: " + terr->message, false;
    m.update({{"loss", r.loss}, {"grad_norm", r.grad_norm}, {"clip_fraction", r.clip_fraction}, {"tokens", r.tokens},
              {"train_s", r.wall_s}});
    out->trained = true;
  } else {
    m["skipped"] = "every group was zero-variance: no learning signal, no step";
  }
  out->metrics = m;
  return true;
}

bool RunEval(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
             TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  RolloutOptions o{1, 0.0, c.eval_max_new_tokens, 0, c.backend, ctx.prompt_template};
  std::vector<RolloutSample> samples;
  if (!Rollout(*ctx.backend, ctx.verify, ctx.eval_tasks, o, unit_dir, &samples, err, terr)) return false;
  int correct = 0, fast = 0, no_code = 0;
  json outcomes = json::array();  // [task, correct, fast] per task: the report's paired bootstrap
  for (const auto& s : samples) {
    bool is_fast = s.correct && s.speedup && *s.speedup > 1.0;
    correct += s.correct;
    fast += is_fast;
    no_code += s.verdict.value("status", "") == "no_code";
    outcomes.push_back({ctx.eval_tasks[s.task].id, s.correct, is_fast});
  }
  double n = double(samples.size());
  out->metrics = {{"unit", u.id}, {"kind", "eval"}, {"round", u.round}, {"tasks", samples.size()},
                  {"pass_at_1", correct / n}, {"fast_1_at_1", fast / n}, {"no_code", no_code}, {"outcomes", outcomes}};
  return true;
}

}  // namespace kz::train
