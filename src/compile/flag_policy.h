// Build flags a candidate may not pass through load_inline's extra_*flags: those that run a
// program of its choosing inside the compiler or linker, load code into them, read more
// flags from a file, or write outputs outside the build (docs/compile-farm.md, "Flags a
// candidate may not pass"). The builds share a precompiled-header root and a cache, so one
// candidate's program could otherwise plant files that other candidates' builds use.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace kz::compile {

// "" when every flag of the call's extra_cflags, extra_cuda_cflags and extra_ldflags is
// allowed, else the reason naming the first refused flag. Each flag is also read as its
// comma- and '='-separated parts (`-Xcompiler=-wrapper,x`, `-Wl,-plugin,x.so`).
std::string RefusedBuildFlag(const nlohmann::json& call);

}  // namespace kz::compile
