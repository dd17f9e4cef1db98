#include "optimize/optimize_loop.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>

#include "generate/extract.h"
#include "optimize/dedup.h"
#include "optimize/diagnostics.h"
#include "optimize/islands.h"
#include "optimize/lineage.h"
#include "optimize/mutation.h"
#include "optimize/short_memory.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::optimize {
using json = nlohmann::json;

namespace {

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

std::string ExperienceText(const Experience& e) {
  char effect[32];
  std::snprintf(effect, sizeof effect, "%.2f", e.effect);
  return "On " + e.gpu + ", from a kernel of this kind (" + e.structure + "), the change that added {" + e.change +
         "} made it " + effect + "x as fast (applied " + std::to_string(e.uses) + " times since, " +
         std::to_string(e.wins) + " kept).";
}

json ExperienceToJson(const Experience& e) {
  return {{"id", e.id}, {"signature", e.signature}, {"structure", e.structure}, {"change", e.change},
          {"effect", e.effect}, {"gpu", e.gpu}, {"uses", e.uses}, {"wins", e.wins}};
}

class Loop {
 public:
  Loop(const OptimizeConfig& c, const RunStore& store, const OptimizeIo& io, BudgetLedger ledger, Islands islands)
      : c_(c), store_(store), io_(io), ledger_(std::move(ledger)), islands_(std::move(islands)), seen_(c.near_duplicate) {
    std::string err;
    util::ReadFile(c.task_path, &task_source_, &err);  // unreadable: the task check says so
  }

  OptimizeExit Start(std::string* err);   // task check and initial kernel (a fresh run)
  OptimizeExit Resume(RunState s, std::string* err);
  OptimizeExit Run(std::string* err);

 private:
  struct Verified {
    json verdict;
    bool ok = false;          // a verdict came back
    std::string stop;         // the budget refused it: why
  };
  Verified VerifyCharged(const std::string& code_path, bool self_check, json* spent, std::string* err);
  bool Iterate(int it, std::string* err);  // false: a fatal error (*err)
  bool Judge(int island, Mutation m, const std::string& base, const generate::Result& res, nlohmann::json rec,
             std::string* err);
  void Absorb(const json& record);         // a record's effect on memory and dedup
  bool Persist(std::string* err);
  // The experience library's side of a verified child: a use of the applied record, and a
  // new record when the child's interval cleared its parent's.
  void Learn(Mutation m, const json& rec, const json& verdict, const Change& ch);
  void Say(const std::string& line) const {
    if (io_.progress) io_.progress(line);
  }

  const OptimizeConfig& c_;
  const RunStore& store_;
  const OptimizeIo& io_;
  BudgetLedger ledger_;
  Islands islands_;
  SeenSources seen_;
  ShortTermMemory memory_;
  RunState state_;
  std::vector<json> records_;
  std::string task_source_;
};

Loop::Verified Loop::VerifyCharged(const std::string& code_path, bool self_check, json* spent, std::string* err) {
  Verified out;
  Amounts left = ledger_.remaining();
  double limit = std::min(c_.verify_timeout_s, left[Resource::kGpuSeconds]);
  double climit = c_.backend == "cuda" && !self_check ? std::min(c_.compile_timeout_s, left[Resource::kCompileSeconds]) : 0;
  if (limit < c_.min_verify_s) out.stop = "budget: gpu_s (" + std::to_string(left[Resource::kGpuSeconds]) + " s left)";
  if (c_.backend == "cuda" && !self_check && climit < c_.min_verify_s)
    out.stop = "budget: compile_s (" + std::to_string(left[Resource::kCompileSeconds]) + " s left)";
  if (!out.stop.empty()) return out;
  Amounts worst = One(Resource::kGpuSeconds, limit);
  worst[Resource::kCompileSeconds] = climit;
  std::string why;
  auto r = ledger_.Reserve(worst, &why);
  if (!r) {
    out.stop = "budget: " + why;
    return out;
  }
  verify::Sample s{c_.task_path, code_path, c_.backend, std::nullopt, self_check ? "task" : "candidate", self_check};
  out.verdict = io_.verify(s, limit, climit > 0 ? climit : c_.compile_timeout_s);
  Amounts cost = VerifyCost(out.verdict);
  if (!ledger_.Settle(*r, cost, err)) return out;
  for (size_t i = 0; i < kResources; ++i) (*spent)[ResourceName(Resource(i))] = (*spent).value(ResourceName(Resource(i)), 0.0) + cost.v[i];
  out.ok = true;
  return out;
}

void Loop::Absorb(const json& r) {
  std::string code = store_.ReadCode(r.value("id", ""));
  if (r.value("outcome", "") == "verified") seen_.Add(code);
  // A verified child that was refused, or correct but not kept (not faster), failed its change.
  bool failed = r.value("outcome", "") == "verified" && (r.value("status", "") != "correct" || !r.value("kept", false));
  if (failed && !r.value("lineage", "").empty()) {
    Change ch{r["change"].value("signature", ""), r["change"].value("summary", "")};
    memory_.RecordFailure(r["lineage"], ch, r.value("status", "") + (r.value("status", "") == "correct" ? " but not faster" : ""));
  }
}

// One iteration: plan (island, parents, mutation, prompt), ask (one request, reserved in
// tokens and requests), judge (extract, deduplicate, short-term memory, verify, offer).
bool Loop::Iterate(int it, std::string* err) {
  int island = it % islands_.islands();
  std::mt19937_64 rng(c_.seed * 0x9E3779B97F4A7C15ull + uint64_t(it) + 1);
  double u = std::uniform_real_distribution<double>(0, 1)(rng);
  std::optional<Elite> parent = islands_.PickParent(island), other;
  if (auto b = islands_.Best(); b && parent && b->id != parent->id) other = b;
  std::string fix = state_.pending_fix.count(island) ? state_.pending_fix[island] : "";
  MutationInputs in{parent.has_value(), !fix.empty(), other.has_value(), u, false};
  std::optional<Experience> exp;
  if (io_.retrieve && WouldApply(in)) {  // asked only when the rule would use a record
    auto found = io_.retrieve(SignatureOf(task_source_, c_.backend, parent->cell), it);
    if (!found.empty()) exp = found.front();
    in.has_experience = exp.has_value();
  }
  Mutation m = ChooseMutation(in);
  std::string base = m == Mutation::kFix ? fix : m == Mutation::kSeed ? "" : parent->id;
  if (m == Mutation::kFix) state_.pending_fix.erase(island);  // one attempt per failure
  auto verdicts = store_.LoadVerdicts();
  auto facts = [&](const std::string& id) {
    auto v = verdicts.find(util::Hash128Hex(store_.ReadCode(id)));
    return v == verdicts.end() ? std::string("(no verdict)") : Diagnose(v->second);
  };
  PromptParts parts{task_source_, c_.backend, base.empty() ? "" : store_.ReadCode(base), base.empty() ? "" : facts(base),
                    m == Mutation::kCrossover ? store_.ReadCode(other->id) : "", memory_.Failures(base, 6),
                    exp ? ExperienceText(*exp) : ""};
  std::string prompt;
  if (!RenderOptimizePrompt(io_.prompt_template, m, parts, &prompt, err)) return false;

  std::string id = "c" + std::to_string(it);
  json rec = {{"iteration", it}, {"id", id}, {"island", island}, {"mutation", MutationName(m)}, {"parent", base},
              {"lineage", base}, {"other", m == Mutation::kCrossover ? other->id : ""}};
  if (m == Mutation::kApply) rec["experience"] = ExperienceToJson(*exp);
  generate::Request req;
  req.id = "it" + std::to_string(it);
  req.messages = {{"user", prompt}};
  req.sampling.temperature = c_.temperature;
  req.sampling.max_tokens = c_.max_tokens;
  req.sampling.seed = (long long)(c_.seed + uint64_t(it));
  req.deadline_s = c_.request_deadline_s;
  Amounts worst = One(Resource::kTokens, double(prompt.size() + 64 + size_t(c_.max_tokens)));
  worst[Resource::kRequests] = 1;
  std::string why;
  auto r = ledger_.Reserve(worst, &why);
  if (!r) {
    state_.stop_reason = "budget: " + why;
    return true;
  }
  std::atomic<bool> cancel{false};
  generate::Result res = io_.endpoint->Complete(req, cancel);
  const generate::Reply* reply = res.reply();
  if (!reply && res.error()->kind == generate::ErrorKind::kNotRecorded) {
    ledger_.Cancel(*r);
    *err = "replay: " + res.error()->message;
    return false;
  }
  Amounts used = One(Resource::kRequests, 1);
  if (reply) used[Resource::kTokens] = double(reply->usage.prompt_tokens + reply->usage.completion_tokens);
  if (!ledger_.Settle(*r, used, err)) return false;
  json spent = {{"tokens", used[Resource::kTokens]}, {"requests", 1.0}, {"gpu_s", 0.0}, {"compile_s", 0.0}};
  rec["spent"] = spent;
  Say("iteration " + std::to_string(it) + " (island " + std::to_string(island) + ", " + MutationName(m) +
      (base.empty() ? "" : " of " + base) + ")");
  return Judge(island, m, base, res, std::move(rec), err);
}

bool Loop::Judge(int island, Mutation m, const std::string& base, const generate::Result& res, json rec,
                 std::string* err) {
  auto finish = [&](const std::string& outcome, const std::string& reason) {
    rec["outcome"] = outcome;
    if (!rec.contains("reason")) rec["reason"] = reason;
    Say("  " + rec["id"].get<std::string>() + ": " + outcome + (reason.empty() ? "" : ": " + reason.substr(0, 160)));
    if (!store_.AppendCandidate(rec, err)) return false;
    records_.push_back(rec);
    Absorb(rec);
    return true;
  };
  if (!res.ok()) return finish("endpoint_error", std::string(generate::ErrorKindName(res.error()->kind)) + ": " + res.error()->message);
  const auto& choice = res.reply()->choices.front();
  rec["finish_reason"] = choice.finish_reason;
  auto ex = generate::ExtractCode(choice.text, choice.finish_reason, false);
  if (ex.reason) return finish("no_code", generate::ReasonName(*ex.reason));
  std::string code = ex.code, id = rec["id"];
  if (!store_.WriteCode(id, code, err)) return false;
  rec["code_xxh"] = util::Hash128Hex(code);
  Change ch = base.empty() ? Change{} : ChangeOf(store_.ReadCode(base), code);
  rec["change"] = {{"signature", ch.signature}, {"summary", ch.summary}};
  double closest = 0;
  auto d = seen_.Check(code, &closest);
  if (d != SeenSources::Verdict::kNew)
    return finish(d == SeenSources::Verdict::kDuplicate ? "duplicate" : "near_duplicate",
                  "similarity " + std::to_string(closest) + " to a verified candidate: not verified again");
  if (!base.empty() && memory_.Failed(base, ch))
    return finish("repeat_failed", "the same change {" + ch.summary + "} already failed from " + base);
  json spent = rec["spent"];
  Verified v = VerifyCharged(store_.Path("candidates/" + id + ".py"), false, &spent, err);
  if (!v.ok) {
    if (!err->empty()) return false;
    state_.stop_reason = v.stop;  // the request was paid: its record stays, the run stops
    return finish("not_verified", v.stop);
  }
  rec["spent"] = spent;
  if (!store_.AppendVerdict(rec["code_xxh"], v.verdict, err)) return false;
  SpeedupFacts s = ReadSpeedup(v.verdict);
  rec.update({{"status", v.verdict.value("status", "")}, {"reason", v.verdict.value("reason", "")},
              {"speedup", s.median}, {"speedup_ci95", {s.lo, s.hi}}});
  bool correct = rec["status"] == "correct", kept = false;
  if (correct) {
    auto cell = BehaviourCell(code, v.verdict);
    rec["cell"] = cell;
    kept = islands_.Offer(island, {id, cell, s.median, s.lo, s.hi});
    auto p = std::find_if(records_.begin(), records_.end(), [&](const json& r) { return r.value("id", "") == base; });
    rec["clears_parent"] = p != records_.end() && p->value("status", "") == "correct" && s.lo > (*p)["speedup_ci95"][1].get<double>();
  } else if (m != Mutation::kFix) {
    state_.pending_fix[island] = id;
  }
  rec["kept"] = kept;
  Learn(m, rec, v.verdict, ch);
  return finish("verified", rec["status"].get<std::string>() + (kept ? ", kept" : ""));
}

void Loop::Learn(Mutation m, const json& rec, const json& verdict, const Change& ch) {
  std::string key = store_.dir() + "/" + rec["id"].get<std::string>();
  if (m == Mutation::kApply && io_.use) io_.use(rec["experience"]["id"].get<int64_t>(), rec["kept"].get<bool>(), key);
  if (!io_.learn || !rec.value("clears_parent", false)) return;
  auto p = std::find_if(records_.begin(), records_.end(), [&](const json& r) { return r["id"] == rec["parent"]; });
  if (p == records_.end() || !p->contains("cell") || p->value("speedup", 0.0) <= 0) return;
  auto cell = (*p)["cell"].get<std::vector<int>>();
  Experience e;
  e.signature = SignatureOf(task_source_, c_.backend, cell);
  e.structure = c_.backend + ", " + std::to_string(KernelsDefined(store_.ReadCode(rec["parent"]))) + " kernel(s), " +
                std::to_string(cell.size() > 1 ? cell[1] : 0) + " launch(es) per forward";
  e.change = ch.summary;
  e.effect = rec.value("speedup", 0.0) / p->value("speedup", 1.0);
  const json& d = verdict.contains("device") ? verdict["device"] : json::object();
  e.gpu = d.value("name", d.value("kind", std::string("?")));
  io_.learn(e, key);
}

OptimizeExit Loop::Start(std::string* err) {
  util::RemoveAll(store_.Path("candidates.jsonl"));  // no state yet: nothing in it was finished
  json spent = json::object();
  Say("checking the task: its reference verified against itself");
  Verified t = VerifyCharged(c_.task_path, true, &spent, err);
  if (!t.ok) {
    if (err->empty()) *err = "the task cannot be checked within the budget: " + t.stop;
    return OptimizeExit::kRefused;
  }
  if (!util::WriteFileAtomic(store_.Path("task_check.json"), t.verdict.dump(1) + "\n", err)) return OptimizeExit::kFailed;
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
    Verified v = VerifyCharged(store_.Path("candidates/init.py"), false, &cost, err);
    if (!v.ok) {
      if (err->empty()) *err = "the initial kernel cannot be verified within the budget: " + v.stop;
      return OptimizeExit::kRefused;
    }
    if (!store_.AppendVerdict(rec["code_xxh"], v.verdict, err)) return OptimizeExit::kFailed;
    SpeedupFacts s = ReadSpeedup(v.verdict);
    rec.update({{"outcome", "verified"}, {"status", v.verdict.value("status", "")}, {"reason", v.verdict.value("reason", "")},
                {"speedup", s.median}, {"speedup_ci95", {s.lo, s.hi}}, {"spent", cost}});
    bool kept = false;
    if (rec["status"] == "correct")
      for (int i = 0; i < islands_.islands(); ++i)
        kept |= islands_.Offer(i, {"init", BehaviourCell(code, v.verdict), s.median, s.lo, s.hi});
    rec["kept"] = kept;
    Say("initial kernel: " + rec["status"].get<std::string>() + (kept ? "" : " (not kept: the search starts from scratch)"));
    if (!store_.AppendCandidate(rec, err)) return OptimizeExit::kFailed;
    records_.push_back(rec);
    Absorb(rec);
  }
  return Persist(err) ? OptimizeExit::kDone : OptimizeExit::kFailed;
}

OptimizeExit Loop::Resume(RunState s, std::string* err) {
  state_ = std::move(s);
  if (!store_.LoadCandidates(state_.next_iteration, &records_, err)) return OptimizeExit::kRefused;
  for (const auto& r : records_) Absorb(r);
  Say("resuming at iteration " + std::to_string(state_.next_iteration) + " (" + std::to_string(records_.size()) +
      " records)");
  return OptimizeExit::kDone;
}

bool Loop::Persist(std::string* err) {
  state_.islands = islands_.ToJson();
  state_.budget = ledger_.ToJson();
  auto best = islands_.Best();
  if (best) {
    std::string code = store_.ReadCode(best->id);
    auto verdicts = store_.LoadVerdicts();
    auto v = verdicts.find(util::Hash128Hex(code));
    if (!util::WriteFileAtomic(store_.Path("best.py"), code, err)) return false;
    if (v != verdicts.end() && !util::WriteFileAtomic(store_.Path("best_verdict.json"), v->second.dump(1) + "\n", err))
      return false;
  }
  return WriteLineage(store_, records_, best ? best->id : "", err) && store_.WriteState(state_, err);
}

OptimizeExit Loop::Run(std::string* err) {
  for (int it = state_.next_iteration; it < c_.iterations && state_.stop_reason.empty(); ++it) {
    if (!Iterate(it, err)) return OptimizeExit::kFailed;
    if (!state_.stop_reason.empty()) break;  // the iteration could not start: not counted
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

}  // namespace

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
    if (auto l = BudgetLedger::Create(c.budget, err)) ledger.emplace(std::move(*l));
    if (!ledger) return OptimizeExit::kRefused;
    islands.emplace(c.islands, size_t(c.capacity), c.seed);
  }
  Loop loop(c, store, io, std::move(*ledger), std::move(*islands));
  OptimizeExit e = state ? loop.Resume(std::move(*state), err) : loop.Start(err);
  if (e != OptimizeExit::kDone) return e;
  return loop.Run(err);
}

}  // namespace kz::optimize
