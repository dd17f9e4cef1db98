#include "scoring/baseline.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "util/fs.h"

namespace kz::scoring {
using nlohmann::json;
namespace fs = std::filesystem;

std::string BaselineFileName(const std::string& mode) {
  if (mode == "eager") return kEagerBaselineFile;
  if (mode == "compile") return kCompileBaselineFile;
  return "";
}

std::optional<TimingStats> StatsOf(const std::vector<double>& ms) {
  if (ms.empty()) return std::nullopt;
  std::vector<double> xs = ms;
  std::sort(xs.begin(), xs.end());
  TimingStats s;
  s.n = static_cast<int>(xs.size());
  double sum = 0;
  for (double x : xs) sum += x;
  s.mean = sum / s.n;
  double sq = 0;
  for (double x : xs) sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / s.n);
  s.min = xs.front();
  s.max = xs.back();
  double pos = 0.5 * (s.n - 1);
  size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, xs.size() - 1);
  s.median = xs[lo] + (xs[hi] - xs[lo]) * (pos - lo);
  return s;
}

json KeyJson(const BaselineKey& k) {
  return {{"mode", k.mode}, {"task_xxh128", k.task_xxh128}, {"device_key", k.device_key},
          {"torch", k.torch}, {"cuda", k.cuda}, {"python", k.python}, {"trials", k.trials}};
}

std::optional<double> EntryMs(const json& e, std::string* statistic) {
  if (!e.is_object() || e.contains("error")) return std::nullopt;
  for (const char* key : {"median", "mean"}) {
    if (e.contains(key) && e[key].is_number()) {
      double v = e[key].get<double>();
      if (std::isfinite(v) && v > 0) {
        if (statistic) *statistic = key;
        return v;
      }
    }
  }
  return std::nullopt;
}

bool Reusable(const json& entry, const BaselineKey& key) {
  if (!EntryMs(entry) || !entry.contains("kz") || !entry["kz"].is_object()) return false;
  const json& kz = entry["kz"];
  return kz.contains("key") && kz["key"] == KeyJson(key);
}

namespace {
double Round6(double v) { return std::round(v * 1e6) / 1e6; }
}  // namespace

json OkEntry(const TimingStats& s, const std::string& hardware, const std::string& device, const BaselineKey& key,
             const json& made) {
  json kz = made.is_object() ? made : json::object();
  kz["key"] = KeyJson(key);
  return {{"mean", Round6(s.mean)},   {"std", Round6(s.std)},     {"min", Round6(s.min)},
          {"max", Round6(s.max)},     {"num_trials", s.n},        {"hardware", hardware},
          {"device", device},         {"median", Round6(s.median)}, {"kz", kz}};
}

json ErrorEntry(const std::string& kind, const std::string& message, const std::string& hardware,
                const std::string& device, const BaselineKey& key) {
  return {{"mean", nullptr}, {"std", nullptr}, {"min", nullptr}, {"max", nullptr}, {"num_trials", 0},
          {"hardware", hardware}, {"device", device}, {"median", nullptr},
          {"error", {{"kind", kind}, {"message", message}}}, {"kz", {{"key", KeyJson(key)}}}};
}

std::string LevelKey(int level) { return "level" + std::to_string(level); }

const json* FindEntry(const json& table, int level, const std::string& file_name) {
  std::string lk = LevelKey(level);
  if (!table.is_object() || !table.contains(lk) || !table[lk].is_object() || !table[lk].contains(file_name))
    return nullptr;
  return &table[lk][file_name];
}

void SetEntry(json* table, int level, const std::string& file_name, json entry) {
  (*table)[LevelKey(level)][file_name] = std::move(entry);
}

bool LoadBaselineFile(const std::string& path, json* table, std::string* err) {
  *table = json::object();
  std::string text;
  if (!util::PathExists(path)) return true;
  if (!util::ReadFile(path, &text, err)) return false;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return *err = path + ": not a JSON object", false;
  for (const auto& [level, tasks] : j.items())
    if (!tasks.is_object()) return *err = path + ": \"" + level + "\" is not an object of tasks", false;
  *table = std::move(j);
  return true;
}

namespace {
// Leading number of "level12" / "19_ReLU.py" for ordering (large when absent).
long LeadingNumber(const std::string& s, size_t from) {
  size_t end = from;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
  return end > from && end - from < 10 ? std::atol(s.substr(from, end - from).c_str()) : 1L << 40;
}

template <typename Map>
std::vector<std::string> SortedKeys(const Map& m, size_t skip) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m.items()) keys.push_back(k);
  std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
    long na = LeadingNumber(a, std::min(skip, a.size())), nb = LeadingNumber(b, std::min(skip, b.size()));
    return na != nb ? na < nb : a < b;
  });
  return keys;
}
}  // namespace

std::string DumpBaselineFile(const json& table) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& level : SortedKeys(table, 5)) {
    nlohmann::ordered_json tasks = nlohmann::ordered_json::object();
    for (const auto& task : SortedKeys(table[level], 0)) {
      // KernelBench's field order first, then kz's additions, then anything else.
      const json& e = table[level][task];
      nlohmann::ordered_json entry = nlohmann::ordered_json::object();
      if (e.is_object()) {
        for (const char* k : {"mean", "std", "min", "max", "num_trials", "hardware", "device", "median", "error", "kz"})
          if (e.contains(k)) entry[k] = nlohmann::ordered_json::parse(e[k].dump());
        for (const auto& [k, v] : e.items())
          if (!entry.contains(k)) entry[k] = nlohmann::ordered_json::parse(v.dump());
      }
      tasks[task] = e.is_object() ? entry : nlohmann::ordered_json::parse(e.dump());
    }
    out[level] = std::move(tasks);
  }
  return out.dump(4, ' ', false, json::error_handler_t::replace) + "\n";
}

std::map<std::string, json> BaselineEntries(const BaselineCall& call, const std::vector<std::string>& modes,
                                            BaselineKey key, const std::string& fallback_hardware,
                                            const std::string& fallback_device, const std::string& timed_at) {
  std::string hardware = fallback_hardware, device = fallback_device;
  json by_mode = json::object();
  for (const auto& e : call.events)
    if (e.contains("stage") && e["stage"].is_string() && e.contains("data")) by_mode[e["stage"].get<std::string>()] = e["data"];
  if (call.result && call.result->is_object()) {
    const json& r = *call.result;
    if (r.contains("device") && r["device"].is_object()) {
      const json& d = r["device"];
      if (d.contains("hardware") && d["hardware"].is_string()) hardware = d["hardware"].get<std::string>();
      if (d.contains("device") && d["device"].is_string()) device = d["device"].get<std::string>();
    }
    if (r.contains("modes") && r["modes"].is_object())
      for (const auto& [m, data] : r["modes"].items()) by_mode[m] = data;
  }
  // Why a mode without data has none.
  std::string kind = "crash", why = "the worker sent no result";
  if (!call.end_kind.empty()) {
    kind = call.end_kind;
    why = "the worker " + call.end + (call.output_tail.empty() ? "" : "; output: " + call.output_tail);
  } else if (call.result && call.result->is_object() && call.result->contains("error") &&
             (*call.result)["error"].is_object()) {
    const json& e = (*call.result)["error"];
    kind = e.value("kind", "error");
    why = e.value("message", "");
  }
  std::map<std::string, json> out;
  for (const auto& mode : modes) {
    key.mode = mode;
    const json d = by_mode.contains(mode) ? by_mode[mode] : json();
    if (d.is_object() && d.value("status", "") == "ok" && d.contains("ms") && d["ms"].is_array()) {
      std::vector<double> ms;
      for (const auto& x : d["ms"])
        if (x.is_number()) ms.push_back(x.get<double>());
      if (auto stats = StatsOf(ms)) {
        json made = {{"method", d.value("method", "")}, {"timed_at", timed_at}};
        if (d.contains("first_call_s")) made["first_call_s"] = d["first_call_s"];
        out[mode] = OkEntry(*stats, hardware, device, key, made);
        continue;
      }
    }
    if (d.is_object() && d.contains("error") && d["error"].is_object())
      out[mode] = ErrorEntry(d["error"].value("kind", "error"), d["error"].value("message", ""), hardware, device, key);
    else
      out[mode] = ErrorEntry(kind, why, hardware, device, key);
  }
  return out;
}

bool LoadCompileBaseline(const std::string& path, CompileBaseline* out, std::string* err) {
  std::error_code ec;
  out->path = fs::is_directory(path, ec) ? (fs::path(path) / kCompileBaselineFile).string() : path;
  if (!util::PathExists(out->path)) return *err = out->path + ": no such file", false;
  if (!LoadBaselineFile(out->path, &out->table, err)) return false;
  out->path = util::AbsolutePath(out->path);
  return true;
}

std::map<std::string, CompileRef> CompileRefs(const CompileBaseline& b, const json& tasks, json* summary) {
  std::map<std::string, CompileRef> refs;
  json missing = json::array(), failed = json::array(), stale = json::array();
  std::set<std::string> statistics, hardware;
  for (const auto& [id, info] : tasks.items()) {
    const json* e = FindEntry(b.table, info.value("level", 0), info.value("file", ""));
    if (!e) {
      missing.push_back(id);
      continue;
    }
    std::string statistic;
    auto ms = EntryMs(*e, &statistic);
    if (!ms) {
      failed.push_back(id);
      continue;
    }
    const json* key = e->contains("kz") && (*e)["kz"].is_object() && (*e)["kz"].contains("key")
                          ? &(*e)["kz"]["key"] : nullptr;
    if (key && key->is_object() && key->contains("task_xxh128") && info.contains("xxh128") &&
        (*key)["task_xxh128"] != info["xxh128"]) {
      stale.push_back(id);
      continue;
    }
    CompileRef r{*ms, statistic, e->contains("hardware") && (*e)["hardware"].is_string()
                                     ? (*e)["hardware"].get<std::string>() : ""};
    statistics.insert(statistic);
    if (!r.hardware.empty()) hardware.insert(r.hardware);
    refs.emplace(id, std::move(r));
  }
  *summary = {{"compile_file", b.path}, {"mode", "torch.compile (inductor, default mode)"},
              {"statistic", statistics}, {"hardware", hardware}, {"tasks_with_entry", refs.size()},
              {"missing", missing}, {"failed", failed}, {"stale", stale}};
  return refs;
}

std::optional<double> SpeedupVsCompile(const json& r, const CompileRef& ref, std::string* why_not) {
  if (why_not) why_not->clear();
  if (r.value("status", "") != "correct" || !r.contains("verdict") || !r["verdict"].is_object()) return std::nullopt;
  const json& v = r["verdict"];
  const json* cand = nullptr;
  if (v.contains("stages") && v["stages"].is_object() && v["stages"].contains("timing")) {
    const json& t = v["stages"]["timing"];
    if (t.is_object() && t.value("status", "") == "ok" && t.contains("candidate") && t["candidate"].is_object())
      cand = &t["candidate"];
  }
  if (!cand || !cand->contains("median_us") || !(*cand)["median_us"].is_number()) return std::nullopt;
  double us = (*cand)["median_us"].get<double>();
  if (!(us > 0)) return std::nullopt;
  std::string name = v.contains("device") && v["device"].is_object() && v["device"].contains("name") &&
                             v["device"]["name"].is_string()
                         ? v["device"]["name"].get<std::string>() : "";
  if (ref.hardware.empty() || name != ref.hardware) {
    if (why_not) *why_not = "hardware";
    return std::nullopt;
  }
  return ref.ms * 1000.0 / us;
}

}  // namespace kz::scoring
