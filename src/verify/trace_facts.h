// The launch-trace facts a run child reports (docs/trace.md, docs/worker-protocol.md "judge"):
// one window of CUPTI records per traced candidate call, and the candidate's kernel names.
// The child is untrusted (candidate code runs in it): ParseTraceFacts checks every type and
// bound and says what is wrong rather than letting a malformed fact reach the rules.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::verify {

// The work kinds (the marker: the tracer's memset after forward), the dependency kinds
// (event record ... stream creation), and "?" (a kind the tracer does not know).
enum class TraceKind {
  kKernel,
  kMemset,
  kMemcpy,
  kMarker,
  kEventRecord,
  kStreamWait,
  kEventSync,
  kStreamSync,
  kContextSync,
  kSync,
  kStream,
  kUnknown,
};

// One CUPTI record. Wire form: [kind, name index, stream, start_ns, end_ns, graph, bytes,
// correlation, event, sync_id, flags], names interned per window.
struct TraceRecord {
  TraceKind kind = TraceKind::kUnknown;
  size_t name = 0;  // index into TraceWindow::names
  uint64_t stream = 0, start_ns = 0, end_ns = 0, graph = 0, bytes = 0, correlation = 0;
  uint64_t event = 0, sync_id = 0, flags = 0;
};

struct TraceWindow {
  std::string label;                        // "trial 0", "fresh inputs", ...
  std::optional<uint64_t> caller_stream;    // CUPTI id of the caller's stream (unknown: none)
  std::optional<uint64_t> legacy_stream;    // CUPTI id of the legacy default stream
  uint64_t dropped = 0;                     // records CUPTI (or the child's size bound) dropped
  std::optional<std::string> dependencies;  // "" when the dependency kinds were collected, else why not
  std::vector<std::string> names;
  std::vector<TraceRecord> records;
  const std::string& NameOf(const TraceRecord& r) const { return names[r.name]; }
};

struct TraceFacts {
  std::string library;                 // the libcupti used
  std::set<std::string> kernel_names;  // the candidate's own kernel names
  std::vector<TraceWindow> windows;
};

bool IsDependencyKind(TraceKind k);
bool IsWorkKind(TraceKind k);  // kernel, memset, memcpy

// Parses the child's trace facts {"library", "candidate_kernel_names", "windows"}; nullopt
// with *error saying what is malformed (type, bound, index out of range).
std::optional<TraceFacts> ParseTraceFacts(const nlohmann::json& facts, std::string* error);

// The first `n` code points of UTF-8 `s` (what Python's s[:n] keeps), never splitting one.
std::string Utf8Prefix(const std::string& s, size_t n);

// Helpers for every check of a child's facts (trace facts here, timing facts in timing_stats):
// A non-negative integer (parsed JSON gives unsigned; built JSON may hold a signed one).
bool IsCount(const nlohmann::json& j);
// A fact quoted in a message: its JSON text, at most `n` code points, never cutting a UTF-8
// character (a cut one would make the verdict's dump() throw). Precondition: `j` nested at
// most worker::kMaxFrameDepth deep (worker::ParseFrameJson), as dump() recurses.
std::string QuoteFact(const nlohmann::json& j, size_t n = 40);

}  // namespace kz::verify
