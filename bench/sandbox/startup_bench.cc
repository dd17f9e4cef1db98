// Sandbox set-up cost per child, side by side with no sandbox (issue 17: <= 50 ms per child
// on the H200 host). Starts the same child alternately with and without a jail, N times each,
// and prints one JSON object: per workload the median, p10 and p90 start-to-exit wall time in
// ms and the median difference. Workloads: `true` (pure set-up), `python -c pass` and
// `python -c "import torch"` with the worker's interpreter and the worker's jail.
// Usage: kz_sandbox_bench [--runs N] [--gpu INDEX] [--no-torch]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/worker_client.h"

namespace {
using kz::util::ProcessSpec;

double RunOnce(const std::vector<std::string>& argv, std::shared_ptr<const kz::util::ChildJail> jail) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.wall_limit_s = 120;
  spec.jail = std::move(jail);
  auto t0 = std::chrono::steady_clock::now();
  auto r = kz::util::RunProcess(spec);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r.end != kz::util::ProcessEnd::kExited || r.exit_code != 0) {
    std::cerr << "child failed: " << r.stderr_tail << r.spawn_error << "\n";
    std::exit(1);
  }
  return ms;
}

nlohmann::json Stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
  return {{"median_ms", at(0.5)}, {"p10_ms", at(0.1)}, {"p90_ms", at(0.9)}, {"n", v.size()}};
}
}  // namespace

int main(int argc, char** argv) {
  int runs = 21, gpu = -1;
  bool torch = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--gpu") && i + 1 < argc) gpu = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-torch")) torch = false;
  }
  kz::worker::WorkerConfig config = kz::worker::LocateWorker(argv[0]);
  config.sandbox.mode = kz::sandbox::Mode::kRequire;
  std::string err;
  if (!kz::sandbox::Check(config.sandbox.mode, "", &config.sandbox.features, &err)) {
    std::cerr << err << "\n";
    return 2;
  }
  kz::worker::WorkerCall call;
  if (gpu >= 0) call.devices = kz::worker::GpuDevices(gpu);
  std::vector<std::pair<std::string, std::vector<std::string>>> loads = {
      {"true", {"true"}}, {"python -c pass", {config.python, "-c", "pass"}}};
  if (torch) loads.push_back({"python -c 'import torch'", {config.python, "-c", "import torch"}});
  nlohmann::json out = {{"runs", runs}, {"python", config.python}, {"workloads", nlohmann::json::object()}};
  for (const auto& [name, cmd] : loads) {
    std::vector<double> on, off, diff;
    RunOnce(cmd, nullptr);  // warm the page cache
    for (int i = 0; i < runs; ++i) {
      off.push_back(RunOnce(cmd, nullptr));
      on.push_back(RunOnce(cmd, kz::worker::NewJail(config, call)));  // a fresh jail per child, as kz does
      diff.push_back(on.back() - off.back());
    }
    out["workloads"][name] = {{"sandbox", Stats(on)}, {"off", Stats(off)}, {"added", Stats(diff)}};
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}
