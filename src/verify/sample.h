// What to verify (a sample) and how (options).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kz::verify {

struct Sample {
  std::string task_path;       // as given
  std::string candidate_path;  // as given
  std::string backend;         // "cuda", "triton", or "" to detect from the source
  std::optional<std::string> expect;  // expected status, from a manifest
  std::string label;           // for logs and summaries
  // Self-check: the task's reference is its own candidate (candidate_path = task_path,
  // Model in place of ModelNew); the rules that require the candidate's own kernels (the
  // screen and the launch trace) are lifted and the verdict says so (docs/memory.md).
  bool self_check = false;
};

struct VerifyOptions {
  std::optional<int> device;           // GPU index; nullopt = first GPU, or CPU if none
  bool cpu_only = false;               // never use a GPU
  int trials = 5;
  uint64_t seed = 42;
  std::optional<double> atol, rtol, rel_l2;
  bool timing = true;
  double timing_budget_s = 10;
  // > 0: adaptive timing (docs/throughput.md): stop once both sides' medians have a 95 %
  // interval of half-width <= timing_ci_rel x median (at least 10 calls); 0: the fixed rule
  // (30 calls at least, until the medians move by < 1 %).
  double timing_ci_rel = 0;
  double timeout_s = 300;              // per sample run
  double compile_timeout_s = 900;      // per extension build
  double extract_timeout_s = 120;
  uint64_t max_host_mem_mib = 32768;   // per child process group
  uint64_t max_source_bytes = 8u << 20;  // task or candidate file larger: refused up front
  std::string cache_dir;               // compiled-extension cache
  uint64_t cache_max_bytes = 20ull << 30;  // LRU bound of the cache (entries, extractions, PCHs)
  int jobs = 1;                        // builds at once
  bool accelerate_builds = true;
  std::string policy = "strict";       // integrity policy: strict | kernelbench
  double min_candidate_share = 0.5;    // strict: candidate kernels' share of compute time
  bool screen = true;                  // run the static screen first
  bool integrity = true;               // false: no screen, trace, dataflow, extra checks,
                                       // timed recheck or host cross-check (a baseline)
  std::string arch_list;               // "" = the GPU's capability, else 9.0
  bool footprint = false;              // measure each task's footprint before its run and
                                       // refuse what cannot fit (kz serve, kz worker, kz bench)
  int gpu_concurrency = 1;             // samples run at once on the device, through the GPU gate
                                       // (correctness shared, timing exclusive; docs/throughput.md)
  // A command the run child starts under (ncu for a profile, verify/profiler.h): its argv
  // before the worker's, and the paths it reads and writes (exposed in the sandbox). Empty:
  // none. A wrapped run never takes a prestarted child.
  struct RunWrapper {
    std::vector<std::string> argv, read_only, writable;
  } run_wrapper;
};

// $KZ_CACHE_DIR, else $XDG_CACHE_HOME/kernelzero, else ~/.cache/kernelzero.
std::string DefaultCacheDir();

// "cuda" when the candidate calls load_inline, "triton" otherwise.
std::string DetectBackend(const std::string& candidate_source);

// Reads a manifest: one JSON object a line with task, candidate, backend and optional
// expect_gpu / expect_cpu; relative paths are resolved against `base_dir`.
bool ReadManifest(const std::string& path, const std::string& base_dir, bool on_gpu,
                  std::vector<Sample>* out, std::string* err);

}  // namespace kz::verify
