#include "verify/summary.h"
#include "verify/finding.h"

#include <cstdio>
#include <filesystem>

namespace kz::verify {
using nlohmann::json;
namespace {
std::string Base(const json& v, const char* which) {
  return std::filesystem::path(v[which].value("path", "?")).filename().string();
}
std::string Fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}
std::string TimingLine(const json& t) {
  const json& r = t["reference"];
  const json& c = t["candidate"];
  return "  timing: candidate " + Fmt("%.1f", c.value("median_us", 0.0)) + " µs (IQR " +
         Fmt("%.1f", c.value("q1_us", 0.0)) + "–" + Fmt("%.1f", c.value("q3_us", 0.0)) +
         ", " + std::to_string(c.value("calls", 0)) + " calls) vs reference " +
         Fmt("%.1f", r.value("median_us", 0.0)) + " µs: speedup " +
         Fmt("%.2f", t.value("speedup", 0.0)) + "×\n";
}
// "  trace: pass, 8 calls, candidate kernels' share >= 97% (strict)".
std::string TraceLine(const json& t) {
  std::string out = "  trace: " + t.value("status", "") + ", " +
                    std::to_string(t.value("calls", json::array()).size()) + " calls";
  json worst = t.value("worst_share", json());
  if (worst.is_number()) out += Fmt(", candidate kernels' share >= %.0f%%", 100 * worst.get<double>());
  return out + " (" + t.value("policy", "?") + ")\n";
}
}  // namespace

std::string Summarize(const json& v) {
  std::string out = Base(v, "candidate") + " vs " + Base(v, "task") + " [" +
                    v.value("backend", "?") + "]: " + v.value("status", "?");
  if (!v.value("reason", "").empty()) out += " — " + v.value("reason", "");
  out += "\n";
  const json& d = v["device"];
  if (d.is_object() && d.contains("kind"))
    out += "  device: " + (d.value("kind", "") == "cuda" ? d.value("name", "GPU") : std::string("CPU")) + "\n";
  const json& st = v["stages"];
  if (st.contains("compile") && st["compile"].contains("libraries")) {
    for (const auto& l : st["compile"]["libraries"])
      out += "  compile: " + l.value("name", "") + " (" + l.value("cache", "") + ", " +
             Fmt("%.1f", l.value("seconds", 0.0)) + " s)\n";
  }
  if (st.contains("correctness")) {
    const json& c = st["correctness"];
    out += "  correctness: " + c.value("status", "") + ", " + std::to_string(c.value("trials_passed", 0)) +
           "/" + std::to_string(c.value("trials_run", 0)) + " trials passed\n";
  }
  if (st.contains("trace") && st["trace"].is_object() &&
      (st["trace"].value("status", "") == "pass" || st["trace"].value("status", "") == "reject"))
    out += TraceLine(st["trace"]);
  if (st.contains("timing") && st["timing"].value("status", "") == "ok") out += TimingLine(st["timing"]);
  if (v.contains("error") && v["error"].is_object() && v["error"].contains("message")) {
    std::string msg = v["error"].value("message", "");
    if (msg.size() > 1500) msg = msg.substr(0, 1500) + "\n[...]";
    if (msg != v.value("reason", "")) out += "  error: " + msg + "\n";
  }
  if (st.contains("screen"))
    for (const auto& f : st["screen"].value("findings", json::array()))
      if (f.value("severity", "") == "warn")
        out += "  screen warning: [" + f.value("rule", "") + "] " + FindingLocation(f) + ": " +
               f.value("message", "") + "\n";
  for (const auto& f : v.value("flags", json::array())) out += "  flag: " + f.get<std::string>() + "\n";
  for (const auto& n : v["not_checked"]) out += "  not checked: " + n.get<std::string>() + "\n";
  return out;
}

}  // namespace kz::verify
