// kz task check's rules (task_rules.h) over hand-written facts of the child (task_facts.h):
// each refusal, each warning, the summary, the exact formatting of numbers and sizes, and
// malformed facts (a clear error, never a crash).
#include "verify/task_rules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::verify {
namespace {
using nlohmann::json;

json Group(uint64_t count, uint64_t bytes) { return {{"count", count}, {"bytes", bytes}}; }

// The facts of an elementwise task on a CPU that the checks all pass.
json GoodFacts() {
  json fp = {{"method", "meta"},      {"reason", nullptr},          {"inputs", Group(1, 65536)},
             {"params", Group(0, 0)}, {"outputs", Group(1, 65536)}, {"total_bytes", 131072},
             {"known_bytes", 131072}};
  json budget = {{"rule", kUpFrontRule},
                 {"need_bytes", 393216},
                 {"available_bytes", 8ull << 30},
                 {"complete", true},
                 {"fits", true}};
  json device = {
      {"kind", "cpu"}, {"name", "AMD EPYC"}, {"available_bytes", 8ull << 30}, {"available_source", "mem_available"}};
  json ref = {{"seconds", 0.0012346},
              {"first_call_s", 0.02},
              {"peak_bytes", 200000},
              {"peak_method", "vmhwm"},
              {"inputs_generated", "host"},
              {"inputs_fallback_reason", nullptr},
              {"inputs", Group(1, 65536)},
              {"outputs", Group(1, 65536)},
              {"writes_inputs", false},
              {"inputs_reproducible", true},
              {"repeat", "equal"},
              {"max_abs_diff", 0.0},
              {"reseeded", nullptr},
              {"deterministic", true},
              {"inputs_vary", true},
              {"input_sensitive", true},
              {"sensitivity_max_abs_diff", 0.93},
              {"finite", true},
              {"weak_task", nullptr},
              {"check_peak_bytes", 210000}};
  return {{"version", 2},     {"stop", nullptr},  {"footprint", fp}, {"budget", budget},
          {"device", device}, {"reference", ref}, {"seconds", 1.5}};
}

json Judge(const json& facts) {
  std::string err;
  auto tc = TaskCheckFromFacts(facts, &err);
  EXPECT_TRUE(tc) << err;
  return tc ? *tc : json();
}

std::string MalformedError(const json& facts) {
  std::string err;
  EXPECT_FALSE(TaskCheckFromFacts(facts, &err)) << facts.dump();
  EXPECT_FALSE(err.empty());
  return err;
}

// The check named `name` ({} when absent).
json Check(const json& tc, const std::string& name) {
  for (const auto& c : tc["checks"])
    if (c["check"] == name) return c;
  return json::object();
}

std::vector<std::string> Names(const json& tc) {
  std::vector<std::string> out;
  for (const auto& c : tc["checks"]) out.push_back(c["check"]);
  return out;
}

TEST(TaskRulesFormat, HumanBytesAsPython) {
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(10), "10 B");
  EXPECT_EQ(HumanBytes(json(0)), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1024), "1.0 KiB");
  EXPECT_EQ(HumanBytes(65536), "64.0 KiB");
  EXPECT_EQ(HumanBytes(1048575), "1024.0 KiB");  // 1023.999 rounds up, the unit stays
  EXPECT_EQ(HumanBytes(4 * 10000000000000ull), "36.4 TiB");
  EXPECT_EQ(HumanBytes(1ull << 60), "1024.0 PiB");  // no unit past PiB
  EXPECT_EQ(HumanBytes(UINT64_MAX), "16384.0 PiB");
  EXPECT_EQ(HumanBytes(-2048), "-2.0 KiB");
  EXPECT_EQ(HumanBytes(1023.9), "1023 B");  // int() truncates
  EXPECT_EQ(HumanBytes(json()), "?");
  EXPECT_EQ(HumanBytes("12"), "?");
}

TEST(TaskRulesFormat, FormatGAsPython) {
  EXPECT_EQ(FormatG(1.2345, 4), "1.234");  // the binary value is below 1.2345: rounds down
  EXPECT_EQ(FormatG(1.2346, 4), "1.235");
  EXPECT_EQ(FormatG(0.0, 4), "0");
  EXPECT_EQ(FormatG(-0.0, 3), "-0");
  EXPECT_EQ(FormatG(1e-5, 3), "1e-05");
  EXPECT_EQ(FormatG(123456, 4), "1.235e+05");
  EXPECT_EQ(FormatG(1e16, 3), "1e+16");
  EXPECT_EQ(FormatG(2.5, 4), "2.5");
  EXPECT_EQ(FormatG(std::nan(""), 3), "nan");
  EXPECT_EQ(FormatG(-std::nan(""), 3), "nan");  // C prints -nan
  EXPECT_EQ(FormatG(INFINITY, 3), "inf");
}

TEST(TaskRules, AllPassAndTheSummary) {
  json tc = Judge(GoodFacts());
  EXPECT_EQ(tc["version"], 1);
  EXPECT_EQ(tc["status"], "ok");
  EXPECT_TRUE(tc["error"].is_null());
  EXPECT_EQ(tc["flags"], json::array());
  EXPECT_EQ(Names(tc),
            (std::vector<std::string>{"load", "footprint", "fits", "reference_runs", "deterministic", "input_sensitive",
                                      "finite", "weak_task", "fits_measured", "footprint_matches"}));
  for (const auto& c : tc["checks"]) EXPECT_EQ(c["status"], "pass") << c.dump();
  EXPECT_EQ(Check(tc, "load")["detail"], "Model, get_inputs and get_init_inputs defined");
  EXPECT_EQ(Check(tc, "footprint")["detail"], "meta: inputs 64.0 KiB, params 0 B, outputs 64.0 KiB");
  EXPECT_EQ(Check(tc, "fits")["detail"],
            "needs 384.0 KiB = 3 x (inputs + outputs) + 2 x params, 8.0 GiB available (mem_available)");
  EXPECT_EQ(Check(tc, "reference_runs")["detail"],
            "1.235 ms a call (first 20 ms), peak 195.3 KiB; inputs made on the host");
  EXPECT_EQ(Check(tc, "fits_measured")["detail"],
            "needs 451.3 KiB = reference peak + 2 x (inputs + outputs) + params, 8.0 GiB available");
  EXPECT_EQ(tc["budget"]["measured_need_bytes"], 200000 + 2 * 131072);
  EXPECT_EQ(tc["budget"]["measured_rule"], kMeasuredRule);
  EXPECT_EQ(tc["reason"],
            "kz can judge this task on AMD EPYC: 1.235 ms a call, peak 195.3 KiB, needs 451.3 KiB of 8.0 GiB");
  EXPECT_EQ(tc["seconds"], 1.5);
  EXPECT_EQ(tc["reference"], GoodFacts()["reference"]);
  EXPECT_EQ(tc["device"], GoodFacts()["device"]);
}

TEST(TaskRules, LoadFailure) {
  json err = {{"kind", "python_syntax"}, {"message", "invalid syntax"}, {"traceback", nullptr}, {"line", 13}};
  json facts = {{"version", 2},
                {"stop", {{"at", "load"}, {"reason", "task: syntax error (line 13)"}, {"error", err}}},
                {"footprint", nullptr},
                {"budget", nullptr},
                {"device", json::object()},
                {"reference", nullptr},
                {"seconds", 0.1}};
  json tc = Judge(facts);
  EXPECT_EQ(tc["status"], "invalid_task");
  EXPECT_EQ(tc["reason"], "task: syntax error (line 13)");
  EXPECT_EQ(tc["error"], err);
  EXPECT_EQ(tc["checks"], json::array({{{"check", "load"}, {"status", "fail"}, {"detail", tc["reason"]}}}));
  EXPECT_TRUE(tc["footprint"].is_null());
  EXPECT_EQ(tc["device"], json::object());
}

TEST(TaskRules, UpFrontRefusal) {
  json f = GoodFacts();
  f["stop"] = {{"at", "fits"}};
  f["reference"] = nullptr;
  f["footprint"]["inputs"]["bytes"] = 40000000000000ull;
  f["budget"]["need_bytes"] = 3 * 40000065536ull * 1000;
  f["budget"]["fits"] = false;
  json tc = Judge(f);
  EXPECT_EQ(tc["status"], "invalid_task");
  EXPECT_EQ(tc["flags"], json::array({"too_large"}));
  EXPECT_TRUE(tc["error"].is_null());
  EXPECT_EQ(Names(tc), (std::vector<std::string>{"load", "footprint", "fits"}));
  EXPECT_EQ(tc["reason"],
            "fits: needs 109.1 TiB = 3 x (inputs + outputs) + 2 x params, more than the 8.0 GiB available "
            "(mem_available)");
  EXPECT_FALSE(tc["budget"].contains("measured_need_bytes"));
  f["budget"]["complete"] = false;
  EXPECT_NE(Judge(f)["reason"].get<std::string>().find("params (a lower bound: outputs unknown), more than"),
            std::string::npos);
}

TEST(TaskRules, UnknownFootprintWarnsAndSkipsFits) {
  json f = GoodFacts();
  f["footprint"] = {{"method", "unknown"},
                    {"reason", "data-dependent shape"},
                    {"inputs", nullptr},
                    {"total_bytes", nullptr},
                    {"known_bytes", 0}};
  f["budget"]["complete"] = false, f["budget"]["fits"] = nullptr, f["budget"]["need_bytes"] = 0;
  json tc = Judge(f);
  EXPECT_EQ(tc["status"], "ok");
  EXPECT_EQ(Check(tc, "footprint"), json({{"check", "footprint"},
                                          {"status", "warn"},
                                          {"detail", "not measurable before allocation: data-dependent shape"}}));
  EXPECT_EQ(Check(tc, "fits")["status"], "skip");
  EXPECT_EQ(Check(tc, "fits")["detail"],
            "footprint incomplete (needs 0 B = 3 x (inputs + outputs) + 2 x params known so far); the run's own "
            "limits apply");
  EXPECT_EQ(Check(tc, "footprint_matches"), json::object());
  EXPECT_EQ(tc["flags"], json::array({"footprint_unknown"}));
  EXPECT_EQ(tc["reason"],
            "kz can judge this task on AMD EPYC: 1.235 ms a call, peak 195.3 KiB, needs 451.3 KiB of "
            "8.0 GiB; flags: footprint_unknown");
}

TEST(TaskRules, ReferenceFailureAndOutOfMemory) {
  json f = GoodFacts();
  json err = {{"kind", "invalid_task"}, {"message", "m"}, {"traceback", "t"}};
  f["reference"] = nullptr;
  f["stop"] = {{"at", "reference"},
               {"reason", "task: Model forward raised RuntimeError: x"},
               {"error", err},
               {"out_of_memory", false}};
  json tc = Judge(f);
  EXPECT_EQ(tc["status"], "invalid_task");
  EXPECT_EQ(tc["reason"], "task: Model forward raised RuntimeError: x");
  EXPECT_EQ(tc["error"], err);
  EXPECT_EQ(tc["checks"].back(), json({{"check", "reference_runs"},
                                       {"status", "fail"},
                                       {"detail", "task: Model forward raised RuntimeError: x"}}));
  EXPECT_EQ(tc["flags"], json::array());
  f["stop"]["out_of_memory"] = true;
  EXPECT_EQ(Judge(f)["flags"], json::array({"too_large"}));
}

TEST(TaskRules, InputsNotReproducible) {
  json f = GoodFacts();
  f["reference"]["inputs_reproducible"] = false;
  json tc = Judge(f);
  EXPECT_EQ(tc["reason"], "inputs_reproducible: get_inputs() gives other inputs under the same seed");
  EXPECT_EQ(tc["flags"], json::array({"nondeterministic"}));
  EXPECT_EQ(tc["checks"].back()["status"], "fail");
  EXPECT_FALSE(tc["budget"].contains("measured_need_bytes"));  // stopped before the measured rule
}

TEST(TaskRules, RandomForwardAndIrreproducibleForward) {
  json f = GoodFacts();
  f["reference"]["repeat"] = "differ", f["reference"]["reseeded"] = "equal", f["reference"]["max_abs_diff"] = 2.0;
  json tc = Judge(f);
  EXPECT_EQ(tc["reason"],
            "deterministic: the forward draws random numbers (dropout in training mode, randperm, "
            "...): its output changes with the RNG state (max |diff| 2)");
  EXPECT_EQ(tc["flags"], json::array({"nondeterministic"}));
  f["reference"]["reseeded"] = "differ", f["reference"]["max_abs_diff"] = nullptr;
  EXPECT_EQ(Judge(f)["reason"],
            "deterministic: two calls on the same inputs, even re-seeded, give different outputs (max |diff| ?)");
}

TEST(TaskRules, RoundingDifferencesWarn) {
  json f = GoodFacts();
  f["reference"]["repeat"] = "close", f["reference"]["max_abs_diff"] = 1.23456e-7;
  json tc = Judge(f);
  EXPECT_EQ(tc["status"], "ok");
  EXPECT_EQ(Check(tc, "deterministic"),
            json({{"check", "deterministic"},
                  {"status", "warn"},
                  {"detail",
                   "not bitwise reproducible, within the verifier's tolerance (max |diff| 1.23e-07; "
                   "reduction order or atomics)"}}));
  EXPECT_EQ(tc["flags"], json::array({"not_bitwise_reproducible"}));
}

TEST(TaskRules, InputInsensitiveWordings) {
  json f = GoodFacts();
  f["reference"]["input_sensitive"] = false, f["reference"]["sensitivity_max_abs_diff"] = 0.0;
  EXPECT_EQ(Check(Judge(f), "input_sensitive")["detail"],
            "the output does not depend on the inputs: outputs for two seeds are identical");
  f["reference"]["inputs_vary"] = false, f["reference"]["sensitivity_max_abs_diff"] = 5e-6;
  json tc = Judge(f);
  EXPECT_EQ(Check(tc, "input_sensitive")["detail"],
            "get_inputs gives the same inputs for every seed: outputs for two seeds are within the verifier's "
            "tolerance (max |diff| 5e-06)");
  EXPECT_EQ(Check(tc, "input_sensitive")["status"], "warn");
  EXPECT_EQ(tc["flags"], json::array({"input_insensitive"}));
}

TEST(TaskRules, NonFiniteAndWeakOutputsWarnInOrder) {
  json f = GoodFacts();
  f["reference"]["finite"] = false, f["reference"]["weak_task"] = "the output is near-constant (std 0)";
  f["reference"]["input_sensitive"] = false;
  json tc = Judge(f);
  EXPECT_EQ(tc["status"], "ok");
  EXPECT_EQ(Check(tc, "finite")["detail"], "the output holds NaN or Inf");
  EXPECT_EQ(Check(tc, "weak_task")["detail"], "the output is near-constant (std 0)");
  EXPECT_EQ(tc["flags"], json::array({"input_insensitive", "non_finite", "weak_task"}));
  EXPECT_NE(tc["reason"].get<std::string>().find("; flags: input_insensitive, non_finite, weak_task"),
            std::string::npos);
}

TEST(TaskRules, FallbackNoteAndDeviceLabel) {
  json f = GoodFacts();
  f["reference"]["inputs_fallback_reason"] = "get_inputs raised on cuda";
  f["reference"]["inputs_generated"] = "host";
  f["device"] = {{"kind", "cuda"}, {"name", nullptr}, {"available_source", nullptr}};
  json tc = Judge(f);
  EXPECT_NE(Check(tc, "reference_runs")["detail"].get<std::string>().find(
                "inputs made on the host (get_inputs raised on cuda)"),
            std::string::npos);
  EXPECT_NE(tc["reason"].get<std::string>().find("on cuda:"), std::string::npos);
  EXPECT_NE(Check(tc, "fits")["detail"].get<std::string>().find("available (None)"), std::string::npos);
}

TEST(TaskRules, MeasuredRuleRefusesOrSkips) {
  json f = GoodFacts();
  f["reference"]["peak_bytes"] = 9ull << 30;
  json tc = Judge(f);
  EXPECT_EQ(tc["status"], "invalid_task");
  EXPECT_EQ(tc["reason"],
            "fits_measured: needs 9.0 GiB = reference peak + 2 x (inputs + outputs) + params, 8.0 GiB "
            "available");
  EXPECT_EQ(tc["flags"], json::array({"too_large"}));
  EXPECT_EQ(tc["budget"]["measured_need_bytes"], (9ull << 30) + 262144);
  f["budget"]["available_bytes"] = nullptr, f["budget"]["fits"] = nullptr;
  tc = Judge(f);
  EXPECT_EQ(tc["status"], "ok");
  EXPECT_EQ(Check(tc, "fits_measured")["status"], "skip");
  EXPECT_NE(tc["reason"].get<std::string>().find("needs 9.0 GiB of ?"), std::string::npos);
}

TEST(TaskRules, FootprintMismatchWarnsOnce) {
  json f = GoodFacts();
  f["reference"]["inputs"] = Group(2, 1536);
  f["reference"]["outputs"] = Group(3, 10);
  json tc = Judge(f);
  EXPECT_EQ(Check(tc, "footprint_matches"),
            json({{"check", "footprint_matches"},
                  {"status", "warn"},
                  {"detail", "inputs: footprint 1 tensors, 64.0 KiB; real 2, 1.5 KiB"}}));
  EXPECT_EQ(tc["flags"], json::array({"footprint_mismatch"}));
}

TEST(TaskRules, WithoutResultKeepsTheFootprintEvent) {
  json f = GoodFacts();
  std::vector<json> events = {
      {{"stage", "footprint"},
       {"data", {{"footprint", f["footprint"]}, {"budget", f["budget"]}, {"device", f["device"]}}}}};
  json tc = TaskCheckWithoutResult(events, "timeout", "the check timed out after 30 s");
  EXPECT_EQ(tc["status"], "timeout");
  EXPECT_EQ(tc["error"], json({{"kind", "timeout"}, {"message", "the check timed out after 30 s"}}));
  EXPECT_EQ(Names(tc), (std::vector<std::string>{"load", "footprint", "fits", "reference_runs"}));
  EXPECT_EQ(tc["checks"].back()["status"], "fail");
  EXPECT_EQ(tc["footprint"]["method"], "meta");
  EXPECT_FALSE(tc.contains("seconds"));
  json none = TaskCheckWithoutResult({}, "invalid_task", "task: killed");
  EXPECT_EQ(Names(none), (std::vector<std::string>{"reference_runs"}));
  EXPECT_EQ(none["error"]["kind"], "crash");
  EXPECT_TRUE(none["footprint"].is_null());
  // A malformed event counts as none.
  events[0]["data"]["budget"]["need_bytes"] = -1;
  EXPECT_EQ(Names(TaskCheckWithoutResult(events, "timeout", "t")), (std::vector<std::string>{"reference_runs"}));
}

TEST(TaskFactsMalformed, ClearErrors) {
  EXPECT_EQ(MalformedError(json::array()), "task facts: expected an object");
  json f = GoodFacts();
  f["version"] = 1;
  EXPECT_EQ(MalformedError(f), "task facts: unknown version 1");
  f = GoodFacts(), f.erase("footprint");
  EXPECT_EQ(MalformedError(f), "footprint.method: expected one of meta | fake | unknown");
  f = GoodFacts(), f["budget"]["need_bytes"] = -5;
  EXPECT_EQ(MalformedError(f), "budget.need_bytes: expected a non-negative integer");
  f = GoodFacts(), f["budget"]["need_bytes"] = 1.5;
  EXPECT_EQ(MalformedError(f), "budget.need_bytes: expected a non-negative integer");
  f = GoodFacts(), f["footprint"]["inputs"]["count"] = "1";
  EXPECT_EQ(MalformedError(f), "footprint.inputs.count: expected a non-negative integer");
  f = GoodFacts(), f["reference"]["seconds"] = -1;
  EXPECT_EQ(MalformedError(f), "reference.seconds: expected a non-negative number");
  f = GoodFacts(), f["reference"]["repeat"] = "same";
  EXPECT_EQ(MalformedError(f), "reference.repeat: expected one of equal | close | differ");
  f = GoodFacts(), f["reference"]["repeat"] = "close", f["reference"]["max_abs_diff"] = nullptr;
  EXPECT_EQ(MalformedError(f), "reference.max_abs_diff: expected a number when repeat is close");
  f = GoodFacts(), f["reference"].erase("finite");
  EXPECT_EQ(MalformedError(f), "reference.finite: expected true or false");
  f = GoodFacts(), f["reference"]["weak_task"] = 3;
  EXPECT_EQ(MalformedError(f), "reference.weak_task: expected a string");
  f = GoodFacts(), f["device"] = "cpu";
  EXPECT_EQ(MalformedError(f), "device: expected an object");
  f = GoodFacts(), f["reference"] = nullptr;
  EXPECT_EQ(MalformedError(f), "reference: expected an object when the child did not stop");
  f = GoodFacts(), f["stop"] = {{"at", "elsewhere"}};
  EXPECT_EQ(MalformedError(f), "stop.at: expected one of load | fits | reference");
  f = GoodFacts(), f["stop"] = {{"at", "reference"}, {"reason", "r"}, {"error", nullptr}};
  EXPECT_EQ(MalformedError(f), "stop.out_of_memory: expected true or false");
  f = GoodFacts(), f["stop"] = {{"at", "load"}, {"reason", 7}};
  EXPECT_EQ(MalformedError(f), "stop.reason: expected a string");
  f = GoodFacts(), f["stop"] = "load";
  EXPECT_EQ(MalformedError(f), "stop: expected an object or null");
  f = GoodFacts(), f["seconds"] = "fast";
  EXPECT_EQ(MalformedError(f), "task facts.seconds: expected a non-negative number");
}

TEST(TaskFactsMalformed, StopMustAgreeWithTheBudget) {
  json f = GoodFacts();
  f["stop"] = {{"at", "fits"}}, f["reference"] = nullptr;
  EXPECT_EQ(MalformedError(f), "stop: at fits, but budget.fits is not false");
  f = GoodFacts(), f["budget"]["fits"] = false;
  EXPECT_EQ(MalformedError(f), "budget.fits is false, but the child went on");
}

TEST(TaskFactsMalformed, SizesThatOverflow) {
  json f = GoodFacts();
  f["reference"]["peak_bytes"] = UINT64_MAX;
  EXPECT_EQ(MalformedError(f), "reference: sizes too large (the measured need overflows 64 bits)");
  f = GoodFacts(), f["reference"]["inputs"]["bytes"] = (1ull << 63);
  EXPECT_EQ(MalformedError(f), "reference: sizes too large (the measured need overflows 64 bits)");
  f = GoodFacts(), f["budget"]["need_bytes"] = 1e30;  // beyond 64 bits: parsed as a double
  EXPECT_EQ(MalformedError(f), "budget.need_bytes: expected a non-negative integer");
}

}  // namespace
}  // namespace kz::verify
