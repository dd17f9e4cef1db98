#include "compile/flag_policy.h"

#include <string_view>
#include <vector>

namespace kz::compile {
namespace {
struct Rule {
  std::string_view prefix;  // matched at the start of a part
  std::string_view why;
};
constexpr Rule kRules[] = {
    {"-wrapper", "runs a program around each compiler pass"},
    {"-fplugin", "loads a plugin into the compiler"},
    {"-specs", "rewrites the compiler driver's rules"},
    {"-B", "makes the driver look for its programs elsewhere"},
    {"-ccbin", "picks the host compiler"},
    {"--compiler-bindir", "picks the host compiler"},
    {"-fuse-ld", "picks the linker"},
    {"-plugin", "loads a plugin into the linker"},
    {"--plugin", "loads a plugin into the linker"},
    {"@", "reads more flags from a file"},
    {"--options-file", "reads more flags from a file"},
    {"-optf", "reads more flags from a file"},
    {"-o", "names an output file or directory"},
    {"--output-file", "names an output file"},
    {"-MF", "names an output file"},
    {"-save-temps", "writes files outside the build"},
    {"--keep", "writes files outside the build"},
    {"-dumpdir", "writes files outside the build"},
    {"-fdump", "writes files outside the build"},
    {"-fprofile", "writes files outside the build"},
};

// The flag and its parts split at ',' and '=' (tool pass-through syntax).
std::vector<std::string_view> Parts(std::string_view flag) {
  std::vector<std::string_view> out{flag};
  size_t start = 0;
  for (size_t i = 0; i <= flag.size(); ++i)
    if (i == flag.size() || flag[i] == ',' || flag[i] == '=') {
      if (i > start && !(start == 0 && i == flag.size())) out.push_back(flag.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::string Check(std::string_view field, std::string_view flag) {
  for (std::string_view part : Parts(flag)) {
    size_t lead = part.find_first_not_of(" \t");
    if (lead == std::string_view::npos) continue;
    part.remove_prefix(lead);
    for (const Rule& r : kRules)
      if (part.substr(0, r.prefix.size()) == r.prefix)
        return std::string(field) + ": '" + std::string(flag.substr(0, 200)) + "' is not allowed: it " +
               std::string(r.why) + " (docs/compile-farm.md, \"Flags a candidate may not pass\")";
  }
  return "";
}
}  // namespace

std::string RefusedBuildFlag(const nlohmann::json& call) {
  if (!call.is_object()) return "";
  for (const char* field : {"extra_cflags", "extra_cuda_cflags", "extra_ldflags"}) {
    auto it = call.find(field);
    if (it == call.end()) continue;
    std::vector<nlohmann::json> flags =
        it->is_array() ? it->get<std::vector<nlohmann::json>>() : std::vector<nlohmann::json>{*it};
    for (const auto& f : flags)
      if (f.is_string())
        if (std::string why = Check(field, f.get_ref<const std::string&>()); !why.empty()) return why;
  }
  return "";
}

}  // namespace kz::compile
