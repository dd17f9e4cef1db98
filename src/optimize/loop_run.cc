// The run around the iterations (loop.h): the task check, the initial kernel, verification
// charged to the ledger, resume, persistence, and RunOptimize.
#include <algorithm>

#include "optimize/diagnostics.h"
#include "optimize/lineage.h"
#include "optimize/loop.h"
#include "util/hash.h"
#include "verify/ncu_report.h"

namespace kz::optimize {
namespace detail {

Amounts One(Resource r, double v) {
  Amounts a;
  a[r] = v;
  return a;
}

// The measured cost of a verification: its run child's wall time and its extension builds
// (cache misses only: a hit cost nothing).
Amounts VerifyCost(const json& v) {
  Amounts a;
  if (v.contains("child") && v["child"].is_object()) a[Resource::kGpuSeconds] = v["child"].value("wall_s", 0.0);
  const json* libs = nullptr;
  if (v.contains("stages") && v["stages"].contains("compile") && v["stages"]["compile"].is_object() &&
      v["stages"]["compile"].contains("libraries"))
    libs = &v["stages"]["compile"]["libraries"];
  if (libs && libs->is_array())
    for (const auto& l : *libs)
      if (l.value("cache", "") == "miss") a[Resource::kCompileSeconds] += l.value("seconds", 0.0);
  return a;
}

std::map<int, std::optional<Experience>> LoadRetrievals(const RunStore& store) {
  std::map<int, std::optional<Experience>> out;
  for (const auto& [it, line] : store.LoadRetrievals()) {
    const json e = line.value("experience", json(nullptr));
    out.emplace(it, e.is_object() ? std::optional<Experience>(ExperienceFromJson(e)) : std::nullopt);
  }
  return out;
}

std::string SearchLoop::CannotVerify() const {
  Amounts left = ledger_.remaining();
  if (std::min(c_.verify_timeout_s, left[Resource::kGpuSeconds]) < c_.min_verify_s)
    return "budget: gpu_s (" + std::to_string(left[Resource::kGpuSeconds]) + " s left)";
  if (c_.backend == "cuda" && std::min(c_.compile_timeout_s, left[Resource::kCompileSeconds]) < c_.min_verify_s)
    return "budget: compile_s (" + std::to_string(left[Resource::kCompileSeconds]) + " s left)";
  return "";
}

SearchLoop::Verified SearchLoop::VerifyCharged(const std::string& code_path, const std::string& code_xxh, bool self_check,
                                   json* spent, std::string* err) {
  Verified out;
  Amounts left = ledger_.remaining();
  double limit = std::min(c_.verify_timeout_s, left[Resource::kGpuSeconds]);
  double climit = c_.backend == "cuda" && !self_check ? std::min(c_.compile_timeout_s, left[Resource::kCompileSeconds]) : 0;
  out.stop = self_check && limit >= c_.min_verify_s ? "" : CannotVerify();
  if (!out.stop.empty()) return out;
  Amounts worst = One(Resource::kGpuSeconds, limit);
  worst[Resource::kCompileSeconds] = climit;
  std::string why;
  auto r = ledger_.Reserve(worst, &why);
  if (!r) {
    out.stop = "budget: " + why;
    return out;
  }
  auto stored = code_xxh.empty() ? verdicts_.end() : verdicts_.find(code_xxh);
  if (stored != verdicts_.end()) {
    out.verdict = stored->second;
    out.reused = true;
  } else {
    // The child's wall time overshoots its limit by the kill's latency: a margin keeps the
    // charge within the reservation.
    verify::Sample s{c_.task_path, code_path, c_.backend, std::nullopt, self_check ? "task" : "candidate", self_check};
    out.verdict = io_.verify(s, std::max(1.0, limit * 0.95 - 0.5), climit > 0 ? climit : c_.compile_timeout_s);
  }
  if (out.verdict.value("status", "") == "not_recorded") {
    ledger_.Cancel(*r);
    *err = out.verdict.value("reason", "replay: no verdict recorded");
    return out;
  }
  Amounts cost = VerifyCost(out.verdict);
  if (!ledger_.Settle(*r, cost, err)) return out;
  if (!code_xxh.empty() && !out.reused) {
    if (!store_.AppendVerdict(code_xxh, out.verdict, err)) return out;
    verdicts_.emplace(code_xxh, out.verdict);
  }
  for (size_t i = 0; i < kResources; ++i) (*spent)[ResourceName(Resource(i))] = (*spent).value(ResourceName(Resource(i)), 0.0) + cost.v[i];
  out.ok = true;
  return out;
}

bool SearchLoop::ProfileKept(const std::string& code_path, const json& verdict, json* rec, std::string* err) {
  if (!c_.ncu || !io_.profile) return true;
  double limit = std::min(c_.ncu_timeout_s, ledger_.remaining()[Resource::kGpuSeconds]);
  std::string why = limit < c_.min_verify_s ? "gpu_s (" + std::to_string(limit) + " s left)" : "";
  std::optional<BudgetLedger::Reservation> r;
  if (why.empty()) r = ledger_.Reserve(One(Resource::kGpuSeconds, limit), &why);
  if (!r) {
    (*rec)["profile"] = {{"available", false}, {"reason", "ncu: skipped (budget: " + why + ")"}};
    return true;
  }
  verify::Sample s{c_.task_path, code_path, c_.backend, std::nullopt, "candidate", false};
  json p = io_.profile(s, verdict, std::max(1.0, limit * 0.95 - 0.5));  // margin: as a verification's
  double seconds = p.is_object() && p.contains("seconds") && p["seconds"].is_number() ? p["seconds"].get<double>() : 0.0;
  if (!ledger_.Settle(*r, One(Resource::kGpuSeconds, std::max(0.0, seconds)), err)) return false;
  (*rec)["spent"]["gpu_s"] = (*rec)["spent"].value("gpu_s", 0.0) + std::max(0.0, seconds);
  (*rec)["profile"] = p;
  Say("  " + rec->value("id", std::string()) + ": " + verify::ProfileFeedback(p).substr(0, 160));
  return true;
}

std::string SearchLoop::Facts(const std::string& id) const {
  auto v = verdicts_.find(util::Hash128Hex(store_.ReadCode(id)));
  if (v == verdicts_.end()) return "(no verdict)";
  auto r = std::find_if(records_.begin(), records_.end(), [&](const json& x) { return x.value("id", "") == id; });
  if (r == records_.end() || !r->contains("profile")) return Diagnose(v->second);
  json with = v->second;
  with["profile"] = (*r)["profile"];
  return Diagnose(with);
}

OptimizeExit SearchLoop::Start(std::string* err) {
  // No state yet: only the task check's and the initial kernel's records can be here (a kill
  // before the first state.json); RunOptimize refused anything more.
  util::RemoveAll(store_.Path("candidates.jsonl"));
  json spent = json::object();
  Say("checking the task: its reference verified against itself");
  Verified t = VerifyCharged(c_.task_path, "", true, &spent, err);
  if (!t.ok) {
    if (!err->empty()) return OptimizeExit::kFailed;
    *err = "the task cannot be checked within the budget: " + t.stop;
    return OptimizeExit::kRefused;
  }
  if (!util::WriteFileAtomic(store_.Path("task_check.json"), PrettyJson(t.verdict), err)) return OptimizeExit::kFailed;
  json task_rec = {{"iteration", -2}, {"id", "task"}, {"island", -1}, {"mutation", "task_check"}, {"parent", ""},
                   {"lineage", ""}, {"outcome", "task_check"}, {"status", t.verdict.value("status", "")},
                   {"reason", t.verdict.value("reason", "")}, {"spent", spent}};
  if (t.verdict.value("status", "") != "correct") {
    *err = "the task cannot be verified (no request was sent): " + t.verdict.value("status", "?") + ": " +
           t.verdict.value("reason", "") + " (" + store_.Path("task_check.json") + ")";
    return OptimizeExit::kRefused;
  }
  if (!store_.AppendCandidate(task_rec, err)) return OptimizeExit::kFailed;  // its cost, in the totals
  records_.push_back(task_rec);
  if (!c_.initial.empty()) {
    std::string code;
    if (!util::ReadFile(c_.initial, &code, err) || !store_.WriteCode("init", code, err)) return OptimizeExit::kFailed;
    Say("verifying the initial kernel " + c_.initial);
    json rec = {{"iteration", -1}, {"id", "init"}, {"island", -1}, {"mutation", "initial"}, {"parent", ""},
                {"lineage", ""}, {"code_xxh", util::Hash128Hex(code)}, {"change", {{"signature", ""}, {"summary", ""}}}};
    json cost = json::object();
    Verified v = VerifyCharged(store_.Path("candidates/init.py"), rec["code_xxh"], false, &cost, err);
    if (!v.ok) {
      if (!err->empty()) return OptimizeExit::kFailed;
      *err = "the initial kernel cannot be verified within the budget: " + v.stop;
      return OptimizeExit::kRefused;
    }
    SpeedupFacts s = ReadSpeedup(v.verdict);
    rec.update({{"outcome", "verified"}, {"status", v.verdict.value("status", "")}, {"reason", v.verdict.value("reason", "")},
                {"speedup", s.median}, {"speedup_ci95", {s.lo, s.hi}}, {"spent", cost}});
    bool kept = false;
    if (rec["status"] == "correct")
      for (int i = 0; i < islands_.islands(); ++i)
        kept |= islands_.Offer(i, {"init", BehaviourCell(code, v.verdict), s.median, s.lo, s.hi});
    rec["kept"] = kept;
    if (kept && !ProfileKept(store_.Path("candidates/init.py"), v.verdict, &rec, err)) return OptimizeExit::kFailed;
    Say("initial kernel: " + rec["status"].get<std::string>() + (kept ? "" : " (not kept: the search starts from scratch)"));
    if (!store_.AppendCandidate(rec, err)) return OptimizeExit::kFailed;
    records_.push_back(rec);
    Absorb(rec);
  }
  return Persist(err) ? OptimizeExit::kDone : OptimizeExit::kFailed;
}

OptimizeExit SearchLoop::Resume(RunState s, std::string* err) {
  state_ = std::move(s);
  if (state_.next_iteration < 0 || state_.next_iteration > c_.iterations) {
    *err = store_.Path("state.json") + ": next_iteration " + std::to_string(state_.next_iteration) +
           " outside 0.." + std::to_string(c_.iterations) + ": a corrupted run directory";
    return OptimizeExit::kRefused;
  }
  if (!store_.LoadCandidates(state_.next_iteration, !c_.initial.empty(), &records_, err)) return OptimizeExit::kRefused;
  for (const auto& r : records_) Absorb(r);
  Say("resuming at iteration " + std::to_string(state_.next_iteration) + " (" + std::to_string(records_.size()) +
      " records)");
  return OptimizeExit::kDone;
}

bool SearchLoop::Persist(std::string* err) {
  state_.islands = islands_.ToJson();
  state_.budget = ledger_.ToJson();
  auto best = islands_.Best();
  if (best) {
    std::string code = store_.ReadCode(best->id);
    auto v = verdicts_.find(util::Hash128Hex(code));
    if (!util::WriteFileAtomic(store_.Path("best.py"), code, err)) return false;
    if (v != verdicts_.end() && !util::WriteFileAtomic(store_.Path("best_verdict.json"), PrettyJson(v->second), err))
      return false;
  }
  return WriteLineage(store_, records_, best ? best->id : "", err) && store_.WriteState(state_, err);
}

OptimizeExit SearchLoop::Run(std::string* err) {
  for (int it = state_.next_iteration; it < c_.iterations && state_.stop_reason.empty(); ++it) {
    size_t before = records_.size();
    if (!Iterate(it, err)) return OptimizeExit::kFailed;
    if (records_.size() == before) break;  // the budget refused the request: not an iteration
    state_.next_iteration = it + 1;
    if (c_.migrate_every > 0 && (it + 1) % c_.migrate_every == 0) islands_.Migrate();
    if (!Persist(err)) return OptimizeExit::kFailed;
  }
  if (state_.stop_reason.empty()) state_.stop_reason = "iterations";
  if (!Persist(err)) return OptimizeExit::kFailed;
  auto best = islands_.Best();
  Say("stopped (" + state_.stop_reason + ") after " + std::to_string(state_.next_iteration) + " iterations; best: " +
      (best ? best->id + " speedup " + std::to_string(best->speedup) : std::string("none verified correct")));
  return OptimizeExit::kDone;
}

}  // namespace detail

OptimizeExit RunOptimize(const OptimizeConfig& c, const RunStore& store, const OptimizeIo& io, std::string* err) {
  err->clear();
  std::optional<BudgetLedger> ledger;
  std::optional<Islands> islands;
  std::optional<RunState> state;
  if (util::PathExists(store.Path("state.json"))) {
    state = store.ReadState(err);
    if (!state) return OptimizeExit::kRefused;
    if (auto l = BudgetLedger::FromJson(state->budget, c.budget, err)) ledger.emplace(std::move(*l));
    if (ledger) islands = Islands::FromJson(state->islands, err);
    if (!ledger || !islands) {
      *err = store.Path("state.json") + ": " + *err;
      return OptimizeExit::kRefused;
    }
  } else {
    if (store.HasIterationWork()) {
      *err = store.dir() + " holds iteration records or a transcript but no state.json: a corrupted run directory "
             "(not restarted)";
      return OptimizeExit::kRefused;
    }
    if (auto l = BudgetLedger::Create(c.budget, err)) ledger.emplace(std::move(*l));
    if (!ledger) return OptimizeExit::kRefused;
    islands.emplace(c.islands, size_t(c.capacity), c.seed);
  }
  try {
    detail::SearchLoop loop(c, store, io, std::move(*ledger), std::move(*islands));
    OptimizeExit e = state ? loop.Resume(std::move(*state), err) : loop.Start(err);
    if (e != OptimizeExit::kDone) return e;
    return loop.Run(err);
  } catch (const nlohmann::json::exception& e) {  // a record of the wrong shape slipped through
    *err = store.dir() + ": a record the loop cannot read (" + e.what() + "): a corrupted run directory";
    return OptimizeExit::kRefused;
  }
}

}  // namespace kz::optimize
