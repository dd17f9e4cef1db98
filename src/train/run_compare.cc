#include "train/run_compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "train/eval_outcomes.h"
#include "util/fs.h"

namespace kz::train {
namespace {
using nlohmann::json;

// metrics.jsonl's lines by unit (a later line of a unit wins); units in first-seen order.
bool LoadRun(const std::string& run, std::vector<json>* units, std::string* err) {
  std::string text;
  if (!util::ReadFile(run + "/metrics.jsonl", &text, err))
    return *err = run + " has no metrics.jsonl (not a kz train run, or no unit finished)", false;
  *units = MetricsUnits(text);
  return true;
}

const json* FindUnit(const std::vector<json>& units, const std::string& id) {
  for (const auto& u : units)
    if (u.value("unit", "") == id) return &u;
  return nullptr;
}

json Reading(const json& a, const json& b, const char* key, const TrainCompareOptions& o) {
  return ComparePaired(EvalOutcomes(a, key), EvalOutcomes(b, key), o.resamples, o.level, o.seed);
}

// A run's Coder phase from its coder lines.
json CoderPhase(const std::vector<json>& units) {
  int steps = 0, skipped = 0, samples = 0, recovered = 0, popped = 0;
  double seconds = 0, pop_share = 0;
  for (const auto& u : units) {
    if (u.value("kind", "") != "coder") continue;
    if (u.contains("skipped") && !u.contains("samples")) {
      ++skipped;
      continue;
    }
    ++steps;
    seconds += u.value("wall_s", 0.0);
    samples += u.value("samples", 0);
    if (u.contains("retry")) recovered += u["retry"].value("recovered_now", 0);
    if (u.contains("mirror_pop")) pop_share += u["mirror_pop"].value("filtered_share", 0.0), ++popped;
  }
  return {{"steps", steps},
          {"skipped", skipped},
          {"seconds", seconds},
          {"samples", samples},
          {"retry_recovered", recovered},
          {"mirror_pop_filtered_share", popped ? pop_share / popped : 0.0}};
}

std::string Fixed(const json& v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v.is_number() ? v.get<double>() : NAN);
  return b;
}

std::string Markdown(const json& s, const TrainCompareOptions& o) {
  std::ostringstream md;
  int pct = int(std::lround(o.level * 100));
  md << "# kz train compare: B = " << o.run_b << " against A = " << o.run_a << " at " << s["unit"].get<std::string>()
     << "\n\n| reading | tasks | A pass@1 | B pass@1 | Δ pass@1 [" << pct
     << "% CI] | A fast_1@1 | B fast_1@1 | Δ fast_1@1 [" << pct << "% CI] |\n|---|---|---|---|---|---|---|---|\n";
  for (const char* r : {"first_turn", "best_turn"}) {
    const json& x = s[r];
    auto cell = [](const json& side) {
      return Fixed(side["delta"]) + " [" + Fixed(side["lo"]) + ", " + Fixed(side["hi"]) + "]" +
             (side["excludes_zero"].get<bool>() ? " *" : "");
    };
    md << "| " << r << " | " << x["paired_tasks"] << " | " << Fixed(x["pass_at_1"]["a"]) << " | "
       << Fixed(x["pass_at_1"]["b"]) << " | " << cell(x["pass_at_1"]) << " | " << Fixed(x["fast_1_at_1"]["a"]) << " | "
       << Fixed(x["fast_1_at_1"]["b"]) << " | " << cell(x["fast_1_at_1"]) << " |\n";
  }
  md << "\n| run | Coder steps | skipped (budget) | seconds | samples | retry recovered | MirrorPop filtered |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const char* r : {"a", "b"}) {
    const json& c = s["coder"][r];
    md << "| " << r << " | " << c["steps"] << " | " << c["skipped"] << " | " << Fixed(c["seconds"]) << " | "
       << c["samples"] << " | " << c["retry_recovered"] << " | " << Fixed(c["mirror_pop_filtered_share"]) << " |\n";
  }
  md << "\nΔ = B − A over the tasks both evaluated, " << o.resamples << " paired bootstrap resamples (seed " << o.seed
     << "); * the interval excludes zero. best_turn: correct at any turn of a refining evaluation ([eval] turns > 1); "
        "a run that did not refine reads its first turn.\n";
  return md.str();
}

}  // namespace

bool WriteTrainCompare(const TrainCompareOptions& o, json* summary, std::string* err) {
  std::vector<json> a, b;
  if (!LoadRun(o.run_a, &a, err) || !LoadRun(o.run_b, &b, err)) return false;
  std::string unit = o.unit;
  if (unit.empty())
    for (const auto& u : a)
      if (u.value("kind", "") == "eval" && FindUnit(b, u.value("unit", ""))) unit = u.value("unit", "");
  const json* ea = unit.empty() ? nullptr : FindUnit(a, unit);
  const json* eb = unit.empty() ? nullptr : FindUnit(b, unit);
  if (!ea || !eb || ea->value("kind", "") != "eval")
    return *err = unit.empty() ? "the two runs share no finished evaluation unit"
                               : "evaluation unit " + unit + " is not finished in both runs",
           false;
  *summary = {{"format", "kz.train_compare/1"},
              {"a", o.run_a},
              {"b", o.run_b},
              {"unit", unit},
              {"first_turn", Reading(*ea, *eb, "outcomes", o)},
              {"best_turn", Reading(*ea, *eb, "outcomes_best_turn", o)},
              {"coder", {{"a", CoderPhase(a)}, {"b", CoderPhase(b)}}}};
  std::string out = o.out_dir.empty() ? o.run_b + "/compare" : o.out_dir;
  return util::MakeDirs(out, err) && util::WriteFileAtomic(out + "/compare.md", Markdown(*summary, o), err) &&
         util::WriteFileAtomic(out + "/compare.json", summary->dump(1) + "\n", err);
}

}  // namespace kz::train
