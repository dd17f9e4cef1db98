// Builds load_inline extensions on CPU worker processes, ahead of GPU dispatch, through
// the content-addressed cache. Identical calls (same key) are built once.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/cache.h"
#include "worker/call_set.h"
#include "worker/worker_client.h"

namespace kz::compile {

struct BuildResult {
  std::string name, digest, key;
  bool ok = false;
  bool cache_hit = false;
  double seconds = 0;
  std::string library;      // when ok
  std::string error_kind;   // "compile_error" (cached), "timeout", "memory_limit", "crash", "cache"
  std::string diagnostics;  // trimmed compiler output (mapped to this call's candidate) or the reason
  nlohmann::json build;     // how it was built: {"pch", "header_mode", "pch_seconds"}
};

struct BuilderOptions {
  int jobs = 1;                // builds at once
  double timeout_s = 900;      // per build
  uint64_t max_rss_bytes = 0;  // per build: its worker and every compiler together; 0 = none
  // With a pch_root: builds go through the C++ driver (build_driver.h: PCH for main.cpp,
  // lighter headers or a split for cuda.cu); otherwise torch's own load_inline in a worker.
  bool accelerate = true;
  std::string pch_root;  // where precompiled headers live (one per flag set)
  BuildEnv env;
};

using BuildProgress = std::function<void(const BuildResult&, size_t done, size_t total)>;

// One result per call, in order. Never throws for build failures. Builds of the worker (op
// `build`, without the C++ driver) run through `launcher`; the driver's tools always run as
// processes (driver_call.h).
std::vector<BuildResult> BuildExtensions(const std::vector<nlohmann::json>& calls, const ExtensionCache& cache,
                                         const worker::WorkerConfig& worker, const BuilderOptions& options,
                                         const BuildProgress& progress = nullptr,
                                         const worker::LauncherPtr& launcher = worker::ProcessLauncher());

}  // namespace kz::compile
