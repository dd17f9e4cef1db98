#include "train/coder_step.h"

#include <filesystem>
#include <optional>

#include "rewards/mirror_pop.h"
#include "rewards/retry_buffer.h"
#include "train/units.h"
#include "util/fs.h"
#include "util/log.h"

namespace kz::train {
namespace {
using nlohmann::json;

// Buffered Dynamic Retry's buffer as this unit found it: <unit>/retry_in.json when an earlier
// attempt of the unit saved it (a retried unit must not take from the buffer twice), else
// the run's retry_buffer.json (saved there first), else an empty one.
bool LoadRetry(const UnitContext& ctx, const std::string& unit_dir, std::optional<rewards::RetryBuffer>* out,
               std::string* err) {
  const auto& r = ctx.config->retry;
  out->reset();
  if (r.capacity == 0) return true;
  for (const std::string& path : {unit_dir + "/retry_in.json", ctx.run_dir + "/retry_buffer.json"}) {
    std::string text, why;
    if (!util::ReadFile(path, &text, &why)) continue;
    *out = rewards::RetryBuffer::FromJson(json::parse(text, nullptr, false), err);
    if (!*out) return *err = path + ": " + *err, false;
    break;
  }
  if (!*out) out->emplace(size_t(r.capacity), r.max_retries);
  return util::WriteFileAtomic(unit_dir + "/retry_in.json", (*out)->ToJson().dump() + "\n", err);
}

// The pool's tasks by id (a buffered task no longer in the pool is skipped).
std::vector<RolloutTask> TasksById(const std::vector<RolloutTask>& pool, const std::vector<std::string>& ids) {
  std::vector<RolloutTask> out;
  for (const auto& id : ids)
    for (const auto& t : pool)
      if (t.id == id) {
        out.push_back(t);
        break;
      }
  return out;
}

RefineRolloutOptions StepRollout(const UnitContext& ctx, const Unit& u, int n, int seed_offset) {
  const RunConfig& c = *ctx.config;
  RefineRolloutOptions o;
  o.base = {n,
            c.temperature,
            c.max_new_tokens,
            int((c.seed + uint64_t(u.global_step) + uint64_t(seed_offset)) % 1000000007),
            c.backend,
            ctx.prompt_template};
  o.turns = c.multi_turn.turns;
  o.stop_on_correct = c.multi_turn.stop_on_correct;
  o.prompt = {size_t(c.multi_turn.feedback_chars), size_t(c.multi_turn.context_chars)};
  return o;
}

// What a step counts over its groups (the metrics line).
struct StepCounts {
  int samples = 0, correct = 0, no_code = 0, zero_var = 0, gate_open = 0, trajectories = 0, first_ok = 0, any_ok = 0,
      repaired = 0;
  std::vector<int> turn_samples, turn_correct;
  std::vector<double> rewards;
};

// Scores one task's group, adds its trainable turns to `req` and its counts to `n`.
void AddGroup(const std::vector<const Trajectory*>& group, const RunConfig& c, TrainStepRequest* req, StepCounts* n,
              bool* any_correct) {
  ScoredGroup g = ScoreTaskGroup(group, c);
  *any_correct = g.any_correct;
  bool all_zero = true;
  for (bool z : g.turns.zero_variance_turns) all_zero = all_zero && z;
  n->zero_var += all_zero;
  n->gate_open += g.gate_open;
  for (size_t i = 0; i < group.size(); ++i) {
    const auto& turns = group[i]->turns;
    ++n->trajectories;
    n->first_ok += turns.front().correct;
    bool ok = false;
    for (const auto& s : turns) ok = ok || s.correct;
    n->any_ok += ok;
    n->repaired += ok && !turns.front().correct;
    for (size_t t = 0; t < turns.size(); ++t) {
      const RolloutSample& s = turns[t];
      if (n->turn_samples.size() <= t) n->turn_samples.resize(t + 1), n->turn_correct.resize(t + 1);
      ++n->samples, ++n->turn_samples[t];
      n->correct += s.correct, n->turn_correct[t] += s.correct;
      n->no_code += s.verdict.value("status", "") == "no_code";
      n->rewards.push_back(g.rewards[i][t]);
      if (g.turns.zero_variance_turns[t] || s.completion_ids.empty()) continue;
      req->samples.push_back({s.prompt_ids, s.completion_ids, g.turns.advantages[i][t], s.logprobs, {}});
    }
  }
}

// MirrorPop: scores the step's samples under the training policy and drops those whose
// sampling log-probabilities disagree (metrics["mirror_pop"]).
bool FilterMirrorPop(UnitContext& ctx, TrainStepRequest* req, json* m, std::string* err, TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  if (!c.mirror_pop.enabled || req->samples.empty()) return true;
  ScoreRequest sr;
  for (const auto& s : req->samples) sr.samples.push_back({s.prompt_ids, s.completion_ids});
  sr.temperature = c.temperature > 0 ? c.temperature : 1.0;
  ScoreResult scored;
  if (!ctx.backend->Score(sr, &scored, terr)) return *err = "score (MirrorPop): " + terr->message, false;
  rewards::PopSummary sum;
  std::vector<PolicySample> kept;
  for (size_t i = 0; i < req->samples.size(); ++i) {
    auto d = rewards::MirrorPop(i < scored.logprobs.size() ? scored.logprobs[i] : std::vector<double>{},
                                req->samples[i].old_logprobs, c.mirror_pop.bounds);
    rewards::Count(d, &sum);
    if (d.kept()) kept.push_back(std::move(req->samples[i]));
  }
  req->samples = std::move(kept);
  (*m)["mirror_pop"] = {{"sequences", sum.sequences},
                        {"kept", sum.kept},
                        {"filtered_share", sum.filtered_share()},
                        {"sequence_ratio", sum.sequence_ratio},
                        {"token_veto", sum.token_veto},
                        {"nan", sum.nan},
                        {"length_mismatch", sum.length_mismatch}};
  return true;
}

json CountsJson(const StepCounts& n, size_t tasks, const RefineStats& rs, int turns) {
  json m = {{"tasks", tasks},
            {"samples", n.samples},
            {"correct", n.correct},
            {"accuracy", n.samples ? double(n.correct) / double(n.samples) : 0.0},
            {"no_code", n.no_code},
            {"groups_zero_variance", n.zero_var},
            {"groups_gate_open", n.gate_open},
            {"reward_mean", Mean(n.rewards)}};
  if (turns > 1)
    m["multi_turn"] = {{"turns", turns},
                       {"trajectories", n.trajectories},
                       {"turn_samples", n.turn_samples},
                       {"turn_correct", n.turn_correct},
                       {"pass_first_turn", n.trajectories ? double(n.first_ok) / n.trajectories : 0.0},
                       {"pass_any_turn", n.trajectories ? double(n.any_ok) / n.trajectories : 0.0},
                       {"repaired", n.repaired},
                       {"feedback_cut", rs.feedback_cut},
                       {"omitted_replies", rs.omitted_replies}};
  return m;
}

}  // namespace

ScoredGroup ScoreTaskGroup(const std::vector<const Trajectory*>& group, const RunConfig& c) {
  ScoredGroup out;
  size_t horizon = 0;
  for (const auto* t : group) horizon = std::max(horizon, t->turns.size());
  out.rewards.assign(group.size(), {});
  for (size_t turn = 0; turn < horizon; ++turn) {
    std::vector<size_t> who;
    std::vector<rewards::SampleOutcome> outcomes;
    for (size_t i = 0; i < group.size(); ++i)
      if (turn < group[i]->turns.size()) {
        const auto& s = group[i]->turns[turn];
        who.push_back(i);
        outcomes.push_back({s.correct, s.speedup});
        out.any_correct = out.any_correct || s.correct;
      }
    auto g = rewards::ScoreGroup(outcomes, c.rewards);
    if (turn == 0) out.gate_open = g.gate;
    for (size_t j = 0; j < who.size(); ++j) out.rewards[who[j]].push_back(g.rewards[j]);
  }
  std::vector<bool> absorbed;
  for (const auto* t : group) absorbed.push_back(t->absorbed(c.multi_turn.turns));
  out.turns = rewards::ScoreTrajectories(out.rewards, c.multi_turn.returns, size_t(c.multi_turn.turns), absorbed);
  return out;
}

bool RunCoderStep(UnitContext& ctx, const Unit& u, const std::string& unit_dir, UnitResult* out, std::string* err,
                  TrainerError* terr) {
  const RunConfig& c = *ctx.config;
  json head = {{"unit", u.id}, {"kind", "coder"}, {"round", u.round}, {"step", u.step}};
  if (ctx.coder_pool.empty()) {  // [coder] tasks unset and the Proposer made no valid module yet
    out->metrics = head;
    out->metrics.update({{"tasks", 0}, {"skipped", "no Coder tasks yet: the Proposer has made no valid module"}});
    return true;
  }
  std::optional<rewards::RetryBuffer> buffer;
  if (!LoadRetry(ctx, unit_dir, &buffer, err)) return false;
  std::vector<RolloutTask> tasks, retried;
  for (size_t i : StepTasks(ctx.coder_pool.size(), c.tasks_per_step, u.global_step, c.seed))
    tasks.push_back(ctx.coder_pool[i]);
  if (buffer) retried = TasksById(ctx.coder_pool, buffer->Take(size_t(c.retry.per_step)));
  std::vector<Trajectory> main_t, retry_t;
  RefineStats rs, rs_retry;
  if (!RefineRollout(*ctx.backend, ctx.verify, tasks, StepRollout(ctx, u, c.samples_per_task, 0), unit_dir, &main_t,
                     &rs, err, terr))
    return false;
  int retry_n = c.retry.samples > 0 ? c.retry.samples : 2 * c.samples_per_task;
  if (!retried.empty() && !RefineRollout(*ctx.backend, ctx.verify, retried, StepRollout(ctx, u, retry_n, 1),
                                         unit_dir + "/retry", &retry_t, &rs_retry, err, terr))
    return false;
  TrainStepRequest req = PolicyStep(c, c.coder_lr, c.temperature);
  StepCounts n;
  long recovered = 0;
  for (int pass = 0; pass < 2; ++pass) {  // the step's groups, then the retried ones
    const auto& ts = pass == 0 ? tasks : retried;
    const auto& trs = pass == 0 ? main_t : retry_t;
    for (size_t k = 0; k < ts.size(); ++k) {
      std::vector<const Trajectory*> group;
      for (const auto& t : trs)
        if (t.task == k) group.push_back(&t);
      bool any_correct = false;
      AddGroup(group, c, &req, &n, &any_correct);
      if (!buffer) continue;
      if (pass == 1) buffer->RecordRetry(ts[k].id, any_correct), recovered += any_correct;
      if (!any_correct) buffer->OfferAllFail(ts[k].id);
    }
  }
  rs.feedback_cut += rs_retry.feedback_cut;
  rs.omitted_replies += rs_retry.omitted_replies;
  json m = head;
  m.update(CountsJson(n, tasks.size() + retried.size(), rs, c.multi_turn.turns));
  if (buffer) {
    const auto& st = buffer->stats();
    m["retry"] = {{"retried_now", retried.size()}, {"recovered_now", recovered},
                  {"buffered", buffer->size()},    {"offered", st.offered},
                  {"enqueued", st.enqueued},       {"dropped_full", st.dropped_full},
                  {"exhausted", st.exhausted},     {"retried", st.retried},
                  {"recovered", st.recovered},     {"yield", st.yield()}};
    if (!util::WriteFileAtomic(ctx.run_dir + "/retry_buffer.json", buffer->ToJson().dump() + "\n", err)) return false;
  }
  if (!FilterMirrorPop(ctx, &req, &m, err, terr)) return false;
  m["trained_samples"] = req.samples.size();
  if (!req.samples.empty()) {
    TrainStepResult r;
    if (!ctx.backend->TrainStep(req, &r, terr)) return *err = "train_step: " + terr->message, false;
    m.update({{"loss", r.loss},
              {"grad_norm", r.grad_norm},
              {"clip_fraction", r.clip_fraction},
              {"tokens", r.tokens},
              {"train_s", r.wall_s}});
    out->trained = true;
  } else {
    m["skipped"] = n.zero_var == int(tasks.size() + retried.size())
                       ? "every group was zero-variance: no learning signal, no step"
                       : "every trainable sample was filtered (MirrorPop): no step";
  }
  out->metrics = m;
  return true;
}

}  // namespace kz::train
