#include "optimize/diagnostics.h"

#include <algorithm>
#include <regex>

#include "util/json_fields.h"

namespace kz::optimize {
using json = nlohmann::json;

namespace {
double Num(const json& j, const char* key) { return util::JsonNumber(j, key); }
std::string Str(const json& j, const char* key) { return util::JsonString(j, key); }
const json& At(const json& j, std::initializer_list<const char*> path) { return util::JsonAt(j, path); }
int Bucket(int n) { return std::clamp(n, 0, 3); }
}  // namespace

int KernelsDefined(const std::string& source) {
  static const std::regex kCuda(R"(__global__)"), kTriton(R"(@triton\.jit)");
  auto count = [&](const std::regex& re) {
    return int(std::distance(std::sregex_iterator(source.begin(), source.end(), re), std::sregex_iterator()));
  };
  return count(kCuda) + count(kTriton);
}

std::vector<int> BehaviourCell(const std::string& source, const json& verdict) {
  int launches = 0;
  const json& calls = At(verdict, {"stages", "trace", "calls"});
  if (calls.is_array() && !calls.empty()) launches = int(Num(calls[0], "candidate_kernels"));
  int bound = 0;
  const json& roof = At(verdict, {"stages", "timing", "roofline"});
  if (roof.is_object()) bound = Str(roof, "bound") == "compute" ? 2 : Str(roof, "bound") == "memory" ? 1 : 0;
  return {std::max(1, Bucket(KernelsDefined(source))), Bucket(launches), bound};
}

}  // namespace kz::optimize
