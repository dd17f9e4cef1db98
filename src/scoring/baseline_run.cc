#include "scoring/baseline_run.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "scoring/baseline.h"
#include "scoring/progress.h"
#include "scoring/report.h"
#include "scoring/suite.h"
#include "util/fs.h"
#include "util/hash.h"
#include "verify/device.h"
#include "verify/status.h"

namespace kz::scoring {
using nlohmann::json;

namespace {
int Usage(const std::string& msg) {
  std::cerr << "kz bench baseline: " << msg << "\n";
  return verify::kExitUsage;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string v = line.substr(line.find(':') + 1);
      size_t a = v.find_first_not_of(" \t");
      return a == std::string::npos ? "cpu" : v.substr(a);
    }
  return "cpu";
}

std::string Ms(const json& entry) {
  auto ms = EntryMs(entry);
  if (!ms) return "failed";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", *ms);
  return buf;
}

}  // namespace

int RunBaselines(const BaselineOptions& o, const worker::WorkerConfig& worker) {
  for (const auto& m : o.modes)
    if (BaselineFileName(m).empty()) return Usage("unknown mode \"" + m + "\" (eager or compile)");
  if (o.modes.empty()) return Usage("no mode given (--modes eager,compile)");
  Suite suite;
  std::string err;
  if (!ReadSuite(o.suite_dir, &suite, &err)) return Usage(err);
  for (const auto& w : suite.warnings) std::cerr << "kz bench baseline: warning: " << w << "\n";
  for (const auto& id : o.task_ids)
    if (!suite.tasks.count(id)) std::cerr << "kz bench baseline: warning: --task " << id << " is not in the suite\n";
  auto tasks = SelectTasks(suite, o.levels, o.task_ids);
  if (tasks.empty()) return Usage("no task selected");

  auto gpus = o.cpu ? std::vector<verify::Gpu>{} : verify::DetectGpus();
  std::optional<verify::Gpu> gpu;
  if (o.device) {
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](const verify::Gpu& g) { return g.index == *o.device; });
    if (it == gpus.end()) return Usage("no GPU with index " + std::to_string(*o.device) + " on this host");
    gpu = *it;
  } else if (!gpus.empty()) {
    gpu = gpus.front();
  }
  std::string cpu_model = CpuModel();
  BaselineKey key;
  key.device_key = gpu ? "gpu:" + gpu->name : "cpu:" + cpu_model;
  key.trials = o.trials;
  if (auto env = worker::ProbeEnvironment(worker)) {
    auto str = [&](const char* k) { return env->contains(k) && (*env)[k].is_string() ? (*env)[k].get<std::string>() : ""; };
    key.torch = str("torch"), key.cuda = str("cuda"), key.python = str("python");
  } else {
    std::cerr << "kz bench baseline: warning: cannot read the torch version (kz_worker.probe failed): "
                 "entries made now will not be reused\n";
    key.torch = "unknown-" + util::Hash128Hex(UtcNow());
  }

  if (!util::MakeDirs(o.out_dir, &err)) return Usage(err);
  std::map<std::string, json> tables;
  for (const auto& m : o.modes)
    if (!LoadBaselineFile(o.out_dir + "/" + BaselineFileName(m), &tables[m], &err)) return Usage(err);

  std::cerr << "kz bench baseline: " << tasks.size() << " tasks, modes";
  for (const auto& m : o.modes) std::cerr << " " << m;
  std::cerr << ", " << o.trials << " timed calls each, on " << (gpu ? gpu->name + " (GPU " + std::to_string(gpu->index) + ")" : "the CPU (" + cpu_model + ")")
            << ", torch " << key.torch << "\n";
  Progress progress("kz bench baseline", "tasks", tasks.size());
  int timed = 0, cached = 0, failures = 0;
  std::string scratch_root = util::MakeTempDir(std::filesystem::temp_directory_path().string(), "kz-baseline-", &err);
  for (const SuiteTask* t : tasks) {
    std::string text, file = t->name + ".py";
    if (!util::ReadFile(t->path, &text, &err)) {
      progress.Note("kz bench baseline: " + t->id + ": " + err);
      ++failures;
      progress.Step(t->id + ": unreadable");
      continue;
    }
    key.task_xxh128 = util::Hash128Hex(text);
    std::vector<std::string> need;
    for (const auto& m : o.modes) {
      BaselineKey k = key;
      k.mode = m;
      const json* e = FindEntry(tables[m], t->level, file);
      if (o.force || !e || !Reusable(*e, k)) need.push_back(m);
    }
    std::string detail = t->id + ":";
    if (need.empty()) {
      ++cached;
      for (const auto& m : o.modes) detail += " " + m + " " + Ms(*FindEntry(tables[m], t->level, file)) + ",";
      progress.Step(detail + " cached");
      continue;
    }
    worker::WorkerCall call;
    call.request = {{"op", "baseline"}, {"task_path", util::AbsolutePath(t->path)},
                    {"device", gpu ? "cuda" : "cpu"}, {"modes", need},
                    {"options", {{"seed", 42}, {"warmup", o.warmup}, {"trials", o.trials}, {"budget_s", o.budget_s}}}};
    call.env = {{"CUDA_VISIBLE_DEVICES", gpu ? std::to_string(gpu->index) : ""}};
    if (!scratch_root.empty()) call.env.emplace_back("TORCH_EXTENSIONS_DIR", scratch_root);
    call.wall_limit_s = o.timeout_s;
    call.max_rss_bytes = o.max_host_mem_mib << 20;
    worker::WorkerReply reply = worker::RunWorker(worker, call);
    BaselineCall bc{reply.events, reply.result, "", "", ""};
    const auto& p = reply.process;
    if (!reply.result && !(p.end == util::ProcessEnd::kExited && p.exit_code == 0)) {
      bc.end_kind = p.end == util::ProcessEnd::kTimedOut ? "timeout" : "crash";
      bc.end = worker::DescribeEnd(p);
      std::string tail = p.stderr_tail.size() > 600 ? p.stderr_tail.substr(p.stderr_tail.size() - 600) : p.stderr_tail;
      while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
      bc.output_tail = tail;
    }
    auto entries = BaselineEntries(bc, need, key, gpu ? gpu->name : cpu_model, gpu ? "cuda:0" : "cpu", UtcNow());
    ++timed;
    for (const auto& m : o.modes) {
      if (entries.count(m)) {
        const json& e = entries[m];
        if (e.contains("error")) {
          ++failures;
          progress.Note("kz bench baseline: " + t->id + " " + m + ": " + e["error"].value("kind", "") + ": " +
                        e["error"].value("message", "").substr(0, 400));
        }
        SetEntry(&tables[m], t->level, file, e);
      }
      detail += " " + m + " " + Ms(*FindEntry(tables[m], t->level, file)) + ",";
    }
    for (const auto& m : need)
      if (!util::WriteFileAtomic(o.out_dir + "/" + BaselineFileName(m), DumpBaselineFile(tables[m]), &err)) {
        std::cerr << "kz bench baseline: " << err << "\n";
        if (!scratch_root.empty()) util::RemoveAll(scratch_root);
        return verify::kExitInternal;
      }
    detail.pop_back();
    progress.Step(detail);
  }
  if (!scratch_root.empty()) util::RemoveAll(scratch_root);
  std::cerr << "kz bench baseline: " << timed << " tasks timed, " << cached << " cached, " << failures
            << " failures; files:";
  for (const auto& m : o.modes) std::cerr << " " << o.out_dir << "/" << BaselineFileName(m);
  std::cerr << "\n";
  return 0;
}

}  // namespace kz::scoring
