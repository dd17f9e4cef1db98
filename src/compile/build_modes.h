// The header modes of an accelerated build (docs/compile-farm.md), fastest first, each
// falling back to the next when it fails to compile or link:
//   split: cuda.cu cut into a torch-free device part (nvcc) and a host part appended to
//          main.cpp (g++ with the PCH); `lite`: cuda.cu against kz_torch_lite.h; `full`:
//          torch's own files. Each is tried with the slim host header first, unless that
//          already failed (then torch's), and the last one with torch's own files.
// An object whose source and flags did not change is kept between attempts.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/cuda_split.h"
#include "compile/host_header.h"

namespace kz::compile {

struct NinjaOutcome {
  bool ok = false;
  std::string message;  // on failure: "Error building extension '<name>': <ninja output>"
  // ninja timed out, was killed by a signal or could not start: the machine's failure, not
  // the sources'; no other mode is tried and nothing is cached as a compile error.
  bool machine = false;
};

struct ModeHooks {
  std::function<NinjaOutcome()> run_ninja;                // runs build.ninja in the build dir
  std::function<CudaSplit(const std::string& cu)> split;  // null: no split mode
  // "" when a split build's objects are sound, else why not (split_symbols.h).
  std::function<std::string(const CudaSplit&)> check_split;
};

// Builds the load_inline files in `build_dir` (main.cpp, cuda.cu, build.ninja) with the
// fastest mode that compiles. `report` receives header_mode, host_header, fallbacks,
// split_kernels / split_skipped, slim_skipped, fallbacks_skipped. The last attempt's
// outcome is returned.
NinjaOutcome RunModes(const std::string& build_dir, HostHeader& host, const ModeHooks& hooks, nlohmann::json* report);

}  // namespace kz::compile
