// The search loop of `kz optimize` behind RunOptimize (internal to src/optimize): its state
// and the two halves of its work — one iteration (optimize_loop.cc: plan, ask, judge, learn)
// and the run around the iterations (loop_run.cc: the task check, the initial kernel, charged
// verification, resume, persistence).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/dedup.h"
#include "optimize/experience.h"
#include "optimize/islands.h"
#include "optimize/mutation.h"
#include "optimize/optimize_loop.h"
#include "optimize/short_memory.h"
#include "util/fs.h"

namespace kz::optimize::detail {
using json = nlohmann::json;

Amounts One(Resource r, double v);
// The measured cost of a verification: its run child's wall time and its extension builds
// (cache misses only: a hit cost nothing).
Amounts VerifyCost(const json& verdict);
// retrievals.jsonl as Experiences, by iteration (nullopt: the library had nothing).
std::map<int, std::optional<Experience>> LoadRetrievals(const RunStore& store);

class SearchLoop {
 public:
  SearchLoop(const OptimizeConfig& c, const RunStore& store, const OptimizeIo& io, BudgetLedger ledger, Islands islands)
      : c_(c), store_(store), io_(io), ledger_(std::move(ledger)), islands_(std::move(islands)),
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
  // With --ncu: a kept candidate's profile into rec["profile"], its seconds charged to the
  // ledger and rec["spent"]; a budget that cannot cover it is a reason, not a stop.
  bool ProfileKept(const std::string& code_path, const json& verdict, json* rec, std::string* err);
  // The verifier's facts about a candidate for a prompt: its verdict with its profile.
  std::string Facts(const std::string& id) const;
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
  std::set<std::string> verified_;  // normalised hashes of every verified candidate
  ShortTermMemory memory_;
  RunState state_;
  std::vector<json> records_;
  std::string task_source_;
  std::map<std::string, json> verdicts_;            // verdicts.jsonl, by code hash
  std::map<int, std::optional<Experience>> retrievals_;  // retrievals.jsonl, by iteration
  SeenSources seen_correct_;                        // near duplicates: of correct candidates only
  std::string ranking_;                             // the library's last ranking (said when it changes)
};

}  // namespace kz::optimize::detail
