// --sandbox and its limits, shared by kz verify, serve, worker and bench (docs/sandbox.md).
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "worker/worker_client.h"

namespace kz::cli {

struct SandboxFlags {
  std::string mode;
  double scratch_mib = 4096, shm_mib = 2048, file_mib = 4096;
  uint64_t processes = 1024, open_files = 4096;
  std::string triton_cache;
};

// `default_mode`: "require" for the services (serve, worker), "best-effort" for the local
// tools (verify, bench) — docs/decisions.md, "Sandbox".
void AddSandboxOptions(CLI::App* c, SandboxFlags* f, const char* default_mode);

// The start-up check: probes the host once and fills config->sandbox. Under require on a
// host lacking a mechanism: false with *err saying which and what to do. Under best-effort
// on such a host: true, with a warning logged (and every verdict's stages.sandbox says it).
bool ApplySandbox(const SandboxFlags& f, const std::string& cache_dir, worker::WorkerConfig* config, std::string* err);

}  // namespace kz::cli
