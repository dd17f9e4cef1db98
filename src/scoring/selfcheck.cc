#include "scoring/selfcheck.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "scoring/progress.h"
#include "scoring/suite.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "util/hash.h"
#include "verify/device.h"
#include "verify/status.h"
#include "verify/verifier.h"

namespace kz::scoring {
using nlohmann::json;

namespace {
int Usage(const std::string& msg) {
  std::cerr << "kz bench selfcheck: " << msg << "\n";
  return verify::kExitUsage;
}

// The largest peak_gpu_bytes over the verdict's profile stages, or null.
json PeakGpu(const json& verdict) {
  const json* stages = verdict.contains("profile") && verdict["profile"].is_object() &&
                               verdict["profile"].contains("stages")
                           ? &verdict["profile"]["stages"]
                           : nullptr;
  if (!stages || !stages->is_object()) return nullptr;
  json best = nullptr;
  for (const auto& [name, s] : stages->items())
    if (s.is_object() && s.contains("peak_gpu_bytes") && s["peak_gpu_bytes"].is_number_unsigned() &&
        (best.is_null() || s["peak_gpu_bytes"].get<uint64_t>() > best.get<uint64_t>()))
      best = s["peak_gpu_bytes"];
  return best;
}

std::string Mib(const json& bytes) {
  if (!bytes.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes.get<double>() / double(1ull << 20));
  return buf;
}

}  // namespace

json SelfCheckRecord(const std::string& task_id, const std::string& task_xxh, const json& verdict) {
  json bytes = nullptr;
  const json& st = verdict.value("stages", json::object());
  if (st.contains("correctness") && st["correctness"].is_object() && st["correctness"].contains("bytes"))
    bytes = st["correctness"]["bytes"];
  const json fp = verdict.value("footprint", json());
  if (bytes.is_null() && fp.is_object() && fp.contains("inputs_bytes"))  // refused before the run
    bytes = {{"inputs", fp["inputs_bytes"]}, {"outputs", fp.value("outputs_bytes", json(nullptr))}};
  json timing = st.contains("timing") && st["timing"].is_object() ? st["timing"] : json::object();
  return {{"task", task_id},
          {"sample", 0},
          {"code_xxh", task_xxh},
          {"status", verdict.value("status", "")},
          {"reason", verdict.value("reason", "")},
          {"bytes", bytes},
          {"seconds", verdict.value("seconds", json(nullptr))},
          {"run_s", verdict.value("child", json::object()).value("wall_s", json(nullptr))},
          {"peak_gpu_bytes", PeakGpu(verdict)},
          {"reference_median_us", timing.contains("reference") && timing["reference"].is_object()
                                      ? timing["reference"].value("median_us", json(nullptr))
                                      : json(nullptr)},
          {"device", verdict.value("device", json::object()).value("name", "cpu")},
          {"not_checked", verdict.value("not_checked", json::array())}};
}

std::string SelfCheckTable(const std::vector<json>& records) {
  std::string out =
      "| task | status | inputs MiB | outputs MiB | run s | peak GPU MiB | reference µs | reason |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : records) {
    const json& b = r.value("bytes", json());
    char secs[32] = "-";  // the run child's wall (the GPU slot's time), else the verdict's
    const json& run = r.value("run_s", json()).is_number() ? r["run_s"] : r.value("seconds", json());
    if (run.is_number()) std::snprintf(secs, sizeof secs, "%.1f", run.get<double>());
    char ref[32] = "-";
    if (r.value("reference_median_us", json()).is_number())
      std::snprintf(ref, sizeof ref, "%.1f", r["reference_median_us"].get<double>());
    std::string reason = r.value("reason", "");
    if (reason.size() > 120) reason = reason.substr(0, 117) + "...";
    std::replace(reason.begin(), reason.end(), '|', '/');
    out += "| " + r.value("task", "") + " | " + r.value("status", "") + " | " +
           Mib(b.is_object() ? b.value("inputs", json()) : json()) + " | " +
           Mib(b.is_object() ? b.value("outputs", json()) : json()) + " | " + secs + " | " +
           Mib(r.value("peak_gpu_bytes", json())) + " | " + ref + " | " + reason + " |\n";
  }
  return out;
}

int RunSelfCheck(const SelfCheckOptions& o, const worker::WorkerConfig& worker) {
  Suite suite;
  std::string err;
  if (!ReadSuite(o.suite_dir, &suite, &err)) return Usage(err);
  auto tasks = SelectTasks(suite, o.levels, o.task_ids);
  if (tasks.empty()) return Usage("no task selected");
  if (!util::MakeDirs(o.out_dir, &err)) return Usage(err);
  const std::string log_path = o.out_dir + "/selfcheck.jsonl";
  LoadedLog done = LoadVerdictLog(log_path);
  VerdictLog log;
  if (!log.Open(log_path, &err)) {
    std::cerr << "kz bench selfcheck: " << err << "\n";
    return verify::kExitInternal;
  }
  auto gpus = o.use_gpu ? verify::DetectGpus() : std::vector<verify::Gpu>{};
  verify::Verifier verifier(worker, o.verify, gpus);
  std::vector<json> records;
  size_t resumed = 0;
  Progress progress("kz bench selfcheck", "tasks", tasks.size());
  std::vector<verify::Sample> samples;  // the tasks not yet done, verified in one pipeline
  std::vector<std::string> xxhs;
  for (const SuiteTask* t : tasks) {
    std::string text;
    std::string xxh = util::ReadFile(t->path, &text, &err) ? util::Hash128Hex(text) : "unreadable";
    auto it = done.records.find(ResumeKey(t->id, 0, xxh));
    if (it != done.records.end()) {
      records.push_back(it->second);
      ++resumed;
      progress.Step(t->id + ": " + it->second.value("status", "") + " (resumed)");
      continue;
    }
    verify::Sample sample{t->path, t->path, "", std::nullopt, t->id};
    sample.self_check = true;
    samples.push_back(std::move(sample));
    xxhs.push_back(xxh);
  }
  bool ok = true;
  // Footprints first (all tasks, bounded parallel), then one run child per task, the next
  // one started while the current runs; each record is appended as its verdict arrives.
  verifier.VerifyAll(samples, [&](size_t i, const json& verdict) {
    records.push_back(SelfCheckRecord(samples[i].label, xxhs[i], verdict));
    if (ok && !log.Append(records.back(), &err)) ok = false;
    progress.Step(samples[i].label + ": " + records.back().value("status", ""));
  });
  if (!ok) {
    std::cerr << "kz bench selfcheck: " << err << "\n";
    return verify::kExitInternal;
  }
  if (!util::WriteFileAtomic(o.out_dir + "/selfcheck.md", SelfCheckTable(records), &err)) {
    std::cerr << "kz bench selfcheck: " << err << "\n";
    return verify::kExitInternal;
  }
  size_t correct = std::count_if(records.begin(), records.end(),
                                 [](const json& r) { return r.value("status", "") == "correct"; });
  std::cerr << "kz bench selfcheck: " << records.size() << " tasks (" << resumed << " resumed): "
            << correct << " correct; " << o.out_dir << "/selfcheck.md\n";
  return 0;
}

}  // namespace kz::scoring
