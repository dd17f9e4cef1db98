// Which GPUs this host has, found without initialising CUDA in this process.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kz::verify {

struct Gpu {
  int index = 0;
  std::string name;
  std::string capability;  // "9.0"
  uint64_t memory_bytes = 0;  // total device memory; 0 = unknown
};

// Asks nvidia-smi (10 s limit). Empty when there is none, or when KZ_FORCE_CPU=1.
std::vector<Gpu> DetectGpus();

}  // namespace kz::verify
