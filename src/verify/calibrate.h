// The roofline's ceilings for one GPU (verify/roofline.h): read from the cache
// <cache dir>/ceilings/v1/<CeilingsKey>.json, else measured by the worker op `calibrate` in a
// child pinned to that GPU (~10 s on an H200) and cached. Not sandboxed: the child runs no
// candidate or task code.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/roofline.h"
#include "worker/worker_client.h"

namespace kz::verify {

struct CeilingsFound {
  Ceilings ceilings;
  bool cached = false;  // read from the cache, not measured now
  double seconds = 0;   // the measurement's wall time (0 when cached)
};

// `device` = a verdict's device facts (name, capability, torch, cuda: the cache key); `gpu`
// the GPU index the child is pinned to. nullopt and *err when the facts name no GPU, or the
// child failed or returned ceilings that are not positive (nothing is cached then).
std::optional<CeilingsFound> EnsureCeilings(const worker::WorkerConfig& config, const std::string& cache_dir,
                                            const nlohmann::json& device, int gpu, std::string* err);

// Adds stages.timing.roofline to timed GPU verdicts (kz optimize): the ceilings are found
// (EnsureCeilings) on the first verdict that names its GPU, once; a failure is said through
// `say` once and leaves verdicts without a roofline. Not thread-safe: one caller at a time.
class RooflineAnnotator {
 public:
  RooflineAnnotator(worker::WorkerConfig config, std::string cache_dir, int gpu,
                    std::function<void(const std::string&)> say)
      : config_(std::move(config)), cache_dir_(std::move(cache_dir)), gpu_(gpu), say_(std::move(say)) {}
  void Annotate(nlohmann::json* verdict);

 private:
  worker::WorkerConfig config_;
  std::string cache_dir_;
  int gpu_;
  std::function<void(const std::string&)> say_;
  bool tried_ = false;
  std::optional<Ceilings> ceilings_;
};

}  // namespace kz::verify
