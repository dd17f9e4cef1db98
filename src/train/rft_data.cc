#include "train/rft_data.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "optimize/dedup.h"
#include "optimize/diagnostics.h"
#include "rewards/rft_select.h"
#include "train/rollout.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::train {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

struct Correct {
  std::string task, task_path, task_source, code, origin;
  double speedup = 0;
  std::string structure;
};

// The verdicts.jsonl files under a run's rollouts/, in path order (units, turns, retries).
std::vector<fs::path> VerdictLogs(const std::string& run) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(run + "/rollouts", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() == "verdicts.jsonl") out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

// A correct line's sample, when its candidate and task still hash as the verdict says.
bool ReadCorrect(const json& rec, const fs::path& log, Correct* c) {
  const json& v = rec["verdict"];
  std::string task = rec.value("task", ""),
              cand = (log.parent_path() / "candidates" / (task + "_" + std::to_string(rec.value("sample", -1)) + ".py"))
                         .string();
  std::string why, task_path = v.contains("task") ? v["task"].value("path", "") : "";
  if (task.empty() || !util::ReadFile(cand, &c->code, &why) || util::Hash128Hex(c->code) != rec.value("code_xxh", "") ||
      !util::ReadFile(task_path, &c->task_source, &why) ||
      util::Hash128Hex(c->task_source) != v["task"].value("xxh128", ""))
    return false;
  c->task = task;
  c->task_path = task_path;
  c->origin = log.parent_path().string();
  auto s = optimize::ReadSpeedup(v);
  c->speedup = s.timed ? s.median : 0;
  auto cell = optimize::BehaviourCell(c->code, v);
  c->structure = "k" + std::to_string(cell[0]) + " l" + std::to_string(cell[1]) + " b" + std::to_string(cell[2]);
  return true;
}

}  // namespace

bool BuildRftData(const RftDataOptions& o, RftDataReport* r, std::string* err) {
  *r = {};
  std::vector<Correct> all;
  size_t logs = 0;
  for (const auto& run : o.runs)
    for (const auto& log : VerdictLogs(run)) {
      ++logs;
      std::string text;
      if (!util::ReadFile(log.string(), &text, err)) return false;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) {
        json rec = json::parse(line, nullptr, false);
        if (rec.is_discarded() || !rec.is_object() || !rec.contains("verdict") || !rec["verdict"].is_object()) continue;
        ++r->verdicts;
        if (rec["verdict"].value("status", "") != "correct") continue;
        ++r->correct;
        Correct c;
        if (ReadCorrect(rec, log, &c))
          all.push_back(std::move(c));
        else
          ++r->unreadable;
      }
    }
  if (logs == 0 && !o.allow_no_verdicts)
    return *err = "no verdicts under <run>/rollouts/ of the given directories (not kz train runs?)", false;
  // Per task, the fastest first (stable: the rollout order otherwise).
  std::stable_sort(all.begin(), all.end(), [](const Correct& a, const Correct& b) {
    return a.task != b.task ? a.task < b.task : a.speedup > b.speedup;
  });
  std::vector<rewards::RftCandidate> cands;
  for (const auto& c : all) cands.push_back({c.task, optimize::NormalisedHash(c.code), c.structure});
  auto sel = rewards::SelectForRft(cands, o.per_task);
  r->duplicates = sel.duplicates;
  r->over_cap = sel.over_cap;
  std::string out;
  std::set<std::string> tasks;
  for (size_t i : sel.chosen) {
    const Correct& c = all[i];
    RolloutTask t{c.task, c.task_path, c.task_source};
    RolloutOptions ro;
    ro.backend = o.backend;
    ro.prompt_template = o.prompt_template;
    std::string prompt;
    if (!RenderCoderPrompt(t, ro, &prompt, err)) return false;
    std::string code = c.code.empty() || c.code.back() == '\n' ? c.code : c.code + "\n";
    out += json{{"prompt", prompt},     {"completion", "```python\n" + code + "```"},
                {"task", c.task},       {"structure", c.structure},
                {"speedup", c.speedup}, {"from", c.origin}}
               .dump() +
           "\n";
    tasks.insert(c.task);
  }
  r->written = sel.chosen.size();
  r->tasks = tasks.size();
  return util::WriteFileAtomic(o.out, out, err);
}

}  // namespace kz::train
