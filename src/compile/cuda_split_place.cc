#include "compile/cuda_split_place.h"

#include <algorithm>

#include "compile/cuda_split_text.h"

namespace kz::compile::cuda_split {
namespace {
constexpr std::string_view kLaunchAttrs[] = {"__launch_bounds__", "__maxnreg__", "__cluster_dims__"};

bool Fail(std::string* why, std::string reason) {
  *why = std::move(reason);
  return false;
}

// `#include <torch/...>` (or ATen, c10, pybind11, caffe2) in a blanked preprocessor line.
bool TorchInclude(std::string_view code) {
  for (size_t p = code.find('#'); p != kNpos; p = code.find('#', p + 1)) {
    size_t q = SkipSpace(code, p + 1);
    if (!StartsWith(code, q, "include")) continue;
    size_t r = SkipSpace(code, q + 7);
    if (r >= code.size() || (code[r] != '<' && code[r] != '"')) continue;
    for (std::string_view lib : {"torch/", "ATen/", "c10/", "pybind11/", "caffe2/"})
      if (StartsWith(code, r + 1, lib)) return true;
  }
  return false;
}

// A word that names torch: torch, c10, Tensor, pybind11, TORCH_* / AT_* / C10_* / PYBIND11_*
// macros, or the at:: and py:: namespaces.
bool NamesTorch(std::string_view s) {
  for (size_t p = 0; p < s.size();) {
    if (!IsWord(s[p])) {
      ++p;
      continue;
    }
    size_t end = WordEnd(s, p);
    std::string_view w = s.substr(p, end - p);
    if (w == "torch" || w == "c10" || w == "Tensor" || w == "pybind11") return true;
    for (std::string_view prefix : {"TORCH_", "AT_", "C10_", "PYBIND11_"})
      if (w.size() > prefix.size() && w.substr(0, prefix.size()) == prefix) return true;
    if ((w == "at" || w == "py") && StartsWith(s, end, "::")) return true;
    p = end;
  }
  return false;
}

bool HasKernelAttribute(std::string_view header) {
  size_t open = 0;
  return HasToken(header, {"__global__"}) || std::any_of(std::begin(kLaunchAttrs), std::end(kLaunchAttrs),
                                                         [&](auto a) { return FindCall(header, a, &open) != kNpos; });
}

bool TypeKeywordAt(std::string_view s, size_t p) {
  for (std::string_view k : {"typedef", "using", "struct", "class", "union", "enum", "static_assert"})
    if (TokenAt(s, p, k)) return true;
  return false;
}

// A type declaration: typedef, using, struct, class, union, enum or static_assert, after an
// optional `template <...>`.
bool IsTypeDeclaration(std::string_view h) {
  size_t p = SkipSpace(h, 0);
  if (TypeKeywordAt(h, p)) return true;
  size_t lt = SkipSpace(h, p + 8);
  if (!StartsWith(h, p, "template") || lt >= h.size() || h[lt] != '<') return false;
  for (size_t g = h.find('>', lt + 1); g != kNpos; g = h.find('>', g + 1))
    if (TypeKeywordAt(h, SkipSpace(h, g + 1))) return true;
  return false;
}

bool StartsWithToken(std::string_view h, std::string_view w) { return TokenAt(h, SkipSpace(h, 0), w); }

// `[static] const|constexpr ...`
bool IsConstant(std::string_view h) {
  size_t p = SkipSpace(h, 0);
  if (StartsWith(h, p, "static") && p + 6 < h.size() && IsSpace(h[p + 6])) p = SkipSpace(h, p + 6);
  return TokenAt(h, p, "const") || TokenAt(h, p, "constexpr");
}

// Runs of two or more spaces or tabs made one space.
std::string CollapseBlanks(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j - i >= 2) {
      out += ' ';
      i = j;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// A host declaration of a kernel or function defined in the device part.
std::string Prototype(const Item& item) {
  std::string_view head = item.text.substr(0, item.body);
  if (item.body < 0) {
    head = RStrip(item.text);
    while (!head.empty() && head.back() == ';') head.remove_suffix(1);
  }
  std::string header = ReplaceToken(head, "__global__", "");
  for (std::string_view attr : kLaunchAttrs) {
    size_t open = 0;
    for (size_t at = FindCall(header, attr, &open); at != kNpos; at = FindCall(header, attr, &open)) {
      size_t j = open + 1;
      for (int depth = 1; j < header.size() && depth; ++j) depth += (header[j] == '(') - (header[j] == ')');
      header.erase(at, j - at);
    }
  }
  return CollapseBlanks(Strip(header)) + ";";
}

bool PlaceKernel(const Item& item, bool torchy, std::vector<std::string>* kernels, KernelTemplates* templates,
                 Placement* out, std::string* why) {
  std::string_view header = item.Header();
  if (torchy) return Fail(why, "kernel uses torch/ATen types");
  std::string name = DeclaratorName(header);
  if (name.find("::") != std::string::npos || HasToken(header, {"static"}))
    return Fail(why, "kernel " + name + " is static or qualified");
  kernels->push_back(name);
  out->device = item.text;
  if (!StartsWithToken(header, "template")) {
    out->host = Prototype(item);
    return true;
  }
  KernelTemplate tmpl;  // launched through kz_tl_* launchers (cuda_split_templates.h)
  if (!ParseKernelTemplate(item.body >= 0 ? item.text.substr(0, item.body) : item.text, name, &tmpl, why)) return false;
  auto same = std::find_if(templates->begin(), templates->end(), [&](const auto& t) { return t.first == name; });
  if (same != templates->end()) {
    same->second = std::move(tmpl);
  } else {
    templates->emplace_back(name, std::move(tmpl));
  }
  out->host = TemplateMarker(name);
  return true;
}

// A declaration without a body that names no torch and is no type or extern/constexpr.
bool PlaceDeclaration(const Item& item, Placement* out, std::string* why) {
  std::string_view header = item.Header();
  if ((header.find('(') != kNpos && header.find('=') == kNpos) || IsConstant(header)) {  // a prototype, a constant
    out->device = out->host = item.text;
  } else if (StartsWithToken(header, "static")) {
    out->host = item.text;  // host-side mutable state
  } else {
    return Fail(why, "mutable global variable with external linkage");
  }
  return true;
}

bool PlaceFunction(const Item& item, Placement* out, std::string* why) {
  std::string_view header = item.Header();
  std::string name = DeclaratorName(header);
  if (name.empty()) return Fail(why, "unrecognised top-level definition");
  if (name.find("::") != std::string::npos) return Fail(why, "out-of-class definition " + name);
  out->device = item.text;
  if (StartsWithToken(header, "template")) {
    out->host = item.text;
  } else if (HasToken(header, {"static", "inline", "constexpr", "__forceinline__"})) {
    if (HasToken(item.code.substr(item.body), {"static"}))
      return Fail(why, name + " has static locals and would be duplicated");
    out->host = item.text;
  } else {
    out->host = Prototype(item);  // defined once, in the device part
  }
  return true;
}

// After the ')' closing the parameter list at s[open], a function header may end with
// cv/noexcept or a trailing return type.
bool EndsHeader(std::string_view s, size_t open) {
  size_t i = open + 1;
  for (; i < s.size() && s[i] != ')'; ++i) {
    if (s[i] != '(') continue;
    i = s.find_first_of("()", i + 1);  // one level of nested parentheses
    if (i == kNpos || s[i] == '(') return false;
  }
  if (i >= s.size()) return false;
  std::string_view rest = Strip(s.substr(i + 1));
  if (rest.empty() || rest == "const" || rest == "noexcept") return true;
  return StartsWith(rest, 0, "->") && rest.find('{') == kNpos;
}
}  // namespace

std::string TemplateMarker(const std::string& name) { return "/*KZ_TEMPLATE " + name + "*/\n"; }

std::string DeclaratorName(std::string_view header) {
  std::string_view s = Strip(header);
  auto name_char = [](char c) { return IsWord(c) || c == ':' || c == '~'; };
  for (size_t p = 0; p < s.size();) {
    if (!name_char(s[p])) {
      ++p;
      continue;
    }
    size_t end = p;
    while (end < s.size() && name_char(s[end])) ++end;
    size_t open = SkipSpace(s, end);
    if (open < s.size() && s[open] == '(' && EndsHeader(s, open)) return std::string(s.substr(p, end - p));
    p = end;
  }
  return "";
}

bool Place(const Item& item, std::vector<std::string>* kernels, KernelTemplates* templates, Placement* out,
           std::string* why) {
  if (StartsWith(LStrip(item.code), 0, "#")) {
    out->host = item.text;
    if (!TorchInclude(item.code)) out->device = item.text;
    return true;
  }
  std::string_view header = item.Header();
  bool torchy = NamesTorch(item.code);
  if (HasKernelAttribute(header) && header.find("__global__") != kNpos)
    return PlaceKernel(item, torchy, kernels, templates, out, why);
  if (HasToken(header, {"__device__", "__constant__", "__shared__", "__managed__"}) &&
      header.find("__host__") == kNpos) {
    if (torchy) return Fail(why, "device code uses torch/ATen types");
    out->device = item.text;
    return true;
  }
  if (torchy) {
    out->host = item.text;
  } else if (IsTypeDeclaration(header) || (item.body < 0 && HasToken(header, {"extern", "constexpr"}))) {
    out->device = out->host = item.text;
  } else if (item.body < 0) {
    return PlaceDeclaration(item, out, why);
  } else {
    return PlaceFunction(item, out, why);
  }
  return true;
}

}  // namespace kz::compile::cuda_split
