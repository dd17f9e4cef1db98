#include "verify/trace_judge.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include "verify/timing_stats.h"
#include "verify/trace_joins.h"
#include "verify/trace_names.h"

namespace kz::verify {
using nlohmann::json;

namespace {
constexpr const char* kRuleOrder[] = {"trace.no_candidate_kernel", "trace.side_stream", "trace.foreign_compute"};

size_t RuleIndex(const std::string& rule) {
  for (size_t i = 0; i < std::size(kRuleOrder); ++i)
    if (rule == kRuleOrder[i]) return i;
  return std::size(kRuleOrder);
}

double UsOf(int64_t ns) { return RoundDecimals(double(ns) / 1000.0, 3); }

// A record's duration, at most kMaxDurationNs: a window's sums (at most 2^17 records) then
// stay far inside int64 whatever times the child reports.
constexpr int64_t kMaxDurationNs = int64_t(1) << 40;  // 18 minutes

int64_t Duration(const TraceRecord& r) {
  return r.start_ns && r.end_ns > r.start_ns ? std::min(int64_t(r.end_ns - r.start_ns), kMaxDurationNs) : 0;
}

std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string Str(const json& j) { return j.is_null() ? "None" : j.is_string() ? j.get<std::string>() : j.dump(); }

// The index among `idx` whose key is largest (the first of equals), or nullopt.
template <typename Key>
std::optional<size_t> Largest(const std::vector<size_t>& idx, Key key) {
  std::optional<size_t> best;
  for (size_t i : idx)
    if (!best || key(i) > key(*best)) best = i;
  return best;
}

// The last marker on the caller's stream (any stream if it is unknown); when none was
// recognised, the last 4-byte memset on the known caller stream.
std::optional<size_t> Marker(const TraceWindow& w) {
  std::vector<size_t> marks, memsets;
  for (size_t i = 0; i < w.records.size(); ++i) {
    const TraceRecord& r = w.records[i];
    bool on_caller = w.caller_stream && r.stream == *w.caller_stream;
    if (r.kind == TraceKind::kMarker && (!w.caller_stream || on_caller)) marks.push_back(i);
    if (r.kind == TraceKind::kMemset && r.bytes == 4 && on_caller) memsets.push_back(i);
  }
  return Largest(marks.empty() ? memsets : marks, [&](size_t i) { return w.records[i].start_ns; });
}

// The 4-byte host-to-device copy the tracer enqueued on the marker's stream just before it.
std::optional<size_t> CopyMarker(const TraceWindow& w, std::optional<size_t> marker) {
  if (!marker) return std::nullopt;
  const TraceRecord& m = w.records[*marker];
  std::vector<size_t> copies;
  for (size_t i = 0; i < w.records.size(); ++i) {
    const TraceRecord& r = w.records[i];
    if (r.kind == TraceKind::kMemcpy && r.bytes == 4 && w.NameOf(r).find("HtoD") != std::string::npos &&
        r.stream == m.stream && r.correlation < m.correlation)
      copies.push_back(i);
  }
  return Largest(copies, [&](size_t i) { return w.records[i].correlation; });
}

struct Classified {
  const char* cls;
  size_t index;
};

// Records grouped by (name, stream, class, graph or not): count and total µs, longest
// first, at most kMaxKernelGroups.
json Groups(const TraceWindow& w, const std::vector<Classified>& classified) {
  struct Group {
    std::string name;
    uint64_t stream;
    const char* cls;
    bool graph;
    int64_t count = 0, ns = 0;
  };
  std::vector<Group> groups;
  std::map<std::tuple<std::string, uint64_t, std::string, bool>, size_t> index;
  for (const auto& [cls, i] : classified) {
    const TraceRecord& r = w.records[i];
    std::string name = Utf8Prefix(w.NameOf(r), 300);
    auto [it, fresh] = index.emplace(std::make_tuple(name, r.stream, std::string(cls), r.graph != 0), groups.size());
    if (fresh) groups.push_back({name, r.stream, cls, r.graph != 0});
    groups[it->second].count += 1;
    groups[it->second].ns += Duration(r);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.ns > b.ns; });
  json out = json::array();
  for (size_t i = 0; i < groups.size() && i < kMaxKernelGroups; ++i) {
    const Group& g = groups[i];
    out.push_back({{"name", g.name},
                   {"stream", g.stream},
                   {"class", g.cls},
                   {"graph", g.graph},
                   {"count", g.count},
                   {"us", UsOf(g.ns)}});
  }
  return out;
}

// Records (not the tracer's) that end more than kLateSlackNs after `done`.
json Late(const TraceWindow& w, const std::vector<Classified>& classified, std::optional<uint64_t> done,
          std::optional<uint64_t> caller) {
  json late = json::array();
  for (const auto& [cls, i] : classified) {
    const TraceRecord& r = w.records[i];
    if (!done || std::string(cls) == "marker" || !r.end_ns) continue;
    int64_t after = int64_t(r.end_ns) - int64_t(*done);
    if (after <= int64_t(kLateSlackNs)) continue;
    late.push_back({{"name", Utf8Prefix(w.NameOf(r), 300)},
                    {"stream", r.stream},
                    {"class", cls},
                    {"after_return_us", UsOf(after)},
                    {"caller_stream", caller && r.stream == *caller}});
  }
  return late;
}
}  // namespace

std::string JoinCheck(const TraceWindow& w) {
  std::string why = w.dependencies.value_or("dependency records not collected");
  if (!why.empty()) return "timing only: " + why;
  if (w.dropped) return "timing only: records were dropped";
  return kJoinsChecked;
}

json SummarizeCall(const TraceWindow& w, const std::set<std::string>& names) {
  std::optional<size_t> marker = Marker(w), copy = CopyMarker(w, marker);
  std::vector<Classified> classified;
  std::map<size_t, const char*> kernel_class;  // by name index: names repeat
  int64_t ns_candidate = 0, ns_foreign = 0, ns_memory = 0, candidates = 0;
  for (size_t i = 0; i < w.records.size(); ++i) {
    const TraceRecord& r = w.records[i];
    if (IsDependencyKind(r.kind)) continue;
    const char* cls = "marker";
    if (i != marker && i != copy) {
      auto it = kernel_class.find(r.name);
      cls = r.kind == TraceKind::kKernel && it != kernel_class.end() ? it->second
                                                                     : ClassifyRecord(r.kind, w.NameOf(r), names);
      if (r.kind == TraceKind::kKernel) kernel_class[r.name] = cls;
    }
    std::string c = cls;
    if (c == "candidate") {
      ns_candidate += Duration(r);
      ++candidates;
    } else if (c == "foreign") {
      ns_foreign += Duration(r);
    } else if (c == "memory") {
      ns_memory += Duration(r);
    }
    classified.push_back({cls, i});
  }
  std::optional<uint64_t> caller = w.caller_stream;
  if (!caller && marker) caller = w.records[*marker].stream;
  std::optional<size_t> anchor = copy ? copy : marker;  // when the caller's stream was done
  std::optional<uint64_t> done;
  if (anchor) done = w.records[*anchor].start_ns;
  bool judged = JoinCheck(w) == kJoinsChecked && caller;
  int64_t compute = ns_candidate + ns_foreign;
  std::vector<Classified> listed;
  std::copy_if(classified.begin(), classified.end(), std::back_inserter(listed),
               [](const Classified& c) { return std::string(c.cls) != "marker"; });
  return {{"call", w.label},
          {"caller_stream", caller ? json(*caller) : json(nullptr)},
          {"marker", marker.has_value()},
          {"candidate_kernels", candidates},
          {"candidate_us", UsOf(ns_candidate)},
          {"foreign_us", UsOf(ns_foreign)},
          {"memory_us", UsOf(ns_memory)},
          {"share", compute ? json(RoundDecimals(double(ns_candidate) / double(compute), 4)) : json(nullptr)},
          {"dropped", w.dropped},
          {"late", Late(w, classified, done, caller)},
          {"unjoined", judged ? UnjoinedStreams(w, *caller, marker, copy) : json(nullptr)},
          {"kernels", Groups(w, listed)}};
}

namespace {
std::string Ran(const json& call) {
  const json& groups = call["kernels"];
  if (groups.empty()) return "no GPU work at all";
  std::string out = "it ran ";
  for (size_t i = 0; i < groups.size() && i < 4; ++i)
    out += (i ? ", " : "") + Utf8Prefix(groups[i]["name"].get<std::string>(), 80) + " ×" + groups[i]["count"].dump();
  return out;
}

std::string LateMessage(const json& call) {
  const json* w = nullptr;
  for (const auto& x : call["late"])
    if (!w || x["after_return_us"].get<double>() > (*w)["after_return_us"].get<double>()) w = &x;
  std::string name = Utf8Prefix((*w)["name"].get<std::string>(), 120),
              after = Fmt("%.1f", (*w)["after_return_us"].get<double>());
  std::string label = call["call"].get<std::string>();
  if ((*w)["caller_stream"].get<bool>())
    return label + ": " + name + " was launched on the caller's stream after forward returned (ended " + after +
           " µs after it returned)";
  return label + ": " + name + " on stream " + Str((*w)["stream"]) + " ended " + after +
         " µs after forward returned; the caller's stream " + Str(call["caller_stream"]) +
         " was not made to wait for it";
}

std::string UnjoinedMessage(const json& call) {
  const json& u = call["unjoined"][0];
  std::string stream = Str(u["stream"]), label = call["call"].get<std::string>();
  std::string text = label + ": " + Utf8Prefix(u["name"].get<std::string>(), 120) + " on stream " + stream +
                     " was never joined to the caller's stream " + Str(call["caller_stream"]) +
                     ": no event recorded on stream " + stream +
                     " after its last launch was waited for by the caller's stream (directly or through other "
                     "streams) or synchronised on before forward returned";
  std::optional<double> late;
  for (const auto& w : call["late"])
    if (w["stream"] == u["stream"]) {
      double after = w["after_return_us"];
      late = std::max(late.value_or(after), after);
    }
  if (late) text += "; it ended " + Fmt("%.1f", *late) + " µs after forward returned";
  std::string others;
  for (size_t i = 1; i < call["unjoined"].size(); ++i)
    others += (i > 1 ? ", " : "") + Str(call["unjoined"][i]["stream"]);
  return text + (others.empty() ? "" : " (also stream " + others + ")");
}

json Finding(const char* rule, const json& call, const std::string& message) {
  return {{"rule", rule}, {"call", call["call"]}, {"message", message}};
}

// (findings that reject, reported-only messages).
std::pair<json, json> Findings(const json& calls, const std::set<std::string>& names, const TraceRuleOptions& o) {
  json findings = json::array(), reported = json::array();
  std::string listed;
  size_t n = 0;
  for (auto it = names.begin(); it != names.end() && n < 8; ++it, ++n) listed += (n ? ", " : "") + *it;
  if (listed.empty()) listed = "none found";
  for (const auto& c : calls) {
    std::string label = c["call"].get<std::string>();
    if (c["candidate_kernels"] == 0 && c["dropped"] == 0)
      findings.push_back(Finding("trace.no_candidate_kernel", c,
                                 label + ": none of the candidate's kernels (" + listed + ") ran; " + Ran(c)));
    bool unjoined = c["unjoined"].is_array() && !c["unjoined"].empty();
    if (unjoined || !c["late"].empty())
      findings.push_back(Finding("trace.side_stream", c, unjoined ? UnjoinedMessage(c) : LateMessage(c)));
    double foreign = c["foreign_us"], candidate = c["candidate_us"];
    if (c["share"].is_null() || foreign <= 0) continue;
    double share = c["share"];
    std::string text = label + ": PyTorch/vendor kernels carry " + Fmt("%.0f", (1 - share) * 100) +
                       "% of the kernel time (" + Fmt("%.1f", foreign) + " of " + Fmt("%.1f", foreign + candidate) +
                       " µs)";
    if (o.policy == "strict" && share < o.min_candidate_share)
      findings.push_back(Finding(
          "trace.foreign_compute", c,
          text + "; the candidate's own kernels must carry >= " + Fmt("%.0f", o.min_candidate_share * 100) + "%"));
    else
      reported.push_back(text);
  }
  return {findings, reported};
}
}  // namespace

json AnalyzeTrace(const TraceFacts& facts, const TraceRuleOptions& o) {
  json calls = json::array();
  for (const auto& w : facts.windows) calls.push_back(SummarizeCall(w, facts.kernel_names));
  auto [findings, reported] = Findings(calls, facts.kernel_names, o);
  std::stable_sort(findings.begin(), findings.end(), [](const json& a, const json& b) {
    return RuleIndex(a["rule"].get<std::string>()) < RuleIndex(b["rule"].get<std::string>());
  });
  json worst = nullptr;
  for (const auto& c : calls)
    if (!c["share"].is_null() && (worst.is_null() || c["share"].get<double>() < worst.get<double>()))
      worst = c["share"];
  json join_check = facts.windows.empty() ? json(nullptr) : json(kJoinsChecked);
  for (const auto& w : facts.windows)
    if (std::string check = JoinCheck(w); check != kJoinsChecked) {
      join_check = check;
      break;
    }
  json kernel_names = json::array();
  for (const auto& n : facts.kernel_names)
    if (kernel_names.size() < 64) kernel_names.push_back(n);
  return {{"status", findings.empty() ? "pass" : "reject"},
          {"policy", o.policy},
          {"join_check", join_check},
          {"min_candidate_share", o.min_candidate_share},
          {"candidate_kernel_names", kernel_names},
          {"worst_share", worst},
          {"rule", findings.empty() ? json(nullptr) : findings[0]["rule"]},
          {"findings", findings},
          {"reported", reported},
          {"calls", calls}};
}

std::optional<std::string> TraceFailureReason(const json& stage) {
  const json& findings = stage.contains("findings") ? stage["findings"] : json();
  if (!findings.is_array() || findings.empty()) return std::nullopt;
  std::string first = findings[0]["rule"].get<std::string>();
  std::set<size_t> others;
  for (const auto& f : findings)
    if (f["rule"] != first) others.insert(RuleIndex(f["rule"].get<std::string>()));
  std::string also;
  for (size_t i : others) also += (also.empty() ? "" : ", ") + std::string(kRuleOrder[i]);
  return first + ": " + findings[0]["message"].get<std::string>() + (also.empty() ? "" : " (also " + also + ")");
}

}  // namespace kz::verify
