// Splits a `load_inline` cuda.cu into a torch-free device part and a host part.
//
// Almost all of a cold `cuda.cu` compile is nvcc parsing torch's headers three times
// (docs/compile-farm.md). Kernels themselves need no torch: they take raw pointers. So the
// source is cut at its top-level declarations into
// - the device part (compiled by nvcc, without any torch header): kernels, `__device__`
//   code, torch-free host functions, types, macros and constants;
// - the host part (appended to `main.cpp`, compiled by g++ with the precompiled torch
//   header): everything that names torch, plus prototypes of the kernels and functions the
//   device part defines. Kernel launches `k<<<g, b, s, st>>>(args)` become what nvcc's own
//   front end emits: `(__cudaPushCallConfiguration(g, b, s, st)) ? (void)0 : k(args)`, a
//   call of the kernel's host stub, which the device part's object defines.
// Both parts carry `#line N "cuda.cu"` directives, so diagnostics keep cuda.cu's numbering.
// Kernel templates launched with literal, builtin or the source's own constant arguments
// are launched through launchers (cuda_split_templates.h).
//
// The split is conservative: whatever it cannot place safely (kernel templates with host
// arguments, torch types in device code, mutable non-static globals, out-of-class member
// definitions, static or inline functions with static locals, which would be duplicated)
// gives `ok` false with the reason, and the build driver builds the whole file the usual
// way. A split that then fails to compile or link also falls back (build_modes.h), so a
// wrong guess costs time, never behaviour. Pure text: no process, no file, any thread.
#pragma once
#include <string>
#include <vector>

namespace kz::compile {

// A split of cuda.cu: `ok` false with `reason` when it cannot be split safely.
struct CudaSplit {
  bool ok = false;
  std::string device, host, reason;
  std::vector<std::string> kernels;  // names of the kernels the device part defines, in order
};

CudaSplit SplitCudaSource(const std::string& cuda_cu);

}  // namespace kz::compile
