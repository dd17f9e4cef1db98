#include "verify/feedback.h"

#include <cstdio>

#include "util/json_fields.h"
#include "verify/ncu_report.h"

namespace kz::verify {
using json = nlohmann::json;

namespace {
double Num(const json& j, const char* key) { return util::JsonNumber(j, key); }
std::string Str(const json& j, const char* key) { return util::JsonString(j, key); }
const json& At(const json& j, std::initializer_list<const char*> path) { return util::JsonAt(j, path); }
std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
// "roofline: memory-bound: 2.10 TB/s of 4.02 TB/s measured copy bandwidth (52 %); ...".
std::string RooflineLine(const json& r) {
  bool memory = Str(r, "bound") == "memory";
  std::string attained = memory ? Fmt("%.3g", Num(r, "attained_gbps") / 1e3) + " TB/s of " +
                                      Fmt("%.3g", Num(r, "ceiling_gbps") / 1e3) + " TB/s measured copy bandwidth"
                                : Fmt("%.3g", Num(r, "attained_tflops")) + " TFLOP/s of " +
                                      Fmt("%.3g", Num(r, "ceiling_tflops")) + " TFLOP/s measured matmul rate";
  return "roofline: " + Str(r, "bound") + "-bound: " + attained + " (" +
         Fmt("%.0f", 100 * Num(r, "fraction_of_ceiling")) + " %); intensity " +
         Fmt("%.3g", Num(r, "intensity_flop_per_byte")) + " FLOP/B, ridge " +
         Fmt("%.3g", Num(r, "ridge_flop_per_byte")) + "\n";
}
}  // namespace

SpeedupFacts ReadSpeedup(const json& verdict) {
  SpeedupFacts s;
  const json& t = At(verdict, {"stages", "timing"});
  if (Str(verdict, "status") != "correct" || !t.is_object() || !t.contains("speedup") || !t["speedup"].is_number())
    return s;
  s.timed = true;
  s.median = s.lo = s.hi = t["speedup"].get<double>();
  const json& ci = t.contains("speedup_ci95") ? t["speedup_ci95"] : json();
  if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
    s.lo = ci[0].get<double>();
    s.hi = ci[1].get<double>();
  }
  return s;
}

std::string Diagnose(const json& verdict, size_t max_chars) {
  std::string out = "status: " + Str(verdict, "status") + "\nreason: " + Str(verdict, "reason") + "\n";
  const json& err = At(verdict, {"error"});
  if (err.is_object() && !Str(err, "message").empty() && Str(err, "message") != Str(verdict, "reason"))
    out += "error (" + Str(err, "kind") + "):\n" + Str(err, "message") + "\n";
  const json& trials = At(verdict, {"stages", "correctness", "trials"});
  if (trials.is_array())
    for (const auto& t : trials) {
      if (!t.is_object() || t.value("pass", true)) continue;
      const json& outs = t.contains("outputs") ? t["outputs"] : json();
      for (size_t i = 0; outs.is_array() && i < outs.size(); ++i) {
        const json& o = outs[i];
        if (Num(o, "mismatched") <= 0 && Num(o, "nan_mismatch") <= 0) continue;
        out += "mismatch: output " + std::to_string(i) + " " + Fmt("%.0f", Num(o, "mismatched")) +
               " elements differ, max_abs_err " + Fmt("%.3g", Num(o, "max_abs_err")) + ", rel_l2 " +
               Fmt("%.3g", Num(o, "rel_l2")) + ", NaN mismatches " + Fmt("%.0f", Num(o, "nan_mismatch")) + "\n";
      }
      break;  // the first failing trial says enough
    }
  const json& checks = At(verdict, {"stages", "extra_checks", "checks"});
  if (checks.is_array())
    for (const auto& c : checks)
      if (c.is_object() && c.value("ran", false) && !c.value("pass", true))
        out += "extra check failed: " + Str(c, "check") + ": " + Str(c, "reason") + "\n";
  const json& t = At(verdict, {"stages", "timing"});
  if (t.is_object() && Str(t, "status") == "ok") {
    const json& c = t.contains("candidate") ? t["candidate"] : json();
    const json& r = t.contains("reference") ? t["reference"] : json();
    SpeedupFacts s = ReadSpeedup(verdict);
    out += "timing: candidate median " + Fmt("%.2f", Num(c, "median_us")) + " us, reference " +
           Fmt("%.2f", Num(r, "median_us")) + " us, speedup " + Fmt("%.3f", s.median) + " [" + Fmt("%.3f", s.lo) +
           ", " + Fmt("%.3f", s.hi) + "]\n";
    const json& roof = t.contains("roofline") ? t["roofline"] : json();
    if (roof.is_object()) out += RooflineLine(roof);
  }
  // ncu counters (kz optimize --ncu): a line per kernel, or why there are none (docs/optimize.md).
  if (verdict.is_object() && verdict.contains("profile") && verdict["profile"].is_object())
    out += std::string(verdict["profile"].value("available", false) ? "ncu counters:\n" : "") +
           ProfileFeedback(verdict["profile"]) + "\n";
  const json& calls = At(verdict, {"stages", "trace", "calls"});
  const json& kernels = calls.is_array() && !calls.empty() ? At(calls[0], {"kernels"}) : calls;
  if (kernels.is_array() && !kernels.empty()) {
    out += "launch trace of one forward:\n";
    for (size_t i = 0; i < kernels.size() && i < 6; ++i)
      out += "  " + Str(kernels[i], "name").substr(0, 100) + " (" + Str(kernels[i], "class") + ") x" +
             Fmt("%.0f", Num(kernels[i], "count")) + ", " + Fmt("%.1f", Num(kernels[i], "us")) + " us, stream " +
             At(kernels[i], {"stream"}).dump() + "\n";
  }
  if (out.size() > max_chars) {
    size_t cut = out.rfind('\n', max_chars);
    out = out.substr(0, cut == std::string::npos ? max_chars : cut) + "\n[... cut]\n";
  }
  return out;
}

}  // namespace kz::verify
