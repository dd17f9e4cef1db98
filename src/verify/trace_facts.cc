#include "verify/trace_facts.h"

#include <array>
#include <utility>

namespace kz::verify {
using nlohmann::json;

namespace {
constexpr size_t kMaxWindows = 10000;
constexpr size_t kMaxRecords = size_t(1) << 17;  // per window (the tracer reads at most 66560)
constexpr size_t kMaxNameBytes = 4096;
constexpr size_t kMaxLabelBytes = 200;
constexpr size_t kMaxKernelNames = 4096;
constexpr uint64_t kMaxTimeNs = uint64_t(1) << 62;  // keeps differences of times in int64
constexpr size_t kRecordFields = 11;

constexpr std::array<std::pair<const char*, TraceKind>, 12> kKinds = {{
    {"kernel", TraceKind::kKernel},
    {"memset", TraceKind::kMemset},
    {"memcpy", TraceKind::kMemcpy},
    {"marker", TraceKind::kMarker},
    {"event_record", TraceKind::kEventRecord},
    {"stream_wait", TraceKind::kStreamWait},
    {"event_sync", TraceKind::kEventSync},
    {"stream_sync", TraceKind::kStreamSync},
    {"context_sync", TraceKind::kContextSync},
    {"sync", TraceKind::kSync},
    {"stream", TraceKind::kStream},
    {"?", TraceKind::kUnknown},
}};

// o[key], or null when absent (no copy of large lists).
const json& Field(const json& o, const char* key) {
  static const json kNull;
  auto it = o.find(key);
  return it == o.end() ? kNull : *it;
}

std::optional<TraceKind> KindOf(const json& j) {
  if (!j.is_string()) return std::nullopt;
  for (const auto& [name, kind] : kKinds)
    if (j == name) return kind;
  return std::nullopt;
}

// A string of at most `max` bytes, else "" with *error set.
bool Text(const json& j, size_t max, const std::string& what, std::string* out, std::string* error) {
  if (!j.is_string() || j.get_ref<const std::string&>().size() > max) {
    *error = what + ": expected a string of at most " + std::to_string(max) + " bytes";
    return false;
  }
  *out = j.get<std::string>();
  return true;
}

// An optional stream id: null or an unsigned integer.
bool OptionalId(const json& w, const char* key, std::optional<uint64_t>* out, std::string* error) {
  const json& j = Field(w, key);
  if (j.is_null()) return true;
  if (!IsCount(j)) {
    *error = std::string(key) + ": expected a stream id or null";
    return false;
  }
  *out = j.get<uint64_t>();
  return true;
}

bool ParseRecord(const json& r, size_t names, TraceRecord* out, std::string* error) {
  if (!r.is_array() || r.size() != kRecordFields) {
    *error = "a record is not a list of " + std::to_string(kRecordFields) + " fields";
    return false;
  }
  auto kind = KindOf(r[0]);
  if (!kind) {
    *error = "unknown record kind " + QuoteFact(r[0]);
    return false;
  }
  std::array<uint64_t, kRecordFields - 1> v{};
  for (size_t i = 1; i < kRecordFields; ++i) {
    if (!IsCount(r[i])) {
      *error = "record field " + std::to_string(i) + " is " + QuoteFact(r[i]) + ", not an unsigned integer";
      return false;
    }
    v[i - 1] = r[i].get<uint64_t>();
  }
  if (v[0] >= names || v[2] > kMaxTimeNs || v[3] > kMaxTimeNs) {
    *error = "a record's name index or time is out of range";
    return false;
  }
  *out = {*kind, size_t(v[0]), v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
  return true;
}

bool ParseWindow(const json& w, TraceWindow* out, std::string* error) {
  if (!w.is_object()) {
    *error = "a window is not an object";
    return false;
  }
  if (!Text(Field(w, "label"), kMaxLabelBytes, "label", &out->label, error)) return false;
  if (!OptionalId(w, "caller_stream", &out->caller_stream, error)) return false;
  if (!OptionalId(w, "legacy_stream", &out->legacy_stream, error)) return false;
  if (!w.contains("dropped") || !IsCount(w["dropped"])) {
    *error = "dropped: expected a count";
    return false;
  }
  out->dropped = w["dropped"].get<uint64_t>();
  if (w.contains("dependencies")) {
    std::string why;
    if (!Text(w["dependencies"], kMaxNameBytes, "dependencies", &why, error)) return false;
    out->dependencies = why;
  }
  const json& names = Field(w, "names");
  const json& records = Field(w, "records");
  if (!names.is_array() || !records.is_array() || records.size() > kMaxRecords || names.size() > kMaxRecords) {
    *error = "names and records: expected lists of at most " + std::to_string(kMaxRecords);
    return false;
  }
  for (const auto& n : names)
    if (!Text(n, kMaxNameBytes, "a record name", &out->names.emplace_back(), error)) return false;
  out->records.resize(records.size());
  for (size_t i = 0; i < records.size(); ++i)
    if (!ParseRecord(records[i], names.size(), &out->records[i], error)) return false;
  return true;
}
}  // namespace

bool IsDependencyKind(TraceKind k) { return k >= TraceKind::kEventRecord && k <= TraceKind::kStream; }
bool IsWorkKind(TraceKind k) { return k == TraceKind::kKernel || k == TraceKind::kMemset || k == TraceKind::kMemcpy; }

std::optional<TraceFacts> ParseTraceFacts(const json& facts, std::string* error) {
  TraceFacts out;
  if (!facts.is_object()) {
    *error = "expected an object";
    return std::nullopt;
  }
  if (facts.contains("library") && !Text(facts["library"], kMaxNameBytes, "library", &out.library, error))
    return std::nullopt;
  const json& names = Field(facts, "candidate_kernel_names");
  if (!names.is_array() || names.size() > kMaxKernelNames) {
    *error = "candidate_kernel_names: expected a list of at most " + std::to_string(kMaxKernelNames);
    return std::nullopt;
  }
  for (const auto& n : names) {
    std::string name;
    if (!Text(n, kMaxNameBytes, "a candidate kernel name", &name, error)) return std::nullopt;
    out.kernel_names.insert(std::move(name));
  }
  const json& windows = Field(facts, "windows");
  if (!windows.is_array() || windows.size() > kMaxWindows) {
    *error = "windows: expected a list of at most " + std::to_string(kMaxWindows);
    return std::nullopt;
  }
  out.windows.resize(windows.size());
  for (size_t i = 0; i < windows.size(); ++i)
    if (!ParseWindow(windows[i], &out.windows[i], error)) {
      *error = "window " + std::to_string(i) + ": " + *error;
      return std::nullopt;
    }
  return out;
}

bool IsCount(const json& j) { return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0); }

std::string QuoteFact(const json& j, size_t n) {
  return Utf8Prefix(j.dump(-1, ' ', false, json::error_handler_t::replace), n);
}

std::string Utf8Prefix(const std::string& s, size_t n) {
  size_t i = 0;
  for (size_t count = 0; i < s.size() && count < n; ++count) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;  // continuation bytes
  }
  return s.substr(0, i);
}

}  // namespace kz::verify
