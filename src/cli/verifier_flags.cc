#include "cli/verifier_flags.h"

#include <algorithm>
#include <thread>

#include "util/fs.h"
#include "verify/sample.h"

namespace kz::cli {

void AddVerifierOptions(CLI::App* c, verify::VerifyOptions* o, SandboxFlags* sandbox, const VerifierFlagTexts& texts) {
  c->add_option("--timeout", o->timeout_s, "Wall-time limit of one sample's run, seconds");
  c->add_option("--compile-timeout", o->compile_timeout_s, "Wall-time limit of one build, seconds");
  c->add_option("--max-host-mem", o->max_host_mem_mib, "Host memory limit per child, MiB");
  c->add_option("--cache-dir", o->cache_dir, "Compiled-extension cache (default ~/.cache/kernelzero)");
  AddSandboxOptions(c, sandbox, texts.sandbox_default);
  c->add_option("-j,--jobs", o->jobs, "Builds at once (default: cores / 2)");
  c->add_option("--policy", o->policy, texts.policy_help)->check(CLI::IsMember({"strict", "kernelbench"}));
}

void AddTimingCiOption(CLI::App* c, double* ci, const std::string& whose) {
  c->add_option("--timing-ci", *ci,
                "Adaptive timing: stop once both medians' 95 % intervals are within this fraction (e.g. 0.02); "
                "0 (default): 30+ calls until the medians move < 1 %; " +
                    whose)
      ->check(CLI::Range(0.0, 0.5));
}

verify::VerifyOptions ServiceVerifyDefaults() {
  verify::VerifyOptions o;
  o.jobs = 0;
  o.footprint = true;
  return o;
}

void FinishVerifierOptions(verify::VerifyOptions* o) {
  if (o->cache_dir.empty()) o->cache_dir = verify::DefaultCacheDir();
  o->cache_dir = util::AbsolutePath(o->cache_dir);
  if (o->jobs <= 0) o->jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
}

}  // namespace kz::cli
