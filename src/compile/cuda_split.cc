#include "compile/cuda_split.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "compile/cuda_split_items.h"
#include "compile/cuda_split_place.h"
#include "compile/cuda_split_templates.h"
#include "compile/cuda_split_text.h"

namespace kz::compile {
namespace {
using namespace cuda_split;  // NOLINT(google-build-using-namespace): this component's parts

constexpr std::string_view kDevicePrelude =
    R"(// Written by KernelZero's build farm: the torch-free device part of cuda.cu.
// Standard headers that torch's headers would otherwise have pulled in.
#include <cstddef>
#include <cstdint>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <cuda_runtime.h>
)";
// torch's headers also pull in cuda_fp16.h and cuda_bf16.h (c10's Half and BFloat16): ~0.2 s
// of nvcc's ~0.85 s for a small device part, so they are included only for a source that
// names something of theirs (NamesHalf). A source that uses them without such a name fails
// to compile split and is built by the next header mode: time, not behaviour.
constexpr std::string_view kHalfPrelude = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
constexpr std::string_view kHostPrelude =
    R"(// Written by KernelZero's build farm: the host part of cuda.cu (kernels are
// defined in cuda.cu's device part; launches call their host stubs, as nvcc emits them).
#include <cuda_runtime.h>
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim = 1,
                                                size_t sharedMem = 0, struct CUstream_st* stream = 0);
)";

// A type or intrinsic of cuda_fp16.h / cuda_bf16.h: half, bfloat, bf16, fp16 anywhere;
// words __nv_*, __h*, h2*; calls of hexp-style math (hexp, hlog, hsqrt, ...).
bool NamesHalf(std::string_view s) {
  for (std::string_view part : {"half", "bfloat", "bf16", "fp16"})
    if (s.find(part) != kNpos) return true;
  for (size_t p = 0; p < s.size();) {
    if (!IsWord(s[p])) {
      ++p;
      continue;
    }
    size_t end = WordEnd(s, p);
    for (std::string_view prefix : {"__nv_", "__h", "h2"})
      if (end - p > prefix.size() && StartsWith(s, p, prefix)) return true;
    size_t open = SkipSpace(s, end);
    for (std::string_view f :
         {"exp", "log", "sqrt", "rsqrt", "rcp", "sin", "cos", "tanh", "ceil", "floor", "trunc", "rint"})
      if (s[p] == 'h' && StartsWith(s, p + 1, f) && open < s.size() && s[open] == '(') return true;
    p = end;
  }
  return false;
}

// Names of the source's top-level macros and constexpr/const integral constants (re.M
// findall of `^\s*#\s*define\s+(\w+)` and `^\s*(static\s+)?(constexpr|const)\s+[\w:]+\s+(\w+)\s*=`).
bool DefineAt(std::string_view s, size_t p, size_t* end, std::string* name) {
  size_t q = SkipSpace(s, p);
  if (q >= s.size() || s[q] != '#') return false;
  q = SkipSpace(s, q + 1);
  if (!StartsWith(s, q, "define") || q + 6 >= s.size() || !IsSpace(s[q + 6])) return false;
  size_t w = SkipSpace(s, q + 6);
  *end = WordEnd(s, w);
  *name = s.substr(w, *end - w);
  return *end > w;
}

bool ConstantAt(std::string_view s, size_t p, size_t* end, std::string* name) {
  size_t q = SkipSpace(s, p);
  if (StartsWith(s, q, "static") && q + 6 < s.size() && IsSpace(s[q + 6])) q = SkipSpace(s, q + 6);
  size_t kw = 0;  // constexpr or const, then a space
  for (std::string_view k : {"constexpr", "const"}) {
    if (kw == 0 && StartsWith(s, q, k) && q + k.size() < s.size() && IsSpace(s[q + k.size()])) kw = k.size();
  }
  if (kw == 0) return false;
  size_t type = SkipSpace(s, q + kw), type_end = type;
  while (type_end < s.size() && (IsWord(s[type_end]) || s[type_end] == ':')) ++type_end;
  if (type_end == type || type_end >= s.size() || !IsSpace(s[type_end])) return false;
  size_t w = SkipSpace(s, type_end), w_end = WordEnd(s, w), eq = SkipSpace(s, w_end);
  if (w_end == w || eq >= s.size() || s[eq] != '=') return false;
  *name = s.substr(w, w_end - w), *end = eq + 1;
  return true;
}

template <typename MatchAt>
void FindAllAtLineStarts(std::string_view s, MatchAt match_at, std::set<std::string>* names) {
  size_t pos = 0, end = 0;  // a match ends at `pos`; the next one starts after it
  std::string name;
  for (size_t p = 0;; p = s.find('\n', p) + 1) {
    if (p >= pos && match_at(s, p, &end, &name)) names->insert(name), pos = end;
    if (s.find('\n', p) == kNpos) break;
  }
}

std::set<std::string> Constants(std::string_view code) {
  std::set<std::string> names;
  FindAllAtLineStarts(code, DefineAt, &names);
  FindAllAtLineStarts(code, ConstantAt, &names);
  return names;
}

// `k<<<cfg>>>(` -> `(__cudaPushCallConfiguration(cfg)) ? (void)0 : k(` (nvcc's form).
bool RewriteLaunches(std::string_view text, std::string_view code, std::string* out, std::string* why) {
  size_t pos = 0;
  for (size_t at = code.find("<<<"); at != kNpos; at = code.find("<<<", at + 3)) {
    if (at < pos) continue;
    size_t close = code.find(">>>", at + 3);
    if (close == kNpos) return *why = "unterminated <<< >>> launch", false;
    size_t k = at;
    while (k > 0 && IsSpace(code[k - 1])) --k;
    if (k > 0 && code[k - 1] == '>') {  // template arguments k<T>
      for (int depth = 0; k > 0;) {
        --k;
        depth += (code[k] == '>') - (code[k] == '<');
        if (depth == 0) break;
      }
    }
    while (k > 0 && (IsAlnum(code[k - 1]) || code[k - 1] == '_' || code[k - 1] == ':')) --k;
    out->append(Slice(text, pos, k));
    out->append("(__cudaPushCallConfiguration(").append(Slice(text, at + 3, close)).append(")) ? (void)0 : ");
    out->append(Slice(text, k, at));
    pos = close + 3;
  }
  out->append(Slice(text, pos, text.size()));
  return true;
}

struct Parts {
  std::vector<std::string> kernels;
  KernelTemplates templates;
  std::string device, host;
};

// cuda.cu's line number at increasing offsets.
struct LineCounter {
  std::string_view src;
  size_t at = 0, line = 1;
  size_t LineOf(size_t offset) {
    line += std::count(src.begin() + at, src.begin() + offset, '\n');
    at = offset;
    return line;
  }
};

bool Emit(const std::vector<Item>& items, LineCounter& lines, Parts* parts, std::string* why) {
  for (const Item& item : items) {
    std::string line = "#line " + std::to_string(lines.LineOf(item.start)) + " \"cuda.cu\"\n";
    if (!item.inner.empty()) {
      std::string opening = line + std::string(item.text.substr(0, item.body + 1)) + "\n";
      parts->device += opening, parts->host += opening;
      if (!Emit(item.inner, lines, parts, why)) return false;
      parts->device += "}\n", parts->host += "}\n";
      continue;
    }
    Placement placed;
    if (!Place(item, &parts->kernels, &parts->templates, &placed, why)) return false;
    if (!placed.device.empty()) parts->device += line + placed.device + "\n";
    if (!placed.host.empty()) parts->host += line + placed.host + "\n";
  }
  return true;
}

// The host part with kernel-template launches made launcher calls (their definitions
// appended to the device part) and every other launch nvcc's form.
bool FinishHost(Parts* parts, std::string_view code, std::string* why) {
  std::string host = std::move(parts->host);
  if (!parts->templates.empty()) {
    TemplateLaunches launches;
    if (!RewriteTemplateLaunches(host, Blank(host), parts->templates, Constants(code), &launches, why)) return false;
    parts->device += "// Launchers of the kernel-template instantiations the host part uses.\n" + launches.launchers;
    host = std::move(launches.host);
    for (const auto& [name, tmpl] : parts->templates) {
      std::string protos;
      for (const auto& p : launches.prototypes[name]) protos += p;
      host = ReplaceAll(host, TemplateMarker(name), protos);
    }
  }
  if (!RewriteLaunches(host, Blank(host), &parts->host, why)) return false;
  if (Blank(parts->host).find("<<<") != kNpos) return *why = "a kernel launch could not be rewritten", false;
  return true;
}
}  // namespace

CudaSplit SplitCudaSource(const std::string& cuda_cu) {
  CudaSplit out;
  std::string code = Blank(cuda_cu);
  if (code.find("__global__") == kNpos) return out.reason = "no __global__ kernel", out;
  std::vector<Item> items;
  if (!ParseItems(cuda_cu, code, 0, cuda_cu.size(), &items, &out.reason)) return out;
  Parts parts;
  parts.device = std::string(kDevicePrelude) + std::string(NamesHalf(cuda_cu) ? kHalfPrelude : "") + kLaunchStruct;
  parts.host = std::string(kHostPrelude) + kLaunchStruct;
  LineCounter lines{cuda_cu};
  if (!Emit(items, lines, &parts, &out.reason) || !FinishHost(&parts, code, &out.reason)) return out;
  out.ok = true;
  out.device = std::move(parts.device), out.host = std::move(parts.host), out.kernels = std::move(parts.kernels);
  return out;
}

}  // namespace kz::compile
