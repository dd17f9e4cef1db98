#include "generate/generator.h"

#include <algorithm>
#include <iostream>
#include <tuple>

#include "scoring/generations.h"
#include "scoring/suite.h"
#include "generate/run_log.h"
#include "generate/sample_run.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::generate {
namespace {

// The Coder's records and KernelBench's file layout.
class CoderWriter : public SampleWriter {
 public:
  explicit CoderWriter(std::vector<const scoring::SuiteTask*> tasks) : tasks_(std::move(tasks)) {}
  std::string CodeFile(size_t unit, int sample) const override {
    return KernelFileName(tasks_[unit]->level, tasks_[unit]->problem, sample);
  }
  nlohmann::json Record(size_t unit, const SampleOutcome& s) const override { return SampleRecord(*tasks_[unit], s); }

 private:
  std::vector<const scoring::SuiteTask*> tasks_;
};

bool Wanted(const GenerateOptions& o, const std::string& id) {
  return o.task_ids.empty() || std::find(o.task_ids.begin(), o.task_ids.end(), id) != o.task_ids.end();
}

// The selected tasks in (level, problem) order and their rendered prompts; a task file
// that cannot be read is reported and its samples counted in *skipped.
bool PrepareUnits(const GenerateOptions& o, const PromptTemplate& t, const scoring::Suite& suite,
                  std::vector<const scoring::SuiteTask*>* tasks, std::vector<Unit>* units, size_t* skipped,
                  std::string* err) {
  std::vector<const scoring::SuiteTask*> selected;
  for (const auto& [id, task] : suite.tasks)
    if (Wanted(o, id)) selected.push_back(&task);
  if (selected.empty()) return *err = "no task of the suite matches --task", false;
  std::sort(selected.begin(), selected.end(),
            [](auto* a, auto* b) { return std::tie(a->level, a->problem) < std::tie(b->level, b->problem); });
  for (const auto* task : selected) {
    std::string source, why;
    if (!util::ReadFile(task->path, &source, &why) || !scoring::IsValidUtf8(source)) {
      std::cerr << "kz generate: " << task->id << ": " << (why.empty() ? task->path + " is not valid UTF-8" : why)
                << "; its samples are skipped\n";
      *skipped += static_cast<size_t>(o.samples);
      continue;
    }
    std::map<std::string, std::string> values = {{"task_source", source}, {"task_name", task->name},
                                                 {"task_id", task->id}, {"level", std::to_string(task->level)},
                                                 {"problem", std::to_string(task->problem)}, {"backend", o.backend}};
    std::string text;
    if (!RenderTemplate(t.text, values, &text, &why)) return *err = t.name + ": " + why, false;
    tasks->push_back(task);
    units->push_back({task->id, text, util::Hash128Hex(text)});
  }
  return true;
}
}  // namespace

int RunGenerate(const GenerateOptions& o, const PromptTemplate& prompt, Endpoint* endpoint,
                std::atomic<bool>* cancel) {
  scoring::Suite suite;
  std::string err;
  std::vector<const scoring::SuiteTask*> tasks;
  std::vector<Unit> units;
  SampleRunOptions so;
  if (!scoring::ReadSuite(o.suite_dir, &suite, &err)) return std::cerr << "kz generate: " << err << "\n", 2;
  for (const auto& w : suite.warnings) std::cerr << "kz generate: " << w << "\n";
  if (!PrepareUnits(o, prompt, suite, &tasks, &units, &so.skipped, &err))
    return std::cerr << "kz generate: " << err << "\n", 2;
  if (o.refine) {
    RefineCounts rc;
    if (!LoadRefinement(*o.refine, o.samples, &units, &rc, &err)) return std::cerr << "kz generate: " << err << "\n", 2;
    so.turn = rc.turn;
    so.summary_extra["refine"] = {{"from", o.refine->prev_run}, {"turn", rc.turn}, {"open", rc.open},
                                  {"closed_correct", rc.closed_correct}, {"missing_previous", rc.missing_previous},
                                  {"unverified", rc.unverified}, {"omitted_replies", rc.omitted_replies},
                                  {"feedback_cut", rc.feedback_cut}};
    std::cerr << "kz generate: turn " << rc.turn << " of " << o.refine->prev_run << ": " << rc.open
              << " samples asked again with the verifier's feedback, " << rc.closed_correct << " correct before (closed)"
              << (rc.unverified ? ", " + std::to_string(rc.unverified) + " not verified yet (skipped)" : "")
              << (rc.missing_previous ? ", " + std::to_string(rc.missing_previous) + " without a previous sample" : "")
              << "\n";
  }
  so.out_dir = o.out_dir;
  so.model = o.model;
  so.prompt_name = prompt.name;
  so.backend = o.backend;
  so.summary_extra = {{"backend", o.backend}, {"samples_per_task", o.samples}};
  so.samples = o.samples;
  so.concurrency = o.concurrency;
  so.api = o.api;
  so.sampling = o.sampling;
  so.deadline_s = o.deadline_s;
  CoderWriter writer(std::move(tasks));
  return RunSamples(so, units, writer, endpoint, cancel);
}

}  // namespace kz::generate
