#include "train/train_loop.h"

#include <algorithm>
#include <iostream>

#include "train/run_dir.h"
#include "train/schedule.h"
#include "train/units.h"
#include "util/log.h"

namespace kz::train {
namespace {

bool LoadPolicy(TrainerBackend& backend, const RunConfig& c, const std::string& checkpoint, TrainerError* terr) {
  LoadRequest req;
  req.model = checkpoint.empty() ? c.model : checkpoint;
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
  return RunEval(ctx, u, unit_dir, res, err, terr);
}

// RunUnit, and once more after restarting a backend that crashed or hung (from the last
// checkpoint: what the failed attempt did to the weights in memory is gone with it).
bool AttemptUnit(UnitContext& ctx, const Unit& u, const RunDir& dir, const std::string& checkpoint, UnitResult* res,
                 std::string* err) {
  for (int attempt = 0;; ++attempt) {
    err->clear();
    TrainerError terr;
    if (RunUnit(ctx, u, dir, res, err, &terr)) return true;
    if (!terr.needs_restart() || attempt == 1) return false;
    util::LogWarn("train: " + u.id + ": " + *err + "; restarting the backend from the last checkpoint");
    HelloInfo hello;
    if (!ctx.backend->Restart(&hello, &terr) || !LoadPolicy(*ctx.backend, *ctx.config, checkpoint, &terr))
      return *err += "; the restart failed too: " + terr.message, false;
  }
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
  UnitContext ctx{nullptr, o.verify, &o.config, o.prompt_template, {}, {}};
  if ((!o.config.coder_tasks.empty() && !LoadTasks(o.config.coder_tasks, &ctx.coder_pool, &err)) ||
      (!o.config.eval_tasks.empty() && !LoadTasks(o.config.eval_tasks, &ctx.eval_tasks, &err))) {
    std::cerr << "kz train: " << err << "\n";
    return 2;
  }
  auto units = Schedule(o.config);
  size_t todo = size_t(std::count_if(units.begin(), units.end(), [&](const Unit& u) {
    return std::find(state.done.begin(), state.done.end(), u.id) == state.done.end();
  }));
  std::cerr << "kz train: " << units.size() << " units, " << (units.size() - todo) << " done before"
            << (state.checkpoint.empty() ? "" : "; resuming from " + state.checkpoint) << "\n";
  if (todo == 0) return 0;
  TrainerBackend backend(o.trainer);
  ctx.backend = &backend;
  TrainerError terr;
  HelloInfo hello;
  if (!backend.Start(&hello, &terr) || !LoadPolicy(backend, o.config, state.checkpoint, &terr))
    return Stop("trainer backend: " + terr.message + (terr.stderr_tail.empty() ? "" : "\n" + terr.stderr_tail));
  size_t index = 0;
  for (const Unit& u : units) {
    if (std::find(state.done.begin(), state.done.end(), u.id) != state.done.end()) continue;
    std::cerr << "kz train: [" << ++index << "/" << todo << "] " << u.id << "\n";
    UnitResult res;
    if (!AttemptUnit(ctx, u, dir, state.checkpoint, &res, &err)) return Stop(u.id + ": " + err);
    if (res.trained) {
      SaveResult saved;
      std::string ckpt = dir.CheckpointDir(u.id);
      if (!backend.Save({ckpt, true}, &saved, &terr)) return Stop(u.id + ": save: " + terr.message);
      state.checkpoint = ckpt;
    }
    state.done.push_back(u.id);
    res.metrics["checkpoint"] = state.checkpoint;
    if (!dir.AppendMetrics(res.metrics, &err) || !dir.SaveState(state, &err)) return Stop(err);
    if (res.trained) dir.PruneCheckpoints({state.checkpoint});
    std::cerr << "kz train: " << u.id << " done: " << res.metrics.dump() << "\n";
  }
  backend.Shutdown(&terr);
  return 0;
}

}  // namespace kz::train
