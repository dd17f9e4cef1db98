// Synthetic CUPTI records for the launch-trace judge's tests, in the shape the Python worker's
// tests used ({"kind", "name", "stream", "start_ns", ...}; absent numbers are 0), turned into
// the wire form of verify/trace_facts.h (names interned, records as lists).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/trace_facts.h"
#include "verify/trace_judge.h"

namespace kz::verify::trace_test {
using nlohmann::json;

inline constexpr uint64_t kUs = 1000;  // ns
inline constexpr uint64_t kCaller = 7;  // the caller's (current) stream id

inline json Rec(const std::string& kind, const std::string& name, double start_us, double end_us,
                uint64_t stream = kCaller, uint64_t graph = 0) {
  return {{"kind", kind}, {"name", name}, {"stream", stream}, {"start_ns", uint64_t(start_us * kUs)},
          {"end_ns", uint64_t(end_us * kUs)}, {"graph", graph}};
}

inline json Marker(double at_us, uint64_t stream = kCaller) { return Rec("marker", "kz marker", at_us, at_us + 1, stream); }

// `r` with extra fields set (correlation, bytes, ...).
inline json With(json r, const json& fields) {
  r.update(fields);
  return r;
}

// A window as the Python tests wrote it; `caller` < 0: unknown.
inline json Window(const std::vector<json>& records, const std::string& label = "trial 0", long long caller = kCaller,
                   uint64_t dropped = 0) {
  return {{"label", label}, {"records", records},
          {"caller_stream", caller < 0 ? json(nullptr) : json(caller)}, {"dropped", dropped}};
}

// A test window in the wire form the child sends.
inline json Wire(const json& w) {
  json out = w;
  json names = json::array(), rows = json::array();
  std::map<std::string, size_t> index;
  for (const auto& r : w["records"]) {
    std::string name = r.value("name", "");
    auto [it, fresh] = index.emplace(name, names.size());
    if (fresh) names.push_back(name);
    json row = {r["kind"], it->second};
    for (const char* k : {"stream", "start_ns", "end_ns", "graph", "bytes", "correlation", "event", "sync_id", "flags"})
      row.push_back(r.value(k, uint64_t(0)));
    rows.push_back(row);
  }
  out["names"] = names;
  out["records"] = rows;
  return out;
}

inline json Analyze(const std::vector<json>& windows, const std::string& policy = "strict", double share = 0.5,
                    const std::set<std::string>& names = {"matmul_kernel"}) {
  json wire = json::array();
  for (const auto& w : windows) wire.push_back(Wire(w));
  std::string error;
  auto facts = ParseTraceFacts({{"library", "/fake/libcupti.so.13"}, {"candidate_kernel_names", names}, {"windows", wire}},
                               &error);
  if (!facts) return {{"parse_error", error}};
  return AnalyzeTrace(*facts, {policy, share});
}

inline std::vector<std::string> Rules(const json& stage) {
  std::vector<std::string> out;
  for (const auto& f : stage["findings"]) out.push_back(f["rule"]);
  return out;
}

inline bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
inline bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace kz::verify::trace_test
