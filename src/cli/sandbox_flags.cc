#include "cli/sandbox_flags.h"

#include "util/log.h"

namespace kz::cli {

void AddSandboxOptions(CLI::App* c, SandboxFlags* f, const char* default_mode) {
  f->mode = default_mode;
  c->add_option(
       "--sandbox", f->mode,
       std::string("OS sandbox of the children that run candidate code: require, best-effort or off (default ") +
           default_mode + "; docs/sandbox.md)")
      ->check(CLI::IsMember({"require", "best-effort", "off"}));
  c->add_option("--sandbox-scratch-mib", f->scratch_mib, "Size of a sandboxed child's private scratch (tmpfs), MiB")
      ->check(CLI::PositiveNumber);
  c->add_option("--sandbox-shm-mib", f->shm_mib, "Size of a sandboxed child's /dev/shm, MiB")
      ->check(CLI::PositiveNumber);
  c->add_option("--sandbox-file-mib", f->file_mib, "Largest file a sandboxed child writes, MiB")
      ->check(CLI::PositiveNumber);
  c->add_option("--sandbox-triton-cache", f->triton_cache,
                "A Triton cache seeded by trusted runs, shared read-only under each child's private overlay");
  c->add_option("--sandbox-processes", f->processes, "Processes and threads of a sandboxed child")
      ->check(CLI::Range(16, 1 << 20));
  c->add_option("--sandbox-open-files", f->open_files, "Open files of a sandboxed child")
      ->check(CLI::Range(64, 1 << 20));
}

bool ApplySandbox(const SandboxFlags& f, const std::string& cache_dir, worker::WorkerConfig* config, std::string* err) {
  auto& s = config->sandbox;
  if (!sandbox::ParseMode(f.mode, &s.mode)) {
    *err = "--sandbox must be require, best-effort or off";
    return false;
  }
  s.stage_base = cache_dir.empty() ? "" : cache_dir + "/tmp";
  s.triton_cache = f.triton_cache;
  auto mib = [](double v) { return static_cast<uint64_t>(v * double(1u << 20)); };
  s.limits = {f.processes, f.open_files, mib(f.file_mib), mib(f.scratch_mib), mib(f.shm_mib)};
  if (!sandbox::Check(s.mode, s.stage_base, &s.features, err)) return false;
  if (s.mode == sandbox::Mode::kBestEffort && !(s.features == sandbox::Features{})) {
    std::string missing;
    for (const auto& m : sandbox::Missing(s.features)) missing += (missing.empty() ? "" : ", ") + m;
    util::LogWarn("sandbox (best-effort): this host lacks " + missing +
                  "; candidates run with less isolation and every verdict says so (stages.sandbox)");
  }
  return true;
}

}  // namespace kz::cli
