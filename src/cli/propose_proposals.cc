// `kz propose validate --proposals RUN`: validates a `kz generate --proposer` run's modules
// (docs/curriculum.md, "The Proposer loop"), resumably: RUN/validation.jsonl (fsync'd, one
// record per (set, sample, code)) is read first and nothing in it is validated again.
#include <filesystem>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/propose_validate.h"
#include "curriculum/proposals.h"
#include "curriculum/validator.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;

constexpr size_t kChunk = 16;  // modules per validate child: a kill loses at most one chunk

json Base(const cur::ProposalRecord& r) {
  return {{"format", "kz.validation/1"}, {"task", r.set},  {"set", r.set},           {"sample", r.sample},
          {"code_xxh", r.code_xxh},      {"apis", r.apis}, {"module", r.module_path}};
}

json Refused(const cur::ProposalRecord& r, const std::string& stage, const std::string& rule, const std::string& d) {
  json j = Base(r);
  j.update({{"valid", false}, {"stage", stage}, {"rule", rule}, {"reason", stage + "." + rule + ": " + d}});
  return j;
}

// Writes a valid module into RUN/valid/level1/<n>_<set>_sample_<S>.py (KernelBench layout).
bool ExportValid(const std::string& run, size_t n, const cur::ProposalRecord& r, std::string* err) {
  std::string dir = run + "/valid/level1";
  return util::MakeDirs(dir, err) &&
         util::WriteFileAtomic(
             dir + "/" + std::to_string(n) + "_" + r.set + "_sample_" + std::to_string(r.sample) + ".py", r.code, err);
}

struct Todo {
  const cur::ProposalRecord* record;
  size_t index;  // position in proposals.jsonl: names the exported file
};

bool ValidateChunk(const std::vector<Todo>& chunk, const cur::Catalog& c, const ValidateArgs& a, cur::Scanner& scanner,
                   cur::RunFactsSource& runner, cur::KnownHashes* known, scoring::VerdictLog* log,
                   std::map<std::string, int>* tally, std::string* err) {
  std::vector<cur::Proposal> proposals;
  for (const auto& t : chunk) proposals.push_back({t.record->module_path, {}});
  for (size_t i = 0; i < chunk.size(); ++i) cur::ParseApiSet(c, chunk[i].record->apis, &proposals[i].apis, err);
  std::vector<cur::Outcome> outcomes;
  if (!cur::ValidateAll(proposals, c, scanner, runner, a.options, known, &outcomes, err) ||
      !AddToPool(a, c, outcomes, err))
    return false;
  for (size_t i = 0; i < chunk.size(); ++i) {
    const auto& o = outcomes[i];
    json j = Base(*chunk[i].record);
    j.update(cur::OutcomeJson(o, c));
    j["apis"] = chunk[i].record->apis;
    if (!o.refusal && !ExportValid(a.proposals, chunk[i].index + 1, *chunk[i].record, err)) return false;
    ++(*tally)[o.refusal ? o.refusal->stage + "." + o.refusal->rule : "valid"];
    if (!log->Append(j, err)) return false;
  }
  return true;
}
}  // namespace

int RunValidateProposals(const ValidateArgs& a, const cur::Catalog& c, cur::KnownHashes known,
                         const std::string& argv0) {
  std::vector<cur::ProposalRecord> records;
  std::vector<std::string> bad;
  std::string err, log_path = a.proposals + "/validation.jsonl";
  if (!cur::ReadProposals(a.proposals, &records, &bad, &err)) return Bad(err);
  for (const auto& b : bad) std::cerr << "kz propose validate: " << b << "; skipped\n";
  scoring::LoadedLog done = scoring::LoadVerdictLog(log_path);
  scoring::VerdictLog log;
  if (!log.Open(log_path, &err)) return Bad(err);
  std::map<std::string, int> tally;
  std::vector<Todo> todo;
  size_t already = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (done.records.count(scoring::ResumeKey(r.set, r.sample, r.code_xxh))) {
      ++already;
      continue;
    }
    std::vector<size_t> set;
    json refusal;
    if (!r.reason.empty())
      refusal = Refused(r, "extract", r.reason, "the reply held no module");
    else if (!cur::ParseApiSet(c, r.apis, &set, &err))
      refusal = Refused(r, "input", "api_set", err);
    if (refusal.is_null()) {
      todo.push_back({&r, i});
      continue;
    }
    ++tally[refusal["stage"].get<std::string>() + "." + refusal["rule"].get<std::string>()];
    if (!log.Append(refusal, &err)) return Bad(err);
  }
  cur::WorkerScanner scanner(worker::LocateWorker(argv0));
  cur::WorkerRunFacts runner(worker::LocateWorker(argv0), a.cuda);
  for (size_t lo = 0; lo < todo.size(); lo += kChunk) {
    std::vector<Todo> chunk(todo.begin() + lo, todo.begin() + std::min(todo.size(), lo + kChunk));
    if (!ValidateChunk(chunk, c, a, scanner, runner, &known, &log, &tally, &err)) {
      std::cerr << "kz propose validate: " << err << "\n";
      return verify::kExitInternal;
    }
  }
  std::cerr << "kz propose validate: " << records.size() << " proposals, " << already << " validated before;";
  for (const auto& [k, n] : tally) std::cerr << " " << k << "=" << n;
  std::cerr << "\n";
  std::cout << json{{"proposals", records.size()},
                    {"validated_before", already},
                    {"now", tally},
                    {"bad_lines", bad.size()}}
                   .dump()
            << "\n";
  return bad.empty() ? 0 : 1;
}

}  // namespace kz::cli
