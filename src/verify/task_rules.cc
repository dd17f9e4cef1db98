#include "verify/task_rules.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace kz::verify {
using nlohmann::json;

std::string FormatG(double x, int digits) {
  if (std::isnan(x)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string HumanBytes(const json& n) {
  if (!n.is_number()) return "?";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = n.get<double>();
  size_t power = 0;
  while (std::fabs(v) >= 1024 && power + 1 < std::size(units)) v /= 1024, ++power;
  char buf[64];
  if (power == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(v));  // int(): truncates
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[power]);
  return buf;
}

namespace {
std::string Bytes(uint64_t n) { return HumanBytes(json(n)); }
std::string Bytes(std::optional<uint64_t> n) { return n ? Bytes(*n) : "?"; }
std::string Num(std::optional<double> x) { return x ? FormatG(*x, 3) : "?"; }  // Python's _num
std::string Ms(double seconds) { return FormatG(seconds * 1e3, 4); }

// The object being built: checks in order; the first failing one decides.
struct Result {
  json checks = json::array(), flags = json::array();
  std::string status = "ok", reason;
  json error;

  void Add(const std::string& name, const char* check_status, const std::string& detail,
           const char* flag = nullptr) {
    checks.push_back({{"check", name}, {"status", check_status}, {"detail", detail}});
    if (flag) flags.push_back(flag);
  }
  // A failing check that stops: status invalid_task, reason "name: detail". Returns false.
  bool Refuse(const std::string& name, const std::string& detail, const char* flag) {
    Add(name, "fail", detail, flag);
    return Stop(name + ": " + detail, json());
  }
  bool Stop(const std::string& why, const json& err) {
    status = "invalid_task", reason = why, error = err;
    return false;
  }
};

// Checks `footprint` and `fits` (the up-front rule, which the child applied: a task that cannot
// fit stopped there, before allocating). False when refused.
bool FootprintChecks(const TaskFacts& f, Result* r) {
  const FootprintFacts& fp = *f.footprint;
  const BudgetFacts& b = *f.budget;
  if (fp.method == "unknown") {
    r->Add("footprint", "warn", "not measurable before allocation: " + fp.reason, "footprint_unknown");
  } else {
    r->Add("footprint", "pass",
           fp.method + ": inputs " + Bytes(fp.inputs.bytes) + ", params " + Bytes(fp.params.bytes) + ", outputs " +
               Bytes(fp.outputs.bytes));
  }
  std::string where = Bytes(b.available_bytes) + " available (" + f.device.available_source + ")";
  std::string numbers = "needs " + Bytes(b.need_bytes) + " = " + kUpFrontRule;
  if (b.fits == false) {
    std::string lower = b.complete ? "" : " (a lower bound: outputs unknown)";
    return r->Refuse("fits", numbers + lower + ", more than the " + where, "too_large");
  }
  if (!b.fits)
    r->Add("fits", "skip", "footprint incomplete (" + numbers + " known so far); the run's own limits apply");
  else
    r->Add("fits", "pass", numbers + ", " + where);
  return true;
}

// Checks `reference_runs`, `inputs_reproducible`, `deterministic`, `input_sensitive`; refuses
// a reference whose inputs or output depend on more than the seed.
bool DeterminismChecks(const ReferenceFacts& ref, Result* r) {
  std::string note = "inputs made on the " + ref.inputs_generated;
  if (!ref.inputs_fallback_reason.empty()) note += " (" + ref.inputs_fallback_reason + ")";
  r->Add("reference_runs", "pass",
         Ms(ref.seconds) + " ms a call (first " + Ms(ref.first_call_s) + " ms), peak " + Bytes(ref.peak_bytes) + "; " +
             note);
  if (!ref.inputs_reproducible)
    return r->Refuse("inputs_reproducible", "get_inputs() gives other inputs under the same seed", "nondeterministic");
  if (ref.repeat == "differ") {
    std::string why = ref.reseeded == "equal"
                          ? "the forward draws random numbers (dropout in training mode, randperm, ...): its output "
                            "changes with the RNG state"
                          : "two calls on the same inputs, even re-seeded, give different outputs";
    return r->Refuse("deterministic", why + " (max |diff| " + Num(ref.max_abs_diff) + ")", "nondeterministic");
  }
  if (ref.repeat == "close")
    r->Add("deterministic", "warn",
           "not bitwise reproducible, within the verifier's tolerance (max |diff| " + Num(ref.max_abs_diff) +
               "; reduction order or atomics)",
           "not_bitwise_reproducible");
  else
    r->Add("deterministic", "pass", "the same inputs give the same output under any RNG state");
  if (ref.input_sensitive) {
    r->Add("input_sensitive", "pass", "another seed gives another output");
    return true;
  }
  const auto& diff = ref.sensitivity_max_abs_diff;
  std::string same =
      diff && *diff == 0 ? "identical" : "within the verifier's tolerance (max |diff| " + Num(diff) + ")";
  std::string why =
      ref.inputs_vary ? "the output does not depend on the inputs" : "get_inputs gives the same inputs for every seed";
  r->Add("input_sensitive", "warn", why + ": outputs for two seeds are " + same, "input_insensitive");
  return true;
}

// Checks `finite` and `weak_task` (warnings: kz can judge, but says little).
void OutputChecks(const ReferenceFacts& ref, Result* r) {
  if (ref.finite)
    r->Add("finite", "pass", "every output is finite");
  else
    r->Add("finite", "warn", "the output holds NaN or Inf", "non_finite");
  if (!ref.weak_task.empty())
    r->Add("weak_task", "warn", ref.weak_task, "weak_task");
  else
    r->Add("weak_task", "pass", "the output is neither near zero nor near-constant");
}

// Checks `fits_measured` (the reference's peak plus the candidate's copies must fit; adds the
// measured rule to `budget`) and `footprint_matches` (the real sizes are the measured ones).
bool MeasuredChecks(const TaskFacts& f, json* budget, Result* r) {
  const ReferenceFacts& ref = *f.reference;
  uint64_t need = ref.peak_bytes + 2 * (ref.inputs.bytes + ref.outputs.bytes) + f.footprint->params.bytes;
  std::optional<uint64_t> available = f.budget->available_bytes;
  (*budget)["measured_rule"] = kMeasuredRule, (*budget)["measured_need_bytes"] = need;
  std::string detail = "needs " + Bytes(need) + " = " + kMeasuredRule + ", " + Bytes(available) + " available";
  if (available && need > *available) return r->Refuse("fits_measured", detail, "too_large");
  r->Add("fits_measured", available ? "pass" : "skip", detail);
  if (f.footprint->method == "unknown") return true;
  for (const char* key : {"inputs", "outputs"}) {
    bool in = key[0] == 'i';
    const SizeGroup& group = in ? f.footprint->inputs : f.footprint->outputs;
    const SizeGroup& real = in ? ref.inputs : ref.outputs;
    if (group.count != real.count || group.bytes != real.bytes) {
      r->Add("footprint_matches", "warn",
             std::string(key) + ": footprint " + std::to_string(group.count) + " tensors, " + Bytes(group.bytes) +
                 "; real " + std::to_string(real.count) + ", " + Bytes(real.bytes),
             "footprint_mismatch");
      return true;
    }
  }
  r->Add("footprint_matches", "pass", "the real inputs and outputs have the measured sizes");
  return true;
}

std::string Summary(const TaskFacts& f, const json& budget, const Result& r) {
  std::string text = "kz can judge this task on " + f.device.label + ": " + Ms(f.reference->seconds) +
                     " ms a call, peak " + Bytes(f.reference->peak_bytes) + ", needs " +
                     HumanBytes(budget["measured_need_bytes"]) + " of " + Bytes(f.budget->available_bytes);
  std::string flags;
  for (const auto& flag : r.flags) flags += (flags.empty() ? "" : ", ") + flag.get<std::string>();
  return text + (flags.empty() ? "" : "; flags: " + flags);
}

// The checks after `load`; false when one refused. `budget`: the child's, plus the measured rule.
bool Checks(const TaskFacts& f, bool finished, json* budget, Result* r) {
  if (!FootprintChecks(f, r) || !finished) return false;
  if (f.stop && f.stop->at == TaskStop::At::kReference) {
    r->Add("reference_runs", "fail", f.stop->reason, f.stop->out_of_memory ? "too_large" : nullptr);
    return r->Stop(f.stop->reason, f.stop->error);
  }
  if (!DeterminismChecks(*f.reference, r)) return false;
  OutputChecks(*f.reference, r);
  return MeasuredChecks(f, budget, r);
}
}  // namespace

json JudgeTask(const TaskFacts& f, bool finished) {
  Result r;
  json budget = f.raw_budget;
  if (f.stop && f.stop->at == TaskStop::At::kLoad) {
    r.Add("load", "fail", f.stop->reason);
    r.Stop(f.stop->reason, f.stop->error);
  } else {
    r.Add("load", "pass", "Model, get_inputs and get_init_inputs defined");
    if (Checks(f, finished, &budget, &r)) r.reason = Summary(f, budget, r);
  }
  return {{"version", 1},
          {"status", r.status},
          {"reason", r.reason},
          {"footprint", f.raw_footprint},
          {"budget", budget},
          {"device", f.raw_device.is_null() ? json::object() : f.raw_device},
          {"reference", f.raw_reference},
          {"checks", r.checks},
          {"flags", r.flags},
          {"error", r.error},
          {"seconds", f.seconds}};
}

std::optional<json> TaskCheckFromFacts(const json& facts, std::string* error) {
  auto parsed = ParseTaskFacts(facts, true, error);
  if (!parsed) return std::nullopt;
  return JudgeTask(*parsed, true);
}

json TaskCheckWithoutResult(const std::vector<json>& events, const std::string& status, const std::string& reason) {
  json tc = {{"version", 1},         {"footprint", nullptr},    {"budget", nullptr},     {"device", json::object()},
             {"reference", nullptr}, {"checks", json::array()}, {"flags", json::array()}};
  std::string ignored;
  for (const auto& e : events) {
    if (!e.is_object() || e.value("stage", "") != "footprint") continue;
    if (auto f = ParseTaskFacts(e.value("data", json()), false, &ignored)) tc = JudgeTask(*f, false);
  }
  tc.erase("seconds");
  tc["status"] = status, tc["reason"] = reason;
  tc["error"] = {{"kind", status == "timeout" ? "timeout" : "crash"}, {"message", reason}};
  tc["checks"].push_back({{"check", "reference_runs"}, {"status", "fail"}, {"detail", reason}});
  return tc;
}

}  // namespace kz::verify
