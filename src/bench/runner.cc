#include "bench/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>

#include "bench/generations.h"
#include "bench/report.h"
#include "bench/suite.h"
#include "bench/verdict_log.h"
#include "util/fs.h"
#include "util/hash.h"
#include "verify/device.h"
#include "verify/status.h"
#include "verify/verifier.h"

namespace kz::bench {
using nlohmann::json;

namespace {
struct Item {
  Generation gen;
  std::string key, code_xxh, path, task_path;
};

// One line on stderr per verdict (rewritten in place on a terminal).
class Progress {
 public:
  Progress(size_t total) : total_(total), tty_(isatty(2)), start_(std::chrono::steady_clock::now()) {}
  void Add(bool correct) {
    ++done_;
    correct_ += correct;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int eta = static_cast<int>(elapsed / done_ * (total_ - done_));
    char line[160];
    std::snprintf(line, sizeof line, "kz bench: %zu/%zu verified, %zu correct, elapsed %ds, ETA %dm%02ds",
                  done_, total_, correct_, static_cast<int>(elapsed), eta / 60, eta % 60);
    std::cerr << (tty_ ? "\r" : "") << line << (tty_ ? "\033[K" : "\n") << std::flush;
    if (tty_ && done_ == total_) std::cerr << "\n";
  }

 private:
  size_t total_, done_ = 0, correct_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
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
bool VerifyPending(const BenchOptions& o, const worker::WorkerConfig& worker, const std::vector<const Item*>& todo,
                   VerdictLog& log, std::vector<json>* records, std::string* err) {
  auto gpus = o.use_gpu ? verify::DetectGpus() : std::vector<verify::Gpu>{};
  verify::Verifier verifier(worker, o.verify, gpus);
  Progress progress(todo.size());
  bool ok = true;
  for (size_t b = 0; b < todo.size() && ok; b += o.batch) {
    std::vector<const Item*> batch(todo.begin() + b, todo.begin() + std::min(todo.size(), b + o.batch));
    std::vector<verify::Sample> samples;
    for (const Item* it : batch)
      samples.push_back({it->task_path, it->path, it->gen.backend, std::nullopt,
                         it->gen.task_id + "/" + std::to_string(it->gen.sample)});
    verifier.VerifyAll(samples, [&](size_t i, const json& v) {
      json r = Record(*batch[i], v);
      if (ok && !log.Append(r, err)) ok = false;
      records->push_back(std::move(r));
      progress.Add(v.value("status", "") == "correct");
    });
  }
  return ok;
}
}  // namespace

namespace {
json RunJson(const BenchOptions& o, const Suite& suite, const std::vector<Item>& items, const Generations& g) {
  json keys = json::array(), bad = json::array();
  for (const auto& it : items) keys.push_back(it.key);
  for (const auto& b : g.bad) {
    json j = BadInputJson(b);
    j["level"] = b.level;
    bad.push_back(std::move(j));
  }
  return {{"suite", suite.root}, {"generations", util::AbsolutePath(o.generations)},
          {"policy", o.verify.integrity ? o.verify.policy : "none"}, {"keys", keys}, {"bad_inputs", bad},
          {"samples", {{"total", items.size() + g.bad.size()}, {"verified", 0}, {"resumed", 0},
                       {"bad_input", g.bad.size()}}}};
}

int Finish(const std::string& out, const json& run, std::vector<json> records) {
  std::string err;
  json report;
  if (!util::WriteFileAtomic(out + "/run.json", run.dump(2) + "\n", &err) ||
      !WriteReport(out, {run, std::move(records)}, &report, &err)) {
    std::cerr << "kz bench: " << err << "\n";
    return verify::kExitInternal;
  }
  const json& overall = report["metrics"].value("overall", json::object());
  std::cerr << "kz bench: pass@1 " << overall.value("pass@1", json(nullptr)).dump() << " over "
            << overall.value("tasks", 0) << " tasks; report in " << out << "/report.{json,md}\n";
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
  std::vector<Item> items;
  if (!util::MakeDirs(o.out_dir, &err) || !Materialize(o.out_dir, suite, gens, &items, &err)) return Usage(err);
  std::string log_path = o.out_dir + "/verdicts.jsonl";
  LoadedLog stored = LoadVerdictLog(log_path);
  std::vector<json> records;
  std::vector<const Item*> todo;
  for (const auto& it : items) {
    auto found = stored.records.find(it.key);
    if (found != stored.records.end()) records.push_back(found->second);
    else todo.push_back(&it);
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
  bool ok = todo.empty() || VerifyPending(o, worker, todo, log, &records, &err);
  run["samples"]["verified"] = records.size() - run["samples"]["resumed"].get<size_t>();
  if (!ok) std::cerr << "kz bench: cannot append to " << log_path << ": " << err << "\n";
  int rc = Finish(o.out_dir, run, std::move(records));
  return ok ? rc : verify::kExitInternal;
}

int RecomputeReport(const std::string& out_dir) {
  std::string text, err;
  if (!util::ReadFile(out_dir + "/run.json", &text, &err)) return Usage(err + " (not a kz bench output directory?)");
  json run = json::parse(text, nullptr, false);
  if (run.is_discarded() || !run.is_object()) return Usage(out_dir + "/run.json: not valid JSON");
  LoadedLog stored = LoadVerdictLog(out_dir + "/verdicts.jsonl");
  std::vector<json> records;
  for (const auto& k : run.value("keys", json::array()))
    if (auto f = stored.records.find(k.get<std::string>()); f != stored.records.end()) records.push_back(f->second);
  std::cerr << "kz bench report: " << records.size() << " of " << run.value("keys", json::array()).size()
            << " samples have a verdict\n";
  std::string report_err;
  json report;
  if (!WriteReport(out_dir, {run, std::move(records)}, &report, &report_err)) return Usage(report_err);
  std::cerr << "kz bench report: written to " << out_dir << "/report.{json,md}\n";
  return 0;
}

}  // namespace kz::bench
