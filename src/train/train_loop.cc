#include "train/train_loop.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "curriculum/scan.h"
#include "curriculum/validator.h"
#include "train/proposer_step.h"
#include "train/run_dir.h"
#include "train/schedule.h"
#include "train/units.h"
#include "util/log.h"

namespace kz::train {
namespace {

// `model`: the policy's starting weights (used when there is no checkpoint yet).
bool LoadPolicy(TrainerBackend& backend, const RunConfig& c, const std::string& model, const std::string& checkpoint,
                TrainerError* terr) {
  LoadRequest req;
  req.model = checkpoint.empty() ? model : checkpoint;
  req.device = c.device;
  req.dtype = c.dtype;
  req.lr = c.lr;
  req.seed = int(c.seed % 1000000007);
  if (c.lora_r > 0) req.lora = LoraOptions{c.lora_r, 2 * c.lora_r, 0, {}};
  req.reference = c.kl_coef > 0;
  LoadResult r;
  if (!backend.Load(req, &r, terr)) return false;
  util::LogInfo("train: policy " + r.model + " (" + std::to_string(r.parameters) + " parameters, " + r.device + ")");
  return true;
}

bool RunUnit(UnitContext& ctx, const Unit& u, const RunDir& dir, UnitResult* res, std::string* err, TrainerError* terr) {
  std::string unit_dir;
  if (u.kind != "sft" && !dir.UnitDir(u.id, &unit_dir, err)) return false;
  if (u.kind == "sft") return RunSft(ctx, u, res, err, terr);
  if (u.kind == "coder") return RunCoderStep(ctx, u, unit_dir, res, err, terr);
  if (u.kind == "proposer") return RunProposerStep(ctx, *ctx.proposer, u, unit_dir, res, err, terr);
  if (u.kind == "rft") return RunRft(ctx, u, unit_dir, res, err, terr);
  return RunEval(ctx, u, unit_dir, res, err, terr);
}

std::string ProposerModel(const RunConfig& c) { return c.proposer.model.empty() ? c.model : c.proposer.model; }

// RunUnit, and once more after restarting a backend that crashed or hung (from the last
// checkpoint: what the failed attempt did to the weights in memory is gone with it). A
// Proposer unit uses both policies: both are restarted.
bool AttemptUnit(UnitContext& ctx, const Unit& u, const RunDir& dir, const RunState& state, UnitResult* res,
                 std::string* err) {
  for (int attempt = 0;; ++attempt) {
    err->clear();
    TrainerError terr;
    if (RunUnit(ctx, u, dir, res, err, &terr)) return true;
    if (!terr.needs_restart() || attempt == 1) return false;
    util::LogWarn("train: " + u.id + ": " + *err + "; restarting the backend from the last checkpoint");
    HelloInfo hello;
    bool ok = ctx.backend->Restart(&hello, &terr) &&
              LoadPolicy(*ctx.backend, *ctx.config, ctx.config->model, state.checkpoint, &terr);
    if (ok && u.kind == "proposer")
      ok = ctx.proposer->backend->Restart(&hello, &terr) &&
           LoadPolicy(*ctx.proposer->backend, *ctx.config, ProposerModel(*ctx.config), state.proposer_checkpoint, &terr);
    if (!ok) return *err += "; the restart failed too: " + terr.message, false;
  }
}

// The Proposer phase's context: its policy (a second backend process), catalog, statistics,
// pool, the held-out tasks' hashes (decontamination).
bool PrepareProposer(const TrainLoopOptions& o, const RunDir& dir, ProposerContext* pc, std::string* err) {
  const auto& p = o.config.proposer;
  pc->prompt_template = o.proposer_template;
  pc->pool_path = dir.path() + "/frontier.db";
  pc->tasks_dir = dir.path() + "/tasks";
  pc->worker = o.worker;
  if (!pc->catalog.Load(p.catalog, err)) return false;
  if (!p.stats.empty()) {
    if (!curriculum::LoadStats(p.stats, pc->catalog, &pc->stats, err)) return false;
    pc->has_stats = true;
  }
  if (o.config.eval_tasks.empty()) return true;
  curriculum::WorkerScanner scanner(o.worker);
  return curriculum::EvalHashes({o.config.eval_tasks}, scanner, &pc->known, err);
}

int Stop(const std::string& why) {
  std::cerr << "kz train: stopped: " << why << "\n  (the run's state is saved: run the same command again to resume)\n";
  return 1;
}

}  // namespace

int RunTraining(const TrainLoopOptions& o) {
  std::string err;
  RunDir dir;
  RunState state;
  if (!dir.Open(o.out, o.config_text, &err) || !dir.LoadState(&state, &err)) {
    std::cerr << "kz train: " << err << "\n";
    return 2;
  }
  UnitContext ctx;
  ctx.verify = o.verify;
  ctx.config = &o.config;
  ctx.prompt_template = o.prompt_template;
  ctx.run_dir = dir.path();
  const bool proposing = o.config.proposer.steps_per_round > 0;
  ProposerContext pc;
  std::string why;
  // [coder] tasks, when set, must load; without them the pool may be empty (an SFT- or
  // eval-only run, or one whose Proposer has not made tasks yet: Coder steps then skip).
  if ((!LoadCoderPool(o.config.coder_tasks, dir.path() + "/tasks", &ctx.coder_pool, &why) &&
       !o.config.coder_tasks.empty()) ||
      (!o.config.eval_tasks.empty() && !LoadTasks(o.config.eval_tasks, &ctx.eval_tasks, &err)) ||
      (proposing && !PrepareProposer(o, dir, &pc, &err))) {
    std::cerr << "kz train: " << (err.empty() ? why : err) << "\n";
    return 2;
  }
  auto units = Schedule(o.config);
  size_t todo = size_t(std::count_if(units.begin(), units.end(), [&](const Unit& u) {
    return std::find(state.done.begin(), state.done.end(), u.id) == state.done.end();
  }));
  std::cerr << "kz train: " << units.size() << " units, " << (units.size() - todo) << " done before"
            << (state.checkpoint.empty() ? "" : "; resuming from " + state.checkpoint) << "\n";
  if (todo == 0) return 0;
  TrainerBackend backend(o.trainer), proposer_backend(o.trainer);
  ctx.backend = &backend;
  TrainerError terr;
  HelloInfo hello;
  if (!backend.Start(&hello, &terr) || !LoadPolicy(backend, o.config, o.config.model, state.checkpoint, &terr))
    return Stop("trainer backend: " + terr.message + (terr.stderr_tail.empty() ? "" : "\n" + terr.stderr_tail));
  if (proposing) {  // the Proposer: its own process and weights
    pc.backend = &proposer_backend;
    ctx.proposer = &pc;
    if (!proposer_backend.Start(&hello, &terr) ||
        !LoadPolicy(proposer_backend, o.config, ProposerModel(o.config), state.proposer_checkpoint, &terr))
      return Stop("Proposer's trainer backend: " + terr.message +
                  (terr.stderr_tail.empty() ? "" : "\n" + terr.stderr_tail));
  }
  size_t index = 0;
  for (const Unit& u : units) {
    if (std::find(state.done.begin(), state.done.end(), u.id) != state.done.end()) continue;
    std::cerr << "kz train: [" << ++index << "/" << todo << "] " << u.id << "\n";
    UnitResult res;
    const double budget = o.config.coder_budget_s;
    if (u.kind == "coder" && budget > 0 && state.coder_seconds >= budget) {
      res.metrics = {{"unit", u.id}, {"kind", "coder"}, {"round", u.round}, {"step", u.step},
                     {"skipped", "the Coder's budget of " + std::to_string(int(budget)) + " s is spent"}};
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      if (!AttemptUnit(ctx, u, dir, state, &res, &err)) return Stop(u.id + ": " + err);
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      res.metrics["wall_s"] = wall;
      if (u.kind == "coder") state.coder_seconds += wall;
    }
    if (res.trained) {  // a Proposer unit trains the Proposer, every other unit the Coder
      const bool proposer = u.kind == "proposer";
      SaveResult saved;
      std::string ckpt = dir.CheckpointDir(u.id);
      if (!(proposer ? proposer_backend : backend).Save({ckpt, true}, &saved, &terr))
        return Stop(u.id + ": save: " + terr.message);
      (proposer ? state.proposer_checkpoint : state.checkpoint) = ckpt;
    }
    state.done.push_back(u.id);
    res.metrics["checkpoint"] = state.checkpoint;
    if (proposing) res.metrics["proposer_checkpoint"] = state.proposer_checkpoint;
    if (!dir.AppendMetrics(res.metrics, &err) || !dir.SaveState(state, &err)) return Stop(err);
    if (res.trained) dir.PruneCheckpoints({state.checkpoint, state.proposer_checkpoint});
    std::cerr << "kz train: " << u.id << " done: " << res.metrics.dump() << "\n";
  }
  backend.Shutdown(&terr);
  if (proposing) proposer_backend.Shutdown(&terr);
  return 0;
}

}  // namespace kz::train
