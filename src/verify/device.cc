#include "verify/device.h"

#include <cstdlib>
#include <sstream>

#include "util/subprocess.h"

namespace kz::verify {

std::vector<Gpu> DetectGpus() {
  std::vector<Gpu> gpus;
  if (const char* f = std::getenv("KZ_FORCE_CPU"); f && std::string(f) == "1") return gpus;
  util::ProcessSpec spec;
  spec.argv = {"nvidia-smi", "--query-gpu=index,name,compute_cap,memory.total",
               "--format=csv,noheader,nounits"};
  spec.wall_limit_s = 10;
  spec.tail_bytes = 65536;
  auto r = util::RunProcess(spec);
  if (r.end != util::ProcessEnd::kExited || r.exit_code != 0) return gpus;
  std::istringstream in(r.stdout_tail);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string idx, name, cap, mib;
    if (!std::getline(fields, idx, ',') || !std::getline(fields, name, ',') ||
        !std::getline(fields, cap, ','))
      continue;
    std::getline(fields, mib);
    auto trim = [](std::string s) {
      size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
      return a == std::string::npos ? "" : s.substr(a, b - a + 1);
    };
    uint64_t memory = std::strtoull(trim(mib).c_str(), nullptr, 10) << 20;  // MiB; 0 if "[N/A]"
    gpus.push_back({std::atoi(trim(idx).c_str()), trim(name), trim(cap), memory});
  }
  return gpus;
}

}  // namespace kz::verify
