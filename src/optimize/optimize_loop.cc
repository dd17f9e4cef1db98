#include "optimize/optimize_loop.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include "bench/verdict_log.h"
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

// Verdicts carry raw output bytes: invalid UTF-8 is replaced, never thrown.
std::string Dump(const json& j) { return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n"; }

// retrievals.jsonl: the library's answer for an iteration ({"iteration", "experience"|null}),
// written before the request so a redone iteration asks the same prompt.
std::map<int, std::optional<Experience>> LoadRetrievals(const RunStore& store) {
  std::map<int, std::optional<Experience>> out;
  std::ifstream in(store.Path("retrievals.jsonl"));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line, nullptr, false);
    if (!r.is_object() || !r.contains("iteration") || !r["iteration"].is_number_integer()) continue;
    std::optional<Experience> e;
    if (r.contains("experience") && r["experience"].is_object()) {
      const json& x = r["experience"];
      e = Experience{x.value("id", int64_t(0)), x.value("signature", ""), x.value("structure", ""), x.value("change", ""),
                     x.value("effect", 1.0), x.value("gpu", ""), x.value("uses", 0), x.value("wins", 0)};
    }
    out.emplace(r["iteration"].get<int>(), e);
  }
  return out;
}

json ExperienceToJson(const Experience& e);

bool AppendRetrieval(const RunStore& store, int it, const std::optional<Experience>& e, std::string* err) {
  bench::VerdictLog log;
  return log.Open(store.Path("retrievals.jsonl"), err) &&
         log.Append({{"iteration", it}, {"experience", e ? ExperienceToJson(*e) : json(nullptr)}}, err);
}

std::string ExperienceText(const Experience& e) {
  char effect[32];
  std::snprintf(effect, sizeof effect, "%.2f", e.effect);
  return "On " + e.gpu + ", from a kernel of this kind (" + e.structure + "), the change that added {" + e.change +
         "} made it " + effect + "x as fast.";
}

json ExperienceToJson(const Experience& e) {
  return {{"id", e.id}, {"signature", e.signature}, {"structure", e.structure}, {"change", e.change},
          {"effect", e.effect}, {"gpu", e.gpu}, {"uses", e.uses}, {"wins", e.wins}};
}

class Loop {
 public:
  Loop(const OptimizeConfig& c, const RunStore& store, const OptimizeIo& io, BudgetLedger ledger, Islands islands)
      : c_(c), store_(store), io_(io), ledger_(std::move(ledger)), islands_(std::move(islands)), seen_(1.01),
        verdicts_(store.LoadVerdicts()), retrievals_(LoadRetrievals(store)), seen_correct_(c.near_duplicate) {
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
    bool reused = false;      // the verdict of this code was already in verdicts.jsonl
    std::string stop;         // the budget refused it: why
  };
  // `code_xxh` ("" for the task check): a verdict already stored for it is reused (an
  // iteration redone after a kill is charged again but not run again).
  Verified VerifyCharged(const std::string& code_path, const std::string& code_xxh, bool self_check, json* spent,
                         std::string* err);
  std::string CannotVerify() const;  // "" when the budget still covers a verification
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
  std::map<std::string, json> verdicts_;            // verdicts.jsonl, by code hash
  std::map<int, std::optional<Experience>> retrievals_;  // retrievals.jsonl, by iteration
  SeenSources seen_correct_;                        // near duplicates: of correct candidates only
};

std::string Loop::CannotVerify() const {
  Amounts left = ledger_.remaining();
  if (std::min(c_.verify_timeout_s, left[Resource::kGpuSeconds]) < c_.min_verify_s)
    return "budget: gpu_s (" + std::to_string(left[Resource::kGpuSeconds]) + " s left)";
  if (c_.backend == "cuda" && std::min(c_.compile_timeout_s, left[Resource::kCompileSeconds]) < c_.min_verify_s)
    return "budget: compile_s (" + std::to_string(left[Resource::kCompileSeconds]) + " s left)";
  return "";
}

Loop::Verified Loop::VerifyCharged(const std::string& code_path, const std::string& code_xxh, bool self_check,
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

void Loop::Absorb(const json& r) {
  std::string code = store_.ReadCode(r.value("id", ""));
  if (r.value("outcome", "") == "verified") seen_.Add(code);
  if (r.value("outcome", "") == "verified" && r.value("status", "") == "correct") seen_correct_.Add(code);
  // A verified child that was refused, or correct but not kept (not faster), failed its change.
  bool failed = r.value("outcome", "") == "verified" && (r.value("status", "") != "correct" || !r.value("kept", false));
  if (failed && !r.value("lineage", "").empty()) {
    const json& c = r.contains("change") ? r["change"] : json::object();
    Change ch{c.value("signature", ""), c.value("summary", "")};
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
    auto known = retrievals_.find(it);
    if (known != retrievals_.end()) {
      exp = known->second;  // a redone iteration: the same answer, so the same prompt
    } else {
      auto found = io_.retrieve(SignatureOf(task_source_, c_.backend, parent->cell), it);
      if (!found.empty()) exp = found.front();
      if (!AppendRetrieval(store_, it, exp, err)) return false;
      retrievals_[it] = exp;
    }
    in.has_experience = exp.has_value();
  }
  Mutation m = ChooseMutation(in);
  std::string base = m == Mutation::kFix ? fix : m == Mutation::kSeed ? "" : parent->id;
  if (m == Mutation::kFix) state_.pending_fix.erase(island);  // one attempt per failure
  auto facts = [&](const std::string& id) {
    auto v = verdicts_.find(util::Hash128Hex(store_.ReadCode(id)));
    return v == verdicts_.end() ? std::string("(no verdict)") : Diagnose(v->second);
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
  if (std::string why = CannotVerify(); !why.empty()) {  // a reply could not be verified: not asked
    state_.stop_reason = why;
    return true;
  }
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
  if (seen_.Check(code) == SeenSources::Verdict::kDuplicate)
    return finish("duplicate", "the same code (normalised) was verified before: not verified again");
  if (seen_correct_.Check(code, &closest) != SeenSources::Verdict::kNew)
    return finish("near_duplicate", "similarity " + std::to_string(closest) + " to a correct candidate: not verified");
  if (!base.empty() && memory_.Failed(base, ch))
    return finish("repeat_failed", "the same change {" + ch.summary + "} already failed from " + base);
  json spent = rec["spent"];
  Verified v = VerifyCharged(store_.Path("candidates/" + id + ".py"), rec["code_xxh"], false, &spent, err);
  if (!v.ok) {
    if (!err->empty()) return false;
    state_.stop_reason = v.stop;  // the request was paid: its record stays, the run stops
    return finish("not_verified", v.stop);
  }
  rec["spent"] = spent;
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
  if (!util::WriteFileAtomic(store_.Path("task_check.json"), Dump(t.verdict), err)) return OptimizeExit::kFailed;
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
    Say("initial kernel: " + rec["status"].get<std::string>() + (kept ? "" : " (not kept: the search starts from scratch)"));
    if (!store_.AppendCandidate(rec, err)) return OptimizeExit::kFailed;
    records_.push_back(rec);
    Absorb(rec);
  }
  return Persist(err) ? OptimizeExit::kDone : OptimizeExit::kFailed;
}

OptimizeExit Loop::Resume(RunState s, std::string* err) {
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

bool Loop::Persist(std::string* err) {
  state_.islands = islands_.ToJson();
  state_.budget = ledger_.ToJson();
  auto best = islands_.Best();
  if (best) {
    std::string code = store_.ReadCode(best->id);
    auto v = verdicts_.find(util::Hash128Hex(code));
    if (!util::WriteFileAtomic(store_.Path("best.py"), code, err)) return false;
    if (v != verdicts_.end() && !util::WriteFileAtomic(store_.Path("best_verdict.json"), Dump(v->second), err))
      return false;
  }
  return WriteLineage(store_, records_, best ? best->id : "", err) && store_.WriteState(state_, err);
}

OptimizeExit Loop::Run(std::string* err) {
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
    Loop loop(c, store, io, std::move(*ledger), std::move(*islands));
    OptimizeExit e = state ? loop.Resume(std::move(*state), err) : loop.Start(err);
    if (e != OptimizeExit::kDone) return e;
    return loop.Run(err);
  } catch (const nlohmann::json::exception& e) {  // a record of the wrong shape slipped through
    *err = store.dir() + ": a record the loop cannot read (" + e.what() + "): a corrupted run directory";
    return OptimizeExit::kRefused;
  }
}

}  // namespace kz::optimize
