#include "verify/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "verify/trace_facts.h"

namespace kz::verify {
using nlohmann::json;

double RoundDecimals(double v, int digits) {
  if (!std::isfinite(v)) return v;
  char buf[512];  // a double below 1e308 with a few decimals fits
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return std::strtod(buf, nullptr);
}

double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * double(sorted.size() - 1);
  auto lo = size_t(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}

std::pair<double, double> MedianCi(const std::vector<double>& sorted, double z) {
  auto n = double(sorted.size());
  double half = z * std::sqrt(n) / 2;
  auto lo = std::max(std::floor(n / 2 - half) - 1, 0.0);  // 0-based
  auto hi = std::min(std::ceil(n / 2 + half), n - 1);
  return {sorted[size_t(lo)], sorted[size_t(hi)]};
}

namespace {
double Us(double ms) { return RoundDecimals(ms * 1000.0, 3); }

std::vector<double> Sorted(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs;
}

// Median over calls of host - event (zip of the two lists).
double MedianGap(const std::vector<double>& dev, const std::vector<double>& host) {
  std::vector<double> gaps;
  for (size_t i = 0; i < dev.size() && i < host.size(); ++i) gaps.push_back(host[i] - dev[i]);
  return Quantile(Sorted(std::move(gaps)), 0.5);
}

// A list of per-call times (ms) in [0, kMaxCallMs], 1..max_calls long, else nullopt + why.
std::optional<std::vector<double>> Times(const json& facts, const char* key, size_t max_calls, std::string* error) {
  auto it = facts.find(key);
  if (it == facts.end() || !it->is_array()) {
    *error = std::string(key) + ": expected a list of per-call times";
    return std::nullopt;
  }
  if (it->empty() || it->size() > max_calls) {
    *error =
        std::string(key) + ": " + std::to_string(it->size()) + " calls, expected 1 to " + std::to_string(max_calls);
    return std::nullopt;
  }
  std::vector<double> out;
  out.reserve(it->size());
  for (const auto& v : *it) {
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxCallMs)) {  // NaN fails too
      *error = std::string(key) + ": " + QuoteFact(v) + " is not a time in [0, " + QuoteFact(kMaxCallMs) + "] ms";
      return std::nullopt;
    }
    out.push_back(v.get<double>());
  }
  return out;
}

// The scalar facts: method, flush_bytes, stable, stop_rule; "" or why they are malformed.
std::string CheckScalars(const json& f) {
  if (!f.contains("stable") || !f["stable"].is_boolean()) return "stable: expected a boolean";
  if (!f.contains("flush_bytes") || !IsCount(f["flush_bytes"])) return "flush_bytes: expected a count";
  if (!f.contains("method") || !f["method"].is_string()) return "method: expected a string";
  static const char* const kRules[] = {"stable", "ci", "max_calls", "budget"};
  const json& rule = f.contains("stop_rule") ? f["stop_rule"] : json();
  if (!rule.is_string() || std::none_of(std::begin(kRules), std::end(kRules), [&](const char* r) { return rule == r; }))
    return "stop_rule: expected stable, ci, max_calls or budget";
  if (f.contains("rechecked_rounds") && !IsCount(f["rechecked_rounds"])) return "rechecked_rounds: expected a count";
  for (const char* key : {"recheck", "pool"})
    if (f.contains(key) && !f[key].is_object()) return std::string(key) + ": expected an object";
  return "";
}
}  // namespace

json SummarizeTimes(const std::vector<double>& ms) {
  std::vector<double> xs = Sorted(ms);
  double sum = 0;
  for (double x : xs) sum += x;  // in ascending order, as the worker summed
  auto [lo, hi] = MedianCi(xs);
  return {{"median_us", Us(Quantile(xs, 0.5))},
          {"median_ci95_us", {Us(lo), Us(hi)}},
          {"q1_us", Us(Quantile(xs, 0.25))},
          {"q3_us", Us(Quantile(xs, 0.75))},
          {"mean_us", Us(sum / double(xs.size()))},
          {"min_us", Us(xs.front())},
          {"calls", xs.size()}};
}

json HostCheck(const std::vector<double>& ref_ms, const std::vector<double>& cand_ms,
               const std::vector<double>& ref_host_ms, const std::vector<double>& cand_host_ms) {
  double ref_gap = MedianGap(ref_ms, ref_host_ms);
  double cand_gap = MedianGap(cand_ms, cand_host_ms);
  double limit = std::max(kHostGapRel * Quantile(Sorted(cand_ms), 0.5), kHostGapFloorMs);
  return {{"reference_gap_us", Us(ref_gap)},
          {"candidate_gap_us", Us(cand_gap)},
          {"excess_us", Us(cand_gap - ref_gap)},
          {"limit_us", Us(limit)},
          {"pass", cand_gap - ref_gap <= limit}};
}

std::optional<json> BuildTimingStage(const json& facts, size_t max_calls, std::string* error) {
  if (!facts.is_object()) {
    *error = "expected an object";
    return std::nullopt;
  }
  if (*error = CheckScalars(facts); !error->empty()) return std::nullopt;
  auto ref = Times(facts, "reference_ms", max_calls, error);
  auto cand = ref ? Times(facts, "candidate_ms", max_calls, error) : std::nullopt;
  auto ref_host = cand ? Times(facts, "reference_host_ms", max_calls, error) : std::nullopt;
  auto cand_host = ref_host ? Times(facts, "candidate_host_ms", max_calls, error) : std::nullopt;
  if (!cand_host) return std::nullopt;
  if (ref->size() != cand->size() || ref_host->size() != ref->size() || cand_host->size() != cand->size()) {
    *error = "the four lists of per-call times differ in length";
    return std::nullopt;
  }
  json r = SummarizeTimes(*ref), c = SummarizeTimes(*cand);
  double rmed = r["median_us"], cmed = c["median_us"];
  double rlo = r["median_ci95_us"][0], rhi = r["median_ci95_us"][1];
  double clo = c["median_ci95_us"][0], chi = c["median_ci95_us"][1];
  json stage = {
      {"status", "ok"},
      {"method", kTimingMethod},  // the child's own text is not copied
      {"reference", r},
      {"candidate", c},
      {"speedup", cmed > 0 ? json(RoundDecimals(rmed / cmed, 4)) : json(nullptr)},
      // Conservative: the two intervals' extremes (each side's own interval is ~95 %).
      {"speedup_ci95", clo > 0 ? json{RoundDecimals(rlo / chi, 4), RoundDecimals(rhi / clo, 4)} : json(nullptr)},
      {"stop_rule", facts["stop_rule"]},
      {"stable", facts["stable"]},
      {"flush_bytes", facts["flush_bytes"]},
      {"host_median_us",
       {{"reference", Us(Quantile(Sorted(*ref_host), 0.5))}, {"candidate", Us(Quantile(Sorted(*cand_host), 0.5))}}},
      {"host_check", HostCheck(*ref, *cand, *ref_host, *cand_host)}};
  for (const char* key : {"rechecked_rounds", "recheck", "pool"})
    if (facts.contains(key)) stage[key] = facts[key];
  return stage;
}

std::optional<std::string> HostMismatchReason(const json& stage) {
  const json& check = stage.is_object() && stage.contains("host_check") ? stage["host_check"] : json();
  if (!check.is_object() || !check.value("pass", json(true)).is_boolean() || check.value("pass", true))
    return std::nullopt;
  auto f = [&](const char* key) {
    char b[64];
    std::snprintf(b, sizeof b, "%.1f", check.value(key, 0.0));
    return std::string(b);
  };
  return "timing.host_mismatch: host wall time around a device-wide sync exceeds the CUDA-event time by " +
         f("candidate_gap_us") + " µs per call (median) vs " + f("reference_gap_us") +
         " µs for the reference: " + f("excess_us") + " µs more, limit " + f("limit_us") +
         " µs (GPU work the events on the caller's stream do not cover)";
}

}  // namespace kz::verify
