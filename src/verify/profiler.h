// Nsight Compute counters for an accepted candidate (docs/optimize.md, "ncu counters"): a
// separate profiling child of the candidate, after and never inside its timed verification,
// with ncu in front of the child's command. Where the host does not allow counters, a clear
// reason instead: "ncu: not installed", "ncu: no GPU", "ncu: no permission for GPU
// performance counters (ERR_NVGPUCTRPERM)", "ncu: failed (<first line>)".
//
// Availability is probed once per Profiler (binary found, `ncu --version` runs, a GPU); the
// counter permission is learned from the first profile's output (ncu prints ERR_NVGPUCTRPERM
// and runs the program unprofiled) and then cached, so a host without permission pays for one
// profiling child at most. Not thread-safe: one caller at a time.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/device.h"
#include "verify/ncu_report.h"
#include "verify/sample.h"
#include "worker/worker_client.h"  // header only here: WorkerConfig

namespace kz::verify {

struct ProfilerOptions {
  std::string ncu;          // the binary; "" = $KZ_NCU, else `ncu` on PATH, else /usr/local/cuda/bin/ncu
  bool have_gpu = false;    // false: "ncu: no GPU", nothing runs
  int max_launches = 8;     // kernel launches profiled at most (ncu --launch-count)
  double timeout_s = 120;   // the profiling child's wall limit
  std::string scratch_dir;  // where each profile's log directory is made ("" = the temp dir)
};

// What one profiling child did. `ran` false: it could not start (`error` says why).
struct ProfiledRun {
  bool ran = false;
  double wall_s = 0;
  std::string stderr_text;
  std::string error;
  std::string end;  // how it ended when not a normal exit ("timed out after 120 s"), else ""
};
// Runs the profiled command under `ncu_argv` (ncu and its options, the command to append)
// within `timeout_s`; ncu writes to a file in `log_dir`, which the child must be able to
// write. Production: a sandboxed run child of the candidate (VerifierProfileChild); tests:
// any command.
using ProfileChild =
    std::function<ProfiledRun(const std::vector<std::string>& ncu_argv, const std::string& log_dir, double timeout_s)>;

struct ProfileResult {
  bool available = false;  // counters came back
  std::string reason;      // why not ("" when available)
  std::string version;     // ncu's version line, when found
  std::vector<KernelCounters> kernels;
  double seconds = 0;  // the profiling child's wall time (0 when none ran)
  // {"available", "reason", "version", "seconds", "kernels": [CountersToJson...]}
  nlohmann::json ToJson() const;
};

// A stored profile (tolerant of missing or wrong fields). Its prompt lines: ProfileFeedback
// (ncu_report.h).
ProfileResult ProfileFromJson(const nlohmann::json& j);

class Profiler {
 public:
  explicit Profiler(ProfilerOptions o) : o_(std::move(o)) {}

  struct Availability {
    bool ok = false;
    std::string reason;  // set when !ok
    std::string ncu;     // the resolved binary
    std::string version;
  };
  // Probed on the first call, cached after; a permission failure learned by Profile replaces it.
  const Availability& Probe();

  // Profiles the launches of `kernel_names` (function names; empty: refused, since without a
  // filter the reference's kernels would be profiled too) in one child, at most
  // min(launches, max_launches) of them, within `timeout_s` (<= 0: the options'). Unavailable:
  // the reason, nothing runs.
  ProfileResult Profile(const std::vector<std::string>& kernel_names, int launches, const ProfileChild& child,
                        double timeout_s = 0);

 private:
  ProfilerOptions o_;
  std::optional<Availability> avail_;
};

// The candidate's kernel function names and launches per forward, from its verdict's launch
// trace (the first traced call's candidate-class kernels); empty when not traced.
std::vector<std::string> CandidateKernelNames(const nlohmann::json& verdict, int* launches);

// The production child (profile_child.cc, in kz_verify): `sample` verified again by a Verifier whose run child starts
// under ncu (in the same sandbox and limits as its verification: `worker`'s), with one trial, no timing and no launch
// trace (CUPTI has one subscriber: ncu's). Its verdict is discarded.
ProfileChild VerifierProfileChild(worker::WorkerConfig worker, VerifyOptions options, std::vector<Gpu> gpus,
                                  Sample sample);

}  // namespace kz::verify
