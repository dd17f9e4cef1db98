#include "compile/split_symbols.h"

#include <algorithm>
#include <optional>
#include <sstream>

namespace kz::compile {
namespace {
constexpr std::string_view kGlobalTypes = "ABCDGINRSTVWu";  // nm types of a global definition
constexpr std::string_view kLocalTypes = "bdgrst";          // ... and of a local one

bool AnyOf(const std::set<char>& types, std::string_view letters) {
  for (char c : types)
    if (letters.find(c) != std::string_view::npos) return true;
  return false;
}

bool Nm(const ToolRunner& runner, const std::string& path, std::map<std::string, std::set<char>>* out,
        std::string* err) {
  ToolRun run = runner.Run({"nm", path});
  if (!run.ok) {
    *err = "nm " + path + ": " + run.why + " " + run.output.substr(0, 300);
    return false;
  }
  *out = ParseNm(run.out);
  return true;
}

// The demangled names, one per symbol, or nullopt when c++filt failed or answered another
// number of lines (the caller then cannot clear the build). Batches keep each command line
// far below the kernel's argument limit (a torch main.o has thousands of undefined symbols).
std::optional<std::vector<std::string>> Demangle(const ToolRunner& runner, const std::vector<std::string>& symbols,
                                                 std::string* err) {
  constexpr size_t kBatch = 256;
  std::vector<std::string> out;
  for (size_t at = 0; at < symbols.size(); at += kBatch) {
    std::vector<std::string> argv{"c++filt"};
    argv.insert(argv.end(), symbols.begin() + long(at), symbols.begin() + long(std::min(symbols.size(), at + kBatch)));
    ToolRun run = runner.Run(argv);
    size_t before = out.size();
    std::istringstream in(run.out);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    if (!run.ok || out.size() - before != argv.size() - 1) {
      *err = "c++filt: " + (run.ok ? "answered " + std::to_string(out.size() - before) + " lines for " +
                                         std::to_string(argv.size() - 1) + " symbols"
                                   : run.why);
      return std::nullopt;
    }
  }
  return out;
}
}  // namespace

std::map<std::string, std::set<char>> ParseNm(const std::string& text) {
  std::map<std::string, std::set<char>> syms;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> parts;
    for (std::string w; words >> w;) parts.push_back(w);
    if (parts.size() >= 2 && parts[parts.size() - 2].size() == 1) syms[parts.back()].insert(parts[parts.size() - 2][0]);
  }
  return syms;
}

std::string SymbolBaseName(const std::string& demangled) {
  std::string head = demangled.substr(0, demangled.find('(')), kept;
  int depth = 0;
  for (char c : head) {
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth == 0 && c != '<' && c != '>') kept += c;
  }
  std::istringstream words(kept);
  std::string last;
  for (std::string w; words >> w;) last = w;
  size_t colon = last.rfind("::");
  return colon == std::string::npos ? last : last.substr(colon + 2);
}

std::string CheckSplitSymbols(const ToolRunner& runner, const std::string& build_dir,
                              const std::vector<std::string>& kernels) {
  std::map<std::string, std::set<char>> main, dev;
  std::string err;
  if (!Nm(runner, build_dir + "/main.o", &main, &err) || !Nm(runner, build_dir + "/cuda.cuda.o", &dev, &err))
    return "split build could not be checked: " + err;
  std::vector<std::string> needed, local;
  for (const auto& [sym, types] : main) {
    auto d = dev.find(sym);
    bool defined = d != dev.end() && AnyOf(d->second, kGlobalTypes);
    if ((types.count('U') || types.count('w')) && !defined) needed.push_back(sym);
  }
  for (const auto& s : needed)
    if (dev.count(s) && AnyOf(dev[s], kLocalTypes)) local.push_back(s);
  if (!local.empty()) return "split build left a symbol undefined: " + local.front();
  std::set<std::string> kernel_set(kernels.begin(), kernels.end());
  auto names = Demangle(runner, needed, &err);
  if (!names) return "split build could not be checked: " + err;
  for (size_t i = 0; i < needed.size(); ++i) {
    std::string base = SymbolBaseName((*names)[i]);
    if (kernel_set.count(base) || base.rfind("kz_tl_", 0) == 0)
      return "split build left a symbol undefined: " + needed[i];
  }
  return "";
}

}  // namespace kz::compile
