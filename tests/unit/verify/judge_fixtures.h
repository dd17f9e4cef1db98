// Verdict and timing fixtures shared by the judges' tests (run_judges_test.cc,
// judges_hostile_test.cc): a verdict in the shape the run child leaves before judging, and
// timing facts with constant samples so that the statistics are known exactly.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "verify/sample.h"
#include "verify/timing_stats.h"
#include "verify/verdict.h"

namespace kz::verify::judge_test {
using nlohmann::json;

// A Triton sample's verdict with `status` and `stages`, policy strict.
inline json Verdict(const std::string& status, const json& stages) {
  Sample s{"/t.py", "/c.py", "triton", std::nullopt, "c"};
  json v = NewVerdict(s, "triton", "task", "cand");
  v["policy"] = "strict";
  v["status"] = status;
  v["reason"] = "matched the reference on 5 trials";
  v["stages"] = stages;
  return v;
}

// Timing facts of n calls each: every reference call ref_ms, every candidate call cand_ms; host
// times 0.09 ms above the device's (the candidate's by cand_gap_ms).
inline json Measured(double ref_ms, double cand_ms, double cand_gap_ms = 0.09, size_t n = 30) {
  return {{"status", "measured"},
          {"method", kTimingMethod},
          {"stop_rule", "stable"},
          {"stable", true},
          {"flush_bytes", 268435456},
          {"reference_ms", std::vector<double>(n, ref_ms)},
          {"candidate_ms", std::vector<double>(n, cand_ms)},
          {"reference_host_ms", std::vector<double>(n, ref_ms + 0.09)},
          {"candidate_host_ms", std::vector<double>(n, cand_ms + cand_gap_ms)}};
}

}  // namespace kz::verify::judge_test
