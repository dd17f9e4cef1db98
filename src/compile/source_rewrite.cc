#include "compile/source_rewrite.h"

#include <regex>
#include <sstream>

namespace kz::compile {

const char* const kLiteHeader = R"(// Written by KernelZero's build farm: a lighter stand-in for <torch/types.h>.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/full.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>
#include <optional>
namespace at { namespace cuda { using c10::cuda::getCurrentCUDAStream; } }
namespace torch {
using namespace at;
using std::nullopt;
using std::optional;
using Dtype = at::ScalarType;
constexpr auto kUInt8 = at::kByte; constexpr auto kInt8 = at::kChar;
constexpr auto kInt16 = at::kShort; constexpr auto kInt32 = at::kInt;
constexpr auto kInt64 = at::kLong; constexpr auto kUInt16 = at::kUInt16;
constexpr auto kUInt32 = at::kUInt32; constexpr auto kUInt64 = at::kUInt64;
constexpr auto kFloat16 = at::kHalf; constexpr auto kFloat32 = at::kFloat;
constexpr auto kFloat64 = at::kDouble;
constexpr auto kU8 = kUInt8; constexpr auto kU16 = kUInt16; constexpr auto kU32 = kUInt32;
constexpr auto kU64 = kUInt64; constexpr auto kI8 = kInt8; constexpr auto kI16 = kInt16;
constexpr auto kI32 = kInt32; constexpr auto kI64 = kInt64; constexpr auto kF16 = kFloat16;
constexpr auto kF32 = kFloat32; constexpr auto kF64 = kFloat64;
}
)";

namespace {
const std::regex& IncludeLine() {
  static const std::regex re(R"(^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"])");
  return re;
}
const std::regex& TorchIncludeLine() {
  static const std::regex re(R"(^[ \t]*#[ \t]*include[ \t]*[<"]torch/(types|extension)\.h[>"][ \t\r]*$)");
  return re;
}
// libstdc++'s std::regex recurses once per character it repeats: a line of untrusted source
// (or compiler output echoing it) is matched only up to this length, trailing blanks cut.
constexpr size_t kMaxRegexLine = 4096;
std::string_view Trimmed(const std::string& line) {
  size_t end = line.find_last_not_of(" \t\r");
  return std::string_view(line).substr(0, end == std::string::npos ? 0 : end + 1);
}
bool IsTorchInclude(const std::string& line) {
  if (line.find("torch/") == std::string::npos) return false;
  std::string_view t = Trimmed(line);
  return t.size() <= kMaxRegexLine && std::regex_search(t.begin(), t.end(), TorchIncludeLine());
}
}  // namespace

std::vector<std::string> IncludedHeaders(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (line.find("include") == std::string::npos) continue;
    // an include line too long to read is skipped: the slim host header is only tried
    // first, and a build that needs more falls back to torch's (build_modes.cc)
    if (line.size() <= kMaxRegexLine && std::regex_search(line, m, IncludeLine())) out.push_back(m[1]);
  }
  return out;
}

bool HasTorchInclude(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (IsTorchInclude(line)) return true;
  return false;
}

std::string ReplaceTorchIncludes(const std::string& text, const std::string& header) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    bool last = end == std::string::npos;
    std::string line = text.substr(at, last ? std::string::npos : end - at);
    bool torch = IsTorchInclude(line);
    out += torch ? "#include \"" + header + "\"" : line;
    if (!last) out += '\n';
    at = last ? text.size() : end + 1;
  }
  return out;
}

bool HeaderIndependentErrors(const std::string& output) {
  static const std::regex error_line(R"(^"?[^\s"]*cuda\.cu"?\(\d+\): error: (.*)$)");
  static const std::regex independent(
      R"(^(expected an? |expected a \S+$|unrecognized token|missing closing quote|)"
      R"(a value of type .* cannot be (used to initialize an entity|assigned to an entity) of type|)"
      R"(expression must be a modifiable lvalue|expression must have (integral|arithmetic|pointer) type))");
  std::istringstream in(output);
  std::smatch m;
  bool any = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find(": error: ") == std::string::npos) continue;
    if (line.size() > kMaxRegexLine) return false;  // not read: not known to be header-independent
    if (!std::regex_search(line, m, error_line)) continue;
    std::string message = m[1];
    if (!std::regex_search(message, independent)) return false;
    any = true;
  }
  return any;
}

}  // namespace kz::compile
