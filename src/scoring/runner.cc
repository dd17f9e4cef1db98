#include "scoring/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "scoring/baseline.h"
#include "scoring/generations.h"
#include "scoring/progress.h"
#include "scoring/report.h"
#include "scoring/suite.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "util/hash.h"
#include "verify/device.h"
#include "verify/status.h"
#include "verify/verifier.h"

namespace kz::scoring {
using nlohmann::json;

namespace {
struct Item {
  Generation gen;
  std::string key, code_xxh, path, task_path;
};

bool Selected(const BenchOptions& o, const std::string& task_id, int level) {
  bool level_ok = o.levels.empty() || std::count(o.levels.begin(), o.levels.end(), level);
  bool task_ok = o.task_ids.empty() || std::count(o.task_ids.begin(), o.task_ids.end(), task_id);
  return level_ok && task_ok;
}

// Keeps the selected generations and bad inputs (those without a task always).
void Filter(const BenchOptions& o, Generations* g) {
  std::erase_if(g->items, [&](const Generation& x) { return !Selected(o, x.task_id, x.level); });
  std::erase_if(g->bad, [&](const BadInput& b) { return !b.task_id.empty() && !Selected(o, b.task_id, b.level); });
}

// Writes each generation to <out>/samples/<task>/<sample>.py and computes its key.
bool Materialize(const std::string& out, const Suite& suite, Generations& g, std::vector<Item>* items,
                 std::string* err) {
  for (auto& gen : g.items) {
    Item it;
    it.gen = std::move(gen);
    it.task_path = suite.tasks.at(it.gen.task_id).path;
    it.code_xxh = util::Hash128Hex(it.gen.code);
    it.key = ResumeKey(it.gen.task_id, it.gen.sample, it.code_xxh);
    std::string dir = out + "/samples/" + it.gen.task_id;
    it.path = dir + "/" + std::to_string(it.gen.sample) + ".py";
    if (!util::MakeDirs(dir, err) || !util::WriteFileAtomic(it.path, it.gen.code, err)) return false;
    items->push_back(std::move(it));
  }
  return true;
}

json Record(const Item& it, const json& verdict) {
  const json* timing = verdict.contains("stages") ? &verdict["stages"] : nullptr;
  json speedup = nullptr;
  if (timing && timing->contains("timing") && (*timing)["timing"].contains("speedup"))
    speedup = (*timing)["timing"]["speedup"];
  return {{"task", it.gen.task_id}, {"level", it.gen.level}, {"sample", it.gen.sample},
          {"code_xxh", it.code_xxh}, {"origin", it.gen.origin},
          {"output_tokens", it.gen.output_tokens ? json(*it.gen.output_tokens) : json(nullptr)},
          {"status", verdict.value("status", "?")}, {"reason", verdict.value("reason", "")},
          {"backend", verdict.value("backend", "")}, {"speedup", speedup}, {"verdict", verdict}};
}

// Verifies `todo` in batches, appending one record per verdict as it arrives.
bool VerifyLocal(const BenchOptions& o, const worker::WorkerConfig& worker, const std::vector<const Item*>& todo,
                 VerdictLog& log, std::vector<json>* records, std::string* err) {
  auto gpus = o.use_gpu ? verify::DetectGpus() : std::vector<verify::Gpu>{};
  verify::Verifier verifier(worker, o.verify, gpus);
  Progress progress("kz bench", "verified", todo.size());
  size_t correct = 0;
  bool ok = true;
  for (size_t b = 0; b < todo.size() && ok; b += o.batch) {
    std::vector<const Item*> batch(todo.begin() + b, todo.begin() + std::min(todo.size(), b + o.batch));
    std::vector<verify::Sample> samples;
    for (const Item* it : batch)
      samples.push_back({it->task_path, it->path, it->gen.backend, std::nullopt,
                         it->gen.task_id + "/" + std::to_string(it->gen.sample)});
    verifier.VerifyAll(samples, [&](size_t i, const json& v) {
      json r = Record(*batch[i], v);
      if (ok && !log.Append(r, err)) ok = false, *err = "cannot append to the verdict log: " + *err;
      records->push_back(std::move(r));
      correct += v.value("status", "") == "correct";
      progress.Step(std::to_string(correct) + " correct");
    });
  }
  return ok;
}

// Verifies `todo` through o.remote (kz serve). *unreachable: it stopped because the server
// could not be reached.
bool VerifyRemote(const BenchOptions& o, const std::vector<const Item*>& todo, VerdictLog& log,
                  std::vector<json>* records, bool* unreachable, std::string* err) {
  std::vector<RemoteJob> jobs;
  for (const Item* it : todo) jobs.push_back({it->task_path, it->gen.code, it->gen.backend});
  Progress progress("kz bench", "verified", todo.size());
  size_t correct = 0;
  bool ok = true;
  std::string remote_err;
  auto on_done = [&](size_t i, const json& verdict, const json& server) {
    json r = Record(*todo[i], verdict);
    r["server"] = server;
    if (ok && !log.Append(r, err)) ok = false, *err = "cannot append to the verdict log: " + *err;
    records->push_back(std::move(r));
    correct += verdict.value("status", "") == "correct";
    if (verdict.value("status", "") == "server_error")
      progress.Note("kz bench: " + todo[i]->gen.task_id + "/" + std::to_string(todo[i]->gen.sample) +
                    ": server error: " + verdict.value("reason", ""));
    progress.Step(std::to_string(correct) + " correct");
  };
  if (!o.remote->VerifyAll(o, jobs, on_done, [&](const std::string& line) { progress.Note(line); }, &remote_err)) {
    *unreachable = true;
    if (ok) *err = remote_err;
    return false;
  }
  return ok;
}
}  // namespace

namespace {
// {"L1_19": {"level", "file", "xxh128"}} for the suite tasks in `ids` (baseline lookups).
json TasksJson(const Suite& suite, const std::set<std::string>& ids) {
  json tasks = json::object();
  for (const auto& id : ids) {
    auto t = suite.tasks.find(id);
    if (t == suite.tasks.end()) continue;
    std::string text, err;
    tasks[id] = {{"level", t->second.level}, {"file", t->second.name + ".py"},
                 {"xxh128", util::ReadFile(t->second.path, &text, &err) ? json(util::Hash128Hex(text)) : json(nullptr)}};
  }
  return tasks;
}

json RunJson(const BenchOptions& o, const Suite& suite, const std::vector<Item>& items, const Generations& g) {
  json keys = json::array(), bad = json::array();
  std::set<std::string> task_ids;
  for (const auto& it : items) keys.push_back(it.key), task_ids.insert(it.gen.task_id);
  for (const auto& b : g.bad) {
    json j = BadInputJson(b);
    j["level"] = b.level;
    bad.push_back(std::move(j));
    if (b.scored && !b.task_id.empty()) task_ids.insert(b.task_id);
  }
  json run = {{"suite", suite.root}, {"generations", util::AbsolutePath(o.generations)},
              {"policy", o.verify.integrity ? o.verify.policy : "none"}, {"keys", keys}, {"bad_inputs", bad},
              {"samples", {{"total", items.size() + g.bad.size()}, {"verified", 0}, {"resumed", 0},
                           {"bad_input", g.bad.size()}}},
              {"tasks", TasksJson(suite, task_ids)}};
  if (!o.baseline.empty()) run["baseline"] = util::AbsolutePath(o.baseline);
  if (!o.server.empty()) run["server"] = {{"url", o.server}, {"client", o.client}};
  return run;
}

// The --baseline of a run (or of `kz bench report`): nullopt with *err when unreadable.
std::optional<CompileBaseline> LoadBaseline(const std::string& path, std::string* err) {
  CompileBaseline b;
  if (!LoadCompileBaseline(path, &b, err)) return std::nullopt;
  return b;
}

int Finish(const std::string& out, const json& run, std::vector<json> records,
           std::optional<CompileBaseline> baseline) {
  std::string err;
  json report;
  if (!util::WriteFileAtomic(out + "/run.json", run.dump(2) + "\n", &err) ||
      !WriteReport(out, {run, std::move(records), std::move(baseline)}, &report, &err)) {
    std::cerr << "kz bench: " << err << "\n";
    return verify::kExitInternal;
  }
  const json& overall = report["metrics"].value("overall", json::object());
  std::cerr << "kz bench: pass@1 " << overall.value("pass@1", json(nullptr)).dump() << " over "
            << overall.value("tasks", 0) << " tasks";
  if (overall.contains("vs_compile"))
    std::cerr << "; against torch.compile (" << overall["vs_compile"].value("tasks", 0)
              << " tasks with a baseline): fast_1.0@1 " << overall["vs_compile"].value("fast_1.0@1", json(nullptr)).dump()
              << ", geomean speedup " << overall["vs_compile"].value("geomean_speedup_vs_compile", json(nullptr)).dump();
  std::cerr << "; report in " << out << "/report.{json,md}\n";
  return 0;
}

int Usage(const std::string& msg) {
  std::cerr << "kz bench: " << msg << "\n";
  return verify::kExitUsage;
}
}  // namespace

int RunBench(const BenchOptions& o, const worker::WorkerConfig& worker) {
  Suite suite;
  Generations gens;
  std::string err;
  if (!ReadSuite(o.suite_dir, &suite, &err) || !ReadGenerations(o.generations, suite, &gens, &err)) return Usage(err);
  for (const auto& w : suite.warnings) std::cerr << "kz bench: warning: " << w << "\n";
  for (const auto& id : o.task_ids)
    if (!suite.tasks.count(id)) std::cerr << "kz bench: warning: --task " << id << " is not in the suite\n";
  Filter(o, &gens);
  std::optional<CompileBaseline> baseline;
  if (!o.baseline.empty() && !(baseline = LoadBaseline(o.baseline, &err))) return Usage("--baseline: " + err);
  if (!o.server.empty()) {
    if (!o.remote) return Usage("--server: this executable cannot reach kz serve (kz execs kz-bench for it)");
    bool usage = false;
    if (!o.remote->Check(o, &usage, &err)) {
      if (usage) return Usage("--server: " + err);
      std::cerr << "kz bench: " << err << "\n";
      return kExitServer;
    }
  }
  std::vector<Item> items;
  if (!util::MakeDirs(o.out_dir, &err) || !Materialize(o.out_dir, suite, gens, &items, &err)) return Usage(err);
  std::string log_path = o.out_dir + "/verdicts.jsonl";
  LoadedLog stored = LoadVerdictLog(log_path);
  std::vector<json> records;
  std::vector<const Item*> todo;
  for (const auto& it : items) {
    auto found = stored.records.find(it.key);
    if (found != stored.records.end() && found->second.value("status", "") != "server_error")
      records.push_back(found->second);
    else
      todo.push_back(&it);  // not verified yet, or the server could not verify it: again
  }
  json run = RunJson(o, suite, items, gens);
  run["samples"]["resumed"] = records.size();
  std::cerr << "kz bench: " << items.size() << " samples in " << suite.tasks.size() << " suite tasks; "
            << records.size() << " resumed from verdicts.jsonl" << (stored.ignored_lines ? " (" +
               std::to_string(stored.ignored_lines) + " torn or unreadable lines ignored)" : "")
            << ", " << todo.size() << " to verify, " << gens.bad.size() << " bad inputs\n";
  VerdictLog log;
  if (!log.Open(log_path, &err) || !util::WriteFileAtomic(o.out_dir + "/run.json", run.dump(2) + "\n", &err)) {
    std::cerr << "kz bench: " << err << "\n";
    return verify::kExitInternal;
  }
  bool unreachable = false;
  bool ok = todo.empty() || (o.server.empty() ? VerifyLocal(o, worker, todo, log, &records, &err)
                                              : VerifyRemote(o, todo, log, &records, &unreachable, &err));
  run["samples"]["verified"] = records.size() - run["samples"]["resumed"].get<size_t>();
  if (!ok && unreachable)
    std::cerr << "kz bench: " << err << "; stopping (" << records.size() << " of " << items.size()
              << " samples have a verdict; run the same command again to resume)\n";
  else if (!ok)
    std::cerr << "kz bench: " << err << "\n";
  int rc = Finish(o.out_dir, run, std::move(records), std::move(baseline));
  return ok ? rc : unreachable ? kExitServer : verify::kExitInternal;
}

int RecomputeReport(const std::string& out_dir, const std::string& baseline_path) {
  std::string text, err;
  if (!util::ReadFile(out_dir + "/run.json", &text, &err)) return Usage(err + " (not a kz bench output directory?)");
  json run = json::parse(text, nullptr, false);
  if (run.is_discarded() || !run.is_object()) return Usage(out_dir + "/run.json: not valid JSON");
  std::string bpath = !baseline_path.empty() ? baseline_path : run.value("baseline", "");
  std::optional<CompileBaseline> baseline;
  if (!bpath.empty() && !(baseline = LoadBaseline(bpath, &err))) return Usage("baseline: " + err);
  if (!baseline_path.empty()) run["baseline"] = util::AbsolutePath(baseline_path);
  LoadedLog stored = LoadVerdictLog(out_dir + "/verdicts.jsonl");
  std::vector<json> records;
  for (const auto& k : run.value("keys", json::array()))
    if (auto f = stored.records.find(k.get<std::string>()); f != stored.records.end()) records.push_back(f->second);
  std::cerr << "kz bench report: " << records.size() << " of " << run.value("keys", json::array()).size()
            << " samples have a verdict\n";
  std::string report_err;
  json report;
  if (baseline && !run.contains("tasks")) {  // a run.json from before baselines: read the suite again
    Suite suite;
    std::set<std::string> ids;
    for (const auto& r : records) ids.insert(r.value("task", ""));
    if (ReadSuite(run.value("suite", ""), &suite, &err)) run["tasks"] = TasksJson(suite, ids);
  }
  if (!WriteReport(out_dir, {run, std::move(records), std::move(baseline)}, &report, &report_err))
    return Usage(report_err);
  std::cerr << "kz bench report: written to " << out_dir << "/report.{json,md}\n";
  return 0;
}

}  // namespace kz::scoring
