// Baseline timing files in the JSON shape of KernelBench's results/timing/<hardware>/
// baseline_time_torch*.json: {"level1": {"19_ReLU.py": {"mean": ms, "std", "min", "max",
// "num_trials", "hardware", "device"}, ...}, ...}. kz adds "median" (ms) and a "kz" object
// (the cache key and how the entry was made) to each entry, and writes failed tasks as
// entries whose numbers are null with an "error" (docs/bench.md). Pure functions, no I/O
// besides the file load/save helpers.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::scoring {

inline constexpr const char* kEagerBaselineFile = "baseline_time_torch.json";
inline constexpr const char* kCompileBaselineFile = "baseline_time_torch_compile_inductor_default.json";

// "eager" → kEagerBaselineFile, "compile" → kCompileBaselineFile; "" for anything else.
std::string BaselineFileName(const std::string& mode);

// Statistics of per-call times in ms: mean, population standard deviation, min, max,
// median (linear interpolation between the two middle values). nullopt when empty.
struct TimingStats {
  double mean = 0, std = 0, min = 0, max = 0, median = 0;
  int n = 0;
};
std::optional<TimingStats> StatsOf(const std::vector<double>& ms);

// What an entry was made from; a cached entry is reused only when all of it matches.
struct BaselineKey {
  std::string mode;          // "eager" | "compile"
  std::string task_xxh128;   // XXH3-128 of the task file's bytes
  std::string device_key;    // "gpu:<nvidia-smi name>" or "cpu:<model name>"
  std::string torch, cuda, python;  // versions (kz_worker.probe)
  int trials = 0;            // requested timed calls
};
nlohmann::json KeyJson(const BaselineKey& key);

// True when `entry` is a successful kz entry (numeric mean, no "error") made with `key`.
bool Reusable(const nlohmann::json& entry, const BaselineKey& key);

// A successful entry. `made` is merged into entry["kz"] (method, first_call_s, timed_at...).
nlohmann::json OkEntry(const TimingStats& stats, const std::string& hardware, const std::string& device,
                       const BaselineKey& key, const nlohmann::json& made = nlohmann::json::object());
// A failed task: mean/std/min/max/median null, num_trials 0, "error": {"kind", "message"}.
nlohmann::json ErrorEntry(const std::string& kind, const std::string& message, const std::string& hardware,
                          const std::string& device, const BaselineKey& key);

std::string LevelKey(int level);  // 1 → "level1"

// The entry of (level, task file name like "19_ReLU.py"), or nullptr.
const nlohmann::json* FindEntry(const nlohmann::json& table, int level, const std::string& file_name);
void SetEntry(nlohmann::json* table, int level, const std::string& file_name, nlohmann::json entry);

// The time of an entry in ms: "median" when it is a positive number (kz's files), else
// "mean" (KernelBench's own files); *statistic says which. nullopt for failed entries.
std::optional<double> EntryMs(const nlohmann::json& entry, std::string* statistic = nullptr);

// Reads a baseline file; a missing file is an empty table. False (with *err) when the file
// exists but is not a JSON object of level objects.
bool LoadBaselineFile(const std::string& path, nlohmann::json* table, std::string* err);
// The file text: levels in numeric order, tasks by problem number, 4-space indent.
std::string DumpBaselineFile(const nlohmann::json& table);

// How one `baseline` worker call went (docs/worker-protocol.md): its event frames, its
// result frame if any, and, when the child did not exit normally, end_kind ("timeout" |
// "crash") with a description (end) and the tail of its output.
struct BaselineCall {
  std::vector<nlohmann::json> events;
  std::optional<nlohmann::json> result;
  std::string end_kind, end, output_tail;
};

// One entry per mode in `modes`: times (from the mode's event, else the result's "modes")
// give OkEntry; a mode error gives ErrorEntry with its kind; a task-level failure (result
// "ok": false) or a child that crashed or timed out before the mode gives ErrorEntry with
// that reason. `key.mode` is set per mode. hardware/device come from the result's "device"
// when present, else the fallbacks.
std::map<std::string, nlohmann::json> BaselineEntries(const BaselineCall& call, const std::vector<std::string>& modes,
                                                      BaselineKey key, const std::string& fallback_hardware,
                                                      const std::string& fallback_device, const std::string& timed_at);

// `kz bench --baseline PATH`: a directory holding kCompileBaselineFile, or a
// KernelBench-shape file (any name) taken as the torch.compile baseline.
struct CompileBaseline {
  std::string path;   // the file read
  nlohmann::json table;
};
bool LoadCompileBaseline(const std::string& path, CompileBaseline* out, std::string* err);

// The compile time of one task, ready for speedups.
struct CompileRef {
  double ms = 0;
  std::string statistic;  // "median" | "mean"
  std::string hardware;   // "" when the entry does not say
};

// Per task id, the usable compile entries for the tasks of run.json's "tasks" object
// ({"L1_19": {"level": 1, "file": "19_ReLU.py", "xxh128": "..."}}); *summary gets the
// report's "baseline" object: path, statistic(s), hardware, counts and the ids of tasks
// without an entry ("missing"), with a failed entry ("failed") and with an entry made
// from other task content ("stale": its kz key's task_xxh128 differs; not used).
std::map<std::string, CompileRef> CompileRefs(const CompileBaseline& baseline, const nlohmann::json& tasks,
                                              nlohmann::json* summary);

// speedup against torch.compile of one stored verdict record: compile ms / the
// candidate's median (stages.timing.candidate.median_us), for a correct record timed on
// the baseline's hardware. nullopt otherwise; *why_not = "hardware" when only the hardware
// differs (verdict device name vs the entry's), "" else.
std::optional<double> SpeedupVsCompile(const nlohmann::json& record, const CompileRef& ref,
                                       std::string* why_not = nullptr);

}  // namespace kz::scoring
