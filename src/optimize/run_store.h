// The files of a `kz optimize` run directory (docs/optimize.md, "Run directory"):
//   run.json          the run's configuration (kz.optimize.run/1), written once
//   state.json        what the next iteration needs (kz.optimize.state/1): the next iteration,
//                     the islands, the budget spent, the failed children waiting for a fix,
//                     why the run stopped; rewritten atomically after each iteration
//   candidates.jsonl  one record per iteration (kz.optimize.candidate/1), appended and fsync'd
//                     before state.json moves on; records of iterations past state.json's are
//                     a kill's leftovers and are dropped on resume (the iteration is redone)
//   verdicts.jsonl    every full verdict, keyed by the code's XXH3-128 (replay reads them)
//   candidates/<id>.py  every candidate's code; best.py, best_verdict.json the best one
//   transcript.jsonl  every request and reply (kz.transcript/1): a resumed run answers a
//                     redone iteration from it, `--replay` answers every iteration from it
//   lineage.json, lineage.svg, curve.tsv  outputs, rewritten after each iteration
// No wall-clock times in these files: a replay writes them byte for byte the same.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::optimize {

// Indented JSON with a trailing newline; invalid UTF-8 (verdicts carry raw output bytes) is
// replaced, never thrown.
std::string PrettyJson(const nlohmann::json& j);

struct RunState {
  int next_iteration = 0;
  nlohmann::json islands;   // Islands::ToJson
  nlohmann::json budget;    // BudgetLedger::ToJson
  std::map<int, std::string> pending_fix;  // island -> id of a failed child to fix next
  std::string stop_reason;  // "" while the run can go on
  nlohmann::json ToJson() const;
  static std::optional<RunState> FromJson(const nlohmann::json& j, std::string* err);
};

class RunStore {
 public:
  explicit RunStore(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // run.json and state.json; nullopt (and *err) when missing or corrupted: never a silent
  // restart. `exists` false when the directory holds no run.
  bool HasRun() const;
  bool ReadRun(nlohmann::json* run, std::string* err) const;
  bool WriteRun(const nlohmann::json& run, std::string* err) const;
  std::optional<RunState> ReadState(std::string* err) const;
  bool WriteState(const RunState& s, std::string* err) const;

  // The candidate records: the task check's (iteration -2), the initial kernel's (-1) when
  // `with_initial`, then exactly one per iteration 0 .. next_iteration-1, in order. A last line
  // without its newline (a write torn by a kill) and records at or past next_iteration (a
  // kill's leftovers: the iteration is redone) are dropped and the file rewritten without
  // them. Anything else — a missing or extra record, a line that is not a record, a field of
  // the wrong type — is a corrupted run directory: false, *err naming the line.
  bool LoadCandidates(int next_iteration, bool with_initial, std::vector<nlohmann::json>* out, std::string* err) const;
  // True when candidates.jsonl holds a record of an iteration >= 0 or the transcript is not
  // empty: work a run without state.json cannot have done (a corrupted run directory).
  bool HasIterationWork() const;
  bool AppendCandidate(const nlohmann::json& record, std::string* err) const;
  // Full verdicts by code hash (the first one wins: a redone iteration reuses it).
  std::map<std::string, nlohmann::json> LoadVerdicts() const;
  bool AppendVerdict(const std::string& code_xxh, const nlohmann::json& verdict, std::string* err) const;
  // retrievals.jsonl: the experience library's answer per iteration, written before the
  // request so a redone iteration sends the same prompt: lines {"iteration", "query",
  // "experience" (a record or null), "ranking" (how it was ranked, retrieval.h)}, by iteration.
  std::map<int, nlohmann::json> LoadRetrievals() const;
  bool AppendRetrieval(int iteration, const std::string& query, const nlohmann::json& experience,
                       const std::string& ranking, std::string* err) const;
  bool WriteCode(const std::string& id, const std::string& code, std::string* err) const;
  std::string ReadCode(const std::string& id) const;  // "" when absent

 private:
  std::string dir_;
};

}  // namespace kz::optimize
