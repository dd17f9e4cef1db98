#include "compile/source_map.h"

#include <algorithm>
#include <sstream>
#include <string_view>

namespace kz::compile {
namespace {

constexpr const char* kCudaPrefix[] = {"#include <torch/types.h>", "#include <cuda.h>",
                                       "#include <cuda_runtime.h>"};
constexpr const char* kCppPrefix[] = {"#include <torch/extension.h>"};

std::vector<SourcePiece> Pieces(const nlohmann::json& call, const char* field) {
  std::vector<SourcePiece> out;
  auto it = call.find(field);
  if (it == call.end()) return out;
  nlohmann::json list = it->is_string() ? nlohmann::json::array({*it}) : *it;
  if (!list.is_array()) return out;
  const nlohmann::json* lines = nullptr;
  if (auto sl = call.find("source_lines"); sl != call.end() && sl->is_object())
    if (auto f = sl->find(field); f != sl->end() && f->is_array()) lines = &*f;
  for (size_t i = 0; i < list.size(); ++i) {
    SourcePiece p;
    if (list[i].is_string()) {
      const auto& s = list[i].get_ref<const std::string&>();
      p.lines = 1 + static_cast<int>(std::count(s.begin(), s.end(), '\n'));
    }
    if (lines && i < lines->size() && (*lines)[i].is_number_integer() && (*lines)[i].get<int>() > 0)
      p.candidate_line = (*lines)[i].get<int>();
    out.push_back(p);
  }
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Digits at s[i..j) as a line number (0 if too long to be one).
int LineNumber(std::string_view s, size_t i, size_t j) {
  if (j - i > 9) return 0;
  return std::stoi(std::string(s.substr(i, j - i)));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '"' || s.back() == '\r' ||
                        s.back() == ',' || s.back() == ':' || s.back() == '.'))
    s.remove_suffix(1);
  return s;
}

std::optional<GeneratedFile> GeneratedOf(std::string_view path) {
  path = Trim(path);
  size_t slash = path.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base == "cuda.cu") return GeneratedFile::kCudaCu;
  if (base == "main.cpp") return GeneratedFile::kMainCpp;
  return std::nullopt;
}

std::string_view Basename(std::string_view path) {
  path = Trim(path);
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A location at the start of a line: "path:L:C: rest", "path:L: rest" (GCC) or
// "path(L): rest" (EDG, nvcc's front ends).
struct Leading {
  std::string_view path;
  int line = 0;
  std::string_view rest;
};

std::optional<Leading> ParseLeading(std::string_view l) {
  for (size_t i = 1; i < l.size(); ++i) {
    char c = l[i];
    if (c != ':' && c != '(') continue;
    size_t j = i + 1;
    while (j < l.size() && IsDigit(l[j])) ++j;
    if (j == i + 1) continue;
    size_t digits_end = j;
    if (c == '(') {
      if (l.substr(j, 2) != "):") continue;
      j += 2;
    } else {
      if (j >= l.size() || l[j] != ':') continue;
      ++j;
      size_t k = j;
      while (k < l.size() && IsDigit(l[k])) ++k;
      if (k > j && k < l.size() && l[k] == ':') j = k + 1;
    }
    int line = LineNumber(l, i + 1, digits_end);
    if (line <= 0) return std::nullopt;
    std::string_view rest = l.substr(j);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return Leading{l.substr(0, i), line, rest};
  }
  return std::nullopt;
}

bool IsErrorText(std::string_view rest) {
  for (std::string_view p : {"error", "fatal error", "catastrophic error"})
    if (rest.substr(0, p.size()) == p && rest.size() > p.size() &&
        (rest[p.size()] == ':' || rest[p.size()] == ' '))
      return true;
  return false;
}

struct Ref {
  GeneratedFile file;
  int line;
  std::string_view path;
};

// "PATH:L" followed by ',', ':' or the end (GCC's include chain: "from PATH:L,").
std::optional<Ref> PathColonLine(std::string_view s) {
  s = Trim(s);
  for (size_t i = s.size(); i-- > 1;) {
    if (s[i] != ':') continue;
    size_t j = i + 1;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j == i + 1 || (j < s.size() && s[j] != ':' && s[j] != ',')) continue;
    std::string_view path = s.substr(0, i);
    // A trailing ":C" column: the line is the number before it.
    if (auto f = GeneratedOf(path)) return Ref{*f, LineNumber(s, i + 1, j), path};
  }
  return std::nullopt;
}

// A reference to a generated file anywhere in a context line: a leading location, GCC's
// "In file included from PATH:L" / "from PATH:L", or EDG's "at line L of PATH".
std::optional<Ref> ContextRef(std::string_view l) {
  if (auto lead = ParseLeading(l))
    if (auto f = GeneratedOf(lead->path)) return Ref{*f, lead->line, lead->path};
  if (size_t p = l.find("from "); p != std::string_view::npos)
    if (auto r = PathColonLine(l.substr(p + 5))) return r;
  if (size_t p = l.find("at line "); p != std::string_view::npos) {
    size_t i = p + 8, j = i;
    while (j < l.size() && IsDigit(l[j])) ++j;
    if (j > i && l.substr(j, 4) == " of ") {
      std::string_view path = l.substr(j + 4);
      if (size_t end = path.find_first_of(" \t", path.find_first_not_of(" \t\"")); end != std::string_view::npos)
        path = path.substr(0, end);
      if (auto f = GeneratedOf(path)) return Ref{*f, LineNumber(l, i, j), path};
    }
  }
  return std::nullopt;
}

const char* FileName(GeneratedFile f) { return f == GeneratedFile::kCudaCu ? "cuda.cu" : "main.cpp"; }

}  // namespace

InlineLayout LayoutOf(const nlohmann::json& call) {
  InlineLayout layout;
  if (!call.is_object()) return layout;
  if (auto it = call.find("candidate_file"); it != call.end() && it->is_string())
    layout.candidate_file = it->get<std::string>();
  layout.cpp = Pieces(call, "cpp_sources");
  layout.cuda = Pieces(call, "cuda_sources");
  if (auto it = call.find("functions"); it != call.end() && !it->is_null()) {
    layout.has_module = true;
    if (it->is_string()) layout.functions.push_back(it->get<std::string>());
    else if (it->is_array())
      for (const auto& f : *it) layout.functions.push_back(f.is_string() ? f.get<std::string>() : f.dump());
    else if (it->is_object())  // a dict: nlohmann keeps keys sorted, as the build request sends them
      for (const auto& [name, doc] : it->items()) layout.functions.push_back(name);
  }
  return layout;
}

std::optional<SourceLocation> MapGeneratedLine(const InlineLayout& layout, GeneratedFile file, int line) {
  if (line <= 0) return std::nullopt;
  bool cuda = file == GeneratedFile::kCudaCu;
  const auto& pieces = cuda ? layout.cuda : layout.cpp;
  if (cuda && pieces.empty()) return std::nullopt;  // load_inline writes no cuda.cu
  SourceLocation loc;
  loc.file = file;
  loc.generated_line = line;
  int prefix = cuda ? 3 : 1;
  if (line <= prefix) {
    loc.kind = SourceLocation::Kind::kImplicitInclude;
    loc.name = cuda ? kCudaPrefix[line - 1] : kCppPrefix[line - 1];
    return loc;
  }
  int first = prefix + 1;  // first line of the current piece
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (line < first + pieces[i].lines) {
      loc.kind = SourceLocation::Kind::kSource;
      loc.field = cuda ? "cuda_sources" : "cpp_sources";
      loc.index = i;
      loc.pieces = pieces.size();
      loc.line = line - first + 1;
      if (pieces[i].candidate_line > 0) loc.candidate_line = pieces[i].candidate_line + loc.line - 1;
      return loc;
    }
    first += pieces[i].lines;
  }
  if (cuda || !layout.has_module) return std::nullopt;
  int offset = line - first;  // 0: "PYBIND11_MODULE(...) {", 1..n: m.def lines, n+1: "}"
  int n = static_cast<int>(layout.functions.size());
  if (offset > n + 1) return std::nullopt;
  if (offset >= 1 && offset <= n) {
    loc.kind = SourceLocation::Kind::kBinding;
    loc.name = layout.functions[offset - 1];
  } else {
    loc.kind = SourceLocation::Kind::kModule;
  }
  return loc;
}

std::string DescribeLocation(const InlineLayout& layout, const SourceLocation& loc) {
  std::string generated = std::string(FileName(loc.file)) + " line " + std::to_string(loc.generated_line);
  switch (loc.kind) {
    case SourceLocation::Kind::kImplicitInclude:
      return generated + " (load_inline's implicit " + loc.name + ")";
    case SourceLocation::Kind::kBinding:
      return generated + " (the pybind11 binding load_inline generates for '" + loc.name +
             "' from `functions`)";
    case SourceLocation::Kind::kModule:
      return generated + " (the PYBIND11_MODULE load_inline generates from `functions`)";
    case SourceLocation::Kind::kSource: break;
  }
  std::string piece = loc.field + (loc.pieces > 1 ? "[" + std::to_string(loc.index) + "]" : "") +
                      " line " + std::to_string(loc.line);
  if (loc.candidate_line <= 0) return piece;
  std::string file = layout.candidate_file.empty() ? "candidate" : layout.candidate_file;
  return file + ":" + std::to_string(loc.candidate_line) + " (" + piece + ")";
}

std::string MapDiagnostics(const std::string& diagnostics, const InlineLayout& layout, int max_errors) {
  std::vector<std::string> lines;
  std::istringstream in(diagnostics);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<size_t> errors;
  for (size_t i = 0; i < lines.size(); ++i)
    if (auto lead = ParseLeading(lines[i]); lead && IsErrorText(lead->rest)) errors.push_back(i);

  std::string summary;
  int mapped = 0;
  for (size_t e = 0; e < errors.size() && mapped < max_errors; ++e) {
    size_t at = errors[e];
    auto lead = *ParseLeading(lines[at]);
    std::optional<Ref> ref;
    bool own = false;
    if (auto f = GeneratedOf(lead.path)) {
      ref = Ref{*f, lead.line, lead.path};
      own = true;
    }
    // Context before the error (nearest first): "required from here", the include chain.
    size_t lo = e == 0 ? 0 : errors[e - 1] + 1;
    for (size_t i = at; !ref && i-- > lo;) ref = ContextRef(lines[i]);
    // Context after it, up to the next error: EDG's "detected during ... at line N of".
    size_t hi = e + 1 < errors.size() ? errors[e + 1] : lines.size();
    for (size_t i = at + 1; !ref && i < hi; ++i) ref = ContextRef(lines[i]);
    if (!ref) continue;
    auto loc = MapGeneratedLine(layout, ref->file, ref->line);
    if (!loc) continue;
    summary += DescribeLocation(layout, *loc) + ": " + std::string(lead.rest);
    if (!own) summary += " [in " + std::string(Basename(lead.path)) + ":" + std::to_string(lead.line) + "]";
    summary += "\n";
    ++mapped;
  }
  if (summary.empty()) return diagnostics;
  return summary + "compiler output:\n" + diagnostics;
}

}  // namespace kz::compile
