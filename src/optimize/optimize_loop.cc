// One iteration of the search (loop.h): plan, ask, judge, learn.
#include <algorithm>
#include <atomic>
#include <random>

#include "generate/extract.h"
#include "optimize/diagnostics.h"
#include "optimize/loop.h"
#include "util/hash.h"

namespace kz::optimize::detail {

void SearchLoop::Absorb(const json& r) {
  std::string code = store_.ReadCode(r.value("id", ""));
  if (r.value("outcome", "") == "verified") verified_.insert(NormalisedHash(code));
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
bool SearchLoop::Iterate(int it, std::string* err) {
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
      std::string query = SignatureOf(task_source_, c_.backend, parent->cell);
      Retrieval found = io_.retrieve(query, it);
      if (!found.records.empty()) exp = found.records.front();
      if (found.ranking != ranking_) Say("experience library: " + found.ranking);
      ranking_ = found.ranking;
      if (!store_.AppendRetrieval(it, query, exp ? ExperienceToJson(*exp) : json(nullptr), found.ranking, err))
        return false;
      retrievals_[it] = exp;
    }
    in.has_experience = exp.has_value();
  }
  Mutation m = ChooseMutation(in);
  std::string base = m == Mutation::kFix ? fix : m == Mutation::kSeed ? "" : parent->id;
  if (m == Mutation::kFix) state_.pending_fix.erase(island);  // one attempt per failure
  auto facts = [&](const std::string& id) { return Facts(id); };
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

bool SearchLoop::Judge(int island, Mutation m, const std::string& base, const generate::Result& res, json rec,
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
  if (verified_.count(NormalisedHash(code)))
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
  if (kept && !ProfileKept(store_.Path("candidates/" + id + ".py"), v.verdict, &rec, err)) return false;
  Learn(m, rec, v.verdict, ch);
  return finish("verified", rec["status"].get<std::string>() + (kept ? ", kept" : ""));
}

void SearchLoop::Learn(Mutation m, const json& rec, const json& verdict, const Change& ch) {
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

}  // namespace kz::optimize::detail
