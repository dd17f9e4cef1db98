// Kernel templates across the cuda.cu split (cuda_split.h).
//
// nvcc gives the host stub of every kernel-template instantiation internal linkage (even an
// explicit instantiation: `nm` shows `t _Z1kILi16EEvPf`), so the host part cannot call
// `k<16>`'s stub as it calls a plain kernel's. Instead, for each instantiation the host part
// launches, the device part gets a plain launcher with external linkage,
//
//   void kz_tl_0(KzLaunch kz_l, const float* a, int n) { k<16><<<kz_l.g, kz_l.b, kz_l.s, kz_l.st>>>(a, n); }
//
// whose parameter list is the template's with its parameters substituted, and the host
// launch `k<16><<<g, b>>>(x, n)` becomes `kz_tl_0(KzLaunch(g, b), x, n)`: the same
// conversions of the arguments to the kernel's parameter types, the same launch. Template
// arguments must be literals, builtin types or the source's top-level constants; anything
// else (`k<scalar_t>` inside AT_DISPATCH, deduced arguments) refuses the split.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kz::compile::cuda_split {

// A launch configuration: grid, block, shared bytes, stream (in both parts).
extern const char* const kLaunchStruct;

struct KernelTemplate {
  std::vector<std::pair<std::string, std::optional<std::string>>> tparams;  // name, default
  std::string params;  // the parameter list text, without parentheses
};
// Kernel templates by name, in the order the source defines them.
using KernelTemplates = std::vector<std::pair<std::string, KernelTemplate>>;

// The template and parameter lists of `template <...> __global__ void name(...)` in
// `header` (source text up to the body). False with the reason when they cannot be read.
bool ParseKernelTemplate(std::string_view header, std::string_view name, KernelTemplate* out, std::string* why);

struct TemplateLaunches {
  std::string host;                                            // the host text, launches of kernel templates rewritten
  std::string launchers;                                       // their definitions, for the device part
  std::map<std::string, std::vector<std::string>> prototypes;  // kernel name -> host prototypes
};

// Rewrites the launches of `templates` in `host_text` (`host_code` = Blank(host_text)) into
// launcher calls; `constants` are the source's top-level constants (usable as arguments).
// False with the reason when a launch cannot be placed.
bool RewriteTemplateLaunches(std::string_view host_text, std::string_view host_code, const KernelTemplates& templates,
                             const std::set<std::string>& constants, TemplateLaunches* out, std::string* why);

}  // namespace kz::compile::cuda_split
