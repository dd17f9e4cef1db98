#include "scoring/report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include <unistd.h>

#include "scoring/svg.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kz::scoring {
using nlohmann::json;
namespace fs = std::filesystem;

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<TaskResult> BuildTaskResults(const std::vector<json>& records, const json& bad_inputs,
                                         const std::map<std::string, CompileRef>* compile) {
  std::map<std::string, std::pair<int, std::map<int, SampleResult>>> by_task;
  for (const auto& r : records) {
    SampleResult s;
    s.correct = r.value("status", "") == "correct";
    if (r.contains("speedup") && r["speedup"].is_number()) s.speedup = r["speedup"].get<double>();
    if (compile)
      if (auto ref = compile->find(r.value("task", "")); ref != compile->end())
        s.speedup_vs_compile = SpeedupVsCompile(r, ref->second);
    if (r.contains("output_tokens") && r["output_tokens"].is_number())
      s.output_tokens = r["output_tokens"].get<double>();
    auto& [level, samples] = by_task[r.value("task", "")];
    level = r.value("level", 0);
    samples.emplace(r.value("sample", 0), s);
  }
  for (const auto& b : bad_inputs) {
    if (!b.value("scored_as_incorrect", false) || !b["task"].is_string() || !b["sample"].is_number_integer())
      continue;
    auto& [level, samples] = by_task[b["task"].get<std::string>()];
    level = b.value("level", 0);
    SampleResult s;
    if (b.contains("output_tokens") && b["output_tokens"].is_number()) s.output_tokens = b["output_tokens"].get<double>();
    samples.emplace(b["sample"].get<int>(), s);
  }
  std::vector<TaskResult> out;
  for (auto& [id, entry] : by_task) {
    TaskResult t{id, entry.first, {}, compile && compile->count(id) > 0, entry.second.count(0) > 0};
    for (auto& [sample, s] : entry.second) t.samples.push_back(s);
    out.push_back(std::move(t));
  }
  return out;
}

namespace {
json CurvesOf(std::vector<TaskResult> tasks, bool vs_compile) {
  if (vs_compile) std::erase_if(tasks, [](const TaskResult& t) { return !t.has_compile_baseline; });
  if (tasks.empty()) return nullptr;
  size_t min_n = tasks.front().samples.size();
  for (const auto& t : tasks) min_n = std::min(min_n, t.samples.size());
  MetricsOptions o;
  o.ps.clear();
  for (int i = 0; i <= 50; ++i) o.ps.push_back(i * 0.05);
  for (int k : {1, 5, 10})
    if (static_cast<size_t>(k) <= min_n) o.ks.push_back(k);
  json m = vs_compile ? ComputeCompileMetrics(tasks, o) : ComputeMetrics(tasks, o), out = json::object();
  for (int k : o.ks)
    for (double p : o.ps) out[std::to_string(k)].push_back({p, m[FastKey(p, k)]});
  return out;
}
}  // namespace

json FastPCurves(const std::vector<TaskResult>& tasks, bool vs_compile) {
  json out = json::object();
  if (tasks.empty()) return out;
  auto put = [&](const std::string& scope, const std::vector<TaskResult>& group) {
    if (json c = CurvesOf(group, vs_compile); !c.is_null()) out[scope] = std::move(c);
  };
  put("overall", tasks);
  std::map<int, std::vector<TaskResult>> by_level;
  for (const auto& t : tasks) by_level[t.level].push_back(t);
  for (const auto& [level, group] : by_level) put("level_" + std::to_string(level), group);
  return out;
}

namespace {
json SampleCounts(const ReportInput& in) {
  json samples = in.run.value("samples", json::object());
  std::map<std::string, int> statuses;
  for (const auto& r : in.records) statuses[r.value("status", "?")]++;
  samples["with_verdict"] = in.records.size();
  samples["pending"] = in.run.value("keys", json::array()).size() - in.records.size();
  samples["statuses"] = statuses;
  return samples;
}
}  // namespace

namespace {
// The report's "baseline" object and warnings: refs' summary plus how many correct timed
// samples could not be compared because their GPU is not the baseline's.
json BaselineSummary(const ReportInput& in, const std::map<std::string, CompileRef>& refs, json summary,
                     json* warnings) {
  int other_hw = 0;
  for (const auto& r : in.records) {
    auto ref = refs.find(r.value("task", ""));
    std::string why;
    if (ref != refs.end() && !SpeedupVsCompile(r, ref->second, &why) && why == "hardware") ++other_hw;
  }
  summary["samples_other_hardware"] = other_hw;
  if (other_hw)
    warnings->push_back(std::to_string(other_hw) + " correct timed samples ran on other hardware than the "
                        "compile baseline: no speedup against torch.compile for them");
  if (!summary["stale"].empty())
    warnings->push_back("compile baseline entries made from other task content (not used): " +
                        summary["stale"].dump());
  bool means = false;
  for (const auto& st : summary["statistic"]) means = means || st == "mean";
  if (means)
    warnings->push_back("the compile baseline gives means (KernelBench's own file?): speedups against "
                        "torch.compile compare its mean with the candidate's median");
  return summary;
}
}  // namespace

json BuildReport(const ReportInput& in, const std::string& generated_at) {
  json bad = in.run.value("bad_inputs", json::array()), baseline, warnings = json::array();
  std::map<std::string, CompileRef> refs;
  if (in.baseline) refs = CompileRefs(*in.baseline, in.run.value("tasks", json::object()), &baseline);
  auto tasks = BuildTaskResults(in.records, bad, in.baseline ? &refs : nullptr);
  MetricsOptions mo;
  mo.vs_compile = in.baseline.has_value();
  json report = {{"schema", "kz.bench_report/1"},
                 {"suite", in.run.value("suite", "")},
                 {"generations", in.run.value("generations", "")},
                 {"generated_at", generated_at},
                 {"policy", in.run.value("policy", "")},
                 {"samples", SampleCounts(in)},
                 {"metrics", tasks.empty() ? json::object() : ComputeReport(tasks, mo)},
                 {"fast_p_curves", FastPCurves(tasks)},
                 {"bad_inputs", bad}};
  if (in.baseline) {
    report["baseline"] = BaselineSummary(in, refs, baseline, &warnings);
    report["fast_p_curves_vs_compile"] = FastPCurves(tasks, true);
  }
  if (in.run.contains("server")) report["server"] = in.run["server"];
  const json statuses = report["samples"].value("statuses", json::object());
  if (statuses.contains("not_run"))
    warnings.push_back("some samples are not_run (CUDA without a GPU): they count as incorrect");
  if (statuses.contains("server_error"))
    warnings.push_back(std::to_string(statuses["server_error"].get<int>()) +
                       " samples have status server_error (the server could not verify them): they count "
                       "as incorrect; run kz bench again to retry them");
  if (!warnings.empty()) report["warnings"] = warnings;
  return report;
}

namespace {
std::string Cell(const json& metrics, const std::string& key, int digits) {
  if (!metrics.contains(key) || !metrics[key].is_number()) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, metrics[key].get<double>());
  return buf;
}

std::string Table(const json& metrics) {
  std::vector<std::pair<std::string, std::string>> cols = {{"pass@1", "pass@1"}};
  for (const char* k : {"pass@5", "pass@10"})
    if (metrics.value("overall", json::object()).contains(k)) cols.push_back({k, k});
  cols.insert(cols.end(), {{"fast_1.0@1", "fast_1.0@1"}, {"fast_1.5@1", "fast_1.5@1"},
                           {"geomean_speedup_correct", "geomean speedup"}, {"mean_output_tokens", "mean tokens"}});
  std::string md = "| scope | tasks | samples |", rule = "|---|---:|---:|";
  for (const auto& [key, title] : cols) md += " " + title + " |", rule += "---:|";
  md += "\n" + rule + "\n";
  std::vector<std::pair<int, std::string>> scopes;  // overall first, then levels by number
  for (const auto& [scope, m] : metrics.items())
    scopes.push_back({scope == "overall" ? -1 : std::atoi(scope.c_str() + scope.find('_') + 1), scope});
  std::sort(scopes.begin(), scopes.end());
  for (const auto& [order, scope] : scopes) {
    const json& m = metrics[scope];
    md += "| " + scope + " | " + std::to_string(m.value("tasks", 0)) + " | " +
          std::to_string(m.value("samples", 0)) + " |";
    for (const auto& [key, title] : cols)
      md += " " + Cell(m, key, key == "mean_output_tokens" ? 0 : key.rfind("geomean", 0) == 0 ? 2 : 3) + " |";
    md += "\n";
  }
  return md;
}
}  // namespace

namespace {
// The "Against torch.compile" section: baseline provenance and a table per scope.
std::string CompileSection(const json& r) {
  const json& b = r["baseline"];
  auto list = [](const json& a) {
    std::string out;
    for (const auto& x : a) out += (out.empty() ? "" : ", ") + x.get<std::string>();
    return out.empty() ? std::string("–") : out;
  };
  std::string md = "\n## Against torch.compile (inductor, default mode)\n\n- baseline: `" +
                   b.value("compile_file", "") + "`\n- hardware: " + list(b["hardware"]) + "; statistic: " +
                   list(b["statistic"]) + "\n- tasks with a baseline entry: " +
                   std::to_string(b.value("tasks_with_entry", 0)) + "; without: " +
                   std::to_string(b["missing"].size()) + "; failed entries: " + std::to_string(b["failed"].size()) +
                   "; stale: " + std::to_string(b["stale"].size()) + "\n\n";
  md += "| scope | tasks with baseline | correct timed samples | fast_0.0@1 vs compile | fast_1.0@1 vs compile "
        "| fast_1.5@1 vs compile | fast_1.0 sample 0 vs compile | geomean speedup vs compile |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<std::pair<int, std::string>> scopes;
  for (const auto& [scope, m] : r["metrics"].items())
    scopes.push_back({scope == "overall" ? -1 : std::atoi(scope.c_str() + scope.find('_') + 1), scope});
  std::sort(scopes.begin(), scopes.end());
  for (const auto& [order, scope] : scopes) {
    const json& m = r["metrics"][scope].value("vs_compile", json::object());
    json s0 = m.value("fast_p_sample0", json::object());
    md += "| " + scope + " | " + std::to_string(m.value("tasks", 0)) + " | " +
          std::to_string(m.value("correct_timed_samples", 0)) + " | " + Cell(m, "fast_0.0@1", 3) + " | " +
          Cell(m, "fast_1.0@1", 3) + " | " + Cell(m, "fast_1.5@1", 3) + " | " + Cell(s0, "fast_1.0", 3) + " | " +
          Cell(m, "geomean_speedup_vs_compile", 2) + " |\n";
  }
  md += "\nspeedup vs compile = the baseline's torch.compile time of the task / the candidate's median time; "
        "only tasks with a baseline entry count, and only samples timed on the baseline's hardware.\n";
  return md;
}
}  // namespace

std::string ReportMarkdown(const json& r) {
  const json& s = r["samples"];
  std::string md = "# kz bench report\n\n- suite: `" + r.value("suite", "") + "`\n- generations: `" +
                   r.value("generations", "") + "`\n- policy: " + r.value("policy", "") +
                   "\n- generated at: " + r.value("generated_at", "") + "\n- samples: " +
                   std::to_string(s.value("total", 0)) + " total, " + std::to_string(s.value("verified", 0)) +
                   " verified now, " + std::to_string(s.value("resumed", 0)) + " resumed, " +
                   std::to_string(s.value("bad_input", 0)) + " bad inputs, " + std::to_string(s.value("pending", 0)) +
                   " pending; statuses " + s.value("statuses", json::object()).dump() + "\n";
  for (const auto& w : r.value("warnings", json::array())) md += "- warning: " + w.get<std::string>() + "\n";
  md += "\n## Metrics\n\n" + (r["metrics"].empty() ? std::string("No verified samples.\n") : Table(r["metrics"]));
  md += "\nfast_p@k counts correct samples with speedup > p (no speedup without a GPU).\n";
  if (r.contains("baseline")) md += CompileSection(r);
  if (!r["bad_inputs"].empty()) {
    md += "\n## Bad inputs\n\n| origin | kind | task | sample | message |\n|---|---|---|---:|---|\n";
    for (const auto& b : r["bad_inputs"])
      md += "| " + b.value("origin", "") + " | " + b.value("kind", "") + " | " +
            (b["task"].is_string() ? b["task"].get<std::string>() : "") + " | " +
            (b["sample"].is_number() ? std::to_string(b["sample"].get<int>()) : "") + " | " +
            b.value("message", "") + " |\n";
  }
  if (r.contains("plots") && !r["plots"].value("svg", json::array()).empty()) {
    md += "\n## fast_p against p\n\n";
    for (const auto& f : r["plots"]["svg"]) md += "![" + f.get<std::string>() + "](" + f.get<std::string>() + ")\n";
  }
  return md;
}

namespace {
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string cand = dirs.substr(start, end - start) + "/" + name;
    if (end > start && access(cand.c_str(), X_OK) == 0) return cand;
    start = end + 1;
  }
  return "";
}

// Writes <prefix><scope>.svg for each scope (and .png with rsvg-convert) into `plots`.
bool WritePlots(const std::string& dir, const json& curves, const std::string& prefix, const std::string& what,
                json& plots, std::string* err) {
  std::string rsvg = FindOnPath("rsvg-convert");
  if (rsvg.empty()) plots["png_skipped"] = "rsvg-convert is not on PATH (Debian: librsvg2-bin)";
  for (const auto& [scope, by_k] : curves.items()) {
    PlotSpec spec{"fast_p vs p" + what + " (" + scope + ")", "speedup threshold p", "fast_p@k", 0, 2.5, 0, 1};
    std::vector<Series> series;
    for (const auto& [k, pts] : by_k.items()) {
      Series s{"k = " + k, {}};
      for (const auto& pt : pts)
        s.points.push_back({pt[0].get<double>(), pt[1].is_number() ? pt[1].get<double>() : NAN});
      series.push_back(std::move(s));
    }
    std::string name = prefix + scope;
    if (!util::WriteFileAtomic(dir + "/" + name + ".svg", LinePlotSvg(spec, series), err)) return false;
    plots["svg"].push_back(name + ".svg");
    if (rsvg.empty()) continue;
    auto r = util::RunProcess({{rsvg, "-o", dir + "/" + name + ".png", dir + "/" + name + ".svg"}, {}, {}, "", false, "", 60});
    if (r.end == util::ProcessEnd::kExited && r.exit_code == 0) plots["png"].push_back(name + ".png");
    else plots["png_skipped"] = "rsvg-convert failed: " + r.stderr_tail.substr(0, 300);
  }
  return true;
}
}  // namespace

bool WriteReport(const std::string& out_dir, const ReportInput& in, json* report, std::string* err) {
  *report = BuildReport(in, UtcNow());
  json plots = {{"svg", json::array()}, {"png", json::array()}};
  if (!WritePlots(out_dir, (*report)["fast_p_curves"], "fast_p_", "", plots, err)) return false;
  if (report->contains("fast_p_curves_vs_compile") &&
      !WritePlots(out_dir, (*report)["fast_p_curves_vs_compile"], "fast_p_vs_compile_", " against torch.compile",
                  plots, err))
    return false;
  (*report)["plots"] = plots;
  return util::WriteFileAtomic(out_dir + "/report.json", report->dump(2) + "\n", err) &&
         util::WriteFileAtomic(out_dir + "/report.md", ReportMarkdown(*report), err);
}

}  // namespace kz::scoring
