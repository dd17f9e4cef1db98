#include "curriculum/validator.h"

#include "curriculum/cooccur.h"

namespace kz::curriculum {
using nlohmann::json;

bool WorkerRunFacts::Run(const std::vector<std::string>& paths, const ValidationOptions& o, std::vector<json>* out,
                         std::string* err) {
  worker::WorkerCall call;
  json modules = json::array();
  for (const auto& p : paths) modules.push_back({{"path", p}});
  call.request = {{"op", "validate"}, {"device", cuda_ ? "cuda" : "cpu"}, {"modules", modules},
                  {"options", {{"seed", o.seed}, {"timeout_s", o.timeout_s}, {"memory_bytes", o.memory_bytes},
                               {"max_total_bytes", o.max_total_bytes}}}};
  if (!cuda_) call.env = {{"CUDA_VISIBLE_DEVICES", ""}};
  call.wall_limit_s = 120 + (o.timeout_s + 5) * static_cast<double>(paths.size());
  call.max_rss_bytes = o.memory_bytes + (4ull << 30);
  worker::WorkerReply reply = worker::RunWorker(config_, call);
  out->clear();
  if (reply.result && reply.result->value("ok", false) && (*reply.result)["modules"].size() == paths.size()) {
    for (const auto& m : (*reply.result)["modules"]) out->push_back(m);
    return true;
  }
  // The parent died: keep the modules its events reported, the rest is the failure.
  for (const auto& e : reply.events)
    if (e.value("stage", "") == "module") out->push_back(e["data"]);
  std::string why = reply.result ? reply.result->value("error", json::object()).dump() : worker::DescribeEnd(reply.process);
  return *err = "validate failed after " + std::to_string(out->size()) + " of " + std::to_string(paths.size()) +
                " modules: " + why,
         false;
}

bool ValidateAll(const std::vector<Proposal>& proposals, const Catalog& catalog, Scanner& scanner,
                 RunFactsSource& runner, const ValidationOptions& options, KnownHashes* known,
                 std::vector<Outcome>* out, std::string* err) {
  std::vector<std::string> paths;
  for (const auto& p : proposals) paths.push_back(p.path);
  std::vector<ModuleFacts> facts;
  if (!scanner.Scan(paths, &facts, err)) return false;
  out->clear();
  std::vector<size_t> to_run;
  for (size_t i = 0; i < proposals.size(); ++i) {
    Outcome o{proposals[i].path, proposals[i].apis, facts[i].canonical_hash, std::nullopt, nullptr};
    o.refusal = CheckAst(facts[i], proposals[i].apis, catalog, *known);
    if (!o.refusal) {
      known->seen.emplace(o.canonical_hash, o.path);
      to_run.push_back(i);
    }
    out->push_back(std::move(o));
  }
  std::vector<std::string> run_paths;
  for (size_t i : to_run) run_paths.push_back(proposals[i].path);
  std::vector<json> run_facts;
  if (!run_paths.empty() && !runner.Run(run_paths, options, &run_facts, err)) return false;
  for (size_t j = 0; j < to_run.size(); ++j) {
    Outcome& o = (*out)[to_run[j]];
    o.facts = run_facts[j];
    o.refusal = CheckRun(run_facts[j], options);
  }
  return true;
}

bool EvalHashes(const std::vector<std::string>& roots, Scanner& scanner, KnownHashes* out, std::string* err) {
  std::vector<CorpusFile> files;
  if (!ListCorpus(roots, &files, err)) return false;
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.abs);
  std::vector<ModuleFacts> facts;
  if (!scanner.Scan(paths, &facts, err)) return false;
  for (size_t i = 0; i < files.size(); ++i) {
    if (facts[i].status != "ok") continue;
    out->eval.emplace(facts[i].canonical_hash, files[i].rel);
    out->eval_sketches.push_back({files[i].rel, facts[i].sketch});
  }
  return true;
}

json OutcomeJson(const Outcome& o, const Catalog& catalog) {
  json ids = json::array();
  for (size_t a : o.apis) ids.push_back(catalog.api(a).id);
  json j = {{"path", o.path}, {"apis", ids}, {"canonical_hash", o.canonical_hash}, {"valid", !o.refusal}};
  if (o.refusal) {
    j["stage"] = o.refusal->stage;
    j["rule"] = o.refusal->rule;
    j["reason"] = o.refusal->stage + "." + o.refusal->rule + ": " + o.refusal->detail;
  }
  if (o.facts.is_object()) j["seconds"] = o.facts.value("seconds", json());
  return j;
}

}  // namespace kz::curriculum
