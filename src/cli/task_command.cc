#include "cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/hash.h"
#include "verify/device.h"
#include "verify/sample.h"
#include "verify/status.h"
#include "verify/task_rules.h"
#include "worker/bytecode.h"
#include "worker/worker_client.h"

namespace kz::cli {
namespace {
using nlohmann::json;
using verify::HumanBytes;

constexpr size_t kListedTensors = 8;  // per group in the human table; totals cover all

std::string Ms(const json& seconds) {
  if (!seconds.is_number()) return "?";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g ms", seconds.get<double>() * 1e3);
  return buf;
}

std::string Padded(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s + " ";
}

std::string Shape(const json& shape) {
  std::string out = "[";
  for (const auto& d : shape) out += (out.size() > 1 ? ", " : "") + d.dump();
  return out + "]";
}

std::string Str(const json& v, const char* key, const std::string& fallback = "?") {
  return v.contains(key) && v[key].is_string() ? v[key].get<std::string>() : fallback;
}

// A table row: label, dtype, shape, size.
std::string Row(const std::string& label, const std::string& dtype, const std::string& shape, const std::string& size) {
  return "    " + Padded(label, 12) + Padded(dtype, 9) + Padded(shape, 22) + size + "\n";
}

// One footprint group (inputs or outputs): a row per tensor, the first kListedTensors, then
// a total row when some were left out (or none exist).
std::string GroupRows(const std::string& label, const json& g) {
  if (!g.is_object()) return Row(label + "s", "", "", "unknown");
  std::string out;
  size_t shown = 0;
  for (const auto& t : g.value("tensors", json::array())) {
    if (shown++ == kListedTensors) break;
    out += Row(label + " " + t["index"].dump(), Str(t, "dtype"), Shape(t["shape"]), HumanBytes(t["bytes"]));
  }
  int count = g.value("count", 0), others = g.value("non_tensors", 0);
  if (count > static_cast<int>(kListedTensors) || count == 0)
    out += Row(label + "s", "", std::to_string(count) + " tensors", HumanBytes(g["bytes"]) + " in all");
  if (others) out += Row("", "", std::to_string(others) + " non-tensors", "");
  return out;
}

std::string FootprintBlock(const json& fp) {
  if (!fp.is_object()) return "";
  std::string out = "  footprint (" + Str(fp, "method") + ", before allocation):\n";
  out += GroupRows("input", fp["inputs"]);
  if (const json& p = fp["params"]; p.is_object()) {
    std::string dtypes;
    const json by_dtype = p.value("dtypes", json::object());
    for (const auto& [d, _] : by_dtype.items()) dtypes += (dtypes.empty() ? "" : ",") + d;
    out += Row("params", dtypes.empty() ? "-" : dtypes, std::to_string(p.value("count", 0)) + " tensors",
               HumanBytes(p["bytes"]));
  }
  out += GroupRows("output", fp["outputs"]);
  bool complete = fp["total_bytes"].is_number();
  out += Row("total", "", "",
             complete ? HumanBytes(fp["total_bytes"]) : "unknown (" + HumanBytes(fp["known_bytes"]) + " known)");
  if (Str(fp, "method") != "meta" && fp["reason"].is_string()) out += "    note: " + Str(fp, "reason") + "\n";
  return out;
}

std::string DeviceLine(const json& d) {
  if (!d.is_object() || d.empty()) return "";
  std::string what = Str(d, "kind") == "cuda"
                         ? Str(d, "name", "GPU") + " (GPU " + d.value("index", json(0)).dump() + ")"
                         : "CPU (" + Str(d, "name") + ")";
  return "  device: " + what + ", " + HumanBytes(d["available_bytes"]) + " available (" + Str(d, "available_source") +
         ")\n";
}

std::string BudgetLine(const json& b) {
  if (!b.is_object()) return "";
  std::string out = "  memory: needs " + HumanBytes(b["need_bytes"]) + " up front (" + Str(b, "rule") + ")";
  if (!b.value("complete", true)) out += " — a lower bound: the footprint is incomplete";
  if (b.contains("measured_need_bytes"))
    out += ", " + HumanBytes(b["measured_need_bytes"]) + " measured (" + Str(b, "measured_rule") + ")";
  return out + "\n";
}

std::string ReferenceLine(const json& r) {
  if (!r.is_object()) return "";
  int outputs = r["outputs"].value("count", 0);
  return "  reference: " + Ms(r["seconds"]) + " a call (first " + Ms(r["first_call_s"]) + "), peak " +
         HumanBytes(r["peak_bytes"]) + "; " + std::to_string(outputs) + (outputs == 1 ? " output, " : " outputs, ") +
         HumanBytes(r["outputs"]["bytes"]) + "; inputs made on the " + Str(r, "inputs_generated") + "\n";
}

std::string Human(const std::string& path, const json& tc) {
  std::string out = std::filesystem::path(path).filename().string() + ": " + Str(tc, "status") + "\n";
  out += DeviceLine(tc["device"]) + FootprintBlock(tc["footprint"]) + BudgetLine(tc["budget"]) +
         ReferenceLine(tc["reference"]);
  const json& checks = tc["checks"];
  if (checks.is_array() && !checks.empty()) out += "  checks:\n";
  for (const auto& c : checks)
    out += "    " + Padded(Str(c, "status"), 5) + Padded(Str(c, "check"), 20) + Str(c, "detail", "") + "\n";
  std::string reason = Str(tc, "reason", "");
  return out + "  status: " + Str(tc, "status") + (reason.empty() ? "" : " — " + reason) + "\n";
}

int ExitFor(const json& tc) {
  std::string s = tc.value("status", "");
  if (s == "ok") return 0;
  if (auto st = verify::ParseStatus(s)) return verify::ExitCode(*st);  // invalid_task, timeout
  return verify::kExitInternal;
}

class TaskCommandImpl : public Command {
 public:
  TaskCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    group_ = app.add_subcommand("task", "Check reference tasks");
    group_->require_subcommand(1);
    auto* c = group_->add_subcommand("check", "Can kz judge this task on this device, and what does it cost?");
    c->add_option("task", path_, "Task file (Model, get_inputs, get_init_inputs)")->required();
    c->add_flag("--json", json_, "Print the task_check object (docs/worker-protocol.md) as one JSON line");
    c->add_flag("--cpu", cpu_, "Never use a GPU, even if one is present");
    c->add_option("--device", device_, "GPU index to check on (default: the first GPU)");
    c->add_option("--timeout", timeout_s_, "Wall-time limit of the check, seconds (default 300)")
        ->check(CLI::PositiveNumber);
    c->add_option("--max-host-mem", max_host_mem_mib_, "Host memory limit of the child, MiB (default 32768)")
        ->check(CLI::PositiveNumber);
    c->add_option("--seed", seed_, "Seed of the inputs (default 42)")->check(CLI::NonNegativeNumber);
    check_ = c;
  }

  bool Parsed() const override { return group_->parsed(); }

  int Run() override {
    if (!check_->parsed()) return verify::kExitUsage;
    std::string text, err;
    if (!util::ReadFile(path_, &text, &err)) return Usage("cannot read " + err);
    std::optional<verify::Gpu> gpu;
    if (int rc = PickGpu(&gpu); rc != 0) return rc;
    worker::WorkerConfig config = worker::LocateWorker(argv0_);
    worker::PrepareBytecode(&config, verify::DefaultCacheDir());
    worker::WorkerReply reply = worker::RunWorker(config, MakeCall(gpu));
    json tc;
    if (!Interpret(reply, &tc)) return verify::kExitInternal;
    tc["task"] = {{"path", util::AbsolutePath(path_)}, {"xxh128", util::Hash128Hex(text)}};
    if (gpu && tc["device"].is_object()) tc["device"]["index"] = gpu->index;  // the child saw it as 0
    tc["child"] = {{"end", util::ProcessEndName(reply.process.end)},
                   {"wall_s", reply.process.wall_s},
                   {"peak_rss_mib", reply.process.peak_rss_bytes >> 20}};
    std::cout << (json_ ? tc.dump() + "\n" : Human(path_, tc)) << std::flush;
    return ExitFor(tc);
  }

 private:
  // The GPU to pin the child to, as kz verify picks it: --device N, else the first; none
  // with --cpu, KZ_FORCE_CPU=1 or no GPU. Nonzero: the exit code of a usage error.
  int PickGpu(std::optional<verify::Gpu>* gpu) const {
    auto gpus = cpu_ ? std::vector<verify::Gpu>{} : verify::DetectGpus();
    if (!device_) {
      if (!gpus.empty()) *gpu = gpus.front();
      return 0;
    }
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](const verify::Gpu& g) { return g.index == *device_; });
    if (it == gpus.end())
      return Usage("no GPU with index " + std::to_string(*device_) + " on this host (" + std::to_string(gpus.size()) +
                   " found)");
    *gpu = *it;
    return 0;
  }

  worker::WorkerCall MakeCall(const std::optional<verify::Gpu>& gpu) const {
    worker::WorkerCall call;
    call.request = {{"op", "task_check"},
                    {"task_path", util::AbsolutePath(path_)},
                    {"device", gpu ? "cuda" : "cpu"},
                    {"options", {{"seed", seed_}, {"host_limit_bytes", max_host_mem_mib_ << 20}}}};
    call.env = {{"CUDA_VISIBLE_DEVICES", gpu ? std::to_string(gpu->index) : ""}};
    call.wall_limit_s = timeout_s_;
    call.max_rss_bytes = max_host_mem_mib_ << 20;
    return call;
  }

  // The task_check object from the reply; false (reason on stderr) when the worker failed.
  bool Interpret(const worker::WorkerReply& reply, json* tc) {
    const auto& p = reply.process;
    if (reply.result) {
      if (reply.result->value("ok", false) && reply.result->contains("task_facts")) {
        std::string err;
        auto judged = verify::TaskCheckFromFacts((*reply.result)["task_facts"], &err);
        if (!judged) return Fail(reply, "malformed task facts from the worker: " + err);
        *tc = std::move(*judged);
        return true;
      }
      return Fail(reply, "the worker failed: " + reply.result->value("error", json::object()).dump());
    }
    if (p.end == util::ProcessEnd::kTimedOut) {
      *tc = verify::TaskCheckWithoutResult(reply.events, "timeout", "the check " + worker::DescribeEnd(p));
      return true;
    }
    // The task's code was running once the footprint event came: its crash is the task's.
    bool task_ran = !reply.events.empty() && p.end != util::ProcessEnd::kSpawnFailed;
    if (p.end == util::ProcessEnd::kMemoryExceeded || task_ran) {
      *tc = verify::TaskCheckWithoutResult(reply.events, "invalid_task",
                                           "task: the worker running the reference " + worker::DescribeEnd(p));
      return true;
    }
    return Fail(reply, "the worker " + worker::DescribeEnd(p) + " without a result" +
                           (reply.protocol_error.empty() ? "" : " (" + reply.protocol_error + ")"));
  }

  bool Fail(const worker::WorkerReply& reply, const std::string& why) const {
    std::cerr << "kz task check: " << path_ << ": " << why << "\n";
    if (!reply.process.stderr_tail.empty()) std::cerr << reply.process.stderr_tail << "\n";
    return false;
  }

  int Usage(const std::string& msg) const { return UsageError("kz task check", msg); }

  std::string argv0_, path_;
  CLI::App* group_ = nullptr;
  CLI::App* check_ = nullptr;
  bool json_ = false, cpu_ = false;
  std::optional<int> device_;
  double timeout_s_ = 300;
  uint64_t max_host_mem_mib_ = 32768;
  int seed_ = 42;
};
}  // namespace

std::unique_ptr<Command> AddTaskCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<TaskCommandImpl>(app, argv0);
}

}  // namespace kz::cli
