#include "optimize/suite_summary.h"

#include <cstdio>
#include <fstream>

namespace kz::optimize {
using json = nlohmann::json;

namespace {
json ReadJson(const std::string& path) {
  std::ifstream in(path);
  json j = json::parse(in, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}
std::string Fmt(double v, const char* f = "%.3f") {
  char b[32];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
}  // namespace

json SummariseSuite(const std::vector<SuiteTaskResult>& tasks) {
  static const std::vector<std::pair<std::string, double>> kP = {{"0", 0}, {"1", 1}, {"1.5", 1.5}, {"2", 2}};
  json rows = json::array();
  std::vector<int> fast(kP.size(), 0);
  json budget;
  for (const auto& t : tasks) {
    json state = ReadJson(t.dir + "/state.json"), run = ReadJson(t.dir + "/run.json");
    if (budget.is_null() && run.contains("budget")) budget = run["budget"];
    json best;  // the kept correct record with the highest lower bound
    std::ifstream in(t.dir + "/candidates.jsonl");
    for (std::string line; std::getline(in, line);) {
      json r = json::parse(line, nullptr, false);
      if (!r.is_object() || r.value("status", "") != "correct" || !r.value("kept", false)) continue;
      auto lo = [](const json& x) {
        const json& ci = x.contains("speedup_ci95") ? x["speedup_ci95"] : json();
        return ci.is_array() && ci.size() == 2 && ci[0].is_number() ? ci[0].get<double>() : 0.0;
      };
      if (best.is_null() || lo(r) > lo(best)) best = r;
    }
    bool solved = !best.is_null() && t.exit_code == 0;
    double speedup = solved ? best.value("speedup", 0.0) : 0.0;
    for (size_t i = 0; i < kP.size(); ++i)
      if (solved && (kP[i].second == 0 || speedup > kP[i].second)) ++fast[i];
    json spent = state.contains("budget") ? state["budget"].value("spent", json::object()) : json::object();
    rows.push_back({{"task", t.id}, {"exit", t.exit_code}, {"stop_reason", state.value("stop_reason", "")},
                    {"best", solved ? best.value("id", "") : ""}, {"speedup", speedup},
                    {"speedup_ci95", solved ? best.value("speedup_ci95", json::array()) : json::array()},
                    {"iterations", state.value("next_iteration", 0)}, {"spent", spent}});
  }
  json fp = json::object();
  for (size_t i = 0; i < kP.size(); ++i) fp[kP[i].first] = tasks.empty() ? 0.0 : double(fast[i]) / double(tasks.size());
  return {{"format", "kz.optimize.suite/1"}, {"tasks", rows}, {"fast_p", fp}, {"budget_per_task", budget}};
}

std::string SuiteMarkdown(const json& s) {
  std::string md = "# kz optimize suite\n\nfast_p at equal budget per task: ";
  for (const auto& [p, v] : s["fast_p"].items()) md += "fast_" + p + " " + Fmt(v.get<double>(), "%.2f") + "  ";
  md += "\n\n| task | exit | stop | iterations | best | speedup | interval | tokens | GPU-s |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : s["tasks"]) {
    const json& ci = r["speedup_ci95"];
    const json& sp = r["spent"];
    md += "| " + r["task"].get<std::string>() + " | " + std::to_string(r["exit"].get<int>()) + " | " +
          r["stop_reason"].get<std::string>() + " | " + std::to_string(r["iterations"].get<int>()) + " | " +
          r["best"].get<std::string>() + " | " + Fmt(r["speedup"].get<double>()) + " | " +
          (ci.size() == 2 ? "[" + Fmt(ci[0].get<double>()) + ", " + Fmt(ci[1].get<double>()) + "]" : "") + " | " +
          Fmt(sp.value("tokens", 0.0), "%.0f") + " | " + Fmt(sp.value("gpu_s", 0.0), "%.1f") + " |\n";
  }
  return md;
}

}  // namespace kz::optimize
