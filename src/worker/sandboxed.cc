// The sandbox side of a worker call: which host paths a jail exposes, staged inputs.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/log.h"
#include "worker/bytecode.h"
#include "worker/worker_client.h"

namespace kz::worker {
namespace fs = std::filesystem;
namespace {
// The interpreter's prefix (a venv or an installation) and, for a venv, its base prefix
// (pyvenv.cfg's `home` is the base's bin directory).
std::vector<std::string> PythonPaths(const std::string& python) {
  std::vector<std::string> out;
  fs::path exe = python;
  if (exe.is_relative()) return out;  // found in PATH: /usr is visible anyway
  out.push_back(exe.string());
  fs::path prefix = exe.parent_path().parent_path();
  out.push_back(prefix.string());
  std::ifstream cfg(prefix / "pyvenv.cfg");
  for (std::string line; std::getline(cfg, line);) {
    if (line.rfind("home", 0) != 0 || line.find('=') == std::string::npos) continue;
    std::string home = line.substr(line.find('=') + 1);
    home.erase(0, home.find_first_not_of(" \t"));
    if (!home.empty()) out.push_back(fs::path(home).parent_path().string());
  }
  return out;
}

void Split(const char* list, std::vector<std::string>* out) {
  if (!list) return;
  std::string s = list;
  for (size_t at = 0; at <= s.size();) {
    size_t end = s.find(':', at);
    if (end == std::string::npos) end = s.size();
    if (end > at) out->push_back(s.substr(at, end - at));
    at = end + 1;
  }
}

void Replace(nlohmann::json* j, const std::string& from, const std::string& to) {
  if (j->is_string() && j->get_ref<const std::string&>() == from) *j = to;
  else if (j->is_structured())
    for (auto& v : *j) Replace(&v, from, to);
}
}  // namespace

std::shared_ptr<sandbox::Jail> NewJail(const WorkerConfig& config, const WorkerCall& call) {
  sandbox::Policy p;
  p.features = config.sandbox.features;
  p.limits = config.sandbox.limits;
  p.stage_base = config.sandbox.stage_base;
  p.triton_cache = config.sandbox.triton_cache;
  p.read_only = PythonPaths(config.python);
  for (const auto& s : {config.package_dir, config.runtime_lib})
    if (!s.empty()) p.read_only.push_back(s);
  Split(std::getenv("PYTHONPATH"), &p.read_only);
  Split(std::getenv("KZ_SANDBOX_READ_ONLY"), &p.read_only);  // site-specific extras (docs/sandbox.md)
  // The bytecode cache named by PYTHONPYCACHEPREFIX (bytecode.h): read, never written (the
  // rest of the cache directory stays out of sight). Only once complete, as MakeWorkerSpec.
  if (BytecodeReady(config)) p.read_only.push_back(config.bytecode_dir);
  p.read_only.insert(p.read_only.end(), call.read_only.begin(), call.read_only.end());
  p.writable = call.writable;
  p.shared_writable = call.shared_writable;
  p.devices = call.devices;
  return sandbox::Jail::Create(p);
}

void StageInputs(sandbox::Jail& jail, const std::vector<std::string>& inputs, nlohmann::json* request) {
  for (const auto& in : inputs) {
    std::string err;
    std::string staged = jail.Stage(in, &err);
    if (staged.empty()) {
      util::LogWarn("sandbox: " + err);  // the child then reports the path it cannot read
      continue;
    }
    Replace(request, in, staged);
  }
}

std::vector<std::string> GpuDevices(int index) {
  std::vector<std::string> out;
  for (std::string n : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"})
    if (::access(("/dev/" + n).c_str(), F_OK) == 0) out.push_back(n);
  if (index >= 0) out.push_back("nvidia" + std::to_string(index));  // the GPU it is pinned to
  if (const char* all = std::getenv("KZ_SANDBOX_ALL_GPUS"); all && std::string(all) == "1")
    for (int i = 0; i < 64; ++i)  // a driver that must open every GPU's node (docs/sandbox.md)
      if (i != index && ::access(("/dev/nvidia" + std::to_string(i)).c_str(), F_OK) == 0)
        out.push_back("nvidia" + std::to_string(i));
  return out;
}

}  // namespace kz::worker
