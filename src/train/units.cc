#include "train/units.h"

#include <cmath>
#include <numeric>

#include "rewards/ca_grpo.h"
#include "train/refine_rollout.h"
#include "train/mix.h"
#include "train/rft_data.h"
#include "util/fs.h"
#include "util/hash.h"
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

namespace {
// `epochs` passes over `data` in [sft] batches at [sft] lr; the metrics of an SFT unit.
bool SftOn(UnitContext& ctx, const Unit& u, const std::vector<SftSample>& data, int epochs, UnitResult* out,
           std::string* err, TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  std::vector<double> losses;
  int64_t tokens = 0;
  for (int e = 0; e < epochs; ++e)
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
  out->metrics = {{"unit", u.id}, {"kind", u.kind}, {"records", data.size()}, {"epochs", epochs},
                  {"steps", losses.size()}, {"loss_first", losses.front()}, {"loss_last", losses.back()},
                  {"loss_mean", Mean(losses)}, {"tokens", tokens}};
  out->trained = true;
  return true;
}
}  // namespace

bool RunSft(UnitContext& ctx, const Unit& u, UnitResult* out, std::string* err, TrainerError* terr) {
  std::vector<SftSample> data;
  if (!ReadSft(ctx.config->sft_data, &data, err)) return false;
  return SftOn(ctx, u, data, ctx.config->sft_epochs, out, err, terr);
}

bool RunRft(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
            TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  RftDataOptions o;
  o.runs = {ctx.run_dir};
  o.out = unit_dir + "/sft.jsonl";
  o.per_task = size_t(c.rft_per_task);
  o.prompt_template = ctx.prompt_template;
  o.backend = c.backend;
  o.allow_no_verdicts = true;  // no sample had code yet: nothing to fine-tune on, not an error
  RftDataReport r;
  if (!BuildRftData(o, &r, err)) return false;
  json counts = {{"correct", r.correct}, {"duplicates", r.duplicates}, {"over_cap", r.over_cap},
                 {"untrusted", r.unreadable}, {"rft_tasks", r.tasks}};
  if (r.written == 0) {
    out->metrics = {{"unit", u.id}, {"kind", "rft"}, {"round", u.round}, {"records", 0},
                    {"skipped", "no verified-correct sample yet: nothing to fine-tune on"}};
    out->metrics.update(counts);
    return true;
  }
  std::vector<SftSample> data;
  if (!ReadSft(o.out, &data, err) || !SftOn(ctx, u, data, c.rft_epochs, out, err, terr)) return false;
  out->metrics["round"] = u.round;
  out->metrics.update(counts);
  return true;
}

bool RunEval(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
             TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  RefineRolloutOptions o;
  o.base = {1, 0.0, c.eval_max_new_tokens, 0, c.backend, ctx.prompt_template};
  o.turns = c.eval_turns;
  o.prompt = {size_t(c.multi_turn.feedback_chars), size_t(c.multi_turn.context_chars)};
  std::vector<Trajectory> trajectories;
  RefineStats rs;
  if (!RefineRollout(*ctx.backend, ctx.verify, ctx.eval_tasks, o, unit_dir, &trajectories, &rs, err, terr)) return false;
  auto fast = [](const RolloutSample& s) { return s.correct && s.speedup && *s.speedup > 1.0; };
  int correct = 0, is_fast = 0, no_code = 0, best_correct = 0, best_fast = 0;
  std::vector<int> turn_correct(size_t(c.eval_turns), 0);
  json outcomes = json::array(), best = json::array();  // [task, correct, fast] per task: the report's paired bootstrap
  // [task, digest of the first reply, verdict status] per task: two evaluations of one checkpoint
  // that disagree show whether the generation or the verdict differed
  json generations = json::array();
  for (const auto& t : trajectories) {
    const RolloutSample& first = t.turns.front();
    correct += first.correct;
    is_fast += fast(first);
    no_code += first.verdict.value("status", "") == "no_code";
    outcomes.push_back({ctx.eval_tasks[t.task].id, first.correct, fast(first)});
    generations.push_back({ctx.eval_tasks[t.task].id, util::Hash128Hex(first.reply).substr(0, 12),
                           first.verdict.value("status", "")});
    bool any = false, any_fast = false;
    for (size_t k = 0; k < t.turns.size(); ++k) {
      any = any || t.turns[k].correct;
      any_fast = any_fast || fast(t.turns[k]);
      if (any) ++turn_correct[k];  // correct by turn k+1 (stays counted once closed)
    }
    for (size_t k = t.turns.size(); any && k < turn_correct.size(); ++k) ++turn_correct[k];
    best_correct += any;
    best_fast += any_fast;
    best.push_back({ctx.eval_tasks[t.task].id, any, any_fast});
  }
  double n = double(trajectories.size());
  out->metrics = {{"unit", u.id}, {"kind", "eval"}, {"round", u.round}, {"tasks", trajectories.size()},
                  {"pass_at_1", correct / n}, {"fast_1_at_1", is_fast / n}, {"no_code", no_code}, {"outcomes", outcomes},
                  {"generations", generations}};
  if (c.eval_turns > 1) {
    json by_turn = json::array();
    for (int k : turn_correct) by_turn.push_back(k / n);
    out->metrics.update({{"turns", c.eval_turns}, {"pass_at_1_best_turn", best_correct / n},
                         {"fast_1_at_1_best_turn", best_fast / n}, {"pass_by_turn", by_turn},
                         {"outcomes_best_turn", best}, {"feedback_cut", rs.feedback_cut}});
  }
  return true;
}

}  // namespace kz::train
