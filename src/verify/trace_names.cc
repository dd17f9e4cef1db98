#include "verify/trace_names.h"

#include <optional>
#include <regex>

namespace kz::verify {

namespace {
// Qualified by PyTorch or a vendor library's namespace.
const std::regex& ForeignNamespace() {
  static const std::regex re(
      R"(^(?:at|c10|torch|cutlass|cute|cub|thrust|flash|fmha|xmma\w*|cudnn\w*|cublas\w*|cusparse\w*|cufft\w*|cusolver\w*)::)");
  return re;
}
// Vendor library kernels without a namespace (cuBLAS/cuDNN naming schemes).
const std::regex& VendorName() {
  static const std::regex re(
      R"(^(?:sm\d+_xmma|xmma|ampere_|volta_|turing_|hopper_|blackwell_|cutlass|cublas|cudnn|nvjet|gemv2|gemvx|gemmSN|gemmk1|splitKreduce))");
  return re;
}
// Foreign kernels that only fill or move data: reported, not counted as compute.
const std::regex& MemoryKernel() {
  static const std::regex re(
      R"(FillFunctor|fill_kernel|direct_copy_kernel|\bcopy_kernel|CatArrayBatchedCopy|^memset|^memcpy)");
  return re;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string Strip(const std::string& s, bool left) {
  size_t b = 0, e = s.size();
  while (left && b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Index of the `open` matching the `close` at s[end], or nullopt.
std::optional<size_t> MatchingOpen(const std::string& s, size_t end, char open, char close) {
  int depth = 0;
  for (size_t i = end + 1; i-- > 0;) {
    if (s[i] == close)
      ++depth;
    else if (s[i] == open && --depth == 0)
      return i;
  }
  return std::nullopt;
}

// Index just after the last `sep` outside (), <> and {}; 0 if none.
size_t LastTopLevel(const std::string& s, const std::string& sep) {
  int depth = 0;
  size_t cut = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '<' || c == '{')
      ++depth;
    else if (c == ')' || c == '>' || c == '}')
      depth = depth > 0 ? depth - 1 : 0;
    else if (depth == 0 && s.compare(i, sep.size(), sep) == 0)
      cut = i + sep.size();
  }
  return cut;
}

// s with its trailing " const" / " volatile" (one, after whitespace) removed.
std::string DropQualifier(const std::string& s) {
  static const std::regex re(R"(\s+(?:const|volatile)$)");
  return std::regex_replace(s, re, "");
}
}  // namespace

std::pair<std::string, std::string> KernelFunctionName(const std::string& name) {
  std::string s = Strip(name, true);
  for (size_t at = 0; (at = s.find("(anonymous namespace)", at)) != std::string::npos; at += 6)
    s.replace(at, 21, "{anon}");
  s = DropQualifier(s);
  std::optional<size_t> opening;
  if (!s.empty() && s.back() == ')') opening = MatchingOpen(s, s.size() - 1, '(', ')');
  if (opening) {
    s = Strip(s.substr(0, *opening), false);
    if (!s.empty() && s.back() == '>') {
      opening = MatchingOpen(s, s.size() - 1, '<', '>');
      if (opening) s = Strip(s.substr(0, *opening), false);
    }
  } else {
    s = Strip(s.substr(0, s.find_first_of("(<")), false);
  }
  std::string qualified = s.substr(LastTopLevel(s, " "));
  return {qualified, qualified.substr(LastTopLevel(qualified, "::"))};
}

const char* ClassifyRecord(TraceKind kind, const std::string& name, const std::set<std::string>& candidate_names) {
  if (kind == TraceKind::kMarker) return "marker";
  if (kind != TraceKind::kKernel) return "memory";
  auto [qualified, unqualified] = KernelFunctionName(name);
  bool vendor = std::regex_search(qualified, ForeignNamespace()) || std::regex_search(unqualified, VendorName());
  if (candidate_names.count(unqualified) && !vendor) return "candidate";
  bool memory = std::regex_search(name, MemoryKernel()) || std::regex_search(unqualified, MemoryKernel());
  return memory ? "memory" : "foreign";
}

}  // namespace kz::verify
